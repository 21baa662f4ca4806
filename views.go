package ember

import (
	"fmt"
	"strings"

	"github.com/emberml/ember/backend"
)

// dim normalises a possibly negative dimension index for t.
func (t *Tensor) dim(op string, d int) int { return wrapDim(op, d, len(t.shape), t.shape) }

// indexDim is dim for ops that index into the dim (narrow, select, size):
// a 0-dim tensor has none, so it panics with msg there.
func (t *Tensor) indexDim(op string, d int, msg string) int {
	if len(t.shape) == 0 {
		shapeErr(op, msg, t.shape)
	}
	return t.dim(op, d)
}

// noDims is the message of a dim asked of a 0-dim tensor (torch's IndexError).
func noDims(d int) string {
	return fmt.Sprintf("Dimension specified as %d but tensor has no dimensions", d)
}

func wrapDim(op string, d, rank int, shape Shape) int {
	r := rank
	if r == 0 {
		r = 1 // a scalar accepts dim 0 and -1, as PyTorch
	}
	if d < -r || d >= r {
		shapeErr(op, fmt.Sprintf("Dimension out of range (expected to be in range of [%d, %d], but got %d)", -r, r-1, d), shape)
	}
	if d < 0 {
		d += r
	}
	return d
}

// as is a plain alias of t's storage with another geometry; the view ops
// use alias, which also records the view's base.
func (t *Tensor) as(shape Shape, strides []int, offset int) *Tensor {
	return &Tensor{st: t.st, shape: shape, strides: strides, offset: offset, dtype: t.dtype, dev: t.dev}
}

// inferShape resolves one -1 in shape against n elements.
func inferShape(op string, shape []int, n int, from Shape) Shape {
	out := Shape(append([]int(nil), shape...))
	neg := -1
	prod := 1
	for i, d := range out {
		switch {
		case d == -1:
			if neg >= 0 {
				shapeErr(op, "only one dimension can be inferred", from)
			}
			neg = i
		case d < 0:
			shapeErr(op, fmt.Sprintf("invalid shape dimension %d", d), from)
		default:
			if d != 0 && prod > maxElems/d {
				shapeErr(op, fmt.Sprintf("shape '%v' is invalid for input of size %d", Shape(shape), n), from)
			}
			prod *= d
		}
	}
	if neg >= 0 {
		if prod == 0 || n%prod != 0 {
			shapeErr(op, fmt.Sprintf("shape '%v' is invalid for input of size %d", Shape(shape), n), from)
		}
		out[neg] = n / prod
	} else if prod != n {
		shapeErr(op, fmt.Sprintf("shape '%v' is invalid for input of size %d", Shape(shape), n), from)
	}
	return out
}

// viewStrides computes strides for viewing (shape, strides) as newShape
// without a copy, or reports false (PyTorch's computeStride).
func viewStrides(shape Shape, strides []int, newShape Shape) ([]int, bool) {
	if shape.NumElements() == 0 || len(shape) == 0 {
		return backend.ContiguousStrides(newShape), true
	}
	out := make([]int, len(newShape))
	viewD := len(newShape) - 1
	chunkBase := 0
	if len(strides) > 0 {
		chunkBase = strides[len(strides)-1]
	}
	tensorNumel, viewNumel := 1, 1
	for d := len(shape) - 1; d >= 0; d-- {
		tensorNumel *= shape[d]
		if d == 0 || (shape[d-1] != 1 && strides[d-1] != tensorNumel*chunkBase) {
			for viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1) {
				out[viewD] = viewNumel * chunkBase
				viewNumel *= newShape[viewD]
				viewD--
			}
			if viewNumel != tensorNumel {
				return nil, false
			}
			if d > 0 {
				chunkBase = strides[d-1]
				tensorNumel, viewNumel = 1, 1
			}
		}
	}
	if viewD != -1 {
		return nil, false
	}
	return out, true
}

// View returns a tensor with the same data and a new shape (one size may be
// -1). It panics when the strides do not allow it; Reshape copies instead.
func (t *Tensor) View(shape ...int) *Tensor {
	t.live("view")
	ns := inferShape("view", shape, t.NumElements(), t.shape)
	st, ok := viewStrides(t.shape, t.strides, ns)
	if !ok {
		shapeErr("view", "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use Reshape instead", t.shape, ns)
	}
	out := t.alias(ns, st, t.offset)
	return recordUnary(t, out, "ViewBackward0", func(g *Tensor) *Tensor { return g.Reshape(t.shape...) })
}

// Reshape is View when the strides allow it, else a contiguous copy.
func (t *Tensor) Reshape(shape ...int) *Tensor {
	t.live("reshape")
	ns := inferShape("reshape", shape, t.NumElements(), t.shape)
	if st, ok := viewStrides(t.shape, t.strides, ns); ok {
		out := t.alias(ns, st, t.offset)
		return recordUnary(t, out, "ViewBackward0", func(g *Tensor) *Tensor { return g.Reshape(t.shape...) })
	}
	out := t.Contiguous().View(ns...)
	out.vw = nil // a view of a copy nobody else sees: not a view of t (as PyTorch's reshape)
	return out
}

// Flatten merges dims start..end (inclusive; negative counts from the end).
func (t *Tensor) Flatten(start, end int) *Tensor {
	t.nonNil("flatten")
	if t.Dim() == 0 {
		return t.Reshape(1)
	}
	s, e := t.dim("flatten", start), t.dim("flatten", end)
	if s > e {
		shapeErr("flatten", "start_dim cannot come after end_dim", t.shape)
	}
	ns := append(Shape{}, t.shape[:s]...)
	ns = append(ns, t.shape[s:e+1].NumElements())
	ns = append(ns, t.shape[e+1:]...)
	return t.Reshape(ns...)
}

// Transpose swaps dims d0 and d1.
func (t *Tensor) Transpose(d0, d1 int) *Tensor {
	t.live("transpose")
	if t.Dim() == 0 {
		return t
	}
	a, b := t.dim("transpose", d0), t.dim("transpose", d1)
	perm := make([]int, t.Dim())
	for i := range perm {
		perm[i] = i
	}
	perm[a], perm[b] = b, a
	return rename(t.Permute(perm...), "TransposeBackward0")
}

// T transposes a matrix (dims 0 and 1); a 0- or 1-D tensor is returned as is.
func (t *Tensor) T() *Tensor {
	t.nonNil("t")
	if t.Dim() < 2 {
		return t
	}
	if t.Dim() > 2 {
		shapeErr("t", "expects a tensor with <= 2 dimensions", t.shape)
	}
	return rename(t.Transpose(0, 1), "TBackward0")
}

// Permute reorders the dims: out dim i is t's dim perm[i].
func (t *Tensor) Permute(perm ...int) *Tensor {
	t.live("permute")
	if len(perm) != t.Dim() {
		shapeErr("permute", fmt.Sprintf("number of dims don't match in permute: got %d for a %d-D tensor", len(perm), t.Dim()), t.shape)
	}
	seen := make([]bool, t.Dim())
	ns, st := make(Shape, len(perm)), make([]int, len(perm))
	inv := make([]int, len(perm))
	for i, p := range perm {
		p = t.dim("permute", p)
		if seen[p] {
			shapeErr("permute", "repeated dim in permute", t.shape)
		}
		seen[p] = true
		ns[i], st[i] = t.shape[p], t.strides[p]
		inv[p] = i
	}
	out := t.alias(ns, st, t.offset)
	return recordUnary(t, out, "PermuteBackward0", func(g *Tensor) *Tensor { return g.Permute(inv...) })
}

// Squeeze removes the given size-1 dims, or all size-1 dims when none are given.
func (t *Tensor) Squeeze(dims ...int) *Tensor {
	t.live("squeeze")
	drop := make([]bool, t.Dim())
	if len(dims) == 0 {
		for i, d := range t.shape {
			drop[i] = d == 1
		}
	}
	for _, d := range dims {
		if t.Dim() == 0 {
			continue
		}
		d = t.dim("squeeze", d)
		drop[d] = t.shape[d] == 1
	}
	var ns Shape
	var st []int
	for i := range t.shape {
		if !drop[i] {
			ns = append(ns, t.shape[i])
			st = append(st, t.strides[i])
		}
	}
	if ns == nil {
		ns, st = Shape{}, []int{}
	}
	out := t.alias(ns, st, t.offset)
	name := "SqueezeBackward0"
	if len(dims) > 0 {
		name = "SqueezeBackward1"
	}
	return recordUnary(t, out, name, func(g *Tensor) *Tensor { return g.Reshape(t.shape...) })
}

// Unsqueeze inserts a size-1 dim at position d (negative counts from the end).
func (t *Tensor) Unsqueeze(d int) *Tensor {
	t.live("unsqueeze")
	d = wrapDim("unsqueeze", d, t.Dim()+1, t.shape)
	ns := append(Shape{}, t.shape[:d]...)
	ns = append(ns, 1)
	ns = append(ns, t.shape[d:]...)
	st := append([]int{}, t.strides[:d]...)
	inner := 1
	if d < t.Dim() {
		inner = t.strides[d] * t.shape[d]
	}
	st = append(st, inner)
	st = append(st, t.strides[d:]...)
	out := t.alias(ns, st, t.offset)
	return recordUnary(t, out, "UnsqueezeBackward0", func(g *Tensor) *Tensor { return g.Squeeze(d) })
}

// Expand broadcasts size-1 dims to larger sizes without copying; -1 keeps a
// size; new leading dims may be added.
func (t *Tensor) Expand(shape ...int) *Tensor {
	t.live("expand")
	if len(shape) < t.Dim() {
		shapeErr("expand", fmt.Sprintf("the number of sizes provided (%d) must be greater or equal to the number of dimensions in the tensor (%d)", len(shape), t.Dim()), t.shape)
	}
	ns := make(Shape, len(shape))
	st := make([]int, len(shape))
	lead := len(shape) - t.Dim()
	for i := range shape {
		if i < lead {
			if shape[i] < 0 {
				shapeErr("expand", "the expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension", t.shape)
			}
			ns[i], st[i] = shape[i], 0
			continue
		}
		src := t.shape[i-lead]
		switch {
		case shape[i] == -1 || shape[i] == src:
			ns[i], st[i] = src, t.strides[i-lead]
		case src == 1 && shape[i] >= 0:
			ns[i], st[i] = shape[i], 0
		default:
			shapeErr("expand", fmt.Sprintf("the expanded size of the tensor (%d) must match the existing size (%d) at non-singleton dimension %d", shape[i], src, i), t.shape, Shape(shape))
		}
	}
	checkShape("expand", ns)
	out := t.alias(ns, st, t.offset)
	return recordUnary(t, out, "ExpandBackward0", func(g *Tensor) *Tensor { return sumTo(g, t.shape) })
}

// Narrow returns length elements of dim d starting at start.
func (t *Tensor) Narrow(d, start, length int) *Tensor {
	t.live("narrow")
	d = t.indexDim("narrow", d, "narrow() cannot be applied to a 0-dim tensor.")
	n := t.shape[d]
	if start < -n || start > n {
		shapeErr("narrow", fmt.Sprintf("start out of range (expected to be in range of [%d, %d], but got %d)", -n, n, start), t.shape)
	}
	if length < 0 {
		shapeErr("narrow", "narrow(): length must be non-negative.", t.shape)
	}
	if start < 0 {
		start += n
	}
	if length > n-start { // not start+length > n: that can overflow
		shapeErr("narrow", fmt.Sprintf("start (%d) + length (%d) exceeds dimension size (%d).", start, length, n), t.shape)
	}
	ns := t.shape.clone()
	ns[d] = length
	out := t.alias(ns, append([]int(nil), t.strides...), t.offset+start*t.strides[d])
	return recordSliceLike(t, out, "SliceBackward0", func(z *Tensor) *Tensor { return z.Narrow(d, start, length) })
}

// Slice returns elements start, start+step, ... < end of dim d, with Python's
// clamping of out-of-range bounds and negative indices.
func (t *Tensor) Slice(d, start, end, step int) *Tensor {
	t.live("slice")
	d = t.indexDim("slice", d, "slice() cannot be applied to a 0-dim tensor.")
	if step <= 0 {
		shapeErr("slice", "slice step must be positive", t.shape)
	}
	n := t.shape[d]
	clampIdx := func(i int) int {
		if i < 0 {
			i += n
		}
		return min(max(i, 0), n)
	}
	s, e := clampIdx(start), clampIdx(end)
	length := 0
	if e > s {
		length = (e-s-1)/step + 1 // not (e-s+step-1)/step: that can overflow
	}
	ns := t.shape.clone()
	ns[d] = length
	st := append([]int(nil), t.strides...)
	st[d] *= step
	out := t.alias(ns, st, t.offset+s*t.strides[d])
	return recordSliceLike(t, out, "SliceBackward0", func(z *Tensor) *Tensor { return z.Slice(d, start, end, step) })
}

// Select returns the i-th slice of dim d, removing that dim (t[..., i, ...]).
func (t *Tensor) Select(d, i int) *Tensor {
	t.live("select")
	d = t.indexDim("select", d, "select() cannot be applied to a 0-dim tensor.")
	if i < -t.shape[d] || i >= t.shape[d] {
		shapeErr("select", fmt.Sprintf("index %d is out of bounds for dimension %d with size %d", i, d, t.shape[d]), t.shape)
	}
	if i < 0 {
		i += t.shape[d]
	}
	ns := append(append(Shape{}, t.shape[:d]...), t.shape[d+1:]...)
	st := append(append([]int{}, t.strides[:d]...), t.strides[d+1:]...)
	out := t.alias(ns, st, t.offset+i*t.strides[d])
	return recordSliceLike(t, out, "SelectBackward0", func(z *Tensor) *Tensor { return z.Select(d, i) })
}

// Index returns t[i] (the i-th slice of dim 0); several indices index
// successive dims: t.Index(1, 2) is t[1][2].
func (t *Tensor) Index(idx ...int) *Tensor {
	t.live("index")
	if len(idx) > t.Dim() {
		shapeErr("index", fmt.Sprintf("too many indices for tensor of dimension %d (got %d)", t.Dim(), len(idx)), t.shape)
	}
	out := t
	for _, i := range idx {
		out = out.Select(0, i)
	}
	return out
}

// Cat joins tensors along dim d. All must share device, rank and the other sizes.
func Cat(ts []*Tensor, d int) *Tensor {
	if len(ts) == 0 {
		shapeErr("cat", "expected a non-empty list of Tensors")
	}
	sameDevice("cat", ts...)
	ref := ts[0]
	d = ref.dim("cat", d)
	dt := ts[0].dtype
	total := 0
	for i, t := range ts {
		t.live("cat")
		if t.Dim() == 0 {
			shapeErr("cat", fmt.Sprintf("zero-dimensional tensor (at position %d) cannot be concatenated", i), t.shape)
		}
		if t.Dim() != ref.Dim() {
			shapeErr("cat", "Tensors must have same number of dimensions", ref.shape, t.shape)
		}
		for i := range t.shape {
			if i != d && t.shape[i] != ref.shape[i] {
				shapeErr("cat", fmt.Sprintf("Sizes of tensors must match except in dimension %d", d), ref.shape, t.shape)
			}
		}
		total += t.shape[d]
		dt = PromoteTypes(dt, t.dtype)
	}
	ns := ref.shape.clone()
	ns[d] = total
	out := empty(ns, dt, ref.dev)
	at := 0
	for _, t := range ts {
		part := out.Narrow(d, at, t.shape[d])
		out.be().Copy(part.view(), t.view())
		at += t.shape[d]
	}
	return recordCat(ts, out, d)
}

// Stack joins tensors of equal shape along a new dim d.
func Stack(ts []*Tensor, d int) *Tensor {
	if len(ts) == 0 {
		shapeErr("stack", "expected a non-empty list of Tensors")
	}
	sameDevice("stack", ts...)
	d = wrapDim("stack", d, ts[0].Dim()+1, ts[0].shape)
	us := make([]*Tensor, len(ts))
	for i, t := range ts {
		if !t.shape.Equal(ts[0].shape) {
			shapeErr("stack", "stack expects each tensor to be equal size", ts[0].shape, t.shape)
		}
		us[i] = t.Unsqueeze(d)
	}
	return rename(Cat(us, d), "StackBackward0")
}

// Split cuts dim d into pieces of size (the last may be smaller); views.
// In a graph the pieces are one op's outputs (SplitBackward0): backward
// runs once for all of them, and they cannot be modified in place.
func (t *Tensor) Split(size, d int) []*Tensor {
	t.nonNil("split")
	d = t.indexDim("split", d, "split expects at least a 1-dimensional tensor")
	if size <= 0 {
		shapeErr("split", "split_size must be positive", t.shape)
	}
	n := t.shape[d]
	if n == 0 { // one empty piece, as torch.split
		return t.splitViews("SplitBackward0", d, []int{0})
	}
	pieces("split", t.shape, 1+(n-1)/size)
	sizes := make([]int, 0, 1+(n-1)/size)
	for at := 0; at < n; at += size {
		sizes = append(sizes, min(size, n-at))
	}
	return t.splitViews("SplitBackward0", d, sizes)
}

// SplitSizes cuts dim d into pieces of the given sizes, which must sum to
// its size (torch.split with a list of sizes); views, one op's outputs in
// a graph (SplitWithSizesBackward0), as Split's.
func (t *Tensor) SplitSizes(sizes []int, d int) []*Tensor {
	const op = "split_with_sizes"
	t.nonNil(op)
	d = t.indexDim(op, d, "split expects at least a 1-dimensional tensor")
	sum, over := 0, false
	for _, s := range sizes {
		if s < 0 {
			shapeErr(op, fmt.Sprintf("split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=%v", sizesList(sizes)), t.shape)
		}
		over = over || s > t.shape[d]-sum // (not sum+s > ...: that can overflow)
		if !over {
			sum += s
		}
	}
	if over || sum != t.shape[d] {
		shapeErr(op, fmt.Sprintf("split_with_sizes expects split_sizes to sum exactly to %d (input tensor's size at dimension %d), but got split_sizes=%v", t.shape[d], d, sizesList(sizes)), t.shape)
	}
	pieces(op, t.shape, len(sizes))
	return t.splitViews("SplitWithSizesBackward0", d, sizes)
}

// sizesList formats sizes as Python's list.
func sizesList(sizes []int) string {
	return strings.ReplaceAll(fmt.Sprint(sizes), " ", ", ")
}

// splitViews returns the consecutive pieces of dim d of the given sizes
// (summing to its size), recorded as one node named name.
func (t *Tensor) splitViews(name string, d int, sizes []int) []*Tensor {
	t.live("split")
	out := make([]*Tensor, len(sizes))
	at := 0
	for i, s := range sizes {
		ns := t.shape.clone()
		ns[d] = s
		out[i] = multiOutputView(t.alias(ns, append([]int(nil), t.strides...), t.offset+at*t.strides[d]), i)
		at += s
	}
	shape, dt, dev := t.shape.clone(), t.dtype, t.dev
	recordMulti(name, t, out, func(gs []*Tensor) *Tensor {
		parts := make([]*Tensor, len(gs))
		for i, g := range gs {
			if parts[i] = g; g == nil {
				ps := shape.clone()
				ps[d] = sizes[i]
				parts[i] = Zeros(ps, On(dev), Dtype(dt))
			}
		}
		return Cat(parts, d)
	})
	return out
}

// Unbind removes dim d, returning the slices along it, views of t
// (torch.unbind: q, k, v := qkv.Unbind(0) ...). Like Split's pieces, they
// are one op's several outputs (UnbindBackward0): in a graph they cannot
// be modified in place.
func (t *Tensor) Unbind(d int) []*Tensor {
	t.nonNil("unbind")
	d = t.indexDim("unbind", d, noDims(d))
	pieces("unbind", t.shape, t.shape[d])
	t.live("unbind")
	out := make([]*Tensor, t.shape[d])
	for i := range out {
		ns := append(append(Shape{}, t.shape[:d]...), t.shape[d+1:]...)
		st := append(append([]int{}, t.strides[:d]...), t.strides[d+1:]...)
		out[i] = multiOutputView(t.alias(ns, st, t.offset+i*t.strides[d]), i)
	}
	if len(out) == 0 {
		return out
	}
	shape, dt, dev := t.shape.clone(), t.dtype, t.dev
	recordMulti("UnbindBackward0", t, out, func(gs []*Tensor) *Tensor {
		parts := make([]*Tensor, len(gs))
		for i, g := range gs {
			if parts[i] = g; g == nil {
				ps := append(append(Shape{}, shape[:d]...), shape[d+1:]...)
				parts[i] = Zeros(ps, On(dev), Dtype(dt))
			}
		}
		return Stack(parts, d)
	})
	return out
}

// maxPieces bounds the views Split, Chunk and Unbind return at once: each
// is a Go value (~150 bytes), so an expanded dim of 2⁴⁰ elements split into
// ones would exhaust the host's memory, which Go cannot recover from.
const maxPieces = 1 << 24

// pieces panics with a *ShapeError when op would return more than
// maxPieces views of a tensor of shape.
func pieces(op string, shape Shape, n int) {
	if n > maxPieces {
		shapeErr(op, fmt.Sprintf("would return %d tensors, more than ember makes at once (%d)", n, maxPieces), shape)
	}
}

// Chunk cuts dim d into n pieces as equal as possible (torch.chunk); views.
func (t *Tensor) Chunk(n, d int) []*Tensor {
	t.nonNil("chunk")
	if n <= 0 {
		shapeErr("chunk", "chunk expects `chunks` to be greater than 0", t.shape)
	}
	d = t.indexDim("chunk", d, "chunk expects at least a 1-dimensional tensor")
	if t.shape[d] == 0 { // torch.chunk gives n empty pieces
		pieces("chunk", t.shape, n)
		return t.splitViews("SplitWithSizesBackward0", d, make([]int, n))
	}
	size := 1 + (t.shape[d]-1)/n // the ceiling of shape/n, without overflow
	return t.Split(size, d)
}
