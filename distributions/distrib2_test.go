package distributions

import (
	"math"
	"testing"

	"github.com/emberml/ember"
)

func mat(dev ember.Device, rows, cols int, v ...float64) *ember.Tensor {
	return ember.FromSlice(v, ember.Shape{rows, cols}).Cast(ember.Float32).To(dev)
}

// indicator is 1 where x < c, as Float64.
func indicator(x *ember.Tensor, c float64) *ember.Tensor {
	return x.Cast(ember.Float64).LtScalar(c).Cast(ember.Float64)
}

// TestSampleMoments2 checks the draws of the distributions added second
// against their exact moments (quantiles for the Cauchys, circular
// moments for the von Mises).
func TestSampleMoments2(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		ember.ManualSeed(17)
		n := draws(dev)

		// MultivariateNormal: the components and their sum (variance 2 + 1 + 2·0.3)
		cov := mat(dev, 2, 2, 2, 0.3, 0.3, 1)
		for name, d := range map[string]*MultivariateNormal{
			"covariance": NewMultivariateNormal(vec(dev, 1, -1), cov),
			"precision":  NewMultivariateNormalPrecision(vec(dev, 1, -1), mat(dev, 2, 2, 1/1.91, -0.3/1.91, -0.3/1.91, 2/1.91)),
			"scale_tril": NewMultivariateNormalScaleTril(vec(dev, 1, -1), mat(dev, 2, 2, math.Sqrt2, 0, 0.3/math.Sqrt2, math.Sqrt(1-0.045))),
		} {
			s := d.Sample(n)
			if !s.Shape().Equal(ember.Shape{n, 2}) {
				t.Fatalf("MultivariateNormal sample shape %v", s.Shape())
			}
			checkMoments(t, "MultivariateNormal "+name, s, []float64{1, -1}, []float64{2, 1})
			checkMoments(t, "MultivariateNormal "+name+" x0+x1", s.Sum(ember.Dims(1), ember.KeepDim()), []float64{0}, []float64{3.6})
		}

		s := NewStudentT(vec(dev, 10), vec(dev, 1), vec(dev, 2)).Sample(n)
		checkMoments(t, "StudentT", s, []float64{1}, []float64{4 * 10.0 / 8})

		// Cauchy(1, 2): P(x < 1) = ½, P(x < 3) = ¾
		s = NewCauchy(vec(dev, 1), vec(dev, 2)).Sample(n)
		checkMoments(t, "Cauchy median", indicator(s, 1), []float64{0.5}, []float64{0.25})
		checkMoments(t, "Cauchy quartile", indicator(s, 3), []float64{0.75}, []float64{0.1875})
		s = NewHalfCauchy(vec(dev, 2)).Sample(n)
		checkMoments(t, "HalfCauchy median", indicator(s, 2), []float64{0.5}, []float64{0.25})
		checkSupport(t, "HalfCauchy", s, func(x float64, _ int) bool { return x >= 0 }, 1)

		s = NewHalfNormal(vec(dev, 2)).Sample(n)
		checkMoments(t, "HalfNormal", s, []float64{2 * math.Sqrt(2/math.Pi)}, []float64{4 * (1 - 2/math.Pi)})
		checkSupport(t, "HalfNormal", s, func(x float64, _ int) bool { return x >= 0 }, 1)

		s = NewGumbel(vec(dev, 1), vec(dev, 2)).Sample(n)
		checkMoments(t, "Gumbel", s, []float64{1 + 2*eulerGamma}, []float64{4 * math.Pi * math.Pi / 6})

		s = NewChi2(vec(dev, 3, 0.5)).Sample(n)
		checkMoments(t, "Chi2", s, []float64{3, 0.5}, []float64{6, 1})

		g1, g2 := math.Gamma(1+1/1.5), math.Gamma(1+2/1.5)
		s = NewWeibull(vec(dev, 2), vec(dev, 1.5)).Sample(n)
		checkMoments(t, "Weibull", s, []float64{2 * g1}, []float64{4 * (g2 - g1*g1)})

		s = NewPareto(vec(dev, 1), vec(dev, 9)).Sample(n)
		checkMoments(t, "Pareto", s, []float64{9.0 / 8}, []float64{9.0 / 64 / 7})
		checkSupport(t, "Pareto", s, func(x float64, _ int) bool { return x >= 1 }, 1)

		// VonMises(0.5, κ): E cos(x − loc) = I1/I0, E sin(x − loc) = 0, with
		// the variances from I2/I0; draws in [−π, π)
		d := NewVonMises(vec(dev, 0.5), vec(dev, 2, 0.1, 50))
		s = d.Sample(n)
		checkSupport(t, "VonMises", s, func(x float64, _ int) bool { return x >= -math.Pi && x < math.Pi }, 3)
		c := s.Cast(ember.Float64).SubScalar(0.5)
		checkMoments(t, "VonMises cos", c.Cos(), []float64{0.6977746579640083, 0.04993760398793892, 0.9899489673784979},
			[]float64{0.16422319772120714, 0.4981301958285546, 0.00020206263867572627})
		checkMoments(t, "VonMises sin", c.Sin(), []float64{0, 0, 0}, []float64{0.34888732898200414, 0.49937603987938917, 0.019798979347569967})
		if got, want := host(d.Variance()), []float64{1 - 0.6977746579640083, 1 - 0.04993760398793892, 1 - 0.9899489673784979}; math.Abs(got[0]-want[0]) > 1e-6 || math.Abs(got[2]-want[2]) > 1e-6 {
			t.Errorf("VonMises variance %v, want 1 − I1/I0 = %v", got, want)
		}
		// a small κ (Float32) is nearly uniform: E cos x ≈ κ/2, both
		// variances ½ (not every draw at loc)
		s = NewVonMises(vec(dev, 0), vec(dev, 1e-4, 1e-7)).Sample(n)
		checkMoments(t, "VonMises small κ cos", s.Cast(ember.Float64).Cos(), []float64{5e-5, 5e-8}, []float64{0.5, 0.5})
		checkMoments(t, "VonMises small κ sin", s.Cast(ember.Float64).Sin(), []float64{0, 0}, []float64{0.5, 0.5})
	})
}

// TestRSampleGradients2 checks reparameterised gradients by hand: each
// draw is loc + scale·(a draw of the standard form), or scale·(one).
func TestRSampleGradients2(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		ember.ManualSeed(3)
		const n = 1000
		leaf := func(v float64) *ember.Tensor {
			return ember.Scalar(v, ember.On(dev), ember.Dtype(ember.Float64), ember.WithGrad())
		}
		near := func(what string, got *ember.Tensor, want float64) {
			t.Helper()
			if got == nil {
				t.Errorf("%s: no gradient", what)
				return
			}
			if g := got.Item(); math.Abs(g-want) > 1e-6*math.Max(1, math.Abs(want)) {
				t.Errorf("%s = %v, want %v", what, g, want)
			}
		}
		for name, mk := range map[string]func(loc, scale *ember.Tensor) Distribution{
			"Cauchy": func(l, s *ember.Tensor) Distribution { return NewCauchy(l, s) },
			"Gumbel": func(l, s *ember.Tensor) Distribution { return NewGumbel(l, s) },
			"StudentT": func(l, s *ember.Tensor) Distribution {
				return NewStudentT(ember.Scalar(5, ember.On(dev), ember.Dtype(ember.Float64)), l, s)
			},
		} {
			loc, scale := leaf(0.5), leaf(2)
			x := mk(loc, scale).RSample(n)
			x.Mean().Backward()
			near(name+" d/dloc", loc.Grad(), 1)
			near(name+" d/dscale", scale.Grad(), x.Detach().SubScalar(0.5).DivScalar(2).Mean().Item())
		}
		for name, mk := range map[string]func(scale *ember.Tensor) Distribution{
			"HalfNormal": func(s *ember.Tensor) Distribution { return NewHalfNormal(s) },
			"HalfCauchy": func(s *ember.Tensor) Distribution { return NewHalfCauchy(s) },
			"Weibull":    func(s *ember.Tensor) Distribution { return NewWeibull(s, vec(dev, 1.5).Cast(ember.Float64)) },
			"Pareto":     func(s *ember.Tensor) Distribution { return NewPareto(s, vec(dev, 3).Cast(ember.Float64)) },
		} {
			scale := leaf(2)
			x := mk(scale).RSample(n)
			x.Mean().Backward()
			near(name+" d/dscale", scale.Grad(), x.Detach().DivScalar(2).Mean().Item())
		}
		// MultivariateNormal: x = loc + L ε, d Σx/d loc = n·1, d Σx/d L_ij = Σ ε_j (the upper
		// triangle too, as torch's matmul)
		loc := ember.FromSlice([]float64{1, -1}, ember.Shape{2}).To(dev).SetRequiresGrad(true)
		l := ember.FromSlice([]float64{2, 0, 0.5, 1}, ember.Shape{2, 2}).To(dev).SetRequiresGrad(true)
		x := NewMultivariateNormalScaleTril(loc, l).RSample(n)
		x.Sum().Backward()
		xs := host(x.Detach())
		var e0, e1 float64
		for i := 0; i < n; i++ {
			a := (xs[2*i] - 1) / 2
			e0 += a
			e1 += (xs[2*i+1] + 1 - 0.5*a) / 1
		}
		g := host(l.Grad())
		for i, want := range []float64{e0, e1, e0, e1} {
			if math.Abs(g[i]-want) > 1e-6*math.Max(1, math.Abs(want)) {
				t.Errorf("MultivariateNormal d/dL[%d] = %v, want %v", i, g[i], want)
			}
		}
		for i, v := range host(loc.Grad()) {
			if v != n {
				t.Errorf("MultivariateNormal d/dloc[%d] = %v, want %v", i, v, n)
			}
		}
	})
}

func TestMetaShapes2(t *testing.T) {
	m := func(s ...int) *ember.Tensor { return ember.Ones(ember.Shape(s), ember.On(ember.Meta)) }
	for _, c := range []struct {
		name        string
		d           Distribution
		value       *ember.Tensor
		sample, ent ember.Shape
	}{
		{"MultivariateNormal", NewMultivariateNormal(m(2, 3), m(3, 3)), m(4, 1, 3), ember.Shape{5, 2, 3}, ember.Shape{2}},
		{"MultivariateNormalPrecision", NewMultivariateNormalPrecision(m(3), m(2, 3, 3)), m(3), ember.Shape{5, 2, 3}, ember.Shape{2}},
		{"MultivariateNormalScaleTril", NewMultivariateNormalScaleTril(m(2, 3), m(3, 3)), m(3), ember.Shape{5, 2, 3}, ember.Shape{2}},
		{"StudentT", NewStudentT(m(4), m(2, 1), m(1)), m(4), ember.Shape{5, 2, 4}, ember.Shape{2, 4}},
		{"Cauchy", NewCauchy(m(2, 1), m(3)), m(3), ember.Shape{5, 2, 3}, ember.Shape{2, 3}},
		{"HalfNormal", NewHalfNormal(m(3)), m(3), ember.Shape{5, 3}, ember.Shape{3}},
		{"HalfCauchy", NewHalfCauchy(m(3)), m(3), ember.Shape{5, 3}, ember.Shape{3}},
		{"Gumbel", NewGumbel(m(2, 1), m(3)), m(3), ember.Shape{5, 2, 3}, ember.Shape{2, 3}},
		{"Chi2", NewChi2(m(4)), m(4), ember.Shape{5, 4}, ember.Shape{4}},
		{"VonMises", NewVonMises(m(4), m(2, 1)), m(4), ember.Shape{5, 2, 4}, nil},
		{"Weibull", NewWeibull(m(4), m(2, 1)), m(4), ember.Shape{5, 2, 4}, ember.Shape{2, 4}},
		{"Pareto", NewPareto(m(4), m(2, 1)), m(4), ember.Shape{5, 2, 4}, ember.Shape{2, 4}},
	} {
		if s := c.d.Sample(5); !s.Shape().Equal(c.sample) || s.Device() != ember.Meta {
			t.Errorf("%s: Sample(5) %v on %v, want %v on meta", c.name, s.Shape(), s.Device(), c.sample)
		}
		bs := append(ember.Shape{}, c.sample[1:len(c.sample)-len(c.d.EventShape())]...)
		vs := c.value.Shape()
		if want := ember.BroadcastShapes("test", vs[:len(vs)-len(c.d.EventShape())], bs); !c.d.LogProb(c.value).Shape().Equal(want) {
			t.Errorf("%s: LogProb %v, want %v", c.name, c.d.LogProb(c.value).Shape(), want)
		}
		if c.ent != nil {
			if e := c.d.Entropy(); !e.Shape().Equal(c.ent) {
				t.Errorf("%s: Entropy %v, want %v", c.name, e.Shape(), c.ent)
			}
		}
	}
	p := NewMultivariateNormal(m(2, 3), m(3, 3))
	q := NewMultivariateNormalScaleTril(m(3), m(4, 1, 3, 3))
	if kl := KLDivergence(p, q); !kl.Shape().Equal(ember.Shape{4, 2}) {
		t.Errorf("KL MultivariateNormal on meta: %v, want [4 2]", kl.Shape())
	}
}

func TestErrorsAsTorch2(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		v := func(x ...float64) *ember.Tensor { return vec(dev, x...) }
		type ve = *ember.ValueError
		type ni = *NotImplementedError
		id := mat(dev, 2, 2, 1, 0, 0, 1)
		expectErr[ve](t, "MVN scalar loc", func() { NewMultivariateNormal(ember.Scalar(0, ember.On(dev)), id) }, "loc must be at least one-dimensional.")
		expectErr[ve](t, "MVN 1-D scale_tril", func() { NewMultivariateNormalScaleTril(v(0, 0), v(1, 1)) },
			"scale_tril matrix must be at least two-dimensional, with optional leading batch dimensions")
		expectErr[ve](t, "MVN 1-D covariance", func() { NewMultivariateNormal(v(0, 0), v(1, 1)) }, "covariance_matrix must be at least two-dimensional")
		expectErr[ve](t, "MVN upper scale_tril", func() { NewMultivariateNormalScaleTril(v(0, 0), mat(dev, 2, 2, 1, 1, 1, 1)) },
			"Expected parameter scale_tril (Tensor of shape [2, 2]) of distribution MultivariateNormal(loc: [2], scale_tril: [2, 2]) to satisfy the constraint LowerCholesky(), but found invalid values")
		expectErr[ve](t, "MVN zero diagonal", func() { NewMultivariateNormalScaleTril(v(0, 0), mat(dev, 2, 2, 1, 0, 1, 0)) }, "LowerCholesky()")
		expectErr[ve](t, "MVN asymmetric covariance", func() { NewMultivariateNormal(v(0, 0), mat(dev, 2, 2, 1, 0.5, 0, 1)) }, "parameter covariance_matrix", "PositiveDefinite()")
		expectErr[ve](t, "MVN indefinite covariance", func() { NewMultivariateNormal(v(0, 0), mat(dev, 2, 2, 1, 2, 2, 1)) }, "PositiveDefinite()")
		expectErr[ve](t, "MVN indefinite precision", func() { NewMultivariateNormalPrecision(v(0, 0), mat(dev, 2, 2, -1, 0, 0, 1)) }, "parameter precision_matrix", "PositiveDefinite()")
		expectErr[*ember.ShapeError](t, "MVN size mismatch", func() { NewMultivariateNormal(v(0, 0, 0), id) }, "distributions.MultivariateNormal")
		expectErr[ve](t, "MVN value event shape", func() { NewMultivariateNormal(v(0, 0), id).LogProb(v(0, 0, 0)) }, "The right-most size of value must match event_shape: [3] vs [2].")
		expectErr[ve](t, "KL MVN event shapes", func() {
			KLDivergence(NewMultivariateNormal(v(0, 0), id), NewMultivariateNormal(v(0), mat(dev, 1, 1, 1)))
		}, "KL-divergence between two Multivariate Normals with different event shapes cannot be computed")
		expectErr[ni](t, "MVN CDF", func() { NewMultivariateNormal(v(0, 0), id).CDF(v(0, 0)) }, "CDF")
		expectErr[ve](t, "StudentT df", func() { NewStudentT(v(0), v(0), v(1)) },
			"Expected parameter df (Tensor of shape [1]) of distribution StudentT(df: [1], loc: [1], scale: [1]) to satisfy the constraint GreaterThan(lower_bound=0.0)")
		expectErr[ve](t, "Cauchy scale", func() { NewCauchy(v(0), v(-1)) }, "parameter scale")
		expectErr[ve](t, "HalfNormal scale", func() { NewHalfNormal(v(-1)) }, "of distribution HalfNormal() to satisfy")
		expectErr[ve](t, "HalfNormal support", func() { NewHalfNormal(v(1)).LogProb(v(-1)) },
			"within the support (GreaterThanEq(lower_bound=0.0)) of the distribution HalfNormal()")
		expectErr[ve](t, "HalfCauchy support", func() { NewHalfCauchy(v(1)).CDF(v(-1)) }, "within the support")
		expectErr[ve](t, "Gumbel NaN value", func() { NewGumbel(v(0), v(1)).LogProb(v(nan())) }, "within the support (Real())")
		expectErr[ve](t, "Chi2 df", func() { NewChi2(v(-1)) }, "Expected parameter df (Tensor of shape [1]) of distribution Chi2() to satisfy")
		expectErr[ve](t, "VonMises concentration", func() { NewVonMises(v(0), v(0)) }, "parameter concentration")
		expectErr[ni](t, "VonMises RSample", func() { NewVonMises(v(0), v(1)).RSample() }, "RSample")
		expectErr[ni](t, "VonMises Entropy", func() { NewVonMises(v(0), v(1)).Entropy() }, "Entropy")
		expectErr[ve](t, "Weibull concentration", func() { NewWeibull(v(1), v(-1)) }, "parameter concentration", "Weibull(scale: [1], concentration: [1])")
		expectErr[ve](t, "Weibull support", func() { NewWeibull(v(1), v(1)).LogProb(v(0)) }, "within the support (GreaterThan(lower_bound=0.0))")
		expectErr[ve](t, "Pareto alpha", func() { NewPareto(v(1), v(-1)) }, "parameter rate", "Exponential(rate: [1])")
		expectErr[ve](t, "Pareto support", func() { NewPareto(v(1), v(1)).LogProb(v(0.5)) }, "within the support (GreaterThanEq(lower_bound=scale))")
		expectErr[ni](t, "KL Chi2 HalfNormal", func() { KLDivergence(NewChi2(v(2)), NewHalfNormal(v(1))) }, "p of type Chi2 and q of type HalfNormal")
		expectErr[ni](t, "KL HalfNormal Chi2", func() { KLDivergence(NewHalfNormal(v(1)), NewChi2(v(2))) }, "p of type HalfNormal and q of type Chi2")
		expectErr[ni](t, "KL Weibull Weibull", func() { KLDivergence(NewWeibull(v(1), v(1)), NewWeibull(v(1), v(2))) }, "Weibull")
	})
}

// TestRelaxedAndContinuousBernoulliDraws: logit(y)·T − logit(p) of a
// RelaxedBernoulli draw is the logistic noise logit(u), mean 0 and
// variance π²/3; so is T·(log y0 − log y1) − (l0 − l1) of a
// RelaxedOneHotCategorical draw (the difference of two Gumbels); the
// ContinuousBernoulli's draws have its closed-form moments.
func TestRelaxedAndContinuousBernoulliDraws(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		ember.ManualSeed(23)
		n := draws(dev)
		temp := ember.Scalar(0.5, ember.On(dev))
		probs := []float64{0.2, 0.7}
		y := NewRelaxedBernoulliProbs(temp, vec(dev, probs...)).Sample(n).Cast(ember.Float64)
		checkSupport(t, "RelaxedBernoulli", y, func(x float64, _ int) bool { return x > 0 && x < 1 }, 2)
		lp := ember.FromSlice([]float64{math.Log(0.2 / 0.8), math.Log(0.7 / 0.3)}, ember.Shape{2}).To(dev)
		noise := y.Log().Sub(y.Neg().Log1p()).MulScalar(0.5).Sub(lp)
		lv := math.Pi * math.Pi / 3
		checkMoments(t, "RelaxedBernoulli logistic noise", noise, []float64{0, 0}, []float64{lv, lv})

		logits := []float64{0.3, -1, 2}
		y = NewRelaxedOneHotCategoricalLogits(ember.Scalar(2, ember.On(dev)), vec(dev, logits...)).Sample(n).Cast(ember.Float64)
		if !y.Shape().Equal(ember.Shape{n, 3}) {
			t.Fatalf("RelaxedOneHotCategorical sample shape %v", y.Shape())
		}
		sums := host(y.Sum(ember.Dims(1)))
		for i, s := range sums {
			if math.Abs(s-1) > 1e-5 {
				t.Fatalf("RelaxedOneHotCategorical draw %d sums to %v", i, s)
			}
		}
		ly := y.Log()
		diff := ly.Select(1, 0).Sub(ly.Select(1, 1)).MulScalar(2).SubScalar(logits[0] - logits[1]).Unsqueeze(1)
		checkMoments(t, "RelaxedOneHotCategorical Gumbel difference", diff, []float64{0}, []float64{lv})

		// ContinuousBernoulli(p): mean p/(2p−1) + 1/(log(1−p) − log p), variance
		// p(p−1)/(1−2p)² + 1/(log(1−p) − log p)²; ½ and 1/12 at p = ½
		cp := []float64{0.2, 0.5, 0.9}
		s := NewContinuousBernoulliProbs(vec(dev, cp...)).Sample(n)
		checkSupport(t, "ContinuousBernoulli", s, func(x float64, _ int) bool { return x >= 0 && x <= 1 }, 3)
		m, v := make([]float64, 3), make([]float64, 3)
		for i, p := range cp {
			if p == 0.5 {
				m[i], v[i] = 0.5, 1.0/12
				continue
			}
			l := math.Log1p(-p) - math.Log(p)
			m[i] = p/(2*p-1) + 1/l
			v[i] = p*(p-1)/((1-2*p)*(1-2*p)) + 1/(l*l)
		}
		checkMoments(t, "ContinuousBernoulli", s, m, v)
	})
}

func TestRelaxedErrorsAndShapes(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		v := func(x ...float64) *ember.Tensor { return vec(dev, x...) }
		temp := ember.Scalar(0.5, ember.On(dev))
		type ve = *ember.ValueError
		type ni = *NotImplementedError
		expectErr[ve](t, "RelaxedBernoulli probs", func() { NewRelaxedBernoulliProbs(temp, v(1.5)) },
			"Expected parameter probs (Tensor of shape [1]) of distribution LogitRelaxedBernoulli(probs: [1])")
		expectErr[ve](t, "RelaxedBernoulli support", func() { NewRelaxedBernoulliLogits(temp, v(0)).LogProb(v(1.5)) },
			"within the support (Interval(lower_bound=0.0, upper_bound=1.0)) of the distribution RelaxedBernoulli()")
		expectErr[ni](t, "RelaxedBernoulli Mean", func() { NewRelaxedBernoulliLogits(temp, v(0)).Mean() }, "Mean")
		expectErr[ni](t, "RelaxedBernoulli Entropy", func() { NewRelaxedBernoulliLogits(temp, v(0)).Entropy() }, "Entropy")
		expectErr[ve](t, "RelaxedOneHotCategorical support", func() { NewRelaxedOneHotCategoricalLogits(temp, v(0, 0)).LogProb(v(0.5, 0.6)) }, "Simplex()")
		expectErr[ve](t, "RelaxedOneHotCategorical probs", func() { NewRelaxedOneHotCategoricalProbs(temp, v(0.5, -0.5)) }, "Simplex()")
		expectErr[ni](t, "RelaxedOneHotCategorical Variance", func() { NewRelaxedOneHotCategoricalLogits(temp, v(0, 0)).Variance() }, "Variance")
		expectErr[ve](t, "ContinuousBernoulli NaN probs", func() { NewContinuousBernoulliProbs(v(nan())) }, "parameter probs", "ContinuousBernoulli(probs: [1])")
		// torch clamps probs to [eps, 1 − eps] before checking them
		if err := ember.Try(func() { NewContinuousBernoulliProbs(v(1.5)) }); err != nil {
			t.Errorf("ContinuousBernoulli probs 1.5: %v, want accepted (clamped) as torch", err)
		}
		expectErr[ve](t, "ContinuousBernoulli support", func() { NewContinuousBernoulliProbs(v(0.3)).LogProb(v(-0.1)) }, "within the support")
	})
	m := func(s ...int) *ember.Tensor { return ember.Ones(ember.Shape(s), ember.On(ember.Meta)) }
	temp := ember.Scalar(0.5, ember.On(ember.Meta))
	for _, c := range []struct {
		name      string
		d         Distribution
		value     *ember.Tensor
		sample, b ember.Shape
	}{
		{"RelaxedBernoulli", NewRelaxedBernoulliLogits(temp, m(2, 3)), m(3), ember.Shape{5, 2, 3}, ember.Shape{2, 3}},
		{"RelaxedOneHotCategorical", NewRelaxedOneHotCategoricalProbs(temp, m(2, 4)), m(4), ember.Shape{5, 2, 4}, ember.Shape{2}},
		{"ContinuousBernoulli", NewContinuousBernoulliLogits(m(2, 3)), m(3), ember.Shape{5, 2, 3}, ember.Shape{2, 3}},
	} {
		if s := c.d.Sample(5); !s.Shape().Equal(c.sample) || s.Device() != ember.Meta {
			t.Errorf("%s: Sample(5) %v on %v, want %v on meta", c.name, s.Shape(), s.Device(), c.sample)
		}
		if lp := c.d.LogProb(c.value); !lp.Shape().Equal(c.b) {
			t.Errorf("%s: LogProb %v, want %v", c.name, lp.Shape(), c.b)
		}
	}
}

// TestLowRankMultivariateNormal: draws with the covariance W Wᵀ + D
// (components and their sum), meta shapes, torch's errors.
func TestLowRankMultivariateNormal(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		ember.ManualSeed(29)
		n := draws(dev)
		// W = [1, 0.5]ᵀ, D = [0.5, 2]: Σ = [[1.5, 0.5], [0.5, 2.25]], Var(x0+x1) = 4.75
		d := NewLowRankMultivariateNormal(vec(dev, 1, -1), mat(dev, 2, 1, 1, 0.5), vec(dev, 0.5, 2))
		s := d.Sample(n)
		if !s.Shape().Equal(ember.Shape{n, 2}) {
			t.Fatalf("LowRankMultivariateNormal sample shape %v", s.Shape())
		}
		checkMoments(t, "LowRankMultivariateNormal", s, []float64{1, -1}, []float64{1.5, 2.25})
		checkMoments(t, "LowRankMultivariateNormal x0+x1", s.Sum(ember.Dims(1), ember.KeepDim()), []float64{0}, []float64{4.75})

		v := func(x ...float64) *ember.Tensor { return vec(dev, x...) }
		type ve = *ember.ValueError
		w := mat(dev, 2, 1, 1, 0.5)
		expectErr[ve](t, "LowRank 1-D cov_factor", func() { NewLowRankMultivariateNormal(v(0, 0), v(1, 1), v(1, 1)) }, "cov_factor must be at least two-dimensional")
		expectErr[ve](t, "LowRank cov_factor rows", func() { NewLowRankMultivariateNormal(v(0, 0, 0), w, v(1, 1, 1)) }, "cov_factor must be a batch of matrices with shape 3 x m")
		expectErr[ve](t, "LowRank cov_diag size", func() { NewLowRankMultivariateNormal(v(0, 0), w, v(1, 1, 1)) }, "cov_diag must be a batch of vectors")
		expectErr[ve](t, "LowRank batch", func() {
			NewLowRankMultivariateNormal(ember.Zeros(ember.Shape{3, 2}, ember.On(dev)), ember.Zeros(ember.Shape{2, 2, 1}, ember.On(dev)), v(1, 1))
		}, "Incompatible batch shapes")
		expectErr[ve](t, "LowRank cov_diag", func() { NewLowRankMultivariateNormal(v(0, 0), w, v(1, 0)) },
			"parameter cov_diag", "IndependentConstraint(GreaterThan(lower_bound=0.0), 1)")
		expectErr[ve](t, "KL LowRank event shapes", func() {
			KLDivergence(d, NewMultivariateNormal(v(0), mat(dev, 1, 1, 1)))
		}, "different event shapes")
	})
	m := func(s ...int) *ember.Tensor { return ember.Ones(ember.Shape(s), ember.On(ember.Meta)) }
	d := NewLowRankMultivariateNormal(m(2, 3), m(3, 1), m(4, 1, 3))
	if !d.BatchShape().Equal(ember.Shape{4, 2}) || !d.Sample(5).Shape().Equal(ember.Shape{5, 4, 2, 3}) ||
		!d.LogProb(m(3)).Shape().Equal(ember.Shape{4, 2}) || !d.Entropy().Shape().Equal(ember.Shape{4, 2}) {
		t.Errorf("LowRankMultivariateNormal on meta: batch %v, sample %v, LogProb %v", d.BatchShape(), d.Sample(5).Shape(), d.LogProb(m(3)).Shape())
	}
	if kl := KLDivergence(d, NewMultivariateNormal(m(3), m(3, 3))); !kl.Shape().Equal(ember.Shape{4, 2}) {
		t.Errorf("KL LowRank‖MultivariateNormal on meta: %v", kl.Shape())
	}
}
