package ember

import (
	"math"
	"testing"
)

// TestReLUGradBF16 is worked by hand: ReLU's gradient passes g where the
// output is positive or NaN and is 0 where it is zero (inputs ≤ 0), as
// PyTorch's threshold_backward; 9 elements cover the fused kernel's
// four-element loop and its tail.
func TestReLUGradBF16(t *testing.T) {
	nan := math.NaN()
	in := []float64{-1, 0, 2, nan, math.Copysign(0, -1), 1e-3, -3, math.Inf(1), 0.5}
	want := []float64{0, 0, 3, 3, 0, 3, 0, 3, 3}
	for _, dt := range []DType{BFloat16, Float16} {
		x := FromSlice(in, Shape{9}).Cast(dt).SetRequiresGrad(true)
		x.ReLU().MulScalar(3).Sum().Backward()
		if x.Grad().DType() != dt {
			t.Fatalf("%v: grad %v", dt, x.Grad().DType())
		}
		got := x.Grad().Cast(Float64).Float64s()
		for i := range want {
			if got[i] != want[i] || math.Signbit(got[i]) {
				t.Fatalf("%v relu grad = %v, want %v", dt, got, want)
			}
		}
	}
}
