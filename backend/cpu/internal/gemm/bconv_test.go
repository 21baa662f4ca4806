package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// bconvRef is the bfloat16 convolution by its definition in float64 (the
// bias included): out[oi] and Σ|terms| per output.
func bconvRef(cv Conv, x []uint16, xs [4]int, w, bias []uint16) (ref, abs []float64) {
	cg, og := cv.C/cv.G, cv.O/cv.G
	l := cv.OH * cv.OW
	ref = make([]float64, cv.N*cv.O*l)
	abs = make([]float64, len(ref))
	for n := 0; n < cv.N; n++ {
		for o := 0; o < cv.O; o++ {
			g := o / og
			for oh := 0; oh < cv.OH; oh++ {
				for ow := 0; ow < cv.OW; ow++ {
					oi := (n*cv.O+o)*l + oh*cv.OW + ow
					var s, a float64
					if bias != nil {
						s, a = bfVal(bias[o]), math.Abs(bfVal(bias[o]))
					}
					for c := 0; c < cg; c++ {
						for ki := 0; ki < cv.KH; ki++ {
							ih := oh*cv.SH + ki*cv.DH - cv.PH
							for kj := 0; kj < cv.KW; kj++ {
								iw := ow*cv.SW + kj*cv.DW - cv.PW
								if ih < 0 || ih >= cv.H || iw < 0 || iw >= cv.W {
									continue
								}
								v := bfVal(w[((o*cg+c)*cv.KH+ki)*cv.KW+kj]) * bfVal(x[n*xs[0]+(g*cg+c)*xs[1]+ih*xs[2]+iw*xs[3]])
								s += v
								a += math.Abs(v)
							}
						}
					}
					ref[oi], abs[oi] = s, a
				}
			}
		}
	}
	return ref, abs
}

type bconvCase struct {
	n, c, h, w, o, kh, kw, g, s, p, d int
	bias, strided                     bool
}

// conv is the case's convolution, its output size filled in.
func (tc bconvCase) conv() Conv {
	cv := Conv{N: tc.n, C: tc.c, H: tc.h, W: tc.w, O: tc.o, KH: tc.kh, KW: tc.kw, G: tc.g,
		SH: tc.s, SW: tc.s, PH: tc.p, PW: tc.p, DH: tc.d, DW: tc.d}
	cv.OH = OutSize(cv.H, cv.KH, cv.SH, cv.PH, cv.DH)
	cv.OW = OutSize(cv.W, cv.KW, cv.SW, cv.PW, cv.DW)
	return cv
}

var bconvCases = []bconvCase{
	{n: 2, c: 3, h: 9, w: 11, o: 5, kh: 3, kw: 3, g: 1, s: 1, p: 1, d: 1, bias: true},
	{n: 1, c: 8, h: 12, w: 12, o: 16, kh: 3, kw: 3, g: 1, s: 1, p: 0, d: 1},
	{n: 3, c: 5, h: 15, w: 13, o: 17, kh: 3, kw: 3, g: 1, s: 2, p: 1, d: 1, bias: true, strided: true},
	{n: 2, c: 4, h: 14, w: 14, o: 6, kh: 3, kw: 3, g: 1, s: 1, p: 2, d: 2, bias: true},
	{n: 2, c: 6, h: 10, w: 9, o: 9, kh: 3, kw: 2, g: 3, s: 1, p: 1, d: 1, bias: true},
	{n: 2, c: 8, h: 8, w: 8, o: 8, kh: 3, kw: 3, g: 8, s: 2, p: 1, d: 1, bias: true, strided: true}, // depthwise
	{n: 2, c: 3, h: 23, w: 23, o: 8, kh: 7, kw: 7, g: 1, s: 2, p: 3, d: 1, bias: true},              // ResNet's stem, small
	{n: 4, c: 33, h: 4, w: 4, o: 30, kh: 1, kw: 1, g: 1, s: 1, p: 0, d: 1, bias: true},              // 1×1, odd channels
	{n: 2, c: 64, h: 7, w: 7, o: 40, kh: 3, kw: 3, g: 1, s: 1, p: 1, d: 1},                          // k in several blocks
	{n: 2, c: 300, h: 6, w: 6, o: 20, kh: 3, kw: 3, g: 2, s: 1, p: 1, d: 1, bias: true},
}

// bconvRun runs one case on the kernel set in use and checks every output
// against the float64 definition: within one bfloat16 rounding of a float32
// accumulation.
func bconvRun(t *testing.T, tc bconvCase, seed uint64) []uint16 {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 3))
	cv := tc.conv()
	xs := [4]int{cv.C * cv.H * cv.W, cv.H * cv.W, cv.W, 1}
	if tc.strided { // channels last, a gap between images
		xs = [4]int{cv.H*cv.W*cv.C + 5, 1, cv.W * cv.C, cv.C}
	}
	x := randBF(r, cv.N*xs[0]+cv.C*cv.H*cv.W)
	w := randBF(r, cv.O*cv.C/cv.G*cv.KH*cv.KW)
	var bias []uint16
	if tc.bias {
		bias = randBF(r, cv.O)
	}
	out := make([]uint16, cv.N*cv.O*cv.OH*cv.OW)
	for i := range out {
		out[i] = 0x7FC1
	}
	ConvForwardBF16(cv, x, xs, w, bias, out)
	ref, abs := bconvRef(cv, x, xs, w, bias)
	k := float64(cv.C/cv.G*cv.KH*cv.KW + 1)
	for i, v := range out {
		got := bfVal(v)
		e := 2 * k * 0x1p-24 * abs[i]
		if d := math.Abs(got - ref[i]); !(d <= 0x1p-8*math.Abs(ref[i])+2*e) {
			t.Fatalf("%+v: out[%d] = %v (%#04x), want %v (±%g)", tc, i, got, v, ref[i], 0x1p-8*math.Abs(ref[i])+2*e)
		}
	}
	return out
}

// TestConvForwardBF16 runs the bfloat16 convolution on every kernel set, in
// both column modes, on 1 and 3 threads, every other case one image a
// chunk (convForwardPairs), against the float64
// definition; a set with a bfloat16 kernel must agree bit for bit with the
// pure-Go twin.
func TestConvForwardBF16(t *testing.T) {
	sets := testSets()
	for i, ks := range sets {
		if ks.name == "avx512-go" {
			sets[0], sets[i] = sets[i], sets[0]
		}
	}
	twin := map[string][]uint16{}
	oldExact, oldBFExact, oldEGEMM, oldKC := exactBelow, bfExactBelow, exactGEMMMode, convKCOverride
	defer func() {
		exactBelow, bfExactBelow, exactGEMMMode, convKCOverride = oldExact, oldBFExact, oldEGEMM, oldKC
	}()
	for _, ks := range sets {
		t.Run(ks.name, func(t *testing.T) {
			old := current.Load()
			current.Store(ks)
			defer current.Store(old)
			t.Logf("%s: %s", ks.name, BgemmPath())
			// q mode (one K block: tiles rounded straight into out; and
			// K blocks of 40 pairs), and exact mode with its choice of
			// driver, convPlan's and the GEMM's for all
			for _, mode := range []struct {
				below     float64
				egemm, kc int
			}{{0, 0, 0}, {0, 0, 40}, {2, 0, 0}, {2, 1, 0}, {2, 2, 0}} {
				for _, th := range []int{1, 3} {
					exactBelow, bfExactBelow, exactGEMMMode, convKCOverride = mode.below, mode.below, mode.egemm, mode.kc
					SetThreads(th)
					for i, tc := range bconvCases {
						// whole batches and one image a chunk
						if i%2 == 1 {
							pairChunkBytes, pairChunkMin = 1, 0
						}
						out := bconvRun(t, tc, uint64(i))
						pairChunkBytes, pairChunkMin = 2<<20, 8<<20
						key := fmt.Sprint(mode, th, i)
						if ks.name == "avx512-go" {
							twin[key] = out
							continue
						}
						if ks.b == nil || ks.b.shape != avx512B {
							continue
						}
						for j, v := range out {
							if v != twin[key][j] {
								t.Fatalf("%+v (exactBelow, exactGEMMMode, convKCOverride %v, %d threads): out[%d] = %#04x, the Go twin %#04x", tc, mode, th, j, v, twin[key][j])
							}
						}
					}
				}
			}
			SetThreads(0)
		})
	}
}

// TestConvGradInputBF16 checks ConvGradInputBF16 on every kernel set
// against the chain rule on the definition in float64, and the bfloat16
// kernels bit for bit against the Go twin.
func TestConvGradInputBF16(t *testing.T) {
	sets := testSets()
	for i, ks := range sets {
		if ks.name == "avx512-go" {
			sets[0], sets[i] = sets[i], sets[0]
		}
	}
	twin := map[int][]uint16{}
	for _, ks := range sets {
		t.Run(ks.name, func(t *testing.T) {
			old := current.Load()
			current.Store(ks)
			defer current.Store(old)
			for ci, tc := range bconvCases {
				r := rand.New(rand.NewPCG(uint64(ci), 5))
				cv := tc.conv()
				cg := cv.C / cv.G
				gout := randBF(r, cv.N*cv.O*cv.OH*cv.OW)
				w := randBF(r, cv.O*cg*cv.KH*cv.KW)
				gx := make([]uint16, cv.N*cv.C*cv.H*cv.W)
				for i := range gx {
					gx[i] = 0x7FC1
				}
				if ci%2 == 1 { // one image a chunk (convForwardPairs)
					pairChunkBytes, pairChunkMin = 1, 0
				}
				ConvGradInputBF16(cv, gout, w, gx)
				pairChunkBytes, pairChunkMin = 2<<20, 8<<20
				ref := make([]float64, len(gx))
				abs := make([]float64, len(gx))
				terms := make([]float64, len(gx))
				convTerms(cv, [4]int{}, func(oi, wi, _, xi int) {
					v := bfVal(gout[oi]) * bfVal(w[wi])
					ref[xi] += v
					abs[xi] += math.Abs(v)
					terms[xi]++
				})
				for i, v := range gx {
					e := 2 * (terms[i] + 1) * 0x1p-24 * abs[i]
					if d := math.Abs(bfVal(v) - ref[i]); !(d <= 0x1p-8*math.Abs(ref[i])+2*e) {
						t.Fatalf("%+v: gx[%d] = %v (%#04x), want %v", tc, i, bfVal(v), v, ref[i])
					}
				}
				if ks.name == "avx512-go" {
					twin[ci] = gx
					continue
				}
				if ks.b == nil || ks.b.shape != avx512B {
					continue
				}
				for i, v := range gx {
					if v != twin[ci][i] {
						t.Fatalf("%+v: gx[%d] = %#04x, the Go twin %#04x", tc, i, v, twin[ci][i])
					}
				}
			}
		})
	}
}

// packPairWeights gives the element-by-element packing's words on shapes
// with groups, odd channel counts, partial panels, bias and several K
// blocks.
func TestPackPairWeights(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, s := range []struct{ c, o, k, g, mr, kcb int }{
		{64, 64, 3, 1, 14, 100}, {5, 17, 3, 1, 14, 7}, {6, 9, 3, 3, 14, 5}, {3, 64, 7, 1, 14, 768},
		{33, 30, 1, 1, 8, 4}, {512, 40, 3, 1, 14, 1000}, {1, 32, 3, 1, 14, 3}, {8, 8, 1, 8, 6, 2},
	} {
		cv := Conv{N: 1, C: s.c, H: 4, W: 4, O: s.o, KH: s.k, KW: s.k, G: s.g, SH: 1, SW: 1, DH: 1, DW: 1}
		cg := s.c / s.g
		cgp := (cg + 1) / 2
		w := randBF(r, s.o*cg*s.k*s.k)
		for _, bias := range [][]uint16{nil, randBF(r, s.o)} {
			k := cgp * s.k * s.k
			if bias != nil {
				k++
			}
			// in Go, and with the AVX-512 routines where the kernel set has
			// them; whole panels and panels of fewer rows
			kb := current.Load().b
			for _, simd := range []bool{false, kb != nil && kb.simdPack} {
				for _, pr := range []int{s.mr, max(1, s.mr-2)} {
					mpad := (s.o/s.g + pr - 1) / pr * s.mr
					got, want := make([]uint32, s.g*mpad*k), make([]uint32, s.g*mpad*k)
					for i := range got {
						got[i], want[i] = 0xDEADBEEF, 0xDEADBEEF
					}
					packPairWeights(got, cv, cgp, w, bias, s.mr, pr, s.kcb, simd)
					packPairWeightsRef(want, cv, cgp, w, bias, s.mr, pr, s.kcb)
					for i := range got {
						if got[i] != want[i] {
							t.Fatalf("%+v bias %v simd %v pr %d: word %d = %#x, want %#x", s, bias != nil, simd, pr, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// packPairWeightsRef is the first packPairWeights, element by element: the
// reference for its panel-by-panel form. It packs each group's [og × k] pair matrix A (k = cgp·KH·KW
// pairs, and one more holding bias<<16 when bias != nil) into mr-row
// micro-panels, K block by K block, as packWeights lays them out.
func packPairWeightsRef(dst []uint32, cv Conv, cgp int, w, bias []uint16, mr, pr, kcb int) {
	cg, og := cv.C/cv.G, cv.O/cv.G
	kk := cv.KH * cv.KW
	kg := cgp * kk
	k := kg
	if bias != nil {
		k++
	}
	panels := (og + pr - 1) / pr
	mpad := panels * mr
	blocks := (k + kcb - 1) / kcb
	total := cv.G * blocks * panels
	runItems(total, workers(total, float64(mr*kcb)/2), func(_, it int) {
		pi := it % panels
		b := it / panels % blocks
		g := it / (panels * blocks)
		pc := b * kcb
		kc := min(kcb, k-pc)
		d := dst[g*mpad*k+pc*mpad+pi*mr*kc:][:mr*kc]
		for i := 0; i < mr; i++ {
			r := pi*pr + i
			if i >= pr || r >= og {
				for p := 0; p < kc; p++ {
					d[p*mr+i] = 0
				}
				continue
			}
			row := w[(g*og+r)*cg*kk:][:cg*kk]
			for p := 0; p < kc; p++ {
				pp := pc + p
				if pp == kg {
					d[p*mr+i] = uint32(bias[g*og+r]) << 16
					continue
				}
				c, t := 2*(pp/kk), pp%kk
				v := uint32(row[c*kk+t])
				if c+1 < cg {
					v |= uint32(row[(c+1)*kk+t]) << 16
				}
				d[p*mr+i] = v
			}
		}
	})
}

// TestConvGradWeightBF16 checks ConvGradWeightBF16 (the float32 sums,
// before rounding) on every kernel set with a bfloat16 kernel, on the
// GEMM it picks and forced onto every case, on 1 and 3 threads, against
// the definition in float64: within a float32 accumulation's error. On one
// thread the assembly must agree bit for bit with the pure-Go twin (with
// more, the per-goroutine sums depend on which items each took).
func TestConvGradWeightBF16(t *testing.T) {
	sets := testSets()
	for i, ks := range sets {
		if ks.name == "avx512-go" {
			sets[0], sets[i] = sets[i], sets[0]
		}
	}
	cases := append([]bconvCase{
		{n: 3, c: 32, h: 9, w: 9, o: 20, kh: 3, kw: 3, g: 1, s: 2, p: 1, d: 1, strided: true}, // odd position count
		{n: 2, c: 48, h: 9, w: 7, o: 33, kh: 3, kw: 3, g: 1, s: 1, p: 1, d: 1},
		{n: 41, c: 16, h: 7, w: 7, o: 14, kh: 3, kw: 3, g: 1, s: 1, p: 0, d: 1}, // two position blocks, the second odd
	}, bconvCases...)
	twin := map[int][]float32{}
	defer func(m int) { weightGradMode = m }(weightGradMode)
	defer SetThreads(0)
	for _, ks := range sets {
		if ks.b == nil {
			continue
		}
		t.Run(ks.name, func(t *testing.T) {
			old := current.Load()
			current.Store(ks)
			defer current.Store(old)
			for _, mode := range []int{0, 1} {
				weightGradMode = mode
				for _, th := range []int{1, 3} {
					SetThreads(th)
					for ci, tc := range cases {
						r := rand.New(rand.NewPCG(uint64(ci), 6))
						cv := tc.conv()
						cg := cv.C / cv.G
						x := randBF(r, cv.N*cv.C*cv.H*cv.W)
						xs := [4]int{cv.C * cv.H * cv.W, cv.H * cv.W, cv.W, 1}
						if tc.strided { // channels-last
							xs = [4]int{cv.C * cv.H * cv.W, 1, cv.W * cv.C, cv.C}
						}
						gout := randBF(r, cv.N*cv.O*cv.OH*cv.OW)
						gw := make([]float32, cv.O*cg*cv.KH*cv.KW)
						for i := range gw {
							gw[i] = float32(math.NaN())
						}
						if !ConvGradWeightBF16(cv, x, xs, gout, gw) {
							continue
						}
						ref := make([]float64, len(gw))
						abs := make([]float64, len(gw))
						terms := cv.N * cv.OH * cv.OW
						convTerms(cv, xs, func(oi, wi, xi, _ int) {
							v := bfVal(gout[oi]) * bfVal(x[xi])
							ref[wi] += v
							abs[wi] += math.Abs(v)
						})
						for i, v := range gw {
							e := 2 * float64(terms+1) * 0x1p-24 * abs[i]
							if d := math.Abs(float64(v) - ref[i]); !(d <= e) {
								t.Fatalf("mode %d, %d threads, %+v: gw[%d] = %v, want %v (±%g)", mode, th, tc, i, v, ref[i], e)
							}
						}
						if th != 1 {
							continue
						}
						key := mode*1000 + ci
						if ks.name == "avx512-go" {
							twin[key] = gw
							continue
						}
						if ks.b.shape != avx512B {
							continue
						}
						for i, v := range gw {
							if math.Float32bits(v) != math.Float32bits(twin[key][i]) {
								t.Fatalf("mode %d, %+v: gw[%d] = %v, the Go twin %v", mode, tc, i, v, twin[key][i])
							}
						}
					}
				}
			}
		})
	}
}

// TestPairRow checks pairRow (pairTapsAVX512 or packBInter where the CPU
// has AVX-512) against its Go twin, pairRowGo, for tap counts below, at
// and past one 32-lane pass, and rows of more than one permutation period.
func TestPairRow(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, kk := range []int{1, 2, 3, 4, 5, 8, 9, 16, 25, 32, 33, 49} {
		for _, np := range []int{1, 2, 3, 17, 40} {
			w := randBF(r, 2*np*kk+r.IntN(70)) // spare capacity: none to past a permutation's reach
			got := make([]uint32, np*kk+2)
			want := make([]uint32, np*kk+2)
			got[np*kk], got[np*kk+1] = 0xDEAD, 0xBEEF
			copy(want[np*kk:], got[np*kk:])
			pairRow(got[:np*kk], w, np, kk)
			pairRowGo(want[:np*kk], w, np, kk)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("kk %d, np %d: word %d = %#08x, want %#08x", kk, np, i, got[i], want[i])
				}
			}
		}
	}
}

// TestInterleaveRows checks interleaveRows (interleaveRowsAVX512 where the
// CPU has AVX-512) against its Go twin on rows of up to a few 32-word
// parts, with gaps between rows in both source and destination.
func TestInterleaveRows(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, w := range []int{1, 7, 16, 31, 32, 33, 56, 64, 100} {
		for _, rows := range []int{1, 2, 5} {
			ss, ds, ld := w+r.IntN(9), w+r.IntN(5), rows*(w+9)+r.IntN(7)
			a := r.IntN(5)
			x := randBF(r, a+(rows-1)*ss+ld+w+3)
			got := make([]uint32, rows*ds+2)
			want := make([]uint32, rows*ds+2)
			for i := range got {
				got[i], want[i] = 0xDEADBEEF, 0xDEADBEEF
			}
			interleaveRows(got, x, a, ld, rows, ss, ds, w)
			interleaveRowsGo(want, x, a, ld, rows, ss, ds, w)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("w %d, rows %d: word %d = %#08x, want %#08x", w, rows, i, got[i], want[i])
				}
			}
		}
	}
}

// TestRoundSegs checks roundSegs (roundSegsAVX512 where the CPU has
// AVX-512) against its Go twin: tiles of 1 to 14 rows, runs of columns
// stored before, at and after their own column (negative offsets), with
// and without earlier sums to add.
func TestRoundSegs(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	special := []uint32{0x7FC00000, 0xFFC00001, 0x7F800000, 0x7F7FFFFF, 0x3F808000, 0x3F818000, 0x00000001, 0x80000000}
	for trial := 0; trial < 300; trial++ {
		rows := 1 + r.IntN(14)
		tile := make([]float32, 32*rows)
		for i := range tile {
			b := r.Uint32()
			if r.IntN(4) == 0 {
				b = special[r.IntN(len(special))]
			}
			tile[i] = math.Float32frombits(b)
		}
		var segs []roundSeg
		ldd := 40 + r.IntN(30)
		for j := 0; j < 32; {
			cnt := min(32-j, 1+r.IntN(20))
			if r.IntN(4) > 0 {
				dpos := r.IntN(ldd - cnt + 1)
				segs = append(segs, roundSeg{int64(dpos - j), (1<<cnt - 1) << j})
			}
			j += cnt
		}
		if len(segs) == 0 {
			continue
		}
		base := r.IntN(5)
		got := make([]uint16, base+rows*ldd+3)
		want := make([]uint16, len(got))
		for i := range got {
			got[i], want[i] = 0x1234, 0x1234
		}
		var acc []float32
		if trial%2 == 1 {
			acc = make([]float32, len(got))
			for i := range acc {
				acc[i] = math.Float32frombits(r.Uint32() & 0xBFFFFFFF) // finite, most small
			}
		}
		roundSegs(got, base, ldd, tile, 32, rows, segs, acc)
		roundSegsGo(want, base, ldd, tile, 32, rows, segs, acc)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("trial %d (%d rows, segments %v): element %d = %#04x, want %#04x", trial, rows, segs, i, got[i], want[i])
			}
		}
	}
}

// TestPhaseRows2 checks phaseRows2 (phaseRows2AVX512 where the CPU has
// AVX-512) against its Go twin: both parities of the first element, one
// channel and two, rows ending at the end of x, odd strides (which the
// assembly leaves to Go).
func TestPhaseRows2(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for trial := 0; trial < 300; trial++ {
		w := 1 + r.IntN(40)
		rows := 1 + r.IntN(4)
		ss := 2*w + 2*r.IntN(4)
		if trial%7 == 0 {
			ss++
		}
		ld := -1
		if trial%3 > 0 {
			ld = rows*ss + 2*r.IntN(5)
			if trial%11 == 0 {
				ld++
			}
		}
		a := r.IntN(4)
		n := a + (rows-1)*ss + 2*(w-1) + 1 + max(ld, 0)
		if trial%2 == 0 {
			n += r.IntN(3) // sometimes no element past the last read
		}
		x := randBF(r, n)
		ds := w + r.IntN(3)
		got := make([]uint32, rows*ds+1)
		want := make([]uint32, rows*ds+1)
		for i := range got {
			got[i], want[i] = 0xDEADBEEF, 0xDEADBEEF
		}
		phaseRows2(got, x, a, ld, rows, ss, ds, w)
		phaseRows2Go(want, x, a, ld, rows, ss, ds, w)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("trial %d (w %d rows %d a %d ld %d ss %d): word %d = %#08x, want %#08x", trial, w, rows, a, ld, ss, i, got[i], want[i])
			}
		}
	}
}
