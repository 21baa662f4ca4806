package nn

import (
	"math"
	"testing"

	"github.com/emberml/ember"
)

// LogSigmoid is an ember.Function whose Backward reads only the saved
// input: its second derivative, −σ(x)·σ(−x) (hand-worked), comes out
// through create-graph mode.
func TestLogSigmoidSecondDerivative(t *testing.T) {
	xs := []float64{-3, -0.5, 0, 1.25, 4}
	x := ember.FromSlice(xs, ember.Shape{5}).SetRequiresGrad(true)
	g := ember.Grad([]*ember.Tensor{LogSigmoid(x).Sum()}, []*ember.Tensor{x}, ember.CreateGraph(true))[0]
	h := ember.Grad([]*ember.Tensor{g.Sum()}, []*ember.Tensor{x})[0].Float64s()
	for i, v := range xs {
		s := 1 / (1 + math.Exp(-v))
		if want := -s * (1 - s); math.Abs(h[i]-want) > 1e-12 {
			t.Errorf("d²/dx² logsigmoid(%g) = %.15g, want %.15g", v, h[i], want)
		}
	}
}
