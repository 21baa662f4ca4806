package ember

import (
	"fmt"
	"math"
)

// Shape and stacking ops a PyTorch user reaches for: movedim, swapaxes,
// expand_as, broadcast_to, broadcast_tensors, unflatten, the h/v/d/column
// stacks and splits, tensor_split, atleast_nd, ravel, fliplr/flipud and
// tile. Each is composed from the views and Cat, so every device and
// autograd come with them.

// Movedim moves t's dims source[i] to positions destination[i], the others
// keeping their order in the remaining places, as torch.movedim(t, source,
// destination) (a single dim is a one-element slice). It is a view
// (PermuteBackward0).
func (t *Tensor) Movedim(source, destination []int) *Tensor {
	const op = "movedim"
	t.live(op)
	if len(source) != len(destination) {
		shapeErr(op, fmt.Sprintf("Invalid source or destination dims: source (%v dims) should contain the same number of dims as destination (%v dims)", fmtInts(source), fmtInts(destination)), t.shape)
	}
	nd := t.Dim()
	src, dst := make([]int, len(source)), make([]int, len(destination))
	for i := range source {
		src[i] = wrapDim(op, source[i], nd, t.shape)
		dst[i] = wrapDim(op, destination[i], nd, t.shape)
	}
	for _, c := range []struct {
		name string
		ds   []int
	}{{"source", src}, {"destination", dst}} {
		seen := map[int]bool{}
		for _, d := range c.ds {
			if seen[d] {
				shapeErr(op, fmt.Sprintf("repeated dim in `%s` (%v)", c.name, fmtInts(map[string][]int{"source": source, "destination": destination}[c.name])), t.shape)
			}
			seen[d] = true
		}
	}
	if nd == 0 {
		return t.Permute()
	}
	perm := make([]int, nd)
	for i := range perm {
		perm[i] = -1
	}
	used := make([]bool, nd)
	for i := range src {
		perm[dst[i]] = src[i]
		used[src[i]] = true
	}
	next := 0
	for i := range perm {
		if perm[i] >= 0 {
			continue
		}
		for used[next] {
			next++
		}
		perm[i] = next
		used[next] = true
	}
	return t.Permute(perm...)
}

// Moveaxis is torch.moveaxis, an alias of Movedim.
func (t *Tensor) Moveaxis(source, destination []int) *Tensor { return t.Movedim(source, destination) }

// Swapaxes is torch.swapaxes, an alias of Transpose.
func (t *Tensor) Swapaxes(d0, d1 int) *Tensor { return t.Transpose(d0, d1) }

// Swapdims is torch.swapdims, an alias of Transpose.
func (t *Tensor) Swapdims(d0, d1 int) *Tensor { return t.Transpose(d0, d1) }

// fmtInts formats dims as PyTorch prints an int list: [0, 1].
func fmtInts(ds []int) string {
	s := "["
	for i, d := range ds {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(d)
	}
	return s + "]"
}

// ExpandAs is t.expand_as(other): t expanded to other's shape.
func (t *Tensor) ExpandAs(other *Tensor) *Tensor {
	other.live("expand_as")
	return t.Expand(other.shape...)
}

// BroadcastTo is torch.broadcast_to(t, shape): t expanded to shape (-1
// keeps a size), a view.
func (t *Tensor) BroadcastTo(shape ...int) *Tensor { return t.Expand(shape...) }

// BroadcastTensors expands each tensor to the shape they all broadcast
// to, as torch.broadcast_tensors (views; gradients sum over the copies).
func BroadcastTensors(ts ...*Tensor) []*Tensor {
	const op = "broadcast_tensors"
	shapes := make([]Shape, len(ts))
	for i, t := range ts {
		shapes[i] = t.live(op).shape
	}
	s := BroadcastShapes(op, shapes...)
	out := make([]*Tensor, len(ts))
	for i, t := range ts {
		out[i] = t.Expand(s...)
	}
	return out
}

// Unflatten splits dim into the given sizes (one may be -1, inferred), as
// torch.unflatten(t, dim, sizes); a view.
func (t *Tensor) Unflatten(dim int, sizes ...int) *Tensor {
	const op = "unflatten"
	t.live(op)
	d := t.indexDim(op, dim, noDims(dim))
	if len(sizes) == 0 {
		shapeErr(op, "unflatten: sizes must be non-empty", t.shape)
	}
	n := t.shape[d]
	infer, prod := -1, 1
	for i, s := range sizes {
		switch {
		case s == -1 && infer >= 0:
			shapeErr(op, "only one dimension can be inferred", t.shape)
		case s == -1:
			infer = i
		case s < 0:
			shapeErr(op, fmt.Sprintf("invalid shape dimension %d", s), t.shape)
		case s == 0:
			prod = 0
		case prod != 0 && prod > maxElems/s:
			prod = maxElems + 1 // more than any dim holds
		default:
			prod *= s
		}
	}
	ns := append([]int(nil), sizes...)
	// torch words a -1 that cannot be inferred as sizes that do not
	// multiply up, naming the wrapped dim
	mismatch := func() {
		shapeErr(op, fmt.Sprintf("unflatten: Provided sizes %v don't multiply up to the size of dim %d (%d) in the input tensor", fmtInts(sizes), d, n), t.shape)
	}
	if infer >= 0 {
		if prod == 0 && n == 0 {
			shapeErr(op, fmt.Sprintf("cannot reshape tensor of 0 elements into shape %v because the unspecified dimension size -1 can be any value and is ambiguous", fmtInts(sizes)), t.shape)
		}
		if prod == 0 || n%prod != 0 {
			mismatch()
		}
		ns[infer] = n / prod
	} else if prod != n {
		mismatch()
	}
	full := append(append(append(Shape{}, t.shape[:d]...), ns...), t.shape[d+1:]...)
	return t.Reshape(full...)
}

// Atleast1d is torch.atleast_1d: a 0-dim t as [1], any other t itself.
func (t *Tensor) Atleast1d() *Tensor {
	if t.live("atleast_1d").Dim() == 0 {
		return t.Reshape(1)
	}
	return t
}

// Atleast2d is torch.atleast_2d: a 0-dim t as [1, 1], a 1-D [n] as
// [1, n], any other t itself.
func (t *Tensor) Atleast2d() *Tensor {
	switch t.live("atleast_2d").Dim() {
	case 0:
		return t.Reshape(1, 1)
	case 1:
		return t.Unsqueeze(0)
	}
	return t
}

// Atleast3d is torch.atleast_3d: 0-dim as [1, 1, 1], [n] as [1, n, 1],
// [m, n] as [m, n, 1], any other t itself.
func (t *Tensor) Atleast3d() *Tensor {
	switch t.live("atleast_3d").Dim() {
	case 0:
		return t.Reshape(1, 1, 1)
	case 1:
		return t.Unsqueeze(0).Unsqueeze(2)
	case 2:
		return t.Unsqueeze(2)
	}
	return t
}

// stackList checks a stacking op's list and applies f to each tensor.
func stackList(op string, ts []*Tensor, f func(*Tensor) *Tensor) []*Tensor {
	if len(ts) == 0 {
		shapeErr(op, op+" expects a non-empty TensorList")
	}
	out := make([]*Tensor, len(ts))
	for i, t := range ts {
		out[i] = f(t.live(op))
	}
	sameDevice(op, out...)
	return out
}

// Hstack joins tensors horizontally, as torch.hstack: 1-D (and 0-dim)
// tensors end to end, others along dim 1. Dtypes promote as in Cat.
func Hstack(ts []*Tensor) *Tensor {
	rs := stackList("hstack", ts, (*Tensor).Atleast1d)
	if rs[0].Dim() == 1 {
		return Cat(rs, 0)
	}
	return Cat(rs, 1)
}

// Vstack stacks tensors vertically, as torch.vstack: each as at least 2-D
// ([n] becomes a row [1, n]), joined along dim 0.
func Vstack(ts []*Tensor) *Tensor { return Cat(stackList("vstack", ts, (*Tensor).Atleast2d), 0) }

// RowStack is torch.row_stack, an alias of Vstack.
func RowStack(ts []*Tensor) *Tensor { return Vstack(ts) }

// Dstack stacks tensors depthwise, as torch.dstack: each as at least 3-D,
// joined along dim 2.
func Dstack(ts []*Tensor) *Tensor { return Cat(stackList("dstack", ts, (*Tensor).Atleast3d), 2) }

// ColumnStack is torch.column_stack: 0-dim and 1-D tensors become columns
// [n, 1], and all are joined along dim 1.
func ColumnStack(ts []*Tensor) *Tensor {
	return Cat(stackList("column_stack", ts, func(t *Tensor) *Tensor {
		if t.Dim() <= 1 {
			return t.Reshape(t.NumElements(), 1)
		}
		return t
	}), 1)
}

// TensorSplit splits t along dim into sections pieces as equal as possible
// (the first size%sections pieces one longer), as torch.tensor_split(t,
// sections, dim): always sections views, some possibly empty.
func (t *Tensor) TensorSplit(sections, dim int) []*Tensor {
	const op = "tensor_split"
	t.live(op)
	if t.Dim() == 0 {
		shapeErr(op, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims", t.shape)
	}
	d := t.dim(op, dim)
	if sections <= 0 {
		panic(&ValueError{Op: op, Msg: fmt.Sprintf("number of sections must be larger than 0, got %d", sections)})
	}
	pieces(op, t.shape, sections)
	n := t.shape[d]
	base, extra := n/sections, n%sections
	out := make([]*Tensor, sections)
	at := 0
	for i := range out {
		size := base
		if i < extra {
			size++
		}
		out[i] = t.Narrow(d, at, size)
		at += size
	}
	return out
}

// TensorSplitAt splits t along dim at the given indices, as
// torch.tensor_split(t, indices, dim): len(indices)+1 views t[:i0],
// t[i0:i1], ..., t[ik:], with Python's slicing of negative and
// out-of-range indices.
func (t *Tensor) TensorSplitAt(indices []int, dim int) []*Tensor {
	const op = "tensor_split"
	t.live(op)
	if t.Dim() == 0 {
		shapeErr(op, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims", t.shape)
	}
	d := t.dim(op, dim)
	pieces(op, t.shape, len(indices)+1)
	out := make([]*Tensor, 0, len(indices)+1)
	start := 0
	for _, end := range indices {
		out = append(out, t.Slice(d, start, end, 1))
		start = end
	}
	return append(out, t.Slice(d, start, math.MaxInt, 1))
}

// dirSplit is hsplit/vsplit/dsplit's check of the rank and divisibility.
func (t *Tensor) dirSplit(op string, minDim, dim int, sections int, indices []int) []*Tensor {
	t.live(op)
	if t.Dim() < minDim {
		what := "at least 1 dimension"
		if minDim > 1 {
			what = fmt.Sprintf("at least %d dimension", minDim)
		}
		shapeErr(op, fmt.Sprintf("torch.%s requires a tensor with %s, but got a tensor with %d dimensions!", op, what, t.Dim()), t.shape)
	}
	if indices != nil {
		return t.TensorSplitAt(indices, dim)
	}
	if n := t.shape[dim]; sections == 0 || n%sections != 0 {
		shapeErr(op, fmt.Sprintf("torch.%s attempted to split along dimension %d, but the size of the dimension %d is not divisible by the split_size %d!", op, dim, n, sections), t.shape)
	}
	return t.TensorSplit(sections, dim)
}

func (t *Tensor) hdim() int {
	if t.live("hsplit").Dim() == 1 {
		return 0
	}
	return 1
}

// Hsplit splits t horizontally into sections equal pieces, as
// torch.hsplit(t, sections): along dim 1, or dim 0 of a 1-D t; the size
// must divide evenly.
func (t *Tensor) Hsplit(sections int) []*Tensor {
	return t.dirSplit("hsplit", 1, t.hdim(), sections, nil)
}

// HsplitAt is torch.hsplit(t, indices): TensorSplitAt along Hsplit's dim.
func (t *Tensor) HsplitAt(indices []int) []*Tensor {
	return t.dirSplit("hsplit", 1, t.hdim(), 0, nonNilInts(indices))
}

// Vsplit splits t (at least 2-D) along dim 0 into sections equal pieces,
// as torch.vsplit(t, sections).
func (t *Tensor) Vsplit(sections int) []*Tensor { return t.dirSplit("vsplit", 2, 0, sections, nil) }

// VsplitAt is torch.vsplit(t, indices).
func (t *Tensor) VsplitAt(indices []int) []*Tensor {
	return t.dirSplit("vsplit", 2, 0, 0, nonNilInts(indices))
}

// Dsplit splits t (at least 3-D) along dim 2 into sections equal pieces,
// as torch.dsplit(t, sections).
func (t *Tensor) Dsplit(sections int) []*Tensor { return t.dirSplit("dsplit", 3, 2, sections, nil) }

// DsplitAt is torch.dsplit(t, indices).
func (t *Tensor) DsplitAt(indices []int) []*Tensor {
	return t.dirSplit("dsplit", 3, 2, 0, nonNilInts(indices))
}

func nonNilInts(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}

// Ravel is torch.ravel: t flattened to 1-D (a view where t's layout
// allows).
func (t *Tensor) Ravel() *Tensor { return t.live("ravel").Reshape(-1) }

// Fliplr reverses dim 1 of t (at least 2-D), as torch.fliplr.
func (t *Tensor) Fliplr() *Tensor {
	if t.live("fliplr").Dim() < 2 {
		shapeErr("fliplr", "Input must be >= 2-d.", t.shape)
	}
	return t.Flip(1)
}

// Flipud reverses dim 0 of t (at least 1-D), as torch.flipud.
func (t *Tensor) Flipud() *Tensor {
	if t.live("flipud").Dim() < 1 {
		shapeErr("flipud", "Input must be >= 1-d.", t.shape)
	}
	return t.Flip(0)
}

// Tile repeats t reps[i] times along its dims, as torch.tile: with fewer
// reps than dims, reps gets leading 1s (Repeat with more reps adds
// leading dims). Gradients: RepeatBackward0.
func (t *Tensor) Tile(reps ...int) *Tensor {
	t.live("tile")
	if len(reps) < t.Dim() {
		full := make([]int, t.Dim())
		for i := range full {
			full[i] = 1
		}
		copy(full[t.Dim()-len(reps):], reps)
		reps = full
	}
	for _, r := range reps {
		if r < 0 {
			shapeErr("tile", fmt.Sprintf("Trying to create tensor with negative dimension %d", r), t.shape)
		}
	}
	return t.Repeat(reps...)
}
