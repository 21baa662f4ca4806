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
// gradient to its source. Tensors whose memory is shared are refused.
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

		// refused: a leaf, a view, a tensor with a view, one saved for backward
		for name, g := range map[string]func(){
			"leaf":         func() { x.AddScalarInPlace(1) },
			"view":         func() { x.MulScalar(2).Narrow(0, 0, 2).AddScalarInPlace(1) },
			"has a view":   func() { v := x.MulScalar(2); _ = v.Narrow(0, 0, 2); v.AddScalarInPlace(1) },
			"saved by mul": func() { v := x.MulScalar(2); v.Mul(w); v.AddScalarInPlace(1) },
		} {
			err := Try(g)
			if _, ok := err.(*AutogradError); !ok {
				t.Errorf("%v: %s: %v, want an AutogradError", dev, name, err)
			} else if name != "leaf" && !strings.Contains(err.Error(), "shares its memory") {
				t.Errorf("%v: %s: %v", dev, name, err)
			}
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
