package distributions

import (
	"fmt"
	"math"
	"testing"

	"github.com/emberml/ember"
)

func vec(dev ember.Device, v ...float64) *ember.Tensor {
	return ember.FromSlice(v, ember.Shape{len(v)}).Cast(ember.Float32).To(dev)
}

func host(t *ember.Tensor) []float64 { return t.Cast(ember.Float64).CPU().Float64s() }

// checkMoments compares the per-element mean and variance over dim 0 of
// samples [n, k] with the exact ones: the mean within 4 standard errors,
// the variance within 4 of its own standard errors (μ4 estimated from the
// samples), which 100k draws make a few percent.
func checkMoments(t *testing.T, what string, s *ember.Tensor, mean, variance []float64) {
	t.Helper()
	n := float64(s.Shape()[0])
	x := s.Cast(ember.Float64)
	m := host(x.Mean(ember.Dims(0)))
	c := x.Sub(x.Mean(ember.Dims(0), ember.KeepDim()))
	v := host(c.Square().Mean(ember.Dims(0)))
	m4 := host(c.Square().Square().Mean(ember.Dims(0)))
	for i := range mean {
		se := math.Sqrt(variance[i] / n)
		if math.Abs(m[i]-mean[i]) > 4*se+1e-12 {
			t.Errorf("%s[%d]: sample mean %v, want %v ± %v", what, i, m[i], mean[i], 4*se)
		}
		sev := math.Sqrt(math.Max(m4[i]-v[i]*v[i], 0) / n)
		if math.Abs(v[i]-variance[i]) > 4*sev+1e-12 {
			t.Errorf("%s[%d]: sample variance %v, want %v ± %v", what, i, v[i], variance[i], 4*sev)
		}
	}
}

func checkSupport(t *testing.T, what string, s *ember.Tensor, ok func(x float64, i int) bool, k int) {
	t.Helper()
	for j, x := range host(s) {
		if !ok(x, j%k) {
			t.Errorf("%s: draw %v (element %d) outside the support", what, x, j%k)
			return
		}
	}
}

func isInt(x float64) bool { return x == math.Trunc(x) && !math.IsInf(x, 0) }

// draws is the number of draws of the moment tests: 100k on the CPU; 10k
// on other devices (the emulated CUDA device runs its kernels on the CPU
// several times slower), which checkMoments' standard-error bounds allow
// for, while the CPU keeps the tighter test of the same code.
func draws(dev ember.Device) int {
	if dev.Type == ember.CPUType {
		return 100000
	}
	return 10000
}

func TestSampleMoments(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		ember.ManualSeed(7)
		nDraws := draws(dev)
		// Normal
		loc, scale := []float64{0, -2, 5}, []float64{1, 0.5, 3}
		s := NewNormal(vec(dev, loc...), vec(dev, scale...)).Sample(nDraws)
		if !s.Shape().Equal(ember.Shape{nDraws, 3}) || s.Device() != dev || s.RequiresGrad() {
			t.Fatalf("Normal sample: shape %v on %v (grad %v)", s.Shape(), s.Device(), s.RequiresGrad())
		}
		checkMoments(t, "Normal", s, loc, []float64{1, 0.25, 9})

		// LogNormal(0, 0.5): mean e^{1/8}, variance (e^{1/4}-1)e^{1/4}
		s = NewLogNormal(vec(dev, 0), vec(dev, 0.5)).Sample(nDraws)
		checkMoments(t, "LogNormal", s, []float64{math.Exp(0.125)}, []float64{(math.Exp(0.25) - 1) * math.Exp(0.25)})
		checkSupport(t, "LogNormal", s, func(x float64, _ int) bool { return x > 0 }, 1)

		// Uniform
		lo, hi := []float64{0, -3}, []float64{1, 5}
		s = NewUniform(vec(dev, lo...), vec(dev, hi...)).Sample(nDraws)
		checkMoments(t, "Uniform", s, []float64{0.5, 1}, []float64{1.0 / 12, 64.0 / 12})
		checkSupport(t, "Uniform", s, func(x float64, i int) bool { return x >= lo[i] && x < hi[i] }, 2)

		// Exponential
		s = NewExponential(vec(dev, 0.5, 4)).Sample(nDraws)
		checkMoments(t, "Exponential", s, []float64{2, 0.25}, []float64{4, 1.0 / 16})
		checkSupport(t, "Exponential", s, func(x float64, _ int) bool { return x >= 0 && !math.IsInf(x, 0) }, 2)

		// Laplace
		s = NewLaplace(vec(dev, 1, -1), vec(dev, 0.5, 2)).Sample(nDraws)
		checkMoments(t, "Laplace", s, []float64{1, -1}, []float64{0.5, 8})

		// Gamma: concentrations below 1 (boosted), at 1 and above; rate 2
		conc := []float64{0.3, 1, 5, 40}
		s = NewGamma(vec(dev, conc...), vec(dev, 2)).Sample(nDraws)
		gm, gv := make([]float64, 4), make([]float64, 4)
		for i, c := range conc {
			gm[i], gv[i] = c/2, c/4
		}
		checkMoments(t, "Gamma", s, gm, gv)
		checkSupport(t, "Gamma", s, func(x float64, _ int) bool { return x > 0 && !math.IsInf(x, 0) }, 4)

		// Beta(2, 3): mean 0.4, variance 6/(25·6) = 0.04; Beta(0.5, 0.5): 0.5, 1/8
		s = NewBeta(vec(dev, 2, 0.5), vec(dev, 3, 0.5)).Sample(nDraws)
		checkMoments(t, "Beta", s, []float64{0.4, 0.5}, []float64{0.04, 0.125})
		checkSupport(t, "Beta", s, func(x float64, _ int) bool { return x > 0 && x < 1 }, 2)

		// Dirichlet([1, 2, 3]): mean a/6, variance a(6-a)/(36·7)
		s = NewDirichlet(vec(dev, 1, 2, 3)).Sample(nDraws)
		if !s.Shape().Equal(ember.Shape{nDraws, 3}) {
			t.Fatalf("Dirichlet sample shape %v", s.Shape())
		}
		checkMoments(t, "Dirichlet", s, []float64{1.0 / 6, 2.0 / 6, 3.0 / 6}, []float64{5.0 / 252, 8.0 / 252, 9.0 / 252})
		sums := host(s.Cast(ember.Float64).Sum(ember.Dims(1)))
		for i, v := range sums {
			if math.Abs(v-1) > 1e-5 {
				t.Fatalf("Dirichlet draw %d sums to %v", i, v)
			}
		}

		// Poisson: 0, the multiplication method (< 10) and PTRS (≥ 10)
		rates := []float64{0, 0.5, 4, 9.9, 10, 30, 200}
		s = NewPoisson(vec(dev, rates...)).Sample(nDraws)
		checkMoments(t, "Poisson", s, rates, rates)
		checkSupport(t, "Poisson", s, func(x float64, _ int) bool { return x >= 0 && isInt(x) }, len(rates))

		// Binomial: trivial (n 0, p 1), inversion (p ≤ ½ and flipped), BTRS (p ≤ ½ and flipped)
		bn := []float64{0, 5, 20, 100, 1000, 50, 300}
		bp := []float64{0.3, 0.3, 0.8, 0.5, 0.02, 1, 0.9}
		s = NewBinomialProbs(vec(dev, bn...), vec(dev, bp...)).Sample(nDraws)
		bm, bv := make([]float64, len(bn)), make([]float64, len(bn))
		for i := range bn {
			bm[i], bv[i] = bn[i]*bp[i], bn[i]*bp[i]*(1-bp[i])
		}
		checkMoments(t, "Binomial", s, bm, bv)
		checkSupport(t, "Binomial", s, func(x float64, i int) bool { return x >= 0 && x <= bn[i] && isInt(x) }, len(bn))

		// Bernoulli
		s = NewBernoulliProbs(vec(dev, 0, 0.3, 1)).Sample(nDraws)
		checkMoments(t, "Bernoulli", s, []float64{0, 0.3, 1}, []float64{0, 0.21, 0})
		checkSupport(t, "Bernoulli", s, func(x float64, _ int) bool { return x == 0 || x == 1 }, 3)

		// Geometric(p): mean (1-p)/p, variance (1-p)/p²
		s = NewGeometricProbs(vec(dev, 0.2, 0.9)).Sample(nDraws)
		checkMoments(t, "Geometric", s, []float64{4, 1.0 / 9}, []float64{20, 0.1 / 0.81})
		checkSupport(t, "Geometric", s, func(x float64, _ int) bool { return x >= 0 && isInt(x) }, 2)

		// Categorical: the frequencies of each category as Bernoulli means
		probs := ember.FromSlice([]float64{1, 2, 7, 0, 0, 5, 5, 0}, ember.Shape{2, 4}).Cast(ember.Float32).To(dev)
		c := NewCategoricalProbs(probs).Sample(nDraws/2, 2)
		if !c.Shape().Equal(ember.Shape{nDraws / 2, 2, 2}) || c.DType() != ember.Int64 {
			t.Fatalf("Categorical sample: shape %v dtype %v", c.Shape(), c.DType())
		}
		oh := ember.OneHot(c.Reshape(nDraws, 2), 4).Reshape(nDraws, 8)
		pw := []float64{0.1, 0.2, 0.7, 0, 0, 0.5, 0.5, 0}
		pv := make([]float64, 8)
		for i, p := range pw {
			pv[i] = p * (1 - p)
		}
		checkMoments(t, "Categorical", oh, pw, pv)

		// OneHotCategorical: one-hot draws of the same frequencies
		o := NewOneHotCategoricalLogits(probs.Log()).Sample(nDraws)
		if !o.Shape().Equal(ember.Shape{nDraws, 2, 4}) || o.DType() != ember.Float32 {
			t.Fatalf("OneHotCategorical sample: shape %v dtype %v", o.Shape(), o.DType())
		}
		checkMoments(t, "OneHotCategorical", o.Reshape(nDraws, 8), pw, pv)
	})
}

// TestRSampleGradients checks the reparameterised gradients by hand: for
// x = loc + ε·scale, d mean(x)/d loc = 1 and d mean(x)/d scale = mean(ε),
// and the like for the other families.
func TestRSampleGradients(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		ember.ManualSeed(3)
		const n = 1000
		near := func(what string, got *ember.Tensor, want float64) {
			t.Helper()
			if got == nil {
				t.Errorf("%s: no gradient", what)
				return
			}
			if g := got.Item(); math.Abs(g-want) > 1e-5*math.Max(1, math.Abs(want)) {
				t.Errorf("%s = %v, want %v", what, g, want)
			}
		}
		leaf := func(v float64) *ember.Tensor {
			return ember.Scalar(v, ember.On(dev), ember.Dtype(ember.Float64), ember.WithGrad())
		}

		loc, scale := leaf(0.5), leaf(2)
		x := NewNormal(loc, scale).RSample(n)
		x.Mean().Backward()
		eps := x.Detach().SubScalar(0.5).DivScalar(2).Mean().Item()
		near("Normal d/dloc", loc.Grad(), 1)
		near("Normal d/dscale", scale.Grad(), eps)

		loc, scale = leaf(0.5), leaf(2)
		x = NewLaplace(loc, scale).RSample(n)
		x.Mean().Backward()
		near("Laplace d/dloc", loc.Grad(), 1)
		near("Laplace d/dscale", scale.Grad(), x.Detach().SubScalar(0.5).DivScalar(2).Mean().Item())

		loc, scale = leaf(0.5), leaf(0.3)
		x = NewLogNormal(loc, scale).RSample(n)
		x.Mean().Backward()
		near("LogNormal d/dloc", loc.Grad(), x.Detach().Mean().Item()) // d e^{loc+εs}/d loc = x
		near("LogNormal d/dscale", scale.Grad(), x.Detach().Mul(x.Detach().Log().SubScalar(0.5).DivScalar(0.3)).Mean().Item())

		lo, hi := leaf(-1), leaf(3)
		x = NewUniform(lo, hi).RSample(n)
		x.Mean().Backward()
		u := x.Detach().AddScalar(1).DivScalar(4).Mean().Item()
		near("Uniform d/dlow", lo.Grad(), 1-u)
		near("Uniform d/dhigh", hi.Grad(), u)

		rate := leaf(2.5)
		x = NewExponential(rate).RSample(n)
		x.Mean().Backward()
		near("Exponential d/drate", rate.Grad(), -x.Detach().Mean().Item()/2.5) // x = E/rate

		conc := ember.Scalar(3, ember.On(dev), ember.Dtype(ember.Float64))
		rate = leaf(2.5)
		x = NewGamma(conc, rate).RSample(n)
		x.Mean().Backward()
		near("Gamma d/drate", rate.Grad(), -x.Detach().Mean().Item()/2.5)

		if x := NewNormal(leaf(0), leaf(1)).Sample(4); x.RequiresGrad() {
			t.Error("Sample requires grad; want it detached as torch's no_grad sample")
		}
	})
}

// meanGrad checks the per-draw gradients g (one per draw, from a leaf
// holding n equal parameters) average to want, the derivative of the
// expectation, within 4 standard errors.
func meanGrad(t *testing.T, what string, g *ember.Tensor, want float64) {
	t.Helper()
	v := host(g)
	var m, m2 float64
	for _, x := range v {
		m += x
		m2 += x * x
	}
	n := float64(len(v))
	m /= n
	se := math.Sqrt(math.Max(m2/n-m*m, 0) / n)
	if math.Abs(m-want) > 4*se+1e-9 {
		t.Errorf("%s: mean gradient %v, want %v ± %v", what, m, want, 4*se)
	}
}

// TestImplicitGammaGradients checks the reparameterised gradients w.r.t.
// concentrations against the derivatives of the exact means:
// E[Gamma(a, r)] = a/r, E[Beta(a, b)] = a/(a+b), E[Dirichlet(α)_0] = α_0/A.
func TestImplicitGammaGradients(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		ember.ManualSeed(11)
		n := draws(dev) / 5 // 20k draws on the CPU
		fill := func(v float64, shape ...int) *ember.Tensor {
			return ember.Full(ember.Shape(shape), v, ember.On(dev), ember.Dtype(ember.Float64), ember.WithGrad())
		}
		for _, a := range []float64{0.2, 1, 3, 12} {
			conc, rate := fill(a, n), fill(2, n)
			x := NewGamma(conc, rate).RSample()
			x.Sum().Backward()
			meanGrad(t, fmt.Sprintf("Gamma(%v, 2) d/dconcentration", a), conc.Grad(), 0.5)
			meanGrad(t, fmt.Sprintf("Gamma(%v, 2) d/drate", a), rate.Grad(), -a/4)
		}
		a, b := fill(2, n), fill(0.5, n)
		NewBeta(a, b).RSample().Sum().Backward()
		meanGrad(t, "Beta(2, 0.5) d/da", a.Grad(), 0.5/6.25)
		meanGrad(t, "Beta(2, 0.5) d/db", b.Grad(), -2/6.25)

		alpha := ember.FromSlice([]float64{1, 2, 3}, ember.Shape{1, 3}).Expand(n, 3).Contiguous().To(dev).SetRequiresGrad(true)
		NewDirichlet(alpha).RSample().Select(-1, 0).Sum().Backward()
		for j, want := range []float64{5.0 / 36, -1.0 / 36, -1.0 / 36} {
			meanGrad(t, fmt.Sprintf("Dirichlet([1 2 3]) dx0/dα%d", j), alpha.Grad().Select(1, j), want)
		}
	})
}

// TestSimplexDrawsBelowOne: torch clamps Dirichlet (and Beta) draws to
// [tiny, nexttoward(1, 0)], the largest float below 1 (1 − 2⁻²⁴ in
// float32): Dirichlet([100, 1e-3]) reaches it where the small gamma
// underflows (torch 1.13 draws 1 − 5.96e-8 as the max of 100k samples).
func TestSimplexDrawsBelowOne(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		ember.ManualSeed(5)
		for _, dt := range []ember.DType{ember.Float32, ember.Float64} {
			want := 1 - eps(dt)/2
			c := vec(dev, 100, 1e-3).Cast(dt)
			if got := NewDirichlet(c).Sample(2000).Select(-1, 0).Max().Item(); got != want {
				t.Errorf("%v Dirichlet: largest draw 1 − %v, want 1 − %v", dt, 1-got, 1-want)
			}
			if got := NewBeta(c.Select(0, 0), c.Select(0, 1)).Sample(2000).Max().Item(); got != want {
				t.Errorf("%v Beta: largest draw 1 − %v, want 1 − %v", dt, 1-got, 1-want)
			}
		}
	})
}
