package nn

import (
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/weights"
)

// TestActivationsMatchTorch checks the activation layers generated from the
// op table against torch.nn's on the same inputs, on every device present.
func TestActivationsMatchTorch(t *testing.T) {
	f, err := weights.LoadSafetensors("../testdata/nn/activations.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		m    *Activation
	}{
		{"silu", NewSiLU()},
		{"softplus", NewSoftplus(1, 20)},
		{"softplus_b2_t1", NewSoftplus(2, 1)},
		{"mish", NewMish()},
		{"hardswish", NewHardswish()},
		{"hardsigmoid", NewHardsigmoid()},
		{"elu", NewELU(1)},
		{"elu_a05", NewELU(0.5)},
		{"gelu_tanh", NewGELU("tanh")},
	}
	devs := []ember.Device{ember.CPU}
	for i := 0; i < ember.DeviceCount(); i++ {
		devs = append(devs, ember.CUDA(i))
	}
	for _, dev := range devs {
		for _, c := range cases {
			x := f[c.name+".x"].To(dev)
			close(t, c.name+" on "+dev.String(), c.m.Forward(x).CPU(), f[c.name+".y"], 1e-6)
		}
	}
}
