package ember

import "testing"

// TestLinearBF16 is worked by hand: x = [[256, 1], [1, 2]], w = [[1, 1],
// [1, 0]], b = [1, 0.25] in bfloat16. out[0][0] = 256+1+1 = 258, a
// bfloat16 (spacing 2 above 256), where rounding the product 257 first
// would give 256 (a tie, to even) and then 256 again: the product and bias
// are rounded once. With an output gradient of ones, x's gradient is
// g·w = [[2, 1], [2, 1]], w's gᵀ·x = [[257, 3], [257, 3]] rounded to
// [[256, 3], [256, 3]] (257 a tie, to even) and b's [2, 2]; w and b's land
// in float32 leaves. out[0][1] = 256.25 rounds to 256.
func TestLinearBF16(t *testing.T) {
	x := FromSlice([]float32{256, 1, 1, 2}, Shape{2, 2}).Cast(BFloat16).SetRequiresGrad(true)
	w := FromSlice([]float32{1, 1, 1, 0}, Shape{2, 2}).SetRequiresGrad(true)
	b := FromSlice([]float32{1, 0.25}, Shape{2}).SetRequiresGrad(true)
	out := Linear(x, w.Cast(BFloat16), b.Cast(BFloat16))
	check := func(name string, got *Tensor, dt DType, want []float64) {
		t.Helper()
		if got.DType() != dt {
			t.Fatalf("%s dtype %v, want %v", name, got.DType(), dt)
		}
		g := got.Cast(Float64).Float64s()
		for i := range want {
			if g[i] != want[i] {
				t.Fatalf("%s = %v, want %v", name, g, want)
			}
		}
	}
	check("out", out, BFloat16, []float64{258, 256, 4, 1.25})
	out.Sum().Backward()
	check("x grad", x.Grad(), BFloat16, []float64{2, 1, 2, 1})
	check("w grad", w.Grad(), Float32, []float64{256, 3, 256, 3})
	check("b grad", b.Grad(), Float32, []float64{2, 2})
}
