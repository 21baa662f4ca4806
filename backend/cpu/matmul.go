package cpu

import (
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
	default:
		notImpl("matmul", a.S.DType())
	}
}

type gemmFn[T any] func(transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int)

func matmul[T numT](dst, a, b backend.View, gemm gemmFn[T]) {
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
func packed[T numT](s []T, v backend.View, rows, cols int) []T {
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
