//go:build amd64 && !purego

package gemm

import (
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// archTestSets: on an AVX-512 CPU, the AVX-512 set with the AVX-512
// dot-product kernels (opt-in, see avx512Dot) unless that is the default.
func archTestSets() []*kernelSet {
	if !cpu.X86.HasAVX512F || avx512Dot {
		return nil
	}
	ks := avx512Set(true)
	ks.name = "avx512+dot512"
	return []*kernelSet{ks}
}

func archNote() string {
	if cpu.X86.HasAVX512F {
		return "AVX-512 CPU: its GEMM, packing and dot-product assembly ran"
	}
	return "no AVX-512 on this CPU: that assembly did not run"
}

// TestEdgeKernels runs each AVX-512 edge kernel (the first r rows of a
// 14×32 tile) against goEdge, overwriting and accumulating, and checks it
// writes no row past r.
func TestEdgeKernels(t *testing.T) {
	if !cpu.X86.HasAVX512F {
		t.Skip("no AVX-512")
	}
	ks := avx512Set(false)
	kr := ks.s
	mr, nr := kr.mr, kr.nr
	r := rand.New(rand.NewPCG(3, 4))
	for rows := 1; rows < mr; rows++ {
		for _, kc := range []int{1, 3, 4, 17, 256} {
			a := randSlice[float32](r, mr*kc)
			b := randSlice[float32](r, nr*kc)
			const ldc = 40
			for accum := range 2 {
				got := randSlice[float32](r, mr*ldc)
				want := append([]float32(nil), got...)
				kr.edge[rows](kc, &a[0], &b[0], &got[0], ldc, accum)
				goEdge[float32](rows, mr, nr)(kc, &a[0], &b[0], &want[0], ldc, accum)
				for i := range got {
					if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*float64(kc) {
						t.Fatalf("rows %d kc %d accum %d: c[%d] = %v, want %v", rows, kc, accum, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestBgemmKernelAVX512 runs the VDPBF16PS kernel and its edge kernels
// against the Go twin, bit for bit, on values that exercise the
// instruction's rounding: wide exponent ranges (so that the order of the
// two products matters), denormal inputs (read as zero) and denormal
// results (flushed).
func TestBgemmKernelAVX512(t *testing.T) {
	if !cpu.X86.HasAVX512BF16 || !cpu.X86.HasAVX512F {
		t.Skip("no AVX512_BF16")
	}
	kr := avx512Set(false).b
	mr, nr := kr.mr, kr.nr
	r := rand.New(rand.NewPCG(5, 6))
	word := func() uint32 {
		h := func() uint32 {
			switch r.IntN(8) {
			case 0:
				return uint32(r.IntN(0x80)) | uint32(r.IntN(2))<<15 // denormal or zero
			case 1:
				return uint32(r.IntN(1<<16)) &^ 0x7F80 // denormal, any sign
			default:
				// exponents 2^-70..2^70 around 1, random sign and mantissa
				e := 127 + r.IntN(141) - 70
				return uint32(r.IntN(2))<<15 | uint32(e)<<7 | uint32(r.IntN(128))
			}
		}
		return h() | h()<<16
	}
	words := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = math.Float32frombits(word())
		}
		return s
	}
	same := func(x, y float32) bool {
		return math.Float32bits(x) == math.Float32bits(y) || (x != x && y != y)
	}
	for rows := 1; rows <= mr; rows++ {
		fn, _ := kr.rowsFn(rows)
		for _, kc := range []int{1, 2, 3, 4, 5, 17, 200} {
			a, b := words(mr*kc), words(nr*kc)
			const ldc = 40
			for accum := range 2 {
				got := randSlice[float32](r, mr*ldc)
				want := append([]float32(nil), got...)
				fn(kc, &a[0], &b[0], &got[0], ldc, accum)
				bfKernel(rows, mr, nr)(kc, &a[0], &b[0], &want[0], ldc, accum)
				for i := range got {
					if !same(got[i], want[i]) {
						t.Fatalf("rows %d kc %d accum %d: c[%d] = %v (%#x), the Go twin %v (%#x)", rows, kc, accum, i,
							got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
					}
				}
			}
		}
	}
	// TestBfDot's order case on the hardware: lane 0 of row 0 starts at
	// zero, adds 1·1 (pair 0), then 2^24·1 and 1·1 (pair 1): high first
	// gives 2^24, low first 2^24 + 2.
	a := make([]float32, mr*2)
	b := make([]float32, nr*2)
	a[0], a[mr] = math.Float32frombits(pair(1, 0)), math.Float32frombits(pair(1, 1<<24))
	b[0], b[nr] = math.Float32frombits(pair(1, 0)), math.Float32frombits(pair(1, 1))
	c := make([]float32, mr*nr)
	kr.fn(2, &a[0], &b[0], &c[0], nr, 0)
	if c[0] != 1<<24 {
		t.Errorf("order: c = %v, want 2^24 (%v)", c[0], float32(1<<24))
	}
}

// TestPackSTrans packs float32 panels whose k runs along memory (A
// row-major, B transposed) through packPanelSIMD, by 16×16 transposes
// (packSTrans) and by gathers alone, and checks both against the
// definition dst[p·w+i] = alpha·s[off+i·is+p], bit for bit, and zero for
// rows ≤ i < w (of either sign: the padding is scaled by alpha too), and
// that nothing past the panel is written.
func TestPackSTrans(t *testing.T) {
	if !cpu.X86.HasAVX512F {
		t.Skip("no AVX-512")
	}
	defer func() { transposePack = true }()
	r := rand.New(rand.NewPCG(7, 8))
	for _, w := range []int{14, 16, 32} {
		for _, rows := range []int{1, 5, 13, 14, 16, 17, 31, 32} {
			if rows > w {
				continue
			}
			for _, kc := range []int{1, 15, 16, 17, 47, 48, 100} {
				for _, alpha := range []float32{1, -0.5} {
					is := kc + r.IntN(9)
					off := r.IntN(5)
					s := randSlice[float32](r, off+(rows-1)*is+kc)
					want := make([]float32, kc*w)
					for p := 0; p < kc; p++ {
						for i := 0; i < rows; i++ {
							want[p*w+i] = alpha * s[off+i*is+p]
						}
					}
					for _, trans := range []bool{true, false} {
						transposePack = trans
						got := randSlice[float32](r, kc*w+8)
						guard := append([]float32(nil), got[kc*w:]...)
						for i := range got[:kc*w] {
							got[i] = float32(math.NaN())
						}
						if !packPanelSIMD(got[:kc*w], s, off, is, 1, rows, w, kc, alpha) {
							t.Fatalf("w %d rows %d kc %d: not packed", w, rows, kc)
						}
						for i, v := range want {
							if math.Float32bits(got[i]) != math.Float32bits(v) && (i%w < rows || got[i] != 0) {
								t.Fatalf("w %d rows %d kc %d alpha %v transpose %v: dst[%d] (step %d, lane %d) = %v, want %v",
									w, rows, kc, alpha, trans, i, i/w, i%w, got[i], v)
							}
						}
						for i, v := range guard {
							if got[kc*w+i] != v {
								t.Fatalf("w %d rows %d kc %d transpose %v: wrote past the panel", w, rows, kc, trans)
							}
						}
					}
				}
			}
		}
	}
}

// TestGatherPanelSIMD checks gatherPanelSIMD (gatherSegsAVX512) against
// its Go twin, gatherPanel, on panels of columns in runs of assorted
// lengths (short panels, unused columns at the end, a bias row).
func TestGatherPanelSIMD(t *testing.T) {
	if !hasAVX512 {
		t.Skip("no AVX-512 assembly")
	}
	r := rand.New(rand.NewPCG(9, 10))
	src := make([]float32, 5000)
	for i := range src {
		src[i] = math.Float32frombits(r.Uint32())
	}
	for trial := 0; trial < 400; trial++ {
		nr := []int{32, 16, 8}[trial%3]
		cols := 1 + r.IntN(nr)
		cb := make([]int, nr)
		run := 1 + r.IntN(20)
		c := r.IntN(100)
		for j := range cb {
			if j >= cols {
				cb[j] = -1
				continue
			}
			if j%run == 0 {
				c += 1 + r.IntN(30)
			}
			cb[j] = c
			c++
		}
		kc := 1 + r.IntN(40)
		offs := make([]int, kc)
		for p := range offs {
			offs[p] = r.IntN(3000)
		}
		if trial%2 == 0 {
			offs[kc-1] = -1
		}
		got := make([]float32, kc*nr+1)
		want := make([]float32, kc*nr+1)
		for i := range got {
			got[i], want[i] = 7, 7
		}
		use := cb
		if trial%4 == 1 {
			use = cb[:cols] // no unused columns passed
		}
		if !gatherPanelSIMD(got[:kc*nr], src, use, offs, nr) {
			t.Fatalf("trial %d: gatherPanelSIMD declined", trial)
		}
		gatherPanel(want[:kc*nr], src, use, offs, nr)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("trial %d (nr %d, cols %d, runs of %d): element %d = %#x, want %#x", trial, nr, cols, run, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
		}
	}
}

// TestPairTable checks which tap counts pairRow permutes sixteen words at
// a time (their halves within 64 values) and the tables' periods
// (kk/gcd(16, kk) entries).
func TestPairTable(t *testing.T) {
	for kk, period := range map[int]int{1: 1, 2: 1, 4: 1, 9: 9, 25: 0, 49: 0} {
		tb := newPairTab(kk)
		switch {
		case period == 0 && tb != nil:
			t.Errorf("kk %d: a table, but sixteen words span more than 64 values", kk)
		case period != 0 && (tb == nil || len(tb.adv) != period):
			t.Errorf("kk %d: table %+v, want %d entries", kk, tb, period)
		}
	}
}
