package ember

import (
	"slices"
	"strings"
	"testing"
)

// TestInPlaceInGraph: in-place ops on tensors of a graph are recorded as in
// PyTorch (values and gradients worked by hand): y = x·2; y += b gives
// dy/dx = 2, dy/db = 1; y *= w multiplies both by w; torchvision's
// BasicBlock idiom out += identity; a plain tensor given a
// requires-grad operand joins the graph (acc += l); copy_ sends the
// gradient to its source. A leaf that requires grad is refused.
func TestInPlaceInGraph(t *testing.T) {
	for _, dev := range testDevices() {
		f := func(v ...float32) *Tensor { return FromSlice(v, Shape{len(v)}, On(dev)) }
		x, b, w := f(1, 2, 3).SetRequiresGrad(true), f(5, 6, 7).SetRequiresGrad(true), f(2, 3, 4).SetRequiresGrad(true)
		y := x.MulScalar(2)
		y.AddInPlace(b)
		y.MulInPlace(w)
		if got := y.Float32s(); !slices.Equal(got, []float32{14, 30, 52}) { // (2x + b)·w
			t.Fatalf("%v: y = %v", dev, got)
		}
		if y.IsLeaf() || !y.RequiresGrad() {
			t.Fatalf("%v: y lost its graph", dev)
		}
		y.Sum().Backward()
		for name, c := range map[string]struct {
			g    *Tensor
			want []float32
		}{"x": {x.Grad(), []float32{4, 6, 8}}, "b": {b.Grad(), []float32{2, 3, 4}}, "w": {w.Grad(), []float32{7, 10, 13}}} {
			if got := c.g.Float32s(); !slices.Equal(got, c.want) {
				t.Errorf("%v: d/d%s = %v, want %v", dev, name, got, c.want)
			}
		}

		// out = relu(x·w + identity) with out += identity in place
		x.SetGrad(nil)
		out := x.Mul(w.Detach())
		out.AddInPlace(x)
		out.ReLU().Sum().Backward()
		if got := x.Grad().Float32s(); !slices.Equal(got, []float32{3, 4, 5}) { // w + 1
			t.Errorf("%v: out += identity: d/dx = %v, want [3 4 5]", dev, got)
		}

		// a plain accumulator joins the graph
		x.SetGrad(nil)
		acc := Zeros(Shape{3}, On(dev))
		acc.AddInPlace(x.MulScalar(3))
		acc.AddScaledInPlace(x, 2)
		acc.Sum().Backward()
		if got := x.Grad().Float32s(); !slices.Equal(got, []float32{5, 5, 5}) {
			t.Errorf("%v: acc += 3x; acc += 2x: d/dx = %v, want 5s", dev, got)
		}

		// copy_ into a buffer, then fill_ and sqrt_ in the graph
		x.SetGrad(nil)
		buf := Zeros(Shape{3}, On(dev))
		buf.CopyFrom(x.MulScalar(4))
		buf.SqrtInPlace() // sqrt(4x): d/dx = 1/sqrt(x)
		buf.Sum().Backward()
		if got := x.Grad().Float64s(); !AllClose(FromSlice(got, Shape{3}), FromSlice([]float64{1, 0.7071067811865476, 0.5773502691896258}, Shape{3}), 1e-6, 0) {
			t.Errorf("%v: sqrt_(copy_(4x)): d/dx = %v", dev, got)
		}
		z := x.MulScalar(1)
		z.FillInPlace(7)
		if got := z.Float32s(); !slices.Equal(got, []float32{7, 7, 7}) || !z.RequiresGrad() {
			t.Errorf("%v: fill_: %v (requires grad %v, want true as PyTorch)", dev, got, z.RequiresGrad())
		}

		// refused: a leaf (views: inplace_views_test.go)
		if err := Try(func() { x.AddScalarInPlace(1) }); err == nil || !strings.Contains(err.Error(), "a leaf Variable that requires grad") {
			t.Errorf("%v: leaf: %v, want an AutogradError", dev, err)
		}
		// a value an earlier op saved, then changed in place: Backward
		// fails as PyTorch's version counter makes it
		v := x.MulScalar(2)
		p := v.Mul(w) // saves v for w's gradient
		v.AddScalarInPlace(1)
		if err := Try(func() { p.Sum().Backward() }); err == nil || !strings.Contains(err.Error(), "modified by an inplace operation") {
			t.Errorf("%v: Backward through a value changed in place: %v", dev, err)
		}
		// y *= y: Mul saves y itself for its other operand, then y changes
		// (PyTorch: "modified by an inplace operation" at Backward; the
		// gradient 2y must not be computed from the new y)
		y4 := x.MulScalar(1)
		y4.MulInPlace(y4)
		if err := Try(func() { y4.Sum().Backward() }); err == nil || !strings.Contains(err.Error(), "modified by an inplace operation") {
			t.Errorf("%v: y *= y, Backward: %v", dev, err)
		}
		// reading y (a reduction) before changing it is fine, as in PyTorch
		x.SetGrad(nil)
		y2 := x.MulScalar(2)
		m := y2.Mean()
		y2.AddInPlace(b.Detach())
		m.Add(y2.Sum()).Backward() // d/dx: 2/3 + 2
		if got := x.Grad().Float64s(); !AllClose(FromSlice(got, Shape{3}), Full(Shape{3}, 2+2.0/3, Dtype(Float64)), 1e-6, 0) {
			t.Errorf("%v: mean, then += : d/dx = %v, want 2.667", dev, got)
		}
		// copy_ of a plain tensor into a graph tensor keeps it in the graph,
		// with no gradient to its old history (CopyBackwards)
		x.SetGrad(nil)
		y3 := x.MulScalar(2)
		y3.CopyFrom(Ones(Shape{3}, On(dev)))
		if !y3.RequiresGrad() {
			t.Fatalf("%v: copy_ into a graph tensor dropped requires_grad", dev)
		}
		y3.Sum().Backward()
		if got := x.Grad().Float32s(); !slices.Equal(got, []float32{0, 0, 0}) {
			t.Errorf("%v: copy_ over 2x: d/dx = %v, want zeros", dev, got)
		}
		// accumulating losses made inside Scopes into a tensor made outside
		x.SetGrad(nil)
		total := Zeros(Shape{}, On(dev))
		for i := range 2 {
			Scope(func() {
				loss := x.MulScalar(float64(i + 1)).Sum()
				total.AddInPlace(loss)
				loss.Backward()
			})
		}
		if got := total.Item(); got != 18 { // (1+2+3)·(1+2)
			t.Errorf("%v: total after two scopes = %v, want 18", dev, got)
		}
		// outside grad mode nothing is recorded and the memory is written
		NoGrad(func() {
			v := x.MulScalar(2)
			v.AddScalarInPlace(1)
			if v.RequiresGrad() || !slices.Equal(v.Float32s(), []float32{3, 5, 7}) {
				t.Errorf("%v: under NoGrad: %v", dev, v)
			}
		})
	}
}
