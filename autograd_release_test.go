package ember

import (
	"math"
	"testing"
)

// The backward pass frees the gradients it made as soon as nothing it holds
// uses them (see gradOwner): after Backward only the leaves' Grads remain
// allocated, not the intermediate gradients, although nothing was
// collected.
func TestBackwardReleasesIntermediateGrads(t *testing.T) {
	const n = 1 << 16 // 256 KiB a tensor: above the CPU cache's minimum
	x := Rand(Shape{n}, WithGrad())
	h := x
	for range 6 {
		h = h.MulScalar(1.5).AddScalar(0.25).Sin()
	}
	loss := h.Sum()
	before := MemoryAllocated(CPU)
	loss.Backward()
	grew := MemoryAllocated(CPU) - before
	// x.Grad (256 KiB) and nothing else (but scalars): the 18 intermediate
	// gradients and the six cosines Sin's backward makes would add 6 MiB.
	if grew > n*4+1024 {
		t.Fatalf("backward left %d bytes allocated, want about %d (x.Grad)", grew, n*4)
	}
	// The values: d/dx of the chain, worked with float64 from x.
	xs, gs := x.Float32s(), x.Grad().Float32s()
	for i := 0; i < n; i += 4099 {
		v, d := float64(xs[i]), 1.0
		for range 6 {
			u := v*1.5 + 0.25
			d *= 1.5 * math.Cos(u)
			v = math.Sin(u)
		}
		if diff := float64(gs[i]) - d; diff > 1e-4 || diff < -1e-4 {
			t.Fatalf("grad[%d] = %v, want %v", i, gs[i], d)
		}
	}
}

// A gradient handed to a leaf without a copy must not be shared: Add's
// backward gives both inputs the incoming gradient itself.
func TestBackwardLeafGradsDoNotAlias(t *testing.T) {
	a := Ones(Shape{3, 4}, WithGrad())
	b := Ones(Shape{3, 4}, WithGrad())
	a.Add(b).MulScalar(2).Sum().Backward()
	a.Grad().AddInPlace(Ones(Shape{3, 4}))
	for i, v := range b.Grad().Float32s() {
		if v != 2 {
			t.Fatalf("b.Grad()[%d] = %v after changing a.Grad() in place, want 2", i, v)
		}
	}
	for i, v := range a.Grad().Float32s() {
		if v != 3 {
			t.Fatalf("a.Grad()[%d] = %v, want 3", i, v)
		}
	}
}

// stashGrad is a Function whose Backward keeps the gradient it is given
// (as a user's logging Function might): the engine must not free it.
type stashGrad struct{ got *Tensor }

func (*stashGrad) Name() string { return "StashBackward" }
func (*stashGrad) Forward(ctx *FunctionCtx, in []*Tensor) *Tensor {
	return in[0].MulScalar(1)
}
func (s *stashGrad) Backward(ctx *FunctionCtx, g *Tensor) []*Tensor {
	s.got = g
	return []*Tensor{g.MulScalar(1)}
}

func TestBackwardKeepsGradsUserCodeHolds(t *testing.T) {
	x := Rand(Shape{1 << 15}, WithGrad())
	fn := &stashGrad{}
	// the stashed gradient is a fresh result of MulScalar's backward
	Apply(fn, x.MulScalar(3)).MulScalar(2).Sum().Backward()
	for i, v := range fn.got.Float32s() {
		if v != 2 {
			t.Fatalf("stashed grad[%d] = %v, want 2", i, v)
		}
	}
	for i, v := range x.Grad().Float32s() {
		if v != 6 {
			t.Fatalf("x.Grad()[%d] = %v, want 6", i, v)
		}
	}
}
