package nn_test

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
	"github.com/emberml/ember/nn"
)

type fixtureTensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
	Grad  []float64 `json:"grad"`
}

// TestExtraLayersMatchTorch: LogSigmoid, Softsign, Tanhshrink,
// Softshrink, Hardshrink, Threshold, GLU, SELU, CELU, RReLU (eval), PReLU
// and Bilinear against PyTorch 1.13 (testdata/gen_losses_fixtures.py):
// outputs, input and parameter gradients at the kinks (0, ±lambda, the
// threshold), and PyTorch's repr, on every device.
func TestExtraLayersMatchTorch(t *testing.T) {
	devs := []ember.Device{ember.CPU}
	for i := 0; i < ember.DeviceCount(); i++ {
		devs = append(devs, ember.CUDA(i))
	}
	testExtraLayers(t, devs)
}

// The same on the emulated cuda:0 (the real CUDA kernels built with g++).
func TestExtraLayersEmulatedCUDA(t *testing.T) {
	defer emulatedCUDA(t, "TestExtraLayersMatchTorch runs on it")()
	testExtraLayers(t, []ember.Device{ember.CUDA(0)})
}

func testExtraLayers(t *testing.T, devs []ember.Device) {
	b, err := os.ReadFile("../testdata/nn/layers_extra.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs []struct {
		Layer      string                   `json:"layer"`
		Params     map[string]any           `json:"params"`
		Inputs     []fixtureTensor          `json:"inputs"`
		Parameters map[string]fixtureTensor `json:"parameters"`
		OutShape   []int                    `json:"out_shape"`
		Out        []float64                `json:"out"`
		Repr       string                   `json:"repr"`
	}
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	for _, dev := range devs {
		for i, c := range cs {
			f := func(k string) float64 { return c.Params[k].(float64) }
			var m nn.Module
			switch c.Layer {
			case "logsigmoid":
				m = nn.NewLogSigmoid()
			case "softsign":
				m = nn.NewSoftsign()
			case "tanhshrink":
				m = nn.NewTanhshrink()
			case "softshrink":
				m = nn.NewSoftshrink(f("lambda"))
			case "hardshrink":
				m = nn.NewHardshrink(f("lambda"))
			case "threshold":
				m = nn.NewThreshold(f("threshold"), f("value"))
			case "glu":
				m = nn.NewGLU(int(f("dim")))
			case "selu":
				m = nn.NewSELU()
			case "celu":
				m = nn.NewCELU(f("alpha"))
			case "rrelu_eval":
				m = nn.NewRReLU(f("lower"), f("upper"))
				m.Eval()
			case "prelu":
				m = nn.NewPReLU(int(f("num_parameters")), f("init"))
			case "bilinear":
				m = nn.NewBilinear(int(f("in1")), int(f("in2")), int(f("out")), c.Params["bias"].(bool))
			default:
				t.Fatalf("unknown layer %s", c.Layer)
			}
			name := fmt.Sprintf("case %d %s %v on %v", i, c.Layer, c.Params, dev)
			if got := m.Registry().String(); got != c.Repr {
				t.Fatalf("%s: repr %q, PyTorch %q", name, got, c.Repr)
			}
			if len(c.Parameters) > 0 { // in float64, as the fixture's module
				m.Registry().MapParameters(func(_ string, p *ember.Tensor) *ember.Tensor {
					return p.Detach().Cast(ember.Float64).SetRequiresGrad(true)
				})
				sd := map[string]*ember.Tensor{}
				for k, p := range c.Parameters {
					sd[k] = ember.FromSlice(p.Data, ember.Shape(p.Shape))
				}
				if err := m.LoadStateDict(sd, true); err != nil {
					t.Fatal(err)
				}
			}
			m.To(dev)
			var ins []*ember.Tensor
			for _, in := range c.Inputs {
				ins = append(ins, ember.FromSlice(in.Data, ember.Shape(in.Shape), ember.On(dev), ember.WithGrad()))
			}
			var y *ember.Tensor
			if bl, ok := m.(*nn.Bilinear); ok {
				y = bl.Bilinear2(ins[0], ins[1])
			} else {
				y = m.Forward(ins[0])
			}
			if !y.Shape().Equal(ember.Shape(c.OutShape)) {
				t.Fatalf("%s: shape %v, PyTorch %v", name, y.Shape(), c.OutShape)
			}
			near(t, name+" output", y.Float64s(), c.Out)
			w := ember.Arange(1, float64(y.NumElements())+1, 1, ember.Dtype(ember.Float64), ember.On(dev)).Reshape(y.Shape()...)
			y.Mul(w).Sum().Backward()
			for j, in := range c.Inputs {
				near(t, fmt.Sprintf("%s grad input %d", name, j), ins[j].Grad().Float64s(), in.Grad)
			}
			for _, np := range m.NamedParameters() {
				near(t, name+" grad "+np.Name, np.Tensor.Grad().Float64s(), c.Parameters[np.Name].Grad)
			}
		}
	}
}

// TestExtraLayerErrors: argument rules, with PyTorch's messages.
func TestExtraLayerErrors(t *testing.T) {
	testenv.Raises[*ember.ValueError](t, "softshrink lambda", func() { nn.NewSoftshrink(-1) })
	testenv.Raises[*ember.ValueError](t, "celu alpha", func() { nn.NewCELU(0) })
	testenv.Raises[*ember.ValueError](t, "rrelu bounds", func() { nn.NewRReLU(0.5, 0.2) })
	testenv.Raises[*ember.ShapeError](t, "glu odd", func() { nn.NewGLU(1).Forward(ember.Zeros(ember.Shape{2, 3})) })
	testenv.Raises[*ember.ShapeError](t, "glu scalar", func() { nn.NewGLU(-1).Forward(ember.Scalar(1)) })
	testenv.Raises[*ember.ShapeError](t, "glu dim", func() { nn.NewGLU(2).Forward(ember.Zeros(ember.Shape{2, 4})) })
	p := nn.NewPReLU(3, 0.25)
	testenv.Raises[*ember.ShapeError](t, "prelu channels", func() { p.Forward(ember.Zeros(ember.Shape{2, 4})) })
	testenv.Raises[*ember.ShapeError](t, "prelu 1-d", func() { p.Forward(ember.Zeros(ember.Shape{3})) })
	testenv.Raises[*ember.ShapeError](t, "prelu 0-d", func() { p.Forward(ember.Scalar(1)) })
	if got := nn.NewPReLU(1, 0.25).Forward(ember.Scalar(-1)).Item(); got != -0.25 {
		t.Fatalf("PReLU(-1) = %v, want -0.25", got)
	}
	b := nn.NewBilinear(3, 4, 5, true)
	testenv.Raises[*ember.ShapeError](t, "bilinear batch", func() { b.Bilinear2(ember.Zeros(ember.Shape{2, 3}), ember.Zeros(ember.Shape{3, 4})) })
	testenv.Raises[*ember.ShapeError](t, "bilinear in2", func() { b.Bilinear2(ember.Zeros(ember.Shape{2, 3}), ember.Zeros(ember.Shape{2, 5})) })
	if names := b.StateDict(); names["weight"] == nil || names["bias"] == nil || !names["weight"].Shape().Equal(ember.Shape{5, 3, 4}) {
		t.Fatalf("Bilinear state dict %v", names)
	}
	// RReLU in training mode: negative elements scaled within [lower, upper]
	r := nn.NewRReLU(0.1, 0.3)
	y := r.Forward(ember.Full(ember.Shape{1000}, -1)).Float64s()
	for _, v := range y {
		if v > -0.1 || v < -0.3 {
			t.Fatalf("RReLU training slope %v outside [0.1, 0.3]", -v)
		}
	}
}
