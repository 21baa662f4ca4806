package optim

import (
	"math"
	"slices"
	"testing"

	"github.com/emberml/ember"
)

// TestGradScalerTwoOptimizers: one scaler for two optimizers, as
// torch.cuda.amp.GradScaler allows: the optimizer whose gradient is
// infinite skips its step, the other steps, and Update backs off once.
// Worked by hand: scale 8, SGD lr 0.5, loss (a·ga + b·gb)·scale.
func TestGradScalerTwoOptimizers(t *testing.T) {
	a := ember.FromSlice([]float32{1}, nil).SetRequiresGrad(true)
	b := ember.FromSlice([]float32{1}, nil).SetRequiresGrad(true)
	oa := NewSGD([]Param{{Name: "a", Tensor: a}}, nil, 0.5, 0, 0, 0, false)
	ob := NewSGD([]Param{{Name: "b", Tensor: b}}, nil, 0.5, 0, 0, 0, false)
	s := NewGradScaler().WithInitScale(8)
	step := func(ga, gb float64) (bool, bool) {
		oa.ZeroGrad()
		ob.ZeroGrad()
		s.ScaleLoss(a.MulScalar(ga).Add(b.MulScalar(gb)).Sum()).Backward()
		s.Unscale(oa) // explicit, as before clipping; ob is unscaled by Step
		ra, rb := s.Step(oa), s.Step(ob)
		s.Update()
		return ra, rb
	}
	if ra, rb := step(2, 4); !ra || !rb || s.Scale() != 8 {
		t.Fatalf("finite step: ran %v %v, scale %v", ra, rb, s.Scale())
	}
	// a: 1 − 0.5·2 = 0, b: 1 − 0.5·4 = −1
	if got := []float32{float32(a.Item()), float32(b.Item())}; !slices.Equal(got, []float32{0, -1}) {
		t.Fatalf("after the finite step: %v", got)
	}
	if ra, rb := step(1, math.Inf(1)); !ra || rb || s.Scale() != 4 {
		t.Fatalf("b infinite: ran %v %v, scale %v; want a only, scale 4", ra, rb, s.Scale())
	}
	if got := []float32{float32(a.Item()), float32(b.Item())}; !slices.Equal(got, []float32{-0.5, -1}) {
		t.Errorf("after b's skipped step: %v", got)
	}
}
