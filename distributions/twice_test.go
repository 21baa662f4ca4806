package distributions

import (
	"errors"
	"strings"
	"testing"

	"github.com/emberml/ember"
)

// The gamma sampler's reparameterised gradient is first-order only (as
// PyTorch's _standard_gamma_grad): differentiating it again panics with
// an *AutogradError instead of a silently wrong second derivative.
func TestGammaRsampleSecondDerivativePanics(t *testing.T) {
	alpha := ember.FromSlice([]float64{0.5, 2, 3}, ember.Shape{3}).SetRequiresGrad(true)
	x := ember.Apply(gammaFn{}, alpha).Sum()
	g := ember.Grad([]*ember.Tensor{x}, []*ember.Tensor{alpha}, ember.CreateGraph(true))[0]
	err := ember.Try(func() { ember.Grad([]*ember.Tensor{g.Square().Sum()}, []*ember.Tensor{alpha}) })
	var ae *ember.AutogradError
	if !errors.As(err, &ae) || !strings.Contains(ae.Msg, "not implemented") {
		t.Errorf("second derivative of the gamma sample: got %v, want an *AutogradError", err)
	}
}
