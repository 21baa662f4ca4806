package optim

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/weights"
)

// TestAutocastCNNStepAsTorch runs one forward and backward of
// gen_nn_fixtures.py's small CNN (without its LayerNorm, on which torch
// 1.13's CPU autocast fails) under Autocast(CPU, BFloat16) and compares the
// loss and every parameter gradient with torch.autocast("cpu",
// torch.bfloat16) (testdata/fixtures/half/autocast.json). bfloat16 keeps 8
// significant bits and the two compute the convolutions in different
// orders, so the comparison is loose: the loss to 1%, each gradient to 5%
// of its largest element.
func TestAutocastCNNStepAsTorch(t *testing.T) {
	raw, err := os.ReadFile("../testdata/fixtures/half/autocast.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Loss  float64              `json:"cnn_loss"`
		Grads map[string][]float64 `json:"cnn_grads"`
	}
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	f, err := weights.LoadSafetensors("../testdata/nn/cnn_grad.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	m := nn.NewSequential(
		nn.NewConv2d(2, 4, 3, nn.Padding(1)), nn.NewBatchNorm2d(4), nn.NewReLU(), nn.NewMaxPool2d(2, 0, 0),
		nn.NewConv2d(4, 6, 3, nn.Padding(1), nn.Groups(2)), nn.NewAvgPool2d(3, 1, 1), nn.NewAdaptiveAvgPool2d(2, 2),
		nn.NewFlatten(), nn.NewLinear(24, 8, true), nn.NewGELU(), nn.NewLinear(8, 5, true))
	// torch's indices: the LayerNorm was 8, so its 9 and 11 are ember's 8 and 10
	rename := map[string]string{"9": "8", "11": "10"}
	sd := map[string]*ember.Tensor{}
	for k, v := range f {
		name, ok := strings.CutPrefix(k, "init.")
		if !ok || strings.HasPrefix(name, "8.") {
			continue
		}
		i, rest, _ := strings.Cut(name, ".")
		if r, ok := rename[i]; ok {
			i = r
		}
		sd[i+"."+rest] = v
	}
	if err := m.LoadStateDict(sd, true); err != nil {
		t.Fatal(err)
	}
	var loss *ember.Tensor
	ember.Autocast(ember.CPU, ember.BFloat16, func() {
		loss = nn.CrossEntropyLoss{}.Loss(m.Forward(f["x"]), f["target"])
	})
	if loss.DType() != ember.Float32 {
		t.Fatalf("loss dtype %v", loss.DType())
	}
	if got := loss.Item(); math.Abs(got-fx.Loss) > 0.01*fx.Loss {
		t.Errorf("loss %v, torch %v", got, fx.Loss)
	}
	loss.Backward()
	for _, p := range ModuleParams(m) {
		if p.Name == "0.bias" {
			// a bias before batch norm: its gradient is zero but for
			// rounding, noise in both (torch's largest is 5e-5)
			continue
		}
		i, rest, _ := strings.Cut(p.Name, ".")
		for k, v := range rename {
			if v == i {
				i = k
			}
		}
		want := fx.Grads[i+"."+rest]
		if want == nil {
			t.Fatalf("no torch gradient for %s", p.Name)
		}
		g := p.Tensor.Grad()
		if g == nil || g.DType() != ember.Float32 {
			t.Fatalf("%s: gradient %v", p.Name, g)
		}
		got := g.Cast(ember.Float64).Float64s()
		scale := 0.0
		for _, w := range want {
			scale = math.Max(scale, math.Abs(w))
		}
		for j := range want {
			if math.Abs(got[j]-want[j]) > 0.05*scale+1e-6 {
				t.Errorf("%s[%d]: %v, torch %v (largest %v)", p.Name, j, got[j], want[j], scale)
				break
			}
		}
	}
}
