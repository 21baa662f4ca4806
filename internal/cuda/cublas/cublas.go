// Package cublas binds NVIDIA's cuBLAS (the v2 API) without cgo.
//
// The library is opened on first use with libpath.OpenNewest("libcublas.so.*",
// "libcublas.so"). Matrices are device pointers, passed as uint64; alpha and
// beta are host scalars (cuBLAS's default pointer mode), pinned for the call.
// cuBLAS is column-major; SgemmRowMajor and friends do the usual operand swap
// for row-major data.
//
// A Handle must not be used from several goroutines at once (cuBLAS's own
// rule); distinct handles may be.
package cublas

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/emberml/ember/internal/cuda/dl"
	"github.com/emberml/ember/internal/cuda/libpath"
)

// Status is a cublasStatus_t.
type Status int

// cublasStatus_t values (cublas_api.h).
const (
	StatusSuccess         Status = 0
	StatusNotInitialized  Status = 1
	StatusAllocFailed     Status = 3
	StatusInvalidValue    Status = 7
	StatusArchMismatch    Status = 8
	StatusMappingError    Status = 11
	StatusExecutionFailed Status = 13
	StatusInternalError   Status = 14
	StatusNotSupported    Status = 15
	StatusLicenseError    Status = 16
)

var statusNames = map[Status]string{
	StatusSuccess:         "CUBLAS_STATUS_SUCCESS",
	StatusNotInitialized:  "CUBLAS_STATUS_NOT_INITIALIZED",
	StatusAllocFailed:     "CUBLAS_STATUS_ALLOC_FAILED",
	StatusInvalidValue:    "CUBLAS_STATUS_INVALID_VALUE",
	StatusArchMismatch:    "CUBLAS_STATUS_ARCH_MISMATCH",
	StatusMappingError:    "CUBLAS_STATUS_MAPPING_ERROR",
	StatusExecutionFailed: "CUBLAS_STATUS_EXECUTION_FAILED",
	StatusInternalError:   "CUBLAS_STATUS_INTERNAL_ERROR",
	StatusNotSupported:    "CUBLAS_STATUS_NOT_SUPPORTED",
	StatusLicenseError:    "CUBLAS_STATUS_LICENSE_ERROR",
}

// Codes returns cuBLAS's table of status names; it makes Status a dl.Code.
func (Status) Codes() *dl.Codes[Status] { return &statuses }

// statuses names cuBLAS's statuses and says how its errors read ("cublas:
// cublasCreate_v2 failed: CUBLAS_STATUS_NOT_INITIALIZED (1): …").
var statuses = dl.Codes[Status]{
	Lib: "cublas", Failed: true, Names: statusNames, Unknown: "CUBLAS_STATUS_%d",
	Hint: func(call string, s Status) string {
		if s == StatusNotInitialized && call == "cublasCreate_v2" {
			return " (no usable CUDA device or driver)"
		}
		return ""
	},
}

// Name returns the status's C name, from Go's own table (the library's
// cublasGetStatusName is used for errors when present).
func (s Status) Name() string { return statuses.Name(s) }

// Error is a failed cuBLAS call: Call (the C function, e.g.
// "cublasCreate_v2"), Code (the cublasStatus_t), Name (its name, e.g.
// "CUBLAS_STATUS_NOT_INITIALIZED") and Desc (cuBLAS's description,
// cublasGetStatusString, if available).
type Error = dl.Error[Status]

// Operation is a cublasOperation_t.
type Operation int

// cublasOperation_t values.
const (
	OpN Operation = 0 // no transpose
	OpT Operation = 1 // transpose
	OpC Operation = 2 // conjugate transpose
)

func op(trans bool) Operation {
	if trans {
		return OpT
	}
	return OpN
}

// MathMode is a cublasMath_t.
type MathMode int

// cublasMath_t values.
const (
	DefaultMath                       MathMode = 0
	TensorOpMath                      MathMode = 1 // deprecated by cuBLAS 11
	PedanticMath                      MathMode = 2
	TF32TensorOpMath                  MathMode = 3
	DisallowReducedPrecisionReduction MathMode = 16 // a flag, OR-ed with the others
)

// DataType is a cudaDataType_t (library_types.h).
type DataType int

// cudaDataType_t values.
const (
	R16F  DataType = 2
	R32F  DataType = 0
	R64F  DataType = 1
	R16BF DataType = 14
	R8I   DataType = 3
	R32I  DataType = 10
)

// ComputeType is a cublasComputeType_t.
type ComputeType int

// cublasComputeType_t values.
const (
	Compute16F         ComputeType = 64
	Compute16FPedantic ComputeType = 65
	Compute32F         ComputeType = 68
	Compute32FPedantic ComputeType = 69
	Compute32FFast16F  ComputeType = 74
	Compute32FFast16BF ComputeType = 75
	Compute32FFastTF32 ComputeType = 77
	Compute64F         ComputeType = 70
	Compute64FPedantic ComputeType = 71
	Compute32I         ComputeType = 72
	Compute32IPedantic ComputeType = 73
)

// GemmAlgo is a cublasGemmAlgo_t.
type GemmAlgo int

// cublasGemmAlgo_t values.
const (
	GemmDefault         GemmAlgo = -1
	GemmDefaultTensorOp GemmAlgo = 99
)

// Symbols lists every cuBLAS function this package binds. The last three are
// optional (cublasSetWorkspace_v2 from 11.0, the status strings from 11.4.2).
var Symbols = []string{
	"cublasCreate_v2", "cublasDestroy_v2", "cublasSetStream_v2", "cublasGetVersion_v2",
	"cublasGetProperty", "cublasSetMathMode",
	"cublasSgemm_v2", "cublasDgemm_v2", "cublasSgemmStridedBatched", "cublasDgemmStridedBatched",
	"cublasGemmEx", "cublasGemmStridedBatchedEx",
	"cublasSetWorkspace_v2", "cublasGetStatusName", "cublasGetStatusString",
}

const numRequired = 12

type api struct {
	fn *dl.Table // Symbols, resolved at load
}

// lib is the newest cuBLAS on the search order, opened on first use.
var lib = dl.Library[*api]{Names: []string{"libcublas.so.*", "libcublas.so"}, Newest: true, Bind: bind}

func load() (*api, error) { return lib.Load() }

func bind(l *libpath.Lib) (*api, error) {
	a := &api{fn: dl.NewTable(l, dl.Funcs(Symbols, numRequired))}
	if _, err := a.fn.Resolve(); err != nil {
		return nil, err
	}
	return a, nil
}

// Library returns the path of the cuBLAS opened.
func Library() (string, error) {
	a, err := load()
	if err != nil {
		return "", err
	}
	return a.fn.Lib().Path, nil
}

// Resolved returns the bound symbols that resolved, in Symbols order.
func Resolved() ([]string, error) {
	a, err := load()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range Symbols {
		if a.fn.Named(s) != 0 {
			out = append(out, s)
		}
	}
	return out, nil
}

// call invokes a resolved symbol with integer-class arguments.
func (a *api) call(name string, args ...uintptr) error {
	p := a.fn.Named(name)
	if p == 0 {
		l := a.fn.Lib()
		return &libpath.SymbolError{Lib: l.Name, Path: l.Path, Symbol: name, Err: fmt.Errorf("not exported by this cuBLAS")}
	}
	r, _, _ := purego.SyscallN(p, args...)
	if s := Status(int32(r)); s != StatusSuccess {
		return a.err(name, s)
	}
	return nil
}

func (a *api) err(call string, s Status) error {
	e := &Error{Call: call, Code: s, Name: s.Name()}
	if p := a.fn.Named("cublasGetStatusName"); p != 0 {
		r, _, _ := purego.SyscallN(p, uintptr(s))
		if n := libpath.GoString(r); n != "" && n != "CUBLAS_STATUS_UNKNOWN" {
			e.Name = n
		}
	}
	if p := a.fn.Named("cublasGetStatusString"); p != 0 {
		r, _, _ := purego.SyscallN(p, uintptr(s))
		e.Desc = libpath.GoString(r)
	}
	return e
}

// StatusName returns the library's name for s (cublasGetStatusName), or
// Go's table's when the library lacks that function.
func StatusName(s Status) (string, error) {
	a, err := load()
	if err != nil {
		return "", err
	}
	if p := a.fn.Named("cublasGetStatusName"); p != 0 {
		r, _, _ := purego.SyscallN(p, uintptr(s))
		return libpath.GoString(r), nil
	}
	return s.Name(), nil
}

// LibraryVersion returns cuBLAS's version without a handle (cublasGetProperty).
func LibraryVersion() (major, minor, patch int, err error) {
	a, err := load()
	if err != nil {
		return 0, 0, 0, err
	}
	// Out-parameters are pinned: a uintptr to an unpinned local may point
	// into a stack that moves while the call is set up.
	var pin runtime.Pinner
	defer pin.Unpin()
	v := new([3]int32)
	pin.Pin(v)
	for i := range v {
		if err := a.call("cublasGetProperty", uintptr(i), uintptr(unsafe.Pointer(&v[i]))); err != nil {
			return 0, 0, 0, err
		}
	}
	return int(v[0]), int(v[1]), int(v[2]), nil
}

// Handle is a cuBLAS context (cublasHandle_t).
type Handle struct {
	a *api
	h uintptr
}

// Create makes a handle (cublasCreate_v2). Without a usable GPU it returns an
// *Error with StatusNotInitialized.
func Create() (*Handle, error) {
	a, err := load()
	if err != nil {
		return nil, err
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	h := new(uintptr)
	pin.Pin(h)
	if err := a.call("cublasCreate_v2", uintptr(unsafe.Pointer(h))); err != nil {
		return nil, err
	}
	return &Handle{a: a, h: *h}, nil
}

// Destroy releases the handle; it is a no-op on a destroyed handle.
func (h *Handle) Destroy() error {
	if h == nil || h.h == 0 {
		return nil
	}
	err := h.a.call("cublasDestroy_v2", h.h)
	h.h = 0
	return err
}

func (h *Handle) handle() (uintptr, error) {
	if h == nil || h.h == 0 {
		return 0, &Error{Call: "cublas handle", Code: StatusNotInitialized, Name: StatusNotInitialized.Name(), Desc: "use of a nil or destroyed handle"}
	}
	return h.h, nil
}

// SetStream makes later calls on h run on stream (a CUstream/cudaStream_t;
// 0 is the legacy default stream).
func (h *Handle) SetStream(stream uintptr) error {
	hh, err := h.handle()
	if err != nil {
		return err
	}
	return h.a.call("cublasSetStream_v2", hh, stream)
}

// Version returns cuBLAS's version number (cublasGetVersion_v2), e.g. 111103.
func (h *Handle) Version() (int, error) {
	hh, err := h.handle()
	if err != nil {
		return 0, err
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	v := new(int32)
	pin.Pin(v)
	if err := h.a.call("cublasGetVersion_v2", hh, uintptr(unsafe.Pointer(v))); err != nil {
		return 0, err
	}
	return int(*v), nil
}

// SetMathMode sets the handle's math mode (cublasSetMathMode).
func (h *Handle) SetMathMode(m MathMode) error {
	hh, err := h.handle()
	if err != nil {
		return err
	}
	return h.a.call("cublasSetMathMode", hh, uintptr(m))
}

// SetWorkspace hands cuBLAS a device workspace of size bytes
// (cublasSetWorkspace_v2).
func (h *Handle) SetWorkspace(ptr, size uint64) error {
	hh, err := h.handle()
	if err != nil {
		return err
	}
	return h.a.call("cublasSetWorkspace_v2", hh, uintptr(ptr), uintptr(size))
}

// i32 converts a dimension, leading dimension or count to C's int.
func i32(v int) uintptr { return uintptr(uint32(int32(v))) }

// pinned pins host scalars for the duration of one call and returns their
// addresses. The caller must Unpin.
func pinned(pin *runtime.Pinner, ptrs ...unsafe.Pointer) []uintptr {
	out := make([]uintptr, len(ptrs))
	for i, p := range ptrs {
		pin.Pin(p)
		out[i] = uintptr(p)
	}
	return out
}

// Sgemm computes C = alpha·op(A)·op(B) + beta·C in single precision,
// column-major (cublasSgemm_v2). op(A) is m×k, op(B) k×n, C m×n.
func (h *Handle) Sgemm(transA, transB Operation, m, n, k int, alpha float32, a uint64, lda int, b uint64, ldb int, beta float32, c uint64, ldc int) error {
	hh, err := h.handle()
	if err != nil {
		return err
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	p := pinned(&pin, unsafe.Pointer(&alpha), unsafe.Pointer(&beta))
	return h.a.call("cublasSgemm_v2", hh, uintptr(transA), uintptr(transB), i32(m), i32(n), i32(k),
		p[0], uintptr(a), i32(lda), uintptr(b), i32(ldb), p[1], uintptr(c), i32(ldc))
}

// Dgemm is Sgemm in double precision (cublasDgemm_v2).
func (h *Handle) Dgemm(transA, transB Operation, m, n, k int, alpha float64, a uint64, lda int, b uint64, ldb int, beta float64, c uint64, ldc int) error {
	hh, err := h.handle()
	if err != nil {
		return err
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	p := pinned(&pin, unsafe.Pointer(&alpha), unsafe.Pointer(&beta))
	return h.a.call("cublasDgemm_v2", hh, uintptr(transA), uintptr(transB), i32(m), i32(n), i32(k),
		p[0], uintptr(a), i32(lda), uintptr(b), i32(ldb), p[1], uintptr(c), i32(ldc))
}

// SgemmStridedBatched runs batch Sgemms, matrix i of A starting at
// a + i·strideA elements (likewise B and C), column-major
// (cublasSgemmStridedBatched).
func (h *Handle) SgemmStridedBatched(transA, transB Operation, m, n, k int, alpha float32, a uint64, lda int, strideA int64, b uint64, ldb int, strideB int64, beta float32, c uint64, ldc int, strideC int64, batch int) error {
	hh, err := h.handle()
	if err != nil {
		return err
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	p := pinned(&pin, unsafe.Pointer(&alpha), unsafe.Pointer(&beta))
	return h.a.call("cublasSgemmStridedBatched", hh, uintptr(transA), uintptr(transB), i32(m), i32(n), i32(k),
		p[0], uintptr(a), i32(lda), uintptr(strideA), uintptr(b), i32(ldb), uintptr(strideB),
		p[1], uintptr(c), i32(ldc), uintptr(strideC), i32(batch))
}

// DgemmStridedBatched is SgemmStridedBatched in double precision.
func (h *Handle) DgemmStridedBatched(transA, transB Operation, m, n, k int, alpha float64, a uint64, lda int, strideA int64, b uint64, ldb int, strideB int64, beta float64, c uint64, ldc int, strideC int64, batch int) error {
	hh, err := h.handle()
	if err != nil {
		return err
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	p := pinned(&pin, unsafe.Pointer(&alpha), unsafe.Pointer(&beta))
	return h.a.call("cublasDgemmStridedBatched", hh, uintptr(transA), uintptr(transB), i32(m), i32(n), i32(k),
		p[0], uintptr(a), i32(lda), uintptr(strideA), uintptr(b), i32(ldb), uintptr(strideB),
		p[1], uintptr(c), i32(ldc), uintptr(strideC), i32(batch))
}

// GemmEx is the mixed-precision gemm (cublasGemmEx). alpha and beta point to
// host scalars of the compute type's scalar type (float32 for Compute32F*,
// float64 for Compute64F*, a float16's bits for Compute16F); they are pinned
// for the call.
func (h *Handle) GemmEx(transA, transB Operation, m, n, k int, alpha unsafe.Pointer, a uint64, aType DataType, lda int, b uint64, bType DataType, ldb int, beta unsafe.Pointer, c uint64, cType DataType, ldc int, compute ComputeType, algo GemmAlgo) error {
	hh, err := h.handle()
	if err != nil {
		return err
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	p := pinned(&pin, alpha, beta)
	return h.a.call("cublasGemmEx", hh, uintptr(transA), uintptr(transB), i32(m), i32(n), i32(k),
		p[0], uintptr(a), uintptr(aType), i32(lda), uintptr(b), uintptr(bType), i32(ldb),
		p[1], uintptr(c), uintptr(cType), i32(ldc), uintptr(compute), i32(int(algo)))
}

// GemmStridedBatchedEx is GemmEx over batch strided matrices
// (cublasGemmStridedBatchedEx).
func (h *Handle) GemmStridedBatchedEx(transA, transB Operation, m, n, k int, alpha unsafe.Pointer, a uint64, aType DataType, lda int, strideA int64, b uint64, bType DataType, ldb int, strideB int64, beta unsafe.Pointer, c uint64, cType DataType, ldc int, strideC int64, batch int, compute ComputeType, algo GemmAlgo) error {
	hh, err := h.handle()
	if err != nil {
		return err
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	p := pinned(&pin, alpha, beta)
	return h.a.call("cublasGemmStridedBatchedEx", hh, uintptr(transA), uintptr(transB), i32(m), i32(n), i32(k),
		p[0], uintptr(a), uintptr(aType), i32(lda), uintptr(strideA), uintptr(b), uintptr(bType), i32(ldb), uintptr(strideB),
		p[1], uintptr(c), uintptr(cType), i32(ldc), uintptr(strideC), i32(batch), uintptr(compute), i32(int(algo)))
}
