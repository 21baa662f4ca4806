package ember

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// PyTorch 1.13 references from testdata/gen_grad_fixtures.py.

type fixTensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
	Ints  []int64   `json:"ints"`
}

type gradFixture struct {
	Params  map[string]json.RawMessage `json:"params"`
	Inputs  map[string]fixTensor       `json:"inputs"`
	W       fixTensor                  `json:"w"`
	Output  fixTensor                  `json:"output"`
	Grads   map[string]fixTensor       `json:"grads"`
	RMAfter *fixTensor                 `json:"running_mean_after"`
	RVAfter *fixTensor                 `json:"running_var_after"`
}

func (f fixTensor) on(dev Device) *Tensor {
	if f.Ints != nil {
		return FromSlice(f.Ints, Shape(f.Shape), On(dev))
	}
	return FromSlice(f.Data, Shape(f.Shape), On(dev))
}

func (g gradFixture) param(t *testing.T, name string, v any) {
	t.Helper()
	if err := json.Unmarshal(g.Params[name], v); err != nil {
		t.Fatalf("param %s: %v", name, err)
	}
}

func loadGradFixtures(t *testing.T, name string) []gradFixture {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fixtures", "grad", "grad_"+name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var cs []gradFixture
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

func closeTo(t *testing.T, what string, got *Tensor, want fixTensor) {
	t.Helper()
	if !got.Shape().Equal(Shape(want.Shape)) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape(), want.Shape)
	}
	for i, v := range got.Float64s() {
		if math.Abs(v-want.Data[i]) > 1e-5+1e-5*math.Abs(want.Data[i]) {
			t.Fatalf("%s[%d] = %.8g, PyTorch %.8g", what, i, v, want.Data[i])
		}
	}
}

// runGradFixtures runs op on each case's inputs and compares the output and
// the gradients of sum(output*w) with PyTorch's.
func runGradFixtures(t *testing.T, name string, op func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor, after func(t *testing.T, c gradFixture, in map[string]*Tensor)) {
	for _, dev := range testDevices() {
		for i, c := range loadGradFixtures(t, name) {
			in := map[string]*Tensor{}
			for k, v := range c.Inputs {
				in[k] = v.on(dev)
				if v.Ints == nil {
					in[k].SetRequiresGrad(true)
				}
			}
			out := op(t, c, in)
			closeTo(t, name+" output", out, c.Output)
			out.Mul(c.W.on(dev)).Sum().Backward()
			for k, g := range c.Grads {
				if in[k].Grad() == nil {
					t.Fatalf("%s case %d: no gradient for %s", name, i, k)
				}
				closeTo(t, name+" grad "+k, in[k].Grad(), g)
			}
			if after != nil {
				after(t, c, in)
			}
		}
	}
}

func TestGradFixturesConv2d(t *testing.T) {
	runGradFixtures(t, "conv2d", func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor {
		var stride, pad, dil [2]int
		var groups int
		c.param(t, "stride", &stride)
		c.param(t, "padding", &pad)
		c.param(t, "dilation", &dil)
		c.param(t, "groups", &groups)
		return Conv2d(in["x"], in["weight"], in["bias"], stride, pad, dil, groups)
	}, nil)
}

func TestGradFixturesBatchNorm(t *testing.T) {
	var rm, rv *Tensor
	runGradFixtures(t, "batch_norm", func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor {
		var training bool
		var momentum, eps float64
		var m, v fixTensor
		c.param(t, "training", &training)
		c.param(t, "momentum", &momentum)
		c.param(t, "eps", &eps)
		c.param(t, "running_mean", &m)
		c.param(t, "running_var", &v)
		dev := in["x"].Device()
		rm, rv = m.on(dev), v.on(dev)
		return BatchNorm(in["x"], rm, rv, in["weight"], in["bias"], training, momentum, eps)
	}, func(t *testing.T, c gradFixture, in map[string]*Tensor) {
		closeTo(t, "running_mean", rm, *c.RMAfter)
		closeTo(t, "running_var", rv, *c.RVAfter)
	})
}

func TestGradFixturesCrossEntropy(t *testing.T) {
	runGradFixtures(t, "cross_entropy", func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor {
		var ls float64
		var red string
		c.param(t, "label_smoothing", &ls)
		c.param(t, "reduction", &red)
		return CrossEntropy(in["logits"], in["target"], ls, red)
	}, nil)
}

func TestGradFixturesSoftmax(t *testing.T) {
	runGradFixtures(t, "softmax", func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor {
		var dim int
		var log bool
		c.param(t, "dim", &dim)
		c.param(t, "log", &log)
		if log {
			return in["x"].LogSoftmax(dim)
		}
		return in["x"].Softmax(dim)
	}, nil)
}

func TestGradFixturesPool(t *testing.T) {
	for _, k := range []Kernels{NativeKernels, GenericKernels} {
		t.Run(k.String(), func(t *testing.T) { gradFixturesPool(t, k) })
	}
}

// gradFixturesPool checks the pools run with k's kernels (the ceil_mode
// cases too) against PyTorch's values and gradients.
func gradFixturesPool(t *testing.T, kn Kernels) {
	runGradFixtures(t, "pool", func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor {
		var kind string
		var k, s, p [2]int
		var cip bool
		c.param(t, "kind", &kind)
		c.param(t, "kernel", &k)
		var opts []PoolOption
		if _, ok := c.Params["ceil_mode"]; ok {
			var ceil bool
			c.param(t, "ceil_mode", &ceil)
			if ceil {
				opts = append(opts, CeilMode())
			}
		}
		switch kind {
		case "adaptive":
			return AdaptiveAvgPool2d(in["x"], k[0], k[1])
		case "max":
			c.param(t, "stride", &s)
			c.param(t, "padding", &p)
			return kn.MaxPool2d(in["x"], k, s, p, opts...)
		}
		c.param(t, "stride", &s)
		c.param(t, "padding", &p)
		c.param(t, "count_include_pad", &cip)
		return kn.AvgPool2d(in["x"], k, s, p, cip, opts...)
	}, nil)
}

// TestGradFixturesConvSame: Conv2dSame and Conv1dSame (padding='same')
// against PyTorch's outputs and gradients, uneven splits (even kernels,
// odd dilations) included.
func TestGradFixturesConvSame(t *testing.T) {
	runGradFixtures(t, "conv_same", func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor {
		var dim, groups int
		var dil []int
		c.param(t, "dim", &dim)
		c.param(t, "dilation", &dil)
		c.param(t, "groups", &groups)
		if dim == 1 {
			return Conv1dSame(in["x"], in["weight"], in["bias"], dil[0], groups)
		}
		return Conv2dSame(in["x"], in["weight"], in["bias"], [2]int{dil[0], dil[1]}, groups)
	}, nil)
}

// TestGradFixturesConvTranspose: ConvTranspose2d against PyTorch's
// F.conv_transpose2d outputs and gradients (strides, output padding,
// dilation, groups, padding beyond d·(k−1), unbatched).
func TestGradFixturesConvTranspose(t *testing.T) {
	runGradFixtures(t, "conv_transpose", func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor {
		var s, p, op, d [2]int
		var groups int
		c.param(t, "stride", &s)
		c.param(t, "padding", &p)
		c.param(t, "output_padding", &op)
		c.param(t, "dilation", &d)
		c.param(t, "groups", &groups)
		return ConvTranspose2d(in["x"], in["weight"], in["bias"], s, p, op, d, groups)
	}, nil)
}

// TestGradFixturesPool1d: MaxPool1d, AvgPool1d (ceil_mode,
// count_include_pad, unbatched, a zero stride as the kernel) and
// AdaptiveAvgPool1d against PyTorch's outputs and gradients.
func TestGradFixturesPool1d(t *testing.T) {
	runGradFixtures(t, "pool1d", func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor {
		var kind string
		var k, s, p int
		var cip, ceil bool
		c.param(t, "kind", &kind)
		c.param(t, "kernel", &k)
		if kind == "adaptive" {
			return AdaptiveAvgPool1d(in["x"], k)
		}
		c.param(t, "stride", &s)
		c.param(t, "padding", &p)
		c.param(t, "ceil_mode", &ceil)
		var opts []PoolOption
		if ceil {
			opts = append(opts, CeilMode())
		}
		if kind == "max" {
			return MaxPool1d(in["x"], k, s, p, opts...)
		}
		c.param(t, "count_include_pad", &cip)
		return AvgPool1d(in["x"], k, s, p, cip, opts...)
	}, nil)
}

// TestGradFixturesAdaptiveMaxPool: AdaptiveMaxPool2d against PyTorch's
// outputs and gradients (ties go to the first maximum).
func TestGradFixturesAdaptiveMaxPool(t *testing.T) {
	runGradFixtures(t, "adaptive_max", func(t *testing.T, c gradFixture, in map[string]*Tensor) *Tensor {
		var out [2]int
		c.param(t, "output_size", &out)
		return AdaptiveMaxPool2d(in["x"], out[0], out[1])
	}, nil)
}
