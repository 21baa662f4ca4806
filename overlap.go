package ember

import (
	"slices"
	"sort"
)

// Memory overlap checks for in-place ops, as PyTorch's (ATen's
// MemOverlap.cpp): an op that writes t element by element must not write
// one memory location through two elements (an expanded view: what is
// written there depends on the order), and an input it reads must not share
// some but not all of t's memory (x[1:] += x[:-1], x += x.T: the result
// would depend on the order the elements are visited in). Both are
// ShapeErrors with PyTorch's words. As in PyTorch, an input is compared
// before it is broadcast (x += x[0] is refused), layouts whose overlap is
// costly to decide (an operand not dense) are let through, and fill_ may
// write an expanded view.

// checkWrite panics unless t can be written elementwise while inputs (read
// by the same op, at t's shape) are read.
func (t *Tensor) checkWrite(op string, inputs ...*Tensor) {
	if t.internalOverlap() {
		shapeErr(op, "unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.", t.shape)
	}
	for _, in := range inputs {
		if in != nil && partialOverlap(t, in) {
			shapeErr(op, "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation.", t.shape, in.shape)
		}
	}
}

// internalOverlap reports a dim of more than one element with stride 0
// (torch's has_internal_overlap == YES); an empty tensor, whose [9, 0]
// has strides [0, 1], has no element to overlap.
func (t *Tensor) internalOverlap() bool {
	if t.shape.NumElements() == 0 {
		return false
	}
	for i, n := range t.shape {
		if n > 1 && t.strides[i] == 0 {
			return true
		}
	}
	return false
}

// dense reports whether t's elements cover offset..offset+numel-1 of its
// storage once each, in some order of its dims (torch's
// is_non_overlapping_and_dense).
func (t *Tensor) dense() bool {
	dims := make([]int, 0, len(t.shape))
	for i, n := range t.shape {
		if n != 1 {
			dims = append(dims, i)
		}
	}
	sort.Slice(dims, func(a, b int) bool { return t.strides[dims[a]] < t.strides[dims[b]] })
	want := 1
	for _, d := range dims {
		if t.strides[d] != want {
			return false
		}
		want *= t.shape[d]
	}
	return true
}

// partialOverlap reports whether a and b share storage and some but not all
// of their memory, or all of it in different orders (torch's
// get_overlap_status == PARTIAL); false where that is costly to decide.
func partialOverlap(a, b *Tensor) bool {
	if a.st != b.st || a.NumElements() == 0 || b.NumElements() == 0 || !a.dense() || !b.dense() {
		return false
	}
	aEnd, bEnd := a.offset+a.NumElements(), b.offset+b.NumElements()
	if a.offset == b.offset && aEnd == bEnd {
		return !slices.Equal(a.strides, b.strides)
	}
	return a.offset < bEnd && b.offset < aEnd
}
