package distributions

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/linalg"
)

// MultivariateNormal is the multivariate normal distribution N(loc, Σ)
// over the last dim of loc, as torch.distributions.MultivariateNormal. It
// is parameterised by one of Σ (NewMultivariateNormal), its inverse
// (NewMultivariateNormalPrecision) or its lower Cholesky factor L, Σ = L Lᵀ
// (NewMultivariateNormalScaleTril); the batch shape is the broadcast of
// loc's leading dims and the matrix's batch dims.
type MultivariateNormal struct {
	base
	Loc *ember.Tensor // [batch..., n]
	// tril is the unbroadcast Cholesky factor (torch's
	// _unbroadcasted_scale_tril).
	tril *ember.Tensor
}

// NewMultivariateNormal returns N(loc, covariance); covariance must be
// symmetric positive-definite.
func NewMultivariateNormal(loc, covariance *ember.Tensor) *MultivariateNormal {
	return newMVN("covariance_matrix", loc, covariance)
}

// NewMultivariateNormalPrecision returns N(loc, precision⁻¹); precision
// must be symmetric positive-definite.
func NewMultivariateNormalPrecision(loc, precision *ember.Tensor) *MultivariateNormal {
	return newMVN("precision_matrix", loc, precision)
}

// NewMultivariateNormalScaleTril returns N(loc, L Lᵀ) for a lower
// triangular L with a positive diagonal.
func NewMultivariateNormalScaleTril(loc, scaleTril *ember.Tensor) *MultivariateNormal {
	return newMVN("scale_tril", loc, scaleTril)
}

func newMVN(kind string, loc, m *ember.Tensor) *MultivariateNormal {
	const op = "distributions.MultivariateNormal"
	if loc == nil || m == nil {
		panic(&ember.ValueError{Op: op, Msg: "a parameter is nil"})
	}
	if loc.Dim() < 1 {
		panic(&ember.ValueError{Op: op, Msg: "loc must be at least one-dimensional."})
	}
	if m.Dim() < 2 {
		what := kind
		if kind == "scale_tril" {
			what = "scale_tril matrix"
		}
		panic(&ember.ValueError{Op: op, Msg: what + " must be at least two-dimensional, with optional leading batch dimensions"})
	}
	ls, ms := loc.Shape(), m.Shape()
	n := ls[len(ls)-1]
	if ms[len(ms)-1] != n || ms[len(ms)-2] != n {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{ls, ms}, Msg: fmt.Sprintf("%s of shape %v is not an %d×%d matrix (batch) for loc of shape %v", kind, ms, n, n, ls)})
	}
	// one floating dtype for both, without expanding
	dt := floatDType(loc, m)
	loc, m = loc.Cast(dt), m.Cast(dt)
	batch := ember.BroadcastShapes(op, ls[:len(ls)-1], ms[:len(ms)-2])
	loc = loc.Expand(append(append(ember.Shape{}, batch...), n)...)
	mx := m.Expand(append(append(ember.Shape{}, batch...), n, n)...)
	d := &MultivariateNormal{base: base{name: "MultivariateNormal", batch: batch, event: ember.Shape{n}, params: []param{{"loc", loc}, {kind, mx}}}, Loc: loc}
	d.check("loc", loc, loc.Eq(loc).All(ember.Dims(-1)), "IndependentConstraint(Real(), 1)")
	switch kind {
	case "scale_tril":
		diagOK := m.Diagonal(0, -2, -1).GtScalar(0).All(ember.Dims(-1))
		d.check(kind, mx, m.Tril(0).Eq(m).All(ember.Dims(-2, -1)).LogicalAnd(diagOK), "LowerCholesky()")
		d.tril = m
	case "covariance_matrix":
		d.check(kind, mx, positiveDefinite(m), "PositiveDefinite()")
		d.tril = linalg.Cholesky(m, false)
	default:
		d.check(kind, mx, positiveDefinite(m), "PositiveDefinite()")
		d.tril = precisionToScaleTril(m)
	}
	return d
}

// positiveDefinite is torch's constraints.positive_definite: symmetric
// (within atol 1e-6) and with a Cholesky factorization.
func positiveDefinite(m *ember.Tensor) *ember.Tensor {
	if isMeta(m) {
		return m.Eq(m).All(ember.Dims(-2, -1))
	}
	sym := ember.IsClose(m, m.Transpose(-2, -1), 1e-5, 1e-6, false).All(ember.Dims(-2, -1))
	if !allTrue(sym) {
		return sym
	}
	var ok *ember.Tensor
	ember.NoGrad(func() {
		_, info := linalg.CholeskyEx(m.Detach(), false)
		ok = info.EqScalar(0)
	})
	return ok
}

// precisionToScaleTril is torch's _precision_to_scale_tril: the lower
// Cholesky factor of P⁻¹ from the Cholesky factor of flipped P.
func precisionToScaleTril(p *ember.Tensor) *ember.Tensor {
	lf := linalg.Cholesky(p.Flip(-2, -1), false)
	lInv := lf.Flip(-2, -1).Transpose(-2, -1)
	n := p.Shape()[p.Dim()-1]
	id := ember.Eye(n, opts(p)...)
	return linalg.SolveTriangular(lInv, id, false, false)
}

func (d *MultivariateNormal) matShape() ember.Shape {
	n := d.event[0]
	return append(append(ember.Shape{}, d.batch...), n, n)
}

// ScaleTril is the lower Cholesky factor L of the covariance, of shape
// batch + [n, n].
func (d *MultivariateNormal) ScaleTril() *ember.Tensor {
	nilGuard(d, "ScaleTril")
	return d.tril.Expand(d.matShape()...)
}

// CovarianceMatrix is Σ = L Lᵀ, of shape batch + [n, n].
func (d *MultivariateNormal) CovarianceMatrix() *ember.Tensor {
	nilGuard(d, "CovarianceMatrix")
	return d.tril.MatMul(d.tril.Transpose(-2, -1)).Expand(d.matShape()...)
}

// PrecisionMatrix is Σ⁻¹ = L⁻ᵀ L⁻¹, of shape batch + [n, n].
func (d *MultivariateNormal) PrecisionMatrix() *ember.Tensor {
	nilGuard(d, "PrecisionMatrix")
	li := linalg.SolveTriangular(d.tril, ember.Eye(d.event[0], opts(d.tril)...), false, false)
	return li.Transpose(-2, -1).MatMul(li).Expand(d.matShape()...)
}

func (d *MultivariateNormal) HasRSample() bool {
	nilGuard(d, "HasRSample")
	return true
}

func (d *MultivariateNormal) Mean() *ember.Tensor {
	nilGuard(d, "Mean")
	return d.Loc
}

func (d *MultivariateNormal) Variance() *ember.Tensor {
	nilGuard(d, "Variance")
	return d.tril.Square().Sum(ember.Dims(-1)).Expand(d.Loc.Shape()...)
}

func (d *MultivariateNormal) Stddev() *ember.Tensor {
	nilGuard(d, "Stddev")
	return d.Variance().Sqrt()
}

func (d *MultivariateNormal) halfLogDet() *ember.Tensor {
	return d.tril.Diagonal(0, -2, -1).Log().Sum(ember.Dims(-1))
}

func (d *MultivariateNormal) Entropy() *ember.Tensor {
	nilGuard(d, "Entropy")
	h := d.halfLogDet().AddScalar(0.5 * float64(d.event[0]) * (1 + log2Pi))
	return h.Expand(d.batch...)
}

func (d *MultivariateNormal) Sample(s ...int) *ember.Tensor {
	nilGuard(d, "Sample")
	return noGrad(func() *ember.Tensor { return d.RSample(s...) })
}

// RSample returns loc + L ε, ε standard normal.
func (d *MultivariateNormal) RSample(s ...int) *ember.Tensor {
	nilGuard(d, "RSample")
	e := ember.Randn(d.extended(s), opts(d.Loc)...)
	return d.Loc.Add(d.tril.MatMul(e.Unsqueeze(-1)).Squeeze(-1))
}

// mahalanobis is torch's _batch_mahalanobis: xᵀ (L Lᵀ)⁻¹ x, the batch
// dims of l and x broadcast.
func mahalanobis(l, x *ember.Tensor) *ember.Tensor {
	return linalg.SolveTriangular(l, x.Unsqueeze(-1), false, false).Squeeze(-1).Square().Sum(ember.Dims(-1))
}

func (d *MultivariateNormal) LogProb(v *ember.Tensor) *ember.Tensor {
	nilGuard(d, "LogProb")
	d.validateSample("LogProb", v, "IndependentConstraint(Real(), 1)", func() *ember.Tensor { return v.Eq(v).All(ember.Dims(-1)) })
	v = asFloat(v, d.Loc)
	m := mahalanobis(d.tril, v.Sub(d.Loc))
	return m.AddScalar(float64(d.event[0]) * log2Pi).MulScalar(-0.5).Sub(d.halfLogDet())
}

func klMVN(p, q *MultivariateNormal) *ember.Tensor {
	const op = "distributions.KLDivergence"
	if !p.event.Equal(q.event) {
		panic(&ember.ValueError{Op: op, Msg: "KL-divergence between two Multivariate Normals with different event shapes cannot be computed"})
	}
	n := p.event[0]
	half := q.halfLogDet().Sub(p.halfLogDet())
	qs, ps := q.tril.Shape(), p.tril.Shape()
	batch := ember.BroadcastShapes(op, qs[:len(qs)-2], ps[:len(ps)-2])
	full := append(append(ember.Shape{}, batch...), n, n)
	x := linalg.SolveTriangular(q.tril.Expand(full...), p.tril.Expand(full...), false, false)
	term2 := x.Square().Sum(ember.Dims(-2, -1))
	term3 := mahalanobis(q.tril, q.Loc.Sub(p.Loc))
	return half.Add(term2.Add(term3).SubScalar(float64(n)).MulScalar(0.5))
}
