package distributions

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/emberml/ember"
)

// expectErr runs f and checks it panics with an error of target's type whose
// message holds each of subs (torch's wording).
func expectErr[E error](t *testing.T, what string, f func(), subs ...string) {
	t.Helper()
	err := ember.Try(f)
	var e E
	if !errors.As(err, &e) {
		t.Errorf("%s: %v, want a %T", what, err, e)
		return
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s: %q lacks %q", what, err, s)
		}
	}
}

func TestErrorsAsTorch(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		v := func(x ...float64) *ember.Tensor { return vec(dev, x...) }
		type ve = *ember.ValueError
		type ni = *NotImplementedError // what torch leaves unimplemented
		expectErr[ve](t, "Normal scale", func() { NewNormal(v(0, 1), v(1, -1)) },
			"distributions.Normal", "Expected parameter scale (Tensor of shape [2]) of distribution Normal(loc: [2], scale: [2]) to satisfy the constraint GreaterThan(lower_bound=0.0), but found invalid values")
		expectErr[ve](t, "Normal NaN loc", func() { NewNormal(v(nan()), v(1)) }, "parameter loc", "Real()")
		expectErr[ve](t, "Bernoulli probs", func() { NewBernoulliProbs(v(0.5, 1.5)) }, "Interval(lower_bound=0.0, upper_bound=1.0)")
		expectErr[ve](t, "Categorical probs", func() { NewCategoricalProbs(v(0.5, -0.5)) }, "Simplex()")
		expectErr[ve](t, "Categorical zero row", func() { NewCategoricalProbs(v(0, 0)) }, "Categorical(probs: [2])", "Simplex()")
		expectErr[ve](t, "Categorical NaN logits", func() { NewCategoricalLogits(v(nan(), 1)) }, "IndependentConstraint(Real(), 1)")
		// torch checks the normalised logits: +Inf makes them NaN (−Inf is valid)
		expectErr[ve](t, "Categorical +Inf logits", func() { NewCategoricalLogits(v(posInf(), 0)) }, "IndependentConstraint(Real(), 1)")
		expectErr[ve](t, "OneHotCategorical +Inf logits", func() { NewOneHotCategoricalLogits(v(0, posInf())) }, "IndependentConstraint(Real(), 1)")
		if err := ember.Try(func() { NewCategoricalLogits(v(math.Inf(-1), 0)) }); err != nil {
			t.Errorf("Categorical -Inf logits: %v, want accepted as torch", err)
		}
		expectErr[ve](t, "Geometric probs 0", func() { NewGeometricProbs(v(0, 0.5)) },
			"Expected parameter probs (Tensor of shape [2]) of distribution Geometric(probs: [2]) to be positive but found invalid values")
		expectErr[ve](t, "Categorical scalar", func() { NewCategoricalProbs(ember.Scalar(1, ember.On(dev))) }, "must be at least one-dimensional")
		expectErr[ve](t, "Uniform low >= high", func() { NewUniform(v(0, 1), v(1, 1)) }, "Uniform is not defined when low>= high")
		expectErr[ve](t, "Exponential rate", func() { NewExponential(v(0)) }, "parameter rate", "GreaterThan(lower_bound=0.0)")
		expectErr[ve](t, "Gamma concentration", func() { NewGamma(v(-1), v(1)) }, "parameter concentration")
		expectErr[ve](t, "Beta concentration0", func() { NewBeta(v(1), v(0)) }, "parameter concentration0")
		expectErr[ve](t, "Poisson rate", func() { NewPoisson(v(-0.1)) }, "GreaterThanEq(lower_bound=0.0)")
		expectErr[ve](t, "Binomial total_count", func() { NewBinomialProbs(v(2.5), v(0.5)) }, "parameter total_count", "IntegerGreaterThan(lower_bound=0)")
		expectErr[ve](t, "Binomial support", func() { NewBinomialProbs(v(3), v(0.5)).LogProb(v(4)) }, "within the support")
		expectErr[ni](t, "Binomial inhomogeneous entropy", func() { NewBinomialProbs(v(3, 4), v(0.5)).Entropy() }, "Inhomogeneous total count")
		expectErr[ni](t, "KL Binomial q.total_count > p.total_count", func() {
			KLDivergence(NewBinomialProbs(v(3), v(0.5)), NewBinomialProbs(v(4), v(0.5)))
		}, "q.total_count > p.total_count")
		expectErr[ve](t, "Dirichlet", func() { NewDirichlet(v(1, 0)) }, "parameter concentration")
		expectErr[ve](t, "Independent dims", func() { NewIndependent(NewNormal(v(0, 1), v(1)), 2) }, "reinterpreted_batch_ndims")
		expectErr[ve](t, "nil parameter", func() { NewNormal(nil, v(1)) }, "nil")
		expectErr[*ember.ShapeError](t, "unbroadcastable parameters", func() { NewNormal(v(0, 1), v(1, 2, 3)) }, "distributions.Normal")

		// LogProb's value: support and shape, as torch's _validate_sample
		expectErr[ve](t, "Exponential support", func() { NewExponential(v(1, 2)).LogProb(v(-1, 1)) },
			"Expected value argument (Tensor of shape [2]) to be within the support (GreaterThanEq(lower_bound=0.0)) of the distribution Exponential(rate: [2]), but found invalid values")
		expectErr[ve](t, "Bernoulli support", func() { NewBernoulliProbs(v(0.5)).LogProb(v(0.5)) }, "Boolean()")
		expectErr[ve](t, "Categorical support", func() {
			NewCategoricalProbs(v(0.5, 0.5)).LogProb(ember.FromSlice([]int64{2}, ember.Shape{1}).To(dev))
		}, "IntegerInterval(lower_bound=0, upper_bound=1)")
		expectErr[ve](t, "Poisson support", func() { NewPoisson(v(1)).LogProb(v(1.5)) }, "IntegerGreaterThan(lower_bound=0)")
		expectErr[ve](t, "Uniform support", func() { NewUniform(v(0), v(1)).LogProb(v(2)) }, "within the support")
		expectErr[ve](t, "Beta support", func() { NewBeta(v(1), v(1)).LogProb(v(1.5)) }, "within the support")
		expectErr[ve](t, "Normal value shape", func() { NewNormal(v(0, 1, 2), v(1)).LogProb(v(0, 1)) },
			"Value is not broadcastable with batch_shape+event_shape: [2] vs [3].")
		expectErr[ve](t, "Dirichlet event shape", func() { NewDirichlet(v(1, 1, 1)).LogProb(v(0.5, 0.5)) },
			"The right-most size of value must match event_shape: [2] vs [3].")

		expectErr[ni](t, "Bernoulli RSample", func() { NewBernoulliProbs(v(0.5)).RSample(2) }, "RSample")
		expectErr[ni](t, "Gamma CDF", func() { NewGamma(v(1), v(1)).CDF(v(1)) }, "CDF")
		expectErr[ni](t, "Poisson Entropy", func() { NewPoisson(v(1)).Entropy() }, "Entropy")
		expectErr[ni](t, "KL Normal Poisson", func() { KLDivergence(NewNormal(v(0), v(1)), NewPoisson(v(1))) }, "type Normal", "type Poisson")
		expectErr[ni](t, "KL LogNormal Normal", func() { KLDivergence(NewLogNormal(v(0), v(1)), NewNormal(v(0), v(1))) }, "LogNormal", "Normal")
		expectErr[ni](t, "KL Independent dims", func() {
			p := NewNormal(ember.Zeros(ember.Shape{2, 3}, ember.On(dev)), v(1))
			KLDivergence(NewIndependent(p, 1), NewIndependent(p, 2))
		}, "reinterpreted_batch_ndims")
		var nilNormal *Normal
		expectErr[ve](t, "KL of a nil *Normal", func() { KLDivergence(nilNormal, NewNormal(v(0), v(1))) }, "nil")
		expectErr[ve](t, "Independent of a nil *Normal", func() { NewIndependent(nilNormal, 0) }, "nil")
		expectErr[ve](t, "nil value", func() { NewNormal(v(0), v(1)).LogProb(nil) }, "nil")
		if dev != ember.CPU {
			expectErr[*ember.DeviceMismatchError](t, "value on the CPU", func() { NewNormal(v(0), v(1)).LogProb(ember.Scalar(0)) })
		}
		expectErr[ve](t, "negative sample shape", func() { NewNormal(v(0), v(1)).Sample(-1) }, "negative")
	})
}

// TestMetaShapes runs every distribution on the meta device: shapes only,
// no values checked or drawn.
func TestMetaShapes(t *testing.T) {
	m := func(s ...int) *ember.Tensor { return ember.Ones(ember.Shape(s), ember.On(ember.Meta)) }
	for _, c := range []struct {
		name        string
		d           Distribution
		value       *ember.Tensor
		sample, ent ember.Shape
	}{
		{"Normal", NewNormal(m(2, 1), m(3)), m(2, 3), ember.Shape{5, 2, 3}, ember.Shape{2, 3}},
		{"LogNormal", NewLogNormal(m(2, 1), m(3)), m(3), ember.Shape{5, 2, 3}, ember.Shape{2, 3}},
		{"Uniform", NewUniform(m(3).MulScalar(0), m(3)), m(3), ember.Shape{5, 3}, ember.Shape{3}},
		{"Exponential", NewExponential(m(4)), m(4), ember.Shape{5, 4}, ember.Shape{4}},
		{"Laplace", NewLaplace(m(4), m(1)), m(4), ember.Shape{5, 4}, ember.Shape{4}},
		{"Gamma", NewGamma(m(4), m(2, 1)), m(4), ember.Shape{5, 2, 4}, ember.Shape{2, 4}},
		{"Beta", NewBeta(m(4), m(4)), m(4), ember.Shape{5, 4}, ember.Shape{4}},
		{"Dirichlet", NewDirichlet(m(2, 3)), m(2, 3), ember.Shape{5, 2, 3}, ember.Shape{2}},
		{"Poisson", NewPoisson(m(4)), m(4), ember.Shape{5, 4}, nil},
		{"Binomial", NewBinomialLogits(m(2, 1), m(4)), m(4), ember.Shape{5, 2, 4}, ember.Shape{2, 4}},
		{"Bernoulli", NewBernoulliLogits(m(4)), m(4), ember.Shape{5, 4}, ember.Shape{4}},
		{"Geometric", NewGeometricProbs(m(4)), m(4), ember.Shape{5, 4}, ember.Shape{4}},
		{"Categorical", NewCategoricalLogits(m(2, 6)), ember.Zeros(ember.Shape{2}, ember.On(ember.Meta), ember.Dtype(ember.Int64)), ember.Shape{5, 2}, ember.Shape{2}},
		{"OneHotCategorical", NewOneHotCategoricalProbs(m(2, 6)), m(2, 6), ember.Shape{5, 2, 6}, ember.Shape{2}},
		{"Independent", NewIndependent(NewNormal(m(2, 3), m(1)), 1), m(2, 3), ember.Shape{5, 2, 3}, ember.Shape{2}},
	} {
		if s := c.d.Sample(5); !s.Shape().Equal(c.sample) || s.Device() != ember.Meta {
			t.Errorf("%s: Sample(5) %v on %v, want %v on meta", c.name, s.Shape(), s.Device(), c.sample)
		}
		bs := c.sample[1 : len(c.sample)-len(c.d.EventShape())]
		if lp := c.d.LogProb(c.value); !lp.Shape().Equal(bs) {
			t.Errorf("%s: LogProb %v, want %v", c.name, lp.Shape(), bs)
		}
		if c.ent != nil {
			if e := c.d.Entropy(); !e.Shape().Equal(c.ent) {
				t.Errorf("%s: Entropy %v, want %v", c.name, e.Shape(), c.ent)
			}
		}
	}
	if kl := KLDivergence(NewNormal(m(2, 1), m(3)), NewNormal(m(3), m(1))); !kl.Shape().Equal(ember.Shape{2, 3}) {
		t.Errorf("KL Normal on meta: %v", kl.Shape())
	}
}

// TestCategoricalBoolValue: torch's Categorical.log_prob takes Bool
// indices (value.long()): [True, False] of probs [0.2, 0.8] is
// [log 0.8, log 0.2].
func TestCategoricalBoolValue(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		c := NewCategoricalProbs(vec(dev, 0.2, 0.8))
		var lp *ember.Tensor
		if err := ember.Try(func() { lp = c.LogProb(ember.FromSlice([]bool{true, false}, ember.Shape{2}).To(dev)) }); err != nil {
			t.Fatal(err)
		}
		got := host(lp)
		for i, want := range []float64{math.Log(0.8), math.Log(0.2)} {
			if math.Abs(got[i]-want) > 1e-6 {
				t.Errorf("LogProb[%d] = %v, want %v", i, got[i], want)
			}
		}
	})
}
