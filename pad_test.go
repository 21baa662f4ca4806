package ember

import (
	"math"
	"testing"

	"github.com/emberml/ember/internal/testenv"
)

// TestPad: torch.nn.functional.pad's constant mode on [[1 2 3] [4 5 6]],
// worked by hand: pads and crops of the last two dims, the gradient of
// sum(y · (1, 2, ...)) (each kept element's weight at its new place, 0
// for cropped ones).
func TestPad(t *testing.T) {
	for _, c := range []struct {
		pad         []int
		shape       Shape
		value, grad []float64
	}{
		{[]int{1, 2}, Shape{2, 6}, []float64{-0.5, 1, 2, 3, -0.5, -0.5, -0.5, 4, 5, 6, -0.5, -0.5}, []float64{2, 3, 4, 8, 9, 10}},
		{[]int{1, 0, 0, 1}, Shape{3, 4}, []float64{-0.5, 1, 2, 3, -0.5, 4, 5, 6, -0.5, -0.5, -0.5, -0.5}, []float64{2, 3, 4, 6, 7, 8}},
		{[]int{-1, 1}, Shape{2, 3}, []float64{2, 3, -0.5, 5, 6, -0.5}, []float64{0, 1, 2, 0, 4, 5}},
		{[]int{0, 0, 2, -1}, Shape{3, 3}, []float64{-0.5, -0.5, -0.5, -0.5, -0.5, -0.5, 1, 2, 3}, []float64{7, 8, 9, 0, 0, 0}},
		{nil, Shape{2, 3}, []float64{1, 2, 3, 4, 5, 6}, []float64{1, 2, 3, 4, 5, 6}},
	} {
		for _, dev := range testDevices() {
			x := Arange(1, 7, 1, On(dev), Dtype(Float64)).Reshape(2, 3).SetRequiresGrad(true)
			y := Pad(x, c.pad, -0.5)
			if !y.Shape().Equal(c.shape) || y.GradFn() != "ConstantPadNdBackward0" {
				t.Fatalf("pad %v: shape %v grad_fn %q, want %v", c.pad, y.Shape(), y.GradFn(), c.shape)
			}
			wantGrad(t, "pad value", y, c.value)
			y.Mul(Arange(1, float64(y.NumElements())+1, 1, On(dev), Dtype(Float64)).Reshape(y.Shape()...)).Sum().Backward()
			wantGrad(t, "pad gradient", x.Grad(), c.grad)
		}
	}
	if got := Pad(FromSlice([]int64{1, 2}, Shape{2}), []int{1, 1}, 7); got.DType() != Int64 || got.Float64s()[0] != 7 {
		t.Fatalf("int64 pad: %v %v", got.DType(), got.Float64s())
	}
	x := Ones(Shape{2, 3})
	testenv.Raises[*ValueError](t, "odd pad", func() { Pad(x, []int{1}, 0) })
	testenv.Raises[*ShapeError](t, "too many pads", func() { Pad(x, []int{1, 1, 1, 1, 1, 1}, 0) })
	testenv.Raises[*ShapeError](t, "crop past the size", func() { Pad(x, []int{-2, -2}, 0) })
	testenv.Raises[*ShapeError](t, "crop far past", func() { Pad(x, []int{math.MinInt, 0}, 0) })
	testenv.Raises[*ShapeError](t, "huge pad", func() { Pad(x, []int{math.MaxInt, math.MaxInt}, 0) })
	testenv.Raises[*ValueError](t, "value past int64", func() { Pad(x.Cast(Int64), []int{1, 1}, 1e30) })
}
