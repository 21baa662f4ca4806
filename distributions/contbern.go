package distributions

import (
	"math"

	"github.com/emberml/ember"
)

// ContinuousBernoulli is the continuous Bernoulli distribution on [0, 1]
// (Loaiza-Ganem and Cunningham 2019), as
// torch.distributions.ContinuousBernoulli: density ∝ p^x (1−p)^(1−x),
// computed by Taylor expansions for p in torch's unstable region (0.499,
// 0.501]. Probabilities are clamped to [eps, 1 − eps] (and, as in torch,
// only then checked against [0, 1], so only NaN is refused).
type ContinuousBernoulli struct {
	base
	Probs, Logits *ember.Tensor
}

const cbLo, cbHi = 0.499, 0.501 // torch's default lims

// NewContinuousBernoulliProbs returns ContinuousBernoulli(probs).
func NewContinuousBernoulliProbs(probs *ember.Tensor) *ContinuousBernoulli {
	p, shape := broadcastAll("distributions.ContinuousBernoulli", probs)
	c := clampProbs(p[0])
	d := &ContinuousBernoulli{base: base{name: "ContinuousBernoulli", batch: shape, params: []param{{"probs", c}}}, Probs: c}
	d.check("probs", c, c.Ge(full(c, nil, 0)).LogicalAnd(c.Le(full(c, nil, 1))), "Interval(lower_bound=0.0, upper_bound=1.0)")
	d.Logits = probsToLogits(c, true)
	return d
}

// NewContinuousBernoulliLogits returns ContinuousBernoulli(sigmoid(logits)).
func NewContinuousBernoulliLogits(logits *ember.Tensor) *ContinuousBernoulli {
	p, shape := broadcastAll("distributions.ContinuousBernoulli", logits)
	d := &ContinuousBernoulli{base: base{name: "ContinuousBernoulli", batch: shape, params: []param{{"logits", p[0]}}}, Logits: p[0]}
	d.check("logits", p[0], p[0].Eq(p[0]), "Real()")
	d.Probs = clampProbs(p[0].Sigmoid())
	return d
}

func (d *ContinuousBernoulli) outside() *ember.Tensor {
	return d.Probs.GtScalar(cbLo).LogicalNot().LogicalOr(d.Probs.GtScalar(cbHi))
}

func (d *ContinuousBernoulli) cutProbs() *ember.Tensor {
	return ember.Where(d.outside(), d.Probs, full(d.Probs, nil, cbLo).Expand(d.Probs.Shape()...))
}

// logNorm is torch's _cont_bern_log_norm, the log normalising constant.
func (d *ContinuousBernoulli) logNorm() *ember.Tensor {
	cut := d.cutProbs()
	le := cut.GtScalar(0.5).LogicalNot()
	ge := cut.LtScalar(0.5).LogicalNot()
	below := ember.Where(le, cut, ember.ZerosLike(cut))
	above := ember.Where(ge, cut, ember.OnesLike(cut))
	logNorm := cut.Neg().Log1p().Sub(cut.Log()).Abs().Log().Sub(
		ember.Where(le, below.MulScalar(-2).Log1p(), above.MulScalar(2).SubScalar(1).Log()))
	x := d.Probs.SubScalar(0.5).Square()
	taylor := x.MulScalar(104.0 / 45).AddScalar(4.0 / 3).Mul(x).AddScalar(math.Ln2)
	return ember.Where(d.outside(), logNorm, taylor)
}

func (d *ContinuousBernoulli) HasRSample() bool {
	nilGuard(d, "HasRSample")
	return true
}

func (d *ContinuousBernoulli) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	cut := d.cutProbs()
	mus := cut.Div(cut.MulScalar(2).SubScalar(1)).Add(cut.Neg().Log1p().Sub(cut.Log()).Reciprocal())
	x := d.Probs.SubScalar(0.5)
	taylor := x.Square().MulScalar(16.0 / 45).AddScalar(1.0 / 3).Mul(x).AddScalar(0.5)
	return ember.Where(d.outside(), mus, taylor)
}

func (d *ContinuousBernoulli) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	cut := d.cutProbs()
	vars := cut.Mul(cut.SubScalar(1)).Div(cut.MulScalar(-2).AddScalar(1).Square()).Add(cut.Neg().Log1p().Sub(cut.Log()).Square().Reciprocal())
	x := d.Probs.SubScalar(0.5).Square()
	taylor := x.MulScalar(128.0 / 945).RSubScalar(1.0 / 15).Mul(x).RSubScalar(1.0 / 12)
	return ember.Where(d.outside(), vars, taylor)
}

func (d *ContinuousBernoulli) Stddev() *ember.Tensor {
	nilGuard(d, "Stddev")
	return d.Variance().Sqrt()
}

func (d *ContinuousBernoulli) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor { return d.RSample(s...) })
}

// RSample returns ICDF(u), u uniform on [0, 1).
func (d *ContinuousBernoulli) RSample(s ...int) *ember.Tensor {
	nilGuard(d, "RSample")
	return d.ICDF(ember.Rand(d.extended(s), opts(d.Probs)...))
}

func (d *ContinuousBernoulli) unit(v *ember.Tensor) func() *ember.Tensor {
	return func() *ember.Tensor { return v.Ge(full(v, nil, 0)).LogicalAnd(v.Le(full(v, nil, 1))) }
}

func (d *ContinuousBernoulli) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "Interval(lower_bound=0.0, upper_bound=1.0)", d.unit(v))
	v = asFloat(v, d.Logits)
	shape := ember.BroadcastShapes(d.op(".LogProb"), d.Logits.Shape(), v.Shape())
	return ember.BCEWithLogits(d.Logits.Expand(shape...), v.Expand(shape...), "none").Neg().Add(d.logNorm())
}

func (d *ContinuousBernoulli) CDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "CDF")
	d.validateSample("CDF", v, "Interval(lower_bound=0.0, upper_bound=1.0)", d.unit(v))
	v = asFloat(v, d.Probs)
	cut := d.cutProbs()
	cdfs := cut.Pow(v).Mul(cut.RSubScalar(1).Pow(v.RSubScalar(1))).Add(cut).SubScalar(1).Div(cut.MulScalar(2).SubScalar(1))
	shape := cdfs.Shape()
	unbounded := ember.Where(d.outside(), cdfs, v.Expand(shape...))
	ve := v.Expand(shape...)
	return ember.Where(ve.GtScalar(0).LogicalNot(), ember.ZerosLike(unbounded),
		ember.Where(ve.LtScalar(1).LogicalNot(), ember.OnesLike(unbounded), unbounded))
}

func (d *ContinuousBernoulli) ICDF(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "ICDF")
	v = asFloat(v, d.Probs)
	cut := d.cutProbs()
	x := cut.Neg().Add(v.Mul(cut.MulScalar(2).SubScalar(1))).Log1p().Sub(cut.Neg().Log1p()).Div(cut.Log().Sub(cut.Neg().Log1p()))
	return ember.Where(d.outside(), x, v.Expand(x.Shape()...))
}

func (d *ContinuousBernoulli) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	lp0 := d.Probs.Neg().Log1p()
	lp1 := d.Probs.Log()
	return d.Mean().Mul(lp0.Sub(lp1)).Sub(d.logNorm()).Sub(lp0)
}
