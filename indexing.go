package ember

import (
	"fmt"
	"reflect"
	"unsafe"
)

// Indexing with tensors (IndexSelect, on the backends' Gather kernels, is
// in index.go): advanced indexing (x[idx],
// x[i, j]), boolean masks (x[x > 0], masked_select) and flip. The indices
// are read back to the host (as PyTorch must for masks: the result's size
// depends on the data); the values are gathered on t's device, and the
// gradient is scattered back into a zero tensor of t's shape.

// hostIndices reads an integer index tensor.
func hostIndices(op string, idx *Tensor) []int64 {
	idx.live(op)
	if !idx.dtype.IsInt() {
		panic(&DTypeError{Op: op, DTypes: []DType{idx.dtype}, Msg: "tensors used as indices must be long or int tensors"})
	}
	return idx.Int64s()
}

// wrapIndex checks i against a dim of size n and wraps a negative i.
func wrapIndex(op string, i int64, d, n int, shape Shape) int {
	if i < -int64(n) || i >= int64(n) {
		shapeErr(op, fmt.Sprintf("index %d is out of bounds for dimension %d with size %d", i, d, n), shape)
	}
	if i < 0 {
		i += int64(n)
	}
	return int(i)
}

// gather returns t's slices ix (valid positions) along dim d, stacked
// along d, as a copy recorded as name (indexSelect).
func gather(name string, t *Tensor, d int, ix []int64) *Tensor {
	return indexSelect(name, t, d, FromSlice(ix, Shape{len(ix)}, On(t.dev)))
}

// truePositions lists the indices of mask's true elements. It does not
// branch on the values (a random mask would mispredict half the time).
func truePositions(mask []bool) []int64 {
	n := 0
	for _, b := range mask {
		n += b2i(b)
	}
	pos := make([]int64, n+1) // one spare: every element is written
	k := 0
	for i, b := range mask {
		pos[k] = int64(i)
		k += b2i(b)
	}
	return pos[:n]
}

// b2i is 1 for true and 0 for false, without a branch.
func b2i(b bool) int { return int(*(*uint8)(unsafe.Pointer(&b))) }

// IndexWith is t[idx0, idx1, ...] with index tensors (PyTorch's advanced
// indexing): integer index tensors, broadcast together, pick elements of
// t's leading dims, giving the broadcast shape followed by t's remaining
// dims; negative indices count from the end. A single Bool tensor is a mask
// over t's leading dims (x[x > 0]): the result lists the selected elements
// (or slices) in row-major order.
func (t *Tensor) IndexWith(idx ...*Tensor) *Tensor {
	const op = "index"
	t.live(op)
	if len(idx) == 0 {
		return t
	}
	if len(idx) > t.Dim() {
		shapeErr(op, fmt.Sprintf("too many indices for tensor of dimension %d", t.Dim()), t.shape)
	}
	if len(idx) == 1 && idx[0].live(op).dtype == Bool {
		m := idx[0]
		if m.Dim() > t.Dim() || !m.shape.Equal(t.shape[:m.Dim()]) {
			shapeErr(op, fmt.Sprintf("The shape of the mask %v does not match the shape of the indexed tensor %v", m.shape, t.shape), m.shape, t.shape)
		}
		pos := truePositions(m.Bools())
		flat := t.Reshape(append(Shape{m.NumElements()}, t.shape[m.Dim():]...)...)
		return gather("IndexBackward0", flat, 0, pos)
	}
	shapes := make([]Shape, len(idx))
	for k, ix := range idx {
		ix.live(op)
		shapes[k] = ix.shape
	}
	bshape := BroadcastShapes(op, shapes...)
	k := len(idx)
	lin := make([]int64, bshape.NumElements())
	stride := 1
	for d := k - 1; d >= 0; d-- {
		vals := hostIndices(op, idx[d].Expand(bshape...))
		for j, v := range vals {
			lin[j] += int64(stride * wrapIndex(op, v, d, t.shape[d], t.shape))
		}
		stride *= t.shape[d]
	}
	rest := t.shape[k:]
	flat := t.Reshape(append(Shape{stride}, rest...)...)
	out := gather("IndexBackward0", flat, 0, lin)
	return out.Reshape(append(bshape.clone(), rest...)...)
}

// MaskedSelect returns the elements of t where the Bool mask is true, as a
// 1-D tensor in row-major order (torch.masked_select; t and mask
// broadcast together).
func (t *Tensor) MaskedSelect(mask *Tensor) *Tensor {
	const op = "masked_select"
	t.live(op)
	mask.live(op)
	if mask.dtype != Bool {
		panic(&DTypeError{Op: op, DTypes: []DType{mask.dtype}, Msg: "masked_select: expected BoolTensor for mask"})
	}
	bshape := BroadcastShapes(op, t.shape, mask.shape)
	pos := truePositions(mask.Expand(bshape...).Bools())
	return gather("MaskedSelectBackward0", t.Expand(bshape...).Reshape(-1), 0, pos)
}

// Flip reverses the order of elements along dims (torch.flip), as a copy.
func (t *Tensor) Flip(dims ...int) *Tensor {
	const op = "flip"
	t.live(op)
	seen := map[int]bool{}
	out := t
	for _, d := range dims {
		d = t.dim(op, d)
		if seen[d] {
			shapeErr(op, fmt.Sprintf("dim %d appears multiple times in the list of dims", d), t.shape)
		}
		seen[d] = true
		if t.Dim() == 0 { // dim 0 or -1 of a scalar: nothing to reverse
			continue
		}
		// the reversed index n-1, ..., 0 is made on t's device: a host
		// slice as long as the dim was a fatal out-of-memory error for a
		// huge meta or expanded dim
		n := t.shape[d]
		rev := empty(Shape{n}, Int64, t.dev)
		if n > 0 {
			rev.be().Arange(rev.view(), float64(n-1), -1)
		}
		out = indexSelect("FlipBackward0", out, d, rev)
	}
	if out == t {
		return t.Clone()
	}
	return out
}

// ToList returns t's elements as nested Go slices of its element type
// (PyTorch's tolist): [][]float32 for a 2-D Float32 tensor, []int64 for a
// 1-D Int64 one, and the element itself for a 0-dim tensor. BFloat16 and
// Float16 give float32 values.
func (t *Tensor) ToList() any {
	host := t.hostData("tolist")
	if t.dtype.IsHalf() { // the values as float32, as tolist gives Python floats
		host = convertAll[float32](host)
	}
	flat := reflect.ValueOf(host)
	if t.Dim() == 0 {
		return flat.Index(0).Interface()
	}
	var build func(d, off int) reflect.Value
	build = func(d, off int) reflect.Value {
		typ := flat.Type()
		for range t.Dim() - 1 - d {
			typ = reflect.SliceOf(typ)
		}
		n := t.shape[d]
		if d == t.Dim()-1 {
			return flat.Slice(off, off+n)
		}
		inner := 1
		for _, s := range t.shape[d+1:] {
			inner *= s
		}
		v := reflect.MakeSlice(typ, n, n)
		for i := range n {
			v.Index(i).Set(build(d+1, off+i*inner))
		}
		return v
	}
	return build(0, 0).Interface()
}
