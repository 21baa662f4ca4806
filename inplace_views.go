package ember

import (
	"fmt"
	"sync"
)

// In-place ops on views inside a graph, as PyTorch's CopySlices and view
// history regeneration (torch/csrc/autograd/functions/tensor.cpp,
// VariableTypeUtils.h rebase_history, VariableHooks::grad_fn).
//
// A view made by a view op (Narrow, Select, Transpose, View, ...) knows its
// base, the tensor at the root of its view chain, and shares the base's
// storage and so its version counter. An in-place op recorded on a view v
// of base b is computed out of place as any in-place op (see inplace.go);
// then b's history is rebased: b takes a CopySlices node over b's previous
// history, v's geometry and the op's node. Its backward takes b's gradient
// g, runs the op's backward on g's part at v's geometry, writes the op's
// gradient for its self input into that part of a copy of g (the rest
// passes unchanged) and sends that to b's previous history; the op's other
// inputs get their gradients as usual. v's history becomes an
// AsStridedBackward0 view of b's new history.
//
// Every view remembers the storage version its history was made at; when
// a view whose base requires grad is used after its base or another view
// of it was modified in place (the version moved), its history is
// regenerated the same way from the base's current one (refresh), so
// views made before the write see it.
//
// As in PyTorch, a view made in NoGrad, and an output of an op returning
// several views (Split, Chunk), cannot be modified in place in a graph,
// nor used after its base was (AutogradError with PyTorch's words); a view
// of a leaf that requires grad cannot be modified in place in a graph.
// A view made in NoGrad of a tensor that requires grad, and not written
// since, does not require grad; PyTorch reports requires_grad=True for it
// but sends no gradient through it either.

// creation is how a view was made (PyTorch's CreationMeta).
type creation uint8

const (
	viewDefault     creation = iota
	viewNoGrad               // made with grad mode off
	viewMultiOutput          // one of several views one op returned
)

// viewMeta is a view's link to its base.
type viewMeta struct {
	base     *Tensor // the root of the view chain: not itself a view
	creation creation
	outputNr int    // the view's index among its op's outputs (multi-output views)
	version  uint64 // the storage version the view's history was made at
}

// alias is t's storage with another geometry: a view of t (shape, strides
// and absolute offset), recorded as one with its base.
func (t *Tensor) alias(shape Shape, strides []int, offset int) *Tensor {
	out := t.as(shape, strides, offset)
	base, cr := t, viewDefault
	if t.vw != nil {
		base, cr = t.vw.base, t.vw.creation
	}
	if !IsGradEnabled() {
		cr = viewNoGrad
	}
	out.vw = &viewMeta{base: base, creation: cr, version: t.st.version.Load()}
	return out
}

// multiOutputView marks v, output i of an op returning several views.
func multiOutputView(v *Tensor, i int) *Tensor {
	if v.vw != nil && IsGradEnabled() {
		v.vw.creation, v.vw.outputNr = viewMultiOutput, i
	}
	return v
}

// stale reports whether t is a view whose history must be regenerated
// from its base's before use: the storage's version moved since it was
// made, and it has a history or its base requires grad.
func (t *Tensor) stale() bool {
	v := t.vw
	if v == nil || v.version == t.st.version.Load() {
		return false
	}
	return (t.ag != nil && t.ag.node != nil) || v.base.RequiresGrad()
}

// refresh brings a stale view's history up to date: an AsStridedBackward0
// node from its base's current history (PyTorch regenerates a view's
// grad_fn so). A view made in NoGrad or by a multi-output op panics
// instead, as PyTorch.
func (t *Tensor) refresh() {
	if !t.stale() {
		return
	}
	// goroutines using one view (a replica's forward) regenerate it once
	refreshMu.Lock()
	defer refreshMu.Unlock()
	if !t.stale() {
		return
	}
	v := t.vw
	if v.creation != viewDefault {
		panic(viewRebaseError("grad_fn", t, true))
	}
	var n *node
	if v.base.RequiresGrad() {
		b, vg := geometryOf(v.base), geometryOf(t)
		n = &node{name: "AsStridedBackward0", edges: []edge{gradEdge(v.base)}, backward: func(g *Tensor) []*Tensor {
			whole, part := b.layout(g, vg, nil)
			part.CopyFrom(g)
			return []*Tensor{whole}
		}}
	}
	t.setNode(n)
	v.version = t.st.version.Load()
}

var refreshMu sync.Mutex

// checkViewInPlace panics where an in-place op recorded in a graph may not
// write the view t (PyTorch's check_inplace and handle_view_on_rebase).
func (t *Tensor) checkViewInPlace(op string) {
	if t.vw.creation != viewDefault {
		panic(viewRebaseError(op, t, false))
	}
	if t.RequiresGrad() && t.vw.base.IsLeaf() {
		panic(&AutogradError{Op: op, Msg: "a view of a leaf Variable that requires grad is being used in an in-place operation."})
	}
}

// viewRebaseError is PyTorch's error for a view that may not be modified
// in place (indirect: its base or another view of it was).
func viewRebaseError(op string, t *Tensor, indirect bool) *AutogradError {
	modified := "is being"
	if indirect {
		modified = "its base or another view of its base has been"
	}
	var msg string
	if t.ag != nil && t.ag.node != nil {
		msg = fmt.Sprintf("Output %d of %s is a view and %s modified inplace.", t.vw.outputNr, t.ag.node.name, modified)
	} else {
		msg = "A view was created in no_grad mode and " + modified + " modified inplace with grad mode enabled."
	}
	switch t.vw.creation {
	case viewMultiOutput:
		msg += " This view is the output of a function that returns multiple views. Such functions do not allow the output views to be modified inplace. You should replace the inplace operation by an out-of-place one."
	case viewNoGrad:
		msg += " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked)."
	}
	return &AutogradError{Op: op, Msg: msg}
}

// rebase records the in-place op whose node is fn, just written into the
// view t, on t's base: the base takes a CopySlices node over its previous
// history and t's history becomes a view of that (refresh). fn's edges to
// t's history before the op (its self input) are folded into CopySlices.
func (t *Tensor) rebase(fn *node) {
	base := t.vw.base
	var self *node
	if t.ag != nil {
		self = t.ag.node
	}
	cs := &node{name: "CopySlices", edges: []edge{gradEdge(base)}, saved: fn.saved, custom: fn.custom, inner: fn}
	var fused, kept []int
	for j, e := range fn.edges {
		if self != nil && e.fn == self {
			fused = append(fused, j)
		} else {
			cs.edges = append(cs.edges, e)
			kept = append(kept, j)
		}
	}
	b, vg := geometryOf(base), geometryOf(t)
	cs.backward = func(g *Tensor) []*Tensor {
		whole, part := b.layout(g, vg, g)
		gs := fn.backward(part.Clone())
		var gself *Tensor
		for _, j := range fused {
			if j < len(gs) && gs[j] != nil {
				gj := fitGrad(gs[j].Detach(), fn.edges[j])
				if gself == nil {
					gself = gj
				} else {
					gself = gself.Add(gj)
				}
			}
		}
		if gself == nil {
			part.FillInPlace(0)
		} else {
			part.CopyFrom(gself)
		}
		out := []*Tensor{whole}
		for _, j := range kept {
			var gj *Tensor
			if j < len(gs) {
				gj = gs[j]
			}
			out = append(out, gj)
		}
		return out
	}
	base.setNode(cs)
	t.refresh()
}

// setNode gives t the history n (nil: none), moving a RetainGrad along.
func (t *Tensor) setNode(n *node) {
	if t.ag == nil {
		if n == nil {
			return
		}
		t.ag = &autograd{}
	}
	if t.ag.node != nil && t.ag.node.retained == t.ag {
		t.ag.node.retained = nil
		if n != nil {
			n.retained = t.ag
		}
	}
	t.ag.node, t.ag.requiresGrad = n, n != nil
}

// geometry is a tensor's layout in its storage.
type geometry struct {
	shape   Shape
	strides []int
	offset  int
}

func geometryOf(t *Tensor) geometry {
	return geometry{t.shape.clone(), append([]int(nil), t.strides...), t.offset}
}

// layout returns a fresh tensor of b's shape laid out with b's strides in a
// storage of its own (PyTorch's new_empty_strided), holding src (nil:
// zeros), with like's dtype and device, and its part at the view geometry
// v of the same storage as b.
func (b geometry) layout(like *Tensor, v geometry, src *Tensor) (whole, part *Tensor) {
	span := 1
	for i, d := range b.shape {
		if d == 0 {
			span = 0
			break
		}
		span += (d - 1) * b.strides[i]
	}
	buf := Zeros(Shape{span}, On(like.dev), Dtype(like.dtype))
	whole = buf.as(b.shape.clone(), append([]int(nil), b.strides...), 0)
	part = buf.as(v.shape.clone(), append([]int(nil), v.strides...), v.offset-b.offset)
	if src != nil {
		whole.CopyFrom(src)
	}
	return whole, part
}
