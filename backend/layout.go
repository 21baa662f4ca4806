package backend

// Layout is a coalesced iteration space shared by several operands: a shape
// and, per operand, strides and a base offset, all in elements (Base may be
// nil when the offsets travel elsewhere, as in a CUDA kernel's pointers).
// Every backend's elementwise and reduction kernels iterate over one; see
// Coalesce and CoalesceViews.
type Layout struct {
	Shape   []int
	Strides [][]int // Strides[k] is operand k's, one per dim of Shape
	Base    []int   // Base[k] is operand k's offset
}

// CoalesceViews is Coalesce over views that share shape, keeping each view's
// offset as its operand's base.
func CoalesceViews(shape []int, views ...View) Layout {
	strides := make([][]int, len(views))
	l := Layout{Base: make([]int, len(views))}
	for k, v := range views {
		strides[k], l.Base[k] = v.Strides, v.Offset
	}
	l.Shape, l.Strides = Coalesce(shape, strides...)
	return l
}

// Total is the number of elements in the iteration space.
func (l Layout) Total() int { return numel(l.Shape) }

// Inner returns operand k's stride in the last dim.
func (l Layout) Inner(k int) int { return l.Strides[k][len(l.Shape)-1] }

// Outer returns operand k's stride in the second-to-last dim (0 for 1-D).
func (l Layout) Outer(k int) int {
	if nd := len(l.Shape); nd >= 2 {
		return l.Strides[k][nd-2]
	}
	return 0
}
