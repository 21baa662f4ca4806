package ember

import (
	"fmt"

	"github.com/emberml/ember/backend"
)

// Indexing ops: Gather, Scatter, ScatterAdd, IndexSelect, IndexAdd,
// MaskedFill, the scalar forms of Where and OneHot, on the backends'
// Gather and Scatter kernels. Index tensors are Int64, as PyTorch requires;
// an index outside its dimension panics with an *IndexError: at once on
// the CPU, at the next read from the device on CUDA (a deferred check,
// checks.go; the kernels skip such indices meanwhile); on meta it is
// skipped.

// needIndex panics unless index is an Int64 tensor on t's device.
func needIndex(op string, t, index *Tensor) {
	t.live(op)
	index.live(op)
	sameDevice(op, t, index)
	if index.dtype != Int64 {
		panic(&DTypeError{Op: op, DTypes: []DType{index.dtype}, Msg: fmt.Sprintf("%s(): Expected dtype int64 for index", op)})
	}
}

// checkRange panics with an *IndexError unless every value of index lies
// in [0, size).
func checkRange(op string, index *Tensor, dim, size int) {
	if index.NumElements() == 0 || index.dev.Type == backend.MetaType {
		return
	}
	x := index.Detach()
	bad := func() *Tensor {
		return x.LtScalar(0).LogicalOr(x.Ge(Full(Shape{}, float64(size), On(x.dev), Dtype(Int64)))).Any()
	}
	checkValues(x.dev, bad, func() error {
		if x.st.released.Load() { // released (by a Scope) before the check was read
			return &IndexError{Op: op, Index: -1, Dim: dim, Size: size}
		}
		mm := Cat([]*Tensor{x.Min().Reshape(1), x.Max().Reshape(1)}, 0).Int64s()
		if mm[0] < 0 {
			return &IndexError{Op: op, Index: mm[0], Dim: dim, Size: size}
		}
		return &IndexError{Op: op, Index: mm[1], Dim: dim, Size: size}
	})
}

func withSize(s Shape, d, n int) Shape {
	s = s.clone()
	s[d] = n
	return s
}

// viewAs is t's view with shape replaced (the strides kept): a narrowing
// of t to a smaller shape, as gather and scatter read their operands.
func (t *Tensor) viewAs(shape Shape) backend.View {
	v := t.view()
	v.Shape = shape
	return v
}

// gatherInto runs the backend's Gather into a new tensor of index's shape.
func gatherRaw(t *Tensor, d int, index *Tensor, idx backend.View, shape Shape) *Tensor {
	out := empty(shape, t.dtype, t.dev)
	if out.NumElements() > 0 {
		out.be().Gather(out.view(), t.viewAs(withSize(shape, d, t.shape[d])), idx, d)
	}
	return out
}

// Gather returns out[p] = t[p with dim replaced by index[p]], as
// torch.gather: index (Int64) has t's rank, its sizes are at most t's
// except along dim, and out has index's shape. Its gradient scatter-adds
// into t (GatherBackward0).
func (t *Tensor) Gather(dim int, index *Tensor) *Tensor {
	const name = "gather"
	needIndex(name, t, index)
	if t.Dim() == 0 && index.Dim() == 0 {
		return t.Reshape(1).Gather(0, index.Reshape(1)).Reshape()
	}
	d := t.dim(name, dim)
	if index.Dim() != t.Dim() {
		shapeErr(name, "Index tensor must have the same number of dimensions as input tensor", t.shape, index.shape)
	}
	for i := range t.shape {
		if i != d && index.shape[i] > t.shape[i] {
			shapeErr(name, fmt.Sprintf("Size does not match at dimension %d expected index %v to be smaller than self %v apart from dimension %d", i, index.shape, t.shape, d), t.shape, index.shape)
		}
	}
	checkRange(name, index, d, t.shape[d])
	out := gatherRaw(t, d, index, index.view(), index.shape)
	ix := index.Detach()
	return recordTwice("GatherBackward0", out, []*Tensor{t}, []*Tensor{ix}, func(g *Tensor) []*Tensor {
		z := Zeros(t.shape, On(g.dev), Dtype(g.dtype))
		scatterRaw(z, d, ix.view(), g.view(), true)
		return []*Tensor{z}
	}, func(g *Tensor) []*Tensor {
		return []*Tensor{Zeros(t.shape, On(g.dev), Dtype(g.dtype)).ScatterAdd(d, ix, g)}
	})
}

func scatterRaw(dst *Tensor, d int, idx, src backend.View, acc bool) {
	if idx.NumElements() > 0 {
		dst.be().Scatter(dst.view(), idx, src, d, acc)
	}
}

// scatterCheck checks torch.scatter's shape rules and returns the dim.
func (t *Tensor) scatterCheck(name string, dim int, index, src *Tensor) int {
	needIndex(name, t, index)
	src.live(name)
	sameDevice(name, t, index, src)
	if src.dtype != t.dtype {
		panic(&DTypeError{Op: name, DTypes: []DType{t.dtype, src.dtype}, Msg: name + "(): Expected self.dtype to be equal to src.dtype"})
	}
	d := t.dim(name, dim)
	if index.Dim() != t.Dim() || src.Dim() != t.Dim() {
		shapeErr(name, "Index tensor must have the same number of dimensions as self tensor", t.shape, index.shape, src.shape)
	}
	for i := range t.shape {
		if index.shape[i] > src.shape[i] || (i != d && index.shape[i] > t.shape[i]) {
			shapeErr(name, fmt.Sprintf("Expected index %v to be smaller than self %v apart from dimension %d and to be smaller size than src %v", index.shape, t.shape, d, src.shape), t.shape, index.shape, src.shape)
		}
	}
	checkRange(name, index, d, t.shape[d])
	return d
}

func (t *Tensor) scatter(name, gradFn string, dim int, index, src *Tensor, acc bool) *Tensor {
	if t.Dim() == 0 {
		return t.Reshape(1).scatter(name, gradFn, 0, index.Reshape(1), src.Reshape(1), acc).Reshape()
	}
	d := t.scatterCheck(name, dim, index, src)
	out := t.Detach().Clone()
	scatterRaw(out, d, index.view(), src.viewAs(index.shape), acc)
	ix := index.Detach()
	return record(gradFn, out, []*Tensor{t, src}, []*Tensor{ix}, func(g *Tensor) []*Tensor {
		gs := g
		if !acc && t.RequiresGrad() {
			gs = g.Clone()
			z := zeroLike(g)
			scatterRaw(gs, d, ix.view(), z.expandView(ix.shape), false)
		}
		var gsrc *Tensor
		if src.RequiresGrad() {
			gsrc = gatherRaw(g, d, ix, ix.view(), ix.shape)
			if !ix.shape.Equal(src.shape) {
				full := Zeros(src.shape, On(g.dev), Dtype(g.dtype))
				full.be().Copy(full.viewAs(ix.shape), gsrc.view())
				gsrc = full
			}
		}
		return []*Tensor{gs, gsrc}
	})
}

// Scatter returns a copy of t with src[p] written at [p with dim replaced
// by index[p]] for every p of index's shape, as torch.scatter(t, dim,
// index, src). Where index repeats a position, which write wins is
// unspecified (as in PyTorch). Gradients: ScatterBackward0.
func (t *Tensor) Scatter(dim int, index, src *Tensor) *Tensor {
	t.nonNil("scatter")
	return t.scatter("scatter", "ScatterBackward0", dim, index, src, false)
}

// ScatterAdd returns a copy of t with src[p] added at [p with dim replaced
// by index[p]], as torch.scatter_add (ScatterAddBackward0). On CUDA the
// additions are atomic, so float sums may differ in their last bits from
// run to run, as in PyTorch.
func (t *Tensor) ScatterAdd(dim int, index, src *Tensor) *Tensor {
	t.nonNil("scatter_add")
	return t.scatter("scatter_add", "ScatterAddBackward0", dim, index, src, true)
}

// lineIndex checks a 1-D (or 0-D) index and returns it as a view of shape
// with stride 0 everywhere but dim.
func lineIndex(index *Tensor, d int, shape Shape) backend.View {
	st := make([]int, len(shape))
	if index.Dim() == 1 {
		st[d] = index.strides[0]
	}
	return backend.View{S: index.st.s, Shape: shape, Strides: st, Offset: index.offset}
}

// IndexSelect returns the entries of t at the positions index (a 1-D
// Int64 tensor) along dim, as torch.index_select: dim gets index's length.
// Its gradient index-adds into t (IndexSelectBackward0).
func (t *Tensor) IndexSelect(dim int, index *Tensor) *Tensor {
	const name = "index_select"
	needIndex(name, t, index)
	if index.Dim() > 1 {
		shapeErr(name, "index_select(): Index is supposed to be a vector", index.shape)
	}
	if t.Dim() == 0 {
		return t.Reshape(1).IndexSelect(0, index).Reshape()
	}
	d := t.dim(name, dim)
	checkRange(name, index, d, t.shape[d])
	return indexSelect("IndexSelectBackward0", t, d, index.Detach())
}

// indexSelect is IndexSelect of a checked 1-D index along dim d, recorded
// as name: one Gather, and an index-add of the gradient back (repeated
// indices accumulate).
func indexSelect(name string, t *Tensor, d int, index *Tensor) *Tensor {
	shape := withSize(t.shape, d, index.NumElements())
	out := gatherRaw(t, d, index, lineIndex(index, d, shape), shape)
	in := t.shape.clone()
	return recordTwice(name, out, []*Tensor{t}, []*Tensor{index}, func(g *Tensor) []*Tensor {
		z := Zeros(in, On(g.dev), Dtype(g.dtype))
		scatterRaw(z, d, lineIndex(index, d, g.shape), g.view(), true)
		return []*Tensor{z}
	}, func(g *Tensor) []*Tensor {
		return []*Tensor{Zeros(in, On(g.dev), Dtype(g.dtype)).IndexAdd(d, index.Reshape(-1), g)}
	})
}

// IndexAdd returns a copy of t with src's slices along dim added at the
// positions index (1-D Int64, of src's size along dim), as
// torch.index_add: src has t's shape but along dim. Repeated indices
// accumulate. Gradients: IndexAddBackward0.
func (t *Tensor) IndexAdd(dim int, index, src *Tensor) *Tensor {
	const name = "index_add"
	needIndex(name, t, index)
	src.live(name)
	sameDevice(name, t, index, src)
	if src.dtype != t.dtype {
		panic(&DTypeError{Op: name, DTypes: []DType{t.dtype, src.dtype}, Msg: "index_add_(): self and source expected to have the same dtype"})
	}
	if index.Dim() > 1 {
		shapeErr(name, "index_add_(): Index is supposed to be a vector", index.shape)
	}
	if t.Dim() == 0 {
		return t.Reshape(1).IndexAdd(0, index, src.Reshape(1)).Reshape()
	}
	d := t.dim(name, dim)
	n := index.NumElements()
	if !src.shape.Equal(withSize(t.shape, d, n)) {
		shapeErr(name, fmt.Sprintf("index_add_(): source must have self's shape except along dim %d, which must be the number of indices (%d)", d, n), t.shape, index.shape, src.shape)
	}
	checkRange(name, index, d, t.shape[d])
	out := t.Detach().Clone()
	scatterRaw(out, d, lineIndex(index, d, src.shape), src.view(), true)
	ix := index.Detach()
	return record("IndexAddBackward0", out, []*Tensor{t, src}, []*Tensor{ix}, func(g *Tensor) []*Tensor {
		return []*Tensor{g, when(src.RequiresGrad(), func() *Tensor {
			return gatherRaw(g, d, ix, lineIndex(ix, d, src.shape), src.shape)
		})}
	})
}

// MaskedFill returns t with v where mask (Bool, broadcasting with t) is
// true, as torch.masked_fill; the result has the broadcast shape and t's
// dtype. Gradients: MaskedFillBackward0.
func (t *Tensor) MaskedFill(mask *Tensor, v float64) *Tensor {
	const name = "masked_fill"
	t.live(name)
	mask.live(name)
	sameDevice(name, t, mask)
	if mask.dtype != Bool {
		panic(&DTypeError{Op: name, DTypes: []DType{mask.dtype}, Msg: "masked_fill_ only supports boolean masks"})
	}
	s := Full(Shape{}, v, On(t.dev), Dtype(t.dtype))
	md := mask.Detach()
	out := Where(md, s, t.Detach())
	return record("MaskedFillBackward0", out, []*Tensor{t}, []*Tensor{md}, func(g *Tensor) []*Tensor {
		return []*Tensor{Where(md, zeroLike(g), g)}
	})
}

// scalarOperand is v as a zero-dim tensor of the dtype PyTorch gives a
// Python number next to t: the category's default (Int64 for an integral
// v, else Float32) unless t's dtype is of that category or higher.
func scalarOperand(t *Tensor, v float64) *Tensor {
	sc := operand{dt: Int64, scalar: true}
	if v != float64(int64(v)) {
		sc.dt = Float32
	}
	return Full(Shape{}, v, On(t.dev), Dtype(resultType(opnd(t), sc)))
}

// WhereScalar is torch.where(cond, a, b) with a scalar a: a where cond is
// true, else b. The dtype follows PyTorch's rule for a Python number (an
// integral a next to a float b keeps b's dtype; a fractional a next to an
// integer b gives Float32).
func WhereScalar(cond *Tensor, a float64, b *Tensor) *Tensor {
	b.live("where")
	return Where(cond, scalarOperand(b, a), b)
}

// WhereTensorScalar is torch.where(cond, a, b) with a scalar b.
func WhereTensorScalar(cond, a *Tensor, b float64) *Tensor {
	a.live("where")
	return Where(cond, a, scalarOperand(a, b))
}

// WhereScalars is torch.where(cond, a, b) with two scalars, on cond's
// device: Int64 when both are integral, else Float32 (opts may set the
// dtype).
func WhereScalars(cond *Tensor, a, b float64, opts ...Option) *Tensor {
	cond.live("where")
	dt := Int64
	if a != float64(int64(a)) || b != float64(int64(b)) {
		dt = Float32
	}
	o := makeOptions(dt, opts)
	return Where(cond, Full(Shape{}, a, On(cond.dev), Dtype(o.dtype)), Full(Shape{}, b, On(cond.dev), Dtype(o.dtype)))
}

// OneHot returns the Int64 one-hot encoding of the Int64 indices t:
// t's shape plus a last dim of numClasses, 1 at each index, as
// torch.nn.functional.one_hot. numClasses -1 takes max(t)+1; other
// negatives are a *ValueError.
func OneHot(t *Tensor, numClasses int) *Tensor {
	const name = "one_hot"
	t.live(name)
	if t.dtype != Int64 {
		panic(&DTypeError{Op: name, DTypes: []DType{t.dtype}, Msg: "one_hot is only applicable to index tensor."})
	}
	if numClasses < -1 { // only -1 infers, as in PyTorch
		panic(&ValueError{Op: name, Msg: fmt.Sprintf("num_classes %d: want -1 (infer) or a class count", numClasses)})
	}
	if numClasses < 0 {
		if t.NumElements() == 0 {
			shapeErr(name, "Can not infer total number of classes from empty tensor.", t.shape)
		}
		m := t.Detach().Max().Int64s()[0]
		if m >= maxElems { // the classes dim would not fit (torch: not representable as a SymInt)
			shapeErr(name, fmt.Sprintf("the largest index %d gives more classes than a tensor can hold", m), t.shape)
		}
		numClasses = int(m) + 1
	}
	checkRange(name, t, t.Dim(), numClasses)
	shape := append(t.shape.clone(), numClasses)
	out := Zeros(shape, On(t.dev), Dtype(Int64))
	idx := t.Detach().Unsqueeze(t.Dim())
	one := Full(Shape{}, 1, On(t.dev), Dtype(Int64))
	scatterRaw(out, t.Dim(), idx.view(), one.expandView(idx.shape), false)
	return out
}
