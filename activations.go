package ember

import "math"

// GELU is the exact Gaussian error linear unit x·Φ(x) = x/2·(1 + erf(x/√2)).
// On bfloat16 and float16 it computes in float32 and rounds once, forward
// and backward, as PyTorch's kernels do.
func GELU(x *Tensor) *Tensor {
	x.live("gelu")
	xd := x
	if !xd.dtype.IsFloat() {
		xd = xd.Cast(Float32)
	}
	xd = xd.Detach()
	dt, xc := xd.dtype, xd
	if dt.IsHalf() {
		xc = xd.Cast(Float32)
	}
	cdf := xc.MulScalar(1 / math.Sqrt2).Erf().AddScalar(1).MulScalar(0.5)
	out := xc.Mul(cdf).Cast(dt)
	back := func(g, xc, cdf *Tensor) []*Tensor {
		pdf := xc.Mul(xc).MulScalar(-0.5).Exp().MulScalar(1 / math.Sqrt(2*math.Pi))
		d := cdf.Add(xc.Mul(pdf))
		if dt.IsHalf() {
			return []*Tensor{g.Cast(Float32).Mul(d).Cast(g.dtype)}
		}
		return []*Tensor{g.Mul(d)}
	}
	xo := x // (its storage is xd's, which backward saves)
	return recordTwice("GeluBackward0", out, []*Tensor{x}, []*Tensor{xd}, func(g *Tensor) []*Tensor { return back(g, xc, cdf) },
		func(g *Tensor) []*Tensor {
			xc := xo
			if !xc.dtype.IsFloat() || dt.IsHalf() {
				xc = xc.Cast(Float32)
			}
			return back(g, xc, xc.MulScalar(1/math.Sqrt2).Erf().AddScalar(1).MulScalar(0.5))
		})
}
