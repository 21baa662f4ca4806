package distributions

import (
	"fmt"
	"strings"

	"github.com/emberml/ember"
)

// KLDivergence returns KL(p ‖ q), of the batch shapes' broadcast, for the
// pairs torch.distributions.kl_divergence registers among this package's
// types: each of Normal, LogNormal, Bernoulli, Categorical,
// OneHotCategorical, Uniform, Exponential, Laplace, Gamma (and Chi2, a
// Gamma), Beta, Dirichlet, Poisson, Binomial, Geometric,
// MultivariateNormal, LowRankMultivariateNormal, Cauchy, HalfNormal,
// HalfCauchy, Gumbel, Pareto and ContinuousBernoulli with its own kind;
// MultivariateNormal with LowRankMultivariateNormal both ways;
// Independent with Independent of the same reinterpreted dims; and
// torch's pairs of different kinds (Normal‖Laplace, Uniform‖Normal,
// Gamma‖Exponential, Gumbel‖Normal, Pareto‖Gamma,
// Beta‖ContinuousBernoulli, ...; +Inf where p's support is not within
// q's). Of the pairs torch reaches only through TransformedDistribution,
// HalfCauchy‖HalfCauchy is implemented (Weibull‖Weibull is not). Another
// pair panics with a *NotImplementedError naming both types.
func KLDivergence(p, q Distribution) *ember.Tensor {
	const op = "distributions.KLDivergence"
	if isNil(p) || isNil(q) {
		panic(&ember.ValueError{Op: op, Msg: "a distribution is nil"})
	}
	// a Chi2 is a Gamma, as in torch's registry (which dispatches on the
	// class hierarchy); the error below names the types as given
	pName, qName := typeName(p), typeName(q)
	if c, ok := p.(*Chi2); ok {
		p = &c.Gamma
	}
	if c, ok := q.(*Chi2); ok {
		q = &c.Gamma
	}
	if kl, ok := klLowRank(p, q); ok {
		return kl
	}
	inf := posInf()
	switch p := p.(type) {
	case *MultivariateNormal:
		if q, ok := q.(*MultivariateNormal); ok {
			return klMVN(p, q)
		}
	case *HalfNormal:
		if q, ok := q.(*HalfNormal); ok {
			return klNormal(p.normal, q.normal)
		}
	case *Cauchy:
		if q, ok := q.(*Cauchy); ok {
			return klCauchy(p, q)
		}
	case *HalfCauchy: // torch's TransformedDistribution pair: the KL of the base Cauchys
		if q, ok := q.(*HalfCauchy); ok {
			return klCauchy(p.cauchy, q.cauchy)
		}
	case *Gumbel:
		if q, ok := q.(*Gumbel); ok {
			ct1 := p.Scale.Div(q.Scale)
			ct2 := q.Loc.Div(q.Scale)
			ct3 := p.Loc.Div(q.Scale)
			t1 := ct1.Log().Neg().Sub(ct2).Add(ct3)
			t2 := ct1.MulScalar(eulerGamma)
			t3 := ct2.Add(ct1.AddScalar(1).Lgamma()).Sub(ct3).Exp()
			return t1.Add(t2).Add(t3).SubScalar(1 + eulerGamma)
		}
	case *ContinuousBernoulli:
		if q, ok := q.(*ContinuousBernoulli); ok {
			t1 := p.Mean().Mul(p.Logits.Sub(q.Logits))
			t2 := p.logNorm().Add(p.Probs.Neg().Log1p())
			t3 := q.logNorm().Neg().Sub(q.Probs.Neg().Log1p())
			return t1.Add(t2).Add(t3)
		}
	case *Pareto:
		if q, ok := q.(*Pareto); ok {
			sr := p.Scale.Div(q.Scale)
			ar := q.Alpha.Div(p.Alpha)
			r := q.Alpha.Mul(sr.Log()).Sub(ar.Log()).Add(ar).SubScalar(1)
			return ember.WhereScalar(p.Scale.Lt(q.Scale), inf, r)
		}
	case *Normal:
		if q, ok := q.(*Normal); ok {
			return klNormal(p, q)
		}
	case *LogNormal:
		if q, ok := q.(*LogNormal); ok {
			return klNormal(p.normal, q.normal)
		}
	case *Bernoulli:
		if q, ok := q.(*Bernoulli); ok {
			t1 := p.Probs.Mul(q.Logits.Neg().Softplus(1, 20).Sub(p.Logits.Neg().Softplus(1, 20)))
			t1 = ember.WhereScalar(q.Probs.EqScalar(0), inf, t1)
			t1 = ember.WhereScalar(p.Probs.EqScalar(0), 0, t1)
			t2 := p.Probs.RSubScalar(1).Mul(q.Logits.Softplus(1, 20).Sub(p.Logits.Softplus(1, 20)))
			t2 = ember.WhereScalar(q.Probs.EqScalar(1), inf, t2)
			t2 = ember.WhereScalar(p.Probs.EqScalar(1), 0, t2)
			return t1.Add(t2)
		}
	case *Categorical:
		if q, ok := q.(*Categorical); ok {
			return klCategorical(p, q)
		}
	case *OneHotCategorical:
		if q, ok := q.(*OneHotCategorical); ok {
			return klCategorical(p.cat, q.cat)
		}
	case *Uniform:
		if q, ok := q.(*Uniform); ok {
			r := q.High.Sub(q.Low).Div(p.High.Sub(p.Low)).Log()
			return ember.WhereScalar(q.Low.Gt(p.Low).LogicalOr(q.High.Lt(p.High)), inf, r)
		}
	case *Exponential:
		if q, ok := q.(*Exponential); ok {
			r := q.Rate.Div(p.Rate)
			return r.Log().Neg().Add(r).SubScalar(1)
		}
	case *Laplace:
		if q, ok := q.(*Laplace); ok {
			sr := p.Scale.Div(q.Scale)
			ad := p.Loc.Sub(q.Loc).Abs()
			return sr.Log().Neg().Add(ad.Div(q.Scale)).Add(sr.Mul(ad.Div(p.Scale).Neg().Exp())).SubScalar(1)
		}
	case *Gamma:
		if q, ok := q.(*Gamma); ok {
			t1 := q.Concentration.Mul(p.Rate.Div(q.Rate).Log())
			t2 := q.Concentration.Lgamma().Sub(p.Concentration.Lgamma())
			t3 := p.Concentration.Sub(q.Concentration).Mul(p.Concentration.Digamma())
			t4 := q.Rate.Sub(p.Rate).Mul(p.Concentration.Div(p.Rate))
			return t1.Add(t2).Add(t3).Add(t4)
		}
	case *Beta:
		if q, ok := q.(*Beta); ok {
			sp := p.Concentration1.Add(p.Concentration0)
			sq := q.Concentration1.Add(q.Concentration0)
			t1 := q.Concentration1.Lgamma().Add(q.Concentration0.Lgamma()).Add(sp.Lgamma())
			t2 := p.Concentration1.Lgamma().Add(p.Concentration0.Lgamma()).Add(sq.Lgamma())
			t3 := p.Concentration1.Sub(q.Concentration1).Mul(p.Concentration1.Digamma())
			t4 := p.Concentration0.Sub(q.Concentration0).Mul(p.Concentration0.Digamma())
			t5 := sq.Sub(sp).Mul(sp.Digamma())
			return t1.Sub(t2).Add(t3).Add(t4).Add(t5)
		}
	case *Dirichlet:
		if q, ok := q.(*Dirichlet); ok {
			pc, qc := p.Concentration, q.Concentration
			sp := pc.Sum(ember.Dims(-1))
			t1 := sp.Lgamma().Sub(qc.Sum(ember.Dims(-1)).Lgamma())
			t2 := pc.Lgamma().Sub(qc.Lgamma()).Sum(ember.Dims(-1))
			t3 := pc.Sub(qc)
			t4 := pc.Digamma().Sub(sp.Digamma().Unsqueeze(-1))
			return t1.Sub(t2).Add(t3.Mul(t4).Sum(ember.Dims(-1)))
		}
	case *Poisson:
		if q, ok := q.(*Poisson); ok {
			return p.Rate.Mul(p.Rate.Log().Sub(q.Rate.Log())).Sub(p.Rate.Sub(q.Rate))
		}
	case *Geometric:
		if q, ok := q.(*Geometric); ok {
			return p.Entropy().Neg().Sub(q.Probs.Neg().Log1p().Div(p.Probs)).Sub(q.Logits)
		}
	case *Binomial:
		if q, ok := q.(*Binomial); ok {
			if !isMeta(p.TotalCount) && !allTrue(p.TotalCount.Lt(q.TotalCount).LogicalNot()) {
				panic(&NotImplementedError{Op: op, Msg: "KL between Binomials where q.total_count > p.total_count is not implemented"})
			}
			kl := p.TotalCount.Mul(p.Probs.Mul(p.Logits.Sub(q.Logits)).Add(p.Probs.Neg().Log1p()).Sub(q.Probs.Neg().Log1p()))
			return ember.WhereScalar(p.TotalCount.Gt(q.TotalCount), inf, kl)
		}
	case *Independent:
		if q, ok := q.(*Independent); ok {
			if p.N != q.N {
				panic(&NotImplementedError{Op: op, Msg: fmt.Sprintf("KL(%s || %s) of different reinterpreted_batch_ndims (%d and %d) is not implemented", p, q, p.N, q.N)})
			}
			return sumRightmost(KLDivergence(p.Base, q.Base), p.N)
		}
	}
	if kl, ok := klCross(p, q); ok {
		return kl
	}
	panic(&NotImplementedError{Op: op, Msg: fmt.Sprintf("no KL(p || q) is implemented for p of type %s and q of type %s", pName, qName)})
}

func typeName(d Distribution) string {
	s := fmt.Sprintf("%T", d)
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimLeft(s, "*")
}

func klNormal(p, q *Normal) *ember.Tensor {
	vr := p.Scale.Div(q.Scale).Square()
	t1 := p.Loc.Sub(q.Loc).Div(q.Scale).Square()
	return vr.Add(t1).SubScalar(1).Sub(vr.Log()).MulScalar(0.5)
}

func klCauchy(p, q *Cauchy) *ember.Tensor {
	t1 := p.Scale.Add(q.Scale).Square().Add(p.Loc.Sub(q.Loc).Square()).Log()
	return t1.Sub(p.Scale.Mul(q.Scale).MulScalar(4).Log())
}

func klCategorical(p, q *Categorical) *ember.Tensor {
	t := p.Probs.Mul(p.Logits.Sub(q.Logits))
	t = ember.WhereScalar(q.Probs.EqScalar(0).Expand(t.Shape()...), posInf(), t)
	t = ember.WhereScalar(p.Probs.EqScalar(0).Expand(t.Shape()...), 0, t)
	return t.Sum(ember.Dims(-1))
}
