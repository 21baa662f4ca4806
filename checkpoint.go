package ember

// checkpointNode is the grad_fn name of Checkpoint's output, whose node is
// marked reentrant: a Grad pass refuses to run it (runGraph), as
// PyTorch's reentrant checkpoint.
const checkpointNode = "CheckpointFunctionBackward"

// errCheckpointGrad is PyTorch's refusal of torch.autograd.grad through a
// reentrant checkpoint (whose backward accumulates into the Grad of the
// tensors fn reads instead of returning their gradients).
const errCheckpointGrad = "Checkpointing is not compatible with .grad() or when an `inputs` parameter is passed to .backward(). Please use .backward() and do not pass its `inputs` argument."

// Checkpoint runs fn(inputs...) without keeping its intermediate results
// for backward, and recomputes them when the gradient is needed, as
// torch.utils.checkpoint.checkpoint (the reentrant variant,
// preserve_rng_state=True): memory for compute.
//
// Forward runs fn under NoGrad on detached inputs and keeps only the
// inputs (and the output). When the backward pass reaches the output,
// fn runs again with grad enabled on fresh detached copies of the
// inputs (requiring grad where the originals do), with the random
// generator set back to its state at the forward (so Dropout draws the
// same mask; the generator is restored afterwards) and autocast as it
// was at the forward, and the incoming gradient is backpropagated through
// that recomputed graph: the inputs' gradients flow on, and tensors fn
// reads that are not among the inputs (an nn layer's parameters) get
// their gradients accumulated into their Grad by that inner backward, as
// in PyTorch.
//
// As PyTorch's reentrant checkpoint: if no input requires grad, the
// output does not either (parameters inside fn then get no gradient;
// pass at least one input that requires grad); fn must compute the
// same thing both times (no data-dependent side effects); the inputs may
// not be modified in place before backward (*AutogradError). Under
// NoGrad, Checkpoint is just fn(inputs...). Grad through a Checkpoint
// (one of its inputs reached) panics with PyTorch's *AutogradError
// "Checkpointing is not compatible with .grad() ..."; under
// BackwardCreateGraph the gradients are those of Backward, and
// differentiating the inputs' gradients again panics (PyTorch gives them
// no graph, silently).
//
// Goroutines: grad mode, autocast and Checkpoint belong to the calling
// goroutine. fn's ops must run on the goroutine that calls fn (at the
// forward, Checkpoint's caller's; at the recomputation, the one running
// the backward pass): a goroutine fn starts begins with grad enabled, so
// at the forward it would record a graph Checkpoint does not want (pass
// the mode on with SetGradEnabled(IsGradEnabled(), ...)). The generator
// is global: random draws other goroutines make while a recomputation
// runs come from the restored state, as with PyTorch's fork_rng.
//
// A nil fn is a *ValueError; fn returning nil is an *AutogradError, and
// so is a recomputed output that does not require grad (PyTorch's "none
// of output has requires_grad=True, this checkpoint() is not
// necessary").
func Checkpoint(fn func(in ...*Tensor) *Tensor, inputs ...*Tensor) *Tensor {
	const name = "checkpoint"
	if fn == nil {
		panic(&ValueError{Op: name, Msg: "nil function"})
	}
	for _, t := range inputs {
		if t != nil {
			t.live(name)
		}
	}
	if !IsGradEnabled() {
		return fn(inputs...)
	}
	rngAt := getRNGState()
	ac, _ := autocastSt.get()
	detached := make([]*Tensor, len(inputs))
	for i, t := range inputs {
		if t != nil {
			detached[i] = t.Detach()
		}
	}
	var out *Tensor
	NoGrad(func() { out = fn(detached...) })
	if out == nil {
		panic(&AutogradError{Op: name, Msg: "the checkpointed function returned no tensor"})
	}
	out = out.live(name).Detach() // fresh: fn may return an input
	out = record(checkpointNode, out, inputs, inputs, func(g *Tensor) []*Tensor {
		xs := make([]*Tensor, len(inputs))
		for i, t := range inputs {
			if t != nil {
				xs[i] = t.Detach()
				if t.RequiresGrad() {
					xs[i].SetRequiresGrad(true)
				}
			}
		}
		now := getRNGState()
		setRNGState(rngAt)
		var y *Tensor
		func() {
			defer setRNGState(now)
			autocastSt.with(name, ac, func() {
				EnableGrad(func() { y = fn(xs...) })
			})
		}()
		if y == nil {
			panic(&AutogradError{Op: name, Msg: "the checkpointed function returned no tensor"})
		}
		if !y.RequiresGrad() {
			panic(&AutogradError{Op: name, Msg: "none of output has requires_grad=True, this checkpoint() is not necessary"})
		}
		y.BackwardWith(g)
		gs := make([]*Tensor, len(inputs))
		for i, x := range xs {
			if x != nil && x.RequiresGrad() {
				gs[i] = x.Grad()
			}
		}
		return gs
	})
	if out.ag != nil && out.ag.node != nil {
		out.ag.node.reentrant = true
	}
	return out
}
