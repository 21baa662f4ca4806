package nn

import (
	"math"
	"testing"

	"github.com/emberml/ember"
)

// TestDistanceModules: nn.CosineSimilarity() and nn.PairwiseDistance()
// with PyTorch's defaults (dim 1, eps 1e-8; p 2, eps 1e-6), worked by
// hand.
func TestDistanceModules(t *testing.T) {
	a := ember.FromSlice([]float64{1, 0, 1, 1}, ember.Shape{2, 2})
	b := ember.FromSlice([]float64{1, 0, 0, 1}, ember.Shape{2, 2})
	cs := NewCosineSimilarity()
	if cs.Dim != 1 || cs.Eps != 1e-8 {
		t.Fatalf("defaults %+v", cs)
	}
	got := cs.Forward(a, b).Float64s()
	if math.Abs(got[0]-1) > 1e-15 || math.Abs(got[1]-1/math.Sqrt2) > 1e-15 {
		t.Fatalf("cosine similarity %v, want [1 %v]", got, 1/math.Sqrt2)
	}
	pd := NewPairwiseDistance()
	if pd.P != 2 || pd.Eps != 1e-6 || pd.KeepDim {
		t.Fatalf("defaults %+v", pd)
	}
	x := ember.FromSlice([]float64{0, 0}, ember.Shape{1, 2})
	y := ember.FromSlice([]float64{3, 4}, ember.Shape{1, 2})
	d := pd.Forward(x, y)
	want := math.Hypot(3-1e-6, 4-1e-6) // |x - y + eps|
	if !d.Shape().Equal(ember.Shape{1}) || math.Abs(d.Float64s()[0]-want) > 1e-15 {
		t.Fatalf("pairwise distance %v %v, want [%v]", d.Shape(), d.Float64s(), want)
	}
	pd.KeepDim = true
	if s := pd.Forward(x, y).Shape(); !s.Equal(ember.Shape{1, 1}) {
		t.Fatalf("keepdim shape %v", s)
	}
}
