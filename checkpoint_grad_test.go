package ember

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestCheckpointUnderGrad: Grad through a Checkpoint is refused with
// PyTorch 1.13's error (torch.autograd.grad through the reentrant
// checkpoint raises "Checkpointing is not compatible with .grad() ...")
// and accumulates nothing into the parameters fn reads; a Grad whose
// inputs are not reached through the checkpoint still works. Under
// BackwardCreateGraph the first-order gradients are those of plain
// Backward (w(1 − tanh²(xw)) and x(1 − tanh²(xw)), as PyTorch), and
// differentiating the checkpoint's input gradient again panics (PyTorch
// gives a gradient without a graph there, silently).
func TestCheckpointUnderGrad(t *testing.T) {
	xs, ws := []float64{0.5, 3}, []float64{1.5, -2}
	for _, dev := range testDevices() {
		w := FromSlice(ws, Shape{2}, On(dev)).SetRequiresGrad(true)
		x := FromSlice(xs, Shape{2}, On(dev)).SetRequiresGrad(true)
		f := func(in ...*Tensor) *Tensor { return in[0].Mul(w).Tanh() }
		y := Checkpoint(f, x).Sum()
		var ae *AutogradError
		err := Try(func() { Grad([]*Tensor{y}, []*Tensor{x}) })
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), "Checkpointing is not compatible with .grad()") {
			t.Fatalf("%v: Grad through Checkpoint: %v", dev, err)
		}
		if w.Grad() != nil || x.Grad() != nil {
			t.Fatalf("%v: Grad through Checkpoint accumulated into Grad", dev)
		}
		// an input not reached through the checkpoint: the checkpoint does not run
		z := FromSlice([]float64{1, 2}, Shape{2}, On(dev)).SetRequiresGrad(true)
		y = Checkpoint(f, x).Sum().Add(z.Mul(z).Sum())
		gz := Grad([]*Tensor{y}, []*Tensor{z})[0].Float64s()
		if gz[0] != 2 || gz[1] != 4 || w.Grad() != nil {
			t.Fatalf("%v: Grad beside a Checkpoint: %v, w.Grad %v", dev, gz, w.Grad())
		}

		Checkpoint(f, x).Sum().BackwardCreateGraph(nil)
		gx, gw := x.Grad().Float64s(), w.Grad().Float64s()
		for i := range xs {
			s := 1 - math.Pow(math.Tanh(xs[i]*ws[i]), 2)
			if math.Abs(gx[i]-ws[i]*s) > 1e-6 || math.Abs(gw[i]-xs[i]*s) > 1e-6 {
				t.Fatalf("%v: create_graph through Checkpoint: x.grad %v w.grad %v", dev, gx, gw)
			}
		}
		if err := Try(func() { x.Grad().Sum().Backward() }); !errors.As(err, &ae) {
			t.Fatalf("%v: double backward through Checkpoint: %v", dev, err)
		}
	}
}
