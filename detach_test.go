package ember

import (
	"errors"
	"strings"
	"testing"
)

// TestDetachInPlace: detach_ as PyTorch 1.13 — a graph tensor and a leaf
// stop requiring grad and lose their grad_fn, a buffer written through
// views from graph tensors can be reused for the next step once detached,
// and a view (also one made in NoGrad) is refused with PyTorch's words.
func TestDetachInPlace(t *testing.T) {
	for _, dev := range testDevices() {
		x := Ones(Shape{3}, On(dev), WithGrad())
		y := x.MulScalar(2)
		if got := y.DetachInPlace(); got != y || y.RequiresGrad() || y.GradFn() != "" || !y.IsLeaf() {
			t.Errorf("%v: after detach_: requires_grad %v, grad_fn %q, is_leaf %v", dev, y.RequiresGrad(), y.GradFn(), y.IsLeaf())
		}
		if x.DetachInPlace(); x.RequiresGrad() {
			t.Errorf("%v: a leaf still requires grad after detach_", dev)
		}

		// buf[:2] = w*3 each step; without detach_ the second Backward
		// reaches the first step's freed graph
		w := Ones(Shape{2}, On(dev), WithGrad())
		buf := Zeros(Shape{4}, On(dev))
		for step := range 2 {
			buf.Narrow(0, 0, 2).CopyFrom(w.MulScalar(3))
			if buf.GradFn() != "CopySlices" {
				t.Fatalf("%v step %d: buf's grad_fn %q, want CopySlices", dev, step, buf.GradFn())
			}
			buf.Sum().Backward()
			buf.DetachInPlace()
		}
		if dev.Type != MetaType {
			if g := w.Grad().Float32s(); g[0] != 6 || g[1] != 6 {
				t.Errorf("%v: w.grad %v, want [6 6]", dev, g)
			}
		}

		z := Ones(Shape{4}, On(dev), WithGrad()).MulScalar(2)
		var ng *Tensor
		NoGrad(func() { ng = z.Narrow(0, 0, 2) })
		for name, v := range map[string]*Tensor{"view": z.Narrow(0, 0, 2), "no-grad view": ng} {
			var ae *AutogradError
			if err := Try(func() { v.DetachInPlace() }); !errors.As(err, &ae) || !strings.Contains(err.Error(), "Can't detach views in-place. Use detach() instead.") {
				t.Errorf("%v %s: %v, want PyTorch's AutogradError", dev, name, err)
			}
		}
	}
}
