package ember

import "testing"

// TestAutocastKeepsFloat64: autocast casts floating operands other than
// float64 (torch's is_eligible): under Autocast(CPU, BFloat16) a float64
// MatMul, Linear, Baddbmm and Conv2d stay float64 (torch's matmul on the
// fixture's values, bit for bit), and pooling a float32 input to 2×3 stays
// float32.
func TestAutocastKeepsFloat64(t *testing.T) {
	halfOpsCases(t, func(t *testing.T, c halfOpCase) {
		a, b := c.Inputs[0].tensor(halfOpsDev), c.Inputs[1].tensor(halfOpsDev)
		var y *Tensor
		Autocast(CPU, BFloat16, func() { y = a.MatMul(b) })
		checkHalfOut(t, "matmul", y, c.Out, 0)
	}, "autocast_matmul")
	x := Randn(Shape{2, 3, 6, 6}, Dtype(Float64))
	w := Randn(Shape{4, 3, 3, 3}, Dtype(Float64))
	lw, lb := Randn(Shape{5, 6}, Dtype(Float64)), Randn(Shape{5}, Dtype(Float64))
	Autocast(CPU, BFloat16, func() {
		for name, y := range map[string]*Tensor{
			"linear":  Linear(x, lw, lb),
			"conv2d":  Conv2d(x, w, nil, [2]int{1, 1}, [2]int{0, 0}, [2]int{1, 1}, 1),
			"baddbmm": Baddbmm(x.Reshape(6, 6, 6), x.Reshape(6, 6, 6), x.Reshape(6, 6, 6), 0.5, 2),
			"sum":     x.Sum(),
		} {
			if y.DType() != Float64 {
				t.Errorf("%s on float64 under autocast: %v", name, y.DType())
			}
		}
		if y := AdaptiveAvgPool2d(x.Cast(Float32), 2, 3); y.DType() != Float32 {
			t.Errorf("adaptive_avg_pool2d on float32 under autocast: %v", y.DType())
		}
		// float32 still goes to bfloat16, Baddbmm's too (torch 1.13's CPU
		// lower_precision_fp list has baddbmm)
		if y := x.Cast(Float32).Reshape(6, 36).MatMul(x.Cast(Float32).Reshape(36, 6)); y.DType() != BFloat16 {
			t.Errorf("float32 matmul under autocast: %v", y.DType())
		}
		x3 := x.Cast(Float32).Reshape(6, 6, 6)
		if y := Baddbmm(x3, x3, x3, 0.5, 2); y.DType() != BFloat16 {
			t.Errorf("float32 baddbmm under autocast: %v", y.DType())
		}
	})
}
