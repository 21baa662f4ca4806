package distributions

import (
	"math"

	"github.com/emberml/ember"
)

// Normal is the normal distribution N(loc, scale²), as
// torch.distributions.Normal.
type Normal struct {
	base
	Loc, Scale *ember.Tensor // broadcast to the batch shape
}

// NewNormal returns N(loc, scale²); scale must be positive.
func NewNormal(loc, scale *ember.Tensor) *Normal {
	const op = "distributions.Normal"
	p, shape := broadcastAll(op, loc, scale)
	d := &Normal{base: base{name: "Normal", batch: shape, params: []param{{"loc", p[0]}, {"scale", p[1]}}}, Loc: p[0], Scale: p[1]}
	d.check("loc", p[0], p[0].Eq(p[0]), "Real()")
	d.check("scale", p[1], p[1].GtScalar(0), "GreaterThan(lower_bound=0.0)")
	return d
}

func (d *Normal) HasRSample() bool {
	nilGuard(d, "HasRSample")
	return true
}
func (d *Normal) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return d.Loc
}
func (d *Normal) Stddev() *ember.Tensor {
	nilGuard(d, "Stddev")
	return d.Scale
}
func (d *Normal) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	return d.Scale.Square()
}
func (d *Normal) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	return d.Scale.Log().AddScalar(0.5 + 0.5*log2Pi)
}
func (d *Normal) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor { return d.RSample(s...) })
}

// RSample returns loc + ε·scale, ε standard normal.
func (d *Normal) RSample(s ...int) *ember.Tensor {
	nilGuard(d, "RSample")
	e := ember.Randn(d.extended(s), opts(d.Loc)...)
	return d.Loc.Add(e.Mul(d.Scale))
}

func (d *Normal) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "Real()", func() *ember.Tensor { return v.Eq(v) })
	v = asFloat(v, d.Loc)
	z := v.Sub(d.Loc)
	return z.Square().Div(d.Scale.Square().MulScalar(2)).Neg().Sub(d.Scale.Log()).SubScalar(0.5 * log2Pi)
}

func (d *Normal) CDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "CDF")
	d.validateSample("CDF", v, "Real()", func() *ember.Tensor { return v.Eq(v) })
	v = asFloat(v, d.Loc)
	return v.Sub(d.Loc).Div(d.Scale.MulScalar(math.Sqrt2)).Erf().AddScalar(1).MulScalar(0.5)
}

func (d *Normal) ICDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "ICDF")
	v = asFloat(v, d.Loc)
	return d.Loc.Add(d.Scale.Mul(v.MulScalar(2).SubScalar(1).Erfinv()).MulScalar(math.Sqrt2))
}

// LogNormal is the distribution of exp(X), X ~ N(loc, scale²), as
// torch.distributions.LogNormal.
type LogNormal struct {
	base
	Loc, Scale *ember.Tensor
	normal     *Normal
}

// NewLogNormal returns the log-normal of N(loc, scale²); scale must be
// positive.
func NewLogNormal(loc, scale *ember.Tensor) *LogNormal {
	n := NewNormal(loc, scale)
	n.name = "LogNormal"
	return &LogNormal{base: n.base, Loc: n.Loc, Scale: n.Scale, normal: n}
}

func (d *LogNormal) HasRSample() bool {
	nilGuard(d, "HasRSample")
	return true
}
func (d *LogNormal) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return d.Loc.Add(d.Scale.Square().MulScalar(0.5)).Exp()
}
func (d *LogNormal) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	s2 := d.Scale.Square()
	return s2.Expm1().Mul(d.Loc.MulScalar(2).Add(s2).Exp())
}
func (d *LogNormal) Stddev() *ember.Tensor {
	nilGuard(d, "Stddev")
	return d.Variance().Sqrt()
}
func (d *LogNormal) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	return d.normal.Entropy().Add(d.Loc)
}
func (d *LogNormal) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor { return d.RSample(s...) })
}
func (d *LogNormal) RSample(s ...int) *ember.Tensor {
	nilGuard(d, "RSample")
	return d.normal.RSample(s...).Exp()
}

func (d *LogNormal) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "GreaterThan(lower_bound=0.0)", func() *ember.Tensor { return v.GtScalar(0) })
	v = asFloat(v, d.Loc)
	y := v.Log()
	return d.normal.LogProb(y).Sub(y)
}

func (d *LogNormal) CDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "CDF")
	d.validateSample("CDF", v, "GreaterThan(lower_bound=0.0)", func() *ember.Tensor { return v.GtScalar(0) })
	return d.normal.CDF(asFloat(v, d.Loc).Log())
}

func (d *LogNormal) ICDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "ICDF")
	return d.normal.ICDF(v).Exp()
}

// Uniform is the uniform distribution on [low, high), as
// torch.distributions.Uniform.
type Uniform struct {
	base
	Low, High *ember.Tensor
}

// NewUniform returns U[low, high); low < high everywhere.
func NewUniform(low, high *ember.Tensor) *Uniform {
	const op = "distributions.Uniform"
	p, shape := broadcastAll(op, low, high)
	d := &Uniform{base: base{name: "Uniform", batch: shape, params: []param{{"low", p[0]}, {"high", p[1]}}}, Low: p[0], High: p[1]}
	if !allTrue(p[0].Lt(p[1])) {
		panic(&ember.ValueError{Op: op, Msg: "Uniform is not defined when low>= high"})
	}
	return d
}

func (d *Uniform) HasRSample() bool {
	nilGuard(d, "HasRSample")
	return true
}
func (d *Uniform) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return d.High.Add(d.Low).DivScalar(2)
}
func (d *Uniform) Stddev() *ember.Tensor {
	nilGuard(d, "Stddev")
	return d.High.Sub(d.Low).DivScalar(math.Sqrt(12))
}
func (d *Uniform) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	return d.High.Sub(d.Low).Square().DivScalar(12)
}
func (d *Uniform) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	return d.High.Sub(d.Low).Log()
}
func (d *Uniform) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor { return d.RSample(s...) })
}

// RSample returns low + u·(high − low), u uniform on [0, 1).
func (d *Uniform) RSample(s ...int) *ember.Tensor {
	nilGuard(d, "RSample")
	u := ember.Rand(d.extended(s), opts(d.Low)...)
	return d.Low.Add(u.Mul(d.High.Sub(d.Low)))
}

func (d *Uniform) support(v *ember.Tensor) func() *ember.Tensor {
	return func() *ember.Tensor { return d.Low.Le(v).LogicalAnd(v.Le(d.High)) }
}

func (d *Uniform) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "Interval(lower_bound=low, upper_bound=high)", d.support(v))
	v = asFloat(v, d.Low)
	in := d.Low.Le(v).LogicalAnd(d.High.Gt(v)).Cast(v.DType())
	return in.Log().Sub(d.High.Sub(d.Low).Log())
}

func (d *Uniform) CDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "CDF")
	d.validateSample("CDF", v, "Interval(lower_bound=low, upper_bound=high)", d.support(v))
	v = asFloat(v, d.Low)
	return v.Sub(d.Low).Div(d.High.Sub(d.Low)).Clamp(0, 1)
}

func (d *Uniform) ICDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "ICDF")
	return asFloat(v, d.Low).Mul(d.High.Sub(d.Low)).Add(d.Low)
}

// Exponential is the exponential distribution of rate λ, as
// torch.distributions.Exponential.
type Exponential struct {
	base
	Rate *ember.Tensor
}

// NewExponential returns Exp(rate); rate must be positive.
func NewExponential(rate *ember.Tensor) *Exponential {
	p, shape := broadcastAll("distributions.Exponential", rate)
	d := &Exponential{base: base{name: "Exponential", batch: shape, params: []param{{"rate", p[0]}}}, Rate: p[0]}
	d.check("rate", p[0], p[0].GtScalar(0), "GreaterThan(lower_bound=0.0)")
	return d
}

func (d *Exponential) HasRSample() bool {
	nilGuard(d, "HasRSample")
	return true
}
func (d *Exponential) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return d.Rate.Reciprocal()
}
func (d *Exponential) Stddev() *ember.Tensor {
	nilGuard(d, "Stddev")
	return d.Rate.Reciprocal()
}
func (d *Exponential) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	return d.Rate.PowScalar(-2)
}
func (d *Exponential) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	return d.Rate.Log().RSubScalar(1)
}
func (d *Exponential) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor { return d.RSample(s...) })
}

// RSample returns E/rate, E = −log(1−u) standard exponential.
func (d *Exponential) RSample(s ...int) *ember.Tensor {
	nilGuard(d, "RSample")
	u := ember.Rand(d.extended(s), opts(d.Rate)...)
	return u.Neg().Log1p().Neg().Div(d.Rate)
}

func (d *Exponential) nonneg(v *ember.Tensor) func() *ember.Tensor {
	return func() *ember.Tensor { return v.Ge(full(v, ember.Shape{}, 0)) }
}

func (d *Exponential) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "GreaterThanEq(lower_bound=0.0)", d.nonneg(v))
	v = asFloat(v, d.Rate)
	return d.Rate.Log().Sub(d.Rate.Mul(v))
}

func (d *Exponential) CDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "CDF")
	d.validateSample("CDF", v, "GreaterThanEq(lower_bound=0.0)", d.nonneg(v))
	v = asFloat(v, d.Rate)
	return d.Rate.Neg().Mul(v).Exp().RSubScalar(1)
}

func (d *Exponential) ICDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "ICDF")
	return asFloat(v, d.Rate).Neg().Log1p().Neg().Div(d.Rate)
}

// Laplace is the Laplace distribution of location loc and scale b, as
// torch.distributions.Laplace.
type Laplace struct {
	base
	Loc, Scale *ember.Tensor
}

// NewLaplace returns Laplace(loc, scale); scale must be positive.
func NewLaplace(loc, scale *ember.Tensor) *Laplace {
	p, shape := broadcastAll("distributions.Laplace", loc, scale)
	d := &Laplace{base: base{name: "Laplace", batch: shape, params: []param{{"loc", p[0]}, {"scale", p[1]}}}, Loc: p[0], Scale: p[1]}
	d.check("loc", p[0], p[0].Eq(p[0]), "Real()")
	d.check("scale", p[1], p[1].GtScalar(0), "GreaterThan(lower_bound=0.0)")
	return d
}

func (d *Laplace) HasRSample() bool {
	nilGuard(d, "HasRSample")
	return true
}
func (d *Laplace) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return d.Loc
}
func (d *Laplace) Stddev() *ember.Tensor {
	nilGuard(d, "Stddev")
	return d.Scale.MulScalar(math.Sqrt2)
}
func (d *Laplace) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	return d.Scale.Square().MulScalar(2)
}
func (d *Laplace) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	return d.Scale.MulScalar(2).Log().AddScalar(1)
}
func (d *Laplace) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor { return d.RSample(s...) })
}

// RSample returns loc − scale·sign(u)·log(1−|u|), u uniform on
// (eps−1, 1), as torch.
func (d *Laplace) RSample(s ...int) *ember.Tensor {
	nilGuard(d, "RSample")
	e := eps(d.Loc.DType())
	u := ember.Rand(d.extended(s), opts(d.Loc)...).MulScalar(2 - e).AddScalar(e - 1)
	return d.Loc.Sub(d.Scale.Mul(u.Sign()).Mul(u.Abs().Neg().Log1p()))
}

func (d *Laplace) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "Real()", func() *ember.Tensor { return v.Eq(v) })
	v = asFloat(v, d.Loc)
	return d.Scale.MulScalar(2).Log().Neg().Sub(v.Sub(d.Loc).Abs().Div(d.Scale))
}

func (d *Laplace) CDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "CDF")
	d.validateSample("CDF", v, "Real()", func() *ember.Tensor { return v.Eq(v) })
	z := asFloat(v, d.Loc).Sub(d.Loc)
	return z.Sign().Mul(z.Abs().Div(d.Scale).Neg().Expm1()).MulScalar(-0.5).AddScalar(0.5)
}

func (d *Laplace) ICDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "ICDF")
	t := asFloat(v, d.Loc).SubScalar(0.5)
	return d.Loc.Sub(d.Scale.Mul(t.Sign()).Mul(t.Abs().MulScalar(-2).Log1p()))
}
