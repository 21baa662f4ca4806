package ember

import (
	"fmt"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/optable"
)

// In-place ops (PyTorch's trailing-underscore methods): they write t
// through its view and bump its storage's version (so Backward can tell a
// saved tensor was modified).
//
// In a graph (grad mode on, and t or an operand requiring grad), an
// in-place op is recorded as PyTorch records it: t takes the op's result
// and grad_fn, its old history becoming the op's input (y = x·2;
// y.AddInPlace(b): AddBackward0 over MulBackward0 and b). ember computes
// the result out of place from a copy of t's old value (what the op saves
// for backward, as PyTorch saves original_self) and writes it into t's
// memory, bumping the version, so that a tensor an earlier op saved from t
// fails Backward as in PyTorch ("modified by an inplace operation"). A
// leaf that requires grad is refused, as in PyTorch. A view written in a
// graph (out.Select(1, t).CopyFrom(h), y.Narrow(0, 0, k).AddInPlace(b))
// rebases its base's history, and views of a tensor written in place see
// its new history, as PyTorch's CopySlices (see inplace_views.go).

// inPlace checks that t may be written in place, given the op's tensor
// operands, and bumps its version unless the op must be recorded, which
// it reports (adopt then writes t and bumps the version).
func (t *Tensor) inPlace(op string, operands ...*Tensor) (record bool) {
	t.live(op)
	// a view whose base requires grad counts as requiring it (PyTorch's
	// view requires_grad), also one made in NoGrad, which is refused
	if inGraph(append([]*Tensor{t}, operands...)...) || t.vw != nil && IsGradEnabled() && t.vw.base.RequiresGrad() {
		if t.vw != nil {
			t.checkViewInPlace(op)
		} else if t.RequiresGrad() && t.ag.node == nil {
			panic(&AutogradError{Op: op, Msg: "a leaf Variable that requires grad is being used in an in-place operation."})
		}
		t.refresh() // t.old reads t's history
		record = true
	}
	if !record {
		t.st.version.Add(1)
	}
	// a recorded op bumps the version once, in adopt, after the op saved
	// its operands (PyTorch's count: one per in-place op)
	return record
}

// old is t's value before a recorded in-place op, with t's grad_fn, for
// the op to compute from: a copy in its own memory where the op saves its
// inputs for backward (keep), else t's memory itself, which the op reads
// before adopt writes it.
func (t *Tensor) old(keep bool) *Tensor {
	c := t.Detach()
	if keep {
		c = c.Clone()
	}
	if t.ag != nil && t.ag.requiresGrad {
		c.ag = &autograd{requiresGrad: true, node: t.ag.node, outNr: t.ag.outNr}
	}
	return c
}

// adopt writes r, the result of an in-place op recorded out of place
// (computed from t.old), into t and gives t r's grad_fn. It returns t.
func (t *Tensor) adopt(r *Tensor) *Tensor {
	if r.dtype != t.dtype {
		r = r.Cast(t.dtype)
	}
	if t.dev.Type != MetaType {
		t.be().Copy(t.view(), r.expandView(t.shape))
	}
	// a version for the write itself: the op may have saved t's memory as
	// an operand (y.MulInPlace(y)), which Backward must then refuse
	t.st.version.Add(1)
	var n *node
	if r.ag != nil {
		n = r.ag.node
	}
	if t.vw != nil && n != nil {
		t.rebase(n) // CopySlices on t's base
		return t
	}
	if t.ag == nil {
		t.ag = &autograd{}
	}
	t.setNode(n)
	return t
}

// operandFor checks o against t for an in-place op writing t (device,
// broadcasting to t's shape, and that the result type resultDT can be
// cast to t's dtype), as PyTorch's in-place broadcasting and casting
// rules, and returns o detached, in its own dtype.
func (t *Tensor) operandFor(op string, o *Tensor, resultDT DType) *Tensor {
	o.live(op)
	sameDevice(op, t, o)
	if !BroadcastShapes(op, t.shape, o.shape).Equal(t.shape) {
		shapeErr(op, "output with shape "+t.shape.String()+" doesn't match the broadcast shape "+BroadcastShapes(op, t.shape, o.shape).String(), t.shape, o.shape)
	}
	if resultDT.Category() > t.dtype.Category() {
		panic(&DTypeError{Op: op, DTypes: []DType{t.dtype, o.dtype}, Msg: fmt.Sprintf("result type %s can't be cast to the desired output type %s", resultDT, t.dtype)})
	}
	return o.Detach()
}

// binaryInPlace is t = t op o. As PyTorch, it computes in the result type
// of t and o and rounds once on the store into t: an operand wider than t
// (float32 into bfloat16, float64 into float32) is not rounded to t's
// dtype first.
func (t *Tensor) binaryInPlace(name string, op backend.BinaryOp, o *Tensor) *Tensor {
	rec := t.inPlace(name, o)
	rt := resultType(opnd(t), opnd(o))
	oc := t.operandFor(name, o, rt)
	t.checkWrite(name, oc)
	if rec {
		return t.adopt(binary(op, t.old(op.Row().Saves&(optable.SaveX|optable.SaveCross) != 0), o, false))
	}
	if rt == t.dtype {
		oc = oc.Cast(t.dtype)
		t.be().Binary(op, t.view(), t.view(), oc.expandView(t.shape))
		return t
	}
	tc, oc := t.Detach().Cast(rt), oc.Cast(rt)
	r := empty(t.shape, rt, t.dev)
	r.be().Binary(op, r.view(), tc.view(), oc.expandView(t.shape))
	return t.storeInPlace(name, r, []*Tensor{o}, []*Tensor{tc, oc})
}

// storeInPlace checks that t (written by op) has no internal overlap and
// copies r (t's shape) into t, converting it to t's dtype
// (one rounding), and releases r and the temporaries tmp that share no
// storage with t or the op's operands orig. It returns t.
func (t *Tensor) storeInPlace(op string, r *Tensor, orig, tmp []*Tensor) *Tensor {
	t.checkWrite(op)
	if t.dev.Type != MetaType {
		t.be().Copy(t.view(), r.view())
	}
	orig = append(orig, t)
	for _, x := range append(tmp, r) {
		if x != nil && x.ag == nil && !sharesStorage(x, orig) {
			x.Release()
		}
	}
	return t
}

// inGraph reports whether an in-place op on these tensors (the written
// one first) is recorded: grad mode is on and one of them requires grad.
func inGraph(ts ...*Tensor) bool {
	if !IsGradEnabled() {
		return false
	}
	for _, t := range ts {
		if t != nil && t.RequiresGrad() {
			return true
		}
	}
	return false
}

// halfCompute is the dtype an in-place op whose operands include a
// two-byte float computes in: their result type, widened to float32 where
// it is a two-byte float, as PyTorch's kernels compute them in float32;
// ok is false where no operand is a two-byte float.
func halfCompute(ts ...*Tensor) (DType, bool) {
	half := false
	ops := make([]operand, len(ts))
	for i, x := range ts {
		half = half || x.dtype.IsHalf()
		ops[i] = opnd(x)
	}
	if !half {
		return 0, false
	}
	ct := resultType(ops...)
	if ct.IsHalf() {
		ct = Float32
	}
	return ct, true
}

// CopyFrom copies src into t (t.copy_(src)): src broadcasts to t's shape
// and is converted to t's dtype and moved to t's device. t may be a view;
// it is written through. It returns t.
func (t *Tensor) CopyFrom(src *Tensor) *Tensor {
	const name = "copy_"
	rec := t.inPlace(name, src)
	src.live(name)
	if !BroadcastShapes(name, t.shape, src.shape).Equal(t.shape) {
		shapeErr(name, "src cannot be broadcast to the destination's shape", t.shape, src.shape)
	}
	if rec { // the gradient goes to src; t's old history gets none (CopyBackwards)
		t.checkWrite(name, src)
		none := Zeros(t.shape, On(t.dev), Dtype(Bool))
		return t.adopt(rename(Where(none, t.old(false), src.To(t.dev).Cast(t.dtype)), "CopyBackwards"))
	}
	if src.dev != t.dev {
		src = src.Detach().To(t.dev)
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
// Where t or o is a two-byte float, t + alpha·o is computed in float32
// from their values and rounded once on the store, alpha taking the
// result type of t and o (rounded to it where that is a two-byte float,
// as PyTorch 1.13's CPU kernel and ember's scalars do).
func (t *Tensor) AddScaledInPlace(o *Tensor, alpha float64) *Tensor {
	o.live("add_")
	t.live("add_")
	ct, half := halfCompute(t, o)
	if !half || inGraph(t, o) { // (in a graph: recorded, see inPlace)
		return t.AddInPlace(o.MulScalar(alpha))
	}
	rt := resultType(opnd(t), opnd(o))
	oc := t.operandFor("add_", o, rt)
	t.inPlace("add_")
	switch rt {
	case BFloat16:
		alpha = float64(backend.ToBF16(float32(alpha)).Float32())
	case Float16:
		alpha = float64(backend.ToF16(float32(alpha)).Float32())
	}
	tc, oc := t.Detach().Cast(ct), oc.Cast(ct)
	so := oc.MulScalar(alpha)
	return t.storeInPlace("add_", tc.Add(so), []*Tensor{o}, []*Tensor{tc, oc, so})
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
	rec := t.inPlace("fill_")
	checkFits("fill_", v, t.dtype)
	if rec { // FillBackward0: no gradient to t's old history
		return t.adopt(recordUnary(t.old(false), Full(t.shape, v, On(t.dev), Dtype(t.dtype)), "FillBackward0", func(g *Tensor) *Tensor { return ZerosLike(g) }))
	}
	if t.dev.Type != MetaType {
		t.be().Fill(t.view(), v)
	}
	return t
}

// ZeroInPlace sets t to zero (t.zero_()); returns t.
func (t *Tensor) ZeroInPlace() *Tensor { return t.FillInPlace(0) }

// SqrtInPlace replaces t by its square root (t.sqrt_()); t must be floating point.
func (t *Tensor) SqrtInPlace() *Tensor {
	rec := t.inPlace("sqrt_")
	if !t.dtype.IsFloat() {
		panic(&DTypeError{Op: "sqrt_", DTypes: []DType{t.dtype}, Msg: "result type Float can't be cast to the desired output type " + t.dtype.String()})
	}
	t.checkWrite("sqrt_")
	if rec {
		return t.adopt(t.old(false).Sqrt()) // (sqrt saves its result, not t)
	}
	if t.dev.Type != MetaType {
		t.be().Unary(backend.Sqrt, t.view(), t.view(), backend.Params{})
	}
	return t
}

// AddcmulInPlace adds value*a*b to t (t.addcmul_(a, b, value=value));
// returns t. Where an operand is a two-byte float, t + (value·a)·b is
// computed in float32 (value too) from their values and rounded once on
// the store into t, as PyTorch's kernels.
func (t *Tensor) AddcmulInPlace(a, b *Tensor, value float64) *Tensor {
	return t.addcInPlace("addcmul_", a, b, value, (*Tensor).Mul)
}

// AddcdivInPlace adds value*a/b to t (t.addcdiv_(a, b, value=value));
// returns t. Where an operand is a two-byte float, t + (value·a)/b is
// computed in float32 (value too) from their values and rounded once on
// the store into t, as PyTorch's kernels.
func (t *Tensor) AddcdivInPlace(a, b *Tensor, value float64) *Tensor {
	return t.addcInPlace("addcdiv_", a, b, value, (*Tensor).Div)
}

func (t *Tensor) addcInPlace(name string, a, b *Tensor, value float64, f func(x, y *Tensor) *Tensor) *Tensor {
	t.live(name)
	a.live(name)
	b.live(name)
	ct, half := halfCompute(t, a, b)
	if !half || inGraph(t, a, b) { // (in a graph: recorded, see inPlace)
		return t.AddInPlace(f(a, b).MulScalar(value))
	}
	BroadcastShapes(name, a.shape, b.shape)
	ab := f(a.Detach().Cast(ct).MulScalar(value), b.Detach().Cast(ct))
	t.operandFor(name, ab, resultType(opnd(t), opnd(a), opnd(b)))
	t.inPlace(name)
	tc := t.Detach().Cast(ct)
	return t.storeInPlace(name, tc.Add(ab), []*Tensor{a, b}, []*Tensor{tc, ab})
}
