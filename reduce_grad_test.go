package ember

import (
	"fmt"
	"math"
	"testing"

	"github.com/emberml/ember/internal/testenv"
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
		if g[i] != want[i] && !(math.Abs(g[i]-want[i]) <= 1e-6+1e-6*math.Abs(want[i])) {
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

// TestLogSumExp: torch.logsumexp's values (-Inf rows stay -Inf, +Inf
// gives +Inf, empty slices -Inf) and gradient exp(x − result), NaN where
// both are infinite, as PyTorch 1.13 gives on the same input.
func TestLogSumExp(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	l2 := 2 + math.Log1p(math.Exp(-1)) // log(e + e²)
	s1, s2 := 1/(1+math.E), math.E/(1+math.E)
	for _, dev := range testDevices() {
		x := FromSlice([]float64{-inf, -inf, 1, inf, 1, 2, inf, inf}, Shape{4, 2}, On(dev), WithGrad())
		y := x.LogSumExp(Dims(1))
		if y.GradFn() != "LogsumexpBackward0" {
			t.Fatalf("grad_fn %q", y.GradFn())
		}
		wantGrad(t, "logsumexp values", y, []float64{-inf, inf, l2, inf})
		y.Sum().Backward()
		g := x.Grad().Float64s()
		want := []float64{nan, nan, 0, nan, s1, s2, nan, nan}
		for i := range want {
			if math.IsNaN(want[i]) != math.IsNaN(g[i]) || !math.IsNaN(want[i]) && math.Abs(g[i]-want[i]) > 1e-12 {
				t.Fatalf("logsumexp gradient %v, PyTorch %v", g, want)
			}
		}
		v := FromSlice([]float32{1, 2, 3, 4}, Shape{2, 2}, On(dev)).T().LogSumExp(Dims(-1), KeepDim())
		if !v.Shape().Equal(Shape{2, 1}) {
			t.Fatalf("keepdim shape %v", v.Shape())
		}
		wantGrad(t, "transposed", v, []float64{3 + math.Log1p(math.Exp(-2)), 4 + math.Log1p(math.Exp(-2))})
		wantGrad(t, "empty", Zeros(Shape{0, 3}, On(dev)).LogSumExp(Dims(0)), []float64{-inf, -inf, -inf})
		i := FromSlice([]int64{1, 2}, Shape{2}, On(dev)).LogSumExp()
		if i.DType() != Float32 {
			t.Fatalf("logsumexp of int64: %v, want float32", i.DType())
		}
		wantGrad(t, "int64", i, []float64{float64(float32(l2))})
	}
}

// TestSumLeadingDimPrecision: a float32 sum over a leading dim (a Linear
// bias's gradient, a column sum) keeps its error near float32's
// resolution however many rows it adds, as PyTorch's cascade sum: 10⁴
// rows of float32(0.1) sum to 1000.0000149 (worked in float64), which the
// row-by-row float32 accumulation missed by 1e-4 relative.
func TestSumLeadingDimPrecision(t *testing.T) {
	exact := float64(float32(0.1)) * 10000
	x := Full(Shape{10000, 5}, 0.1)
	for what, got := range map[string]*Tensor{
		"sum(0)":          x.Sum(Dims(0)),
		"mean(0)·n":       x.Mean(Dims(0)).MulScalar(10000),
		"T().sum(1)":      x.T().Sum(Dims(1)),
		"sum(0) of a row": x.Narrow(1, 2, 1).Sum(Dims(0)),
	} {
		for _, v := range got.Float64s() {
			if math.Abs(v-exact) > 2e-6*exact {
				t.Fatalf("%s = %.9g, want %.9g (within 2e-6 relative)", what, v, exact)
			}
		}
	}
}

// TestNorm: torch.linalg.vector_norm's values and gradients, worked by
// hand (and as PyTorch 1.13 gives them): rows [3 -4 0], [0 0 0] and
// [1 1 -2], each row's norm weighted 1, 2, 3 in the loss. The zero row's
// gradient is 0, and so is that of a zero element for p < 1 (not NaN).
func TestNorm(t *testing.T) {
	s2, s6 := math.Sqrt2, math.Sqrt(6)
	r := 2 + s2 // Σ|x|^0.5 of [1 1 -2]
	for _, c := range []struct {
		p         float64
		val, grad []float64
	}{
		{2, []float64{5, 0, s6}, []float64{0.6, -0.8, 0, 0, 0, 0, 3 / s6, 3 / s6, -6 / s6}},
		{1, []float64{7, 0, 4}, []float64{1, -1, 0, 0, 0, 0, 3, 3, -3}},
		{0.5, []float64{math.Pow(math.Sqrt(3)+2, 2), 0, r * r}, []float64{(math.Sqrt(3) + 2) / math.Sqrt(3), -(math.Sqrt(3) + 2) / 2, 0, 0, 0, 0, 3 * r, 3 * r, -3 * r / s2}},
		{math.Inf(1), []float64{4, 0, 2}, []float64{0, -1, 0, 0, 0, 0, 0, 0, -3}},
		{math.Inf(-1), []float64{0, 0, 1}, []float64{0, 0, 0, 0, 0, 0, 1.5, 1.5, 0}},
		{0, []float64{2, 0, 3}, []float64{0, 0, 0, 0, 0, 0, 0, 0, 0}},
	} {
		for _, dev := range testDevices() {
			x := FromSlice([]float64{3, -4, 0, 0, 0, 0, 1, 1, -2}, Shape{3, 3}, On(dev), WithGrad())
			y := x.Norm(c.p, Dims(1))
			wantGrad(t, fmt.Sprintf("norm %v", c.p), y, c.val)
			if y.GradFn() != "LinalgVectorNormBackward0" {
				t.Fatalf("norm %v: grad_fn %q", c.p, y.GradFn())
			}
			y.Mul(FromSlice([]float64{1, 2, 3}, Shape{3}, On(dev))).Sum().Backward()
			wantGrad(t, fmt.Sprintf("norm %v gradient", c.p), x.Grad(), c.grad)
		}
	}
	v := FromSlice([]float32{3, -4}, Shape{2}).Norm(2, KeepDim())
	if !v.Shape().Equal(Shape{1}) || v.Item() != 5 {
		t.Fatalf("keepdim norm: %v %v", v.Shape(), v.Float64s())
	}
	testenv.Raises[*DTypeError](t, "integer norm", func() { FromSlice([]int64{1}, Shape{1}).Norm(2) })
}
