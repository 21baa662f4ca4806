package ember

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// PyTorch 1.13 references from testdata/gen_highgrad_fixtures.py.

func loadHighgrad(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fixtures", "grad", "highgrad.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func highgradCase(t *testing.T, name string, v any) {
	t.Helper()
	if err := json.Unmarshal(loadHighgrad(t)[name], v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func TestGradMLPInputFixture(t *testing.T) {
	var c map[string]fixTensor
	highgradCase(t, "mlp_input_grad", &c)
	for _, dev := range testDevices() {
		x := c["x"].on(dev).SetRequiresGrad(true)
		w1 := c["w1"].on(dev).SetRequiresGrad(true)
		out := Linear(Linear(x, w1, c["b1"].on(dev)).Tanh(), c["w2"].on(dev), c["b2"].on(dev))
		gx := Grad([]*Tensor{out}, []*Tensor{x}, GradOutputs(c["wout"].on(dev)))[0]
		closeTo(t, "grad x on "+dev.String(), gx, c["gx"])
		if gx.RequiresGrad() {
			t.Errorf("on %v: without CreateGraph the gradient requires grad", dev)
		}
		if x.Grad() != nil || w1.Grad() != nil {
			t.Errorf("on %v: Grad accumulated into a leaf's Grad", dev)
		}
	}
}

func TestGradPenaltyFixture(t *testing.T) {
	for _, act := range []string{"leaky_relu", "tanh"} {
		var c map[string]*fixTensor
		highgradCase(t, "gp_"+act, &c)
		for _, dev := range testDevices() {
			p := map[string]*Tensor{}
			for _, k := range []string{"x", "w1", "b1", "w2", "b2"} {
				p[k] = c[k].on(dev).SetRequiresGrad(true)
			}
			h := Linear(p["x"], p["w1"], p["b1"])
			if act == "tanh" {
				h = h.Tanh()
			} else {
				h = h.LeakyReLU(0.2)
			}
			d := Linear(h, p["w2"], p["b2"])
			gx := Grad([]*Tensor{d.Sum()}, []*Tensor{p["x"]}, CreateGraph(true))[0]
			what := act + " on " + dev.String()
			closeTo(t, "gx "+what, gx, *c["gx"])
			if !gx.RequiresGrad() {
				t.Fatalf("%s: CreateGraph's gradient does not require grad", what)
			}
			gp := gx.Norm(2, Dims(1)).SubScalar(1).PowScalar(2).Mean()
			closeTo(t, "gp "+what, gp, *c["gp"])
			gp.Backward()
			for k, want := range map[string]string{"w1": "gw1", "b1": "gb1", "w2": "gw2", "x": "gxx"} {
				g := p[k].Grad()
				if g == nil && allZero(c[want].Data) {
					// the gradient of a piecewise-linear critic does not
					// depend on x or b1: PyTorch's grad is zeros, ember's nil
					g = ZerosLike(p[k])
				}
				closeTo(t, "grad "+k+" "+what, g, *c[want])
			}
			// b2 does not reach the penalty: PyTorch leaves its grad None
			if c["gb2"] == nil && p["b2"].Grad() != nil {
				t.Errorf("%s: b2 got a gradient", what)
			}
		}
	}
}

// secondOps are the ember forms of the fixture's elementwise functions.
var secondOps = map[string]func(x *Tensor) *Tensor{
	"exp": (*Tensor).Exp, "log": (*Tensor).Log, "sqrt": (*Tensor).Sqrt, "rsqrt": (*Tensor).Rsqrt,
	"sin": (*Tensor).Sin, "cos": (*Tensor).Cos, "tanh": (*Tensor).Tanh, "sigmoid": (*Tensor).Sigmoid,
	"relu": (*Tensor).ReLU, "square": (*Tensor).Square, "log1p": (*Tensor).Log1p, "expm1": (*Tensor).Expm1,
	"erf": (*Tensor).Erf, "reciprocal": (*Tensor).Reciprocal,
	"pow3":       func(x *Tensor) *Tensor { return x.PowScalar(3) },
	"pow2.5":     func(x *Tensor) *Tensor { return x.PowScalar(2.5) },
	"leaky_relu": func(x *Tensor) *Tensor { return x.LeakyReLU(0.1) },
	"silu":       (*Tensor).SiLU,
	"softplus":   func(x *Tensor) *Tensor { return x.Softplus(2, 20) },
	"mish":       (*Tensor).Mish,
	"elu":        func(x *Tensor) *Tensor { return x.ELU(1.5) },
	"gelu":       GELU, "gelu_tanh": (*Tensor).GELUTanh,
	"tan": (*Tensor).Tan, "asin": (*Tensor).Asin, "acos": (*Tensor).Acos, "atan": (*Tensor).Atan,
	"sinh": (*Tensor).Sinh, "cosh": (*Tensor).Cosh, "asinh": (*Tensor).Asinh, "acosh": (*Tensor).Acosh,
	"atanh": (*Tensor).Atanh, "lgamma": (*Tensor).Lgamma, "digamma": (*Tensor).Digamma, "erfc": (*Tensor).Erfc,
	"erfinv": (*Tensor).Erfinv, "log2": (*Tensor).Log2, "log10": (*Tensor).Log10, "exp2": (*Tensor).Exp2,
	"abs":       (*Tensor).Abs,
	"clamp":     func(x *Tensor) *Tensor { return x.Clamp(-0.5, 0.6) },
	"logit":     func(x *Tensor) *Tensor { return x.Logit(-1) },
	"sinc":      (*Tensor).Sinc,
	"hardswish": (*Tensor).Hardswish,
	"softmax": func(x *Tensor) *Tensor {
		return x.Softmax(0).Mul(Arange(1, 9, 1, On(x.Device()), Dtype(Float64)))
	},
	"log_softmax": func(x *Tensor) *Tensor { return x.LogSoftmax(0).PowScalar(2) },
	"norm":        func(x *Tensor) *Tensor { return x.Norm(2).PowScalar(3) },
}

func TestSecondDerivativeFixtures(t *testing.T) {
	var c map[string]map[string]json.RawMessage
	highgradCase(t, "second", &c)
	for name, cs := range c {
		f := secondOps[name]
		if f == nil {
			t.Errorf("no ember form of %s", name)
			continue
		}
		var x, g, v, hv fixTensor
		for k, p := range map[string]*fixTensor{"x": &x, "g": &g, "v": &v, "hv": &hv} {
			if err := json.Unmarshal(cs[k], p); err != nil {
				t.Fatal(err)
			}
		}
		for _, dev := range testDevices() {
			xt := x.on(dev).SetRequiresGrad(true)
			gt := Grad([]*Tensor{f(xt).Sum()}, []*Tensor{xt}, CreateGraph(true))[0]
			what := name + " on " + dev.String()
			closeTo(t, "d/dx "+what, gt, g)
			if !gt.RequiresGrad() {
				// piecewise linear (clamp, relu): no graph, a zero second derivative
				closeTo(t, "d²/dx² "+what, ZerosLike(xt), hv)
				continue
			}
			closeTo(t, "d²/dx²·v "+what, Grad([]*Tensor{gt}, []*Tensor{xt}, GradOutputs(v.on(dev)))[0], hv)
		}
	}
}

func TestGradOptions(t *testing.T) {
	for _, dev := range testDevices() {
		x := FromSlice([]float64{1, 2, 3}, Shape{3}, On(dev)).SetRequiresGrad(true)
		y := FromSlice([]float64{4, 5}, Shape{2}, On(dev)).SetRequiresGrad(true)
		unused := FromSlice([]float64{1}, Shape{1}, On(dev)).SetRequiresGrad(true)
		// allow_unused
		l := x.Square().Sum()
		err := catch(func() { Grad([]*Tensor{l}, []*Tensor{x, unused}, RetainGraph(true)) })
		var ae *AutogradError
		if !errors.As(err, &ae) || !strings.Contains(ae.Msg, "appears to not have been used in the graph. Set allow_unused=True") {
			t.Fatalf("unused input: %v", err)
		}
		gs := Grad([]*Tensor{l}, []*Tensor{x, unused}, AllowUnused(true), RetainGraph(true))
		if gs[1] != nil || gs[0].Float64s()[2] != 6 {
			t.Fatalf("allow_unused: %v", gs)
		}
		// retain_graph: a second Grad through freed saved tensors panics
		Grad([]*Tensor{l}, []*Tensor{x})
		err = catch(func() { Grad([]*Tensor{l}, []*Tensor{x}) })
		if !errors.As(err, &ae) || ae.Msg != errSecondBackward {
			t.Fatalf("second grad without retain_graph: %v", err)
		}
		// grad outputs: required for a non-scalar output, several outputs sum
		v := x.Mul(x)
		err = catch(func() { Grad([]*Tensor{v}, []*Tensor{x}) })
		if !errors.As(err, &ae) || ae.Msg != "grad can be implicitly created only for scalar outputs" {
			t.Fatalf("non-scalar output: %v", err)
		}
		w := y.Exp().Sum()
		gs = Grad([]*Tensor{v, w}, []*Tensor{y, x}, GradOutputs(FromSlice([]float64{1, 0, -1}, Shape{3}, On(dev)), nil))
		if got := gs[1].Float64s(); got[0] != 2 || got[1] != 0 || got[2] != -6 {
			t.Fatalf("grad_outputs: %v", got)
		}
		closeTo(t, "exp grad", gs[0], fixTensor{Shape: []int{2}, Data: []float64{54.598150033144236, 148.4131591025766}})
		// a non-leaf input; the part of the graph behind it does not run
		// (its saved tensors stay, so a later Backward works)
		h := x.Exp()
		z := h.Mul(h).Sum()
		gh := Grad([]*Tensor{z}, []*Tensor{h})[0]
		closeTo(t, "non-leaf", gh, fixTensor{Shape: []int{3}, Data: []float64{2 * 2.718281828459045, 2 * 7.38905609893065, 2 * 20.085536923187668}})
		if x.Grad() != nil || y.Grad() != nil {
			t.Fatalf("Grad touched a leaf's Grad")
		}
		h.Sum().Backward()
		closeTo(t, "exp after Grad on a non-leaf", x.Grad(), fixTensor{Shape: []int{3}, Data: []float64{2.718281828459045, 7.38905609893065, 20.085536923187668}})
		// an input that does not require grad
		err = catch(func() { Grad([]*Tensor{x.Sum()}, []*Tensor{x.Detach()}) })
		if !errors.As(err, &ae) {
			t.Fatalf("input without grad: %v", err)
		}
		// the output itself
		gs = Grad([]*Tensor{x}, []*Tensor{x}, GradOutputs(FromSlice([]float64{1, 2, 3}, Shape{3}, On(dev))))
		if got := gs[0].Float64s(); got[2] != 3 {
			t.Fatalf("grad of x by x: %v", got)
		}
	}
}

func catch(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
			} else {
				panic(r)
			}
		}
	}()
	f()
	return nil
}

func TestBackwardCreateGraph(t *testing.T) {
	for _, dev := range testDevices() {
		x := FromSlice([]float64{0.5, -1, 2}, Shape{3}, On(dev)).SetRequiresGrad(true)
		l := x.PowScalar(3).Sum()
		l.BackwardCreateGraph(nil)
		g := x.Grad() // 3x²
		if !g.RequiresGrad() {
			t.Fatalf("on %v: BackwardCreateGraph's Grad has no graph", dev)
		}
		closeTo(t, "3x²", g, fixTensor{Shape: []int{3}, Data: []float64{0.75, 3, 12}})
		h := Grad([]*Tensor{g.Sum()}, []*Tensor{x})[0] // 6x
		closeTo(t, "6x", h, fixTensor{Shape: []int{3}, Data: []float64{3, -6, 12}})
		// accumulates: the graph was retained
		l.BackwardCreateGraph(nil)
		closeTo(t, "6x²", x.Grad(), fixTensor{Shape: []int{3}, Data: []float64{1.5, 6, 24}})
	}
}

// An op without a differentiable backward: its first derivative is fine,
// its second panics with PyTorch's words rather than come out wrong.
func TestDoubleBackwardNotImplemented(t *testing.T) {
	for _, dev := range testDevices() {
		x := FromSlice(vals(Shape{2, 4}, -1, 1, 2).data, Shape{2, 4}, On(dev)).SetRequiresGrad(true)
		// (grid_sample's backward runs a gather without a differentiable backward)
		grid := FromSlice([]float64{0.3, -0.6, 0.9, 0.1}, Shape{1, 1, 2, 2}, On(dev))
		y := GridSample(x.Square().Reshape(1, 1, 2, 4), grid, GridSampleOptions{}).Exp().Sum()
		g := Grad([]*Tensor{y}, []*Tensor{x}, CreateGraph(true))[0]
		if !g.RequiresGrad() {
			t.Fatalf("on %v: the gradient has no graph", dev)
		}
		first := Grad([]*Tensor{y}, []*Tensor{x})[0]
		closeTo(t, "first derivative", g, fixTensor{Shape: []int{2, 4}, Data: first.Float64s()})
		err := catch(func() { g.Sum().Backward() })
		var ae *AutogradError
		if !errors.As(err, &ae) || !strings.Contains(ae.Msg, "the derivative for 'GatherBackward0' is not implemented") {
			t.Fatalf("on %v: double backward through grid_sample: %v", dev, err)
		}
	}
}

func allZero(d []float64) bool {
	for _, v := range d {
		if v != 0 {
			return false
		}
	}
	return true
}

func TestGradPenaltyConvFixture(t *testing.T) {
	var c map[string]fixTensor
	highgradCase(t, "gp_conv", &c)
	for _, dev := range testDevices() {
		p := map[string]*Tensor{}
		for _, k := range []string{"x", "cw", "cb", "lw", "lb"} {
			p[k] = c[k].on(dev).SetRequiresGrad(true)
		}
		h := Conv2d(p["x"], p["cw"], p["cb"], [2]int{2, 2}, [2]int{1, 1}, [2]int{1, 1}, 1).LeakyReLU(0.2)
		d := Linear(h.Reshape(3, -1), p["lw"], p["lb"])
		gx := Grad([]*Tensor{d.Sum()}, []*Tensor{p["x"]}, CreateGraph(true))[0]
		what := "conv critic on " + dev.String()
		closeTo(t, "gx "+what, gx, c["gx"])
		gp := gx.Reshape(3, -1).Norm(2, Dims(1)).SubScalar(1).PowScalar(2).Mean()
		closeTo(t, "gp "+what, gp, c["gp"])
		gp.Backward()
		closeTo(t, "conv weight grad "+what, p["cw"].Grad(), c["gcw"])
		closeTo(t, "linear weight grad "+what, p["lw"].Grad(), c["glw"])
	}
}

// Grad runs no post-accumulate-grad hooks (it accumulates nothing);
// BackwardCreateGraph does.
func TestGradRunsNoHooks(t *testing.T) {
	x := FromSlice([]float64{1, 2}, Shape{2}).SetRequiresGrad(true)
	calls := 0
	x.RegisterPostAccumulateGradHook(func(*Tensor) { calls++ })
	y := x.Exp().Sum()
	Grad([]*Tensor{y}, []*Tensor{x}, CreateGraph(true))
	if calls != 0 || x.Grad() != nil {
		t.Fatalf("Grad ran %d hooks, Grad %v", calls, x.Grad())
	}
	y.BackwardCreateGraph(nil)
	if calls != 1 || !x.Grad().RequiresGrad() {
		t.Fatalf("BackwardCreateGraph ran %d hooks", calls)
	}
}
