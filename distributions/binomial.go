package distributions

import (
	"math"

	"github.com/emberml/ember"
)

// Binomial is the number of successes in total_count Bernoulli(probs)
// trials, as torch.distributions.Binomial.
type Binomial struct {
	base
	TotalCount, Probs, Logits *ember.Tensor
}

// NewBinomialProbs returns Binomial(totalCount, probs): totalCount a
// non-negative integer (in a float or integer tensor), probs in [0, 1].
func NewBinomialProbs(totalCount, probs *ember.Tensor) *Binomial {
	p, shape := broadcastAll("distributions.Binomial", totalCount, probs)
	d := &Binomial{base: base{name: "Binomial", batch: shape, params: []param{{"total_count", p[0]}, {"probs", p[1]}}}, TotalCount: p[0], Probs: p[1]}
	d.checkCount()
	d.check("probs", p[1], p[1].Ge(full(p[1], nil, 0)).LogicalAnd(p[1].Le(full(p[1], nil, 1))), "Interval(lower_bound=0.0, upper_bound=1.0)")
	d.Logits = probsToLogits(p[1], true)
	return d
}

// NewBinomialLogits returns Binomial(totalCount, sigmoid(logits)).
func NewBinomialLogits(totalCount, logits *ember.Tensor) *Binomial {
	p, shape := broadcastAll("distributions.Binomial", totalCount, logits)
	d := &Binomial{base: base{name: "Binomial", batch: shape, params: []param{{"total_count", p[0]}, {"logits", p[1]}}}, TotalCount: p[0], Logits: p[1]}
	d.checkCount()
	d.check("logits", p[1], p[1].Eq(p[1]), "Real()")
	d.Probs = p[1].Sigmoid()
	return d
}

func (d *Binomial) checkCount() {
	n := d.TotalCount
	d.check("total_count", n, nonnegInt(n)(), "IntegerGreaterThan(lower_bound=0)")
}

func (d *Binomial) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return d.TotalCount.Mul(d.Probs)
}
func (d *Binomial) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	return d.TotalCount.Mul(d.Probs).Mul(d.Probs.RSubScalar(1))
}
func (d *Binomial) Stddev() *ember.Tensor {
	nilGuard(d, "Stddev")
	return d.Variance().Sqrt()
}

// Sample returns counts in the parameters' dtype: by inversion where
// n·min(p, 1−p) < 10, by Hörmann's BTRS otherwise (as torch.binomial).
func (d *Binomial) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	shape := d.extended(s)
	return noGrad(func() *ember.Tensor {
		n := d.TotalCount.Cast(ember.Float64).Expand(shape...).Contiguous()
		p := d.Probs.Cast(ember.Float64).Expand(shape...).Contiguous()
		return sampleBinomial(n, p).Cast(d.Probs.DType())
	})
}

func (d *Binomial) support(v *ember.Tensor) func() *ember.Tensor {
	return func() *ember.Tensor { return nonnegInt(v)().LogicalAnd(asFloat(v, d.TotalCount).Le(d.TotalCount)) }
}

func (d *Binomial) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "IntegerInterval(lower_bound=0, upper_bound=total_count)", d.support(v))
	v = asFloat(v, d.Logits)
	n, l := d.TotalCount, d.Logits
	clampByZero := l.Clamp(0, posInf()).Add(l).Sub(l.Clamp(math.Inf(-1), 0)).DivScalar(2)
	norm := n.Mul(clampByZero).Add(n.Mul(l.Abs().Neg().Exp().Log1p())).Sub(n.AddScalar(1).Lgamma())
	return v.Mul(l).Sub(v.AddScalar(1).Lgamma()).Sub(n.Sub(v).AddScalar(1).Lgamma()).Sub(norm)
}

// Entropy sums over the support; as torch it needs one total_count for
// the whole batch (else a *NotImplementedError).
func (d *Binomial) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	if isMeta(d.TotalCount) {
		return ember.Zeros(d.batch, opts(d.Probs)...)
	}
	total := d.TotalCount.Max().Item()
	if d.TotalCount.NumElements() > 0 && d.TotalCount.Min().Item() != total {
		panic(&NotImplementedError{Op: d.op(".Entropy"), Msg: "Inhomogeneous total count not supported by `entropy`."})
	}
	if d.TotalCount.NumElements() == 0 {
		total = 0
	}
	vs := make([]int, 1+len(d.batch))
	for i := range vs {
		vs[i] = 1
	}
	vs[0] = int(total) + 1
	values := ember.Arange(0, total+1, 1, opts(d.Probs)...).Reshape(vs...)
	lp := d.LogProb(values)
	return lp.Exp().Mul(lp).Sum(ember.Dims(0)).Neg()
}

// stirlingTail is log(k!) − [(k+½)·log(k+1) − (k+1) + ½·log(2π)], from
// lgamma below 10 and from its series above (as torch's
// stirling_approx_tail).
func stirlingTail(k *ember.Tensor) *ember.Tensor {
	k1 := k.AddScalar(1)
	exact := k1.Lgamma().Sub(k.AddScalar(0.5).Mul(k1.Log()).Sub(k1).AddScalar(0.5 * log2Pi))
	sq := k1.Square()
	series := sq.Reciprocal().MulScalar(1.0 / 1260).RSubScalar(1.0 / 360).Div(sq).RSubScalar(1.0 / 12).Div(k1)
	return ember.Where(k.LtScalar(10), exact, series)
}

// sampleBinomial draws Binomial(n, p) (Float64, one shape) as
// torch.binomial: inversion (counting geometric waits) where
// n·min(p, 1−p) < 10, BTRS elsewhere, the draws for p > ½ made as
// n − Binomial(n, 1−p).
func sampleBinomial(n, p *ember.Tensor) *ember.Tensor {
	shape := n.Shape()
	o := opts(n)
	flip := p.GtScalar(0.5)
	q := ember.Where(flip, p.RSubScalar(1), p)
	trivial := n.LtScalar(1).LogicalOr(q.LtScalar(0).LogicalOr(q.EqScalar(0)))
	large := n.Mul(q).LtScalar(10).LogicalNot().LogicalAnd(trivial.LogicalNot())
	small := large.LogicalNot().LogicalAnd(trivial.LogicalNot())

	// inversion: the number of geometric waits whose sum stays within n
	qs := ember.WhereTensorScalar(small, q, 0.5)
	logq := qs.Neg().Log1p()
	sum := ember.ZerosLike(n)
	count := ember.ZerosLike(n)
	active := small
	for round := 0; round < 10*maxRounds; round++ {
		if !isMeta(n) && allTrue(active.LogicalNot()) { // none left
			break
		}
		u := ember.Rand(shape, o...)
		sum = sum.Add(u.Log().Div(logq).Ceil())
		active = active.LogicalAnd(sum.Le(n))
		count = count.Add(active.Cast(count.DType()))
		if isMeta(n) {
			break
		}
	}

	// BTRS, with placeholders where it is not used
	nb := ember.WhereTensorScalar(large, n, 100)
	pb := ember.WhereTensorScalar(large, q, 0.25)
	m := nb.AddScalar(1).Mul(pb).Floor()
	r := pb.Div(pb.RSubScalar(1))
	sqrtNPQ := nb.Mul(pb).Mul(pb.RSubScalar(1)).Sqrt()
	b := sqrtNPQ.MulScalar(2.53).AddScalar(1.15)
	a := b.MulScalar(0.0248).AddScalar(-0.0873).Add(pb.MulScalar(0.01))
	c := nb.Mul(pb).AddScalar(0.5)
	vr := b.Reciprocal().MulScalar(-4.2).AddScalar(0.92)
	alpha := b.Reciprocal().MulScalar(5.1).AddScalar(2.83).Mul(sqrtNPQ)
	fixed := m.AddScalar(0.5).Mul(m.AddScalar(1).Div(r.Mul(nb.Sub(m).AddScalar(1))).Log()).
		Add(stirlingTail(m)).Add(stirlingTail(nb.Sub(m)))
	out := ember.ZerosLike(n)
	done := large.LogicalNot()
	for round := 0; round < maxRounds; round++ {
		if !isMeta(n) && allTrue(done) {
			break
		}
		U := ember.Rand(shape, o...).SubScalar(0.5)
		V := ember.Rand(shape, o...)
		us := U.Abs().RSubScalar(0.5)
		k := a.MulScalar(2).Div(us).Add(b).Mul(U).Add(c).Floor()
		inRange := k.LtScalar(0).LogicalOr(k.Gt(nb)).LogicalNot()
		quick := us.LtScalar(0.07).LogicalNot().LogicalAnd(V.Le(vr))
		kc := k.Clamp(0, math.Inf(1)).Minimum(nb) // keeps the bound finite where k is rejected anyway
		lv := V.Mul(alpha).Div(a.Div(us.Square()).Add(b)).Log()
		bound := fixed.Add(nb.AddScalar(1).Mul(nb.Sub(m).AddScalar(1).Div(nb.Sub(kc).AddScalar(1)).Log())).
			Add(kc.AddScalar(0.5).Mul(r.Mul(nb.Sub(kc).AddScalar(1)).Div(kc.AddScalar(1)).Log())).
			Sub(stirlingTail(kc)).Sub(stirlingTail(nb.Sub(kc)))
		ok := inRange.LogicalAnd(quick.LogicalOr(lv.Le(bound)))
		out = ember.Where(ok.LogicalAnd(done.LogicalNot()), k, out)
		done = done.LogicalOr(ok)
		if isMeta(n) {
			break
		}
	}
	x := ember.Where(large, out, count)
	x = ember.Where(trivial, ember.ZerosLike(x), x)
	return ember.Where(flip, n.Sub(x), x)
}
