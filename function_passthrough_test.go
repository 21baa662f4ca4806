package ember

import "testing"

type doubleFn struct{}

func (doubleFn) Name() string                                 { return "DoubleBackward" }
func (doubleFn) Forward(_ *FunctionCtx, in []*Tensor) *Tensor { return in[0].MulScalar(2) }
func (doubleFn) Backward(_ *FunctionCtx, g *Tensor) []*Tensor { return []*Tensor{g.MulScalar(2)} }

// TestFunctionGradPassedOnUnchanged: a Function's returned gradient that
// built-in backwards pass on unchanged (two same-shape Expands) reaches
// the leaf alive; Backward released it ("tensor used after Release").
func TestFunctionGradPassedOnUnchanged(t *testing.T) {
	a := Full(Shape{3}, 0.5, WithGrad())
	Apply(doubleFn{}, a.Expand(3).Expand(3)).Sum().Backward()
	if err := Try(func() { a.Grad().Float32s() }); err != nil {
		t.Fatal(err)
	}
	if g := a.Grad().Float32s(); g[0] != 2 || g[2] != 2 {
		t.Fatalf("grad %v, want 2s", g)
	}
}
