package autograd

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emberml/ember"
)

// PyTorch 1.13 references from testdata/gen_highgrad_fixtures.py.

type fix struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

func (f fix) on(dev ember.Device) *ember.Tensor {
	return ember.FromSlice(f.Data, ember.Shape(f.Shape), ember.On(dev))
}

type functionalCase struct {
	X, Y, V, F1, Jac1, Vjp1, Jvp1, F2, Hess2, Hvp2 fix
	Jac3                                           []fix
	Hess3                                          [][]fix
}

func load(t *testing.T) functionalCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "fixtures", "grad", "highgrad.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(m["functional"], &raw); err != nil {
		t.Fatal(err)
	}
	var c functionalCase
	for k, p := range map[string]any{"x": &c.X, "y": &c.Y, "v": &c.V, "f1": &c.F1, "jac1": &c.Jac1, "vjp1": &c.Vjp1,
		"jvp1": &c.Jvp1, "f2": &c.F2, "hess2": &c.Hess2, "hvp2": &c.Hvp2, "jac3": &c.Jac3, "hess3": &c.Hess3} {
		if err := json.Unmarshal(raw[k], p); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
	}
	return c
}

func devices() []ember.Device {
	ds := []ember.Device{ember.CPU}
	for i := 0; i < ember.DeviceCount(); i++ {
		ds = append(ds, ember.CUDA(i))
	}
	return ds
}

func check(t *testing.T, what string, got *ember.Tensor, want fix) {
	t.Helper()
	if !got.Shape().Equal(ember.Shape(want.Shape)) {
		t.Fatalf("%s: shape %v, PyTorch %v", what, got.Shape(), want.Shape)
	}
	for i, v := range got.Float64s() {
		if math.Abs(v-want.Data[i]) > 1e-9+1e-9*math.Abs(want.Data[i]) {
			t.Fatalf("%s[%d] = %.12g, PyTorch %.12g", what, i, v, want.Data[i])
		}
	}
}

// the fixture's functions
func f1(xs []*ember.Tensor) *ember.Tensor { return xs[0].Exp().Mul(xs[0].Sum()) }
func f2(xs []*ember.Tensor) *ember.Tensor {
	return xs[0].PowScalar(3).Sum().Mul(xs[0].Tanh().Sum())
}
func f3(xs []*ember.Tensor) *ember.Tensor {
	return xs[0].Sin().Mul(xs[1].Exp().Sum()).Add(xs[0].Mul(xs[1]))
}

func TestFunctionalFixtures(t *testing.T) {
	c := load(t)
	for _, dev := range devices() {
		x, y, v := c.X.on(dev), c.Y.on(dev), c.V.on(dev)
		in := []*ember.Tensor{x}
		out, vjp := VJP(f1, in, v)
		check(t, "f1", out, c.F1)
		check(t, "vjp", vjp[0], c.Vjp1)
		_, jvp := JVP(f1, in, []*ember.Tensor{v})
		check(t, "jvp", jvp, c.Jvp1)
		check(t, "jacobian", Jacobian(f1, in)[0], c.Jac1)
		check(t, "hessian", Hessian(f2, in)[0][0], c.Hess2)
		out, hvp := HVP(f2, in, []*ember.Tensor{v})
		check(t, "f2", out, c.F2)
		check(t, "hvp", hvp[0], c.Hvp2)
		j3 := Jacobian(f3, []*ember.Tensor{x, y})
		h3 := Hessian(func(xs []*ember.Tensor) *ember.Tensor { return f3(xs).Sum() }, []*ember.Tensor{x, y})
		for i := range j3 {
			check(t, "jacobian of f3", j3[i], c.Jac3[i])
			for j := range h3[i] {
				check(t, "hessian of f3", h3[i][j], c.Hess3[i][j])
			}
		}
		if x.RequiresGrad() || out.RequiresGrad() || hvp[0].RequiresGrad() || x.Grad() != nil {
			t.Fatalf("on %v: the inputs were touched or the results carry a graph", dev)
		}
	}
}

func TestFunctionalCreateGraphAndUnused(t *testing.T) {
	x := ember.FromSlice([]float64{0.5, -1, 2}, ember.Shape{3}).SetRequiresGrad(true)
	unused := ember.FromSlice([]float64{1, 2}, ember.Shape{2})
	// with CreateGraph the Jacobian of x³ (diag 3x²) differentiates back to x
	j := Jacobian(func(xs []*ember.Tensor) *ember.Tensor { return xs[0].PowScalar(3) }, []*ember.Tensor{x, unused}, CreateGraph(true))
	if !j[0].RequiresGrad() {
		t.Fatal("CreateGraph: the Jacobian has no graph")
	}
	if got := j[1].Float64s(); len(got) != 6 || got[0] != 0 || !j[1].Shape().Equal(ember.Shape{3, 2}) {
		t.Fatalf("unused input: %v %v", j[1].Shape(), got)
	}
	j[0].Sum().Backward() // d/dx Σ 3x² = 6x
	check(t, "d/dx of the jacobian", x.Grad(), fix{Shape: []int{3}, Data: []float64{3, -6, 12}})
	// a non-scalar function given to hessian
	defer func() {
		var ve *ember.ValueError
		if r := recover(); r == nil || !errors.As(r.(error), &ve) || !strings.Contains(ve.Msg, "should contain a single element") {
			t.Fatalf("hessian of a vector function: %v", r)
		}
	}()
	Hessian(func(xs []*ember.Tensor) *ember.Tensor { return xs[0].Exp() }, []*ember.Tensor{x})
}
