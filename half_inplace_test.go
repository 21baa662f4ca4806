package ember

import (
	"math"
	"testing"
)

// TestHalfInPlaceWider: in-place ops compute in the result type of their
// operands and round once on the store (torch), not on the operand
// first: bfloat16 += float32 or float64 (and the other two-byte type)
// against torch's add_, sub_, mul_, div_; float16 too (torch 1.13 has
// those CPU kernels).
func TestHalfInPlaceWider(t *testing.T) {
	halfOpsCases(t, func(t *testing.T, c halfOpCase) {
		x, o := c.Inputs[0].tensor(halfOpsDev), c.Inputs[1].tensor(halfOpsDev)
		view := x.Narrow(0, 0, x.Shape()[0]) // written through a view
		switch c.Op {
		case "add_":
			view.AddInPlace(o)
		case "sub_":
			view.SubInPlace(o)
		case "mul_":
			view.MulInPlace(o)
		case "div_":
			view.DivInPlace(o)
		}
		checkHalfOut(t, c.Op, x, c.Out, 0)
		checkHalfOut(t, c.Op+" operand", o, c.Inputs[1], 0) // untouched, not released
	}, "add_", "sub_", "mul_", "div_")
	// the reviewer's case: 1 + 0.00392 = 1.00392, nearest bfloat16 1.0078125
	// (bf16 steps by 2^-7 above 1); rounding the operand first gave 1
	x := FromSlice([]float32{1}, nil, Dtype(BFloat16))
	x.AddInPlace(FromSlice([]float32{0.00392}, nil))
	if got := x.Float32s()[0]; got != 1.0078125 {
		t.Errorf("bf16 1 += float32 0.00392: %v, torch 1.0078125", got)
	}
	// float32 += float64: computed in float64, rounded once:
	// 1 + (2^-24 + 2^-50) is above the midway point 1 + 2^-24, so 1 + 2^-23;
	// the operand rounded to float32 first is 2^-24, the tie, and 1 stays 1
	f := FromSlice([]float32{1}, nil)
	f.AddInPlace(FromSlice([]float64{0x1p-24 + 0x1p-50}, nil))
	if got := f.Float32s()[0]; got != 1+0x1p-23 {
		t.Errorf("float32 1 += float64 2^-24+2^-50: %v, want 1+2^-23", got)
	}
}

// TestHalfInPlaceFused: AddcmulInPlace, AddcdivInPlace and
// AddScaledInPlace on two-byte tensors compute t + (value·a)·b,
// t + (value·a)/b and t + alpha·o in float32 from the values and round
// once (torch's bf16 kernels; float16 emulated by the same rule; alpha
// rounded to the two-byte type as torch 1.13's vectorised bf16 add_),
// and a float32 t plus alpha times a two-byte o stays float32 throughout.
func TestHalfInPlaceFused(t *testing.T) {
	halfOpsCases(t, func(t *testing.T, c halfOpCase) {
		in := make([]*Tensor, len(c.Inputs))
		for i, h := range c.Inputs {
			in[i] = h.tensor(halfOpsDev)
		}
		x := in[0]
		switch c.Op {
		case "addcmul_":
			x.AddcmulInPlace(in[1], in[2], c.arg("value"))
		case "addcdiv_":
			x.AddcdivInPlace(in[1], in[2], c.arg("value"))
		case "add_alpha":
			x.AddScaledInPlace(in[1], c.arg("alpha"))
		}
		if x.DType() == Float32 {
			// torch's vectorised float32 add_ with alpha is a fused
			// multiply-add; ember's float32 path rounds alpha·o to float32
			// first: within a unit of alpha·o and one of the result
			// (the old path rounded alpha·o to the two-byte type: 2^-9 of it)
			want := c.Out.tensor(halfOpsDev).Float32s()
			ov := in[1].Float32s()
			for i, g := range x.Float32s() {
				w, p := float64(want[i]), math.Abs(c.arg("alpha")*float64(ov[i]))
				if d := math.Abs(float64(g) - w); d > (p+math.Abs(w))*0x1p-23 {
					t.Errorf("[%d] %v, torch %v", i, g, w)
				}
			}
		} else {
			checkHalfOut(t, c.Op, x, c.Out, 0)
		}
		for i := 1; i < len(in); i++ {
			checkHalfOut(t, c.Op+" operand", in[i], c.Inputs[i], 0)
		}
	}, "addcmul_", "addcdiv_", "add_alpha")
	// the reviewer's case by hand: bf16 1.1 is 1.1015625; 1 + 0.3·1.1015625²
	// = 1.36403 in float32, nearest bf16 1.3671875 (the two-byte chain gave 1.359375)
	x := FromSlice([]float32{1}, nil, Dtype(BFloat16))
	a := FromSlice([]float32{1.1}, nil, Dtype(BFloat16))
	if got := x.AddcmulInPlace(a, a, 0.3).Float32s()[0]; got != 1.3671875 {
		t.Errorf("bf16 addcmul_: %v, want 1.3671875", got)
	}
}
