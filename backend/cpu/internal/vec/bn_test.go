package vec

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
)

func randBF16(r *rand.Rand, n int, scale float64) []backend.BF16 {
	x := make([]backend.BF16, n+1) // +1: start one element in, unaligned
	for i := range x {
		x[i] = backend.ToBF16(float32(r.NormFloat64()*scale + 1))
	}
	return x[1:]
}

// TestBatchNormBF16Loops checks SumBF16Lanes, SqDevBF16Lanes,
// GradSumsBF16Lanes and Affine2BF16:
// the assembly and its Go twin give the same bits at every length around
// the lanes and blocks, and the sums are within float32 accumulation
// error of float64 sums, the affine map a correctly rounded bfloat16 of
// the float32 steps.
func TestBatchNormBF16Loops(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for _, n := range sizes {
		x, g := randBF16(r, n, 3), randBF16(r, n, 0.01)
		m := float32(r.NormFloat64())
		var sq, sg, sgx, mag, magx float64
		for i := range x {
			d := float64(x[i].Float32()) - float64(m)
			sq += d * d
			sg += float64(g[i].Float32())
			sgx += float64(g[i].Float32()) * d
			mag += math.Abs(float64(g[i].Float32()))
			magx += math.Abs(float64(g[i].Float32()) * d)
		}
		a, b, c := float32(r.NormFloat64()), float32(r.NormFloat64()*100), float32(r.NormFloat64())
		type res struct {
			sq, sg, sgx, sum float64
			d                []backend.BF16
		}
		run := func() res {
			d := make([]backend.BF16, n+1)
			Affine2BF16(d[:n], g, x, a, b, c)
			if d[n] != 0 {
				t.Fatalf("n=%d: Affine2BF16 wrote past n", n)
			}
			// two calls into the same lanes: the halves
			var l, q, sl Lanes
			h := n / 2
			GradSumsBF16Lanes(&l, g[:h], x[:h], m)
			GradSumsBF16Lanes(&l, g[h:], x[h:], m)
			SqDevBF16Lanes(&q, x[:h], m)
			SqDevBF16Lanes(&q, x[h:], m)
			SumBF16Lanes(&sl, x)
			if n > 0 && math.Abs(sl.Sum(0, 32)-SumBF16(x)) > 1e-6*math.Abs(SumBF16(x))+1e-9 {
				t.Fatalf("n=%d: SumBF16Lanes %v, SumBF16 %v", n, sl.Sum(0, 32), SumBF16(x))
			}
			return res{q.Sum(0, 32), l.Sum(0, 16), l.Sum(16, 32), sl.Sum(0, 32), d[:n]}
		}
		as := run()
		var gs res
		withGo(func() { gs = run() })
		if as.sq != gs.sq || as.sg != gs.sg || as.sgx != gs.sgx || as.sum != gs.sum {
			t.Fatalf("n=%d: assembly sums %v %v %v, Go %v %v %v", n, as.sq, as.sg, as.sgx, gs.sq, gs.sg, gs.sgx)
		}
		for i := range as.d {
			if as.d[i] != gs.d[i] {
				t.Fatalf("n=%d: Affine2BF16[%d] = %#x, Go %#x", n, i, as.d[i], gs.d[i])
			}
		}
		if math.Abs(as.sq-sq) > 1e-6*sq || math.Abs(as.sg-sg) > 1e-6*mag || math.Abs(as.sgx-sgx) > 1e-6*magx {
			t.Fatalf("n=%d: sums %v %v %v, float64 %v %v %v", n, as.sq, as.sg, as.sgx, sq, sg, sgx)
		}
		for i := range as.d {
			v := float32(float32(g[i].Float32()*a)+float32(x[i].Float32()*b)) + c
			if want := backend.ToBF16(v); as.d[i] != want && !(math.IsNaN(float64(v)) && as.d[i] == 0xFFFF) {
				t.Fatalf("n=%d: Affine2BF16[%d] = %#x, want %#x", n, i, as.d[i], want)
			}
		}
	}
	// NaNs and infinities: NaN bits 0xFFFF, an infinity stays one
	g := make([]backend.BF16, 40)
	x := make([]backend.BF16, 40)
	g[3], x[20] = 0x7FC1, backend.ToBF16(float32(math.Inf(-1)))
	d := make([]backend.BF16, 40)
	Affine2BF16(d, g, x, 1, 1, 0)
	if d[3] != 0xFFFF || d[20] != 0xFF80 || d[0] != 0 {
		t.Fatalf("Affine2BF16 NaN/Inf: %#x %#x %#x", d[3], d[20], d[0])
	}
}

// TestFMA32 checks fma32, AffineBF16's Go twin, against exact rounding:
// random operands and sums that land halfway between two float32 once
// rounded to float64 (x·a + b = 2²⁴ + 1 + 2⁻³⁰, whose float64 is the
// float32 midpoint 2²⁴ + 1).
func TestFMA32(t *testing.T) {
	exact := func(x, a, b float32) float32 {
		p := new(big.Float).SetPrec(200).SetFloat64(float64(x))
		p.Mul(p, new(big.Float).SetFloat64(float64(a)))
		p.Add(p, new(big.Float).SetFloat64(float64(b)))
		f, _ := p.Float32()
		return f
	}
	r := rand.New(rand.NewPCG(1, 2))
	cases := [][3]float32{
		{205, 5237765 * 0x1p-30, 0x1p24},
		{205, -5237765 * 0x1p-30, 0x1p24},
		{-205, 5237765 * 0x1p-30, -0x1p24},
		{205, 5237765 * 0x1p-30, 0x1p24 + 2},
		{1, 1, 0}, {0, 5, -0}, {3, 0x1p127, 0x1p127},
	}
	for range 100000 {
		x := backend.ToBF16(float32(r.NormFloat64() * math.Exp2(float64(r.IntN(40)-20)))).Float32()
		a := float32(r.NormFloat64() * math.Exp2(float64(r.IntN(40)-20)))
		b := float32(r.NormFloat64() * math.Exp2(float64(r.IntN(40)-20)))
		cases = append(cases, [3]float32{x, a, b})
	}
	for _, c := range cases {
		got, want := fma32(c[0], c[1], c[2]), exact(c[0], c[1], c[2])
		if got != want && !(got == 0 && want == 0) {
			t.Fatalf("fma32(%g, %g, %g) = %g, want %g", c[0], c[1], c[2], got, want)
		}
	}
	if got := fma32(205, 5237765*0x1p-30, 0x1p24); got != 0x1p24+2 {
		t.Fatalf("fma32 double-rounds: %g", got)
	}
}

// TestAffineBF16 checks AffineBF16: the assembly and its Go twin give
// the same bits, those of fma32 rounded to bfloat16.
func TestAffineBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range sizes {
		x := randBF16(r, n, 5)
		if n > 3 {
			x[1], x[2], x[3] = 0x7FC1, 0xFF80, 0x8000
		}
		a, b := float32(r.NormFloat64()), float32(r.NormFloat64())
		d, e := make([]backend.BF16, n+1), make([]backend.BF16, n)
		AffineBF16(d[:n], x, a, b)
		withGo(func() { AffineBF16(e, x, a, b) })
		if d[n] != 0 {
			t.Fatalf("n=%d: AffineBF16 wrote past n", n)
		}
		for i := range e {
			want := toBF16(fma32(x[i].Float32(), a, b))
			if d[i] != e[i] || e[i] != want {
				t.Fatalf("n=%d: AffineBF16[%d] of %#x = %#x, Go %#x, want %#x", n, i, x[i], d[i], e[i], want)
			}
		}
	}
}

// TestBatchNormLoops checks SumLanes, SqDevLanes, GradSumsLanes and
// Affine2 on float32: the assembly and its Go twin give the same bits at
// every length around the lanes and blocks, the sums are within float32
// accumulation error of float64 sums, and the affine map is its float32
// steps exactly.
func TestBatchNormLoops(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 11))
	for _, n := range sizes {
		x, g := randSlice[float32](r, n), randSlice[float32](r, n)
		for i := range g {
			g[i] *= 0.001
		}
		m := float32(r.NormFloat64())
		var sum, sq, sg, sgx, magx, mags, mag float64
		for i := range x {
			d := float64(x[i]) - float64(m)
			sum += float64(x[i])
			mags += math.Abs(float64(x[i]))
			sq += d * d
			sg += float64(g[i])
			mag += math.Abs(float64(g[i]))
			sgx += float64(g[i]) * d
			magx += math.Abs(float64(g[i]) * d)
		}
		a, b, c := float32(r.NormFloat64()), float32(r.NormFloat64()*100), float32(r.NormFloat64())
		type res struct {
			sum, sq, sg, sgx float64
			d                []float32
		}
		run := func() res {
			d := make([]float32, n+1)
			Affine2(d[:n], g, x, a, b, c)
			if d[n] != 0 {
				t.Fatalf("n=%d: Affine2 wrote past n", n)
			}
			var l, q, s Lanes
			h := n / 2 // two calls into the same lanes
			GradSumsLanes(&l, g[:h], x[:h], m)
			GradSumsLanes(&l, g[h:], x[h:], m)
			SqDevLanes(&q, x[:h], m)
			SqDevLanes(&q, x[h:], m)
			SumLanes(&s, x)
			return res{s.Sum(0, 32), q.Sum(0, 32), l.Sum(0, 16), l.Sum(16, 32), d[:n]}
		}
		as := run()
		var gs res
		withGo(func() { gs = run() })
		if as.sum != gs.sum || as.sq != gs.sq || as.sg != gs.sg || as.sgx != gs.sgx {
			t.Fatalf("n=%d: assembly sums %v %v %v %v, Go %v %v %v %v", n, as.sum, as.sq, as.sg, as.sgx, gs.sum, gs.sq, gs.sg, gs.sgx)
		}
		if math.Abs(as.sum-sum) > 1e-6*mags || math.Abs(as.sq-sq) > 1e-6*sq || math.Abs(as.sg-sg) > 1e-6*mag || math.Abs(as.sgx-sgx) > 1e-6*magx {
			t.Fatalf("n=%d: sums %v %v %v %v, float64 %v %v %v %v", n, as.sum, as.sq, as.sg, as.sgx, sum, sq, sg, sgx)
		}
		for i := range as.d {
			want := float32(float32(g[i]*a)+float32(x[i]*b)) + c
			if as.d[i] != want || gs.d[i] != want {
				t.Fatalf("n=%d: Affine2[%d] = %v (Go %v), want %v", n, i, as.d[i], gs.d[i], want)
			}
		}
	}
}

// TestShortLanes checks the one-partial-block shortcut of the *Lanes Go
// loops (fewer elements than lanes, as in a batch norm over 2×2 planes)
// against the block loop it stands for, written out here: 32 float32 lanes
// (16 and 16 for the gradient sums) from zero, each added into its
// float64 partial sum.
func TestShortLanes(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 13))
	for n := 0; n < 32; n++ {
		x, g := randSlice[float32](r, n), randSlice[float32](r, n)
		xb, gb := make([]backend.BF16, n), make([]backend.BF16, n)
		for i := range x {
			xb[i], gb[i] = backend.ToBF16(x[i]), backend.ToBF16(g[i])
		}
		m := float32(r.NormFloat64())
		var start Lanes
		for i := range start {
			start[i] = r.NormFloat64()
		}
		// want: the block loop on widened values
		block := func(x, g []float32) (s, q, gs Lanes) {
			s, q, gs = start, start, start
			var ls, lq [32]float32
			for i, v := range x {
				ls[i%32] += v
				d := v - m
				lq[i%32] += float32(d * d)
			}
			var l0, l1 [16]float32
			for i := range g[:min(len(g), 15)] {
				l0[i%16] += g[i]
				l1[i%16] += float32(g[i] * (x[i] - m))
			}
			for j := range ls {
				s[j] += float64(ls[j])
				q[j] += float64(lq[j])
			}
			for j := range l0 {
				gs[j] += float64(l0[j])
				gs[16+j] += float64(l1[j])
			}
			return
		}
		ws, wq, wg := block(x, g)
		s, q, gs := start, start, start
		sumLanesGo(x, &s)
		sqDevGo(x, m, &q)
		gradSumsGo(g[:min(n, 15)], x[:min(n, 15)], m, &gs)
		if s != ws || q != wq || gs != wg {
			t.Fatalf("n=%d: float32 short lanes differ from the block loop", n)
		}
		xw, gw := make([]float32, n), make([]float32, n)
		for i := range x {
			xw[i], gw[i] = bf(xb[i]), bf(gb[i])
		}
		ws, wq, wg = block(xw, gw)
		s, q, gs = start, start, start
		sumBF16Go(xb, &s)
		sqDevBF16Go(xb, m, &q)
		gradSumsBF16Go(gb[:min(n, 15)], xb[:min(n, 15)], m, &gs)
		if s != ws || q != wq || gs != wg {
			t.Fatalf("n=%d: bfloat16 short lanes differ from the block loop", n)
		}
	}
}
