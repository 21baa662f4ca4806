package ember

import (
	"fmt"
	"math"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/optable"
)

// Backward rules of the elementwise, reduction, matmul and view ops. The
// ops call these hooks after computing their result; each records a node
// when an input requires grad (see record in autograd.go).

// zeroLike is a zero-dim zero of t's dtype and device.
func zeroLike(t *Tensor) *Tensor { return Full(Shape{}, 0, On(t.dev), Dtype(t.dtype)) }

func needsGrad(ts ...*Tensor) bool {
	for _, t := range ts {
		if t != nil && t.RequiresGrad() {
			return IsGradEnabled()
		}
	}
	return false
}

// recordBinary records op(a, b) = out for the floating, differentiable ops
// (those whose table row names a GradFn); a and b are the promoted operands.
func recordBinary(op backend.BinaryOp, a, b, out *Tensor) *Tensor {
	row := op.Row()
	if row.GradFn == "" || !out.dtype.IsFloat() || !needsGrad(a, b) {
		return out
	}
	rule := binaryRules[op]
	if rule == nil {
		panic(fmt.Sprintf("ember: %s has grad_fn %s in the op table but no gradient rule", op, row.GradFn))
	}
	// ao, bo, yo: the originals of what backward saves, for twice
	var ad, bd, yd, ao, bo, yo *Tensor
	var saved []*Tensor
	switch {
	case row.Saves&optable.SaveCross != 0:
		if b.RequiresGrad() {
			ad, ao = a.Detach(), a
			saved = append(saved, ad)
		}
		if a.RequiresGrad() {
			bd, bo = b.Detach(), b
			saved = append(saved, bd)
		}
	case row.Saves&optable.SaveX != 0:
		ad, bd, ao, bo = a.Detach(), b.Detach(), a, b
		saved = append(saved, ad, bd)
	}
	if row.Saves&optable.SaveY != 0 {
		yd, yo = out.Detach(), out
		saved = append(saved, yd)
	}
	need := [2]bool{a.RequiresGrad(), b.RequiresGrad()}
	return recordTwice(row.GradFn, out, []*Tensor{a, b}, saved, func(g *Tensor) []*Tensor {
		ga, gb := rule(g, ad, bd, yd, need)
		return needed(need, ga, gb)
	}, func(g *Tensor) []*Tensor {
		ga, gb := rule(g, ao, bo, yo, need)
		return needed(need, ga, gb)
	})
}

// needed keeps the gradients of the operands that need one.
func needed(need [2]bool, ga, gb *Tensor) []*Tensor {
	if !need[0] {
		ga = nil
	}
	if !need[1] {
		gb = nil
	}
	return []*Tensor{ga, gb}
}

// gradIf evaluates f only when in requires grad.
func gradIf(in *Tensor, f func() *Tensor) *Tensor { return when(in.RequiresGrad(), f) }

// when evaluates f only when need is set.
func when(need bool, f func() *Tensor) *Tensor {
	if !need {
		return nil
	}
	return f()
}

// savedIf lists the tensors to save: s1 when t1 needs a gradient, and so on.
func savedIf(s1, t1, s2, t2 *Tensor) []*Tensor {
	var out []*Tensor
	if t1.RequiresGrad() {
		out = append(out, s1)
	}
	if t2.RequiresGrad() {
		out = append(out, s2)
	}
	return out
}

// recordUnaryOp records op(x; p) = out for the floating, differentiable ops.
func recordUnaryOp(op backend.UnaryOp, x, out *Tensor, p backend.Params) *Tensor {
	row := op.Row()
	if row.GradFn == "" || !out.dtype.IsFloat() || !needsGrad(x) {
		return out
	}
	rule := unaryRules[op]
	if rule == nil {
		panic(fmt.Sprintf("ember: %s has grad_fn %s in the op table but no gradient rule", op, row.GradFn))
	}
	var xd, yd, xo, yo *Tensor // xo, yo: the originals, for twice
	var saved []*Tensor
	if row.Saves&optable.SaveX != 0 {
		xd, xo = x.Detach(), x
		saved = append(saved, xd)
	}
	if row.Saves&optable.SaveY != 0 {
		yd, yo = out.Detach(), out
		saved = append(saved, yd)
	}
	back := func(g *Tensor) []*Tensor { return []*Tensor{rule(g, xd, yd, p)} }
	if dt := out.dtype; dt.IsHalf() && !oneRounding[op] {
		// a two-byte float's gradient in float32, rounded once, as
		// PyTorch's backward kernels (tanh_backward, ...) compute it: the
		// rule's ops would each round to the low type
		back = func(g *Tensor) []*Tensor {
			return []*Tensor{inFloat32(dt, []*Tensor{g, xd, yd}, func(c []*Tensor) *Tensor { return rule(c[0], c[1], c[2], p) })}
		}
	}
	return recordTwice(row.GradFn, out, []*Tensor{x}, saved, back, func(g *Tensor) []*Tensor { return []*Tensor{rule(g, xo, yo, p)} })
}

// oneRounding marks the unary rules that run in a two-byte float as they
// are: those that round at most once (a select, a sign, g·y, g/x, g/(2y)),
// which give what the rule computed in float32 and rounded once would, and
// those PyTorch 1.13's kernels compute op by op in the low type (SiLU,
// GELUTanh: their rules follow its order of ops, and match it bit for bit).
var oneRounding = map[backend.UnaryOp]bool{
	backend.SiLU: true, backend.GELUTanh: true,
	backend.Neg: true, backend.Abs: true, backend.Exp: true, backend.Log: true, backend.Sqrt: true,
	backend.ReLU: true, backend.Sign: true, backend.Floor: true, backend.Ceil: true, backend.Round: true,
	backend.Trunc: true, backend.Clamp: true, backend.LeakyReLU: true, backend.Hardsigmoid: true,
	backend.NanToNum: true,
}

// recordWhere records where(cond, a, b) = out.
func recordWhere(cond, a, b, out *Tensor) *Tensor {
	if !needsGrad(a, b) {
		return out
	}
	cd := cond.Detach()
	return selfTwice(record("WhereBackward0", out, []*Tensor{a, b}, []*Tensor{cd}, func(g *Tensor) []*Tensor {
		z := zeroLike(g)
		return []*Tensor{Where(cd, g, z), Where(cd, z, g)}
	}))
}

// --- reductions ---

// gradFnName is base+"0" for a full reduction and base+"1" with dims.
func reduceName(base string, opts []ReduceOption) string {
	o := reduceOpts{}
	for _, f := range opts {
		f(&o)
	}
	if o.dimsSet {
		return base + "1"
	}
	return base + "0"
}

// keepShape returns g reshaped to t's keepdim reduction shape.
func (t *Tensor) keepShaped(g *Tensor, opts []ReduceOption) *Tensor {
	_, _, keep := t.reduction("backward", opts)
	return g.Reshape(keep...)
}

func recordSum(t, out *Tensor, opts []ReduceOption) *Tensor {
	if !needsGrad(t) {
		return out
	}
	shape := t.shape.clone()
	return selfTwice(record(reduceName("SumBackward", opts), out, []*Tensor{t}, nil, func(g *Tensor) []*Tensor {
		_, _, keep := reductionOf(shape, opts)
		return []*Tensor{g.Reshape(keep...).Expand(shape...)}
	}))
}

// reductionOf is Tensor.reduction for a bare shape.
func reductionOf(shape Shape, opts []ReduceOption) (reduceOpts, []bool, Shape) {
	return (&Tensor{shape: shape}).reduction("backward", opts)
}

func recordMean(t, out *Tensor, opts []ReduceOption, n int) *Tensor {
	if !needsGrad(t) {
		return out
	}
	shape := t.shape.clone()
	return selfTwice(record(reduceName("MeanBackward", opts), out, []*Tensor{t}, nil, func(g *Tensor) []*Tensor {
		_, _, keep := reductionOf(shape, opts)
		return []*Tensor{g.Reshape(keep...).DivScalar(float64(n)).Expand(shape...)}
	}))
}

func recordProd(t, out *Tensor, opts []ReduceOption) *Tensor {
	if !needsGrad(t) {
		return out
	}
	xd, yd := t.Detach(), out.Detach()
	back := func(g, x, y *Tensor, safe bool) []*Tensor {
		// as PyTorch's prod_backward: g·prod/x where a slice has no
		// zero, the exclusive products where it has (prod/x is 0/0 there)
		gk := x.keepShaped(g, opts)
		hasZero := x.Detach().EqScalar(0).Any(append(append([]ReduceOption{}, opts...), KeepDim())...)
		div := x
		if safe { // twice: no 0/0 in the branch Where drops, whose gradient would be NaN
			div = Where(hasZero, Ones(Shape{}, On(x.dev), Dtype(x.dtype)), x)
		}
		quot := gk.Mul(x.keepShaped(y, opts)).Div(div)
		return []*Tensor{Where(hasZero, prodGrad(gk, x, opts), quot)}
	}
	// twice: t and the output (xd's and yd's storages)
	return recordTwice(reduceName("ProdBackward", opts), out, []*Tensor{t}, []*Tensor{xd, yd},
		func(g *Tensor) []*Tensor { return back(g, xd, yd, false) },
		func(g *Tensor) []*Tensor { return back(g, t, out, true) })
}

// prodGrad is dL/dx_i = g·Π_{j≠i} x_j over the reduced elements, taken
// as the product of the exclusive prefix and suffix products, so that it
// is exact where x holds zeros. gk has the keepdim shape.
func prodGrad(gk, x *Tensor, opts []ReduceOption) *Tensor {
	_, red, _ := x.reduction("backward", opts)
	var kept, redd []int
	r := 1
	for i, isRed := range red {
		if isRed {
			redd = append(redd, i)
			r *= x.shape[i]
		} else {
			kept = append(kept, i)
		}
	}
	if r == 0 {
		return Zeros(x.shape, On(x.dev), Dtype(x.dtype))
	}
	perm := append(append([]int{}, kept...), redd...)
	xp := x.permuteAll(perm)
	flat := append(xp.shape[:len(kept)].clone(), r)
	xf := xp.Reshape(flat...)
	last := len(kept)
	one := append(flat[:last].clone(), 1)
	ones := Ones(one, On(x.dev), Dtype(x.dtype))
	left := Cat([]*Tensor{ones, xf.Narrow(last, 0, r-1)}, last).Cumprod(last)
	right := Cat([]*Tensor{xf.Narrow(last, 1, r-1), ones}, last).Flip(last).Cumprod(last).Flip(last)
	gp := gk.permuteAll(perm).Reshape(one...)
	inv := make([]int, len(perm))
	for i, p := range perm {
		inv[p] = i
	}
	return left.Mul(right).Mul(gp).Reshape(xp.shape...).permuteAll(inv)
}

// recordMaxMin records amax/amin-style reductions: the gradient is shared
// evenly among tied extremes (MaxBackward1 for a full reduction, as
// torch.max(t); AmaxBackward0 with dims, as torch.amax).
func recordMaxMin(t, out *Tensor, opts []ReduceOption, isMax bool) *Tensor {
	if !needsGrad(t) {
		return out
	}
	name := "MaxBackward1"
	if !isMax {
		name = "MinBackward1"
	}
	o := reduceOpts{}
	for _, f := range opts {
		f(&o)
	}
	if o.dimsSet {
		name = map[bool]string{true: "AmaxBackward0", false: "AminBackward0"}[isMax]
	}
	xd, yd := t.Detach(), out.Detach()
	// linear in g with a piecewise-constant mask: differentiable as it is
	return selfTwice(record(name, out, []*Tensor{t}, []*Tensor{xd, yd}, func(g *Tensor) []*Tensor {
		yk := xd.keepShaped(yd, opts)
		eq := xd.Eq(yk)
		if !o.dimsSet && xd.dtype.IsFloat() {
			// torch.max(t)'s evenly_distribute_backward: a NaN result
			// is shared among the NaNs (amax's, with dims, is NaN)
			eq = eq.LogicalOr(xd.IsNaN().LogicalAnd(yk.IsNaN()))
		}
		mask := eq.Cast(xd.dtype)
		cnt := mask.Sum(append(append([]ReduceOption{}, opts...), KeepDim())...)
		return []*Tensor{xd.keepShaped(g, opts).Mul(mask).Div(cnt)}
	}))
}

// oneHot is the Bool mask, of idx's shape with dim d of size n inserted...
// idx has the keepdim shape (size 1 at d); the result has size n at d and is
// true where the position along d equals idx.
func oneHot(idx *Tensor, d, n int) *Tensor {
	ar := Arange(0, float64(n), 1, On(idx.dev))
	shape := make([]int, idx.Dim())
	for i := range shape {
		shape[i] = 1
	}
	shape[d] = n
	return ar.Reshape(shape...).Eq(idx)
}

// recordMaxDim records the values of torch.max(t, dim): the gradient goes to
// the index returned.
func recordMaxDim(t, values, indices *Tensor, dim int, keepdim bool, isMax bool) *Tensor {
	if !needsGrad(t) {
		return values
	}
	name := map[bool]string{true: "MaxBackward0", false: "MinBackward0"}[isMax]
	d := t.dim("max", dim)
	if t.Dim() == 0 {
		return selfTwice(record(name, values, []*Tensor{t}, nil, func(g *Tensor) []*Tensor { return []*Tensor{g} }))
	}
	n := t.shape[d]
	id := indices.Detach()
	shape := t.shape.clone()
	return selfTwice(record(name, values, []*Tensor{t}, []*Tensor{id}, func(g *Tensor) []*Tensor {
		keep := shape.clone()
		keep[d] = 1
		mask := oneHot(id.Reshape(keep...), d, n)
		return []*Tensor{Where(mask, g.Reshape(keep...), zeroLike(g))}
	}))
}

func recordVar(t, out *Tensor, opts []ReduceOption, std bool) *Tensor {
	if !needsGrad(t) {
		return out
	}
	o, _, _ := t.reduction("var", opts)
	n := float64(t.reducedCount(opts))
	div := math.Max(n-o.correction, 0)
	xd, yd := t.Detach(), out.Detach()
	name := "VarBackward0"
	if std {
		name = "StdBackward0"
	}
	back := func(g, xd, yd *Tensor) []*Tensor {
		keepOpts := append(append([]ReduceOption{}, opts...), KeepDim())
		dev := xd.Sub(xd.Mean(keepOpts...))
		gk := xd.keepShaped(g, opts)
		if std {
			// d std = d var / (2 std), and 0 where std is 0 (as PyTorch's
			// std_backward), not 0/0
			sk := xd.keepShaped(yd, opts)
			gk = WhereTensorScalar(sk.EqScalar(0).LogicalNot(), gk.Div(sk.MulScalar(2)), 0)
		}
		return []*Tensor{gk.Mul(dev).MulScalar(2 / div)}
	}
	return recordTwice(name, out, []*Tensor{t}, []*Tensor{xd, yd},
		func(g *Tensor) []*Tensor { return back(g, xd, yd) },
		func(g *Tensor) []*Tensor { return back(g, t, out) })
}

func recordSoftmax(t, out *Tensor, d int, log bool) *Tensor {
	if !needsGrad(t) {
		return out
	}
	yd := out.Detach()
	if log {
		back := func(g, y *Tensor) []*Tensor { return []*Tensor{g.Sub(y.Exp().Mul(g.Sum(Dims(d), KeepDim())))} }
		return recordTwice("LogSoftmaxBackward0", out, []*Tensor{t}, []*Tensor{yd},
			func(g *Tensor) []*Tensor { return back(g, yd) }, func(g *Tensor) []*Tensor { return back(g, out) })
	}
	back := func(g, y *Tensor) []*Tensor { return []*Tensor{y.Mul(g.Sub(g.Mul(y).Sum(Dims(d), KeepDim())))} }
	return recordTwice("SoftmaxBackward0", out, []*Tensor{t}, []*Tensor{yd},
		func(g *Tensor) []*Tensor { return back(g, yd) }, func(g *Tensor) []*Tensor { return back(g, out) })
}

// --- matmul ---

func recordMatMul(a, b, out *Tensor) *Tensor {
	if !needsGrad(a, b) {
		return out
	}
	name := "UnsafeViewBackward0"
	switch {
	case a.Dim() == 1 && b.Dim() == 1:
		name = "DotBackward0"
	case a.Dim() == 2 && b.Dim() == 1:
		name = "MvBackward0"
	case a.Dim() == 1 && b.Dim() == 2:
		name = "SqueezeBackward1"
	case a.Dim() == 2 && b.Dim() == 2:
		name = "MmBackward0"
	case a.Dim() == 3 && b.Dim() == 3 && a.shape[0] == b.shape[0]:
		name = "BmmBackward0"
	}
	ad, bd := a.Detach(), b.Detach()
	back := func(g, ad, bd *Tensor) []*Tensor {
		a2, b2 := ad, bd
		if a2.Dim() == 1 {
			a2 = a2.Unsqueeze(0)
		}
		if b2.Dim() == 1 {
			b2 = b2.Unsqueeze(1)
		}
		batch := BroadcastShapes("matmul", a2.shape[:a2.Dim()-2], b2.shape[:b2.Dim()-2])
		gs := append(batch.clone(), a2.shape[a2.Dim()-2], b2.shape[b2.Dim()-1])
		g2 := g.Reshape(gs...)
		ga := gradIf(a, func() *Tensor { return sumTo(g2.MatMul(b2.Transpose(-1, -2)), a2.shape).Reshape(ad.shape...) })
		gb := gradIf(b, func() *Tensor { return sumTo(a2.Transpose(-1, -2).MatMul(g2), b2.shape).Reshape(bd.shape...) })
		return []*Tensor{ga, gb}
	}
	// (both closures hold both operands, as the first-order one always has)
	return recordTwice(name, out, []*Tensor{a, b}, savedIf(bd, a, ad, b),
		func(g *Tensor) []*Tensor { return back(g, ad, bd) }, func(g *Tensor) []*Tensor { return back(g, a, b) })
}

// --- views ---

// recordSliceLike records a view op whose gradient is zeros with g written
// into the same view of them (Narrow, Slice, Select).
func recordSliceLike(t, out *Tensor, name string, same func(z *Tensor) *Tensor) *Tensor {
	if !needsGrad(t) {
		return out
	}
	shape, dt, dev := t.shape.clone(), t.dtype, t.dev
	return selfTwice(record(name, out, []*Tensor{t}, nil, func(g *Tensor) []*Tensor {
		z := Zeros(shape, On(dev), Dtype(dt))
		same(z).CopyFrom(g)
		return []*Tensor{z}
	}))
}

func recordCat(ts []*Tensor, out *Tensor, d int) *Tensor {
	if !needsGrad(ts...) {
		return out
	}
	sizes := make([]int, len(ts))
	for i, t := range ts {
		sizes[i] = t.shape[d]
	}
	return selfTwice(record("CatBackward0", out, ts, nil, func(g *Tensor) []*Tensor {
		gs := make([]*Tensor, len(sizes))
		at := 0
		for i, n := range sizes {
			gs[i] = g.Narrow(d, at, n)
			at += n
		}
		return gs
	}))
}

// reluGradFused is ReLU's gradient (zero where the output y is zero) in
// one pass on a backend's ReLUGrader, for floating g and y of one dtype and
// shape when no graph of the gradient is wanted; nil otherwise.
func reluGradFused(g, y *Tensor) *Tensor {
	if !g.dtype.IsFloat() || g.dtype != y.dtype || !g.shape.Equal(y.shape) || g.dev != y.dev || needsGrad(g, y) {
		return nil
	}
	rg, ok := y.be().(backend.ReLUGrader)
	if !ok {
		return nil
	}
	d := empty(y.shape, y.dtype, y.dev)
	if !rg.ReLUGrad(d.view(), g.view(), y.view()) {
		d.Release()
		return nil
	}
	return d
}
