package linalg

import (
	"testing"

	"github.com/emberml/ember"
)

// linalg's backwards compute over detached saved tensors (its Function is
// OnceDifferentiable): a second derivative must panic with an
// *AutogradError, never come out silently wrong (a Function's Backward
// otherwise runs in create-graph mode as if it were differentiable).
func TestSecondDerivativePanics(t *testing.T) {
	spd := []float64{4, 1, 0.5, 1, 3, 0.2, 0.5, 0.2, 2}
	for name, f := range map[string]func(a *ember.Tensor) *ember.Tensor{
		"inv":      func(a *ember.Tensor) *ember.Tensor { return Inv(a).Sum() },
		"det":      func(a *ember.Tensor) *ember.Tensor { return Det(a) },
		"cholesky": func(a *ember.Tensor) *ember.Tensor { return Cholesky(a, false).Sum() },
		"solve":    func(a *ember.Tensor) *ember.Tensor { return Solve(a, ember.OnesLike(a)).Sum() },
		"eigvalsh": func(a *ember.Tensor) *ember.Tensor { return Eigvalsh(a, "L").Square().Sum() },
		"svdvals":  func(a *ember.Tensor) *ember.Tensor { return Svdvals(a).Square().Sum() },
	} {
		a := ember.FromSlice(spd, ember.Shape{3, 3}).SetRequiresGrad(true)
		g := ember.Grad([]*ember.Tensor{f(a)}, []*ember.Tensor{a}, ember.CreateGraph(true))[0]
		msg := "not implemented"
		if name == "inv" { // the node README.md names
			msg = "the derivative for 'LinalgInvExBackward0' is not implemented"
		}
		expectPanic[*ember.AutogradError](t, name+" double backward", msg, func() {
			ember.Grad([]*ember.Tensor{g.Square().Sum()}, []*ember.Tensor{a})
		})
	}
}
