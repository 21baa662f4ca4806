package nninit

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend/cuda/cudatest"
	"github.com/emberml/ember/internal/testenv"
)

// fixtures is testdata/nn/nnextra.json's "init" part
// (testdata/gen_nnextra_fixtures.py, PyTorch 1.13).
type fixtures struct {
	Gains [][3]any `json:"gains"`
	Fans  [][6]any `json:"fans"`
	Eye   []struct {
		Shape []int     `json:"shape"`
		Out   []float64 `json:"out"`
	} `json:"eye"`
	Dirac []struct {
		Shape  []int     `json:"shape"`
		Groups int       `json:"groups"`
		Out    []float64 `json:"out"`
	} `json:"dirac"`
	Orthogonal []struct {
		Shape  []int     `json:"shape"`
		Gain   float64   `json:"gain"`
		Normal []float64 `json:"normal"`
		Out    []float64 `json:"out"`
	} `json:"orthogonal"`
	Trunc []struct {
		Mean, Std, A, B float64
		Uniform         []float64 `json:"uniform"`
		Out             []float64 `json:"out"`
		TMean           float64   `json:"tmean"`
		TVar            float64   `json:"tvar"`
	} `json:"trunc"`
}

func load(t *testing.T) fixtures {
	t.Helper()
	b, err := os.ReadFile("../../testdata/nn/nnextra.json")
	if err != nil {
		t.Fatal(err)
	}
	var all struct {
		Init fixtures `json:"init"`
	}
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	return all.Init
}

func near(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, PyTorch %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s[%d] = %v, PyTorch %v", what, i, got[i], want[i])
		}
	}
}

func shape(s []int) ember.Shape { return ember.Shape(s) }

// TestFormulasMatchTorch: calculate_gain, the fans and the xavier and
// kaiming bounds as PyTorch computes them; eye_ and dirac_ exactly;
// orthogonal_ from the normal matrix PyTorch drew and trunc_normal_ from
// its uniform draws, to float64 rounding.
func TestFormulasMatchTorch(t *testing.T) {
	f := load(t)
	for _, g := range f.Gains {
		var p []float64
		if g[1] != nil {
			p = append(p, g[1].(float64))
		}
		if got := CalculateGain(g[0].(string), p...); math.Abs(got-g[2].(float64)) > 1e-15 {
			t.Errorf("CalculateGain(%v, %v) = %v, PyTorch %v", g[0], g[1], got, g[2])
		}
	}
	for _, c := range f.Fans {
		var s ember.Shape
		for _, d := range c[0].([]any) {
			s = append(s, int(d.(float64)))
		}
		w := ember.Empty(s, ember.On(ember.Meta))
		in, out := Fans(w)
		if in != int(c[1].(float64)) || out != int(c[2].(float64)) {
			t.Errorf("Fans(%v) = %d, %d, PyTorch %v, %v", s, in, out, c[1], c[2])
		}
		xb := math.Sqrt(3.0) * math.Sqrt(2.0/float64(in+out))
		kb := math.Sqrt(3.0) * CalculateGain("leaky_relu", 0) / math.Sqrt(float64(in))
		ks := CalculateGain("relu") / math.Sqrt(float64(out))
		near(t, "bounds of "+s.String(), []float64{xb, kb, ks}, []float64{c[3].(float64), c[4].(float64), c[5].(float64)}, 1e-15)
	}
	for _, dev := range devices() {
		for _, c := range f.Eye {
			near(t, "Eye", Eye(ember.Full(shape(c.Shape), 7, ember.On(dev))).Float64s(), c.Out, 0)
		}
		for _, c := range f.Dirac {
			near(t, "Dirac", Dirac(ember.Full(shape(c.Shape), 7, ember.On(dev)), c.Groups).Float64s(), c.Out, 0)
		}
	}
	for _, c := range f.Orthogonal {
		rows := c.Shape[0]
		q := orthogonalFrom(c.Normal, rows, len(c.Normal)/rows)
		for i := range q {
			q[i] *= c.Gain
		}
		near(t, "orthogonal "+shape(c.Shape).String(), q, c.Out, 1e-12)
	}
	for _, dev := range devices() {
		for _, c := range f.Trunc {
			u := ember.FromSlice(c.Uniform, ember.Shape{len(c.Uniform)}, ember.On(dev))
			near(t, "trunc_normal", truncFrom(u, c.Mean, c.Std, c.A, c.B).Float64s(), c.Out, 1e-12)
		}
	}
}

func devices() []ember.Device {
	devs := []ember.Device{ember.CPU}
	for i := 0; i < ember.DeviceCount(); i++ {
		devs = append(devs, ember.CUDA(i))
	}
	return devs
}

// moments returns the mean, the variance and the largest |x| of v.
func moments(v []float64) (mean, vari, amax float64) {
	for _, x := range v {
		mean += x
		amax = math.Max(amax, math.Abs(x))
	}
	mean /= float64(len(v))
	for _, x := range v {
		vari += (x - mean) * (x - mean)
	}
	return mean, vari / float64(len(v)), amax
}

// TestDistributions: the random fills on every device, in float32 and
// float64: bounds and moments within 5 standard errors of the
// distributions PyTorch draws from (PyTorch's own values come from another
// generator), no graph recorded, requires_grad kept.
func TestDistributions(t *testing.T) { testDistributions(t, devices()) }

// The same on the emulated cuda:0.
func TestDistributionsEmulatedCUDA(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the kernel emulator: runs in the full suite")
	}
	if ember.DeviceCount() > 0 {
		t.Skip("a real GPU is present: TestDistributions runs on it")
	}
	defer cudatest.Use(t)()
	testDistributions(t, []ember.Device{ember.CUDA(0)})
}

func testDistributions(t *testing.T, devs []ember.Device) {
	f := load(t)
	const n = 20000
	check := func(what string, v []float64, mean, std, bound float64) {
		t.Helper()
		m, vr, amax := moments(v)
		se := std / math.Sqrt(n)
		if math.Abs(m-mean) > 5*se+1e-12 || math.Abs(math.Sqrt(vr)-std) > 5*std/math.Sqrt(2*n)+1e-12 {
			t.Errorf("%s: mean %v std %v, want %v, %v", what, m, math.Sqrt(vr), mean, std)
		}
		if bound > 0 && (amax > bound*(1+1e-6) || amax < 0.99*bound) {
			t.Errorf("%s: max |x| %v, bound %v", what, amax, bound)
		}
	}
	for _, dev := range devs {
		for _, dt := range []ember.DType{ember.Float32, ember.Float64} {
			on, as := ember.On(dev), ember.Dtype(dt)
			w := ember.Empty(ember.Shape{100, 200}, on, as).SetRequiresGrad(true)
			if got := Uniform(w, -2, 1); got != w || !w.RequiresGrad() || w.GradFn() != "" {
				t.Fatalf("Uniform did not fill in place without a graph")
			}
			check("Uniform(-2, 1)", w.Float64s(), -0.5, 3/math.Sqrt(12), 0)
			_, _, amax := moments(w.AddScalar(0.5).Float64s())
			if amax > 1.5 {
				t.Errorf("Uniform(-2, 1) outside the bounds: %v", amax)
			}
			check("Normal(1, 3)", Normal(w, 1, 3).Float64s(), 1, 3, 0)
			check("XavierUniform", XavierUniform(w, 2).Float64s(), 0, 2*math.Sqrt(2.0/300), 2*math.Sqrt(6.0/300))
			check("XavierNormal", XavierNormal(w, 2).Float64s(), 0, 2*math.Sqrt(2.0/300), 0)
			// PyTorch's bounds for [1000, 400]: f.Fans[4]
			big := ember.Empty(ember.Shape{1000, 400}, on, as)
			kb, ks := f.Fans[4][4].(float64), f.Fans[4][5].(float64)
			check("KaimingUniform", KaimingUniform(big, 0, "fan_in", "leaky_relu").Float64s()[:n], 0, kb/math.Sqrt(3), kb)
			check("KaimingNormal", KaimingNormal(big, 0, "fan_out", "relu").Float64s()[:n], 0, ks, 0)
			for _, c := range f.Trunc {
				v := TruncNormal(w, c.Mean, c.Std, c.A, c.B).Float64s()
				check("TruncNormal", v, c.TMean, math.Sqrt(c.TVar), 0)
				for _, x := range v {
					if x < c.A || x > c.B {
						t.Fatalf("TruncNormal %v outside [%v, %v]", x, c.A, c.B)
					}
				}
			}
			o := Orthogonal(ember.Empty(ember.Shape{3, 2, 4}, on, as), 1.5).Reshape(3, 8)
			near(t, "Orthogonal·Orthogonalᵀ", o.MatMul(o.Transpose(0, 1)).Float64s(), ember.Eye(3).MulScalar(2.25).Float64s(), 1e-5)
			s := Sparse(ember.Empty(ember.Shape{10, 300}, on, as), 0.3, 2).Float64s()
			for c := 0; c < 300; c++ {
				zeros := 0
				for r := 0; r < 10; r++ {
					if s[r*300+c] == 0 {
						zeros++
					}
				}
				if zeros != 3 {
					t.Fatalf("Sparse column %d has %d zeros, want ceil(0.3·10) = 3", c, zeros)
				}
			}
			near(t, "Constant", Constant(ember.Empty(ember.Shape{2, 2}, on, as), 2.5).Float64s(), []float64{2.5, 2.5, 2.5, 2.5}, 0)
			near(t, "Ones", Ones(ember.Empty(ember.Shape{2}, on, as)).Float64s(), []float64{1, 1}, 0)
			near(t, "Zeros", Zeros(ember.Full(ember.Shape{2}, 3, on, as)).Float64s(), []float64{0, 0}, 0)
		}
		// a view is written through; a two-byte float is filled too
		base := ember.Zeros(ember.Shape{4, 4}, ember.On(dev))
		Ones(base.Slice(1, 0, 4, 2))
		near(t, "Ones on a view", base.Sum().Reshape(1).Float64s(), []float64{8}, 0)
		h := Uniform(ember.Empty(ember.Shape{1000}, ember.On(dev), ember.Dtype(ember.Float16)), 0, 1)
		if _, _, amax := moments(h.Float64s()); amax > 1 {
			t.Errorf("Uniform float16 reaches %v", amax)
		}
	}
	// the meta device: shapes only
	m := ember.Empty(ember.Shape{3, 4}, ember.On(ember.Meta))
	for _, g := range []func(){
		func() { Uniform(m, 0, 1) }, func() { Normal(m, 0, 1) }, func() { TruncNormal(m, 0, 1, -2, 2) },
		func() { Orthogonal(m, 1) }, func() { Sparse(m, 0.5, 1) }, func() { Eye(m) }, func() { KaimingNormal(m, 0, "fan_in", "relu") },
	} {
		g()
	}
}

// TestInitErrors: PyTorch's refusals, with its messages.
func TestInitErrors(t *testing.T) {
	v := ember.Empty(ember.Shape{3})
	m := ember.Empty(ember.Shape{3, 4})
	raises := func(what, msg string, f func()) {
		t.Helper()
		if ve := testenv.Raises[*ember.ValueError](t, what, f); ve == nil || ve.Msg != msg {
			t.Errorf("%s: %v, want the message %q", what, ve, msg)
		}
	}
	raises("fans 1-D", "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions", func() { XavierUniform(v, 1) })
	raises("kaiming 1-D", "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions", func() { KaimingUniform(v, 0, "fan_in", "relu") })
	raises("kaiming mode", "Mode fan_avg not supported, please use one of ['fan_in', 'fan_out']", func() { KaimingNormal(m, 0, "fan_avg", "relu") })
	raises("gain", "Unsupported nonlinearity foo", func() { CalculateGain("foo") })
	raises("gain NaN", "negative_slope NaN not a valid number", func() { CalculateGain("leaky_relu", math.NaN()) })
	raises("uniform", "uniform_ expects to return a [from, to) range, but found from=2 > to=1", func() { Uniform(m, 2, 1) })
	raises("uniform inf", "to is out of bounds for float", func() { Uniform(m, 0, math.Inf(1)) })
	raises("uniform range", "uniform_ expects to-from <= std::numeric_limits<Float>::max(), but found to=3e+38 and from=-3e+38 which result in to-from to exceed the limit", func() { Uniform(m, -3e38, 3e38) })
	raises("uniform 0.5", "uniform_ expects to return a [from, to) range, but found from=0.5 > to=0.25", func() { Uniform(m, 0.5, 0.25) })
	// trunc_normal_ checks the uniform range it draws from, 2·cdf(a)-1 to
	// 2·cdf(b)-1: a > b, and a negative std, fail there
	raises("trunc a > b", "uniform_ expects to return a [from, to) range, but found from=0.9973 > to=0.682689", func() { TruncNormal(m, 0, 1, 3, 1) })
	raises("trunc std < 0", "uniform_ expects to return a [from, to) range, but found from=0.9545 > to=-0.9545", func() { TruncNormal(m, 0, -1, -2, 2) })
	raises("normal nan", "normal expects std >= 0.0, but found std nan", func() { Normal(m, 0, math.NaN()) })
	raises("normal", "normal expects std >= 0.0, but found std -1", func() { Normal(m, 0, -1) })
	raises("eye", "Only tensors with 2 dimensions are supported", func() { Eye(v) })
	raises("dirac", "Only tensors with 3, 4, or 5 dimensions are supported", func() { Dirac(m, 1) })
	raises("dirac groups", "dim 0 must be divisible by groups", func() { Dirac(ember.Empty(ember.Shape{3, 3, 3}), 2) })
	raises("orthogonal", "Only tensors with 2 or more dimensions are supported", func() { Orthogonal(v, 1) })
	raises("sparse", "Only tensors with 2 dimensions are supported", func() { Sparse(v, 0.1, 0.01) })
	raises("nil", "tensor is nil", func() { Uniform(nil, 0, 1) })
	testenv.Raises[*ember.DTypeError](t, "uniform int", func() { Uniform(ember.Zeros(ember.Shape{3}, ember.Dtype(ember.Int64)), 0, 1) })
	testenv.Raises[*ember.DTypeError](t, "normal int", func() { Normal(ember.Zeros(ember.Shape{3}, ember.Dtype(ember.Int64)), 0, 1) })
	// integer tensors take the deterministic fills; empty ones are no-ops
	near(t, "Eye int", Eye(ember.Zeros(ember.Shape{2, 3}, ember.Dtype(ember.Int64))).Float64s(), []float64{1, 0, 0, 0, 1, 0}, 0)
	near(t, "Constant int", Constant(ember.Zeros(ember.Shape{2}, ember.Dtype(ember.Int64)), 2).Float64s(), []float64{2, 2}, 0)
	e := ember.Empty(ember.Shape{0, 3})
	KaimingUniform(e, 0, "bad mode is not looked at", "relu")
	XavierUniform(ember.Empty(ember.Shape{0, 0}), 1)
	Orthogonal(e, 1)
}

// TestKaimingModeCase: PyTorch lower-cases kaiming's mode, so "FAN_OUT"
// is "fan_out" (the same draw for the same seed) and the error names the
// lower-cased mode.
func TestKaimingModeCase(t *testing.T) {
	for _, f := range []func(*ember.Tensor, float64, string, string) *ember.Tensor{KaimingUniform, KaimingNormal} {
		ember.ManualSeed(3)
		want := f(ember.Empty(ember.Shape{3, 4}), 0, "fan_out", "relu").Float64s()
		ember.ManualSeed(3)
		near(t, "FAN_OUT", f(ember.Empty(ember.Shape{3, 4}), 0, "FAN_OUT", "relu").Float64s(), want, 0)
		ve := testenv.Raises[*ember.ValueError](t, "FAN_AVG", func() { f(ember.Empty(ember.Shape{3, 4}), 0, "FAN_AVG", "relu") })
		if want := "Mode fan_avg not supported, please use one of ['fan_in', 'fan_out']"; ve == nil || ve.Msg != want {
			t.Errorf("FAN_AVG: %v, want %q", ve, want)
		}
	}
}
