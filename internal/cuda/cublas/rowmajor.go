package cublas

import (
	"fmt"
	"unsafe"
)

// ColMajorGemm is the argument list of one column-major cuBLAS gemm call,
// as worked out by RowMajorGemm.
type ColMajorGemm struct {
	TransA, TransB Operation
	M, N, K        int
	A              uint64
	LDA            int
	StrideA        int64
	B              uint64
	LDB            int
	StrideB        int64
	LDC            int
	StrideC        int64
}

// RowMajorGemm maps a row-major gemm, C (m×n, ldc) = op(A) (m×k, lda) ·
// op(B) (k×n, ldb), onto cuBLAS's column-major one. A row-major matrix read
// column-major is its transpose, so the call computes Cᵀ = op(B)ᵀ·op(A)ᵀ:
// the operands swap places (B first), as do m and n, and each keeps its own
// transpose flag and leading dimension. Strides (for the batched form, 0
// otherwise) travel with their operands. The leading dimensions are checked
// against the row-major shapes.
func RowMajorGemm(transA, transB bool, m, n, k int, a uint64, lda int, strideA int64, b uint64, ldb int, strideB int64, ldc int, strideC int64) (ColMajorGemm, error) {
	if m < 0 || n < 0 || k < 0 {
		return ColMajorGemm{}, fmt.Errorf("cublas: gemm with negative size m=%d n=%d k=%d", m, n, k)
	}
	// Row-major: a row of op(A)'s storage has k elements (m when transposed).
	aCols, bCols := k, n
	if transA {
		aCols = m
	}
	if transB {
		bCols = k
	}
	if lda < max(1, aCols) || ldb < max(1, bCols) || ldc < max(1, n) {
		return ColMajorGemm{}, fmt.Errorf("cublas: row-major gemm m=%d n=%d k=%d transA=%v transB=%v: need lda ≥ %d, ldb ≥ %d, ldc ≥ %d; got %d, %d, %d",
			m, n, k, transA, transB, max(1, aCols), max(1, bCols), max(1, n), lda, ldb, ldc)
	}
	const maxInt32 = 1<<31 - 1
	for _, v := range []int{m, n, k, lda, ldb, ldc} {
		if v > maxInt32 {
			return ColMajorGemm{}, fmt.Errorf("cublas: gemm dimension %d exceeds cuBLAS's int", v)
		}
	}
	return ColMajorGemm{
		TransA: op(transB), TransB: op(transA),
		M: n, N: m, K: k,
		A: b, LDA: ldb, StrideA: strideB,
		B: a, LDB: lda, StrideB: strideA,
		LDC: ldc, StrideC: strideC,
	}, nil
}

// SgemmRowMajor computes C = alpha·op(A)·op(B) + beta·C for row-major
// single-precision matrices: op(A) is m×k, op(B) k×n, C m×n, each with its
// row-major leading dimension (the distance between rows, in elements).
func SgemmRowMajor(h *Handle, transA, transB bool, m, n, k int, alpha float32, a uint64, lda int, b uint64, ldb int, beta float32, c uint64, ldc int) error {
	g, err := RowMajorGemm(transA, transB, m, n, k, a, lda, 0, b, ldb, 0, ldc, 0)
	if err != nil {
		return err
	}
	return h.Sgemm(g.TransA, g.TransB, g.M, g.N, g.K, alpha, g.A, g.LDA, g.B, g.LDB, beta, c, g.LDC)
}

// DgemmRowMajor is SgemmRowMajor in double precision.
func DgemmRowMajor(h *Handle, transA, transB bool, m, n, k int, alpha float64, a uint64, lda int, b uint64, ldb int, beta float64, c uint64, ldc int) error {
	g, err := RowMajorGemm(transA, transB, m, n, k, a, lda, 0, b, ldb, 0, ldc, 0)
	if err != nil {
		return err
	}
	return h.Dgemm(g.TransA, g.TransB, g.M, g.N, g.K, alpha, g.A, g.LDA, g.B, g.LDB, beta, c, g.LDC)
}

// SgemmStridedBatchedRowMajor is SgemmRowMajor over batch matrices, the i-th
// of A starting strideA elements after the (i-1)-th (likewise B and C).
func SgemmStridedBatchedRowMajor(h *Handle, transA, transB bool, m, n, k int, alpha float32, a uint64, lda int, strideA int64, b uint64, ldb int, strideB int64, beta float32, c uint64, ldc int, strideC int64, batch int) error {
	g, err := RowMajorGemm(transA, transB, m, n, k, a, lda, strideA, b, ldb, strideB, ldc, strideC)
	if err != nil {
		return err
	}
	return h.SgemmStridedBatched(g.TransA, g.TransB, g.M, g.N, g.K, alpha, g.A, g.LDA, g.StrideA, g.B, g.LDB, g.StrideB, beta, c, g.LDC, g.StrideC, batch)
}

// DgemmStridedBatchedRowMajor is SgemmStridedBatchedRowMajor in double
// precision.
func DgemmStridedBatchedRowMajor(h *Handle, transA, transB bool, m, n, k int, alpha float64, a uint64, lda int, strideA int64, b uint64, ldb int, strideB int64, beta float64, c uint64, ldc int, strideC int64, batch int) error {
	g, err := RowMajorGemm(transA, transB, m, n, k, a, lda, strideA, b, ldb, strideB, ldc, strideC)
	if err != nil {
		return err
	}
	return h.DgemmStridedBatched(g.TransA, g.TransB, g.M, g.N, g.K, alpha, g.A, g.LDA, g.StrideA, g.B, g.LDB, g.StrideB, beta, c, g.LDC, g.StrideC, batch)
}

// GemmStridedBatchedExRowMajor is GemmStridedBatchedEx on row-major
// operands of type dt (A, B and C alike) with float32 alpha = 1, beta = 0
// and the given compute type (Compute32F for bfloat16/float16 operands:
// tensor cores, float32 accumulation; Compute32FFastTF32 for TF32).
func GemmStridedBatchedExRowMajor(h *Handle, dt DataType, compute ComputeType, transA, transB bool, m, n, k int, a uint64, lda int, strideA int64, b uint64, ldb int, strideB int64, c uint64, ldc int, strideC int64, batch int) error {
	g, err := RowMajorGemm(transA, transB, m, n, k, a, lda, strideA, b, ldb, strideB, ldc, strideC)
	if err != nil {
		return err
	}
	alpha, beta := float32(1), float32(0)
	return h.GemmStridedBatchedEx(g.TransA, g.TransB, g.M, g.N, g.K, unsafe.Pointer(&alpha), g.A, dt, g.LDA, g.StrideA, g.B, dt, g.LDB, g.StrideB,
		unsafe.Pointer(&beta), c, dt, g.LDC, g.StrideC, batch, compute, GemmDefault)
}
