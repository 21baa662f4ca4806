package ember

import (
	"fmt"
	"strings"
)

// Indexing ops PyTorch users reach for (take_along_dim, scatter_reduce,
// index_fill, index_copy, index_put, masked_scatter) and their in-place
// forms, composed of index.go's and indexing.go's ops.

// TakeAlongDim picks values of t along dim at indices, as
// torch.take_along_dim(t, indices, dim): t and indices (Int64, of t's rank)
// broadcast against each other except along dim, and the result is
// Gather(dim, indices) of the broadcast tensors. Without dim, both are
// flattened: t.Reshape(-1).Gather(0, indices.Reshape(-1)). Gradients flow
// to t through Gather (and the broadcast's sum).
func (t *Tensor) TakeAlongDim(indices *Tensor, dim ...int) *Tensor {
	const op = "take_along_dim"
	t.nonNil(op)
	indices.nonNil(op)
	sameDevice(op, t, indices)
	if indices.dtype != Int64 {
		panic(&DTypeError{Op: op, DTypes: []DType{indices.dtype}, Msg: fmt.Sprintf("torch.take_along_dim(): dtype of indices should be Long but got %s", torchTypeName(indices.dtype))})
	}
	if len(dim) > 1 {
		panic(&ValueError{Op: op, Msg: fmt.Sprintf("take_along_dim takes at most one dim, got %d", len(dim))})
	}
	if len(dim) == 0 {
		return t.Reshape(-1).Gather(0, indices.Reshape(-1))
	}
	if t.Dim() != indices.Dim() {
		shapeErr(op, fmt.Sprintf("torch.take_along_dim(): input and indices should have the same number of dimensions, but got %d dimensions for input, and %d dimensions for indices", t.Dim(), indices.Dim()), t.shape, indices.shape)
	}
	if t.Dim() == 0 {
		return t.Gather(0, indices)
	}
	d := t.dim(op, dim[0])
	is := BroadcastShapes(op, withSize(t.shape, d, indices.shape[d]), indices.shape)
	ts := BroadcastShapes(op, withSize(indices.shape, d, t.shape[d]), t.shape)
	return t.Expand(ts...).Gather(d, indices.Expand(is...))
}

// scatterReduces lists torch.scatter_reduce's reductions.
var scatterReduces = map[string]bool{"sum": true, "prod": true, "mean": true, "amax": true, "amin": true}

// ScatterReduce returns a copy of t with the values of src reduced into
// the positions [p with dim replaced by index[p]], as
// torch.scatter_reduce(t, dim, index, src, reduce, include_self): reduce
// is "sum", "prod", "mean", "amax" or "amin"; with includeSelf t's value
// takes part in the reduction, without it a position that receives values
// is the reduction of those alone (positions receiving none keep t's
// value). An integer mean rounds down. src has t's dtype; index (Int64)
// has t's rank and is no larger than src (nor than t except along dim).
// Gradients flow to t and src with PyTorch 1.13's formulas
// (ScatterReduceBackward0): amax and amin share the gradient evenly among
// the values equal to the result, prod divides by the value (with zeros
// handled exactly; a position receiving two zeros gets a zero gradient
// for them, where PyTorch refuses double backward).
func (t *Tensor) ScatterReduce(dim int, index, src *Tensor, reduce string, includeSelf bool) *Tensor {
	const name = "scatter_reduce"
	t.nonNil(name)
	index.nonNil(name)
	src.nonNil(name)
	if !scatterReduces[reduce] {
		panic(&ValueError{Op: name, Msg: fmt.Sprintf("reduce argument must be either sum, prod, mean, amax or amin, got %q.", reduce)})
	}
	if t.Dim() == 0 {
		return t.Reshape(1).ScatterReduce(0, index.Reshape(1), src.Reshape(1), reduce, includeSelf).Reshape()
	}
	d := t.scatterCheck(name, dim, index, src)
	if t.dtype == Bool && reduce == "mean" {
		panic(&DTypeError{Op: name, DTypes: []DType{Bool}, Msg: `"scatter_reduce" mean not implemented for 'Bool'`})
	}
	xd, ix, sd := t.Detach(), index.Detach(), src.Detach()
	out := scatterReduceRaw(xd, d, ix, sd, reduce, includeSelf)
	return record("ScatterReduceBackward0", out, []*Tensor{t, src}, []*Tensor{xd, ix, sd, out.Detach()}, func(g *Tensor) []*Tensor {
		gt, gs := scatterReduceGrad(g, xd, d, ix, sd, reduce, includeSelf, out.Detach())
		if gs != nil && !ix.shape.Equal(sd.shape) { // src larger than index: zero past it
			full := Zeros(sd.shape, On(g.dev), Dtype(g.dtype))
			full.be().Copy(full.viewAs(ix.shape), gs.Contiguous().view())
			gs = full
		}
		return []*Tensor{when(t.RequiresGrad(), func() *Tensor { return gt }), when(src.RequiresGrad(), func() *Tensor { return gs })}
	})
}

// srcPart is src narrowed to shape (the part an index of that shape reads).
func srcPart(src *Tensor, shape Shape) *Tensor {
	for i, n := range shape {
		if src.shape[i] != n {
			src = src.Narrow(i, 0, n)
		}
	}
	return src
}

// scatterTargets is the Int64 flat position in a contiguous tensor of shape
// that each element of index (along dim d) writes, flattened.
func scatterTargets(index *Tensor, d int, shape Shape) *Tensor {
	st := rowMajorStrides(shape)
	ids := index.MulScalar(float64(st[d]))
	for i, n := range index.shape {
		if i == d || n == 1 {
			continue
		}
		r := make([]int, index.Dim())
		for k := range r {
			r[k] = 1
		}
		r[i] = n
		ids = ids.Add(Arange(0, float64(n), 1, On(index.dev), Dtype(Int64)).MulScalar(float64(st[i])).Reshape(r...))
	}
	return ids.Reshape(-1)
}

// combine applies reduce's binary op (sum and mean add).
func combine(reduce string, a, b *Tensor) *Tensor {
	switch reduce {
	case "prod":
		return a.Mul(b)
	case "amax":
		return a.Maximum(b)
	case "amin":
		return a.Minimum(b)
	}
	return a.Add(b)
}

// scatterReduceRaw computes ScatterReduce's value without recording: it
// sorts the targets, reduces each run of equal targets by a segmented
// (Hillis–Steele) scan in ⌈log2 n⌉ steps of elementwise ops, and writes
// each run's last value (unique targets) into a copy of t. It works on
// every device and does not depend on the order of concurrent writes.
func scatterReduceRaw(t *Tensor, d int, index, src *Tensor, reduce string, includeSelf bool) *Tensor {
	n := index.NumElements()
	if isMeta(t) || n == 0 {
		return t.Clone()
	}
	ids := scatterTargets(index, d, t.shape)
	vals := srcPart(src, index.shape).Reshape(-1)
	ids, order := ids.Sort(0, false)
	vals = vals.Gather(0, order)
	var cnt *Tensor
	if reduce == "mean" {
		cnt = OnesLike(ids)
	}
	for k := 1; k < n; k *= 2 {
		same := ids.Narrow(0, k, n-k).Eq(ids.Narrow(0, 0, n-k))
		head := vals.Narrow(0, 0, k)
		tail := vals.Narrow(0, k, n-k)
		vals = Cat([]*Tensor{head, Where(same, combine(reduce, tail, vals.Narrow(0, 0, n-k)), tail)}, 0)
		if cnt != nil {
			ct := cnt.Narrow(0, k, n-k)
			cnt = Cat([]*Tensor{cnt.Narrow(0, 0, k), Where(same, ct.Add(cnt.Narrow(0, 0, n-k)), ct)}, 0)
		}
	}
	last := Cat([]*Tensor{ids.Narrow(0, 0, n-1).Ne(ids.Narrow(0, 1, n-1)), Full(Shape{1}, 1, On(ids.dev), Dtype(Bool))}, 0)
	uid := ids.MaskedSelect(last)
	uval := vals.MaskedSelect(last)
	flat := t.Contiguous().Reshape(-1)
	if includeSelf {
		uval = combine(reduce, flat.Gather(0, uid), uval)
	}
	if cnt != nil {
		c := cnt.MaskedSelect(last)
		if includeSelf {
			c = c.AddScalar(1)
		}
		if uval.dtype.IsFloat() {
			uval = uval.Div(c.Cast(uval.dtype))
		} else {
			uval = uval.FloorDivide(c.Cast(uval.dtype))
		}
	}
	return flat.Scatter(0, uid, uval.Cast(t.dtype)).Reshape(t.shape...)
}

// scatterReduceGrad is PyTorch 1.13's scatter_reduce_backward (index
// shaped gradient for src).
func scatterReduceGrad(g, self *Tensor, d int, index, src *Tensor, reduce string, includeSelf bool, result *Tensor) (gself, gsrc *Tensor) {
	src = srcPart(src, index.shape)
	switch reduce {
	case "sum":
		gself, gsrc = g, g.Gather(d, index)
	case "mean":
		n := ZerosLike(g)
		if includeSelf {
			n = OnesLike(g)
		}
		n = n.ScatterAdd(d, index, OnesLike(src).Cast(g.dtype))
		n = n.MaskedFill(n.EqScalar(0), 1)
		gself, gsrc = g.Div(n), g.Gather(d, index).Div(n.Gather(d, index))
	case "amax", "amin":
		value := result.Gather(d, index)
		selfIs := self.Eq(result).Cast(g.dtype)
		srcIs := src.Eq(value).Cast(g.dtype)
		share := g.Div(selfIs.ScatterAdd(d, index, srcIs))
		gself, gsrc = selfIs.Mul(share), srcIs.Mul(share.Gather(d, index))
	case "prod":
		one := zeroLike(self).AddScalar(1)
		mself := Where(self.EqScalar(0), one, self)
		gself = g.Mul(scatterReduceRaw(mself, d, index, src, reduce, includeSelf)).Div(mself)
		srcZero := src.EqScalar(0)
		zeros := ZerosLike(self).ScatterAdd(d, index, srcZero.Cast(self.dtype)).Gather(d, index)
		single := srcZero.LogicalAnd(zeros.EqScalar(1))
		msrc := Where(single, one, src)
		mres := scatterReduceRaw(self, d, index, msrc, reduce, includeSelf)
		gsrc = Where(single, g.Mul(mres).Gather(d, index), g.Mul(result).Gather(d, index).Div(Where(srcZero, one, src)))
	}
	if !includeSelf {
		gself = gself.Scatter(d, index, Zeros(index.shape, On(g.dev), Dtype(g.dtype)))
	}
	return gself, gsrc
}

// indexPositions checks a 1-D (or 0-D) Int64 index along dim d of t for
// op and returns it with negative entries wrapped (index_fill accepts
// -size..size-1, as PyTorch's).
func indexPositions(op string, t, index *Tensor, d int, negative bool) *Tensor {
	if index.dtype != Int64 {
		msg := fmt.Sprintf("%s_(): Expected dtype int64 for index.", op)
		if op == "index_copy" {
			msg = fmt.Sprintf("index_copy_(): Expected a long tensor for index, but got %s", torchTypeName(index.dtype))
		}
		panic(&DTypeError{Op: op, DTypes: []DType{index.dtype}, Msg: msg})
	}
	if index.Dim() > 1 {
		shapeErr(op, op+"(): Index is supposed to be a vector", index.shape)
	}
	ix := index.Detach().Reshape(-1)
	if negative {
		return wrapIndices(op, ix, d, t.shape[d])
	}
	checkRange(op, ix, d, t.shape[d])
	return ix
}

// wrapIndices checks that the Int64 ix lies in [-size, size) along dim d
// (an *IndexError naming the first offending extreme otherwise) and
// returns it with negative entries counted from the end.
func wrapIndices(op string, ix *Tensor, d, size int) *Tensor {
	if ix.NumElements() == 0 || isMeta(ix) {
		return ix
	}
	n := Full(Shape{}, float64(size), On(ix.dev), Dtype(Int64))
	checkValues(ix.dev, func() *Tensor {
		return ix.Lt(n.Neg()).LogicalOr(ix.Ge(n)).Any()
	}, func() error {
		mm := Cat([]*Tensor{ix.Min().Reshape(1), ix.Max().Reshape(1)}, 0).Int64s()
		if mm[0] < int64(-size) {
			return &IndexError{Op: op, Index: mm[0], Dim: d, Size: size}
		}
		return &IndexError{Op: op, Index: mm[1], Dim: d, Size: size}
	})
	return Where(ix.LtScalar(0), ix.Add(n), ix)
}

// IndexFill returns a copy of t with value written at the positions index
// (1-D Int64, negative counting from the end) along dim, as
// torch.index_fill. Gradients: IndexFillBackward0 (zero at the filled
// positions).
func (t *Tensor) IndexFill(dim int, index *Tensor, value float64) *Tensor {
	const op = "index_fill"
	t.nonNil(op)
	index.nonNil(op)
	sameDevice(op, t, index)
	if t.Dim() == 0 {
		return t.Reshape(1).IndexFill(0, index, value).Reshape()
	}
	d := t.dim(op, dim)
	ix := indexPositions(op, t, index, d, true)
	shape := make(Shape, t.Dim())
	for i := range shape {
		shape[i] = 1
	}
	shape[d] = t.shape[d]
	mask := Zeros(Shape{t.shape[d]}, On(t.dev), Dtype(Bool))
	if ix.NumElements() > 0 && !isMeta(t) {
		mask = mask.Scatter(0, ix, Full(ix.shape, 1, On(t.dev), Dtype(Bool)))
	}
	return rename(t.MaskedFill(mask.Reshape(shape...), value), "IndexFillBackward0")
}

// IndexCopy returns a copy of t with source's slices along dim written at
// the positions index (1-D Int64 of source's size along dim), as
// torch.index_copy: source has t's shape but along dim and t's dtype
// (or, for a 1-D t and one index, is 0-dim).
// Where index repeats a position, which slice wins is unspecified (as in
// PyTorch). Gradients: IndexCopyBackward0.
func (t *Tensor) IndexCopy(dim int, index, source *Tensor) *Tensor {
	const op = "index_copy"
	t.nonNil(op)
	index.nonNil(op)
	source.nonNil(op)
	sameDevice(op, t, index, source)
	if source.dtype != t.dtype {
		panic(&DTypeError{Op: op, DTypes: []DType{t.dtype, source.dtype}, Msg: fmt.Sprintf("index_copy_(): self and source expected to have the same dtype, but got (self) %s and (source) %s", torchTypeName(t.dtype), torchTypeName(source.dtype))})
	}
	if t.Dim() == 0 {
		return t.Reshape(1).IndexCopy(0, index, source.Reshape(1)).Reshape()
	}
	d := t.dim(op, dim)
	ix := indexPositions(op, t, index, d, false)
	n := ix.NumElements()
	if source.Dim() == 0 && t.Dim() == 1 { // PyTorch's scalar source: one index
		if n != 1 {
			shapeErr(op, fmt.Sprintf("index_copy_(): When source is scalar, index should have one element (got %d)", n), t.shape, index.shape, source.shape)
		}
		source = source.Reshape(1)
	}
	if source.Dim() != t.Dim() || !withSize(source.shape, d, 1).Equal(withSize(t.shape, d, 1)) {
		shapeErr(op, fmt.Sprintf("index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: %v at dimension %d and source slice shape: %v at dimension %d.", sliceShape(t.shape, d), d, sliceShape(source.shape, d), d), t.shape, index.shape, source.shape)
	}
	if source.shape[d] != n {
		shapeErr(op, fmt.Sprintf("index_copy_(): Number of indices (%d) should be equal to source.size(dim) (%d)", n, source.shape[d]), t.shape, index.shape, source.shape)
	}
	out := t.Detach().Clone()
	scatterRaw(out, d, lineIndex(ix, d, source.shape), source.Detach().view(), false)
	return record("IndexCopyBackward0", out, []*Tensor{t, source}, []*Tensor{ix}, func(g *Tensor) []*Tensor {
		return []*Tensor{
			when(t.RequiresGrad(), func() *Tensor { return g.IndexFill(d, ix, 0) }),
			when(source.RequiresGrad(), func() *Tensor { return gatherRaw(g, d, ix, lineIndex(ix, d, source.shape), source.shape) }),
		}
	})
}

// expandsTo reports whether shape s broadcasts (expands) to target.
func expandsTo(s, target Shape) bool {
	if len(s) > len(target) {
		return false
	}
	for i := range s {
		if n := target[len(target)-len(s)+i]; s[i] != 1 && s[i] != n {
			return false
		}
	}
	return true
}

// sliceShape is shape without dim d, as PyTorch prints a slice's shape
// ("3" for [2, 3] at dim 0).
func sliceShape(s Shape, d int) string {
	var parts []string
	for i, n := range s {
		if i != d {
			parts = append(parts, fmt.Sprint(n))
		}
	}
	if len(parts) == 0 {
		return "[]"
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// IndexPut returns a copy of t with values written at t[indices...], as
// torch.index_put(t, indices, values, accumulate): indices are Int64
// tensors broadcast together (negative counting from the end) indexing t's
// leading dims, or a single Bool mask over them, as IndexWith reads them;
// values broadcast to the indexed shape. With accumulate, values add into
// t (repeated positions accumulate); without, which of repeated positions'
// values wins is unspecified (as in PyTorch). values has t's dtype.
// Gradients: IndexPutBackward0.
func (t *Tensor) IndexPut(indices []*Tensor, values *Tensor, accumulate bool) *Tensor {
	const op = "index_put"
	t.nonNil(op)
	values.nonNil(op)
	sameDevice(op, t, values)
	if values.dtype != t.dtype {
		panic(&DTypeError{Op: op, DTypes: []DType{t.dtype, values.dtype}, Msg: fmt.Sprintf("Index put requires the source and destination dtypes match, got %s for the destination and %s for the source.", torchTypeName(t.dtype), torchTypeName(values.dtype))})
	}
	if len(indices) == 0 {
		shapeErr(op, "index_put: expected at least one index tensor", t.shape)
	}
	for _, ix := range indices {
		ix.nonNil(op)
		sameDevice(op, t, ix)
		if ix.dtype != Int64 && ix.dtype != Bool {
			panic(&DTypeError{Op: op, DTypes: []DType{ix.dtype}, Msg: "tensors used as indices must be long, byte or bool tensors"})
		}
	}
	if len(indices) > 1 {
		for _, ix := range indices {
			if ix.dtype == Bool {
				panic(&DTypeError{Op: op, DTypes: []DType{Bool}, Msg: "index_put: a Bool mask must be the only index tensor"})
			}
		}
	}
	if len(indices) > t.Dim() {
		shapeErr(op, fmt.Sprintf("too many indices for tensor of dimension %d", t.Dim()), t.shape)
	}
	// the flat positions, as IndexWith reads them, over t's leading dims
	k := len(indices)
	if indices[0].dtype == Bool {
		k = indices[0].Dim()
		if k > t.Dim() || !indices[0].shape.Equal(t.shape[:k]) {
			shapeErr(op, fmt.Sprintf("The shape of the mask %v does not match the shape of the indexed tensor %v", indices[0].shape, t.shape), indices[0].shape, t.shape)
		}
	}
	if isMeta(t) { // the positions are data (a mask's count, the checks)
		return Empty(t.shape, On(t.dev), Dtype(t.dtype))
	}
	lead := 1
	for _, n := range t.shape[:k] {
		lead *= n
	}
	rest := t.shape[k:]
	var pos *Tensor
	if indices[0].dtype == Bool {
		pos = Arange(0, float64(lead), 1, On(t.dev), Dtype(Int64)).Reshape(t.shape[:k]...).IndexWith(indices...)
	} else {
		// Σ index_i·stride_i on the device, broadcast (a hostile
		// broadcast shape is a typed out-of-memory error there, not a
		// host allocation)
		shapes := make([]Shape, k)
		for i, ix := range indices {
			shapes[i] = ix.shape
		}
		bshape := BroadcastShapes(op, shapes...)
		st := rowMajorStrides(t.shape[:k])
		pos = Zeros(bshape, On(t.dev), Dtype(Int64))
		for i, ix := range indices {
			w := ix.Detach()
			pos = pos.Add(wrapIndices(op, w, i, t.shape[i]).MulScalar(float64(st[i])))
		}
	}
	target := append(pos.shape.clone(), rest...)
	if !expandsTo(values.shape, target) {
		shapeErr(op, fmt.Sprintf("shape mismatch: value tensor of shape %v cannot be broadcast to indexing result of shape %v", values.shape, target), values.shape, target)
	}
	v := values.Expand(target...)
	flat := t.Reshape(append(Shape{lead}, rest...)...)
	p := pos.Reshape(-1)
	v = v.Reshape(append(Shape{p.NumElements()}, rest...)...)
	var out *Tensor
	if accumulate {
		out = flat.IndexAdd(0, p, v)
	} else {
		out = flat.IndexCopy(0, p, v)
	}
	return rename(out.Reshape(t.shape...), "IndexPutBackward0")
}

// MaskedScatter returns a copy of t (broadcast with mask) with the first
// elements of source written, in row-major order, where the Bool mask is
// true, as torch.masked_scatter; source needs at least as many elements
// as mask has true values. Gradients: MaskedScatterBackward0.
func (t *Tensor) MaskedScatter(mask, source *Tensor) *Tensor {
	const op = "masked_scatter"
	t.nonNil(op)
	mask.nonNil(op)
	source.nonNil(op)
	sameDevice(op, t, mask, source)
	if mask.dtype != Bool {
		panic(&DTypeError{Op: op, DTypes: []DType{mask.dtype}, Msg: "masked_scatter_ only supports boolean masks, but got mask with dtype " + torchTypeName(mask.dtype)})
	}
	if source.dtype != t.dtype {
		panic(&DTypeError{Op: op, DTypes: []DType{t.dtype, source.dtype}, Msg: fmt.Sprintf("masked_scatter: expected self and source to have same dtypes but got %s and %s", torchTypeName(t.dtype), torchTypeName(source.dtype))})
	}
	bshape := BroadcastShapes(op, t.shape, mask.shape)
	tb := t.Expand(bshape...)
	if isMeta(t) {
		return Empty(bshape, On(t.dev), Dtype(t.dtype))
	}
	pos := truePositions(mask.Expand(bshape...).Bools())
	if len(pos) > source.NumElements() {
		panic(&ValueError{Op: op, Msg: "Number of elements of source < number of ones in mask"})
	}
	p := FromSlice(pos, Shape{len(pos)}, On(t.dev))
	src := source.Reshape(-1).Narrow(0, 0, len(pos))
	out := tb.Reshape(-1).IndexCopy(0, p, src).Reshape(bshape...)
	return rename(out, "MaskedScatterBackward0")
}

// inPlaceWith writes f(t) (of t's shape) into t as the in-place form of op
// (PyTorch's trailing-underscore method), following inplace.go's rules:
// recorded in a graph (t takes the result's grad_fn, a leaf requiring grad
// is refused), else written with a version bump.
func (t *Tensor) inPlaceWith(op string, operands []*Tensor, f func(x *Tensor) *Tensor) *Tensor {
	t.nonNil(op)
	for _, o := range operands {
		o.nonNil(op)
	}
	t.checkWrite(op)
	rec := t.inPlace(op, operands...)
	var r *Tensor
	if rec {
		r = f(t.old(true))
	} else {
		r = f(t.Detach())
	}
	if !r.shape.Equal(t.shape) {
		shapeErr(op, "output with shape "+t.shape.String()+" doesn't match the broadcast shape "+r.shape.String(), t.shape, r.shape)
	}
	if rec {
		return t.adopt(r)
	}
	return t.storeInPlace(op, r, operands, nil)
}

// IndexFillInPlace is IndexFill written into t (t.index_fill_); returns t.
func (t *Tensor) IndexFillInPlace(dim int, index *Tensor, value float64) *Tensor {
	return t.inPlaceWith("index_fill_", []*Tensor{index}, func(x *Tensor) *Tensor { return x.IndexFill(dim, index, value) })
}

// IndexCopyInPlace is IndexCopy written into t (t.index_copy_); returns t.
func (t *Tensor) IndexCopyInPlace(dim int, index, source *Tensor) *Tensor {
	return t.inPlaceWith("index_copy_", []*Tensor{index, source}, func(x *Tensor) *Tensor { return x.IndexCopy(dim, index, source) })
}

// IndexPutInPlace is IndexPut written into t (t.index_put_); returns t.
func (t *Tensor) IndexPutInPlace(indices []*Tensor, values *Tensor, accumulate bool) *Tensor {
	return t.inPlaceWith("index_put_", append([]*Tensor{values}, indices...), func(x *Tensor) *Tensor { return x.IndexPut(indices, values, accumulate) })
}

// MaskedScatterInPlace is MaskedScatter written into t
// (t.masked_scatter_; mask broadcasts to t's shape); returns t.
func (t *Tensor) MaskedScatterInPlace(mask, source *Tensor) *Tensor {
	return t.inPlaceWith("masked_scatter_", []*Tensor{mask, source}, func(x *Tensor) *Tensor { return x.MaskedScatter(mask, source) })
}

// ScatterReduceInPlace is ScatterReduce written into t
// (t.scatter_reduce_); returns t.
func (t *Tensor) ScatterReduceInPlace(dim int, index, src *Tensor, reduce string, includeSelf bool) *Tensor {
	return t.inPlaceWith("scatter_reduce_", []*Tensor{index, src}, func(x *Tensor) *Tensor { return x.ScatterReduce(dim, index, src, reduce, includeSelf) })
}
