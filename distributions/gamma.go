package distributions

import (
	"math"

	"github.com/emberml/ember"
)

func nan() float64    { return math.NaN() }
func posInf() float64 { return math.Inf(1) }

// minReal is torch.finfo(dtype).min.
func minReal(dt ember.DType) float64 {
	switch dt {
	case ember.Float64:
		return -math.MaxFloat64
	case ember.Float16:
		return -65504
	case ember.BFloat16:
		return -3.3895313892515355e38
	}
	return -math.MaxFloat32
}

// maxRounds bounds the rejection loops (each round accepts most of what
// is left: at least 95% for Marsaglia–Tsang, ~90% for PTRS).
const maxRounds = 1000

// sampleGamma draws standard Gamma(alpha) variates (alpha Float64, each
// element its own shape) by Marsaglia and Tsang's method, boosting
// alpha < 1 by Gamma(alpha+1)·U^(1/alpha); the loop redraws, for the whole
// tensor, until every element has been accepted once.
func sampleGamma(alpha *ember.Tensor) *ember.Tensor {
	shape := alpha.Shape()
	o := opts(alpha)
	small := alpha.LtScalar(1)
	a := ember.Where(small, alpha.AddScalar(1), alpha)
	dd := a.SubScalar(1.0 / 3)
	c := dd.MulScalar(9).Rsqrt()
	out := ember.ZerosLike(alpha)
	done := alpha.Ne(alpha) // all false (NaN alphas are refused earlier)
	for round := 0; round < maxRounds; round++ {
		x := ember.Randn(shape, o...)
		u := ember.Rand(shape, o...)
		v := c.Mul(x).AddScalar(1)
		v3 := v.Mul(v).Mul(v)
		ok := v.GtScalar(0).LogicalAnd(u.Log().Lt(x.Square().MulScalar(0.5).Add(dd).Sub(dd.Mul(v3)).Add(dd.Mul(v3.Log()))))
		take := ok.LogicalAnd(done.LogicalNot())
		out = ember.Where(take, dd.Mul(v3), out)
		done = done.LogicalOr(ok)
		if isMeta(alpha) || allTrue(done) {
			break
		}
	}
	u := ember.Rand(shape, o...)
	boost := u.Pow(alpha.Reciprocal())
	out = ember.Where(small, out.Mul(boost), out)
	return out
}

// samplePoisson draws Poisson(rate) counts (rate Float64): by the
// multiplication method below rate 10 and by Hörmann's transformed
// rejection (PTRS, as NumPy) from 10 on.
func samplePoisson(rate *ember.Tensor) *ember.Tensor {
	shape := rate.Shape()
	o := opts(rate)
	large := rate.GtScalar(10).LogicalOr(rate.EqScalar(10))
	lam := ember.WhereTensorScalar(large, rate, 10) // PTRS' parameters where it is not used
	small := ember.WhereTensorScalar(large.LogicalNot(), rate, 0)

	// multiplication: count the uniforms whose running product stays above e^-rate
	limit := small.Neg().Exp()
	prod := ember.OnesLike(small)
	k := ember.ZerosLike(small)
	for round := 0; round < 10*maxRounds; round++ {
		prod = prod.Mul(ember.Rand(shape, o...))
		active := prod.Gt(limit)
		k = k.Add(active.Cast(k.DType()))
		if isMeta(rate) || active.Any().Item() == 0 {
			break
		}
	}

	// PTRS
	slam := lam.Sqrt()
	loglam := lam.Log()
	b := slam.MulScalar(2.53).AddScalar(0.931)
	a := b.MulScalar(0.02483).AddScalar(-0.059)
	invalpha := b.SubScalar(3.4).Reciprocal().MulScalar(1.1328).AddScalar(1.1239)
	vr := b.SubScalar(2).Reciprocal().MulScalar(-3.6224).AddScalar(0.9277)
	out := ember.ZerosLike(lam)
	done := large.LogicalNot()
	for round := 0; round < maxRounds; round++ {
		if !isMeta(rate) && allTrue(done) {
			break
		}
		U := ember.Rand(shape, o...).SubScalar(0.5)
		V := ember.Rand(shape, o...)
		us := U.Abs().RSubScalar(0.5)
		kk := a.MulScalar(2).Div(us).Add(b).Mul(U).Add(lam).AddScalar(0.43).Floor()
		quick := us.LtScalar(0.07).LogicalNot().LogicalAnd(V.Le(vr))
		reject := kk.LtScalar(0).LogicalOr(us.LtScalar(0.013).LogicalAnd(V.Gt(us)))
		lhs := V.Log().Add(invalpha.Log()).Sub(a.Div(us.Square()).Add(b).Log())
		rhs := lam.Neg().Add(kk.Mul(loglam)).Sub(kk.AddScalar(1).Lgamma())
		ok := quick.LogicalOr(reject.LogicalNot().LogicalAnd(lhs.Le(rhs)))
		take := ok.LogicalAnd(done.LogicalNot())
		out = ember.Where(take, kk, out)
		done = done.LogicalOr(ok)
		if isMeta(rate) {
			break
		}
	}
	return ember.Where(large, out, k)
}

// Gamma is the gamma distribution of shape concentration and rate, as
// torch.distributions.Gamma.
type Gamma struct {
	base
	Concentration, Rate *ember.Tensor
}

// NewGamma returns Gamma(concentration, rate); both must be positive.
func NewGamma(concentration, rate *ember.Tensor) *Gamma {
	p, shape := broadcastAll("distributions.Gamma", concentration, rate)
	d := &Gamma{base: base{name: "Gamma", batch: shape, params: []param{{"concentration", p[0]}, {"rate", p[1]}}}, Concentration: p[0], Rate: p[1]}
	d.check("concentration", p[0], p[0].GtScalar(0), "GreaterThan(lower_bound=0.0)")
	d.check("rate", p[1], p[1].GtScalar(0), "GreaterThan(lower_bound=0.0)")
	return d
}

func (d *Gamma) HasRSample() bool {
	nilGuard(d, "HasRSample")
	return true
}
func (d *Gamma) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return d.Concentration.Div(d.Rate)
}
func (d *Gamma) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	return d.Concentration.Div(d.Rate.Square())
}
func (d *Gamma) Stddev() *ember.Tensor {
	nilGuard(d, "Stddev")
	return d.Variance().Sqrt()
}

func (d *Gamma) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor { return d.RSample(s...) })
}

// RSample returns G/rate, G ~ Gamma(concentration, 1), differentiable
// w.r.t. both parameters (w.r.t. the concentration by torch's implicit
// reparameterisation gradient).
func (d *Gamma) RSample(s ...int) *ember.Tensor {
	nilGuard(d, "RSample")
	shape := d.extended(s)
	g := standardGamma(d.Concentration.Expand(shape...))
	return clampData(g.Div(d.Rate), tiny(d.Rate.DType()), posInf())
}

func (d *Gamma) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "GreaterThanEq(lower_bound=0.0)", func() *ember.Tensor { return v.Ge(full(v, nil, 0)) })
	v = asFloat(v, d.Rate)
	c := d.Concentration
	return c.Xlogy(d.Rate).Add(c.SubScalar(1).Xlogy(v)).Sub(d.Rate.Mul(v)).Sub(c.Lgamma())
}

func (d *Gamma) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	c := d.Concentration
	return c.Sub(d.Rate.Log()).Add(c.Lgamma()).Add(c.RSubScalar(1).Mul(c.Digamma()))
}

// Dirichlet is the Dirichlet distribution over the simplex of the last
// dim of concentration, as torch.distributions.Dirichlet.
type Dirichlet struct {
	base
	Concentration *ember.Tensor // [batch..., K]
}

// NewDirichlet returns Dirichlet(concentration), concentration positive
// with at least one dim.
func NewDirichlet(concentration *ember.Tensor) *Dirichlet {
	const op = "distributions.Dirichlet"
	if concentration == nil {
		panic(&ember.ValueError{Op: op, Msg: "a parameter is nil"})
	}
	if concentration.Dim() < 1 {
		panic(&ember.ValueError{Op: op, Msg: "`concentration` parameter must be at least one-dimensional."})
	}
	c := concentration
	if !c.DType().IsFloat() {
		c = c.Cast(ember.Float32)
	}
	s := c.Shape()
	d := &Dirichlet{base: base{name: "Dirichlet", batch: s[:len(s)-1], event: s[len(s)-1:], params: []param{{"concentration", c}}}, Concentration: c}
	d.check("concentration", c, c.GtScalar(0), "IndependentConstraint(GreaterThan(lower_bound=0.0), 1)")
	return d
}

func (d *Dirichlet) HasRSample() bool {
	nilGuard(d, "HasRSample")
	return true
}
func (d *Dirichlet) total() *ember.Tensor {
	return d.Concentration.Sum(ember.Dims(-1), ember.KeepDim())
}
func (d *Dirichlet) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return d.Concentration.Div(d.total())
}
func (d *Dirichlet) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	a0 := d.total()
	return d.Concentration.Mul(a0.Sub(d.Concentration)).Div(a0.Square().Mul(a0.AddScalar(1)))
}
func (d *Dirichlet) Stddev() *ember.Tensor {
	nilGuard(d, "Stddev")
	return d.Variance().Sqrt()
}

func (d *Dirichlet) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor { return d.RSample(s...) })
}

// RSample normalises Gamma(concentration, 1) draws, differentiable
// w.r.t. the concentration through the gammas' implicit gradients (torch
// differentiates the same draws by _dirichlet_grad: another pathwise
// estimator of the same expected gradient, so per-draw gradients differ).
func (d *Dirichlet) RSample(s ...int) *ember.Tensor {
	nilGuard(d, "RSample")
	shape := d.extended(s)
	dt := d.Concentration.DType()
	g := standardGamma(d.Concentration.Expand(shape...))
	// as torch: [smallest normal, nexttoward(1, 0)], 1 − eps/2 the float below 1
	return clampData(g.Div(g.Sum(ember.Dims(-1), ember.KeepDim())), tiny(dt), 1-eps(dt)/2)
}

func (d *Dirichlet) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "Simplex()", func() *ember.Tensor {
		vf := v.Cast(ember.Float64)
		return v.Ge(full(v, nil, 0)).All(ember.Dims(-1)).LogicalAnd(vf.Sum(ember.Dims(-1)).SubScalar(1).Abs().LtScalar(1e-6))
	})
	v = asFloat(v, d.Concentration)
	c := d.Concentration
	return c.SubScalar(1).Xlogy(v).Sum(ember.Dims(-1)).Add(c.Sum(ember.Dims(-1)).Lgamma()).Sub(c.Lgamma().Sum(ember.Dims(-1)))
}

func (d *Dirichlet) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	c := d.Concentration
	k := float64(c.Shape()[c.Dim()-1])
	a0 := c.Sum(ember.Dims(-1))
	return c.Lgamma().Sum(ember.Dims(-1)).Sub(a0.Lgamma()).Sub(a0.RSubScalar(k).Mul(a0.Digamma())).
		Sub(c.SubScalar(1).Mul(c.Digamma()).Sum(ember.Dims(-1)))
}

// Beta is the beta distribution on [0, 1], as torch.distributions.Beta
// (a two-component Dirichlet).
type Beta struct {
	base
	Concentration1, Concentration0 *ember.Tensor
	dir                            *Dirichlet
}

// NewBeta returns Beta(concentration1, concentration0); both positive.
func NewBeta(concentration1, concentration0 *ember.Tensor) *Beta {
	p, shape := broadcastAll("distributions.Beta", concentration1, concentration0)
	d := &Beta{base: base{name: "Beta", batch: shape, params: []param{{"concentration1", p[0]}, {"concentration0", p[1]}}}, Concentration1: p[0], Concentration0: p[1]}
	d.check("concentration1", p[0], p[0].GtScalar(0), "GreaterThan(lower_bound=0.0)")
	d.check("concentration0", p[1], p[1].GtScalar(0), "GreaterThan(lower_bound=0.0)")
	d.dir = NewDirichlet(ember.Stack([]*ember.Tensor{p[0], p[1]}, -1))
	return d
}

func (d *Beta) HasRSample() bool {
	nilGuard(d, "HasRSample")
	return true
}
func (d *Beta) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return d.Concentration1.Div(d.Concentration1.Add(d.Concentration0))
}
func (d *Beta) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	t := d.Concentration1.Add(d.Concentration0)
	return d.Concentration1.Mul(d.Concentration0).Div(t.Square().Mul(t.AddScalar(1)))
}
func (d *Beta) Stddev() *ember.Tensor {
	nilGuard(d, "Stddev")
	return d.Variance().Sqrt()
}
func (d *Beta) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	return d.dir.Entropy()
}
func (d *Beta) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return d.dir.Sample(s...).Select(-1, 0)
}

// RSample is the first component of the Dirichlet's RSample.
func (d *Beta) RSample(s ...int) *ember.Tensor {
	nilGuard(d, "RSample")
	return d.dir.RSample(s...).Select(-1, 0)
}

func (d *Beta) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "Interval(lower_bound=0.0, upper_bound=1.0)", func() *ember.Tensor {
		return v.Ge(full(v, nil, 0)).LogicalAnd(v.Le(full(v, nil, 1)))
	})
	v = asFloat(v, d.Concentration1)
	return d.dir.LogProb(ember.Stack([]*ember.Tensor{v, v.RSubScalar(1)}, -1))
}
