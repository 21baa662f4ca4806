package distributions

import (
	"fmt"

	"github.com/emberml/ember"
)

// probsToLogits is torch's probs_to_logits: log(p) − log1p(−p) for binary
// probabilities, log(p) otherwise, p clamped to [eps, 1−eps].
func probsToLogits(p *ember.Tensor, binary bool) *ember.Tensor {
	e := eps(p.DType())
	c := p.Clamp(e, 1-e)
	if binary {
		return c.Log().Sub(c.Neg().Log1p())
	}
	return c.Log()
}

// Bernoulli is the Bernoulli distribution on {0, 1}, as
// torch.distributions.Bernoulli.
type Bernoulli struct {
	base
	Probs, Logits *ember.Tensor
}

// NewBernoulliProbs returns Bernoulli(probs); probs in [0, 1].
func NewBernoulliProbs(probs *ember.Tensor) *Bernoulli {
	p, shape := broadcastAll("distributions.Bernoulli", probs)
	d := &Bernoulli{base: base{name: "Bernoulli", batch: shape, params: []param{{"probs", p[0]}}}, Probs: p[0]}
	d.check("probs", p[0], p[0].Ge(full(p[0], nil, 0)).LogicalAnd(p[0].Le(full(p[0], nil, 1))), "Interval(lower_bound=0.0, upper_bound=1.0)")
	d.Logits = probsToLogits(p[0], true)
	return d
}

// NewBernoulliLogits returns Bernoulli(sigmoid(logits)).
func NewBernoulliLogits(logits *ember.Tensor) *Bernoulli {
	p, shape := broadcastAll("distributions.Bernoulli", logits)
	d := &Bernoulli{base: base{name: "Bernoulli", batch: shape, params: []param{{"logits", p[0]}}}, Logits: p[0]}
	d.check("logits", p[0], p[0].Eq(p[0]), "Real()")
	d.Probs = p[0].Sigmoid()
	return d
}

func (d *Bernoulli) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return d.Probs
}
func (d *Bernoulli) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	return d.Probs.Mul(d.Probs.RSubScalar(1))
}
func (d *Bernoulli) Stddev() *ember.Tensor {
	nilGuard(d, "Stddev")
	return d.Variance().Sqrt()
}

// Sample returns 0/1 draws in the parameters' dtype.
func (d *Bernoulli) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor {
		u := ember.Rand(d.extended(s), opts(d.Probs)...)
		return u.Lt(d.Probs).Cast(d.Probs.DType())
	})
}

func (d *Bernoulli) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "Boolean()", func() *ember.Tensor { return isBinary(v) })
	v = asFloat(v, d.Logits)
	shape := ember.BroadcastShapes(d.op(".LogProb"), d.Logits.Shape(), v.Shape())
	return ember.BCEWithLogits(d.Logits.Expand(shape...), v.Expand(shape...), "none").Neg()
}

func (d *Bernoulli) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	return ember.BCEWithLogits(d.Logits, d.Probs, "none")
}

func isBinary(v *ember.Tensor) *ember.Tensor {
	if v.DType() == ember.Bool {
		return v.Eq(v)
	}
	return v.EqScalar(0).LogicalOr(v.EqScalar(1))
}

// Categorical is the categorical distribution over {0, ..., K−1} (K the
// last dim of the parameters), as torch.distributions.Categorical. Its
// samples and LogProb's values are Int64 indices.
type Categorical struct {
	base
	Probs, Logits *ember.Tensor // normalised, [batch..., K]
}

func newCategorical(name string, t *ember.Tensor, isProbs bool) *Categorical {
	op := "distributions." + name
	if t == nil {
		panic(&ember.ValueError{Op: op, Msg: "a parameter is nil"})
	}
	if t.Dim() < 1 {
		panic(&ember.ValueError{Op: op, Msg: "`probs` parameter must be at least one-dimensional."})
	}
	if !t.DType().IsFloat() {
		t = t.Cast(ember.Float32)
	}
	shape := t.Shape()
	d := &Categorical{base: base{name: name, batch: shape[:len(shape)-1]}}
	if isProbs {
		d.params = []param{{"probs", t}}
		d.Probs = t.Div(t.Sum(ember.Dims(-1), ember.KeepDim()))
		// torch checks the normalised probs: Simplex() (all-zero rows are NaN)
		d.check("probs", t, d.Probs.Ge(full(t, nil, 0)).All(ember.Dims(-1)).
			LogicalAnd(d.Probs.Sum(ember.Dims(-1)).SubScalar(1).Abs().LtScalar(1e-6)), "Simplex()")
		d.Logits = probsToLogits(d.Probs, false)
	} else {
		d.params = []param{{"logits", t}}
		d.Logits = t.Sub(t.LogSumExp(ember.Dims(-1), ember.KeepDim()))
		// torch checks the normalised logits: NaN also where a +Inf made them so
		d.check("logits", t, d.Logits.Eq(d.Logits), "IndependentConstraint(Real(), 1)")
		d.Probs = d.Logits.Softmax(-1)
	}
	return d
}

// NewCategoricalProbs returns Categorical(probs): non-negative weights
// over the last dim, normalised to sum 1.
func NewCategoricalProbs(probs *ember.Tensor) *Categorical {
	return newCategorical("Categorical", probs, true)
}

// NewCategoricalLogits returns Categorical(softmax(logits, -1)).
func NewCategoricalLogits(logits *ember.Tensor) *Categorical {
	return newCategorical("Categorical", logits, false)
}

func (d *Categorical) k() int { s := d.Probs.Shape(); return s[len(s)-1] }

// Mean and Variance are NaN, as torch (a categorical has no order).
func (d *Categorical) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return full(d.Probs, d.batch, nan())
}
func (d *Categorical) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	return full(d.Probs, d.batch, nan())
}
func (d *Categorical) Stddev() *ember.Tensor {
	nilGuard(d, "Stddev")
	return full(d.Probs, d.batch, nan())
}

// Sample returns Int64 indices of shape sample + batch.
func (d *Categorical) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	shape := d.extended(s)
	n := ember.Shape(s).NumElements()
	return noGrad(func() *ember.Tensor {
		if n == 0 || d.batch.NumElements() == 0 {
			return ember.Zeros(shape, ember.On(d.Probs.Device()), ember.Dtype(ember.Int64))
		}
		p2 := d.Probs.Reshape(-1, d.k())
		idx := ember.Multinomial(p2, n, true) // [R, n]
		return idx.T().Contiguous().Reshape(shape...)
	})
}

func (d *Categorical) support(v *ember.Tensor) func() *ember.Tensor {
	return func() *ember.Tensor {
		return v.Ge(ember.Full(nil, 0, ember.On(v.Device()), ember.Dtype(v.DType()))).
			LogicalAnd(v.LtScalar(float64(d.k()))).LogicalAnd(v.Eq(v.Floor()))
	}
}

// LogProb returns log p[value] for Int64 (or integral) indices value.
func (d *Categorical) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	if v != nil && v.DType() == ember.Bool { // indices 0 and 1, as torch's value.long()
		v = v.Cast(ember.Int64)
	}
	d.validateSample("LogProb", v, fmt.Sprintf("IntegerInterval(lower_bound=0, upper_bound=%d)", d.k()-1), d.support(v))
	if v.DType() != ember.Int64 {
		v = v.Cast(ember.Int64)
	}
	ls := d.Logits.Shape()
	shape := ember.BroadcastShapes(d.op(".LogProb"), append(v.Shape(), 1), ls)
	idx := v.Unsqueeze(-1).Expand(append(shape[:len(shape)-1:len(shape)-1], 1)...)
	lp := d.Logits.Expand(append(shape[:len(shape)-1:len(shape)-1], ls[len(ls)-1])...)
	return lp.Gather(-1, idx).Squeeze(-1)
}

func (d *Categorical) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	l := d.Logits.Clamp(minReal(d.Logits.DType()), posInf())
	return l.Mul(d.Probs).Sum(ember.Dims(-1)).Neg()
}

// OneHotCategorical is the categorical distribution with one-hot draws
// (event shape [K]), as torch.distributions.OneHotCategorical.
type OneHotCategorical struct {
	base
	cat *Categorical
}

// NewOneHotCategoricalProbs returns OneHotCategorical(probs).
func NewOneHotCategoricalProbs(probs *ember.Tensor) *OneHotCategorical {
	return newOneHot(newCategorical("OneHotCategorical", probs, true))
}

// NewOneHotCategoricalLogits returns OneHotCategorical(softmax(logits)).
func NewOneHotCategoricalLogits(logits *ember.Tensor) *OneHotCategorical {
	return newOneHot(newCategorical("OneHotCategorical", logits, false))
}

func newOneHot(c *Categorical) *OneHotCategorical {
	b := c.base
	b.event = ember.Shape{c.k()}
	return &OneHotCategorical{base: b, cat: c}
}

// Probs and Logits are the normalised parameters, [batch..., K].
func (d *OneHotCategorical) Probs() *ember.Tensor {
	nilGuard(d, "Probs")
	return d.cat.Probs
}
func (d *OneHotCategorical) Logits() *ember.Tensor {
	nilGuard(d, "Logits")
	return d.cat.Logits
}
func (d *OneHotCategorical) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return d.cat.Probs
}
func (d *OneHotCategorical) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	return d.cat.Probs.Mul(d.cat.Probs.RSubScalar(1))
}
func (d *OneHotCategorical) Stddev() *ember.Tensor {
	nilGuard(d, "Stddev")
	return d.Variance().Sqrt()
}
func (d *OneHotCategorical) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	return d.cat.Entropy()
}

// Sample returns one-hot vectors in the parameters' dtype.
func (d *OneHotCategorical) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	idx := d.cat.Sample(s...)
	return noGrad(func() *ember.Tensor { return ember.OneHot(idx, d.cat.k()).Cast(d.cat.Probs.DType()) })
}

func (d *OneHotCategorical) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "OneHot()", func() *ember.Tensor {
		return isBinary(v).All(ember.Dims(-1)).LogicalAnd(v.Cast(ember.Float64).Sum(ember.Dims(-1)).EqScalar(1))
	})
	_, idx := v.MaxDim(-1, false)
	return d.cat.LogProb(idx)
}

// Poisson is the Poisson distribution of rate λ, as
// torch.distributions.Poisson.
type Poisson struct {
	base
	Rate *ember.Tensor
}

// NewPoisson returns Poisson(rate); rate must be non-negative.
func NewPoisson(rate *ember.Tensor) *Poisson {
	p, shape := broadcastAll("distributions.Poisson", rate)
	d := &Poisson{base: base{name: "Poisson", batch: shape, params: []param{{"rate", p[0]}}}, Rate: p[0]}
	d.check("rate", p[0], p[0].Ge(full(p[0], nil, 0)), "GreaterThanEq(lower_bound=0.0)")
	return d
}

func (d *Poisson) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return d.Rate
}
func (d *Poisson) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	return d.Rate
}
func (d *Poisson) Stddev() *ember.Tensor {
	nilGuard(d, "Stddev")
	return d.Rate.Sqrt()
}

// Sample returns counts in the rate's dtype.
func (d *Poisson) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor {
		r := d.Rate.Expand(d.extended(s)...)
		return samplePoisson(r.Cast(ember.Float64)).Cast(d.Rate.DType())
	})
}

func nonnegInt(v *ember.Tensor) func() *ember.Tensor {
	return func() *ember.Tensor {
		return v.Ge(ember.Full(nil, 0, ember.On(v.Device()), ember.Dtype(v.DType()))).LogicalAnd(v.Eq(v.Floor()))
	}
}

func (d *Poisson) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "IntegerGreaterThan(lower_bound=0)", nonnegInt(v))
	v = asFloat(v, d.Rate)
	return v.Xlogy(d.Rate).Sub(d.Rate).Sub(v.AddScalar(1).Lgamma())
}

// Geometric is the number of failures before the first success of
// Bernoulli(probs) trials, as torch.distributions.Geometric.
type Geometric struct {
	base
	Probs, Logits *ember.Tensor
}

// NewGeometricProbs returns Geometric(probs); probs in (0, 1].
func NewGeometricProbs(probs *ember.Tensor) *Geometric {
	p, shape := broadcastAll("distributions.Geometric", probs)
	d := &Geometric{base: base{name: "Geometric", batch: shape, params: []param{{"probs", p[0]}}}, Probs: p[0]}
	d.check("probs", p[0], p[0].Ge(full(p[0], nil, 0)).LogicalAnd(p[0].Le(full(p[0], nil, 1))), "Interval(lower_bound=0.0, upper_bound=1.0)")
	if !allTrue(p[0].GtScalar(0)) {
		panic(&ember.ValueError{Op: "distributions.Geometric", Msg: fmt.Sprintf("Expected parameter probs (Tensor of shape %v) of distribution %s to be positive but found invalid values", p[0].Shape(), d.String())})
	}
	d.Logits = probsToLogits(p[0], true)
	return d
}

// NewGeometricLogits returns Geometric(sigmoid(logits)).
func NewGeometricLogits(logits *ember.Tensor) *Geometric {
	p, shape := broadcastAll("distributions.Geometric", logits)
	d := &Geometric{base: base{name: "Geometric", batch: shape, params: []param{{"logits", p[0]}}}, Logits: p[0]}
	d.check("logits", p[0], p[0].Eq(p[0]), "Real()")
	d.Probs = p[0].Sigmoid()
	return d
}

func (d *Geometric) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return d.Probs.Reciprocal().SubScalar(1)
}
func (d *Geometric) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	return d.Probs.Reciprocal().SubScalar(1).Div(d.Probs)
}
func (d *Geometric) Stddev() *ember.Tensor {
	nilGuard(d, "Stddev")
	return d.Variance().Sqrt()
}

// Sample returns floor(log(u)/log1p(−p)) in the parameters' dtype.
func (d *Geometric) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor {
		u := ember.Rand(d.extended(s), opts(d.Probs)...).Clamp(tiny(d.Probs.DType()), posInf())
		return u.Log().Div(d.Probs.Neg().Log1p()).Floor()
	})
}

func (d *Geometric) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "IntegerGreaterThan(lower_bound=0)", nonnegInt(v))
	v = asFloat(v, d.Probs)
	shape := ember.BroadcastShapes(d.op(".LogProb"), v.Shape(), d.Probs.Shape())
	p := d.Probs.Expand(shape...)
	v = v.Expand(shape...)
	// torch zeroes probs where probs == 1 and value == 0 (0·log 0 = 0)
	p1 := ember.WhereScalar(p.EqScalar(1).LogicalAnd(v.EqScalar(0)), 0, p)
	return v.Mul(p1.Neg().Log1p()).Add(d.Probs.Log())
}

func (d *Geometric) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	return ember.BCEWithLogits(d.Logits, d.Probs, "none").Div(d.Probs)
}
