package gemm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
)

// randF16 returns n float16 values, uniform in (-1, 1) rounded to nearest.
func randF16(r *rand.Rand, n int) []uint16 {
	s := make([]uint16, n)
	for i := range s {
		s[i] = uint16(backend.ToF16(float32(r.Float64()*2 - 1)))
	}
	return s
}

// widenRef is s as float32 by backend.F16.Float32, element by element.
func widenRef(s []uint16) []float32 {
	w := make([]float32, len(s))
	for i, h := range s {
		w[i] = backend.F16(h).Float32()
	}
	return w
}

func sameBits(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) }

// hgemmRun runs one case with operands a and b on the kernel set in use:
// Hgemm must be Sgemm on the widened operands bit for bit, padding
// untouched, and HgemmF16 that product rounded by backend.ToF16. It
// returns C.
func hgemmRun(t *testing.T, tc bgemmCase, a, b []uint16) []float32 {
	t.Helper()
	m, n, k, pad := tc.m, tc.n, tc.k, tc.pad
	_, ac := rowsCols(tc.transA, m, k)
	_, bc := rowsCols(tc.transB, k, n)
	lda, ldb, ldc := ac+pad, bc+pad, n+pad
	if tc.threads > 0 {
		SetThreads(tc.threads)
		defer SetThreads(0)
	}
	nan := float32(math.NaN())
	c := make([]float32, m*ldc)
	want := make([]float32, m*ldc)
	for i := range c {
		c[i], want[i] = nan, nan
	}
	Hgemm(tc.transA, tc.transB, m, n, k, a, lda, b, ldb, c, ldc)
	Sgemm(tc.transA, tc.transB, m, n, k, 1, widenRef(a), lda, widenRef(b), ldb, 0, want, ldc)
	for i := range c {
		if !sameBits(c[i], want[i]) {
			t.Fatalf("%+v: c[%d][%d] = %v (%#08x), widened Sgemm %v (%#08x)", tc, i/ldc, i%ldc, c[i], math.Float32bits(c[i]), want[i], math.Float32bits(want[i]))
		}
	}
	out := make([]uint16, m*ldc)
	for i := range out {
		out[i] = 0x1234
	}
	HgemmF16(tc.transA, tc.transB, m, n, k, a, lda, b, ldb, out, ldc, nil)
	for i := range out {
		w := uint16(0x1234)
		if i%ldc < n {
			w = uint16(backend.ToF16(want[i]))
		}
		if out[i] != w {
			t.Fatalf("%+v: HgemmF16 c[%d][%d] = %#04x, want %#04x", tc, i/ldc, i%ldc, out[i], w)
		}
	}
	return c
}

var hgemmCases = append(append([]bgemmCase(nil), bgemmCases...),
	// gemv (m = 1, n·k ≥ gemvMin), both B layouts
	bgemmCase{m: 1, n: 300, k: 200, pad: 1}, bgemmCase{transA: true, transB: true, m: 1, n: 300, k: 200},
	// parallel, with A transposed (the band packer) and B either way
	bgemmCase{transA: true, m: 150, n: 200, k: 400, pad: 1, threads: 3},
	bgemmCase{transB: true, m: 130, n: 500, k: 300, threads: 2},
	// more rows than a block (mc), odd everything
	bgemmCase{m: 401, n: 45, k: 33, pad: 2}, bgemmCase{transA: true, m: 401, n: 45, k: 33, pad: 2},
)

// TestHgemm runs Hgemm and HgemmF16 on every kernel set: bit for bit the
// widened Sgemm, and within float32 accumulation error of a float64
// product of the same float16 values.
func TestHgemm(t *testing.T) {
	for _, ks := range testSets() {
		t.Run(ks.name, func(t *testing.T) {
			old := current.Load()
			current.Store(ks)
			defer current.Store(old)
			t.Logf("%s: %s", ks.name, HgemmPath())
			for i, tc := range hgemmCases {
				r := rand.New(rand.NewPCG(uint64(i), 16))
				m, n, k, pad := tc.m, tc.n, tc.k, tc.pad
				ar, ac := rowsCols(tc.transA, m, k)
				br, bc := rowsCols(tc.transB, k, n)
				lda, ldb, ldc := ac+pad, bc+pad, n+pad
				a, b := randF16(r, ar*lda), randF16(r, br*ldb)
				c := hgemmRun(t, tc, a, b)
				at := func(i, p int) float64 {
					if tc.transA {
						return float64(backend.F16(a[p*lda+i]).Float32())
					}
					return float64(backend.F16(a[i*lda+p]).Float32())
				}
				bt := func(p, j int) float64 {
					if tc.transB {
						return float64(backend.F16(b[j*ldb+p]).Float32())
					}
					return float64(backend.F16(b[p*ldb+j]).Float32())
				}
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						var s, abs float64
						for p := 0; p < k; p++ {
							v := at(i, p) * bt(p, j)
							s += v
							abs += math.Abs(v)
						}
						got := c[i*ldc+j]
						if d := math.Abs(float64(got) - s); !(d <= 2*float64(k)*0x1p-24*abs) {
							t.Fatalf("%+v: c[%d][%d] = %v, want %v (±%g)", tc, i, j, got, s, 2*float64(k)*0x1p-24*abs)
						}
					}
				}
			}
		})
	}
}

// TestHgemmSpecial: NaNs (payloads, signs), infinities, subnormals and
// signed zeros widen as backend.F16.Float32 does, so the product is the
// widened Sgemm's bit for bit on every kernel set; a few worked by hand.
func TestHgemmSpecial(t *testing.T) {
	specials := []uint16{0x7C01, 0xFE00, 0x7E55, 0x7C00, 0xFC00, 0x0001, 0x83FF, 0x0400, 0x8000, 0x0000, 0x7BFF, 0x3C00}
	for _, ks := range testSets() {
		t.Run(ks.name, func(t *testing.T) {
			old := current.Load()
			current.Store(ks)
			defer current.Store(old)
			for i, tc := range []bgemmCase{{m: 3, n: 40, k: 17, pad: 1}, {transA: true, transB: true, m: 20, n: 33, k: 40}, {transB: true, m: 15, n: 17, k: 5}} {
				r := rand.New(rand.NewPCG(uint64(i), 17))
				ar, ac := rowsCols(tc.transA, tc.m, tc.k)
				br, bc := rowsCols(tc.transB, tc.k, tc.n)
				a, b := randF16(r, ar*(ac+tc.pad)), randF16(r, br*(bc+tc.pad))
				for j := range a {
					if r.IntN(4) == 0 {
						a[j] = specials[r.IntN(len(specials))]
					}
				}
				for j := range b {
					if r.IntN(8) == 0 {
						b[j] = specials[r.IntN(len(specials))]
					}
				}
				hgemmRun(t, tc, a, b)
			}
			// [1 2; 3 4]·[5 6; 7 8] = [19 22; 43 50]; a subnormal row:
			// 2⁻²⁴·2¹⁰ = 2⁻¹⁴ (0x0001 · 0x6400), and a NaN row.
			a := []uint16{0x3C00, 0x4000, 0x4200, 0x4400}
			b := []uint16{0x4500, 0x4600, 0x4700, 0x4800}
			out := make([]uint16, 4)
			HgemmF16(false, false, 2, 2, 2, a, 2, b, 2, out, 2, nil)
			want := []uint16{0x4CC0, 0x4D80, 0x5160, 0x5240} // 19 22 43 50
			for j, w := range want {
				if out[j] != w {
					t.Fatalf("[1 2; 3 4]·[5 6; 7 8][%d] = %#04x, want %#04x", j, out[j], w)
				}
			}
			a = []uint16{0x0001, 0x0000, 0x7E00, 0x0000}
			b = []uint16{0x6400, 0, 0, 0}
			HgemmF16(false, false, 2, 2, 2, a, 2, b, 2, out, 2, nil)
			if out[0] != 0x0400 || out[1] != 0 { // 2⁻¹⁴, 0
				t.Fatalf("subnormal row = %#04x %#04x, want 0x0400 0", out[0], out[1])
			}
			if out[2]&0x7C00 != 0x7C00 || out[2]&0x3FF == 0 {
				t.Fatalf("NaN row = %#04x, want a NaN", out[2])
			}
		})
	}
}
