// Package nccl binds NVIDIA's NCCL (libnccl.so.2) at run time, without cgo.
//
// The library is opened on first use through libpath's search order
// (EMBER_CUDA_LIB_DIR, CUDA_PATH/CUDA_HOME, LD_LIBRARY_PATH, the system's
// folders, /usr/local/cuda*, and the site-packages/nvidia/nccl/lib folder
// that PyTorch's pip wheels install). Every entry point is resolved with
// dlsym before it is called; a missing library or symbol is an error, never
// a panic. A failed call is an *Error carrying ncclGetErrorString's text and
// ncclGetLastError's detail.
//
// The bound signatures, enum values and the 128-byte ncclUniqueId follow
// nccl.h of NCCL 2.21.5 (the same for every call bound here from 2.18 to
// 2.30; ncclAvg needs 2.10, ncclGetLastError 2.13, both are used only when
// present or asked for). nccl_test.go lists them.
//
// Buffers are device addresses (uint64) and streams CUstream handles
// (uintptr, 0 for the legacy default stream). NCCL uses the calling thread's
// current CUDA device: callers run these calls where the device's context
// is current.
package nccl

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/emberml/ember/internal/cuda/dl"
	"github.com/emberml/ember/internal/cuda/libpath"
)

// LibName is the library opened.
const LibName = "libnccl.so.2"

// Result is an ncclResult_t.
type Result int32

// ncclResult_t values (nccl.h).
const (
	Success            Result = 0
	UnhandledCudaError Result = 1
	SystemError        Result = 2
	InternalError      Result = 3
	InvalidArgument    Result = 4
	InvalidUsage       Result = 5
	RemoteError        Result = 6
	InProgress         Result = 7
)

var resultNames = map[Result]string{
	Success: "ncclSuccess", UnhandledCudaError: "ncclUnhandledCudaError", SystemError: "ncclSystemError",
	InternalError: "ncclInternalError", InvalidArgument: "ncclInvalidArgument", InvalidUsage: "ncclInvalidUsage",
	RemoteError: "ncclRemoteError", InProgress: "ncclInProgress",
}

// Codes returns NCCL's table of result names; it makes Result a dl.Code.
func (Result) Codes() *dl.Codes[Result] { return &results }

// results names NCCL's results and says how its errors read ("nccl:
// ncclCommInitRank failed: ncclInvalidArgument (4): …").
var results = dl.Codes[Result]{Lib: "nccl", Failed: true, Names: resultNames, Unknown: "ncclResult(%d)"}

// Name is the result's C name.
func (r Result) Name() string { return results.Name(r) }

// DataType is an ncclDataType_t.
type DataType int32

// ncclDataType_t values (nccl.h).
const (
	Int8     DataType = 0
	Uint8    DataType = 1
	Int32    DataType = 2
	Uint32   DataType = 3
	Int64    DataType = 4
	Uint64   DataType = 5
	Float16  DataType = 6
	Float32  DataType = 7
	Float64  DataType = 8
	Bfloat16 DataType = 9
)

// RedOp is an ncclRedOp_t.
type RedOp int32

// ncclRedOp_t values (nccl.h); Avg needs NCCL 2.10 or later.
const (
	Sum  RedOp = 0
	Prod RedOp = 1
	Max  RedOp = 2
	Min  RedOp = 3
	Avg  RedOp = 4
)

// UniqueIDBytes is NCCL_UNIQUE_ID_BYTES.
const UniqueIDBytes = 128

// UniqueID is an ncclUniqueId: made by one rank (GetUniqueID), handed to
// every rank (through the store) for CommInitRank.
type UniqueID struct{ Internal [UniqueIDBytes]byte }

// Error is a failed NCCL call: Call (e.g. "ncclCommInitRank"), Code (the
// ncclResult_t), Name (its C name), Desc (ncclGetErrorString) and Detail
// (ncclGetLastError, when the library has it and says something).
type Error = dl.Error[Result]

// Symbols lists the functions bound; the last one is optional (NCCL 2.13+).
var Symbols = []string{
	"ncclGetVersion", "ncclGetUniqueId", "ncclCommInitRank", "ncclCommDestroy", "ncclCommAbort",
	"ncclCommGetAsyncError", "ncclCommCount", "ncclCommUserRank", "ncclGroupStart", "ncclGroupEnd",
	"ncclAllReduce", "ncclBroadcast", "ncclReduce", "ncclAllGather", "ncclReduceScatter", "ncclGetErrorString",
	"ncclGetLastError",
}

const numRequired = 16

type api struct {
	fn       *dl.Table                                                        // Symbols, resolved at load
	initRank func(comm *uintptr, nranks int32, id UniqueID, rank int32) int32 // the id goes by value
}

// lib is NCCL, opened once it is found: a failure is not kept, so a later
// call (after the environment changed) may succeed.
var lib = dl.Library[*api]{Names: []string{LibName}, Retry: true, Bind: bind}

func load() (*api, error) {
	a, err := lib.Load()
	if err != nil {
		return nil, fmt.Errorf("nccl: %w", err)
	}
	return a, nil
}

func bind(l *libpath.Lib) (*api, error) {
	a := &api{fn: dl.NewTable(l, dl.Funcs(Symbols, numRequired))}
	if _, err := a.fn.Resolve(); err != nil {
		return nil, err
	}
	// ncclCommInitRank takes the 128-byte ncclUniqueId by value: purego
	// lays it out as the C ABI wants (on the stack on amd64, by reference
	// on arm64), which SyscallN's word arguments cannot.
	purego.RegisterFunc(&a.initRank, a.fn.Named("ncclCommInitRank"))
	return a, nil
}

// Load opens NCCL (if it is not open yet) and reports why it cannot be used.
func Load() error {
	_, err := load()
	return err
}

// Library returns the path of the NCCL opened.
func Library() (string, error) {
	a, err := load()
	if err != nil {
		return "", err
	}
	return a.fn.Lib().Path, nil
}

func (a *api) check(call string, r uintptr, comm uintptr) error {
	res := Result(int32(r))
	if res == Success {
		return nil
	}
	e := &Error{Call: call, Code: res, Name: res.Name(), Desc: a.errorString(res)}
	if p := a.fn.Named("ncclGetLastError"); p != 0 {
		r, _, _ := purego.SyscallN(p, comm)
		e.Detail = libpath.GoString(r)
	}
	return e
}

func (a *api) errorString(r Result) string {
	s, _, _ := purego.SyscallN(a.fn.Named("ncclGetErrorString"), uintptr(r))
	return libpath.GoString(s)
}

func (a *api) call(name string, comm uintptr, args ...uintptr) error {
	r, _, _ := purego.SyscallN(a.fn.Named(name), args...)
	return a.check(name, r, comm)
}

// ErrorString is ncclGetErrorString(r).
func ErrorString(r Result) (string, error) {
	a, err := load()
	if err != nil {
		return "", err
	}
	return a.errorString(r), nil
}

// Version returns NCCL_VERSION_CODE of the library (ncclGetVersion), e.g.
// 22105 for 2.21.5 (2.8 and older: 2708 for 2.7.8).
func Version() (int, error) {
	a, err := load()
	if err != nil {
		return 0, err
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	v := new(int32)
	pin.Pin(v)
	if err := a.call("ncclGetVersion", 0, uintptr(unsafe.Pointer(v))); err != nil {
		return 0, err
	}
	return int(*v), nil
}

// VersionString formats a version code as major.minor.patch.
func VersionString(code int) string {
	if code < 10000 { // NCCL_VERSION for 2.8 and older: X*1000 + Y*100 + Z
		return fmt.Sprintf("%d.%d.%d", code/1000, code%1000/100, code%100)
	}
	return fmt.Sprintf("%d.%d.%d", code/10000, code%10000/100, code%100)
}

// GetUniqueID makes the id every rank passes to CommInitRank (ncclGetUniqueId).
func GetUniqueID() (UniqueID, error) {
	var id UniqueID
	a, err := load()
	if err != nil {
		return id, err
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	p := new(UniqueID)
	pin.Pin(p)
	if err := a.call("ncclGetUniqueId", 0, uintptr(unsafe.Pointer(p))); err != nil {
		return id, err
	}
	return *p, nil
}

// Comm is an ncclComm_t.
type Comm struct {
	a *api
	h uintptr
}

// CommInitRank joins the communicator of nranks ranks identified by id as
// rank (ncclCommInitRank). It blocks until every rank has joined, on the
// current CUDA device of the calling thread.
func CommInitRank(nranks int, id UniqueID, rank int) (*Comm, error) {
	a, err := load()
	if err != nil {
		return nil, err
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	h := new(uintptr)
	pin.Pin(h)
	r := a.initRank(h, int32(nranks), id, int32(rank))
	if err := a.check("ncclCommInitRank", uintptr(uint32(r)), 0); err != nil {
		return nil, err
	}
	return &Comm{a: a, h: *h}, nil
}

func (c *Comm) handle(call string) (uintptr, error) {
	if c == nil || c.h == 0 {
		return 0, &Error{Call: call, Code: InvalidUsage, Name: InvalidUsage.Name(), Desc: "use of a nil or destroyed communicator"}
	}
	return c.h, nil
}

// Destroy frees the communicator after its queued work (ncclCommDestroy).
func (c *Comm) Destroy() error { return c.end("ncclCommDestroy") }

// Abort frees the communicator and aborts its work in flight
// (ncclCommAbort): the way out after an error or a peer's failure.
func (c *Comm) Abort() error { return c.end("ncclCommAbort") }

func (c *Comm) end(call string) error {
	h, err := c.handle(call)
	if err != nil {
		return nil
	}
	c.h = 0
	return c.a.call(call, h, h)
}

// AsyncError returns the communicator's asynchronous error state
// (ncclCommGetAsyncError): Success, InProgress, or the failure of work in
// flight (a peer gone, a network error).
func (c *Comm) AsyncError() (Result, error) {
	h, err := c.handle("ncclCommGetAsyncError")
	if err != nil {
		return 0, err
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	r := new(int32)
	pin.Pin(r)
	if err := c.a.call("ncclCommGetAsyncError", h, h, uintptr(unsafe.Pointer(r))); err != nil {
		return 0, err
	}
	return Result(*r), nil
}

// Count and UserRank return the communicator's size and this rank.
func (c *Comm) Count() (int, error) { return c.intQuery("ncclCommCount") }

// UserRank returns this process's rank in the communicator.
func (c *Comm) UserRank() (int, error) { return c.intQuery("ncclCommUserRank") }

func (c *Comm) intQuery(call string) (int, error) {
	h, err := c.handle(call)
	if err != nil {
		return 0, err
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	v := new(int32)
	pin.Pin(v)
	if err := c.a.call(call, h, h, uintptr(unsafe.Pointer(v))); err != nil {
		return 0, err
	}
	return int(*v), nil
}

// GroupStart and GroupEnd bracket calls NCCL fuses into one launch
// (ncclGroupStart/ncclGroupEnd). NCCL keeps the group per OS thread, and a
// goroutine may move between threads from one call to the next, so both
// (and the calls between) must run with the goroutine locked to its
// thread: Group does that.
func GroupStart() error {
	a, err := load()
	if err != nil {
		return err
	}
	return a.call("ncclGroupStart", 0)
}

// GroupEnd ends a group started by GroupStart and queues its work.
func GroupEnd() error {
	a, err := load()
	if err != nil {
		return err
	}
	return a.call("ncclGroupEnd", 0)
}

// Group runs body between GroupStart and GroupEnd on one OS thread (the
// calling goroutine is locked to its thread meanwhile), and returns the
// first error.
func Group(body func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := GroupStart(); err != nil {
		return err
	}
	err := body()
	if e := GroupEnd(); err == nil {
		err = e
	}
	return err
}

// AllReduce queues ncclAllReduce(send, recv, count, dt, op, comm, stream);
// send == recv is in place.
func (c *Comm) AllReduce(send, recv uint64, count int, dt DataType, op RedOp, stream uintptr) error {
	h, err := c.handle("ncclAllReduce")
	if err != nil {
		return err
	}
	return c.a.call("ncclAllReduce", h, uintptr(send), uintptr(recv), uintptr(count), uintptr(dt), uintptr(op), h, stream)
}

// Broadcast queues ncclBroadcast(send, recv, count, dt, root, comm, stream).
func (c *Comm) Broadcast(send, recv uint64, count int, dt DataType, root int, stream uintptr) error {
	h, err := c.handle("ncclBroadcast")
	if err != nil {
		return err
	}
	return c.a.call("ncclBroadcast", h, uintptr(send), uintptr(recv), uintptr(count), uintptr(dt), uintptr(uint32(int32(root))), h, stream)
}

// Reduce queues ncclReduce(send, recv, count, dt, op, root, comm, stream):
// the result lands in root's recv (recv may be 0 elsewhere).
func (c *Comm) Reduce(send, recv uint64, count int, dt DataType, op RedOp, root int, stream uintptr) error {
	h, err := c.handle("ncclReduce")
	if err != nil {
		return err
	}
	return c.a.call("ncclReduce", h, uintptr(send), uintptr(recv), uintptr(count), uintptr(dt), uintptr(op), uintptr(uint32(int32(root))), h, stream)
}

// AllGather queues ncclAllGather(send, recv, sendcount, dt, comm, stream):
// recv holds nranks·sendcount elements, rank i's at i·sendcount.
func (c *Comm) AllGather(send, recv uint64, sendcount int, dt DataType, stream uintptr) error {
	h, err := c.handle("ncclAllGather")
	if err != nil {
		return err
	}
	return c.a.call("ncclAllGather", h, uintptr(send), uintptr(recv), uintptr(sendcount), uintptr(dt), h, stream)
}

// ReduceScatter queues ncclReduceScatter(send, recv, recvcount, dt, op,
// comm, stream): send holds nranks·recvcount elements.
func (c *Comm) ReduceScatter(send, recv uint64, recvcount int, dt DataType, op RedOp, stream uintptr) error {
	h, err := c.handle("ncclReduceScatter")
	if err != nil {
		return err
	}
	return c.a.call("ncclReduceScatter", h, uintptr(send), uintptr(recv), uintptr(recvcount), uintptr(dt), uintptr(op), h, stream)
}
