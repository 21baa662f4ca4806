package ember

import "testing"

// TestHalfBaddbmm: bfloat16/float16 Baddbmm is beta·input + alpha·(b1@b2)
// computed in float32 from the two-byte values and rounded once (torch's
// bf16 GEMM path; its small-size loop and float16 emulated by that rule),
// within one unit for the GEMM's order of accumulation; beta 0 ignores a
// NaN input. The reviewer's case by hand: bf16 1.3 = 1.296875, 1.1 =
// 1.1015625: 0.7·1.296875 + 1.3·1.1015625² = 2.485284, nearest bf16
// 2.484375 (the chain of two-byte ops gave 2.46875).
func TestHalfBaddbmm(t *testing.T) {
	halfOpsCases(t, func(t *testing.T, c halfOpCase) {
		in, b1, b2 := c.Inputs[0].tensor(halfOpsDev), c.Inputs[1].tensor(halfOpsDev), c.Inputs[2].tensor(halfOpsDev)
		y := Baddbmm(in, b1, b2, c.arg("beta"), c.arg("alpha"))
		checkHalfOut(t, "baddbmm", y, c.Out, 1)
	}, "baddbmm")
	one := func(v float32) *Tensor { return FromSlice([]float32{v}, Shape{1, 1, 1}, Dtype(BFloat16)) }
	if got := Baddbmm(one(1.3), one(1.1), one(1.1), 0.7, 1.3).Float32s()[0]; got != 2.484375 {
		t.Errorf("baddbmm(1.3, 1.1, 1.1, beta=0.7, alpha=1.3) in bf16 = %v, want 2.484375", got)
	}
}

// TestHalfLinearRoundsOnce: bfloat16/float16 Linear with a bias, 2-D and
// 3-D input, is the float32 product plus the bias in float32, rounded once
// (torch's bf16 addmm; float16 emulated), within one unit for the GEMM's
// order of accumulation.
func TestHalfLinearRoundsOnce(t *testing.T) {
	halfOpsCases(t, func(t *testing.T, c halfOpCase) {
		x, w, b := c.Inputs[0].tensor(halfOpsDev), c.Inputs[1].tensor(halfOpsDev), c.Inputs[2].tensor(halfOpsDev)
		checkHalfOut(t, "linear", Linear(x, w, b), c.Out, 1)
	}, "linear")
}

// TestAutocastBaddbmm: Baddbmm is on autocast's low-precision list (torch
// 1.13's CPU lower_precision_fp: baddbmm): float32 operands are cast to
// bfloat16 and the result, torch's under torch.autocast, is bfloat16.
func TestAutocastBaddbmm(t *testing.T) {
	halfOpsCases(t, func(t *testing.T, c halfOpCase) {
		in, b1, b2 := c.Inputs[0].tensor(halfOpsDev), c.Inputs[1].tensor(halfOpsDev), c.Inputs[2].tensor(halfOpsDev)
		var y *Tensor
		Autocast(CPU, BFloat16, func() { y = Baddbmm(in, b1, b2, c.arg("beta"), c.arg("alpha")) })
		checkHalfOut(t, "baddbmm", y, c.Out, 1)
	}, "autocast_baddbmm")
}
