package cpu

import (
	"sync"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/gemm"
)

// MatMul computes a batch of matrix products into a contiguous dst.
func (Backend) MatMul(dst, a, b backend.View) {
	switch a.S.DType() {
	case backend.Float32:
		matmul(dst, a, b, sgemm)
	case backend.Float64:
		matmul(dst, a, b, dgemm)
	case backend.Int64:
		matmul(dst, a, b, gemmRef[int64])
	case backend.Int32:
		matmul(dst, a, b, gemmRef[int32])
	case backend.BFloat16:
		matmulBF16(dst, a, b)
	case backend.Float16:
		matmulF16(dst, a, b)
	default:
		notImpl("matmul", a.S.DType())
	}
}

type gemmFn[T any] func(transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int)

func matmul[T any](dst, a, b backend.View, gemm gemmFn[T]) {
	bs, m, k, n := a.Shape[0], a.Shape[1], a.Shape[2], b.Shape[2]
	c := slice[T](dst.S)[dst.Offset:]
	av, bv := slice[T](a.S), slice[T](b.S)
	ta, lda, okA := backend.GemmOperand(m, k, a.Strides[1], a.Strides[2])
	tb, ldb, okB := backend.GemmOperand(k, n, b.Strides[1], b.Strides[2])
	if !okA {
		av, ta, lda = packed(av, a, m, k), false, k
		a = backend.View{Shape: a.Shape, Strides: []int{m * k, k, 1}}
	}
	if !okB {
		bv, tb, ldb = packed(bv, b, k, n), false, n
		b = backend.View{Shape: b.Shape, Strides: []int{k * n, n, 1}}
	}
	for i := 0; i < bs; i++ {
		gemm(ta, tb, m, n, k, av[a.Offset+i*a.Strides[0]:], lda, bv[b.Offset+i*b.Strides[0]:], ldb, c[i*m*n:], n)
	}
}

// packed copies a strided batch of matrices into a contiguous one.
func packed[T any](s []T, v backend.View, rows, cols int) []T {
	out := make([]T, v.Shape[0]*rows*cols)
	for i := 0; i < v.Shape[0]; i++ {
		for r := 0; r < rows; r++ {
			for c := 0; c < cols; c++ {
				out[(i*rows+r)*cols+c] = s[v.Offset+i*v.Strides[0]+r*v.Strides[1]+c*v.Strides[2]]
			}
		}
	}
	return out
}

// matmulBF16 is the bfloat16 product: gemm.BgemmBF16 (VDPBF16PS where the
// CPU has AVX512_BF16) accumulates each element in float32 from exact
// products, and the result is rounded to bfloat16 once, as PyTorch's CPU
// bf16 mm does.
func matmulBF16(dst, a, b backend.View) { matmulHalf[backend.BF16](dst, a, b, gemm.BgemmBF16) }

// matmulF16 is the float16 product: gemm.HgemmF16 runs the float32 GEMM
// with the operands widened (F16C where the CPU has it) while they are
// packed, and rounds the float32 result to float16 once, bit for bit the
// float32 product of the widened operands, rounded.
func matmulF16(dst, a, b backend.View) { matmulHalf[backend.F16](dst, a, b, gemm.HgemmF16) }

// halfGemm is gemm.BgemmBF16's or gemm.HgemmF16's signature: two-byte
// operands and result (bits), a float32 scratch for the product.
type halfGemm func(transA, transB bool, m, n, k int, a []uint16, lda int, b []uint16, ldb int, c []uint16, ldc int, scratch []float32)

// matmulHalf runs a batch of two-byte products on hg with one float32
// scratch of m×n (the batch's products run one after another).
func matmulHalf[H halfT](dst, a, b backend.View, hg halfGemm) {
	m, n := a.Shape[1], b.Shape[2]
	sp := halfScratch.Get().(*[]float32)
	defer halfScratch.Put(sp)
	if cap(*sp) < m*n {
		*sp = make([]float32, m*n)
	}
	scratch := (*sp)[:m*n]
	matmul(dst, a, b, func(transA, transB bool, m, n, k int, a []H, lda int, b []H, ldb int, c []H, ldc int) {
		hg(transA, transB, m, n, k, halfBits(a), lda, halfBits(b), ldb, halfBits(c), ldc, scratch)
	})
}

// F16MatMulPath says how float16 matrix products run: the float32 GEMM
// kernels, with F16C (or Go) widening while packing.
func F16MatMulPath() string { return gemm.HgemmPath() }

// halfBits is s as its bits.
func halfBits[T ~uint16](s []T) []uint16 {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&s[0])), len(s))
}

// halfScratch holds float32 results of half products between calls.
var halfScratch = sync.Pool{New: func() any { return new([]float32) }}

// BF16MatMulPath says how bfloat16 matrix products run with the GEMM
// kernels in use: "bf16 GEMM with VDPBF16PS (AVX512_BF16)", "float32 GEMM
// on widened operands" (a CPU with AVX2 or AVX-512 float32 kernels but no
// AVX512_BF16), or "bf16 GEMM in Go (VDPBF16PS's arithmetic)".
func BF16MatMulPath() string { return gemm.BgemmPath() }

// AMXStatus says whether bfloat16 products run on the AMX-BF16 tiles
// (opt-in, EMBER_GEMM_AMX=1), or why not; "" on a CPU without AMX-BF16
// where nobody asked for them.
func AMXStatus() string { return gemm.AMXStatus() }

// gemmRef is C = op(A)·op(B), row-major, parallel over rows of C: the
// reference path, and the one used for integer types.
func gemmRef[T numT](transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	parallelFor(m, n*k, func(lo, hi int) {
		row := make([]T, n)
		for i := lo; i < hi; i++ {
			for j := range row {
				row[j] = 0
			}
			for p := 0; p < k; p++ {
				var x T
				if transA {
					x = a[p*lda+i]
				} else {
					x = a[i*lda+p]
				}
				if !transB {
					br := b[p*ldb : p*ldb+n]
					for j, y := range br {
						row[j] += x * y
					}
				} else {
					for j := range row {
						row[j] += x * b[j*ldb+p]
					}
				}
			}
			copy(c[i*ldc:i*ldc+n], row)
		}
	})
}

// sgemm and dgemm use the assembly GEMM; SetThreads reaches it too.
func sgemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	gemm.Sgemm(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
}

func dgemm(transA, transB bool, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	gemm.Dgemm(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
}

var _ backend.HalfMatMuler = Backend{}

// MatMulHalfF32 multiplies two-byte a and b (both BFloat16 or both
// Float16) into the float32 dst, unrounded (backend.HalfMatMuler):
// bfloat16 on the bfloat16 GEMM (gemm.Bgemm: VDPBF16PS where the CPU has
// AVX512_BF16), float16 on the float32 GEMM with the operands widened
// while packing (gemm.Hgemm, the float32 product of the values);
// operands that are not matrices with a unit stride are left to the
// caller.
func (Backend) MatMulHalfF32(dst, a, b backend.View) bool {
	dt := a.S.DType()
	if !dt.IsHalf() || b.S.DType() != dt || dst.S.DType() != backend.Float32 {
		return false
	}
	bs, m, k, n := a.Shape[0], a.Shape[1], a.Shape[2], b.Shape[2]
	ta, lda, okA := backend.GemmOperand(m, k, a.Strides[1], a.Strides[2])
	tb, ldb, okB := backend.GemmOperand(k, n, b.Strides[1], b.Strides[2])
	if !okA || !okB {
		return false
	}
	c := slice[float32](dst.S)[dst.Offset:]
	var hg func(transA, transB bool, m, n, k int, a []uint16, lda int, b []uint16, ldb int, c []float32, ldc int)
	var av, bv []uint16
	if dt == backend.Float16 {
		hg, av, bv = gemm.Hgemm, halfBits(slice[backend.F16](a.S)), halfBits(slice[backend.F16](b.S))
	} else {
		hg, av, bv = gemm.Bgemm, halfBits(slice[backend.BF16](a.S)), halfBits(slice[backend.BF16](b.S))
	}
	for i := 0; i < bs; i++ {
		hg(ta, tb, m, n, k, av[a.Offset+i*a.Strides[0]:], lda, bv[b.Offset+i*b.Strides[0]:], ldb, c[i*m*n:], n)
	}
	return true
}
