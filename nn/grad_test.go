package nn

import (
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/weights"
)

// smallCNN mirrors small_cnn in testdata/gen_nn_fixtures.py.
func smallCNN() *Sequential {
	return NewSequential(
		NewConv2d(2, 4, 3, Padding(1)), NewBatchNorm2d(4), NewReLU(), NewMaxPool2d(2, 0, 0),
		NewConv2d(4, 6, 3, Padding(1), Groups(2)), NewAvgPool2d(3, 1, 1), NewAdaptiveAvgPool2d(2, 2),
		NewFlatten(), NewLayerNorm(24), NewLinear(24, 8, true), NewGELU(), NewLinear(8, 5, true))
}

func loadCNNGrad(t *testing.T) (*Sequential, map[string]*ember.Tensor) {
	t.Helper()
	f, err := weights.LoadSafetensors("../testdata/nn/cnn_grad.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	m := smallCNN()
	sd := map[string]*ember.Tensor{}
	for k, v := range f {
		if name, ok := strings.CutPrefix(k, "init."); ok {
			sd[name] = v
		}
	}
	if err := m.LoadStateDict(sd, true); err != nil {
		t.Fatal(err)
	}
	return m, f
}

// TestBackwardMatchesTorch runs one forward and backward through a small
// CNN and compares the loss, every parameter gradient and the updated BN
// running statistics with PyTorch's.
func TestBackwardMatchesTorch(t *testing.T) {
	m, f := loadCNNGrad(t)
	params := m.Parameters()
	loss := CrossEntropyLoss{}.Loss(m.Forward(f["x"]), f["target"])
	close(t, "loss", loss, f["loss0"], 1e-5)
	loss.Backward()
	for _, p := range m.NamedParameters() {
		if p.Tensor.Grad() == nil {
			t.Errorf("%s: no gradient", p.Name)
			continue
		}
		close(t, "grad "+p.Name, p.Tensor.Grad(), f["grad."+p.Name], 1e-4)
	}
	for i, p := range m.Parameters() {
		if p != params[i] {
			t.Errorf("parameter %d replaced by the forward pass", i)
		}
	}
	// LoadStateDict writes in place: the parameters keep their identity.
	sd := map[string]*ember.Tensor{}
	for k, v := range m.StateDict() {
		sd[k] = v.Clone()
	}
	if err := m.LoadStateDict(sd, true); err != nil {
		t.Fatal(err)
	}
	for i, p := range m.Parameters() {
		if p != params[i] || !p.RequiresGrad() {
			t.Errorf("parameter %d replaced or detached by LoadStateDict", i)
		}
	}
}

func TestGroupedConvShape(t *testing.T) {
	c := NewConv2d(6, 9, 3, Groups(3), Padding(1))
	if !c.Weight.Shape().Equal(ember.Shape{9, 2, 3, 3}) {
		t.Fatalf("weight shape %v", c.Weight.Shape())
	}
	if y := c.Forward(ember.Zeros(ember.Shape{1, 6, 5, 5})); !y.Shape().Equal(ember.Shape{1, 9, 5, 5}) {
		t.Errorf("output shape %v", y.Shape())
	}
}
