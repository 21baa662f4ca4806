package ember

import "testing"

// doubler is a Function whose Backward returns a fresh tensor.
type doubler struct{}

func (doubler) Name() string { return "DoublerBackward" }
func (doubler) Forward(_ *FunctionCtx, in []*Tensor) *Tensor {
	return in[0].MulScalar(2)
}
func (doubler) Backward(_ *FunctionCtx, g *Tensor) []*Tensor { return []*Tensor{g.MulScalar(2)} }

// TestFunctionGradThroughIdentityBackward: the gradient a Function's
// Backward returns is not the engine's to free, also when the next node's
// backward hands it on unchanged (an Expand to the same shape) to a node
// that reads it after (Unsqueeze). It was released there: "squeeze:
// tensor used after Release".
func TestFunctionGradThroughIdentityBackward(t *testing.T) {
	x := FromSlice([]float64{1, 2, 3}, Shape{3}, WithGrad())
	y := Apply(doubler{}, x.Unsqueeze(-1).Expand(3, 1))
	y.Squeeze(-1).Sum().Backward()
	got := x.Grad().Float64s()
	for i, v := range got {
		if v != 2 {
			t.Fatalf("grad[%d] = %v, want 2", i, v)
		}
	}
}
