package ember

import (
	"fmt"
	"math"
)

// Distances: cdist, cosine_similarity and pairwise_distance, composed from
// existing ops (their gradients come from those ops' rules).

// CosineSimilarity is torch.nn.functional.cosine_similarity(x1, x2, dim,
// eps): Σ (x1/max(‖x1‖, eps))·(x2/max(‖x2‖, eps)) along dim, x1 and x2
// broadcast together (integer operands are promoted; their common dtype
// must be floating). As in PyTorch 1.13, each input is divided by its own
// clamped norm, and the norm's gradient is x/max(‖x‖, eps) (PyTorch clamps
// the norm in place outside autograd, so its backward reads the clamped
// value).
func CosineSimilarity(x1, x2 *Tensor, dim int, eps float64) *Tensor {
	const op = "cosine_similarity"
	x1.live(op)
	x2.live(op)
	dt := PromoteTypes(x1.dtype, x2.dtype)
	if !dt.IsFloat() {
		panic(&DTypeError{Op: op, DTypes: []DType{x1.dtype, x2.dtype}, Msg: fmt.Sprintf("expected common dtype to be floating point, yet common dtype is %s", torchTypeName(dt))})
	}
	sameDevice(op, x1, x2)
	shape := BroadcastShapes(op, x1.shape, x2.shape)
	a, b := x1.Cast(dt).Expand(shape...), x2.Cast(dt).Expand(shape...)
	d := wrapDim(op, dim, len(shape), shape)
	// max(‖x‖, eps), whose gradient PyTorch 1.13 takes as x/max(‖x‖, eps)
	// (its clamp is in place, under no_grad, on the norm its backward
	// reads); 0 where that is 0.
	unit := func(x *Tensor) *Tensor {
		xd := x.Detach()
		nc := xd.Norm(2, Dims(d), KeepDim()).Clamp(eps, math.Inf(1))
		ncd := nc.Detach()
		nc = record("LinalgVectorNormBackward0", nc, []*Tensor{x}, []*Tensor{xd, ncd}, func(g *Tensor) []*Tensor {
			return []*Tensor{WhereTensorScalar(ncd.EqScalar(0).LogicalNot(), g.Div(ncd), 0).Mul(xd)}
		})
		return x.Div(nc)
	}
	return unit(a).Mul(unit(b)).Sum(Dims(d))
}

// PairwiseDistance is torch.nn.functional.pairwise_distance(x1, x2, p,
// eps, keepdim): the p-norm of x1 - x2 + eps over the last dim (x1 and x2
// broadcast together; integer inputs give Float32).
func PairwiseDistance(x1, x2 *Tensor, p, eps float64, keepdim bool) *Tensor {
	const op = "pairwise_distance"
	x1.live(op)
	x2.live(op)
	opts := []ReduceOption{Dims(-1)}
	if keepdim {
		opts = append(opts, KeepDim())
	}
	return x1.Sub(x2).AddScalar(eps).Norm(p, opts...)
}

// Cdist is torch.cdist(x1, x2, p, compute_mode): the p-norm distances
// between the rows of x1 [..., P, M] and of x2 [..., R, M] (batch dims
// broadcast), giving [..., P, R]. computeMode is PyTorch's:
// "use_mm_for_euclid_dist_if_necessary" (or ""; the default: for p = 2
// with P or R over 25, the matrix-product expansion
// sqrt(max(‖a‖² - 2a·b + ‖b‖², 0))), "use_mm_for_euclid_dist" (always for
// p = 2) or "donot_use_mm_for_euclid_dist"; other p (≥ 0, +Inf included)
// are computed directly, from the [..., P, R, M] differences (in blocks of
// rows of x1 when those are many). x1 and x2 must share one floating dtype.
func Cdist(x1, x2 *Tensor, p float64, computeMode string) *Tensor {
	const op = "cdist"
	x1.live(op)
	x2.live(op)
	if x1.Dim() < 2 {
		shapeErr(op, fmt.Sprintf("cdist only supports at least 2D tensors, X1 got: %dD", x1.Dim()), x1.shape)
	}
	if x2.Dim() < 2 {
		shapeErr(op, fmt.Sprintf("cdist only supports at least 2D tensors, X2 got: %dD", x2.Dim()), x2.shape)
	}
	m1, m2 := x1.shape[x1.Dim()-1], x2.shape[x2.Dim()-1]
	if m1 != m2 {
		shapeErr(op, fmt.Sprintf("X1 and X2 must have the same number of columns. X1: %d X2: %d", m1, m2), x1.shape, x2.shape)
	}
	if !x1.dtype.IsFloat() {
		panic(&DTypeError{Op: op, DTypes: []DType{x1.dtype}, Msg: fmt.Sprintf("cdist only supports floating-point dtypes, X1 got: %s", torchTypeName(x1.dtype))})
	}
	if !x2.dtype.IsFloat() {
		panic(&DTypeError{Op: op, DTypes: []DType{x2.dtype}, Msg: fmt.Sprintf("cdist only supports floating-point dtypes, X2 got: %s", torchTypeName(x2.dtype))})
	}
	if x1.dtype != x2.dtype {
		panic(&DTypeError{Op: op, DTypes: []DType{x1.dtype, x2.dtype}, Msg: fmt.Sprintf("expected scalar type %s but found %s", torchTypeName(x1.dtype), torchTypeName(x2.dtype))})
	}
	if !(p >= 0) {
		panic(&ValueError{Op: op, Msg: "cdist only supports non-negative p values"})
	}
	var mm bool
	switch computeMode {
	case "", "use_mm_for_euclid_dist_if_necessary":
		mm = p == 2 && (x1.shape[x1.Dim()-2] > 25 || x2.shape[x2.Dim()-2] > 25)
	case "use_mm_for_euclid_dist":
		mm = p == 2
	case "donot_use_mm_for_euclid_dist":
	default:
		panic(&ValueError{Op: op, Msg: fmt.Sprintf("%s is not a valid value for compute_mode", computeMode)})
	}
	sameDevice(op, x1, x2)
	b1, b2 := x1.shape[:x1.Dim()-2], x2.shape[:x2.Dim()-2]
	batch := BroadcastShapes(op, b1, b2)
	pr, rr := x1.shape[x1.Dim()-2], x2.shape[x2.Dim()-2]
	a := x1.Expand(append(batch.clone(), pr, m1)...)
	b := x2.Expand(append(batch.clone(), rr, m1)...)
	if pr == 0 || rr == 0 || m1 == 0 {
		return Zeros(append(batch.clone(), pr, rr), On(x1.dev), Dtype(x1.dtype)).Add(a.Sum(Dims(-1), KeepDim()).MulScalar(0)).Add(b.Sum(Dims(-1)).Unsqueeze(-2).MulScalar(0))
	}
	if mm {
		return euclideanDist(a, b)
	}
	// directly, from the differences [..., rows, R, M], in blocks of rows
	// of at most 1<<24 differences
	rows := max(1, (1<<24)/max(1, rr*m1*max(1, batch.NumElements())))
	if rows >= pr {
		return cdistDirect(a, b, p)
	}
	var parts []*Tensor
	for i := 0; i < pr; i += rows {
		parts = append(parts, cdistDirect(a.Narrow(-2, i, min(rows, pr-i)), b, p))
	}
	return Cat(parts, -2)
}

// euclideanDist is PyTorch's _euclidean_dist: sqrt(max(‖a‖² - 2a·b +
// ‖b‖², 0)) by one matrix product, with its own backward
// (_euclidean_dist_backward: g/d times the differences, 0 where d is 0).
func euclideanDist(a, b *Tensor) *Tensor {
	ad, bd := a.Detach(), b.Detach()
	an := ad.Square().Sum(Dims(-1), KeepDim())
	bn := bd.Square().Sum(Dims(-1), KeepDim())
	a2 := Cat([]*Tensor{ad.MulScalar(-2), an, OnesLike(an)}, -1)
	b2 := Cat([]*Tensor{bd, OnesLike(bn), bn}, -1)
	res := a2.MatMul(b2.Transpose(-1, -2)).Clamp(0, math.Inf(1)).Sqrt()
	rd := res.Detach()
	return record("EuclideanDistBackward0", res, []*Tensor{a, b}, []*Tensor{ad, bd, rd}, func(g *Tensor) []*Tensor {
		ratio := WhereTensorScalar(rd.EqScalar(0).LogicalNot(), g.Div(rd), 0)
		ga := ad.Mul(ratio.Sum(Dims(-1), KeepDim())).Sub(ratio.MatMul(bd))
		gb := bd.Mul(ratio.Sum(Dims(-2)).Unsqueeze(-1)).Sub(ratio.Transpose(-1, -2).MatMul(ad))
		return []*Tensor{ga, gb}
	})
}

// cdistDirect is the p-norm of the differences of a's and b's rows. For
// p = +Inf the gradient goes in full to every difference whose size is the
// distance, as PyTorch's _cdist_backward (the max's gradient would share
// it among ties).
func cdistDirect(a, b *Tensor, p float64) *Tensor {
	diff := a.Unsqueeze(-2).Sub(b.Unsqueeze(-3)) // [..., P, R, M]
	if !math.IsInf(p, 1) {
		return diff.Norm(p, Dims(-1))
	}
	dd := diff.Detach()
	dist := dd.Abs().Max(Dims(-1))
	distd := dist.Detach()
	return record("CdistBackward0", dist, []*Tensor{diff}, []*Tensor{dd, distd}, func(g *Tensor) []*Tensor {
		at := dd.Abs().Eq(distd.Unsqueeze(-1))
		return []*Tensor{WhereTensorScalar(at, g.Unsqueeze(-1).Mul(dd.Sign()), 0)}
	})
}
