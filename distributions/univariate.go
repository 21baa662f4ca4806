package distributions

import (
	"math"

	"github.com/emberml/ember"
)

const positive = "GreaterThan(lower_bound=0.0)"

func isReal(v *ember.Tensor) func() *ember.Tensor { return func() *ember.Tensor { return v.Eq(v) } }

func nonneg(v *ember.Tensor) func() *ember.Tensor {
	return func() *ember.Tensor { return v.Ge(full(v, nil, 0)) }
}

// StudentT is Student's t distribution with df degrees of freedom,
// location loc and scale, as torch.distributions.StudentT.
type StudentT struct {
	base
	Df, Loc, Scale *ember.Tensor
	chi2           *Chi2
}

// NewStudentT returns StudentT(df, loc, scale); df and scale positive.
func NewStudentT(df, loc, scale *ember.Tensor) *StudentT {
	p, shape := broadcastAll("distributions.StudentT", df, loc, scale)
	d := &StudentT{base: base{name: "StudentT", batch: shape, params: []param{{"df", p[0]}, {"loc", p[1]}, {"scale", p[2]}}}, Df: p[0], Loc: p[1], Scale: p[2]}
	d.check("df", p[0], p[0].GtScalar(0), positive)
	d.check("loc", p[1], p[1].Eq(p[1]), "Real()")
	d.check("scale", p[2], p[2].GtScalar(0), positive)
	d.chi2 = NewChi2(p[0])
	return d
}

func (d *StudentT) HasRSample() bool { nilGuard(d, "HasRSample"); return true }

// Mean is loc, NaN where df ≤ 1.
func (d *StudentT) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return ember.WhereScalar(d.Df.GtScalar(1).LogicalNot(), nan(), d.Loc)
}

// Variance is scale²·df/(df−2), +Inf where 1 < df ≤ 2 and NaN where
// df ≤ 1.
func (d *StudentT) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	v := d.Scale.Square().Mul(d.Df).Div(d.Df.SubScalar(2))
	v = ember.WhereScalar(d.Df.GtScalar(2).LogicalNot(), posInf(), v)
	return ember.WhereScalar(d.Df.GtScalar(1).LogicalNot(), nan(), v)
}

func (d *StudentT) Stddev() *ember.Tensor { nilGuard(d, "Stddev"); return d.Variance().Sqrt() }

func (d *StudentT) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor { return d.RSample(s...) })
}

// RSample returns loc + scale·X·√(df/Z), X standard normal and Z ~ χ²(df)
// (differentiable w.r.t. df through the gamma's implicit gradient).
func (d *StudentT) RSample(s ...int) *ember.Tensor {
	nilGuard(d, "RSample")
	x := ember.Randn(d.extended(s), opts(d.Df)...)
	z := d.chi2.RSample(s...)
	y := x.Mul(z.Div(d.Df).Rsqrt())
	return d.Loc.Add(d.Scale.Mul(y))
}

func (d *StudentT) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "Real()", isReal(v))
	v = asFloat(v, d.Df)
	y := v.Sub(d.Loc).Div(d.Scale)
	half := d.Df.MulScalar(0.5)
	z := d.Scale.Log().Add(d.Df.Log().MulScalar(0.5)).AddScalar(0.5 * math.Log(math.Pi)).Add(half.Lgamma()).Sub(d.Df.AddScalar(1).MulScalar(0.5).Lgamma())
	return d.Df.AddScalar(1).MulScalar(-0.5).Mul(y.Square().Div(d.Df).Log1p()).Sub(z)
}

func (d *StudentT) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	h1 := d.Df.AddScalar(1).MulScalar(0.5)
	h := d.Df.MulScalar(0.5)
	lbeta := h.Lgamma().AddScalar(0.5 * math.Log(math.Pi)).Sub(h1.Lgamma()) // lgamma(½) = ½ log π
	return d.Scale.Log().Add(h1.Mul(h1.Digamma().Sub(h.Digamma()))).Add(d.Df.Log().MulScalar(0.5)).Add(lbeta)
}

// Cauchy is the Cauchy (Lorentz) distribution, as
// torch.distributions.Cauchy.
type Cauchy struct {
	base
	Loc, Scale *ember.Tensor
}

// NewCauchy returns Cauchy(loc, scale); scale positive.
func NewCauchy(loc, scale *ember.Tensor) *Cauchy {
	return newCauchy("Cauchy", loc, scale)
}

func newCauchy(name string, loc, scale *ember.Tensor) *Cauchy {
	p, shape := broadcastAll("distributions."+name, loc, scale)
	d := &Cauchy{base: base{name: name, batch: shape, params: []param{{"loc", p[0]}, {"scale", p[1]}}}, Loc: p[0], Scale: p[1]}
	d.check("loc", p[0], p[0].Eq(p[0]), "Real()")
	d.check("scale", p[1], p[1].GtScalar(0), positive)
	return d
}

func (d *Cauchy) HasRSample() bool { nilGuard(d, "HasRSample"); return true }

// Mean is NaN (undefined), as torch.
func (d *Cauchy) Mean() *ember.Tensor { nilGuard(d, "Mean"); return full(d.Loc, d.batch, nan()) }

// Variance is +Inf, as torch.
func (d *Cauchy) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	return full(d.Loc, d.batch, posInf())
}
func (d *Cauchy) Stddev() *ember.Tensor { nilGuard(d, "Stddev"); return d.Variance().Sqrt() }
func (d *Cauchy) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	return d.Scale.Log().AddScalar(math.Log(4 * math.Pi))
}
func (d *Cauchy) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor { return d.RSample(s...) })
}

// RSample returns loc + scale·tan(π(u − ½)), u uniform on [0, 1).
func (d *Cauchy) RSample(s ...int) *ember.Tensor {
	nilGuard(d, "RSample")
	u := ember.Rand(d.extended(s), opts(d.Loc)...)
	return d.Loc.Add(u.SubScalar(0.5).MulScalar(math.Pi).Tan().Mul(d.Scale))
}

func (d *Cauchy) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "Real()", isReal(v))
	v = asFloat(v, d.Loc)
	return v.Sub(d.Loc).Div(d.Scale).Square().Log1p().Neg().Sub(d.Scale.Log()).SubScalar(math.Log(math.Pi))
}

func (d *Cauchy) CDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "CDF")
	d.validateSample("CDF", v, "Real()", isReal(v))
	v = asFloat(v, d.Loc)
	return v.Sub(d.Loc).Div(d.Scale).Atan().DivScalar(math.Pi).AddScalar(0.5)
}

func (d *Cauchy) ICDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "ICDF")
	return asFloat(v, d.Loc).SubScalar(0.5).MulScalar(math.Pi).Tan().Mul(d.Scale).Add(d.Loc)
}

// HalfNormal is |X|, X ~ N(0, scale²), as torch.distributions.HalfNormal.
type HalfNormal struct {
	base
	Scale  *ember.Tensor
	normal *Normal
}

// NewHalfNormal returns HalfNormal(scale); scale positive.
func NewHalfNormal(scale *ember.Tensor) *HalfNormal {
	p, shape := broadcastAll("distributions.HalfNormal", scale)
	d := &HalfNormal{base: base{name: "HalfNormal", batch: shape}, Scale: p[0]}
	d.check("scale", p[0], p[0].GtScalar(0), positive)
	d.normal = NewNormal(ember.ZerosLike(p[0]), p[0])
	return d
}

func (d *HalfNormal) HasRSample() bool { nilGuard(d, "HasRSample"); return true }
func (d *HalfNormal) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return d.Scale.MulScalar(math.Sqrt(2 / math.Pi))
}
func (d *HalfNormal) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	return d.Scale.Square().MulScalar(1 - 2/math.Pi)
}
func (d *HalfNormal) Stddev() *ember.Tensor { nilGuard(d, "Stddev"); return d.Variance().Sqrt() }
func (d *HalfNormal) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	return d.normal.Entropy().SubScalar(math.Ln2)
}
func (d *HalfNormal) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor { return d.RSample(s...) })
}
func (d *HalfNormal) RSample(s ...int) *ember.Tensor {
	nilGuard(d, "RSample")
	return d.normal.RSample(s...).Abs()
}

func (d *HalfNormal) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "GreaterThanEq(lower_bound=0.0)", nonneg(v))
	v = asFloat(v, d.Scale)
	lp := d.normal.LogProb(v).AddScalar(math.Ln2)
	return ember.WhereScalar(v.LtScalar(0).Expand(lp.Shape()...), math.Inf(-1), lp)
}

func (d *HalfNormal) CDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "CDF")
	d.validateSample("CDF", v, "GreaterThanEq(lower_bound=0.0)", nonneg(v))
	return d.normal.CDF(asFloat(v, d.Scale)).MulScalar(2).SubScalar(1)
}

func (d *HalfNormal) ICDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "ICDF")
	return d.normal.ICDF(asFloat(v, d.Scale).AddScalar(1).DivScalar(2))
}

// HalfCauchy is |X|, X ~ Cauchy(0, scale), as
// torch.distributions.HalfCauchy.
type HalfCauchy struct {
	base
	Scale  *ember.Tensor
	cauchy *Cauchy
}

// NewHalfCauchy returns HalfCauchy(scale); scale positive.
func NewHalfCauchy(scale *ember.Tensor) *HalfCauchy {
	p, shape := broadcastAll("distributions.HalfCauchy", scale)
	d := &HalfCauchy{base: base{name: "HalfCauchy", batch: shape}, Scale: p[0]}
	d.check("scale", p[0], p[0].GtScalar(0), positive)
	d.cauchy = NewCauchy(ember.ZerosLike(p[0]), p[0])
	return d
}

func (d *HalfCauchy) HasRSample() bool { nilGuard(d, "HasRSample"); return true }

// Mean is +Inf, as torch.
func (d *HalfCauchy) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return full(d.Scale, d.batch, posInf())
}

// Variance is +Inf (torch's formula, although the variance is
// undefined).
func (d *HalfCauchy) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	return full(d.Scale, d.batch, posInf())
}
func (d *HalfCauchy) Stddev() *ember.Tensor { nilGuard(d, "Stddev"); return d.Variance().Sqrt() }
func (d *HalfCauchy) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	return d.cauchy.Entropy().SubScalar(math.Ln2)
}
func (d *HalfCauchy) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor { return d.RSample(s...) })
}
func (d *HalfCauchy) RSample(s ...int) *ember.Tensor {
	nilGuard(d, "RSample")
	return d.cauchy.RSample(s...).Abs()
}

func (d *HalfCauchy) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "GreaterThanEq(lower_bound=0.0)", nonneg(v))
	v = asFloat(v, d.Scale)
	lp := d.cauchy.LogProb(v).AddScalar(math.Ln2)
	return ember.WhereScalar(v.LtScalar(0).Expand(lp.Shape()...), math.Inf(-1), lp)
}

func (d *HalfCauchy) CDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "CDF")
	d.validateSample("CDF", v, "GreaterThanEq(lower_bound=0.0)", nonneg(v))
	return d.cauchy.CDF(asFloat(v, d.Scale)).MulScalar(2).SubScalar(1)
}

func (d *HalfCauchy) ICDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "ICDF")
	return d.cauchy.ICDF(asFloat(v, d.Scale).AddScalar(1).DivScalar(2))
}

// Gumbel is the Gumbel (type-I extreme value) distribution, as
// torch.distributions.Gumbel.
type Gumbel struct {
	base
	Loc, Scale *ember.Tensor
}

// NewGumbel returns Gumbel(loc, scale); scale positive.
func NewGumbel(loc, scale *ember.Tensor) *Gumbel {
	p, shape := broadcastAll("distributions.Gumbel", loc, scale)
	d := &Gumbel{base: base{name: "Gumbel", batch: shape, params: []param{{"loc", p[0]}, {"scale", p[1]}}}, Loc: p[0], Scale: p[1]}
	d.check("loc", p[0], p[0].Eq(p[0]), "Real()")
	d.check("scale", p[1], p[1].GtScalar(0), positive)
	return d
}

func (d *Gumbel) HasRSample() bool { nilGuard(d, "HasRSample"); return true }
func (d *Gumbel) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return d.Loc.Add(d.Scale.MulScalar(eulerGamma))
}
func (d *Gumbel) Stddev() *ember.Tensor {
	nilGuard(d, "Stddev")
	return d.Scale.MulScalar(math.Pi / math.Sqrt(6))
}
func (d *Gumbel) Variance() *ember.Tensor { nilGuard(d, "Variance"); return d.Stddev().Square() }
func (d *Gumbel) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	return d.Scale.Log().AddScalar(1 + eulerGamma)
}
func (d *Gumbel) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor { return d.RSample(s...) })
}

// uniform bounds of torch's base distribution, Uniform(tiny, 1 − eps).
func (d *Gumbel) bounds() (lo, hi float64) {
	dt := d.Loc.DType()
	return tiny(dt), 1 - eps(dt)
}

// RSample returns loc − scale·log(−log u), u uniform on [tiny, 1 − eps).
func (d *Gumbel) RSample(s ...int) *ember.Tensor {
	nilGuard(d, "RSample")
	lo, hi := d.bounds()
	u := ember.Rand(d.extended(s), opts(d.Loc)...).MulScalar(hi - lo).AddScalar(lo)
	return d.Loc.Sub(d.Scale.Mul(u.Log().Neg().Log()))
}

func (d *Gumbel) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "Real()", isReal(v))
	y := d.Loc.Sub(asFloat(v, d.Loc)).Div(d.Scale)
	return y.Sub(y.Exp()).Sub(d.Scale.Log())
}

// CDF is exp(−exp(−(v − loc)/scale)) mapped through torch's base
// Uniform(tiny, 1 − eps) CDF, as torch's TransformedDistribution.
func (d *Gumbel) CDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "CDF")
	d.validateSample("CDF", v, "Real()", isReal(v))
	lo, hi := d.bounds()
	u := asFloat(v, d.Loc).Sub(d.Loc).Div(d.Scale).Neg().Exp().Neg().Exp()
	return u.SubScalar(lo).DivScalar(hi-lo).Clamp(0, 1)
}

func (d *Gumbel) ICDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "ICDF")
	lo, hi := d.bounds()
	u := asFloat(v, d.Loc).MulScalar(hi - lo).AddScalar(lo)
	return d.Loc.Sub(d.Scale.Mul(u.Log().Neg().Log()))
}

// Chi2 is the chi-squared distribution with df degrees of freedom,
// Gamma(df/2, 1/2), as torch.distributions.Chi2 (a Gamma: KLDivergence
// takes it wherever it takes a Gamma).
type Chi2 struct {
	Gamma
	Df *ember.Tensor
}

// NewChi2 returns χ²(df); df positive.
func NewChi2(df *ember.Tensor) *Chi2 {
	p, shape := broadcastAll("distributions.Chi2", df)
	c := &Chi2{Gamma: Gamma{base: base{name: "Chi2", batch: shape}}, Df: p[0]}
	c.check("df", p[0], p[0].GtScalar(0), positive)
	c.Concentration = p[0].MulScalar(0.5)
	c.Rate = full(p[0], shape, 0.5)
	return c
}

// Weibull is the Weibull distribution of scale and concentration
// (shape), as torch.distributions.Weibull.
type Weibull struct {
	base
	Scale, Concentration *ember.Tensor
}

// NewWeibull returns Weibull(scale, concentration); both positive.
func NewWeibull(scale, concentration *ember.Tensor) *Weibull {
	p, shape := broadcastAll("distributions.Weibull", scale, concentration)
	d := &Weibull{base: base{name: "Weibull", batch: shape, params: []param{{"scale", p[0]}, {"concentration", p[1]}}}, Scale: p[0], Concentration: p[1]}
	d.check("scale", p[0], p[0].GtScalar(0), positive)
	d.check("concentration", p[1], p[1].GtScalar(0), positive)
	return d
}

func (d *Weibull) HasRSample() bool { nilGuard(d, "HasRSample"); return true }
func (d *Weibull) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return d.Scale.Mul(d.Concentration.Reciprocal().AddScalar(1).Lgamma().Exp())
}
func (d *Weibull) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	g2 := d.Concentration.Reciprocal().MulScalar(2).AddScalar(1).Lgamma().Exp()
	g1 := d.Concentration.Reciprocal().AddScalar(1).Lgamma().MulScalar(2).Exp()
	return d.Scale.Square().Mul(g2.Sub(g1))
}
func (d *Weibull) Stddev() *ember.Tensor { nilGuard(d, "Stddev"); return d.Variance().Sqrt() }
func (d *Weibull) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	return d.Concentration.Reciprocal().RSubScalar(1).MulScalar(eulerGamma).Add(d.Scale.Div(d.Concentration).Log()).AddScalar(1)
}
func (d *Weibull) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor { return d.RSample(s...) })
}

// RSample returns scale·E^(1/concentration), E standard exponential.
func (d *Weibull) RSample(s ...int) *ember.Tensor {
	nilGuard(d, "RSample")
	e := ember.Rand(d.extended(s), opts(d.Scale)...).Neg().Log1p().Neg()
	return e.Pow(d.Concentration.Reciprocal()).Mul(d.Scale)
}

func (d *Weibull) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, positive, func() *ember.Tensor { return v.GtScalar(0) })
	v = asFloat(v, d.Scale)
	// torch's transforms: x = (v/scale)^c ~ Exp(1), less the log-Jacobians
	// log|(1/c)·(v/scale)/x| and log scale
	z := v.Div(d.Scale)
	x := z.Pow(d.Concentration)
	return x.Neg().Sub(d.Concentration.Reciprocal().Mul(z).Div(x).Abs().Log()).Sub(d.Scale.Log())
}

func (d *Weibull) CDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "CDF")
	d.validateSample("CDF", v, "GreaterThanEq(lower_bound=0.0)", nonneg(v)) // torch checks the base Exponential's value
	x := asFloat(v, d.Scale).Div(d.Scale).Pow(d.Concentration)
	return x.Neg().Exp().RSubScalar(1)
}

func (d *Weibull) ICDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "ICDF")
	e := asFloat(v, d.Scale).Neg().Log1p().Neg()
	return e.Pow(d.Concentration.Reciprocal()).Mul(d.Scale)
}

// Pareto is the Pareto (type I) distribution of scale and alpha, as
// torch.distributions.Pareto.
type Pareto struct {
	base
	Scale, Alpha *ember.Tensor
}

// NewPareto returns Pareto(scale, alpha); both positive.
func NewPareto(scale, alpha *ember.Tensor) *Pareto {
	p, shape := broadcastAll("distributions.Pareto", scale, alpha)
	d := &Pareto{base: base{name: "Pareto", batch: shape, params: []param{{"alpha", p[1]}, {"scale", p[0]}}}, Scale: p[0], Alpha: p[1]}
	NewExponential(p[1]) // torch checks alpha as its base Exponential's rate
	d.check("scale", p[0], p[0].GtScalar(0), positive)
	return d
}

func (d *Pareto) HasRSample() bool { nilGuard(d, "HasRSample"); return true }

// Mean is alpha·scale/(alpha − 1), +Inf where alpha ≤ 1.
func (d *Pareto) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	a := d.Alpha.Clamp(1, posInf())
	return a.Mul(d.Scale).Div(a.SubScalar(1))
}

// Variance is scale²·alpha/((alpha−1)²(alpha−2)), +Inf where alpha ≤ 2.
func (d *Pareto) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	a := d.Alpha.Clamp(2, posInf())
	return d.Scale.Square().Mul(a).Div(a.SubScalar(1).Square().Mul(a.SubScalar(2)))
}
func (d *Pareto) Stddev() *ember.Tensor { nilGuard(d, "Stddev"); return d.Variance().Sqrt() }
func (d *Pareto) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	return d.Scale.Div(d.Alpha).Log().Add(d.Alpha.Reciprocal().AddScalar(1))
}
func (d *Pareto) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor { return d.RSample(s...) })
}

// RSample returns scale·exp(E/alpha), E standard exponential.
func (d *Pareto) RSample(s ...int) *ember.Tensor {
	nilGuard(d, "RSample")
	e := ember.Rand(d.extended(s), opts(d.Scale)...).Neg().Log1p().Neg()
	return e.Div(d.Alpha).Exp().Mul(d.Scale)
}

func (d *Pareto) support(v *ember.Tensor) func() *ember.Tensor {
	return func() *ember.Tensor { return v.Ge(d.Scale) }
}

func (d *Pareto) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "GreaterThanEq(lower_bound=scale)", d.support(v))
	v = asFloat(v, d.Scale)
	// torch's transforms: y = log(v/scale) ~ Exp(alpha), less the
	// log-Jacobians y and log scale
	y := v.Div(d.Scale).Log()
	return d.Alpha.Log().Sub(d.Alpha.Mul(y)).Sub(y).Sub(d.Scale.Log())
}

func (d *Pareto) CDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "CDF")
	d.validateSample("CDF", v, "GreaterThanEq(lower_bound=scale)", d.support(v))
	y := asFloat(v, d.Scale).Div(d.Scale).Log()
	return d.Alpha.Neg().Mul(y).Exp().RSubScalar(1)
}

func (d *Pareto) ICDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "ICDF")
	e := asFloat(v, d.Scale).Neg().Log1p().Neg()
	return e.Div(d.Alpha).Exp().Mul(d.Scale)
}

// VonMises is the circular von Mises distribution of mean direction loc
// and concentration κ, as torch.distributions.VonMises (values are
// angles: any real, read modulo 2π; draws lie in [−π, π)).
type VonMises struct {
	base
	Loc, Concentration *ember.Tensor
	proposalR          *ember.Tensor
}

// NewVonMises returns VonMises(loc, concentration); concentration
// positive.
func NewVonMises(loc, concentration *ember.Tensor) *VonMises {
	p, shape := broadcastAll("distributions.VonMises", loc, concentration)
	d := &VonMises{base: base{name: "VonMises", batch: shape, params: []param{{"loc", p[0]}, {"concentration", p[1]}}}, Loc: p[0], Concentration: p[1]}
	d.check("loc", p[0], p[0].Eq(p[0]), "Real()")
	d.check("concentration", p[1], p[1].GtScalar(0), positive)
	// Best and Fisher's r, in Float64 and by its expansion 1/κ + κ below
	// κ = 1e-5 (as torch 2): in the working dtype it cancels to 0 for small
	// κ (from κ ≈ 3e-4 in Float32), r becomes +Inf and no proposal is ever
	// accepted
	k := p[1].Detach().Cast(ember.Float64)
	tau := k.Square().MulScalar(4).AddScalar(1).Sqrt().AddScalar(1)
	rho := tau.Sub(tau.MulScalar(2).Sqrt()).Div(k.MulScalar(2))
	r := rho.Square().AddScalar(1).Div(rho.MulScalar(2))
	r = ember.Where(k.LtScalar(1e-5), k.Reciprocal().Add(k), r)
	d.proposalR = r.Cast(p[1].DType())
	return d
}

// torch's polynomial approximations (Abramowitz and Stegun 9.8.1–4) of
// I0 and I1, below and above x = 3.75.
var (
	i0Small = []float64{1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2}
	i0Large = []float64{0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2,
		-0.2057706e-1, 0.2635537e-1, -0.1647633e-1, 0.392377e-2}
	i1Small = []float64{0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3}
	i1Large = []float64{0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1,
		0.2282967e-1, -0.2895312e-1, 0.1787654e-1, -0.420059e-2}
)

func evalPoly(y *ember.Tensor, coef []float64) *ember.Tensor {
	r := full(y, nil, coef[len(coef)-1])
	for i := len(coef) - 2; i >= 0; i-- {
		r = y.Mul(r).AddScalar(coef[i])
	}
	return r
}

// logBesselI is torch's _log_modified_bessel_fn: log I_order(x), x > 0,
// order 0 or 1. Above 3.75 it is x − ½log x + log(poly(3.75/x)), the
// exponentially scaled form, so it does not overflow for large x.
func logBesselI(x *ember.Tensor, order int) *ember.Tensor {
	cs, cl := i0Small, i0Large
	if order == 1 {
		cs, cl = i1Small, i1Large
	}
	y := x.DivScalar(3.75)
	small := evalPoly(y.Square(), cs)
	if order == 1 {
		small = x.Abs().Mul(small)
	}
	small = small.Log()
	large := x.Sub(x.Log().MulScalar(0.5)).Add(evalPoly(x.Reciprocal().MulScalar(3.75), cl).Log())
	return ember.Where(x.LtScalar(3.75), small, large)
}

func (d *VonMises) Mean() *ember.Tensor { nilGuard(d, "Mean"); return d.Loc }

// Variance is the circular variance 1 − I1(κ)/I0(κ).
func (d *VonMises) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	return logBesselI(d.Concentration, 1).Sub(logBesselI(d.Concentration, 0)).Exp().RSubScalar(1)
}
func (d *VonMises) Stddev() *ember.Tensor { nilGuard(d, "Stddev"); return d.Variance().Sqrt() }

func (d *VonMises) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "Real()", isReal(v))
	v = asFloat(v, d.Loc)
	lp := d.Concentration.Mul(v.Sub(d.Loc).Cos())
	return lp.SubScalar(log2Pi).Sub(logBesselI(d.Concentration, 0))
}

// Sample draws by Best and Fisher's rejection method, as torch: each
// round proposes for the whole tensor and keeps the first accepted
// proposal of every element.
func (d *VonMises) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor {
		shape := d.extended(s)
		o := opts(d.Loc)
		k := d.Concentration.Detach()
		r := d.proposalR
		x := ember.Zeros(shape, o...)
		done := x.Ne(x)
		for round := 0; round < maxRounds; round++ {
			u1, u2, u3 := ember.Rand(shape, o...), ember.Rand(shape, o...), ember.Rand(shape, o...)
			z := u1.MulScalar(math.Pi).Cos()
			f := r.Mul(z).AddScalar(1).Div(r.Add(z))
			c := k.Mul(r.Sub(f))
			accept := c.Mul(c.RSubScalar(2)).Sub(u2).GtScalar(0).LogicalOr(c.Div(u2).Log().AddScalar(1).Sub(c).Ge(full(c, nil, 0)))
			take := accept.LogicalAnd(done.LogicalNot())
			x = ember.Where(take, u3.SubScalar(0.5).Sign().Mul(f.Acos()), x)
			done = done.LogicalOr(accept)
			if isMeta(x) || allTrue(done) {
				break
			}
		}
		// (x + π + loc) mod 2π − π, the remainder taking the divisor's sign
		y := x.AddScalar(math.Pi).Add(d.Loc.Detach())
		return y.Sub(y.DivScalar(2 * math.Pi).Floor().MulScalar(2 * math.Pi)).SubScalar(math.Pi)
	})
}
