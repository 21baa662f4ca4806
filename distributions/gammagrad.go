package distributions

import (
	"github.com/emberml/ember"
)

// standardGammaGrad is dx/dα for x ~ Gamma(α, 1) drawn by inverting its
// CDF F(x; α) (implicit reparameterisation: −(∂F/∂α)/f), by the three
// approximations of PyTorch's standard_gamma_grad_one: a Taylor series
// for x < 0.8, Rice's saddle-point expansion for α > 8, and a bivariate
// rational approximation otherwise. alpha and x are Float64, one shape.
func standardGammaGrad(alpha, x *ember.Tensor) *ember.Tensor {
	// Taylor series of the incomplete gamma function for small x
	numer := ember.OnesLike(x)
	denom := alpha
	s1 := numer.Div(denom)
	s2 := numer.Div(denom.Square())
	for i := 1; i <= 5; i++ {
		numer = numer.Mul(x.Neg().DivScalar(float64(i)))
		denom = denom.AddScalar(1)
		s1 = s1.Add(numer.Div(denom))
		s2 = s2.Add(numer.Div(denom.Square()))
	}
	powXA := x.Pow(alpha)
	pdf := x.Pow(alpha.SubScalar(1)).Mul(x.Neg().Exp())
	cdf := powXA.Mul(s1)
	cdfAlpha := x.Log().Sub(alpha.Digamma()).Mul(cdf).Sub(powXA.Mul(s2))
	taylor := cdfAlpha.Neg().Div(pdf)
	taylor = ember.WhereScalar(taylor.IsNaN(), 0, taylor)

	// Rice saddle point expansion for large alpha
	n1 := alpha.MulScalar(12).AddScalar(1).Mul(alpha).MulScalar(24).AddScalar(1)
	n2 := alpha.Square().MulScalar(1440).Add(x.MulScalar(6).Mul(x.MulScalar(-120).AddScalar(53))).
		Sub(x.Square().MulScalar(65).Div(alpha)).Add(alpha.Mul(x.MulScalar(3600).AddScalar(107)))
	near := n1.Mul(n2).Div(alpha.Square().Square().MulScalar(1244160))
	den := alpha.MulScalar(8).Sqrt()
	term2 := den.Div(alpha.Sub(x))
	lxa := x.Div(alpha).Log()
	term3 := x.Sub(alpha).Sub(alpha.Mul(lxa)).PowScalar(-1.5)
	term23 := ember.Where(x.Lt(alpha), term2.Sub(term3), term2.Add(term3))
	term1 := lxa.Mul(term23).Sub(alpha.Reciprocal().MulScalar(2).Sqrt().Mul(alpha.Add(x)).Div(alpha.Sub(x).Square()))
	stirling := alpha.MulScalar(24).Reciprocal().AddScalar(1).Div(alpha.MulScalar(12)).AddScalar(1)
	far := stirling.Neg().Mul(x.Mul(term1)).Div(den)
	inNear := x.Ge(alpha.MulScalar(0.9)).LogicalAnd(x.Le(alpha.MulScalar(1.1)))
	rice := ember.Where(inNear, near, far)

	// bivariate rational approximation
	u := lxa
	v := alpha.Log()
	coef := [3][8]float64{
		{0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084},
		{0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915, -0.00058392623},
		{0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07},
	}
	var cv [8]*ember.Tensor
	for i := range cv {
		cv[i] = u.MulScalar(coef[2][i]).AddScalar(coef[1][i]).Mul(u).AddScalar(coef[0][i])
	}
	p := cv[3].Mul(v).Add(cv[2]).Mul(v).Add(cv[1]).Mul(v).Add(cv[0])
	q := cv[7].Mul(v).Add(cv[6]).Mul(v).Add(cv[5]).Mul(v).Add(cv[4])
	rational := p.Div(q).Exp()

	out := ember.Where(alpha.GtScalar(8), rice, rational)
	return ember.Where(x.LtScalar(0.8), taylor, out)
}

// gammaFn draws standard Gamma(α) variates with the implicit
// reparameterisation gradient dx/dα (torch's _standard_gamma).
type gammaFn struct{}

func (gammaFn) Name() string { return "StandardGammaBackward0" }

// OnceDifferentiable: the derivative of dx/dα is not implemented, as in
// PyTorch (_standard_gamma_grad).
func (gammaFn) OnceDifferentiable() {}

func (gammaFn) Forward(ctx *ember.FunctionCtx, in []*ember.Tensor) *ember.Tensor {
	alpha := in[0]
	x := sampleGamma(alpha.Cast(ember.Float64).Contiguous()).Cast(alpha.DType()).Clamp(tiny(alpha.DType()), posInf())
	ctx.SaveForBackward(alpha, x)
	return x
}

func (gammaFn) Backward(ctx *ember.FunctionCtx, g *ember.Tensor) []*ember.Tensor {
	s := ctx.Saved()
	alpha, x := s[0], s[1]
	d := standardGammaGrad(alpha.Cast(ember.Float64), x.Cast(ember.Float64)).Cast(alpha.DType())
	return []*ember.Tensor{g.Mul(d)}
}

// standardGamma draws Gamma(alpha, 1) of alpha's shape, differentiable
// w.r.t. alpha; draws under a dtype's smallest normal are raised to it.
func standardGamma(alpha *ember.Tensor) *ember.Tensor {
	return ember.Apply(gammaFn{}, alpha)
}

// clampData clamps x's values to [lo, hi] leaving its gradient as x's
// (torch's value.detach().clamp_()).
func clampData(x *ember.Tensor, lo, hi float64) *ember.Tensor {
	xd := x.Detach()
	return x.Add(xd.Clamp(lo, hi).Sub(xd))
}
