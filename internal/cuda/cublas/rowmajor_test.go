package cublas

import (
	"fmt"
	"math/rand"
	"testing"
)

// refGemmCol is the reference BLAS gemm, column-major, on an arena of
// float64 whose indices stand in for device pointers:
// C = alpha·op(A)·op(B) + beta·C with op(A) m×k, op(B) k×n.
func refGemmCol(mem []float64, ta, tb Operation, m, n, k int, alpha float64, a uint64, lda int, b uint64, ldb int, beta float64, c uint64, ldc int) {
	at := func(i, l int) float64 {
		if ta == OpN {
			return mem[int(a)+i+l*lda]
		}
		return mem[int(a)+l+i*lda]
	}
	bt := func(l, j int) float64 {
		if tb == OpN {
			return mem[int(b)+l+j*ldb]
		}
		return mem[int(b)+j+l*ldb]
	}
	for j := 0; j < n; j++ {
		for i := 0; i < m; i++ {
			var s float64
			for l := 0; l < k; l++ {
				s += at(i, l) * bt(l, j)
			}
			p := int(c) + i + j*ldc
			mem[p] = alpha*s + beta*mem[p]
		}
	}
}

// naiveRowMajor is the textbook row-major product, written independently.
func naiveRowMajor(A []float64, lda int, B []float64, ldb int, C []float64, ldc int, transA, transB bool, m, n, k int, alpha, beta float64) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for l := 0; l < k; l++ {
				var x, y float64
				if transA {
					x = A[l*lda+i] // A stored k×m
				} else {
					x = A[i*lda+l] // A stored m×k
				}
				if transB {
					y = B[j*ldb+l] // B stored n×k
				} else {
					y = B[l*ldb+j] // B stored k×n
				}
				s += x * y
			}
			C[i*ldc+j] = alpha*s + beta*C[i*ldc+j]
		}
	}
}

func TestRowMajorMapping(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	small := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(rng.Intn(9) - 4) // small integers: exact sums
		}
		return v
	}
	const alpha, beta = 1.5, -0.5
	for _, dims := range [][3]int{{2, 3, 4}, {5, 1, 3}, {1, 4, 1}, {3, 3, 3}, {4, 7, 2}} {
		m, n, k := dims[0], dims[1], dims[2]
		for _, transA := range []bool{false, true} {
			for _, transB := range []bool{false, true} {
				for _, batch := range []int{1, 3} {
					name := fmt.Sprintf("m%d_n%d_k%d_tA%v_tB%v_batch%d", m, n, k, transA, transB, batch)
					// Row-major storage shapes, with padded rows.
					aRows, aCols := m, k
					if transA {
						aRows, aCols = k, m
					}
					bRows, bCols := k, n
					if transB {
						bRows, bCols = n, k
					}
					lda, ldb, ldc := aCols+2, bCols+1, n+3
					sA, sB, sC := aRows*lda+5, bRows*ldb+1, m*ldc+2 // strides with gaps
					// Arena layout: [pad][A batch][B batch][C batch].
					aOff, bOff := 7, 7+batch*sA
					cOff := bOff + batch*sB
					mem := small(cOff + batch*sC)
					want := append([]float64(nil), mem...)

					g, err := RowMajorGemm(transA, transB, m, n, k, uint64(aOff), lda, int64(sA), uint64(bOff), ldb, int64(sB), ldc, int64(sC))
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					for i := 0; i < batch; i++ {
						refGemmCol(mem, g.TransA, g.TransB, g.M, g.N, g.K, alpha,
							g.A+uint64(int64(i)*g.StrideA), g.LDA, g.B+uint64(int64(i)*g.StrideB), g.LDB,
							beta, uint64(cOff)+uint64(int64(i)*g.StrideC), g.LDC)
						naiveRowMajor(want[aOff+i*sA:], lda, want[bOff+i*sB:], ldb, want[cOff+i*sC:], ldc, transA, transB, m, n, k, alpha, beta)
					}
					for i := range mem {
						if mem[i] != want[i] {
							t.Fatalf("%s: arena[%d] = %v, want %v (mapping %+v)", name, i, mem[i], want[i], g)
						}
					}
				}
			}
		}
	}
}

func TestRowMajorMappingValues(t *testing.T) {
	// The hand-derived mapping for C(2×3) = Aᵀ(2×4)·B(4×3), A stored 4×2.
	g, err := RowMajorGemm(true, false, 2, 3, 4, 100, 2, 8, 200, 3, 12, 3, 6)
	if err != nil {
		t.Fatal(err)
	}
	want := ColMajorGemm{TransA: OpN, TransB: OpT, M: 3, N: 2, K: 4, A: 200, LDA: 3, StrideA: 12, B: 100, LDB: 2, StrideB: 8, LDC: 3, StrideC: 6}
	if g != want {
		t.Errorf("got %+v\nwant %+v", g, want)
	}
}

func TestRowMajorBadLeadingDims(t *testing.T) {
	for _, c := range []struct {
		tA, tB        bool
		lda, ldb, ldc int
	}{
		{false, false, 3, 5, 5}, // lda < k=4
		{true, false, 1, 5, 5},  // lda < m=2
		{false, false, 4, 4, 5}, // ldb < n=5
		{false, true, 4, 3, 5},  // ldb < k=4
		{false, false, 4, 5, 4}, // ldc < n=5
	} {
		if _, err := RowMajorGemm(c.tA, c.tB, 2, 5, 4, 0, c.lda, 0, 0, c.ldb, 0, c.ldc, 0); err == nil {
			t.Errorf("%+v: want an error", c)
		}
	}
	if _, err := RowMajorGemm(false, false, -1, 5, 4, 0, 4, 0, 0, 5, 0, 5, 0); err == nil {
		t.Error("negative m: want an error")
	}
}
