package distributions

import (
	"math"

	"github.com/emberml/ember"
)

const eulerGamma = 0.57721566490153286060

// infLike is torch's _infinite_like: +Inf of t's shape.
func infLike(t *ember.Tensor) *ember.Tensor { return full(t, t.Shape(), posInf()) }

// xLogX is torch's _x_log_x, t·log(t) (NaN at 0, as torch).
func xLogX(t *ember.Tensor) *ember.Tensor { return t.Mul(t.Log()) }

// klCross is KL(p ‖ q) for the pairs of different types that torch 1.13
// registers among this package's distributions (kl.py's "Different
// distributions"); ok is false for the others.
func klCross(p, q Distribution) (kl *ember.Tensor, ok bool) {
	inf := posInf()
	switch p := p.(type) {
	case *Bernoulli:
		if q, ok := q.(*Poisson); ok {
			return p.Entropy().Neg().Sub(p.Probs.Mul(q.Rate.Log()).Sub(q.Rate)), true
		}
	case *Beta:
		c1, c0 := p.Concentration1, p.Concentration0
		switch q := q.(type) {
		case *Pareto:
			return infLike(c1), true
		case *ContinuousBernoulli:
			return klToContBern(p, q), true
		case *Exponential:
			return p.Entropy().Neg().Sub(q.Rate.Log()).Add(q.Rate.Mul(c1.Div(c1.Add(c0)))), true
		case *Gamma:
			t2 := q.Concentration.Lgamma().Sub(q.Concentration.Mul(q.Rate.Log()))
			t3 := q.Concentration.SubScalar(1).Mul(c1.Digamma().Sub(c1.Add(c0).Digamma()))
			t4 := q.Rate.Mul(c1).Div(c1.Add(c0))
			return p.Entropy().Neg().Add(t2).Sub(t3).Add(t4), true
		case *Normal:
			e := c1.Div(c1.Add(c0))
			vn := q.Scale.Square()
			t2 := vn.MulScalar(2 * math.Pi).Log().MulScalar(0.5)
			t3 := e.Mul(e.RSubScalar(1)).Div(c1.Add(c0).AddScalar(1)).Add(e.Square()).MulScalar(0.5)
			t4 := q.Loc.Mul(e)
			t5 := q.Loc.Square().MulScalar(0.5)
			return p.Entropy().Neg().Add(t2).Add(t3.Sub(t4).Add(t5).Div(vn)), true
		case *Uniform:
			r := p.Entropy().Neg().Add(q.High.Sub(q.Low).Log())
			return ember.WhereScalar(q.Low.GtScalar(0).LogicalOr(q.High.LtScalar(1)), inf, r), true
		}
	case *ContinuousBernoulli:
		switch q := q.(type) {
		case *Pareto:
			return infLike(p.Probs), true
		case *Exponential:
			return p.Entropy().Neg().Sub(q.Rate.Log()).Add(q.Rate.Mul(p.Mean())), true
		case *Normal:
			t2 := q.Loc.Div(q.Scale).Square().AddScalar(log2Pi).MulScalar(0.5).Add(q.Scale.Log())
			m := p.Mean()
			t3 := p.Variance().Add(m.Square()).Sub(q.Loc.Mul(m).MulScalar(2)).Div(q.Scale.Square().MulScalar(2))
			return p.Entropy().Neg().Add(t2).Add(t3), true
		case *Uniform:
			r := p.Entropy().Neg().Add(q.High.Sub(q.Low).Log())
			return ember.WhereScalar(q.Low.LtScalar(0).LogicalNot().LogicalOr(q.High.GtScalar(1).LogicalNot()), inf, r), true
		}
	case *Exponential:
		switch q := q.(type) {
		case *Beta, *ContinuousBernoulli, *Pareto, *Uniform:
			return infLike(p.Rate), true
		case *Gumbel:
			srp := p.Rate.Mul(q.Scale)
			lsr := q.Loc.Div(q.Scale)
			t1 := srp.Log().SubScalar(1)
			t2 := lsr.Exp().Mul(srp).Div(srp.AddScalar(1))
			return t1.Sub(lsr).Add(t2).Add(srp.Reciprocal()), true
		case *Gamma:
			ratio := q.Rate.Div(p.Rate)
			t1 := q.Concentration.Neg().Mul(ratio.Log())
			return t1.Add(ratio).Add(q.Concentration.Lgamma()).Add(q.Concentration.MulScalar(eulerGamma)).SubScalar(1 + eulerGamma), true
		case *Normal:
			vn := q.Scale.Square()
			r2 := p.Rate.Square()
			t1 := r2.Mul(vn).MulScalar(2 * math.Pi).Log().MulScalar(0.5)
			t2 := r2.Reciprocal()
			t3 := q.Loc.Div(p.Rate)
			t4 := q.Loc.Square().MulScalar(0.5)
			return t1.SubScalar(1).Add(t2.Sub(t3).Add(t4).Div(vn)), true
		}
	case *Gamma:
		switch q := q.(type) {
		case *Beta, *ContinuousBernoulli, *Pareto, *Uniform:
			return infLike(p.Concentration), true
		case *Gumbel:
			c := p.Concentration
			bsp := p.Rate.Mul(q.Scale)
			lsr := q.Loc.Div(q.Scale)
			t1 := c.SubScalar(1).Mul(c.Digamma()).Sub(c.Lgamma()).Sub(c)
			t2 := bsp.Log().Add(c.Div(bsp))
			t3 := lsr.Exp().Mul(bsp.Reciprocal().AddScalar(1).Pow(c.Neg())).Sub(lsr)
			return t1.Add(t2).Add(t3), true
		case *Exponential:
			return p.Entropy().Neg().Sub(q.Rate.Log()).Add(q.Rate.Mul(p.Concentration).Div(p.Rate)), true
		case *Normal:
			c := p.Concentration
			vn := q.Scale.Square()
			b2 := p.Rate.Square()
			t1 := b2.Mul(vn).MulScalar(2 * math.Pi).Log().MulScalar(0.5).Sub(c).Sub(c.Lgamma())
			t2 := c.Square().Add(c).MulScalar(0.5).Div(b2)
			t3 := q.Loc.Mul(c).Div(p.Rate)
			t4 := q.Loc.Square().MulScalar(0.5)
			return t1.Add(c.SubScalar(1).Mul(c.Digamma())).Add(t2.Sub(t3).Add(t4).Div(vn)), true
		}
	case *Gumbel:
		switch q := q.(type) {
		case *Beta, *ContinuousBernoulli, *Exponential, *Gamma, *Pareto, *Uniform:
			return infLike(p.Loc), true
		case *Normal:
			pr := p.Scale.Div(q.Scale)
			t1 := pr.DivScalar(math.Sqrt(2 * math.Pi)).Log()
			t2 := pr.MulScalar(math.Pi * 0.5).Square().DivScalar(3)
			t3 := p.Loc.Add(p.Scale.MulScalar(eulerGamma)).Sub(q.Loc).Div(q.Scale).Square().MulScalar(0.5)
			return t1.Neg().Add(t2).Add(t3).SubScalar(eulerGamma + 1), true
		}
	case *Pareto:
		switch q := q.(type) {
		case *Beta, *ContinuousBernoulli, *Uniform:
			return infLike(p.Scale), true
		case *Exponential:
			srp := p.Scale.Mul(q.Rate)
			t1 := p.Alpha.Div(srp).Log()
			t3 := p.Alpha.Mul(srp).Div(p.Alpha.SubScalar(1))
			r := t1.Sub(p.Alpha.Reciprocal()).Add(t3).SubScalar(1)
			return ember.WhereScalar(p.Alpha.GtScalar(1).LogicalNot(), inf, r), true
		case *Gamma:
			common := p.Scale.Log().Add(p.Alpha.Reciprocal())
			t1 := p.Alpha.Log().Sub(common)
			t2 := q.Concentration.Lgamma().Sub(q.Concentration.Mul(q.Rate.Log()))
			t3 := q.Concentration.RSubScalar(1).Mul(common)
			t4 := q.Rate.Mul(p.Alpha).Mul(p.Scale).Div(p.Alpha.SubScalar(1))
			r := t1.Add(t2).Add(t3).Add(t4).SubScalar(1)
			return ember.WhereScalar(p.Alpha.GtScalar(1).LogicalNot(), inf, r), true
		case *Normal:
			vn := q.Scale.Square().MulScalar(2)
			common := p.Scale.Div(p.Alpha.SubScalar(1))
			t1 := q.Scale.Mul(p.Alpha).Div(p.Scale).MulScalar(math.Sqrt(2 * math.Pi)).Log()
			t3 := p.Alpha.Mul(common.Square()).Div(p.Alpha.SubScalar(2))
			t4 := p.Alpha.Mul(common).Sub(q.Loc).Square()
			r := t1.Sub(p.Alpha.Reciprocal()).Add(t3.Add(t4).Div(vn)).SubScalar(1)
			return ember.WhereScalar(p.Alpha.GtScalar(2).LogicalNot(), inf, r), true
		}
	case *Laplace:
		switch q := q.(type) {
		case *Beta, *ContinuousBernoulli, *Exponential, *Gamma, *Pareto, *Uniform:
			return infLike(p.Loc), true
		case *Normal:
			vn := q.Scale.Square()
			r := p.Scale.Square().Div(vn)
			t1 := r.MulScalar(2 / math.Pi).Log().MulScalar(0.5)
			t2 := p.Loc.Square().MulScalar(0.5)
			t3 := p.Loc.Mul(q.Loc)
			t4 := q.Loc.Square().MulScalar(0.5)
			return t1.Neg().Add(r).Add(t2.Sub(t3).Add(t4).Div(vn)).SubScalar(1), true
		}
	case *Normal:
		switch q := q.(type) {
		case *Beta, *ContinuousBernoulli, *Exponential, *Gamma, *Pareto, *Uniform:
			return infLike(p.Loc), true
		case *Gumbel:
			msr := p.Loc.Div(q.Scale)
			vsr := p.Scale.Div(q.Scale).Square()
			lsr := q.Loc.Div(q.Scale)
			t1 := vsr.Log().MulScalar(0.5)
			t2 := msr.Sub(lsr)
			t3 := msr.Neg().Add(vsr.MulScalar(0.5)).Add(lsr).Exp()
			return t1.Neg().Add(t2).Add(t3).SubScalar(0.5 * (1 + log2Pi)), true
		case *Laplace:
			ld := p.Loc.Sub(q.Loc)
			sr := p.Scale.Div(q.Scale)
			lds := ld.Div(p.Scale)
			t1 := sr.Log()
			t2 := p.Scale.MulScalar(math.Sqrt(2 / math.Pi)).Mul(lds.Square().MulScalar(-0.5).Exp())
			t3 := ld.Mul(lds.MulScalar(math.Sqrt(0.5)).Erf())
			return t1.Neg().Add(t2.Add(t3).Div(q.Scale)).SubScalar(0.5 * (1 + math.Log(0.5*math.Pi))), true
		}
	case *Poisson:
		switch q.(type) {
		case *Bernoulli, *Binomial:
			return infLike(p.Rate), true
		}
	case *Uniform:
		w := p.High.Sub(p.Low)
		switch q := q.(type) {
		case *Beta:
			t1 := w.Log()
			t2 := q.Concentration1.SubScalar(1).Mul(xLogX(p.High).Sub(xLogX(p.Low)).Sub(w)).Div(w)
			t3 := q.Concentration0.SubScalar(1).Mul(xLogX(p.High.RSubScalar(1)).Sub(xLogX(p.Low.RSubScalar(1))).Add(w)).Div(w)
			t4 := q.Concentration1.Lgamma().Add(q.Concentration0.Lgamma()).Sub(q.Concentration1.Add(q.Concentration0).Lgamma())
			r := t3.Add(t4).Sub(t1).Sub(t2)
			return ember.WhereScalar(p.High.GtScalar(1).LogicalOr(p.Low.LtScalar(0)), inf, r), true
		case *Exponential:
			r := q.Rate.Mul(p.High.Add(p.Low)).DivScalar(2).Sub(w.Mul(q.Rate).Log())
			return ember.WhereScalar(p.Low.LtScalar(0), inf, r), true
		case *Gamma:
			t1 := w.Log()
			t2 := q.Concentration.Lgamma().Sub(q.Concentration.Mul(q.Rate.Log()))
			t3 := q.Concentration.RSubScalar(1).Mul(xLogX(p.High).Sub(xLogX(p.Low)).Sub(w)).Div(w)
			t4 := q.Rate.Mul(p.High.Add(p.Low)).DivScalar(2)
			r := t1.Neg().Add(t2).Add(t3).Add(t4)
			return ember.WhereScalar(p.Low.LtScalar(0), inf, r), true
		case *ContinuousBernoulli:
			r := klToContBern(p, q)
			return ember.WhereScalar(p.High.LtScalar(1).LogicalNot().LogicalOr(p.Low.GtScalar(0).LogicalNot()), inf, r), true
		case *Gumbel:
			common := q.Scale.Div(w)
			hld := p.High.Sub(q.Loc).Div(q.Scale)
			lld := p.Low.Sub(q.Loc).Div(q.Scale)
			t1 := common.Log().Add(hld.Add(lld).MulScalar(0.5))
			t2 := common.Mul(hld.Neg().Exp().Sub(lld.Neg().Exp()))
			return t1.Sub(t2), true
		case *Pareto:
			t1 := q.Alpha.Mul(q.Scale.Pow(q.Alpha)).Mul(w).Log()
			t2 := xLogX(p.High).Sub(xLogX(p.Low)).Sub(w).Div(w)
			r := t2.Mul(q.Alpha.AddScalar(1)).Sub(t1)
			return ember.WhereScalar(p.Low.Lt(q.Scale), inf, r), true
		case *Normal:
			t1 := q.Scale.MulScalar(math.Sqrt(2 * math.Pi)).Div(w).Log()
			t2 := w.Square().DivScalar(12)
			t3 := p.High.Add(p.Low).Sub(q.Loc.MulScalar(2)).DivScalar(2).Square()
			return t1.Add(t2.Add(t3).MulScalar(0.5).Div(q.Scale.Square())), true
		}
	}
	return nil, false
}

// klToContBern is torch's KL(p ‖ q) of a Beta or Uniform p and a
// ContinuousBernoulli q: −H(p) − E[x]·logits − log(1−probs) − log C.
func klToContBern(p Distribution, q *ContinuousBernoulli) *ember.Tensor {
	return p.Entropy().Neg().Sub(p.Mean().Mul(q.Logits)).Sub(q.Probs.Neg().Log1p()).Sub(q.logNorm())
}
