package ember

import "fmt"

// Cumulative scans, sorting and sampling: Cumsum, Cumprod, Sort, Argsort,
// TopK and Multinomial, on the backends' Scan and Sort kernels.

func (t *Tensor) scanOp(name, gradFn string, dim int, prod bool) *Tensor {
	t.live(name)
	if t.dtype.IsHalf() { // accumulated in float32, each output rounded, as PyTorch
		return t.Cast(Float32).scanOp(name, gradFn, dim, prod).Cast(t.dtype)
	}
	if t.Dim() == 0 {
		return t.Reshape(1).scanOp(name, gradFn, 0, prod).Reshape()
	}
	d := t.dim(name, dim)
	x := t.Detach()
	if !x.dtype.IsFloat() {
		x = x.Cast(Int64) // integer and bool scans are int64, as in PyTorch
	}
	out := empty(x.shape, x.dtype, x.dev)
	out.be().Scan(out.view(), x.view(), d, prod, false)
	revsum := func(g *Tensor) *Tensor {
		r := empty(g.shape, g.dtype, g.dev)
		r.be().Scan(r.view(), g.view(), d, false, true)
		return r
	}
	if !prod {
		// the gradient is linear in g; the adjoint of the reversed sum is the sum
		back := func(g *Tensor) []*Tensor { return []*Tensor{revsum(g)} }
		return recordTwice(gradFn, out, []*Tensor{t}, nil, back,
			linearTwice("CumsumBackwardBackward0", back, func(gg *Tensor) *Tensor { return gg.Cumsum(d) }))
	}
	y := out.Detach()
	// twice: t and the output (x's and y's storages), with recording scans
	return recordTwice(gradFn, out, []*Tensor{t}, []*Tensor{x, y}, func(g *Tensor) []*Tensor {
		return []*Tensor{cumprodGrad(g, x, y, d, revsum)}
	}, func(g *Tensor) []*Tensor { return []*Tensor{cumprodGradExact(g, t, d)} })
}

// cumprodGradExact is cumprodGrad written as its definition, the n
// products Π_{k≤j,k≠i} x_k for each i (O(n²) along d): differentiable
// also where x holds zeros, as PyTorch's cumprod_backward in grad mode.
func cumprodGradExact(g, x *Tensor, d int) *Tensor {
	last := x.Dim() - 1
	xt, gt := x.Transpose(d, last), g.Transpose(d, last)
	n := xt.shape[last]
	rows := Arange(0, float64(n), 1, On(x.dev)).Unsqueeze(1) // i
	cols := Arange(0, float64(n), 1, On(x.dev))              // k, j
	// X[..., i, k] = x_k, with x_i taken as 1
	xs := WhereScalar(rows.Eq(cols), 1, xt.Unsqueeze(-2))
	p := xs.Cumprod(-1) // [..., i, j]
	terms := WhereTensorScalar(cols.Ge(rows), p.Mul(gt.Unsqueeze(-2)), 0)
	return terms.Sum(Dims(-1)).Transpose(d, last)
}

// cumprodGrad is dL/dx_i = Σ_{j≥i} g_j·Π_{k≤j,k≠i} x_k along d, exact where
// x holds zeros (as PyTorch's cumprod_backward). Before a slice's first
// zero z it is Σ_{j≥i} g_j·y_j / x_i (the later terms are zero anyway); at
// z it is Σ_{j≥z} g_j·y'_j, y' the cumulative product with x_z taken as 1;
// after z every product holds x_z, so it is 0.
func cumprodGrad(g, x, y *Tensor, d int, revsum func(*Tensor) *Tensor) *Tensor {
	zero := x.EqScalar(0)
	seen := zero.Cumsum(d) // zeros up to and including i
	before := seen.EqScalar(0)
	first := zero.LogicalAnd(seen.EqScalar(1))
	a := WhereTensorScalar(before, revsum(g.Mul(y)).Div(WhereTensorScalar(before, x, 1)), 0)
	x1 := WhereScalar(first, 1, x)
	y1 := empty(x1.shape, x1.dtype, x1.dev)
	y1.be().Scan(y1.view(), x1.view(), d, true, false)
	return a.Add(WhereTensorScalar(first, revsum(g.Mul(y1)), 0))
}

// Cumsum returns the cumulative sums of t along dim, as torch.cumsum:
// integer and Bool inputs give Int64; Float32 accumulates in float64 (as
// PyTorch's CPU kernel). Gradients: CumsumBackward0.
func (t *Tensor) Cumsum(dim int) *Tensor { return t.scanOp("cumsum", "CumsumBackward0", dim, false) }

// Cumprod returns the cumulative products of t along dim, as
// torch.cumprod (CumprodBackward0). Its gradient is exact where the input
// holds zeros, as PyTorch's (not Σ_{j≥i} g_j·y_j / x_i, which is NaN there).
func (t *Tensor) Cumprod(dim int) *Tensor { return t.scanOp("cumprod", "CumprodBackward0", dim, true) }

// Sort sorts t along dim, as torch.sort(t, dim, descending, stable=True):
// the sorted values and, as Int64, their positions in t. The sort is
// stable (equal elements keep their order, descending too) and NaN sorts
// as larger than every number. Gradients flow to the values
// (SortBackward0).
func (t *Tensor) Sort(dim int, descending bool) (values, indices *Tensor) {
	const name = "sort"
	t.live(name)
	if t.dtype.IsHalf() { // the keys widened exactly; the values cast back exactly
		v, i := t.Cast(Float32).Sort(dim, descending)
		return v.Cast(t.dtype), i
	}
	if t.Dim() == 0 {
		v, i := t.Reshape(1).Sort(0, descending)
		return v.Reshape(), i.Reshape()
	}
	d := t.dim(name, dim)
	values = empty(t.shape, t.dtype, t.dev)
	indices = empty(t.shape, Int64, t.dev)
	if t.NumElements() > 0 {
		t.be().Sort(values.view(), indices.view(), t.view(), d, descending)
	}
	ix := indices.Detach()
	values = record("SortBackward0", values, []*Tensor{t}, []*Tensor{ix}, func(g *Tensor) []*Tensor {
		z := Zeros(t.shape, On(g.dev), Dtype(g.dtype))
		scatterRaw(z, d, ix.view(), g.view(), false)
		return []*Tensor{z}
	})
	return values, indices
}

// Argsort returns the Int64 positions that sort t along dim (stably), as
// torch.argsort(t, dim, descending, stable=True).
func (t *Tensor) Argsort(dim int, descending bool) *Tensor {
	t.nonNil("argsort")
	_, i := t.Detach().Sort(dim, descending)
	return i
}

// TopK returns the k largest (largest=false: smallest) elements of t along
// dim and their Int64 positions, as torch.topk. The results are always in
// sorted order (sorted=false allows any order in PyTorch; ember gives the
// sorted one), and among equal values the earlier position comes first.
// Gradients flow to the values (TopkBackward0).
func (t *Tensor) TopK(k, dim int, largest, sorted bool) (values, indices *Tensor) {
	const name = "topk"
	t.live(name)
	if t.Dim() == 0 {
		v, i := t.Reshape(1).TopK(k, 0, largest, sorted)
		return v.Reshape(), i.Reshape()
	}
	d := t.dim(name, dim)
	if k < 0 || k > t.shape[d] {
		shapeErr(name, "selected index k out of range", t.shape)
	}
	v, i := t.Detach().Sort(d, largest)
	values, indices = v.Narrow(d, 0, k).Contiguous(), i.Narrow(d, 0, k).Contiguous()
	ix := indices.Detach()
	values = record("TopkBackward0", values, []*Tensor{t}, []*Tensor{ix}, func(g *Tensor) []*Tensor {
		z := Zeros(t.shape, On(g.dev), Dtype(g.dtype))
		scatterRaw(z, d, ix.view(), g.view(), false)
		return []*Tensor{z}
	})
	return values, indices
}

// Multinomial draws n category indices (Int64) from each row of probs
// (1-D [K] or 2-D [R, K]; non-negative weights, not necessarily
// normalised), as torch.multinomial: the result is [n] or [R, n]. With
// replacement each draw is independent; without, a row's draws are
// distinct (n must not exceed its number of non-zero weights) and follow
// sequential sampling without replacement.
//
// The uniform numbers come from the device's Philox stream (ManualSeed),
// so the same seed draws the same samples on the CPU and on CUDA. With
// replacement a draw u·total is located in the row's cumulative sums (in
// float64), which compares every draw with every category (R·n·K work);
// without replacement the n smallest of E_j/p_j (E_j exponential draws)
// are taken, which samples sequentially without replacement exactly.
func Multinomial(probs *Tensor, n int, replacement bool) *Tensor {
	const name = "multinomial"
	probs.live(name)
	if !probs.dtype.IsFloat() {
		panic(&DTypeError{Op: name, DTypes: []DType{probs.dtype}, Msg: "multinomial only supports floating-point dtypes for input"})
	}
	if probs.Dim() != 1 && probs.Dim() != 2 {
		shapeErr(name, "prob_dist must be 1 or 2 dim", probs.shape)
	}
	if n <= 0 {
		shapeErr(name, "cannot sample n_sample <= 0 samples", probs.shape)
	}
	p := probs.Detach().Cast(Float64)
	if p.Dim() == 1 {
		p = p.Unsqueeze(0)
	}
	rows, k := p.shape[0], p.shape[1]
	if k == 0 {
		shapeErr(name, "number of categories cannot be zero", probs.shape)
	}
	if !replacement && n > k {
		shapeErr(name, "cannot sample n_sample > prob_dist.size(-1) samples without replacement", probs.shape)
	}
	if p.dev.Type != Meta.Type {
		bad := p.LtScalar(0).LogicalOr(p.IsNaN()).LogicalOr(p.IsInf()).Any().Item() != 0
		if bad {
			panic(&ShapeError{Op: name, Msg: "probability tensor contains either `inf`, `nan` or element < 0"})
		}
		nz := p.GtScalar(0).Sum(Dims(1)).Min().Item()
		if nz == 0 {
			panic(&ShapeError{Op: name, Msg: "invalid multinomial distribution (sum of probabilities <= 0)"})
		}
		if !replacement && int(nz) < n {
			panic(&ShapeError{Op: name, Msg: fmt.Sprintf("invalid multinomial distribution (with replacement=False, not enough non-negative category to sample): %d samples, %d categories", n, int(nz))})
		}
	}
	var out *Tensor
	if replacement {
		cdf := p.Cumsum(1)                                                              // [R, K]
		u := Rand(Shape{rows, n}, On(p.dev), Dtype(Float64)).Mul(cdf.Narrow(1, k-1, 1)) // [R, n]
		out = cdf.Unsqueeze(1).Le(u.Unsqueeze(2)).Sum(Dims(2)).Clamp(0, float64(k-1))
	} else {
		u := Rand(Shape{rows, k}, On(p.dev), Dtype(Float64))
		keys := u.Log().Neg().Div(p) // E/p: +Inf where p is 0
		_, idx := keys.Sort(1, false)
		out = idx.Narrow(1, 0, n).Contiguous()
	}
	if probs.Dim() == 1 {
		out = out.Reshape(n)
	}
	return out
}
