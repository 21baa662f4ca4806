package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bf is the bfloat16 bits of f (f must be one).
func bf(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0xFFFF != 0 {
		panic("not a bfloat16")
	}
	return uint16(u >> 16)
}

func pair(lo, hi float32) uint32 { return uint32(bf(lo)) | uint32(bf(hi))<<16 }

// TestBfDot checks VDPBF16PS's arithmetic, worked by hand.
func TestBfDot(t *testing.T) {
	p24 := float32(1 << 24)
	for _, tc := range []struct {
		name     string
		acc      float32
		a, b     uint32
		want     float32
		wantBits bool
	}{
		{"plain", 0, pair(1.5, 2), pair(2, -0.5), 2, false},
		{"acc", 0.25, pair(3, 0.5), pair(0.5, 0.5), 2, false},
		// high products first: 1 + 2^24 rounds (tie, even) to 2^24, then
		// + 1 again; low first would give 2 + 2^24 exactly.
		{"order", 1, pair(1, p24), pair(1, 1), p24, false},
		// 0x0001 is a denormal (2^-133): read as zero, so 2^-133·2^126 adds nothing.
		{"daz", 0, 0x0001, uint32(bf(0x1p126)), 0, false},
		// 2^-100·2^-30 = 2^-130 is a denormal result: flushed to zero.
		{"ftz", 0, uint32(bf(0x1p-100)), uint32(bf(0x1p-30)), 0, false},
		// a negative denormal result flushes to -0
		{"ftz-sign", 0, uint32(bf(-0x1p-100)), uint32(bf(0x1p-30)), float32(math.Copysign(0, -1)), true},
		// the products are exact: (1+2^-7)^2 = 1 + 2^-6 + 2^-14
		{"exact", 0, uint32(bf(1 + 0x1p-7)), uint32(bf(1 + 0x1p-7)), 1 + 0x1p-6 + 0x1p-14, false},
	} {
		got := bfDot(tc.acc, tc.a, tc.b)
		if got != tc.want || (tc.wantBits && math.Float32bits(got) != math.Float32bits(tc.want)) {
			t.Errorf("%s: bfDot = %v (%#x), want %v", tc.name, got, math.Float32bits(got), tc.want)
		}
	}
}

// randBF returns n bfloat16 values, uniform in (-1, 1) rounded down.
func randBF(r *rand.Rand, n int) []uint16 {
	s := make([]uint16, n)
	for i := range s {
		s[i] = uint16(math.Float32bits(float32(r.Float64()*2-1)) >> 16)
	}
	return s
}

func bfVal(h uint16) float64 { return float64(math.Float32frombits(uint32(h) << 16)) }

type bgemmCase struct {
	transA, transB bool
	m, n, k, pad   int
	threads        int
}

// bgemmRun runs one case on the kernel set in use and checks it against a
// float64 product of the same bfloat16 values; it returns C.
func bgemmRun(t *testing.T, tc bgemmCase, seed uint64) []float32 {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 9))
	m, n, k, pad := tc.m, tc.n, tc.k, tc.pad
	ar, ac := rowsCols(tc.transA, m, k)
	br, bc := rowsCols(tc.transB, k, n)
	lda, ldb, ldc := ac+pad, bc+pad, n+pad
	a := randBF(r, ar*lda)
	b := randBF(r, br*ldb)
	c := make([]float32, m*ldc)
	for i := range c {
		c[i] = float32(math.NaN())
	}
	if tc.threads > 0 {
		SetThreads(tc.threads)
		defer SetThreads(0)
	}
	Bgemm(tc.transA, tc.transB, m, n, k, a, lda, b, ldb, c, ldc)
	// BgemmBF16 rounds the same float32 product as it goes
	out := make([]uint16, m*ldc)
	for i := range out {
		out[i] = 0x1234
	}
	BgemmBF16(tc.transA, tc.transB, m, n, k, a, lda, b, ldb, out, ldc, nil)
	for i := 0; i < m; i++ {
		for j := 0; j < ldc; j++ {
			want := uint16(0x1234)
			if j < n {
				want = roundBF16(c[i*ldc+j])
			}
			if got := out[i*ldc+j]; got != want {
				t.Fatalf("%+v: BgemmBF16 c[%d][%d] = %#04x, want %#04x", tc, i, j, got, want)
			}
		}
	}
	at := func(i, p int) float64 {
		if tc.transA {
			return bfVal(a[p*lda+i])
		}
		return bfVal(a[i*lda+p])
	}
	bt := func(p, j int) float64 {
		if tc.transB {
			return bfVal(b[j*ldb+p])
		}
		return bfVal(b[p*ldb+j])
	}
	for i := 0; i < m; i++ {
		for j := 0; j < ldc; j++ {
			got := c[i*ldc+j]
			if j >= n {
				if got == got {
					t.Fatalf("%+v: c[%d][%d] (padding) written: %v", tc, i, j, got)
				}
				continue
			}
			var s, abs float64
			for p := 0; p < k; p++ {
				v := at(i, p) * bt(p, j)
				s += v
				abs += math.Abs(v)
			}
			if d := math.Abs(float64(got) - s); !(d <= 2*float64(k)*0x1p-24*abs) {
				t.Fatalf("%+v: c[%d][%d] = %v, want %v (±%g)", tc, i, j, got, s, 2*float64(k)*0x1p-24*abs)
			}
		}
	}
	return c
}

var bgemmCases = func() []bgemmCase {
	var cs []bgemmCase
	for _, ta := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			for _, s := range [][4]int{{1, 1, 1, 0}, {3, 5, 7, 1}, {14, 32, 2, 0}, {15, 33, 3, 2}, {29, 70, 20, 0}, {2, 40, 771, 1}} {
				cs = append(cs, bgemmCase{transA: ta, transB: tb, m: s[0], n: s[1], k: s[2], pad: s[3]})
			}
		}
	}
	// two column blocks and two k blocks, serial and on 3 goroutines
	cs = append(cs, bgemmCase{m: 30, n: 800, k: 801, pad: 3}, bgemmCase{transB: true, m: 45, n: 800, k: 801, threads: 3},
		bgemmCase{transA: true, m: 100, n: 130, k: 333, threads: 2})
	return cs
}()

// TestBgemm runs Bgemm on every kernel set against float64 products; a set
// with a bfloat16 kernel must also agree bit for bit with the pure-Go one
// of the same shape (they share packing, blocking and arithmetic).
func TestBgemm(t *testing.T) {
	twin := map[int][]float32{}
	var order []string
	sets := testSets()
	// the pure-Go twin first
	for i, ks := range sets {
		if ks.name == "avx512-go" {
			sets[0], sets[i] = sets[i], sets[0]
		}
	}
	for _, ks := range sets {
		order = append(order, ks.name)
		t.Run(ks.name, func(t *testing.T) {
			old := current.Load()
			current.Store(ks)
			defer current.Store(old)
			t.Logf("%s: %s", ks.name, BgemmPath())
			for i, tc := range bgemmCases {
				c := bgemmRun(t, tc, uint64(i))
				if ks.name == "avx512-go" {
					twin[i] = c
					continue
				}
				if ks.b == nil || ks.b.shape != avx512B || ks.amx != nil {
					continue // (the AMX kernel's twin: TestAMXKernel)
				}
				for j, v := range c {
					w := twin[i][j]
					if math.Float32bits(v) != math.Float32bits(w) && !(v != v && w != w) {
						t.Fatalf("%+v: c[%d] = %v, the Go twin %v", tc, j, v, w)
					}
				}
			}
		})
	}
	t.Logf("sets %v", order)
}

// TestRoundBF16 checks RoundBF16 (AVX-512 and Go tail) on values worked by
// hand and on random bits against the scalar rounding.
func TestRoundBF16(t *testing.T) {
	cases := []struct {
		f    float32
		want uint16
	}{
		{1, 0x3F80},
		{1 + 0x1p-8, 0x3F80},           // tie, even stays
		{1 + 3*0x1p-8, 0x3F82},         // tie, odd rounds up
		{1 + 0x1p-8 + 0x1p-20, 0x3F81}, // past the tie
		{-2, 0xC000},
		{float32(math.Inf(1)), 0x7F80},
		{math.MaxFloat32, 0x7F80}, // past the largest finite: infinity
		{float32(math.NaN()), 0xFFFF},
		{math.Float32frombits(0xFF800001), 0xFFFF}, // a signalling NaN
		{math.Float32frombits(0x00008000), 0x0000}, // denormal, tie to even 0
		{math.Float32frombits(0x00018000), 0x0002}, // denormal, tie up to even
	}
	src := make([]float32, 0, 40)
	for len(src) < 37 { // two SIMD blocks and a Go tail
		for _, c := range cases {
			src = append(src, c.f)
		}
	}
	src = src[:37]
	dst := make([]uint16, len(src))
	RoundBF16(dst, src)
	for i, v := range dst {
		if w := cases[i%len(cases)].want; v != w {
			t.Errorf("RoundBF16(%v) [%d] = %#04x, want %#04x", src[i], i, v, w)
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	src = make([]float32, 1000)
	for i := range src {
		src[i] = math.Float32frombits(r.Uint32())
	}
	dst = make([]uint16, len(src))
	RoundBF16(dst, src)
	for i, v := range dst {
		if w := roundBF16(src[i]); v != w {
			t.Fatalf("RoundBF16(%#x) = %#04x, want %#04x", math.Float32bits(src[i]), v, w)
		}
	}
}

// TestBgemmBF16Rounding runs BgemmBF16 on rows whose products round at
// the edges of bfloat16 (ties, overflow, infinities, NaNs, a denormal
// sum), worked by hand, in a whole 14×32 tile and in edge rows and
// columns, with one k block and with several (the later ones add C).
// Row i of A holds row i's two values at k = 0 and at k = k-1 (in another
// k block when k > 512), B is all ones: c[i][j] = x + y whatever j.
func TestBgemmBF16Rounding(t *testing.T) {
	inf := float32(math.Inf(1))
	rows := []struct {
		x, y float32
		want uint16
	}{
		{1, 0x1p-8, 0x3F80},              // tie, even stays
		{1 + 0x1p-7, 0x1p-8, 0x3F82},     // tie, odd rounds up
		{1, 0x1p-9, 0x3F80},              // below the tie
		{1, 0x1p-8 + 0x1p-15, 0x3F81},    // past the tie
		{-1 - 0x1p-7, -0x1p-8, 0xBF82},   // negative tie, odd
		{0x1.fep127, 0x1p119, 0x7F80},    // tie past the largest finite: +Inf
		{-0x1.fep127, -0x1p119, 0xFF80},  // and -Inf
		{0x1.fep127, 0x1p118, 0x7F7F},    // below it: the largest finite
		{inf, 1, 0x7F80},                 // +Inf
		{inf, -inf, 0xFFFF},              // NaN
		{0, float32(math.NaN()), 0xFFFF}, // NaN operand
		{0x1.8p-126, -0x1p-126, 0x0040},  // a denormal sum (of the two k blocks), exact
		{3, 4, 0x40E0},                   // 7
		{0x1p-100, -0x1p-100, 0x0000},    // +0
		{0.5, 0.25, 0x3F40},              // 0.75: row 15, an edge row
		{-2, 0, 0xC000},
	}
	m, n := len(rows), 40 // a 14×32 tile, then 2 edge rows and 8 edge columns
	for _, k := range []int{2, 1030} {
		for _, threads := range []int{1, 2} {
			a := make([]uint16, m*k)
			for i, r := range rows {
				a[i*k] = bf(r.x)
				a[i*k+k-1] = bf(r.y)
			}
			if k == 2 {
				a[0*k+1] = bf(rows[0].y) // (k-1 == 1)
			}
			b := make([]uint16, k*n)
			for i := range b {
				b[i] = bf(1)
			}
			out := make([]uint16, m*n)
			SetThreads(threads)
			BgemmBF16(false, false, m, n, k, a, k, b, n, out, n, nil)
			SetThreads(0)
			for i, r := range rows {
				want := r.want
				if k == 2 && r.want == 0x0040 {
					want = 0 // VDPBF16PS flushes a denormal result
				}
				for j := 0; j < n; j++ {
					if got := out[i*n+j]; got != want {
						t.Fatalf("k %d, %d threads: %v + %v: c[%d][%d] = %#04x, want %#04x", k, threads, r.x, r.y, i, j, got, want)
					}
				}
			}
		}
	}
}
