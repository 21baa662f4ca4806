package ember

import "fmt"

// Function is a differentiable op written outside ember's own ops, as a
// subclass of torch.autograd.Function is in PyTorch: Forward computes the
// output from the inputs with any ember ops (so it runs on every device),
// and Backward maps the output's gradient to the inputs' gradients. Apply
// runs it and records one node named Name() on the autograd graph.
//
// A Function value made per call (for example &myOp{reduction: "sum"})
// may keep non-tensor state in its fields between Forward and Backward;
// tensors Backward needs go through FunctionCtx.SaveForBackward.
type Function interface {
	// Name is the grad_fn name the output reports (GradFn), as PyTorch
	// names a Function's node: "MyOpBackward".
	Name() string
	// Forward returns the output of inputs in (Apply's, in order; nil
	// stays nil). They are detached and the output is recorded only by
	// Apply, so Forward's own ops build no graph: a tensor it reads that
	// is not among its inputs gets no gradient.
	Forward(ctx *FunctionCtx, in []*Tensor) *Tensor
	// Backward returns one gradient per input, given grad, the gradient
	// of some scalar with respect to the output (the output's shape,
	// dtype and device). A gradient may be nil (none), and may have a
	// shape that broadcasts to its input's, another floating dtype or
	// another device: it is summed, cast and moved to the input's. It is
	// called only when some input needs a gradient (ctx.NeedsInputGrad),
	// at most once unless the graph is retained.
	//
	// In a plain backward pass it runs on detached tensors. When a graph
	// of the gradients is being built (Grad or BackwardCreateGraph with
	// create_graph) and the Function is not OnceDifferentiable, it runs
	// with grad mode on, grad carries its own graph and ctx.Saved
	// returns the inputs Forward received and the tensor it returned as
	// the originals, with their graphs (as PyTorch's saved_tensors): a
	// Backward written with ember ops then gives gradients that are
	// themselves differentiable, so the Function can be differentiated
	// twice. A gradient Backward builds
	// from raw data (Float64s, FromSlice) or from a saved intermediate
	// (which has no graph) stays right to first order, but carries no
	// graph back through that path, as in PyTorch: mark such a Function
	// OnceDifferentiable so that a second derivative panics instead.
	Backward(ctx *FunctionCtx, grad *Tensor) []*Tensor
}

// OnceDifferentiable is a Function whose Backward is not itself
// differentiable (it computes from raw data, or from saved intermediates
// without their graphs), as one decorated with PyTorch's
// @once_differentiable: when a graph of the gradients is being built its
// Backward runs as in a plain pass, and differentiating its gradients
// again panics with an *AutogradError instead of giving a wrong result.
// The method does nothing; it marks the type.
type OnceDifferentiable interface {
	Function
	OnceDifferentiable()
}

// FunctionCtx is what one Apply of a Function hands from Forward to
// Backward (PyTorch's ctx).
type FunctionCtx struct {
	saved []*Tensor
	raw   []*Tensor // what SaveForBackward was given, before Detach
	orig  []*Tensor // the saved tensors with their graphs, for create_graph
	graph bool      // Saved returns orig (a create-graph backward)
	needs []bool
}

// SaveForBackward keeps tensors (inputs, the output or intermediates)
// for Backward, as ctx.save_for_backward: Backward panics with an
// *AutogradError if one of them is modified in place before it runs.
func (c *FunctionCtx) SaveForBackward(ts ...*Tensor) {
	if c == nil {
		panic(&ValueError{Op: "function_ctx.save_for_backward", Msg: "nil FunctionCtx"})
	}
	for _, t := range ts {
		c.raw = append(c.raw, t)
		if t != nil {
			t = t.Detach()
		}
		c.saved = append(c.saved, t)
	}
}

// Saved returns the tensors SaveForBackward kept, in order: detached, or
// in a Backward that builds a graph of the gradients (create_graph) the
// inputs and the output with their graphs (see Function.Backward).
func (c *FunctionCtx) Saved() []*Tensor {
	if c == nil {
		panic(&ValueError{Op: "function_ctx.saved", Msg: "nil FunctionCtx"})
	}
	if c.graph {
		return c.orig
	}
	return c.saved
}

// NeedsInputGrad reports whether input i needs a gradient (grad mode is
// on and it requires one), as ctx.needs_input_grad[i]: Backward may skip
// the others' gradients.
func (c *FunctionCtx) NeedsInputGrad(i int) bool {
	if c == nil {
		panic(&ValueError{Op: "function_ctx.needs_input_grad", Msg: "nil FunctionCtx"})
	}
	return i >= 0 && i < len(c.needs) && c.needs[i]
}

// Apply runs fn on inputs and returns its output, recording a node named
// fn.Name() with one edge per input when grad mode is on (IsGradEnabled),
// the output is floating point and some input requires grad. Inputs may be
// nil; they need not share a device unless Forward's ops need them to.
// A Backward that returns other than one gradient per input, or a
// gradient that does not broadcast to its input's shape, panics with an
// *AutogradError naming fn.
func Apply(fn Function, inputs ...*Tensor) *Tensor {
	if fn == nil {
		panic(&ValueError{Op: "apply", Msg: "nil Function"})
	}
	name := fn.Name()
	ctx := &FunctionCtx{needs: make([]bool, len(inputs))}
	in := make([]*Tensor, len(inputs))
	for i, t := range inputs {
		if t == nil {
			continue
		}
		t.live(name)
		in[i] = t.Detach()
		ctx.needs[i] = t.RequiresGrad() && IsGradEnabled()
	}
	out := fn.Forward(ctx, in)
	if out == nil {
		panic(&AutogradError{Op: name, Msg: "Forward returned no tensor"})
	}
	out.live(name)
	fwdOut := out
	out = out.Detach() // a fresh tensor: Forward may return an input or an already recorded result
	check := func(gs []*Tensor) []*Tensor {
		if len(gs) != len(inputs) {
			panic(&AutogradError{Op: name, Msg: fmt.Sprintf("function %s returned an incorrect number of gradients (expected %d, got %d)", name, len(inputs), len(gs))})
		}
		for i, gi := range gs {
			if gi == nil || !ctx.needs[i] {
				continue
			}
			gi.live(name)
			if !broadcastsTo(gi.shape, inputs[i].shape) {
				panic(&AutogradError{Op: name, Msg: fmt.Sprintf("function %s returned an invalid gradient at index %d - got %v but expected shape compatible with %v", name, i, gi.shape, inputs[i].shape)})
			}
			if !gi.dtype.IsFloat() {
				panic(&AutogradError{Op: name, Msg: fmt.Sprintf("function %s returned a gradient of dtype %v at index %d, expected a floating dtype", name, gi.dtype, i)})
			}
		}
		return gs
	}
	out = record(name, out, inputs, ctx.saved, func(g *Tensor) []*Tensor { return check(fn.Backward(ctx, g)) })
	if nd := nodeOf(out); nd != nil {
		nd.custom = true
		if _, once := fn.(OnceDifferentiable); once {
			ctx.raw = nil
			return out // (runTwice: gradients whose backward panics)
		}
		// create_graph: Backward with grad mode on, Saved giving the
		// originals (the raw pointers are dropped: only orig is kept)
		ctx.orig = make([]*Tensor, len(ctx.raw))
		for j, t := range ctx.raw {
			ctx.orig[j] = ctx.saved[j]
			switch {
			case t == nil:
			case t == fwdOut:
				ctx.orig[j] = out
			default:
				for i, x := range in {
					if x != nil && t == x {
						ctx.orig[j] = inputs[i]
						break
					}
				}
			}
		}
		ctx.raw = nil
		nd.twice = func(g *Tensor) []*Tensor {
			c := *ctx
			c.graph = true
			return check(fn.Backward(&c, g))
		}
	}
	ctx.raw = nil
	return out
}

// broadcastsTo reports whether a gradient of shape g can be summed to an
// input of shape in (or has its elements in another shape of as many
// dims or fewer, as the engine reshapes those).
func broadcastsTo(g, in Shape) bool {
	if g.Equal(in) || (g.NumElements() == in.NumElements() && len(g) < len(in)) {
		return true
	}
	if len(g) < len(in) {
		return false
	}
	lead := len(g) - len(in)
	for i, d := range in {
		if gd := g[lead+i]; gd != d && d != 1 {
			return false
		}
	}
	return true
}
