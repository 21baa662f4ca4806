package gemm

import (
	"sync"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/vec"
)

// The float16 GEMM. Its operands are IEEE half-precision bits; it runs the
// float32 GEMM (the same kernels, blocking and threads as Sgemm) with
// packers that widen float16 to float32 as they pack, with F16C's
// VCVTPH2PS where the CPU has it (vec.F32FromF16, which gives every
// float16 the bits of backend.F16.Float32, NaN payloads included). The
// packed panels are the ones Sgemm packs from the widened operands, so the
// float32 product is Sgemm's on them bit for bit, without widening the
// whole operands first.

// extPack is a packer that replaces the float32 one in a params[float32]:
// it fills the same micro-panels from other operands, and finish sees each
// part of C once it is final.
type extPack interface {
	packA(dst []float32, i0, mc, p0, kc, mr int, simd bool)
	packB(dst []float32, p0, kc, j0, nc, nr int, simd bool)
	finish(c []float32, ldc, i0, rows, j0, cols int)
}

// hPack packs float16 operands as float32 for the float32 kernels.
type hPack struct{ halfOps }

// hScratch holds float32 conversions of operand parts between packings.
var hScratch = sync.Pool{New: func() any { return new([]float32) }}

func hGetScratch(n int) *[]float32 {
	sp := hScratch.Get().(*[]float32)
	if cap(*sp) < n {
		*sp = make([]float32, n)
	}
	return sp
}

// widenRun sets dst[i] to the float32 value of the float16 src[i].
func widenRun(dst []float32, src []uint16) {
	vec.F32FromF16(dst, unsafe.Slice((*backend.F16)(unsafe.Pointer(unsafe.SliceData(src))), len(src)))
}

// packA packs rows i0..i0+mc and steps p0..p0+kc of op(A) as packA does
// the widened A: converted into float32 scratch (a panel's rows, or with
// A transposed the block's steps, contiguous runs), then packed from it.
func (q *hPack) packA(dst []float32, i0, mc, p0, kc, mr int, simd bool) {
	if q.transA {
		// A is stored k×m: kc runs of mc values
		sp := hGetScratch(mc * kc)
		t := (*sp)[:mc*kc]
		for p := 0; p < kc; p++ {
			widenRun(t[p*mc:][:mc], q.a[(p0+p)*q.lda+i0:][:mc])
		}
		packA(dst, t, mc, true, 0, mc, 0, kc, mr, 1, simd)
		hScratch.Put(sp)
		return
	}
	sp := hGetScratch(mr * kc)
	t := (*sp)[:mr*kc]
	for ir := 0; ir < mc; ir += mr {
		rows := min(mr, mc-ir)
		for i := 0; i < rows; i++ {
			widenRun(t[i*kc:][:kc], q.a[(i0+ir+i)*q.lda+p0:][:kc])
		}
		packA(dst[ir*kc:], t, kc, false, 0, rows, 0, kc, mr, 1, simd)
	}
	hScratch.Put(sp)
}

// packB packs steps p0..p0+kc and columns j0..j0+nc of op(B) as packB
// does the widened B: row by row of a stored k×n B straight into the
// micro-panels, or for a stored n×k B a panel's columns into scratch,
// then packed from it.
func (q *hPack) packB(dst []float32, p0, kc, j0, nc, nr int, simd bool) {
	if !q.transB {
		// a row of B at a time, converted whole, then scattered
		sp := hGetScratch(nc)
		t := (*sp)[:nc]
		for p := 0; p < kc; p++ {
			widenRun(t, q.b[(p0+p)*q.ldb+j0:][:nc])
			scatterRow(dst, t, p, kc, nr)
		}
		hScratch.Put(sp)
		return
	}
	sp := hGetScratch(nr * kc)
	t := (*sp)[:nr*kc]
	for jr := 0; jr < nc; jr += nr {
		cols := min(nr, nc-jr)
		for j := 0; j < cols; j++ {
			widenRun(t[j*kc:][:kc], q.b[(j0+jr+j)*q.ldb+p0:][:kc])
		}
		packB(dst[jr*kc:], t, kc, true, 0, kc, 0, cols, nr, simd)
	}
	hScratch.Put(sp)
}

// Hgemm computes C = op(A)·op(B), row-major, from float16 operands (their
// bits) into float32, overwriting C: bit for bit Sgemm (alpha 1, beta 0)
// on the operands widened to float32. op(A) is m×k, op(B) is k×n; transA:
// A is stored k×m (lda ≥ m) and used transposed; likewise transB.
func Hgemm(transA, transB bool, m, n, k int, a []uint16, lda int, b []uint16, ldb int, c []float32, ldc int) {
	hgemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, nil, 0)
}

// HgemmF16 is Hgemm with a float16 result: C (ldc apart) is the float32
// product rounded once (see RoundF16). scratch holds the float32 product,
// m×n (n apart); nil: allocated. Each part of C is rounded as soon as it is
// finished, while it is in cache.
func HgemmF16(transA, transB bool, m, n, k int, a []uint16, lda int, b []uint16, ldb int, c []uint16, ldc int, scratch []float32) {
	checkMatrix("c", m, n, ldc, len(c))
	if scratch == nil {
		scratch = make([]float32, m*n)
	}
	hgemm(transA, transB, m, n, k, a, lda, b, ldb, scratch, n, c, ldc)
}

func hgemm(transA, transB bool, m, n, k int, a []uint16, lda int, b []uint16, ldb int, c []float32, ldc int, out []uint16, ldo int) {
	if checkArgs(transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc) {
		return
	}
	pk := &hPack{halfOps{a, lda, b, ldb, transA, transB, out, ldo, RoundF16}}
	ks := current.Load()
	// gemm's choices, so that the arithmetic is Sgemm's
	if k == 0 {
		scale(0, c, ldc, 0, m, 0, n)
		pk.finish(c, ldc, 0, m, 0, n)
		return
	}
	t := numThreads()
	if m == 1 && n*k >= gemvMin {
		// a row: gemv, memory-bound, on the widened operands
		ar, ac := rowsCols(transA, m, k)
		br, bc := rowsCols(transB, k, n)
		wa, wb := widenMatrix(a, ar, ac, lda, widenRun), widenMatrix(b, br, bc, ldb, widenRun)
		gemm(ks.s, transA, transB, m, n, k, 1, wa, lda, wb, ldb, 0, c, ldc)
		pk.finish(c, ldc, 0, m, 0, n)
		return
	}
	p := params[float32]{kr: ks.s, transA: transA, transB: transB, k: k, alpha: 1, c: c, ldc: ldc, ext: pk}
	if t <= 1 || float64(m)*float64(n)*float64(k) < parallelFlops {
		p.run(0, m, 0, n)
		return
	}
	parallel(&p, m, n, t)
}

// RoundF16 sets dst[i] to backend.ToF16(src[i]), the float16 nearest, ties
// to even (F16C where the CPU has it).
func RoundF16(dst []uint16, src []float32) {
	vec.F16FromF32(unsafe.Slice((*backend.F16)(unsafe.Pointer(unsafe.SliceData(dst))), len(src)), src)
}

// HgemmPath says how Hgemm computes with the kernel set in use: the
// float32 GEMM, with float16 widened to float32 by F16C (or Go code) while
// packing.
func HgemmPath() string {
	conv := "Go conversion"
	if vec.F16CAccelerated() {
		conv = "F16C conversion"
	}
	return "float32 GEMM kernels (" + current.Load().name + "), " + conv + " while packing"
}
