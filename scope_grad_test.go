package ember

import (
	"slices"
	"testing"
)

// TestScopeKeepsLeafGradients: gradients accumulated into a leaf made
// outside over several scoped micro-batches survive each Scope (as
// PyTorch's .grad across iterations); they were released with the first.
func TestScopeKeepsLeafGradients(t *testing.T) {
	w := FromSlice([]float32{1, 2, 3}, Shape{3}, WithGrad())
	for i := range 3 {
		Scope(func() { w.MulScalar(float64(i + 1)).Sum().Backward() })
	}
	if got := w.Grad().Float32s(); !slices.Equal(got, []float32{6, 6, 6}) {
		t.Errorf("grad after three scoped backwards = %v, want 6s", got)
	}
}
