package ember

import (
	"fmt"
	"math"

	"github.com/emberml/ember/backend"
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
				shapeErr(op, fmt.Sprintf("The size of tensor a (%d) must match the size of tensor b (%d) at non-singleton dimension %d", out[j], s[i], i), shapes...)
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
	switch op {
	case backend.Div, backend.Atan2:
		if !ct.IsFloat() {
			ct = Float32
		}
	case backend.LogicalAnd, backend.LogicalOr, backend.LogicalXor:
		ct = Bool
	case backend.Add, backend.Mul, backend.Maximum, backend.Minimum:
		if ct == Bool { // bool arithmetic is logical, as in PyTorch
			op = map[backend.BinaryOp]backend.BinaryOp{backend.Add: backend.LogicalOr, backend.Mul: backend.LogicalAnd, backend.Maximum: backend.LogicalOr, backend.Minimum: backend.LogicalAnd}[op]
		}
	case backend.Sub:
		if ct == Bool {
			panic(&DTypeError{Op: name, DTypes: []DType{a.dtype, b.dtype}, Msg: "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead"})
		}
		if a.dtype == Bool || b.dtype == Bool {
			panic(&DTypeError{Op: name, DTypes: []DType{a.dtype, b.dtype}, Msg: "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead"})
		}
	}
	shape := BroadcastShapes(name, a.shape, b.shape)
	ac, bc := a.Cast(ct), b.Cast(ct)
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
	if t.dtype.IsFloat() {
		dt = t.dtype // the scalar adopts the tensor's float type: no precision lost to float32
	}
	return Full(Shape{}, v, On(t.dev), Dtype(dt))
}

func binaryScalar(op backend.BinaryOp, t *Tensor, v float64) *Tensor {
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

// Add returns a + b, broadcast.
func (t *Tensor) Add(o *Tensor) *Tensor { return binary(backend.Add, t, o, false) }

// Sub returns a - b, broadcast.
func (t *Tensor) Sub(o *Tensor) *Tensor { return binary(backend.Sub, t, o, false) }

// Mul returns a * b, broadcast.
func (t *Tensor) Mul(o *Tensor) *Tensor { return binary(backend.Mul, t, o, false) }

// Div returns a / b (true division: integers give Float32), broadcast.
func (t *Tensor) Div(o *Tensor) *Tensor { return binary(backend.Div, t, o, false) }

// Pow returns a ** b, broadcast.
func (t *Tensor) Pow(o *Tensor) *Tensor { return binary(backend.Pow, t, o, false) }

// Maximum returns the elementwise maximum (NaN propagates).
func (t *Tensor) Maximum(o *Tensor) *Tensor { return binary(backend.Maximum, t, o, false) }

// Minimum returns the elementwise minimum (NaN propagates).
func (t *Tensor) Minimum(o *Tensor) *Tensor { return binary(backend.Minimum, t, o, false) }

// Remainder returns a mod b with the sign of b (torch.remainder).
func (t *Tensor) Remainder(o *Tensor) *Tensor { return binary(backend.Remainder, t, o, false) }

// FloorDivide returns floor(a / b).
func (t *Tensor) FloorDivide(o *Tensor) *Tensor { return binary(backend.FloorDiv, t, o, false) }

// Atan2 returns atan2(a, b).
func (t *Tensor) Atan2(o *Tensor) *Tensor { return binary(backend.Atan2, t, o, false) }

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

// RSubScalar returns v - t.
func (t *Tensor) RSubScalar(v float64) *Tensor {
	return rename(binaryScalar(backend.Sub, t, v).Neg(), "RsubBackward1")
}

// Eq returns a == b elementwise, as Bool.
func (t *Tensor) Eq(o *Tensor) *Tensor { return binary(backend.Eq, t, o, false) }

// Ne returns a != b elementwise, as Bool.
func (t *Tensor) Ne(o *Tensor) *Tensor { return binary(backend.Ne, t, o, false) }

// Lt returns a < b elementwise, as Bool.
func (t *Tensor) Lt(o *Tensor) *Tensor { return binary(backend.Lt, t, o, false) }

// Le returns a <= b elementwise, as Bool.
func (t *Tensor) Le(o *Tensor) *Tensor { return binary(backend.Le, t, o, false) }

// Gt returns a > b elementwise, as Bool.
func (t *Tensor) Gt(o *Tensor) *Tensor { return binary(backend.Gt, t, o, false) }

// Ge returns a >= b elementwise, as Bool.
func (t *Tensor) Ge(o *Tensor) *Tensor { return binary(backend.Ge, t, o, false) }

// EqScalar returns t == v elementwise.
func (t *Tensor) EqScalar(v float64) *Tensor { return binaryScalar(backend.Eq, t, v) }

// LtScalar returns t < v elementwise.
func (t *Tensor) LtScalar(v float64) *Tensor { return binaryScalar(backend.Lt, t, v) }

// GtScalar returns t > v elementwise.
func (t *Tensor) GtScalar(v float64) *Tensor { return binaryScalar(backend.Gt, t, v) }

// LogicalAnd, LogicalOr, LogicalXor treat nonzero as true.
func (t *Tensor) LogicalAnd(o *Tensor) *Tensor { return binary(backend.LogicalAnd, t, o, false) }

// LogicalOr is the elementwise or.
func (t *Tensor) LogicalOr(o *Tensor) *Tensor { return binary(backend.LogicalOr, t, o, false) }

// LogicalXor is the elementwise exclusive or.
func (t *Tensor) LogicalXor(o *Tensor) *Tensor { return binary(backend.LogicalXor, t, o, false) }

// floatOnly ops promote integer inputs to Float32, as PyTorch does.
func floatOnly(op backend.UnaryOp) bool {
	switch op {
	case backend.Neg, backend.Abs, backend.ReLU, backend.Sign, backend.Square, backend.Clamp,
		backend.PowScalar, backend.Floor, backend.Ceil, backend.Round, backend.LogicalNot:
		return false
	}
	return true
}

func unary(op backend.UnaryOp, t *Tensor, p1, p2 float64) *Tensor {
	name := op.String()
	t.live(name)
	src := t
	switch {
	case op == backend.LogicalNot:
		src = t.Cast(Bool)
	case t.dtype == Bool && op != backend.LogicalNot:
		if floatOnly(op) {
			src = t.Cast(Float32)
		} else {
			src = t.Cast(Int64)
		}
	case floatOnly(op) && !t.dtype.IsFloat():
		src = t.Cast(Float32)
	}
	if op == backend.Neg && t.dtype == Bool {
		panic(&DTypeError{Op: name, DTypes: []DType{Bool}, Msg: "Negation, the `-` operator, on a bool tensor is not supported"})
	}
	out := empty(t.shape, src.dtype, t.dev)
	out.be().Unary(op, out.view(), src.view(), p1, p2)
	return recordUnaryOp(op, src, out, p1, p2)
}

// Neg returns -t.
func (t *Tensor) Neg() *Tensor { return unary(backend.Neg, t, 0, 0) }

// Abs returns |t|.
func (t *Tensor) Abs() *Tensor { return unary(backend.Abs, t, 0, 0) }

// Exp returns e**t.
func (t *Tensor) Exp() *Tensor { return unary(backend.Exp, t, 0, 0) }

// Log returns the natural logarithm.
func (t *Tensor) Log() *Tensor { return unary(backend.Log, t, 0, 0) }

// Sqrt returns the square root.
func (t *Tensor) Sqrt() *Tensor { return unary(backend.Sqrt, t, 0, 0) }

// Rsqrt returns 1/sqrt(t).
func (t *Tensor) Rsqrt() *Tensor { return unary(backend.Rsqrt, t, 0, 0) }

// Sin returns the sine.
func (t *Tensor) Sin() *Tensor { return unary(backend.Sin, t, 0, 0) }

// Cos returns the cosine.
func (t *Tensor) Cos() *Tensor { return unary(backend.Cos, t, 0, 0) }

// Tanh returns the hyperbolic tangent.
func (t *Tensor) Tanh() *Tensor { return unary(backend.Tanh, t, 0, 0) }

// Sigmoid returns 1/(1+e**-t).
func (t *Tensor) Sigmoid() *Tensor { return unary(backend.Sigmoid, t, 0, 0) }

// ReLU returns max(t, 0).
func (t *Tensor) ReLU() *Tensor { return unary(backend.ReLU, t, 0, 0) }

// Sign returns -1, 0 or 1.
func (t *Tensor) Sign() *Tensor { return unary(backend.Sign, t, 0, 0) }

// Square returns t*t.
func (t *Tensor) Square() *Tensor { return unary(backend.Square, t, 0, 0) }

// Floor rounds down.
func (t *Tensor) Floor() *Tensor { return unary(backend.Floor, t, 0, 0) }

// Ceil rounds up.
func (t *Tensor) Ceil() *Tensor { return unary(backend.Ceil, t, 0, 0) }

// Round rounds half to even, as torch.round.
func (t *Tensor) Round() *Tensor { return unary(backend.Round, t, 0, 0) }

// Log1p returns log(1+t).
func (t *Tensor) Log1p() *Tensor { return unary(backend.Log1p, t, 0, 0) }

// Expm1 returns e**t - 1.
func (t *Tensor) Expm1() *Tensor { return unary(backend.Expm1, t, 0, 0) }

// Erf returns the error function.
func (t *Tensor) Erf() *Tensor { return unary(backend.Erf, t, 0, 0) }

// Reciprocal returns 1/t.
func (t *Tensor) Reciprocal() *Tensor { return unary(backend.Reciprocal, t, 0, 0) }

// LogicalNot returns !t (nonzero is true), as Bool.
func (t *Tensor) LogicalNot() *Tensor { return unary(backend.LogicalNot, t, 0, 0) }

// LeakyReLU returns t where positive, else slope*t.
func (t *Tensor) LeakyReLU(slope float64) *Tensor { return unary(backend.LeakyReLU, t, slope, 0) }

// Clamp limits t to [lo, hi]; pass math.Inf(-1) or math.Inf(1) for no bound.
func (t *Tensor) Clamp(lo, hi float64) *Tensor {
	if t.dtype.IsInt() && (lo != math.Trunc(lo) && !math.IsInf(lo, 0) || hi != math.Trunc(hi) && !math.IsInf(hi, 0)) {
		return t.Cast(Float32).Clamp(lo, hi)
	}
	return unary(backend.Clamp, t, lo, hi)
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
