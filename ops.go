package ember

import (
	"fmt"
	"math"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/optable"
)

// sameDevice panics with *DeviceMismatchError unless all tensors share a device.
func sameDevice(op string, ts ...*Tensor) {
	var devs []Device
	for _, t := range ts {
		if t == nil {
			panic(&ShapeError{Op: op, Msg: "nil tensor"})
		}
		found := false
		for _, d := range devs {
			if d == t.dev {
				found = true
			}
		}
		if !found {
			devs = append(devs, t.dev)
		}
	}
	if len(devs) > 1 {
		panic(&DeviceMismatchError{Op: op, Devices: devs})
	}
}

// BroadcastShapes returns the shape that shapes broadcast to, as NumPy and
// PyTorch define it, or panics with *ShapeError.
func BroadcastShapes(op string, shapes ...Shape) Shape {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := make(Shape, rank)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		for i := range s {
			j := rank - len(s) + i
			switch {
			case s[i] == out[j] || s[i] == 1:
			case out[j] == 1:
				out[j] = s[i]
			default:
				shapeErr(op, fmt.Sprintf("The size of tensor a (%d) must match the size of tensor b (%d) at non-singleton dimension %d", out[j], s[i], j), shapes...)
			}
		}
	}
	return out
}

// expandView is t's view broadcast to shape (stride 0 on broadcast dims).
func (t *Tensor) expandView(shape Shape) backend.View {
	st := make([]int, len(shape))
	lead := len(shape) - t.Dim()
	for i := range shape {
		if i >= lead && t.shape[i-lead] == shape[i] {
			st[i] = t.strides[i-lead]
		}
	}
	return backend.View{S: t.st.s, Shape: shape, Strides: st, Offset: t.offset}
}

func opnd(t *Tensor) operand { return operand{dt: t.dtype, zeroD: t.Dim() == 0} }

// binary runs an elementwise op with promotion and broadcasting.
func binary(op backend.BinaryOp, a, b *Tensor, bScalar bool) *Tensor {
	name := op.String()
	a.live(name)
	b.live(name)
	sameDevice(name, a, b)
	ob := opnd(b)
	ob.scalar = bScalar
	ct := resultType(opnd(a), ob)
	switch op.Class() {
	case optable.Float:
		if !ct.IsFloat() {
			ct = Float32
		}
	case optable.FloatStrict:
		if !ct.IsFloat() {
			panic(&DTypeError{Op: name, DTypes: []DType{a.dtype, b.dtype}, Msg: fmt.Sprintf("%q not implemented for '%s'", name, torchTypeName(ct))})
		}
	case optable.Logical:
		ct = Bool
	}
	switch op {
	case backend.Add, backend.Mul, backend.Maximum, backend.Minimum,
		backend.Fmax, backend.Fmin, backend.Heaviside, backend.BitwiseAnd, backend.BitwiseOr, backend.BitwiseXor:
		if ct == Bool { // bool arithmetic is logical, as in PyTorch
			op = map[backend.BinaryOp]backend.BinaryOp{backend.Add: backend.LogicalOr, backend.Mul: backend.LogicalAnd, backend.Maximum: backend.LogicalOr, backend.Minimum: backend.LogicalAnd,
				backend.Fmax: backend.LogicalOr, backend.Fmin: backend.LogicalAnd, backend.Heaviside: backend.LogicalOr,
				backend.BitwiseAnd: backend.LogicalAnd, backend.BitwiseOr: backend.LogicalOr, backend.BitwiseXor: backend.LogicalXor}[op]
		}
	case backend.Sub:
		if ct == Bool {
			panic(&DTypeError{Op: name, DTypes: []DType{a.dtype, b.dtype}, Msg: "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead"})
		}
		if a.dtype == Bool || b.dtype == Bool {
			panic(&DTypeError{Op: name, DTypes: []DType{a.dtype, b.dtype}, Msg: "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead"})
		}
	}
	if !op.Supports(ct) {
		panic(&DTypeError{Op: name, DTypes: []DType{a.dtype, b.dtype}, Msg: fmt.Sprintf("%q not implemented for '%s'", op.String(), torchTypeName(ct))})
	}
	shape := BroadcastShapes(name, a.shape, b.shape)
	ac, bc := a.Cast(ct), b.Cast(ct)
	checkIntDivisor(op, ct, bc)
	outDT := ct
	if op.IsComparison() {
		outDT = Bool
	}
	out := empty(shape, outDT, a.dev)
	out.be().Binary(op, out.view(), ac.expandView(shape), bc.expandView(shape))
	return recordBinary(op, ac, bc, out)
}

// scalarLike makes a zero-dim tensor of v on t's device for a scalar operand.
func scalarLike(t *Tensor, v float64) *Tensor {
	dt := Int64
	if v != math.Trunc(v) || math.IsInf(v, 0) || math.IsNaN(v) {
		dt = Float32
		if t.dtype == Float64 {
			dt = Float64
		}
	}
	if dt == Int64 && !(v >= -(1<<63) && v < 1<<63) {
		// no int64 holds it: a float scalar (as a Python float), so that
		// an int tensor compares with 1e30 rather than overflowing
		dt = Float64
	}
	if t.dtype.IsFloat() {
		dt = t.dtype // the scalar adopts the tensor's float type: no precision lost to float32
		if !fits(v, dt) {
			// past dt's largest finite value: kept in float64 and rounded
			// to ±Inf by the op's cast, as PyTorch computes
			// half(1) + 1e5 = inf
			dt = Float64
		}
	}
	return Full(Shape{}, v, On(t.dev), Dtype(dt))
}

func binaryScalar(op backend.BinaryOp, t *Tensor, v float64) *Tensor {
	t.nonNil(op.String())
	s := scalarLike(t, v)
	sc := operand{dt: Float32, scalar: true}
	if s.dtype.IsInt() {
		sc.dt = Int64
	}
	// resultType with the scalar's own category
	ct := resultType(opnd(t), sc)
	if ct != s.dtype && !(ct.IsFloat() && s.dtype.IsFloat()) {
		s = Full(Shape{}, v, On(t.dev), Dtype(ct))
	}
	return binary(op, t, s, true)
}

// AddScalar returns t + v.
func (t *Tensor) AddScalar(v float64) *Tensor { return binaryScalar(backend.Add, t, v) }

// SubScalar returns t - v.
func (t *Tensor) SubScalar(v float64) *Tensor { return binaryScalar(backend.Sub, t, v) }

// MulScalar returns t * v.
func (t *Tensor) MulScalar(v float64) *Tensor { return binaryScalar(backend.Mul, t, v) }

// DivScalar returns t / v.
func (t *Tensor) DivScalar(v float64) *Tensor { return binaryScalar(backend.Div, t, v) }

// PowScalar returns t ** v.
func (t *Tensor) PowScalar(v float64) *Tensor {
	t.nonNil("pow")
	if t.dtype.IsInt() && v != math.Trunc(v) {
		return t.Cast(Float32).PowScalar(v)
	}
	if t.dtype.IsInt() && v < 0 {
		panic(&DTypeError{Op: "pow", DTypes: []DType{t.dtype}, Msg: "Integers to negative integer powers are not allowed."})
	}
	// PyTorch computes these exponents as sqrt and rsqrt, which differ from
	// pow at -inf and -0.
	switch v {
	case 0.5:
		return t.Sqrt()
	case -0.5:
		return t.Rsqrt()
	}
	return unary(backend.PowScalar, t, v, 0)
}

// RSubScalar returns v - t (+0 where t is v, as PyTorch's rsub: −t + v,
// not −(t − v)).
func (t *Tensor) RSubScalar(v float64) *Tensor {
	if t == nil || t.dtype == Bool { // sub's errors
		return rename(binaryScalar(backend.Sub, t, v).Neg(), "RsubBackward1")
	}
	return rename(binaryScalar(backend.Add, t.Neg(), v), "RsubBackward1")
}

// EqScalar returns t == v elementwise.
func (t *Tensor) EqScalar(v float64) *Tensor { return binaryScalar(backend.Eq, t, v) }

// LtScalar returns t < v elementwise.
func (t *Tensor) LtScalar(v float64) *Tensor { return binaryScalar(backend.Lt, t, v) }

// GtScalar returns t > v elementwise.
func (t *Tensor) GtScalar(v float64) *Tensor { return binaryScalar(backend.Gt, t, v) }

// unary runs a unary op of the op table on t with parameters ps,
// promoting t as the op's dtype class says.
func unary(op backend.UnaryOp, t *Tensor, ps ...float64) *Tensor {
	name := op.String()
	t.live(name)
	src := t
	switch op.Class() {
	case optable.Logical:
		src = t.Cast(Bool)
	case optable.Float:
		if !t.dtype.IsFloat() {
			src = t.Cast(Float32)
		}
	case optable.FloatStrict:
		if !t.dtype.IsFloat() {
			panic(&DTypeError{Op: name, DTypes: []DType{t.dtype}, Msg: fmt.Sprintf("%q not implemented for '%s'", name, torchTypeName(t.dtype))})
		}
	case optable.Numeric:
		if t.dtype == Bool {
			switch {
			case op == backend.Neg:
				panic(&DTypeError{Op: name, DTypes: []DType{Bool}, Msg: "Negation, the `-` operator, on a bool tensor is not supported"})
			case op.Row().NoBool:
				panic(&DTypeError{Op: name, DTypes: []DType{Bool}, Msg: fmt.Sprintf("%q not implemented for 'Bool'", name)})
			}
			src = t.Cast(Int64)
		}
	}
	if !op.Supports(src.dtype) {
		panic(&DTypeError{Op: name, DTypes: []DType{t.dtype}, Msg: fmt.Sprintf("%q not implemented for '%s'", name, torchTypeName(src.dtype))})
	}
	var p backend.Params
	copy(p[:], ps)
	if op == backend.NanToNum && src.dtype.IsHalf() {
		// ±Inf means the dtype's largest finite value: the two-byte
		// dtype's own, not float32's (which the kernels compute in and
		// which rounds to Inf)
		hmax := map[DType]float64{Float16: 65504, BFloat16: 3.3895313892515355e38}[src.dtype]
		if math.IsInf(p[1], 1) {
			p[1] = hmax
		}
		if math.IsInf(p[2], -1) {
			p[2] = -hmax
		}
	}
	outDT := src.dtype
	if op.Class().BoolOut() {
		outDT = Bool
	}
	out := empty(t.shape, outDT, t.dev)
	out.be().Unary(op, out.view(), src.view(), p)
	return recordUnaryOp(op, src, out, p)
}

// torchTypeName is PyTorch's C++ name of a dtype, as its messages print it.
func torchTypeName(dt DType) string {
	switch dt {
	case Float32:
		return "Float"
	case Float64:
		return "Double"
	case Int64:
		return "Long"
	case Int32:
		return "Int"
	case BFloat16:
		return "BFloat16"
	case Float16:
		return "Half"
	}
	return "Bool"
}

// Clamp limits t to [lo, hi]; pass math.Inf(-1) or math.Inf(1) for no bound.
func (t *Tensor) Clamp(lo, hi float64) *Tensor {
	t.nonNil("clamp")
	if math.IsNaN(lo) || math.IsNaN(hi) { // torch: a NaN bound makes every element NaN (and its gradient 0)
		x := t
		if !x.dtype.IsFloat() {
			x = x.Cast(Float32)
		}
		return rename(x.MulScalar(0).AddScalar(math.NaN()), "ClampBackward1")
	}
	if (t.dtype.IsInt() || t.dtype == Bool) && (lo != math.Trunc(lo) && !math.IsInf(lo, 0) || hi != math.Trunc(hi) && !math.IsInf(hi, 0)) {
		return t.Cast(Float32).Clamp(lo, hi)
	}
	return unary(backend.Clamp, t, lo, hi)
}

// Polygamma returns the n-th derivative of the digamma function at t, as
// torch.polygamma(n, t): Digamma for n = 0, then ψ′, ψ″, ...; a negative
// n panics with a *ValueError.
func (t *Tensor) Polygamma(n int) *Tensor {
	t.nonNil("polygamma")
	if n < 0 {
		panic(&ValueError{Op: "polygamma", Msg: "polygamma(n, x) does not support negative n."})
	}
	return unary(backend.Polygamma, t, float64(n))
}

// Where returns a where cond is true, else b (all broadcast; cond is Bool).
func Where(cond, a, b *Tensor) *Tensor {
	cond.live("where")
	sameDevice("where", cond, a, b)
	if cond.dtype != Bool {
		panic(&DTypeError{Op: "where", DTypes: []DType{cond.dtype}, Msg: "where expected condition to be a boolean tensor"})
	}
	ct := resultType(opnd(a), opnd(b))
	shape := BroadcastShapes("where", cond.shape, a.shape, b.shape)
	ac, bc := a.Cast(ct), b.Cast(ct)
	out := empty(shape, ct, a.dev)
	out.be().Where(out.view(), cond.expandView(shape), ac.expandView(shape), bc.expandView(shape))
	return recordWhere(cond, ac, bc, out)
}

// sumTo reduces g (a broadcast result) back to shape, summing broadcast dims.
func sumTo(g *Tensor, shape Shape) *Tensor {
	if g.shape.Equal(shape) {
		return g
	}
	lead := g.Dim() - len(shape)
	var dims []int
	for i := range g.shape {
		if i < lead || (shape[i-lead] == 1 && g.shape[i] != 1) {
			dims = append(dims, i)
		}
	}
	return g.Sum(Dims(dims...), KeepDim()).Reshape(shape...)
}

// AllClose reports whether |a-b| <= atol + rtol*|b| everywhere (shapes
// broadcast; NaNs are unequal; equal infinities are close), as
// torch.allclose. It computes on the tensors' device and reads back one bool.
func AllClose(a, b *Tensor, rtol, atol float64) bool {
	sameDevice("allclose", a, b)
	BroadcastShapes("allclose", a.shape, b.shape)
	// detached operands record no graph (no NoGrad: it would switch
	// recording off in every goroutine)
	ct := PromoteTypes(a.dtype, b.dtype)
	if !ct.IsFloat() {
		ct = Float64
	}
	x, y := a.Detach().Cast(ct), b.Detach().Cast(ct)
	tol := y.Abs().MulScalar(rtol).AddScalar(atol)
	d := x.Sub(y).Abs()
	close := x.Eq(y).LogicalOr(d.Le(tol).LogicalAnd(d.LtScalar(math.Inf(1)))) // non-finite values are close only when equal
	return close.All().Item() != 0
}

// Equal reports whether a and b have the same shape and elements.
func Equal(a, b *Tensor) bool {
	sameDevice("equal", a, b)
	if !a.shape.Equal(b.shape) {
		return false
	}
	return a.Detach().Eq(b.Detach()).All().Item() != 0
}
