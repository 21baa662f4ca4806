package optim

import (
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/weights"
)

// TestSGDTrainsCNNAsTorch runs two SGD steps (momentum 0.9, weight decay
// 5e-4) through nn's backward on the small CNN of
// testdata/gen_nn_fixtures.py and compares every parameter and BatchNorm
// buffer with PyTorch's after the same two steps.
func TestSGDTrainsCNNAsTorch(t *testing.T) {
	f, err := weights.LoadSafetensors("../testdata/nn/cnn_grad.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	m := nn.NewSequential(
		nn.NewConv2d(2, 4, 3, nn.Padding(1)), nn.NewBatchNorm2d(4), nn.NewReLU(), nn.NewMaxPool2d(2, 0, 0),
		nn.NewConv2d(4, 6, 3, nn.Padding(1), nn.Groups(2)), nn.NewAvgPool2d(3, 1, 1), nn.NewAdaptiveAvgPool2d(2, 2),
		nn.NewFlatten(), nn.NewLayerNorm(24), nn.NewLinear(24, 8, true), nn.NewGELU(), nn.NewLinear(8, 5, true))
	sd := map[string]*ember.Tensor{}
	for k, v := range f {
		if name, ok := strings.CutPrefix(k, "init."); ok {
			sd[name] = v
		}
	}
	if err := m.LoadStateDict(sd, true); err != nil {
		t.Fatal(err)
	}
	params := ModuleParams(m)
	opt := NewSGD(params, nil, 0.1, 0.9, 0, 5e-4, false)
	ce := nn.CrossEntropyLoss{}
	for step := 0; step < 2; step++ {
		opt.ZeroGrad()
		loss := ce.Loss(m.Forward(f["x"]), f["target"])
		want := f["loss"+string(rune('0'+step))].Item()
		if got := loss.Item(); got-want > 1e-5 || want-got > 1e-5 {
			t.Errorf("step %d: loss %v, want %v", step, got, want)
		}
		loss.Backward()
		opt.Step()
	}
	for k, v := range m.StateDict() {
		want := f["sgd2."+k]
		if want == nil {
			t.Fatalf("no fixture for %s", k)
		}
		near(t, k, v.Cast(ember.Float64).Float64s(), want.Cast(ember.Float64).Float64s(), 1e-4)
	}
	for i, p := range m.Parameters() {
		if p != params[i].Tensor {
			t.Errorf("parameter %s is no longer the module's tensor", params[i].Name)
		}
	}
}
