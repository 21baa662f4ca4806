package ember

import "testing"

// namedLikeCheckpoint is a user Function that happens to carry
// Checkpoint's grad_fn name: Grad through it is not refused (only
// Checkpoint's own node is reentrant). It doubles its input.
type namedLikeCheckpoint struct{}

func (namedLikeCheckpoint) Name() string { return checkpointNode }
func (namedLikeCheckpoint) Forward(_ *FunctionCtx, in []*Tensor) *Tensor {
	return in[0].MulScalar(2)
}
func (namedLikeCheckpoint) Backward(_ *FunctionCtx, g *Tensor) []*Tensor {
	return []*Tensor{g.MulScalar(2)}
}

func TestGradThroughFunctionNamedLikeCheckpoint(t *testing.T) {
	x := FromSlice([]float32{1, 2, 3}, Shape{3}).SetRequiresGrad(true)
	y := Apply(namedLikeCheckpoint{}, x).Sum()
	g := Grad([]*Tensor{y}, []*Tensor{x})[0]
	for _, v := range g.Float32s() {
		if v != 2 {
			t.Fatalf("grad = %v, want 2s", g.Float32s())
		}
	}
}
