package ember

import (
	"fmt"

	"github.com/emberml/ember/backend"
)

// In-place ops (PyTorch's trailing-underscore methods): they write t
// through its view, bump its storage's version (so Backward can tell a
// saved tensor was modified) and refuse tensors that are part of a graph.

// inPlace checks that t may be written in place and bumps its version.
func (t *Tensor) inPlace(op string) {
	t.live(op)
	if t.RequiresGrad() && IsGradEnabled() {
		if t.IsLeaf() {
			panic(&AutogradError{Op: op, Msg: "a leaf Variable that requires grad is being used in an in-place operation."})
		}
		panic(&AutogradError{Op: op, Msg: "in-place operations on tensors that are part of a graph are not supported; use the out-of-place op"})
	}
	if t.dev.Type == MetaType {
		return
	}
	t.st.version.Add(1)
}

// operandFor brings o to t's device check, dtype and shape for an in-place
// op writing t, as PyTorch's in-place broadcasting and casting rules.
func (t *Tensor) operandFor(op string, o *Tensor, resultDT DType) *Tensor {
	o.live(op)
	sameDevice(op, t, o)
	if !BroadcastShapes(op, t.shape, o.shape).Equal(t.shape) {
		shapeErr(op, "output with shape "+t.shape.String()+" doesn't match the broadcast shape "+BroadcastShapes(op, t.shape, o.shape).String(), t.shape, o.shape)
	}
	if resultDT.Category() > t.dtype.Category() {
		panic(&DTypeError{Op: op, DTypes: []DType{t.dtype, o.dtype}, Msg: fmt.Sprintf("result type %s can't be cast to the desired output type %s", resultDT, t.dtype)})
	}
	return o.Detach().Cast(t.dtype)
}

func (t *Tensor) binaryInPlace(name string, op backend.BinaryOp, o *Tensor) *Tensor {
	t.inPlace(name)
	oc := t.operandFor(name, o, resultType(opnd(t), opnd(o)))
	t.checkWrite(name, oc)
	t.be().Binary(op, t.view(), t.view(), oc.expandView(t.shape))
	return t
}

// CopyFrom copies src into t (t.copy_(src)): src broadcasts to t's shape
// and is converted to t's dtype and moved to t's device. t may be a view;
// it is written through. It returns t.
func (t *Tensor) CopyFrom(src *Tensor) *Tensor {
	const name = "copy_"
	t.inPlace(name)
	src.live(name)
	if src.dev != t.dev {
		src = src.Detach().To(t.dev)
	}
	if !BroadcastShapes(name, t.shape, src.shape).Equal(t.shape) {
		shapeErr(name, "src cannot be broadcast to the destination's shape", t.shape, src.shape)
	}
	t.checkWrite(name, src)
	if t.dev.Type == MetaType {
		return t
	}
	t.be().Copy(t.view(), src.expandView(t.shape))
	return t
}

// AddInPlace adds o (broadcast to t's shape) to t (t.add_(o)); returns t.
func (t *Tensor) AddInPlace(o *Tensor) *Tensor { return t.binaryInPlace("add_", backend.Add, o) }

// SubInPlace subtracts o from t (t.sub_(o)); returns t.
func (t *Tensor) SubInPlace(o *Tensor) *Tensor { return t.binaryInPlace("sub_", backend.Sub, o) }

// MulInPlace multiplies t by o (t.mul_(o)); returns t.
func (t *Tensor) MulInPlace(o *Tensor) *Tensor { return t.binaryInPlace("mul_", backend.Mul, o) }

// DivInPlace divides t by o (t.div_(o)); t must be floating point. Returns t.
func (t *Tensor) DivInPlace(o *Tensor) *Tensor {
	t.nonNil("div_")
	o.nonNil("div_")
	if !t.dtype.IsFloat() {
		panic(&DTypeError{Op: "div_", DTypes: []DType{t.dtype, o.dtype}, Msg: "result type Float can't be cast to the desired output type " + t.dtype.String()})
	}
	return t.binaryInPlace("div_", backend.Div, o)
}

// AddScaledInPlace adds alpha*o to t (t.add_(o, alpha=alpha)); returns t.
func (t *Tensor) AddScaledInPlace(o *Tensor, alpha float64) *Tensor {
	o.live("add_")
	return t.AddInPlace(o.Detach().MulScalar(alpha))
}

// MulScalarInPlace multiplies t by v (t.mul_(v)); returns t.
func (t *Tensor) MulScalarInPlace(v float64) *Tensor {
	return t.nonNil("mul_").MulInPlace(scalarLike(t, v))
}

// AddScalarInPlace adds v to t (t.add_(v)); returns t.
func (t *Tensor) AddScalarInPlace(v float64) *Tensor {
	return t.nonNil("add_").AddInPlace(scalarLike(t, v))
}

// FillInPlace sets every element of t to v (t.fill_(v)); returns t.
func (t *Tensor) FillInPlace(v float64) *Tensor {
	t.inPlace("fill_")
	checkFits("fill_", v, t.dtype)
	if t.dev.Type != MetaType {
		t.be().Fill(t.view(), v)
	}
	return t
}

// ZeroInPlace sets t to zero (t.zero_()); returns t.
func (t *Tensor) ZeroInPlace() *Tensor { return t.FillInPlace(0) }

// SqrtInPlace replaces t by its square root (t.sqrt_()); t must be floating point.
func (t *Tensor) SqrtInPlace() *Tensor {
	t.inPlace("sqrt_")
	if !t.dtype.IsFloat() {
		panic(&DTypeError{Op: "sqrt_", DTypes: []DType{t.dtype}, Msg: "result type Float can't be cast to the desired output type " + t.dtype.String()})
	}
	t.checkWrite("sqrt_")
	if t.dev.Type != MetaType {
		t.be().Unary(backend.Sqrt, t.view(), t.view(), backend.Params{})
	}
	return t
}

// AddcmulInPlace adds value*a*b to t (t.addcmul_(a, b, value=value)); returns t.
func (t *Tensor) AddcmulInPlace(a, b *Tensor, value float64) *Tensor {
	return t.AddInPlace(a.Detach().Mul(b.Detach()).MulScalar(value))
}

// AddcdivInPlace adds value*a/b to t (t.addcdiv_(a, b, value=value)); returns t.
func (t *Tensor) AddcdivInPlace(a, b *Tensor, value float64) *Tensor {
	return t.AddInPlace(a.Detach().Div(b.Detach()).MulScalar(value))
}
