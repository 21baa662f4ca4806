package ember

import "fmt"

// GradOption configures Grad.
type GradOption func(*gradOpts)

type gradOpts struct {
	gradOutputs []*Tensor
	retain      *bool
	create      bool
	allowUnused bool
}

// GradOutputs gives the gradients of some scalar with respect to each of
// Grad's outputs (grad_outputs): one per output, each of its output's
// shape (or one that broadcasts to it), nil for ones on a scalar output.
func GradOutputs(gs ...*Tensor) GradOption {
	return func(o *gradOpts) { o.gradOutputs = gs }
}

// RetainGraph keeps the graph's saved tensors so that it can be run again
// (retain_graph); it defaults to CreateGraph's value.
func RetainGraph(on bool) GradOption { return func(o *gradOpts) { o.retain = &on } }

// CreateGraph makes the gradients carry a graph of their own, so that they
// can be differentiated again (create_graph).
func CreateGraph(on bool) GradOption { return func(o *gradOpts) { o.create = on } }

// AllowUnused makes Grad return nil for an input the outputs do not
// depend on, instead of panicking (allow_unused).
func AllowUnused(on bool) GradOption { return func(o *gradOpts) { o.allowUnused = on } }

// Grad returns the gradients of outputs with respect to inputs, as
// torch.autograd.grad: the sum over outputs of each output's gradient
// (GradOutputs, ones for a scalar output by default) backpropagated to each
// input, which may be a leaf or an intermediate result. Nothing is
// accumulated into any tensor's Grad, no hooks run, and only the part of
// the graph between the outputs and the inputs runs. The graph's saved
// tensors are freed afterwards unless RetainGraph(true) or
// CreateGraph(true); with CreateGraph the gradients carry a graph of their
// own (for gradient penalties, Hessian-vector products, ...). An input the
// outputs do not depend on panics with an *AutogradError unless
// AllowUnused(true), which gives nil for it. Misuse (an output that does
// not require grad, a non-scalar output without its gradient, an input
// that does not require grad) panics with an *AutogradError or a
// *ShapeError.
func Grad(outputs, inputs []*Tensor, opts ...GradOption) []*Tensor {
	const op = "grad"
	o := gradOpts{}
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	retain := o.create
	if o.retain != nil {
		retain = *o.retain
	}
	if len(outputs) == 0 {
		panic(&ValueError{Op: op, Msg: "grad requires at least one output"})
	}
	if len(inputs) == 0 {
		panic(&ValueError{Op: op, Msg: "grad requires at least one input"})
	}
	if o.gradOutputs != nil && len(o.gradOutputs) != len(outputs) {
		panic(&ValueError{Op: op, Msg: "grad_outputs must be of the same length as outputs"})
	}
	run := &gradRun{create: o.create, leafOut: map[*autograd]int{}, nodeOut: map[slot]int{}, out: make([]*Tensor, len(inputs))}
	for i, in := range inputs {
		if in == nil {
			panic(&ValueError{Op: op, Msg: "nil input"})
		}
		in.live(op).refresh()
		if !in.RequiresGrad() {
			panic(&AutogradError{Op: op, Msg: "One of the differentiated Tensors does not require grad"})
		}
		if in.ag.node != nil {
			if _, dup := run.nodeOut[slotOf(in)]; !dup {
				run.nodeOut[slotOf(in)] = i
			}
		} else if _, dup := run.leafOut[in.ag]; !dup {
			run.leafOut[in.ag] = i
		}
	}
	var roots []slot
	var rootGrads []*Tensor
	for i, t := range outputs {
		if t == nil {
			panic(&ValueError{Op: op, Msg: "nil output"})
		}
		t.live(op).refresh()
		if !t.RequiresGrad() {
			panic(&AutogradError{Op: op, Msg: fmt.Sprintf("element %d of tensors does not require grad and does not have a grad_fn", i)})
		}
		var g *Tensor
		if o.gradOutputs != nil {
			g = o.gradOutputs[i]
		}
		g = rootGrad(op, i, t, g, o.create)
		if t.ag.node == nil {
			if j, ok := run.leafOut[t.ag]; ok {
				run.collect(j, g)
			}
			continue
		}
		roots = append(roots, slotOf(t))
		rootGrads = append(rootGrads, g)
	}
	body := func() {
		if len(roots) > 0 {
			runGraph(roots, rootGrads, retain, &pass{}, run)
		}
	}
	if o.create {
		EnableGrad(body)
	} else {
		body()
	}
	// an input given twice gets the same gradient
	for i, in := range inputs {
		var j int
		if in.ag.node != nil {
			j = run.nodeOut[slotOf(in)]
		} else {
			j = run.leafOut[in.ag]
		}
		if j != i {
			run.out[i] = run.out[j]
		}
	}
	for i, g := range run.out {
		if g == nil {
			if !o.allowUnused {
				panic(&AutogradError{Op: op, Msg: "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior."})
			}
			continue
		}
		if !o.create {
			g = g.Detach()
		}
		if !g.shape.Equal(inputs[i].shape) || g.dtype != inputs[i].dtype || g.dev != inputs[i].dev {
			g = fitGrad(g, edge{shape: inputs[i].shape, dtype: inputs[i].dtype, dev: inputs[i].dev})
		}
		run.out[i] = g
	}
	return run.out
}
