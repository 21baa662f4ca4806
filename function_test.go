package ember

import (
	"errors"
	"math"
	"testing"
)

// Functions for the tests of Apply: each Backward is worked by hand and
// checked against finite differences.

// mulAdd is a·b + c with b and c broadcast to a's shape; Backward returns
// a's-shape gradients for b and c and leaves the summing to the engine.
type mulAdd struct{}

func (mulAdd) Name() string { return "MulAddBackward" }

func (mulAdd) Forward(ctx *FunctionCtx, in []*Tensor) *Tensor {
	a, b := in[0], in[1]
	ctx.SaveForBackward(a, b)
	out := a.Mul(b)
	if in[2] != nil {
		out = out.Add(in[2])
	}
	return out
}

func (mulAdd) Backward(ctx *FunctionCtx, g *Tensor) []*Tensor {
	a, b := ctx.Saved()[0], ctx.Saved()[1]
	gs := make([]*Tensor, 3)
	if ctx.NeedsInputGrad(0) {
		gs[0] = g.Mul(b)
	}
	if ctx.NeedsInputGrad(1) {
		gs[1] = g.Mul(a)
	}
	if ctx.NeedsInputGrad(2) {
		gs[2] = g
	}
	return gs
}

// softplusScaled is s·log(1 + e^x): it saves its output-side intermediate
// (the sigmoid) and keeps s and the number of calls in its fields.
type softplusScaled struct {
	s         float64
	backwards int
}

func (f *softplusScaled) Name() string { return "SoftplusScaledBackward" }

func (f *softplusScaled) Forward(ctx *FunctionCtx, in []*Tensor) *Tensor {
	x := in[0]
	ctx.SaveForBackward(x.Sigmoid())
	// max(x, 0) + log1p(e^-|x|), stable
	return x.ReLU().Add(x.Abs().Neg().Exp().Log1p()).MulScalar(f.s)
}

func (f *softplusScaled) Backward(ctx *FunctionCtx, g *Tensor) []*Tensor {
	f.backwards++
	return []*Tensor{g.Mul(ctx.Saved()[0]).MulScalar(f.s)}
}

func TestFunctionGradcheck(t *testing.T) {
	s34 := Shape{3, 4}
	gradcheck(t, "mul_add", func(xs []*Tensor) *Tensor { return Apply(mulAdd{}, xs[0], xs[1], xs[2]) },
		vals(s34, -1, 1, 1), vals(Shape{4}, -2, 2, 2), vals(Shape{3, 1}, -1, 1, 3))
	gradcheck(t, "mul_add no bias", func(xs []*Tensor) *Tensor { return Apply(mulAdd{}, xs[0], xs[1], nil) },
		vals(s34, -1, 1, 4), vals(s34, -1, 1, 5))
	// composed with ember's ops on both sides
	gradcheck(t, "softplus_scaled", func(xs []*Tensor) *Tensor {
		return Apply(&softplusScaled{s: 1.5}, xs[0].Mul(xs[1])).Sum(Dims(1))
	}, vals(s34, -3, 3, 6), vals(s34, -1, 1, 7))
	// a hand-worked value: 2·log(1 + e^0) = 2·ln 2, gradient 2·σ(0) = 1
	for _, dev := range testDevices() {
		x := Zeros(Shape{1}, On(dev), Dtype(Float64)).SetRequiresGrad(true)
		y := Apply(&softplusScaled{s: 2}, x)
		y.Sum().Backward()
		if v, g := y.Item(), x.Grad().Item(); math.Abs(v-2*math.Ln2) > 1e-15 || g != 1 || y.Device() != dev {
			t.Fatalf("on %v: softplus_scaled(0) = %v (on %v), gradient %v; want 2·ln 2 = %v, 1", dev, v, y.Device(), g, 2*math.Ln2)
		}
	}
}

func TestFunctionGraph(t *testing.T) {
	a := FromSlice([]float64{1, 2, 3}, nil).SetRequiresGrad(true)
	b := FromSlice([]float64{4, 5, 6}, nil)
	out := Apply(mulAdd{}, a, b, nil)
	if out.GradFn() != "MulAddBackward" || !out.RequiresGrad() || out.IsLeaf() {
		t.Fatalf("grad_fn %q, requires grad %v", out.GradFn(), out.RequiresGrad())
	}
	out.Sum().Backward()
	if g := a.Grad().Float64s(); g[0] != 4 || g[1] != 5 || g[2] != 6 || b.Grad() != nil {
		t.Fatalf("gradients %v, %v", g, b.Grad())
	}

	// no input requiring grad, or grad mode off: no node
	if o := Apply(mulAdd{}, b, b, nil); o.RequiresGrad() || o.GradFn() != "" {
		t.Fatalf("constant inputs recorded %q", o.GradFn())
	}
	NoGrad(func() {
		if o := Apply(mulAdd{}, a, b, nil); o.RequiresGrad() {
			t.Fatal("NoGrad recorded a node")
		}
	})

	// Backward runs once per pass, and saved tensors are checked
	f := &softplusScaled{s: 1}
	y := Apply(f, a)
	y.Sum().BackwardRetain()
	y.Sum().Backward()
	if f.backwards != 2 {
		t.Fatalf("Backward ran %d times, want 2", f.backwards)
	}
	if err := Try(func() { y.Sum().Backward() }); !isAutogradError(err) {
		t.Fatalf("a second Backward without retain: %v", err)
	}
	x := FromSlice([]float64{1, 2}, nil).SetRequiresGrad(true)
	h := x.MulScalar(2)
	z := Apply(saveInput{}, h)
	NoGrad(func() { h.AddScalarInPlace(1) })
	if err := Try(func() { z.Sum().Backward() }); !isAutogradError(err) {
		t.Fatalf("Backward after a saved input changed in place: %v", err)
	}

	// Forward may return its input; Apply records a fresh tensor
	id := Apply(identity{}, a)
	if id == a || id.GradFn() != "IdentityBackward" {
		t.Fatalf("identity: %v %q", id == a, id.GradFn())
	}

	// misbehaving Backwards panic with an *AutogradError naming the function
	for _, bad := range []badGrads{{n: 2}, {shape: Shape{2}}, {shape: Shape{3}, ints: true}} {
		o := Apply(bad, a)
		err := Try(func() { o.Sum().Backward() })
		var ae *AutogradError
		if !errors.As(err, &ae) || ae.Op != "BadBackward" {
			t.Fatalf("%+v: %v", bad, err)
		}
	}
}

func isAutogradError(err error) bool {
	var ae *AutogradError
	return errors.As(err, &ae)
}

// saveInput saves its input and returns a copy of it.
type saveInput struct{}

func (saveInput) Name() string { return "SaveInputBackward" }
func (saveInput) Forward(ctx *FunctionCtx, in []*Tensor) *Tensor {
	ctx.SaveForBackward(in[0])
	return in[0].Clone()
}
func (saveInput) Backward(ctx *FunctionCtx, g *Tensor) []*Tensor { return []*Tensor{g} }

// identity returns its input itself.
type identity struct{}

func (identity) Name() string                                   { return "IdentityBackward" }
func (identity) Forward(ctx *FunctionCtx, in []*Tensor) *Tensor { return in[0] }
func (identity) Backward(ctx *FunctionCtx, g *Tensor) []*Tensor { return []*Tensor{g} }

// badGrads returns n gradients (1 when 0) of shape (g's when nil), of
// dtype Int64 when ints.
type badGrads struct {
	n     int
	shape Shape
	ints  bool
}

func (badGrads) Name() string                                   { return "BadBackward" }
func (badGrads) Forward(ctx *FunctionCtx, in []*Tensor) *Tensor { return in[0].MulScalar(2) }
func (f badGrads) Backward(ctx *FunctionCtx, g *Tensor) []*Tensor {
	shape, dt := f.shape, g.DType()
	if shape == nil {
		shape = g.Shape()
	}
	if f.ints {
		dt = Int64
	}
	gs := make([]*Tensor, max(f.n, 1))
	for i := range gs {
		gs[i] = Ones(shape, Dtype(dt))
	}
	return gs
}
