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

// TestNanToNumHalfDefaults: NanToNum's default ±Inf replacements on
// float16 and bfloat16 are their own largest finite values (65504 and
// 3.3895e38, as torch.nan_to_num), not float32's, which rounded back to
// ±Inf.
func TestNanToNumHalfDefaults(t *testing.T) {
	inf := math.Inf(1)
	for _, dev := range testDevices() {
		x := FromSlice([]float32{float32(math.NaN()), float32(inf), float32(-inf), 2}, Shape{4}, On(dev))
		for dt, m := range map[DType]float64{Float16: 65504, BFloat16: 3.3895313892515355e38} {
			got := x.Cast(dt).NanToNum(0, inf, -inf)
			if got.DType() != dt || !AllClose(got, FromSlice([]float64{0, m, -m, 2}, Shape{4}, On(dev)).Cast(dt), 0, 0) {
				t.Fatalf("%v nan_to_num = %v, PyTorch [0 %v %v 2]", dt, got.Float64s(), m, -m)
			}
			if got := x.Cast(dt).NanToNum(1, 5, -5).Float64s(); got[0] != 1 || got[1] != 5 || got[2] != -5 {
				t.Fatalf("%v nan_to_num(1, 5, -5) = %v", dt, got)
			}
		}
	}
}

// TestClampBoolFractional: a Bool tensor clamped to a fractional bound is
// Float32, as PyTorch (clamp(tensor([True, False]), 0, 0.5) = [0.5, 0]);
// the bound was truncated into Int64 ([0 0]).
func TestClampBoolFractional(t *testing.T) {
	b := FromSlice([]bool{true, false}, Shape{2})
	if got := b.Clamp(0, 0.5); got.DType() != Float32 || got.Float64s()[0] != 0.5 || got.Float64s()[1] != 0 {
		t.Fatalf("clamp(bool, 0, 0.5) = %v %v, want float32 [0.5 0]", got.DType(), got.Float64s())
	}
	if got := b.Clamp(0, 1); got.DType() != Int64 || got.Float64s()[0] != 1 {
		t.Fatalf("clamp(bool, 0, 1) = %v %v, want int64 [1 0]", got.DType(), got.Float64s())
	}
}
