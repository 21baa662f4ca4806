package ember

import (
	"math"
	"testing"
)

// Gradients of reductions at the points where the textbook formula is 0/0,
// against PyTorch 1.13 (the values below are what torch.autograd gives on
// the same inputs; each is small enough to check by hand).

func wantGrad(t *testing.T, what string, got *Tensor, want []float64) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: no gradient", what)
	}
	g := got.Float64s()
	if len(g) != len(want) {
		t.Fatalf("%s: %d gradient values, want %d", what, len(g), len(want))
	}
	for i := range want {
		if !(math.Abs(g[i]-want[i]) <= 1e-6+1e-6*math.Abs(want[i])) {
			t.Fatalf("%s: gradient %v, PyTorch %v", what, g, want)
		}
	}
}

// TestProdGradWithZeros: prod's gradient is the product of the other
// elements, also where the input holds zeros (one zero: only the zero's
// own gradient is non-zero; two or more: all zero). It was prod/x, NaN
// there.
func TestProdGradWithZeros(t *testing.T) {
	for _, dev := range testDevices() {
		// rows [1 0 3] (one zero), [0 0 2] (two), [4 5 6] (none)
		data := []float64{1, 0, 3, 0, 0, 2, 4, 5, 6}
		x := FromSlice(data, Shape{3, 3}, On(dev), WithGrad())
		x.Prod().Backward()
		wantGrad(t, "prod()", x.Grad(), make([]float64, 9))

		x = FromSlice(data, Shape{3, 3}, On(dev), WithGrad())
		x.Prod(Dims(1)).Mul(FromSlice([]float64{1, 2, 3}, Shape{3}, On(dev))).Sum().Backward()
		wantGrad(t, "prod(1)", x.Grad(), []float64{0, 3, 0, 0, 0, 0, 90, 72, 60})

		x = FromSlice(data, Shape{3, 3}, On(dev), WithGrad())
		x.Prod(Dims(0)).Mul(FromSlice([]float64{1, 2, 3}, Shape{3}, On(dev))).Sum().Backward()
		wantGrad(t, "prod(0)", x.Grad(), []float64{0, 0, 36, 4, 0, 54, 0, 0, 18})

		x = FromSlice([]float64{1, 2, 3}, Shape{3}, On(dev), WithGrad())
		x.Prod().Backward()
		wantGrad(t, "prod() without zeros", x.Grad(), []float64{6, 3, 2})

		// two dims of a permuted (non-contiguous) view, keepdim: torch's
		// x.permute(1,0,2).prod(2, keepdim=True).prod(0, keepdim=True)
		x = FromSlice([]float64{1, 0, 2, 3, 4, 5, 0, 6, 7, 8, 9, 2}, Shape{3, 2, 2}, On(dev), WithGrad())
		y := x.Permute(1, 0, 2).Prod(Dims(0, 2), KeepDim())
		if !y.Shape().Equal(Shape{1, 3, 1}) {
			t.Fatalf("prod(0, 2) keepdim: shape %v", y.Shape())
		}
		wantGrad(t, "prod(0, 2) value", y, []float64{0, 0, 1008})
		y.Mul(FromSlice([]float64{1, 2, 3}, Shape{1, 3, 1}, On(dev))).Sum().Backward()
		wantGrad(t, "prod(0, 2)", x.Grad(), []float64{0, 6, 0, 0, 0, 0, 240, 0, 432, 378, 336, 1512})

		s := Scalar(3, On(dev), Dtype(Float64), WithGrad())
		s.Prod().Backward()
		wantGrad(t, "prod of 0-d", s.Grad(), []float64{1})

		e := Zeros(Shape{0, 2}, On(dev), WithGrad())
		e.Prod(Dims(0)).Sum().Backward()
		if !e.Grad().Shape().Equal(Shape{0, 2}) {
			t.Fatalf("prod of empty: gradient shape %v", e.Grad().Shape())
		}
	}
}

// TestStdGradZeroSpread: the gradient of std where std is 0 is 0, as
// PyTorch's std_backward (it was 0/0 = NaN).
func TestStdGradZeroSpread(t *testing.T) {
	for _, dev := range testDevices() {
		x := FromSlice([]float64{1, 2, 2, 2}, Shape{2, 2}, On(dev), WithGrad())
		x.Std(Dims(1)).Sum().Backward()
		wantGrad(t, "std(1)", x.Grad(), []float64{-math.Sqrt2 / 2, math.Sqrt2 / 2, 0, 0})

		x = FromSlice([]float32{5, 5, 5}, Shape{3}, On(dev), WithGrad())
		x.Std().Backward()
		wantGrad(t, "std() of a constant", x.Grad(), []float64{0, 0, 0})
	}
}

// TestMaxGradNaN: torch.max(t) (no dim) gives a NaN result's gradient to
// the NaNs, shared evenly, as to tied maxima (it was NaN everywhere).
func TestMaxGradNaN(t *testing.T) {
	nan := math.NaN()
	for _, dev := range testDevices() {
		x := FromSlice([]float64{nan, 1, nan}, Shape{3}, On(dev), WithGrad())
		x.Max().Backward()
		wantGrad(t, "max()", x.Grad(), []float64{0.5, 0, 0.5})

		x = FromSlice([]float64{nan, 1, nan}, Shape{3}, On(dev), WithGrad())
		x.Min().Backward()
		wantGrad(t, "min()", x.Grad(), []float64{0.5, 0, 0.5})

		x = FromSlice([]float64{1, 3, 3}, Shape{3}, On(dev), WithGrad())
		x.Max().Backward()
		wantGrad(t, "max() ties", x.Grad(), []float64{0, 0.5, 0.5})
	}
}
