package distributions

import (
	"math"

	"github.com/emberml/ember"
)

// clampProbs is torch's clamp_probs: p clamped to [eps, 1 − eps].
func clampProbs(p *ember.Tensor) *ember.Tensor {
	e := eps(p.DType())
	return p.Clamp(e, 1-e)
}

// temperatureLike checks the temperature and casts it to like's dtype.
func temperatureLike(op string, temperature, like *ember.Tensor) *ember.Tensor {
	if temperature == nil {
		panic(&ember.ValueError{Op: op, Msg: "a parameter is nil"})
	}
	return asFloat(temperature, like)
}

// RelaxedBernoulli is the relaxed (Concrete, Gumbel-sigmoid) Bernoulli
// on (0, 1) of a temperature, as torch.distributions.RelaxedBernoulli:
// reparameterised draws sigmoid((logit u + logits)/temperature). Its
// batch shape is the probabilities' (the temperature, usually a scalar,
// is not broadcast into it, as torch). torch gives it no moments, entropy
// or CDF: they panic with a *NotImplementedError.
type RelaxedBernoulli struct {
	base
	Temperature, Probs, Logits *ember.Tensor
}

// NewRelaxedBernoulliProbs returns RelaxedBernoulli(temperature, probs);
// probs in [0, 1].
func NewRelaxedBernoulliProbs(temperature, probs *ember.Tensor) *RelaxedBernoulli {
	const op = "distributions.RelaxedBernoulli"
	p, shape := broadcastAll(op, probs)
	b := &base{name: "LogitRelaxedBernoulli", batch: shape, params: []param{{"probs", p[0]}}} // torch checks its base
	b.check("probs", p[0], p[0].Ge(full(p[0], nil, 0)).LogicalAnd(p[0].Le(full(p[0], nil, 1))), "Interval(lower_bound=0.0, upper_bound=1.0)")
	return &RelaxedBernoulli{base: base{name: "RelaxedBernoulli", batch: shape}, Temperature: temperatureLike(op, temperature, p[0]),
		Probs: p[0], Logits: probsToLogits(p[0], true)}
}

// NewRelaxedBernoulliLogits returns RelaxedBernoulli(temperature,
// sigmoid(logits)).
func NewRelaxedBernoulliLogits(temperature, logits *ember.Tensor) *RelaxedBernoulli {
	const op = "distributions.RelaxedBernoulli"
	p, shape := broadcastAll(op, logits)
	b := &base{name: "LogitRelaxedBernoulli", batch: shape, params: []param{{"logits", p[0]}}}
	b.check("logits", p[0], p[0].Eq(p[0]), "Real()")
	return &RelaxedBernoulli{base: base{name: "RelaxedBernoulli", batch: shape}, Temperature: temperatureLike(op, temperature, p[0]),
		Probs: p[0].Sigmoid(), Logits: p[0]}
}

func (d *RelaxedBernoulli) HasRSample() bool {
	nilGuard(d, "HasRSample")
	return true
}
func (d *RelaxedBernoulli) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	d.notImplemented("Mean")
	return nil
}
func (d *RelaxedBernoulli) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	d.notImplemented("Variance")
	return nil
}
func (d *RelaxedBernoulli) Stddev() *ember.Tensor {
	nilGuard(d, "Stddev")
	d.notImplemented("Stddev")
	return nil
}
func (d *RelaxedBernoulli) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor { return d.RSample(s...) })
}

// RSample returns sigmoid((log u − log(1−u) + log p − log(1−p))/temperature)
// clamped to [tiny, 1 − eps], u and p clamped to [eps, 1 − eps], as torch.
func (d *RelaxedBernoulli) RSample(s ...int) *ember.Tensor {
	nilGuard(d, "RSample")
	shape := d.extended(s)
	dt := d.Probs.DType()
	p := clampProbs(d.Probs.Expand(shape...))
	u := clampProbs(ember.Rand(shape, opts(d.Probs)...))
	x := u.Log().Sub(u.Neg().Log1p()).Add(p.Log()).Sub(p.Neg().Log1p()).Div(d.Temperature)
	return x.Sigmoid().Clamp(tiny(dt), 1-eps(dt))
}

func (d *RelaxedBernoulli) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "Interval(lower_bound=0.0, upper_bound=1.0)", func() *ember.Tensor {
		return v.Ge(full(v, nil, 0)).LogicalAnd(v.Le(full(v, nil, 1)))
	})
	v = asFloat(v, d.Logits)
	dt := v.DType()
	y := v.Clamp(tiny(dt), 1-eps(dt))
	x := y.Log().Sub(y.Neg().Log1p()) // the sigmoid's inverse, as torch
	diff := d.Logits.Sub(x.Mul(d.Temperature))
	lp := d.Temperature.Log().Add(diff).Sub(diff.Exp().Log1p().MulScalar(2))
	ladj := x.Neg().Softplus(1, 20).Neg().Sub(x.Softplus(1, 20))
	return lp.Sub(ladj)
}

// RelaxedOneHotCategorical is the relaxed one-hot categorical (Concrete,
// Gumbel-softmax) distribution on the simplex of the last dim, as
// torch.distributions.RelaxedOneHotCategorical: reparameterised draws
// softmax((logits + Gumbel noise)/temperature). torch gives it no
// moments, entropy or CDF: they panic with a *NotImplementedError.
type RelaxedOneHotCategorical struct {
	base
	Temperature *ember.Tensor
	cat         *Categorical
}

// NewRelaxedOneHotCategoricalProbs returns
// RelaxedOneHotCategorical(temperature, probs), probs non-negative
// weights over the last dim.
func NewRelaxedOneHotCategoricalProbs(temperature, probs *ember.Tensor) *RelaxedOneHotCategorical {
	return newRelaxedOneHot(temperature, newCategorical("Categorical", probs, true))
}

// NewRelaxedOneHotCategoricalLogits returns
// RelaxedOneHotCategorical(temperature, softmax(logits, -1)).
func NewRelaxedOneHotCategoricalLogits(temperature, logits *ember.Tensor) *RelaxedOneHotCategorical {
	return newRelaxedOneHot(temperature, newCategorical("Categorical", logits, false))
}

func newRelaxedOneHot(temperature *ember.Tensor, c *Categorical) *RelaxedOneHotCategorical {
	k := c.Logits.Shape()[c.Logits.Dim()-1]
	return &RelaxedOneHotCategorical{base: base{name: "RelaxedOneHotCategorical", batch: c.batch, event: ember.Shape{k}},
		Temperature: temperatureLike("distributions.RelaxedOneHotCategorical", temperature, c.Logits), cat: c}
}

// Probs and Logits are the normalised parameters, [batch..., K].
func (d *RelaxedOneHotCategorical) Probs() *ember.Tensor {
	nilGuard(d, "Probs")
	return d.cat.Probs
}
func (d *RelaxedOneHotCategorical) Logits() *ember.Tensor {
	nilGuard(d, "Logits")
	return d.cat.Logits
}
func (d *RelaxedOneHotCategorical) HasRSample() bool {
	nilGuard(d, "HasRSample")
	return true
}
func (d *RelaxedOneHotCategorical) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	d.notImplemented("Mean")
	return nil
}
func (d *RelaxedOneHotCategorical) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	d.notImplemented("Variance")
	return nil
}
func (d *RelaxedOneHotCategorical) Stddev() *ember.Tensor {
	nilGuard(d, "Stddev")
	d.notImplemented("Stddev")
	return nil
}
func (d *RelaxedOneHotCategorical) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor { return d.RSample(s...) })
}

// RSample returns softmax((logits + g)/temperature), g = −log(−log u)
// Gumbel noise, u clamped to [eps, 1 − eps].
func (d *RelaxedOneHotCategorical) RSample(s ...int) *ember.Tensor {
	nilGuard(d, "RSample")
	u := clampProbs(ember.Rand(d.extended(s), opts(d.cat.Logits)...))
	g := u.Log().Neg().Log().Neg()
	scores := d.cat.Logits.Add(g).Div(d.Temperature)
	return scores.Sub(scores.LogSumExp(ember.Dims(-1), ember.KeepDim())).Exp()
}

func (d *RelaxedOneHotCategorical) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "Simplex()", func() *ember.Tensor {
		vf := v.Cast(ember.Float64)
		return v.Ge(full(v, nil, 0)).All(ember.Dims(-1)).LogicalAnd(vf.Sum(ember.Dims(-1)).SubScalar(1).Abs().LtScalar(1e-6))
	})
	x := asFloat(v, d.cat.Logits).Log()
	k := float64(d.event[0])
	logScale := d.Temperature.Log().MulScalar(k - 1).AddScalar(lgamma(k))
	score := d.cat.Logits.Sub(x.Mul(d.Temperature))
	score = score.Sub(score.LogSumExp(ember.Dims(-1), ember.KeepDim())).Sum(ember.Dims(-1))
	return score.Add(logScale).Sub(x.Sum(ember.Dims(-1)))
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}
