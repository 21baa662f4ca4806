package ember

import "math"

// GELU is the exact Gaussian error linear unit x·Φ(x) = x/2·(1 + erf(x/√2)).
func GELU(x *Tensor) *Tensor {
	x.live("gelu")
	xd := x
	if !xd.dtype.IsFloat() {
		xd = xd.Cast(Float32)
	}
	xd = xd.Detach()
	cdf := xd.MulScalar(1 / math.Sqrt2).Erf().AddScalar(1).MulScalar(0.5)
	out := xd.Mul(cdf)
	return record("GeluBackward0", out, []*Tensor{x}, []*Tensor{xd}, func(g *Tensor) []*Tensor {
		pdf := xd.Mul(xd).MulScalar(-0.5).Exp().MulScalar(1 / math.Sqrt(2*math.Pi))
		return []*Tensor{g.Mul(cdf.Add(xd.Mul(pdf)))}
	})
}
