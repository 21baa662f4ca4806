package distributions

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/linalg"
)

// LowRankMultivariateNormal is the multivariate normal N(loc, W Wᵀ + D)
// with a low-rank covariance factor W (n×m) and a positive diagonal D,
// as torch.distributions.LowRankMultivariateNormal: densities and
// entropies go through the m×m capacitance matrix I + Wᵀ D⁻¹ W (the
// Woodbury identity and the matrix determinant lemma).
type LowRankMultivariateNormal struct {
	base
	Loc       *ember.Tensor // [batch..., n]
	CovFactor *ember.Tensor // [batch..., n, m]
	CovDiag   *ember.Tensor // [batch..., n]
	w, dg     *ember.Tensor // unbroadcast
	capTril   *ember.Tensor // Cholesky factor of the capacitance
}

// NewLowRankMultivariateNormal returns N(loc, covFactor covFactorᵀ +
// diag(covDiag)); loc [.., n], covFactor [.., n, m], covDiag [.., n]
// positive, their batch dims broadcast.
func NewLowRankMultivariateNormal(loc, covFactor, covDiag *ember.Tensor) *LowRankMultivariateNormal {
	const op = "distributions.LowRankMultivariateNormal"
	if loc == nil || covFactor == nil || covDiag == nil {
		panic(&ember.ValueError{Op: op, Msg: "a parameter is nil"})
	}
	if loc.Dim() < 1 {
		panic(&ember.ValueError{Op: op, Msg: "loc must be at least one-dimensional."})
	}
	n := loc.Shape()[loc.Dim()-1]
	if covFactor.Dim() < 2 {
		panic(&ember.ValueError{Op: op, Msg: "cov_factor must be at least two-dimensional, with optional leading batch dimensions"})
	}
	ws := covFactor.Shape()
	if ws[len(ws)-2] != n {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("cov_factor must be a batch of matrices with shape %d x m", n)})
	}
	if ds := covDiag.Shape(); len(ds) < 1 || ds[len(ds)-1] != n {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("cov_diag must be a batch of vectors with shape [%d]", n)})
	}
	dt := floatDType(loc, covFactor, covDiag)
	loc, covFactor, covDiag = asDType(loc, dt), asDType(covFactor, dt), asDType(covDiag, dt)
	var shape ember.Shape
	if err := ember.Try(func() {
		shape = ember.BroadcastShapes(op, loc.Unsqueeze(-1).Shape(), ws, covDiag.Unsqueeze(-1).Shape())
	}); err != nil {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("Incompatible batch shapes: loc %v, cov_factor %v, cov_diag %v", loc.Shape(), ws, covDiag.Shape())})
	}
	m := ws[len(ws)-1]
	vshape := append(ember.Shape{}, shape[:len(shape)-1]...)
	l := loc.Unsqueeze(-1).Expand(append(append(ember.Shape{}, vshape...), 1)...).Squeeze(-1)
	d := &LowRankMultivariateNormal{
		Loc: l, CovFactor: covFactor.Expand(shape...), CovDiag: covDiag.Unsqueeze(-1).Expand(append(append(ember.Shape{}, vshape...), 1)...).Squeeze(-1),
		w: covFactor, dg: covDiag,
	}
	d.base = base{name: "LowRankMultivariateNormal", batch: vshape[: len(vshape)-1 : len(vshape)-1], event: ember.Shape{n},
		params: []param{{"loc", d.Loc}, {"cov_factor", d.CovFactor}, {"cov_diag", d.CovDiag}}}
	d.check("loc", d.Loc, d.Loc.Eq(d.Loc).All(ember.Dims(-1)), "IndependentConstraint(Real(), 1)")
	d.check("cov_factor", d.CovFactor, d.CovFactor.Eq(d.CovFactor).All(ember.Dims(-2, -1)), "IndependentConstraint(Real(), 2)")
	d.check("cov_diag", d.CovDiag, d.CovDiag.GtScalar(0).All(ember.Dims(-1)), "IndependentConstraint(GreaterThan(lower_bound=0.0), 1)")
	// capacitance I + Wᵀ D⁻¹ W
	k := covFactor.Transpose(-2, -1).Div(covDiag.Unsqueeze(-2)).MatMul(covFactor).Add(ember.Eye(m, opts(covFactor)...))
	d.capTril = linalg.Cholesky(k, false)
	return d
}

func asDType(t *ember.Tensor, dt ember.DType) *ember.Tensor {
	if t.DType() != dt {
		return t.Cast(dt)
	}
	return t
}

// lowrankLogdet is log|W Wᵀ + D| = log|C| + log|D|.
func lowrankLogdet(d, capTril *ember.Tensor) *ember.Tensor {
	return capTril.Diagonal(0, -2, -1).Log().Sum(ember.Dims(-1)).MulScalar(2).Add(d.Log().Sum(ember.Dims(-1)))
}

// lowrankMahalanobis is xᵀ (W Wᵀ + D)⁻¹ x by the Woodbury identity.
func lowrankMahalanobis(w, d, x, capTril *ember.Tensor) *ember.Tensor {
	wtDinv := w.Transpose(-2, -1).Div(d.Unsqueeze(-2))
	wtDinvX := wtDinv.MatMul(x.Unsqueeze(-1)).Squeeze(-1)
	return x.Square().Div(d).Sum(ember.Dims(-1)).Sub(mahalanobis(capTril, wtDinvX))
}

func (d *LowRankMultivariateNormal) HasRSample() bool {
	nilGuard(d, "HasRSample")
	return true
}
func (d *LowRankMultivariateNormal) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return d.Loc
}
func (d *LowRankMultivariateNormal) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	return d.w.Square().Sum(ember.Dims(-1)).Add(d.dg).Expand(d.Loc.Shape()...)
}
func (d *LowRankMultivariateNormal) Stddev() *ember.Tensor {
	nilGuard(d, "Stddev")
	return d.Variance().Sqrt()
}

// CovarianceMatrix is W Wᵀ + diag(D), of shape batch + [n, n].
func (d *LowRankMultivariateNormal) CovarianceMatrix() *ember.Tensor {
	nilGuard(d, "CovarianceMatrix")
	n := d.event[0]
	c := d.w.MatMul(d.w.Transpose(-2, -1)).Add(d.dg.DiagEmbed(0, -2, -1))
	return c.Expand(append(append(ember.Shape{}, d.batch...), n, n)...)
}

func (d *LowRankMultivariateNormal) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	n := float64(d.event[0])
	return lowrankLogdet(d.dg, d.capTril).AddScalar(n * (1 + log2Pi)).MulScalar(0.5).Expand(d.batch...)
}

func (d *LowRankMultivariateNormal) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor { return d.RSample(s...) })
}

// RSample returns loc + W ε_W + √D ε_D, ε_W (m) and ε_D (n) standard
// normal.
func (d *LowRankMultivariateNormal) RSample(s ...int) *ember.Tensor {
	nilGuard(d, "RSample")
	shape := d.extended(s)
	ws := append(append(ember.Shape{}, shape[:len(shape)-1]...), d.w.Shape()[d.w.Dim()-1])
	eW := ember.Randn(ws, opts(d.Loc)...)
	eD := ember.Randn(shape, opts(d.Loc)...)
	return d.Loc.Add(d.w.MatMul(eW.Unsqueeze(-1)).Squeeze(-1)).Add(d.dg.Sqrt().Mul(eD))
}

func (d *LowRankMultivariateNormal) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "IndependentConstraint(Real(), 1)", func() *ember.Tensor { return v.Eq(v).All(ember.Dims(-1)) })
	v = asFloat(v, d.Loc)
	m := lowrankMahalanobis(d.w, d.dg, v.Sub(d.Loc), d.capTril)
	ld := lowrankLogdet(d.dg, d.capTril)
	return m.Add(ld).AddScalar(float64(d.event[0]) * log2Pi).MulScalar(-0.5)
}

// traceXXT is torch's _batch_trace_XXT: the sum of squares of each
// matrix.
func traceXXT(x *ember.Tensor) *ember.Tensor { return x.Square().Sum(ember.Dims(-2, -1)) }

// klLowRank is KL(p ‖ q) for the pairs of MultivariateNormal and
// LowRankMultivariateNormal torch registers with a low-rank side; ok is
// false for other types.
func klLowRank(p, q Distribution) (*ember.Tensor, bool) {
	const op = "distributions.KLDivergence"
	lp, pLow := p.(*LowRankMultivariateNormal)
	lq, qLow := q.(*LowRankMultivariateNormal)
	mp, pFull := p.(*MultivariateNormal)
	mq, qFull := q.(*MultivariateNormal)
	if !(pLow && (qLow || qFull) || pFull && qLow) {
		return nil, false
	}
	if !p.EventShape().Equal(q.EventShape()) {
		panic(&ember.ValueError{Op: op, Msg: "KL-divergence between two (Low Rank) Multivariate Normals with different event shapes cannot be computed"})
	}
	n := float64(p.EventShape()[0])
	half := func(t1, t2, t3 *ember.Tensor) *ember.Tensor { return t1.Add(t2).Add(t3).SubScalar(n).MulScalar(0.5) }
	if qLow {
		qWtDinv := lq.w.Transpose(-2, -1).Div(lq.dg.Unsqueeze(-2))
		a := linalg.SolveTriangular(lq.capTril, qWtDinv, false, false)
		var qLoc *ember.Tensor = lq.Loc
		if pLow {
			t1 := lowrankLogdet(lq.dg, lq.capTril).Sub(lowrankLogdet(lp.dg, lp.capTril))
			t3 := lowrankMahalanobis(lq.w, lq.dg, qLoc.Sub(lp.Loc), lq.capTril)
			t21 := lp.dg.Div(lq.dg).Sum(ember.Dims(-1))
			t22 := traceXXT(lp.w.Mul(lq.dg.Rsqrt().Unsqueeze(-1)))
			t23 := traceXXT(a.Mul(lp.dg.Sqrt().Unsqueeze(-2)))
			t24 := traceXXT(a.MatMul(lp.w))
			return half(t1, t21.Add(t22).Sub(t23).Sub(t24), t3), true
		}
		t1 := lowrankLogdet(lq.dg, lq.capTril).Sub(mp.halfLogDet().MulScalar(2))
		t3 := lowrankMahalanobis(lq.w, lq.dg, qLoc.Sub(mp.Loc), lq.capTril)
		t21 := traceXXT(mp.tril.Mul(lq.dg.Rsqrt().Unsqueeze(-1)))
		t22 := traceXXT(a.MatMul(mp.tril))
		return half(t1, t21.Sub(t22), t3), true
	}
	// p low-rank, q full
	t1 := mq.halfLogDet().MulScalar(2).Sub(lowrankLogdet(lp.dg, lp.capTril))
	t3 := mahalanobis(mq.tril, mq.Loc.Sub(lp.Loc))
	// torch takes the batch of q's factor and p's cov_factor only, and fails
	// to expand p's cov_diag when it has more batch dims: include them
	qs, ps, ds := mq.tril.Shape(), lp.w.Shape(), lp.dg.Shape()
	batch := ember.BroadcastShapes(op, qs[:len(qs)-2], ps[:len(ps)-2], ds[:len(ds)-1])
	ni := p.EventShape()[0]
	full := append(append(ember.Shape{}, batch...), ni, ni)
	qt := mq.tril.Expand(full...)
	pw := lp.w.Expand(append(append(ember.Shape{}, batch...), ni, ps[len(ps)-1])...)
	pd := lp.dg.Sqrt().DiagEmbed(0, -2, -1).Expand(full...)
	t21 := traceXXT(linalg.SolveTriangular(qt, pw, false, false))
	t22 := traceXXT(linalg.SolveTriangular(qt, pd, false, false))
	return half(t1, t21.Add(t22), t3), true
}
