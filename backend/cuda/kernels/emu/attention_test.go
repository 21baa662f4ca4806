package emu

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/kernels"
)

func randHost(rng *rand.Rand, dt backend.DType, n int) any {
	if dt == backend.Float32 {
		d := make([]float32, n)
		for i := range d {
			d[i] = float32(rng.NormFloat64())
		}
		return d
	}
	d := make([]float64, n)
	for i := range d {
		d[i] = rng.NormFloat64()
	}
	return d
}

func zerosHost(dt backend.DType, n int) any {
	if dt == backend.Float32 {
		return make([]float32, n)
	}
	return make([]float64, n)
}

// TestAttention runs the fused attention kernels (forward, then backward
// from the forward's lse) and compares them with backend/cpu's: head dims
// in each instantiated bound, L ≠ S, sizes across tiles and not multiples
// of them, causal, bool and additive masks broadcast over batch dims, a
// transposed q and a fully masked row (NaN on both).
func TestAttention(t *testing.T) {
	l := lib(t)
	rng := rand.New(rand.NewSource(13))
	type tc struct {
		b, L, S, e, ev int
		mask           backend.AttentionMask
		causal, transQ bool
	}
	cases := []tc{
		{2, 5, 7, 4, 3, backend.NoMask, false, false},
		{2, 70, 70, 5, 3, backend.NoMask, true, false},
		{1, 9, 6, 3, 5, backend.NoMask, true, true},
		{2, 67, 130, 8, 4, backend.BoolMask, false, false},
		{3, 6, 66, 4, 2, backend.AddMask, false, true},
		{1, 20, 40, 100, 70, backend.NoMask, true, false},
		{1, 3, 18, 200, 9, backend.BoolMask, false, false},
	}
	for _, dt := range []backend.DType{backend.Float32, backend.Float64} {
		for ci, c := range cases {
			name := fmt.Sprintf("attention %v case %d %+v", dt, ci, c)
			qb := newBuf(t, l, randHost(rng, dt, c.b*c.L*c.e))
			qst := []int{c.L * c.e, c.e, 1}
			if c.transQ { // stored [B, E, L]
				qst = []int{c.L * c.e, 1, c.L}
			}
			qv, qo := qb.view([]int{c.b, c.L, c.e}, qst, 0)
			kb := newBuf(t, l, randHost(rng, dt, c.b*c.S*c.e))
			kv, ko := kb.view([]int{c.b, c.S, c.e}, []int{c.S * c.e, c.e, 1}, 0)
			vb := newBuf(t, l, randHost(rng, dt, c.b*c.S*c.ev))
			vv, vo := vb.view([]int{c.b, c.S, c.ev}, []int{c.S * c.ev, c.ev, 1}, 0)
			var mv backend.View
			var mo kernels.Operand
			switch c.mask {
			case backend.BoolMask: // [L, S] broadcast over the batch, row 1 fully masked
				m := make([]bool, c.L*c.S)
				for i := range m {
					m[i] = rng.Float64() < 0.7 && i/c.S != 1
				}
				mv, mo = newBuf(t, l, m).view([]int{1, c.b, c.L, c.S}, []int{0, 0, c.S, 1}, 0)
			case backend.AddMask: // [B, 1, S] broadcast over rows, some −∞
				h := randHost(rng, dt, c.b*c.S)
				if f, ok := h.([]float64); ok {
					f[3] = math.Inf(-1)
				} else {
					h.([]float32)[3] = float32(math.Inf(-1))
				}
				mv, mo = newBuf(t, l, h).view([]int{1, c.b, c.L, c.S}, []int{0, c.S, 0, 1}, 0)
			}
			p := backend.AttentionParams{Scale: 1 / math.Sqrt(float64(c.e)), Mask: c.mask, Causal: c.causal}
			ob := newBuf(t, l, zerosHost(dt, c.b*c.L*c.ev))
			ov, oo := ob.view([]int{c.b, c.L, c.ev}, []int{c.L * c.ev, c.ev, 1}, 0)
			lb := newBuf(t, l, zerosHost(dt, c.b*c.L))
			lv, lo := lb.view([]int{c.b, c.L}, []int{c.L, 1}, 0)
			cpuB.AttentionForward(ov, lv, qv, kv, vv, mv, p)
			launch(t, l, kernels.AttentionForward(props, oo, lo, qo, ko, vo, mo, p))
			tl := tol{2e-5, 2e-6}
			if dt == backend.Float64 {
				tl = tol{1e-12, 1e-13}
			}
			same(t, name+" out", ob.devData(), ob.cpuData(), tl)
			same(t, name+" lse", lb.devData(), lb.cpuData(), tl)
			// backward from the CPU's forward (the same out and lse on both)
			lb.l.CopyIn(lb.dev, encode(lb.cpuData()))
			ob.l.CopyIn(ob.dev, encode(ob.cpuData()))
			gb := newBuf(t, l, randHost(rng, dt, c.b*c.L*c.ev))
			gv, gvo := gb.view([]int{c.b, c.L, c.ev}, []int{c.L * c.ev, c.ev, 1}, 0)
			gqb := newBuf(t, l, zerosHost(dt, c.b*c.L*c.e))
			gkb := newBuf(t, l, zerosHost(dt, c.b*c.S*c.e))
			gvb := newBuf(t, l, zerosHost(dt, c.b*c.S*c.ev))
			ddb := newBuf(t, l, zerosHost(dt, c.b*c.L))
			gqv, gqo := gqb.view([]int{c.b, c.L, c.e}, []int{c.L * c.e, c.e, 1}, 0)
			gkv, gko := gkb.view([]int{c.b, c.S, c.e}, []int{c.S * c.e, c.e, 1}, 0)
			gvv, gvvo := gvb.view([]int{c.b, c.S, c.ev}, []int{c.S * c.ev, c.ev, 1}, 0)
			_, ddo := ddb.view([]int{c.b * c.L}, []int{1}, 0)
			cpuB.AttentionBackward(gqv, gkv, gvv, gv, qv, kv, vv, mv, ov, lv, p)
			launch(t, l, kernels.AttentionBackward(props, gqo, gko, gvvo, gvo, qo, ko, vo, mo, oo, lo, ddo, p))
			btl := tol{1e-4, 1e-5}
			if dt == backend.Float64 {
				btl = tol{1e-11, 1e-12}
			}
			same(t, name+" gq", gqb.devData(), gqb.cpuData(), btl)
			same(t, name+" gk", gkb.devData(), gkb.cpuData(), btl)
			same(t, name+" gv", gvb.devData(), gvb.cpuData(), btl)
		}
	}
}
