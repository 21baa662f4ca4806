package ember

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// Reverse-mode automatic differentiation, after PyTorch's autograd.
//
// An op whose floating-point output depends on an input that requires
// gradients records a node (its grad_fn, named as PyTorch names it, e.g.
// AddmmBackward0) holding a backward function and one edge per such input.
// Backward walks the nodes from the output in topological order and
// accumulates gradients into the leaves' Grad. An op with several outputs
// (Split, Unbind) records one node for all of them (recordMulti): each
// output knows its index, edges lead to a (node, output) slot, and the
// node runs once with all its outputs' gradients.
//
// Backward functions see only detached tensors: the gradients flowing in the
// engine and the tensors a node saves never require grad, so the ops a
// backward function runs record nothing. Higher-order gradients (Grad and
// BackwardCreateGraph with create_graph) run a node's second, differentiable
// backward (twice, written with ordinary ops over the original tensors)
// with grad mode on, so that the gradients it returns carry a graph; a node
// without one gives results whose own backward panics (runTwice).

// autograd is a tensor's part in reverse-mode differentiation.
type autograd struct {
	requiresGrad bool
	grad         *Tensor     // accumulated gradient (leaves, and non-leaves after RetainGrad)
	node         *node       // grad_fn; nil for leaves
	outNr        int         // which of node's outputs the tensor is (multi-output nodes)
	retain       bool        // RetainGrad on a non-leaf
	hooks        []*gradHook // post-accumulate-grad hooks (leaves)
	// gradMu guards grad: concurrent Backward passes that reach one leaf
	// add into it one at a time (PyTorch's AccumulateGrad holds a mutex)
	gradMu sync.Mutex
}

// gradHook is one RegisterPostAccumulateGradHook registration.
type gradHook struct{ fn func(*Tensor) }

// node is one recorded op (a grad_fn).
type node struct {
	name     string
	edges    []edge // one per input; edges of inputs that need no gradient are empty
	backward func(g *Tensor) []*Tensor
	// twice is backward written with recording ops over the original
	// (non-detached) tensors, run with grad mode on when a graph of the
	// gradient is being built (create_graph); nil where the op has none
	twice    func(g *Tensor) []*Tensor
	saved    []savedVar
	freed    bool
	retained *autograd // the output's autograd when RetainGrad was called
	custom   bool      // recorded by Apply: backward is user code (see runGraph's ownership)
	// reentrant: backward runs its own Backward into leaves' Grad
	// (Checkpoint), which a Grad pass must refuse
	reentrant bool
	inner     *node // CopySlices: the in-place op's node, whose saved tensors it checks
	// A multi-output node (Split, Unbind: PyTorch's SplitBackward0 ...)
	// has nout outputs; its backwardN receives all their gradients at once
	// (nil where none came), runs once, and is differentiable as it is
	// (recording ops only, as selfTwice). retainedN is retained per output.
	nout      int
	backwardN func(gs []*Tensor) []*Tensor
	retainedN []*autograd
	trace     forwardTrace // the forward's call stack, in anomaly mode (anomaly.go)
}

// edge leads from a node to the node (or leaf) of one input.
type edge struct {
	fn    *node
	nr    int // which of fn's outputs the input is
	leaf  *Tensor
	shape Shape
	dtype DType
	dev   Device
}

func (e edge) live() bool { return e.fn != nil || e.leaf != nil }

// savedVar is a tensor a node saved, with its storage's version then.
type savedVar struct {
	st      *storage
	version uint64
}

// AutogradError is the panic of a misuse of autograd (backward through a
// freed graph, an in-place op on a leaf that requires grad, ...).
type AutogradError struct {
	Op  string
	Msg string
}

func (e *AutogradError) Error() string { return e.Op + ": " + e.Msg }

const errSecondBackward = "Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward."

// gradOff holds the grad mode of the goroutines inside NoGrad (true) or
// EnableGrad (false); every other goroutine records graphs.
var gradOff local[bool]

// NoGrad runs f with gradient recording disabled, as torch.no_grad(): ops
// inside f record no graph, and in-place ops on leaves that require grad
// are allowed. The mode belongs to the calling goroutine, as PyTorch's to
// its thread: other goroutines keep recording while f runs, and goroutines
// f starts begin with grad enabled (pass the mode on with SetGradEnabled).
func NoGrad(f func()) { gradOff.with("no_grad", true, f) }

// EnableGrad runs f with gradient recording enabled on the calling
// goroutine, also inside NoGrad (torch.enable_grad()).
func EnableGrad(f func()) { gradOff.with("enable_grad", false, f) }

// SetGradEnabled runs f with grad mode on or off on the calling goroutine
// (torch.set_grad_enabled(on) as a context manager). A goroutine that does
// work for another passes that one's mode on:
//
//	on := ember.IsGradEnabled()
//	go func() { ember.SetGradEnabled(on, work) }()
func SetGradEnabled(on bool, f func()) { gradOff.with("set_grad_enabled", !on, f) }

// IsGradEnabled reports whether ops the calling goroutine runs record
// graphs (false inside NoGrad).
func IsGradEnabled() bool {
	off, _ := gradOff.get()
	return !off
}

// SetRequiresGrad marks t as a leaf whose gradient is wanted and returns t.
// Only floating-point tensors can require gradients, and only leaves can
// change the flag.
func (t *Tensor) SetRequiresGrad(on bool) *Tensor {
	t.nonNil("requires_grad_")
	if on && !t.dtype.IsFloat() {
		panic(&DTypeError{Op: "requires_grad", DTypes: []DType{t.dtype}, Msg: "only floating point tensors can require gradients"})
	}
	if t.ag != nil && t.ag.node != nil {
		panic(&AutogradError{Op: "requires_grad", Msg: "you can only change requires_grad flags of leaf variables."})
	}
	if t.ag == nil {
		if !on {
			return t
		}
		t.ag = &autograd{}
	}
	t.ag.requiresGrad = on
	return t
}

// RequiresGrad reports whether gradients flow to t (also a view whose
// base joined a graph through an in-place op on another of its views).
func (t *Tensor) RequiresGrad() bool {
	// (stale first: it waits for a refresh another goroutine is making)
	return t.nonNil("requires_grad").vw != nil && t.stale() || t.ag != nil && t.ag.requiresGrad
}

// IsLeaf reports whether t was not computed by a recorded op: tensors that
// do not require grad, and tensors created by the user, are leaves.
func (t *Tensor) IsLeaf() bool {
	t.nonNil("is_leaf").refresh()
	return t.ag == nil || t.ag.node == nil
}

// GradFn returns the name of the op that computed t (PyTorch's grad_fn
// class name, e.g. "AddmmBackward0"), or "" for a leaf.
func (t *Tensor) GradFn() string {
	t.nonNil("grad_fn").refresh()
	if t.ag == nil || t.ag.node == nil {
		return ""
	}
	return t.ag.node.name
}

// Grad returns the gradient accumulated into t by Backward, or nil. Only
// leaves (and non-leaves after RetainGrad) get gradients.
func (t *Tensor) Grad() *Tensor {
	t.nonNil("grad")
	if t.ag == nil {
		return nil
	}
	t.ag.gradMu.Lock()
	defer t.ag.gradMu.Unlock()
	return t.ag.grad
}

// SetGrad replaces t's accumulated gradient (nil clears it). g must have
// t's shape, dtype and device (as PyTorch's "assigned grad has data of a
// different size/type" errors).
func (t *Tensor) SetGrad(g *Tensor) {
	t.nonNil("grad")
	if g != nil {
		g.live("set_grad")
		if !g.shape.Equal(t.shape) {
			shapeErr("set_grad", "assigned grad has data of a different size", t.shape, g.shape)
		}
		if g.dtype != t.dtype {
			panic(&DTypeError{Op: "set_grad", DTypes: []DType{t.dtype, g.dtype}, Msg: "assigned grad has data of a different type"})
		}
		sameDevice("set_grad", t, g)
	}
	if t.ag == nil {
		if g == nil {
			return
		}
		t.ag = &autograd{}
	}
	if g != nil {
		g = g.Detach()
	}
	t.ag.gradMu.Lock()
	t.ag.grad = g
	t.ag.gradMu.Unlock()
}

// ZeroGrad clears t's gradient (sets it to nil, as zero_grad(set_to_none=True)).
func (t *Tensor) ZeroGrad() {
	t.nonNil("zero_grad")
	if t.ag != nil {
		t.ag.gradMu.Lock()
		t.ag.grad = nil
		t.ag.gradMu.Unlock()
	}
}

// RetainGrad makes Backward store the gradient of the non-leaf t in Grad.
func (t *Tensor) RetainGrad() *Tensor {
	t.nonNil("retain_grad").refresh()
	if !t.RequiresGrad() {
		panic(&AutogradError{Op: "retain_grad", Msg: "can't retain_grad on Tensor that has requires_grad=False"})
	}
	if n := t.ag.node; n != nil {
		t.ag.retain = true
		if n.nout > 0 {
			n.retainedN[t.ag.outNr] = t.ag
		} else {
			n.retained = t.ag
		}
	}
	return t
}

// Detach returns a view of t's data that takes no part in autograd.
func (t *Tensor) Detach() *Tensor {
	t.nonNil("detach")
	return &Tensor{st: t.st, shape: t.shape, strides: t.strides, offset: t.offset, dtype: t.dtype, dev: t.dev}
}

// DetachInPlace detaches t from the graph that made it, in place (torch's
// detach_): t loses its grad_fn and no longer requires grad; its data and
// Grad stay. The idiom is a buffer reused across steps whose contents
// were written from graph tensors: detaching it after each Backward keeps
// the next step from reaching the old graph. A view cannot be detached in
// place (an *AutogradError with PyTorch's words): use Detach.
func (t *Tensor) DetachInPlace() *Tensor {
	t.nonNil("detach_")
	if t.vw != nil {
		panic(&AutogradError{Op: "detach_", Msg: "Can't detach views in-place. Use detach() instead."})
	}
	if t.ag != nil {
		t.setNode(nil)
	}
	return t
}

// record attaches a node named name to out when grad mode is on, out is
// floating point and some input requires grad. backward maps out's gradient
// to one gradient per input (nil for none); gradients may have a broadcast
// shape or another dtype: the engine sums them to the input's shape and
// casts them to its dtype and device. saved lists the tensors backward
// reads, which must not be modified in place before Backward; a node that
// saves tensors can be run only once unless the graph is retained.
// backward must use only detached tensors.
func record(name string, out *Tensor, inputs []*Tensor, saved []*Tensor, backward func(g *Tensor) []*Tensor) *Tensor {
	if !out.dtype.IsFloat() {
		return out
	}
	need := false
	for _, in := range inputs {
		need = need || in != nil && in.RequiresGrad()
	}
	if !need || !IsGradEnabled() { // the mode last: it costs more than the flags
		return out
	}
	edges := make([]edge, len(inputs))
	for i, in := range inputs {
		if in != nil {
			edges[i] = gradEdge(in)
		}
	}
	n := &node{name: name, edges: edges, backward: backward}
	if IsAnomalyEnabled() {
		n.trace = traceHere()
	}
	for _, s := range saved {
		if s != nil {
			n.saved = append(n.saved, savedVar{st: s.st, version: s.st.version.Load()})
		}
	}
	if out.ag != nil && out.ag.node != nil {
		// out is a fresh result; a second record would be a bug in an op
		panic(fmt.Sprintf("ember: %s recorded twice", name))
	}
	out.ag = &autograd{requiresGrad: true, node: n}
	return out
}

// recordTwice is record with twice, the op's differentiable backward (see
// node.twice): it must read only the original inputs and outputs whose
// detached forms backward reads (so that it keeps no more memory alive),
// and compute with ops that record.
func recordTwice(name string, out *Tensor, inputs []*Tensor, saved []*Tensor, backward, twice func(g *Tensor) []*Tensor) *Tensor {
	out = record(name, out, inputs, saved, backward)
	if out.ag != nil && out.ag.node != nil {
		out.ag.node.twice = twice
	}
	return out
}

// selfTwice marks out's node as differentiable as it is: its backward reads
// no saved float tensor (only shapes, indices, masks) and computes with
// recording ops, so run with grad mode on it builds the gradient's graph.
func selfTwice(out *Tensor) *Tensor {
	if out.ag != nil && out.ag.node != nil && out.ag.node.twice == nil {
		out.ag.node.twice = out.ag.node.backward
	}
	return out
}

// linearTwice is the twice of a backward that is linear in g and reads
// no float tensor of the graph (pooling's, on a raw kernel): the gradient
// is computed as in first order and given a node (named name) back to g
// whose backward is adjoint, the transposed map, in recording ops.
func linearTwice(name string, backward func(g *Tensor) []*Tensor, adjoint func(gg *Tensor) *Tensor) func(g *Tensor) []*Tensor {
	return func(g *Tensor) []*Tensor {
		var gx *Tensor
		NoGrad(func() { gx = backward(g.Detach())[0].Detach() })
		if g.RequiresGrad() {
			back := func(gg *Tensor) []*Tensor { return []*Tensor{adjoint(gg)} }
			gx.ag = &autograd{requiresGrad: true, node: &node{name: name, edges: []edge{gradEdge(g)}, backward: back, twice: back}}
		}
		return []*Tensor{gx}
	}
}

// nodeOf is t's node (grad_fn), nil for a leaf.
func nodeOf(t *Tensor) *node {
	if t.ag == nil {
		return nil
	}
	return t.ag.node
}

// gradEdge is the edge to t's history (t's node, or t itself for a leaf),
// empty where t does not require grad; a view's history is brought up to
// date first (refresh).
func gradEdge(t *Tensor) edge {
	t.refresh()
	if !t.RequiresGrad() {
		return edge{}
	}
	e := edge{shape: t.shape.clone(), dtype: t.dtype, dev: t.dev}
	if t.ag.node != nil {
		e.fn, e.nr = t.ag.node, t.ag.outNr
	} else {
		e.leaf = t
	}
	return e
}

// carryGrad is the hook for ops that copy (To, Cast): the gradient goes
// back to in's device and dtype.
func carryGrad(in, out *Tensor, name string) *Tensor {
	return selfTwice(record(name, out, []*Tensor{in}, nil, func(g *Tensor) []*Tensor { return []*Tensor{g} }))
}

// recordUnary is the hook for one-input ops that save no tensors (views,
// copies); backward maps the output's gradient to the input's.
// backward must be differentiable as it is (see selfTwice).
func recordUnary(in, out *Tensor, name string, backward func(g *Tensor) *Tensor) *Tensor {
	return selfTwice(record(name, out, []*Tensor{in}, nil, func(g *Tensor) []*Tensor { return []*Tensor{backward(g)} }))
}

// recordMulti gives the outputs outs of a one-input op (Split, Unbind)
// one node named name, when grad mode is on and in requires grad:
// backward maps the outputs' gradients (nil for an output that got none)
// to in's, once, with recording ops (it is also the node's differentiable
// backward). outs must be fresh tensors.
func recordMulti(name string, in *Tensor, outs []*Tensor, backward func(gs []*Tensor) *Tensor) {
	if !in.dtype.IsFloat() || !in.RequiresGrad() || !IsGradEnabled() {
		return
	}
	n := &node{name: name, edges: []edge{gradEdge(in)}, nout: len(outs), retainedN: make([]*autograd, len(outs))}
	n.backwardN = func(gs []*Tensor) []*Tensor { return []*Tensor{backward(gs)} }
	if IsAnomalyEnabled() {
		n.trace = traceHere()
	}
	for i, o := range outs {
		o.ag = &autograd{requiresGrad: true, node: n, outNr: i}
	}
}

// rename changes the grad_fn name of a tensor an op has just produced.
func rename(t *Tensor, name string) *Tensor {
	if t.ag != nil && t.ag.node != nil {
		t.ag.node.name = name
	}
	return t
}

// Backward computes the gradient of the scalar t with respect to the graph's
// leaves and accumulates it into their Grad, as t.backward(). The graph's
// saved tensors are freed afterwards; use BackwardRetain to backward again.
func (t *Tensor) Backward() { t.backward(nil, false, "backward") }

// BackwardRetain is Backward with retain_graph=True: the graph can be run again.
func (t *Tensor) BackwardRetain() { t.backward(nil, true, "backward") }

// BackwardWith is t.backward(grad): grad is the gradient of some scalar with
// respect to t (t's shape, or one that broadcasts to it).
func (t *Tensor) BackwardWith(grad *Tensor) { t.backward(grad, false, "backward") }

// BackwardWithRetain is BackwardWith with retain_graph=True.
func (t *Tensor) BackwardWithRetain(grad *Tensor) { t.backward(grad, true, "backward") }

// BackwardCreateGraph is t.backward(grad, create_graph=True): the
// gradients accumulated into the leaves' Grad carry a graph of their own
// (through the ops' differentiable backward), so a function of them can be
// differentiated again; the graph is retained. grad may be nil for a scalar
// t (ones). An op without a differentiable backward gives gradients whose
// own backward panics with an *AutogradError.
func (t *Tensor) BackwardCreateGraph(grad *Tensor) {
	const op = "backward"
	t.live(op).refresh()
	if !t.RequiresGrad() {
		panic(&AutogradError{Op: op, Msg: "element 0 of tensors does not require grad and does not have a grad_fn"})
	}
	grad = rootGrad(op, 0, t, grad, true)
	p := &pass{}
	EnableGrad(func() {
		if t.ag.node == nil {
			accumulate(t, grad, p)
		} else {
			runGraph([]slot{slotOf(t)}, []*Tensor{grad}, true, p, &gradRun{create: true})
		}
	})
	p.finish()
}

func (t *Tensor) backward(grad *Tensor, retain bool, op string) {
	t.live(op).refresh()
	if !t.RequiresGrad() {
		panic(&AutogradError{Op: op, Msg: "element 0 of tensors does not require grad and does not have a grad_fn"})
	}
	grad = rootGrad(op, 0, t, grad, false)
	p := &pass{}
	if t.ag.node == nil {
		accumulate(t, grad, p)
	} else {
		runGraph([]slot{slotOf(t)}, []*Tensor{grad}, retain, p, nil)
	}
	p.finish()
}

// rootGrad is the gradient a backward pass starts from at output t: ones
// for a scalar t when grad is nil, else grad brought to t's shape (from
// one that broadcasts to it) and dtype, detached unless keep (create_graph).
func rootGrad(op string, i int, t, grad *Tensor, keep bool) *Tensor {
	if grad == nil {
		if t.NumElements() != 1 {
			panic(&AutogradError{Op: op, Msg: "grad can be implicitly created only for scalar outputs"})
		}
		return Full(t.shape, 1, On(t.dev), Dtype(t.dtype))
	}
	grad.live(op)
	sameDevice(op, t, grad)
	if !keep {
		grad = grad.Detach()
	}
	if !grad.shape.Equal(t.shape) {
		if !BroadcastShapes(op, grad.shape, t.shape).Equal(t.shape) {
			shapeErr(op, fmt.Sprintf("Mismatch in shape: grad_output[%d] has a shape of %s and output[%d] has a shape of %s", i, grad.shape, i, t.shape), grad.shape, t.shape)
		}
		grad = grad.Expand(t.shape...)
	}
	if !keep {
		grad = grad.Detach()
	}
	return grad.Cast(t.dtype)
}

// accumulate adds g, the whole of one pass's gradient for leaf, into
// leaf's Grad (a fresh tensor: grads never alias), then runs leaf's
// post-accumulate-grad hooks.
func accumulate(leaf *Tensor, g *Tensor, p *pass) {
	accumulateOwned(leaf, g, false, p)
}

// accumulateOwned is accumulate; with own, g belongs to the engine alone
// (nothing else references its storage) and becomes the leaf's Grad
// without a copy when it is a whole, contiguous storage: it reports
// whether it did.
func accumulateOwned(leaf *Tensor, g *Tensor, own bool, p *pass) (adopted bool) {
	func() {
		leaf.ag.gradMu.Lock()
		defer leaf.ag.gradMu.Unlock() // Add may panic (out of memory)
		if leaf.ag.grad == nil {
			if own && g.wholeStorage() {
				leaf.ag.grad, adopted = g, true
			} else {
				leaf.ag.grad = g.Clone()
			}
		} else {
			leaf.ag.grad = leaf.ag.grad.Add(g)
		}
		// a leaf's gradient lives with the leaf, not with the Scope the
		// Backward ran in (gradients accumulated over several scoped
		// micro-batches were released between them)
		unscoped(leaf.ag.grad)
	}()
	if len(leaf.ag.hooks) > 0 {
		p.runHooks(leaf)
	}
	return adopted
}

// --- hooks ---

// pass is one Backward: the callbacks its hooks queued.
type pass struct {
	callbacks []func()
}

// hookMu serialises the hooks of concurrent backward passes, so that
// QueueCallback, called from a hook, knows its pass (activePass) without
// goroutine-local state. A hook may itself run a Backward (as in PyTorch,
// reentrant backward): its goroutine holds hookMu already (hookOwner), so
// that pass's hooks run without taking it again, and activePass is the
// inner pass until they return.
var (
	hookMu     sync.Mutex
	hookOwner  atomic.Uint64 // the goroutine holding hookMu; 0: none
	activePass atomic.Pointer[pass]
)

func (p *pass) runHooks(leaf *Tensor) {
	hooks := leaf.ag.hooks
	if me := gid(); hookOwner.Load() != me {
		hookMu.Lock()
		hookOwner.Store(me)
		defer func() {
			hookOwner.Store(0)
			hookMu.Unlock()
		}()
	}
	prev := activePass.Swap(p)
	defer activePass.Store(prev) // (before the unlock above: defers run last first)
	for _, h := range hooks {
		h.fn(leaf)
	}
}

// finish runs the queued callbacks in order.
func (p *pass) finish() {
	for _, f := range p.callbacks {
		f()
	}
}

// RegisterPostAccumulateGradHook registers fn to run after Backward has
// accumulated a gradient into the leaf t's Grad, as PyTorch's
// register_post_accumulate_grad_hook: once per backward pass that reaches
// t, after all of that pass's contributions to t have been summed and
// added. fn receives t (it may read t.Grad() or replace it with SetGrad)
// and runs in the goroutine calling Backward while the pass goes on with
// the rest of the graph. Hooks of all goroutines' passes run one at a time
// (see QueueCallback), so fn must return promptly and must not wait for
// another goroutine's backward; it may run a Backward of its own in its
// goroutine (reentrant backward), whose hooks then run inside it. The returned function removes the hook.
// t must be a leaf that requires grad, fn not nil. Registering or removing
// a hook while a Backward that reaches t runs is a data race.
func (t *Tensor) RegisterPostAccumulateGradHook(fn func(*Tensor)) (remove func()) {
	const op = "register_post_accumulate_grad_hook"
	t.live(op)
	if !t.RequiresGrad() {
		panic(&AutogradError{Op: op, Msg: "cannot register a hook on a tensor that doesn't require gradient"})
	}
	if !t.IsLeaf() {
		panic(&AutogradError{Op: op, Msg: "post accumulate grad hooks cannot be registered on non-leaf tensors"})
	}
	if fn == nil {
		panic(&ValueError{Op: op, Msg: "nil hook"})
	}
	h := &gradHook{fn: fn}
	// copy on write: a pass reading the old slice keeps it intact
	t.ag.hooks = append(t.ag.hooks[:len(t.ag.hooks):len(t.ag.hooks)], h)
	return func() {
		hs := make([]*gradHook, 0, len(t.ag.hooks))
		for _, o := range t.ag.hooks {
			if o != h {
				hs = append(hs, o)
			}
		}
		t.ag.hooks = hs
	}
}

// QueueCallback schedules fn to run when the backward pass that is running
// the calling hook has gone through its whole graph, before that Backward
// returns, as torch's Variable._execution_engine.queue_callback (DDP uses
// it to finish gradient buckets that parameters unused in this pass left
// incomplete). Callbacks run in the order queued, in the goroutine calling
// Backward, with no hook lock held (they may block). QueueCallback must be
// called from a hook (RegisterPostAccumulateGradHook) while it runs, in
// the hook's goroutine; called outside any hook it panics with an
// *AutogradError, and with a nil fn with a *ValueError.
func QueueCallback(fn func()) {
	mustFunc("queue_callback", fn)
	p := activePass.Load()
	if p == nil {
		panic(&AutogradError{Op: "queue_callback", Msg: "Final callbacks can only be installed during backward pass."})
	}
	p.callbacks = append(p.callbacks, fn)
}

// fitGrad brings g to the edge's shape, dtype and device.
func fitGrad(g *Tensor, e edge) *Tensor {
	if !g.shape.Equal(e.shape) {
		if g.NumElements() == e.shape.NumElements() && len(g.shape) < len(e.shape) {
			g = g.Reshape(e.shape...)
		} else {
			g = sumTo(g, e.shape)
		}
	}
	if g.dev != e.dev {
		g = g.To(e.dev)
	}
	if g.dtype != e.dtype {
		g = g.Cast(e.dtype)
	}
	return g
}

// gradRun is what a pass does besides Backward's plain first-order
// accumulation into the leaves (runGraph's run is nil for that).
type gradRun struct {
	// create builds a graph of the gradients (create_graph): nodes run
	// their twice with grad mode on, nothing is released early
	create bool
	// Grad: the gradients of the inputs are collected into out (leaves by
	// their autograd, non-leaves by their (node, output) slot) instead of
	// accumulated, and only the nodes from which an input is reached run
	leafOut map[*autograd]int
	nodeOut map[slot]int
	out     []*Tensor
}

func (r *gradRun) collect(i int, g *Tensor) {
	if r.out[i] == nil {
		r.out[i] = g
	} else {
		r.out[i] = r.out[i].Add(g)
	}
}

// slot is one output of a node: the history of a non-leaf tensor.
type slot struct {
	n  *node
	nr int
}

// slotOf is the slot of t, a non-leaf.
func slotOf(t *Tensor) slot { return slot{t.ag.node, t.ag.outNr} }

// runGraph runs the graph from roots, each given its gradient.
func runGraph(roots []slot, rootGrads []*Tensor, retain bool, p *pass, run *gradRun) {
	// topological order: reverse post-order of a depth-first walk
	var order []*node
	seen := map[*node]bool{}
	type frame struct {
		n *node
		i int
	}
	for _, rs := range roots {
		root := rs.n
		if seen[root] {
			continue
		}
		stack := []frame{{root, 0}}
		seen[root] = true
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.i < len(f.n.edges) {
				e := f.n.edges[f.i]
				f.i++
				if e.fn != nil && !seen[e.fn] {
					seen[e.fn] = true
					stack = append(stack, frame{e.fn, 0})
				}
				continue
			}
			order = append(order, f.n)
			stack = stack[:len(stack)-1]
		}
	}
	grads := make(map[slot]*Tensor, len(roots))
	for i, root := range roots {
		if prev := grads[root]; prev != nil {
			grads[root] = prev.Add(rootGrads[i])
		} else {
			grads[root] = rootGrads[i]
		}
	}
	collecting := run != nil && run.out != nil
	var reach map[*node]bool
	if collecting {
		// Grad: the nodes from which an input is reached (order lists a
		// node after all those its edges lead to)
		reach = map[*node]bool{}
		for _, n := range order {
			for _, e := range n.edges {
				if e.leaf != nil {
					if _, ok := run.leafOut[e.leaf.ag]; ok {
						reach[n] = true
					}
				} else if e.fn != nil {
					if _, ok := run.nodeOut[slot{e.fn, e.nr}]; ok || reach[e.fn] {
						reach[n] = true
					}
				}
			}
		}
	}
	create := run != nil && run.create
	// A leaf's gradient is summed over the edges that lead to it and
	// accumulated once, when the last of them has been processed (as
	// PyTorch's AccumulateGrad node), so its hooks see the pass's total.
	leafEdges := map[*Tensor]int{}
	if !collecting {
		for _, n := range order {
			for _, e := range n.edges {
				if e.leaf != nil {
					leafEdges[e.leaf]++
				}
			}
		}
	}
	own := newGradOwner()
	if create {
		own.start = ^uint64(0) // nothing is the pass's own: the gradients' graphs keep them
	}
	// collect hands g, input i's gradient, to Grad's caller: never released
	collect := func(i int, g *Tensor) {
		run.collect(i, g)
		own.escape(g)
		own.escape(run.out[i])
	}
	leafGrads := map[*Tensor]*Tensor{}
	toLeaf := func(leaf, g *Tensor) {
		if collecting {
			if i, ok := run.leafOut[leaf.ag]; ok && g != nil {
				collect(i, g)
			} else {
				own.drop(g) // a leaf Grad does not want
			}
			return
		}
		if g != nil {
			if prev := leafGrads[leaf]; prev != nil {
				sum := prev.Add(g)
				own.hold(sum)
				own.drop(prev)
				own.drop(g)
				g = sum
			}
			leafGrads[leaf] = g
		}
		if leafEdges[leaf]--; leafEdges[leaf] > 0 {
			return
		}
		if sum := leafGrads[leaf]; sum != nil {
			delete(leafGrads, leaf)
			sole := own.sole(sum)
			if accumulateOwned(leaf, sum, sole, p) {
				own.give(sum)
			} else {
				own.drop(sum)
			}
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		n := order[i]
		// g is the gradient of n's output; gin those of a multi-output
		// node's outputs (nil where none came), g then their first present
		var g *Tensor
		var gin []*Tensor
		if n.nout == 0 {
			g = grads[slot{n, 0}]
			delete(grads, slot{n, 0})
		} else {
			gin = make([]*Tensor, n.nout)
			for k := range gin {
				if gk, ok := grads[slot{n, k}]; ok {
					gin[k] = gk
					delete(grads, slot{n, k})
					if g == nil {
						g = gk
					}
				}
			}
		}
		if collecting {
			if n.nout == 0 {
				if j, ok := run.nodeOut[slot{n, 0}]; ok && g != nil {
					collect(j, g)
				}
			}
			for k, gk := range gin {
				if j, ok := run.nodeOut[slot{n, k}]; ok && gk != nil {
					collect(j, gk)
				}
			}
			if !reach[n] {
				if n.nout == 0 {
					own.drop(g)
				}
				for _, gk := range gin {
					own.drop(gk)
				}
				continue
			}
		}
		if g == nil {
			for _, e := range n.edges {
				if e.leaf != nil {
					toLeaf(e.leaf, nil)
				}
			}
			continue
		}
		if !collecting {
			if n.nout == 0 {
				retainGrad(n.retained, g)
			}
			for k, gk := range gin {
				retainGrad(n.retainedN[k], gk)
			}
		}
		if n.freed {
			panic(&AutogradError{Op: "backward", Msg: errSecondBackward})
		}
		for _, s := range n.saved {
			if s.st.version.Load() != s.version {
				name := n.name
				if n.inner != nil {
					name = n.inner.name
				}
				msg := fmt.Sprintf("one of the variables needed for gradient computation has been modified by an inplace operation: is at version %d; expected version %d instead (grad_fn=<%s>)", s.st.version.Load(), s.version, name)
				if tr := n.forwardTrace(); tr != nil {
					msg += "\n" + tr.String()
				}
				panic(&AutogradError{Op: "backward", Msg: msg})
			}
		}
		if collecting && n.reentrant {
			panic(&AutogradError{Op: "checkpoint", Msg: errCheckpointGrad})
		}
		var gs []*Tensor
		switch {
		case n.nout > 0:
			if create {
				gs = n.backwardN(gin)
			} else {
				Scope(func() { gs = n.backwardN(gin); Keep(gs...) })
			}
		case create:
			gs = n.runTwice(g)
		case n.custom:
			own.escape(g) // user code may keep the gradient it is given
			gs = n.backward(g)
			for _, gi := range gs {
				own.escape(gi) // and what it returns (its own output, a tensor it keeps)
			}
		default:
			// A built-in backward keeps nothing it makes but what it
			// returns: free its temporaries at once.
			Scope(func() { gs = n.backward(g); Keep(gs...) })
		}
		if IsAnomalyEnabled() {
			checkAnomaly(n, gs)
		}
		if !retain && len(n.saved) > 0 {
			n.freed = true
			n.backward, n.twice = nil, nil
		}
		var spent []*Tensor // fresh results that fitGrad replaced
		for j, e := range n.edges {
			if !e.live() {
				continue
			}
			var gj *Tensor
			if j < len(gs) && gs[j] != nil {
				if create {
					gj = fitGrad(gs[j], e)
				} else {
					gj = fitGrad(gs[j].Detach(), e)
				}
				if n.custom {
					// user code may keep what it returns: never released,
					// also when a later backward passes it on unchanged
					own.escape(gs[j])
					if gj.st != gs[j].st {
						own.hold(gj) // fitGrad's own result
					}
				} else {
					own.hold(gj)
					if gj.st != gs[j].st {
						spent = append(spent, gs[j])
					}
				}
			}
			if e.leaf != nil {
				toLeaf(e.leaf, gj)
				continue
			}
			if gj == nil {
				continue
			}
			es := slot{e.fn, e.nr}
			if prev := grads[es]; prev != nil {
				sum := prev.Add(gj)
				own.hold(sum)
				own.drop(prev)
				own.drop(gj)
				grads[es] = sum
			} else {
				grads[es] = gj
			}
		}
		for _, t := range spent {
			own.discard(t)
		}
		if n.nout == 0 {
			own.drop(g)
		}
		for _, gk := range gin {
			own.drop(gk)
		}
	}
}

// retainGrad adds g into the Grad of a non-leaf that called RetainGrad
// (ag; nil: none did).
func retainGrad(ag *autograd, g *Tensor) {
	if ag == nil || g == nil {
		return
	}
	ag.gradMu.Lock() // Grad() may read it from another goroutine meanwhile
	defer ag.gradMu.Unlock()
	if ag.grad == nil {
		ag.grad = g.Clone()
	} else {
		ag.grad = ag.grad.Add(g)
	}
}

// runTwice runs n's backward for a pass that builds the gradients' graph
// (grad mode is on): twice where n has one; otherwise n's backward on a
// detached g, each gradient then given a node that panics when it is
// backpropagated through (PyTorch's "the derivative for ... is not
// implemented"), so that a higher derivative is never silently wrong.
func (n *node) runTwice(g *Tensor) []*Tensor {
	if n.twice != nil {
		return n.twice(g)
	}
	var gs []*Tensor
	NoGrad(func() { gs = n.backward(g.Detach()) })
	ge := gradEdge(g)
	for j, gj := range gs {
		if gj == nil || !gj.dtype.IsFloat() {
			continue
		}
		gj = gj.Detach()
		edges := append([]edge{ge}, n.edges...)
		name := n.name
		gj.ag = &autograd{requiresGrad: true, node: &node{name: strings.TrimSuffix(name, "0") + "Backward0", edges: edges, backward: func(*Tensor) []*Tensor {
			panic(&AutogradError{Op: "backward", Msg: fmt.Sprintf("the derivative for '%s' is not implemented (double backward through %s is not supported)", name, name)})
		}}}
		gs[j] = gj
	}
	return gs
}

// gradOwner tracks the gradient buffers one backward pass made itself, so
// that it can free each as soon as no gradient it still holds uses it,
// instead of leaving a step's gradients to the garbage collector (which
// made memory, and a VM's page faults, grow with the model). The
// temporaries of a built-in backward function go sooner still: it runs in
// a Scope that keeps only what it returns.
//
// A buffer is the pass's own when its storage was created after the pass
// began by a built-in op's backward or by the engine (fitGrad, the sums of
// gradients): such storages did not exist when the graph was recorded, so
// no saved tensor, input or output can be one, and built-in backward
// functions keep no reference to what they return. refs counts the
// references the engine holds (a storage can be held several times: a
// backward may return its incoming gradient, or views of it, for several
// inputs); at zero the storage is released. Gradients that reach a
// Function's Backward (user code, which may keep them) and what it returns
// are never released.
type gradOwner struct {
	start   uint64 // storages with a larger id were made during the pass
	refs    map[*storage]int
	escaped map[*storage]bool
}

func newGradOwner() *gradOwner {
	return &gradOwner{start: nextID.Load(), refs: map[*storage]int{}, escaped: map[*storage]bool{}}
}

func (o *gradOwner) owns(t *Tensor) bool {
	return t != nil && t.st.id > o.start && !o.escaped[t.st]
}

// hold counts one more engine reference to t's storage, if the pass owns it.
func (o *gradOwner) hold(t *Tensor) {
	if o.owns(t) {
		o.refs[t.st]++
	}
}

// drop removes one engine reference, releasing the storage at the last.
func (o *gradOwner) drop(t *Tensor) {
	if t == nil {
		return
	}
	c, ok := o.refs[t.st]
	if !ok {
		return
	}
	if c > 1 {
		o.refs[t.st] = c - 1
		return
	}
	delete(o.refs, t.st)
	t.Release()
}

// sole reports whether t's storage is the pass's own and held once.
func (o *gradOwner) sole(t *Tensor) bool { return o.refs[t.st] == 1 && !o.escaped[t.st] }

// give hands t's storage over (to a leaf's Grad): the engine forgets it.
func (o *gradOwner) give(t *Tensor) { delete(o.refs, t.st) }

// escape marks t's storage as referenced outside the engine: never released.
func (o *gradOwner) escape(t *Tensor) {
	if t != nil {
		o.escaped[t.st] = true
		delete(o.refs, t.st)
	}
}

// discard releases t, a fresh result of a built-in backward that nothing
// holds (fitGrad made another tensor of it).
func (o *gradOwner) discard(t *Tensor) {
	if o.owns(t) && o.refs[t.st] == 0 {
		t.Release()
	}
}

// wholeStorage reports whether t is contiguous and spans its whole storage,
// so it can be handed over as a Grad (in-place updates of the Grad then
// touch nothing else).
func (t *Tensor) wholeStorage() bool {
	return t.offset == 0 && t.IsContiguous() && t.st.s.Len() == t.NumElements()
}
