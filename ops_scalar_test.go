package ember

import (
	"math"
	"testing"
)

// TestScalarPastDTypeRange: a scalar operand past a float tensor's range
// rounds to ±Inf in the op (PyTorch: half(1) + 1e5 = inf), and one past
// int64's range is a float scalar (PyTorch: tensor([5]) > 1e30 is False);
// both were ValueErrors (the scalar was made in the tensor's dtype).
func TestScalarPastDTypeRange(t *testing.T) {
	for _, dev := range testDevices() {
		h := Ones(Shape{2}, On(dev), Dtype(Float16))
		if got := h.AddScalar(1e5).Float64s(); !math.IsInf(got[0], 1) || !math.IsInf(got[1], 1) {
			t.Fatalf("half + 1e5 = %v, want [+Inf +Inf]", got)
		}
		if r := h.MulScalar(-1e5); r.DType() != Float16 || !math.IsInf(r.Float64s()[0], -1) {
			t.Fatalf("half * -1e5 = %v %v, want float16 -Inf", r.DType(), r.Float64s())
		}
		if got := h.AddScalar(2).Float64s(); got[0] != 3 {
			t.Fatalf("half + 2 = %v", got)
		}
		f := FromSlice([]float32{1, -1}, Shape{2}, On(dev))
		if got := f.MulScalar(1e39).Float64s(); !math.IsInf(got[0], 1) || !math.IsInf(got[1], -1) {
			t.Fatalf("float32 * 1e39 = %v, want [+Inf -Inf]", got)
		}
		i := FromSlice([]int64{5, -7}, Shape{2}, On(dev))
		for name, got := range map[string]*Tensor{"gt": i.GtScalar(1e30), "eq": i.EqScalar(-1e30), "lt": i.LtScalar(-1e30)} {
			if b := got.Bools(); got.DType() != Bool || b[0] || b[1] {
				t.Fatalf("int64 %s ±1e30 = %v, want [false false]", name, b)
			}
		}
		if b := i.LtScalar(1e30).Bools(); !b[0] || !b[1] {
			t.Fatalf("int64 < 1e30 = %v, want [true true]", b)
		}
	}
}
