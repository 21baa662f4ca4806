package ember

// autograd is a tensor's part in reverse-mode differentiation. The graph
// engine comes with the autograd issue; for now ops record nothing beyond
// the leaf flag, and the hooks below mark where each op will record its node.
type autograd struct {
	requiresGrad bool
	grad         *Tensor
}

// SetRequiresGrad marks t as a leaf whose gradient is wanted and returns t.
func (t *Tensor) SetRequiresGrad(on bool) *Tensor {
	if on && !t.dtype.IsFloat() {
		panic(&DTypeError{Op: "requires_grad", DTypes: []DType{t.dtype}, Msg: "only floating point tensors can require gradients"})
	}
	if t.ag == nil {
		t.ag = &autograd{}
	}
	t.ag.requiresGrad = on
	return t
}

// RequiresGrad reports whether gradients flow to t.
func (t *Tensor) RequiresGrad() bool { return t.ag != nil && t.ag.requiresGrad }

// carryGrad is the hook for ops that copy (To, Cast).
func carryGrad(in, out *Tensor, name string) *Tensor { return out }

// recordUnary is the hook for one-input ops; backward maps the output's
// gradient to the input's.
func recordUnary(in, out *Tensor, name string, backward func(g *Tensor) *Tensor) *Tensor {
	return out
}
