// Package autograd holds torch.autograd.functional's higher-level
// derivatives of functions of tensors, built on ember.Grad: Jacobian,
// Hessian, VJP, JVP (by the double-backward trick) and HVP.
//
// As in PyTorch, the inputs are not modified: each function runs f on
// fresh leaves with the inputs' data (or, with CreateGraph(true), on
// aliases that keep the inputs' graph), the results are detached unless
// CreateGraph(true), and an input f does not depend on gets zeros (torch's
// strict=False). Everything f computes must be differentiable twice where a
// second derivative is taken (Hessian, JVP, HVP): an op without a
// differentiable backward panics with an *ember.AutogradError there.
package autograd

import (
	"fmt"

	"github.com/emberml/ember"
)

// Func is a function of tensors to one tensor.
type Func func(xs []*ember.Tensor) *ember.Tensor

// Option configures the functions of this package.
type Option func(*opts)

type opts struct{ create bool }

// CreateGraph makes the results carry a graph back to the inputs, so that
// they can be differentiated again (create_graph).
func CreateGraph(on bool) Option { return func(o *opts) { o.create = on } }

func options(os []Option) opts {
	o := opts{}
	for _, f := range os {
		if f != nil {
			f(&o)
		}
	}
	return o
}

// prepare gives the tensors f runs on: fresh leaves that require grad, or
// with create views of the inputs that keep their graph (as PyTorch's
// _grad_preprocess).
func prepare(op string, inputs []*ember.Tensor, create bool) []*ember.Tensor {
	if len(inputs) == 0 {
		panic(&ember.ValueError{Op: op, Msg: "expected at least one input"})
	}
	xs := make([]*ember.Tensor, len(inputs))
	for i, x := range inputs {
		if x == nil {
			panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("input %d is nil", i)})
		}
		if create && x.RequiresGrad() {
			xs[i] = x.Reshape(x.Shape()...)
		} else {
			xs[i] = x.Detach().SetRequiresGrad(true)
		}
	}
	return xs
}

// call runs f and checks its result.
func call(op string, f Func, xs []*ember.Tensor) *ember.Tensor {
	if f == nil {
		panic(&ember.ValueError{Op: op, Msg: "nil function"})
	}
	out := f(xs)
	if out == nil {
		panic(&ember.ValueError{Op: op, Msg: "the function returned a nil tensor"})
	}
	return out
}

// grads is ember.Grad of the outputs that require grad with their
// gradients, zeros for the inputs they do not depend on.
func grads(outs, gouts, xs []*ember.Tensor, create, retain bool) []*ember.Tensor {
	var o, g []*ember.Tensor
	for i, t := range outs {
		if t != nil && t.RequiresGrad() {
			o = append(o, t)
			g = append(g, gouts[i])
		}
	}
	var gs []*ember.Tensor
	if len(o) > 0 {
		gs = ember.Grad(o, xs, ember.GradOutputs(g...), ember.CreateGraph(create), ember.RetainGraph(retain || create), ember.AllowUnused(true))
	} else {
		gs = make([]*ember.Tensor, len(xs))
	}
	for i, gi := range gs {
		if gi == nil {
			gs[i] = ember.ZerosLike(xs[i])
		}
	}
	return gs
}

// finish detaches ts unless create.
func finish(create bool, ts ...*ember.Tensor) {
	if create {
		return
	}
	for i, t := range ts {
		if t != nil {
			ts[i] = t.Detach()
		}
	}
}

// VJP returns f(inputs) and the vector-Jacobian product vᵀ·J, one tensor
// per input, as torch.autograd.functional.vjp; v has f's output shape and
// may be nil only for a single-element output.
func VJP(f Func, inputs []*ember.Tensor, v *ember.Tensor, opt ...Option) (out *ember.Tensor, vjp []*ember.Tensor) {
	const op = "vjp"
	o := options(opt)
	xs := prepare(op, inputs, o.create)
	out = call(op, f, xs)
	if v == nil && out.NumElements() != 1 {
		panic(&ember.ValueError{Op: op, Msg: "The vector v can only be None if the user-provided function returns a single Tensor with a single element."})
	}
	vjp = grads([]*ember.Tensor{out}, []*ember.Tensor{v}, xs, o.create, false)
	finish(o.create, vjp...)
	ts := []*ember.Tensor{out}
	finish(o.create, ts...)
	return ts[0], vjp
}

// JVP returns f(inputs) and the Jacobian-vector product J·v (f's output
// shape), as torch.autograd.functional.jvp: v holds one tensor per input,
// of its shape (nil: ones, for single-element inputs). It is computed by
// the double-backward trick: the gradient of vᵀ·(Jᵀ·u) with respect to u.
func JVP(f Func, inputs, v []*ember.Tensor, opt ...Option) (out, jvp *ember.Tensor) {
	const op = "jvp"
	o := options(opt)
	xs := prepare(op, inputs, o.create)
	if v == nil {
		v = make([]*ember.Tensor, len(xs))
	}
	if len(v) != len(xs) {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("v has %d tensors, the inputs %d", len(v), len(xs))})
	}
	for i, vi := range v {
		if vi == nil && xs[i].NumElements() != 1 {
			panic(&ember.ValueError{Op: op, Msg: "The vector v can only be None if the input to the user-provided function is a single Tensor with a single element."})
		}
		if vi != nil && !vi.Shape().Equal(xs[i].Shape()) {
			panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{vi.Shape(), xs[i].Shape()}, Msg: fmt.Sprintf("Mismatch in shape: v[%d] has a shape of %v and inputs[%d] has a shape of %v", i, vi.Shape(), i, xs[i].Shape())})
		}
	}
	out = call(op, f, xs)
	u := ember.ZerosLike(out).SetRequiresGrad(true)
	var gu []*ember.Tensor
	if out.RequiresGrad() {
		gs := ember.Grad([]*ember.Tensor{out}, xs, ember.GradOutputs(u), ember.CreateGraph(true), ember.AllowUnused(true))
		gu = grads(gs, v, []*ember.Tensor{u}, o.create, false)
	} else {
		gu = []*ember.Tensor{ember.ZerosLike(out)}
	}
	ts := []*ember.Tensor{out, gu[0]}
	finish(o.create, ts...)
	return ts[0], ts[1]
}

// Jacobian returns the Jacobian of f at inputs, as
// torch.autograd.functional.jacobian: one tensor per input, of shape
// f's output shape followed by the input's shape.
func Jacobian(f Func, inputs []*ember.Tensor, opt ...Option) []*ember.Tensor {
	const op = "jacobian"
	o := options(opt)
	xs := prepare(op, inputs, o.create)
	out := call(op, f, xs)
	return jacobianOf(out, xs, o.create)
}

// jacobianOf stacks the gradients of each element of out (one Grad per
// element, the graph retained between them).
func jacobianOf(out *ember.Tensor, xs []*ember.Tensor, create bool) []*ember.Tensor {
	m := out.NumElements()
	flat := out.Reshape(-1)
	rows := make([][]*ember.Tensor, len(xs))
	for e := 0; e < m; e++ {
		hot := oneHot(flat, e).Reshape(out.Shape()...)
		gs := grads([]*ember.Tensor{out}, []*ember.Tensor{hot}, xs, create, true)
		for i, g := range gs {
			rows[i] = append(rows[i], g)
		}
	}
	jac := make([]*ember.Tensor, len(xs))
	for i, x := range xs {
		shape := append(append([]int{}, out.Shape()...), x.Shape()...)
		if m == 0 {
			jac[i] = ember.Zeros(shape, ember.On(x.Device()), ember.Dtype(x.DType()))
			continue
		}
		jac[i] = ember.Stack(rows[i], 0).Reshape(shape...)
	}
	finish(create, jac...)
	return jac
}

// oneHot is a tensor of t's shape and type, 1 at flat index e, 0 elsewhere.
func oneHot(t *ember.Tensor, e int) *ember.Tensor {
	d := make([]float64, t.NumElements())
	d[e] = 1
	return ember.FromSlice(d, t.Shape(), ember.On(t.Device())).Cast(t.DType())
}

// Hessian returns the Hessian of the scalar function f at inputs, as
// torch.autograd.functional.hessian: H[i][j] is the block of second
// derivatives with respect to inputs i and j, of shape inputs[i]'s shape
// followed by inputs[j]'s.
func Hessian(f Func, inputs []*ember.Tensor, opt ...Option) [][]*ember.Tensor {
	const op = "hessian"
	o := options(opt)
	xs := prepare(op, inputs, o.create)
	out := call(op, f, xs)
	scalarOut(op, out)
	gs := grads([]*ember.Tensor{out}, []*ember.Tensor{nil}, xs, true, true)
	h := make([][]*ember.Tensor, len(xs))
	for i, g := range gs {
		h[i] = jacobianOf(g, xs, o.create)
	}
	return h
}

func scalarOut(op string, out *ember.Tensor) {
	if out.NumElements() != 1 {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("The Tensor returned by the function given to %s should contain a single element", op)})
	}
}

// HVP returns the scalar f(inputs) and the product of its Hessian with v
// (one tensor per input, of its shape), as torch.autograd.functional.hvp.
func HVP(f Func, inputs, v []*ember.Tensor, opt ...Option) (out *ember.Tensor, hvp []*ember.Tensor) {
	const op = "hvp"
	o := options(opt)
	xs := prepare(op, inputs, o.create)
	if len(v) != len(xs) {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("v has %d tensors, the inputs %d", len(v), len(xs))})
	}
	for i, vi := range v {
		if vi == nil || !vi.Shape().Equal(xs[i].Shape()) {
			panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("v[%d] must have inputs[%d]'s shape %v", i, i, xs[i].Shape())})
		}
	}
	out = call(op, f, xs)
	scalarOut(op, out)
	gs := grads([]*ember.Tensor{out}, []*ember.Tensor{nil}, xs, true, false)
	hvp = grads(gs, v, xs, o.create, false)
	ts := []*ember.Tensor{out}
	finish(o.create, ts...)
	finish(o.create, hvp...)
	return ts[0], hvp
}
