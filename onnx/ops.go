package onnx

import (
	"fmt"
	"math"
	"sort"

	"github.com/emberml/ember"
	pb "github.com/emberml/ember/onnx/internal/onnxpb"
)

// opFunc runs a node: it panics (with an error) on bad input, which the
// caller turns into a *NodeError.
type opFunc func(n *node, in []*ember.Tensor) []*ember.Tensor

var registry = map[string]opFunc{}

func reg(fn opFunc, names ...string) {
	for _, s := range names {
		registry[s] = fn
	}
}

// unsupportedFamilies explains the op families ember does not implement.
var unsupportedFamilies = map[string]string{}

func init() {
	fam := func(reason string, ops ...string) {
		for _, o := range ops {
			unsupportedFamilies[o] = reason
		}
	}
	fam("string tensors are not implemented", "StringNormalizer", "TfIdfVectorizer", "RegexFullMatch", "StringConcat", "StringSplit")
	fam("quantized ops are not implemented (ember has no int8 kernels)", "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear",
		"QLinearConv", "QLinearMatMul", "MatMulInteger", "ConvInteger")
	fam("training ops are not implemented (ONNX training)", "Adam", "Adagrad", "Momentum", "Gradient")
	fam("random ops are not implemented (their outputs cannot be compared)", "RandomNormal", "RandomUniform", "RandomNormalLike",
		"RandomUniformLike", "Bernoulli", "Multinomial")
	fam("signal processing ops are not implemented", "DFT", "STFT", "MelWeightMatrix", "BlackmanWindow", "HammingWindow", "HannWindow")
	fam("detection ops are not implemented", "NonMaxSuppression", "RoiAlign", "MaxRoiPool")
}

func unsupportedReason(op string) string { return unsupportedFamilies[op] }

func lookup(n *node) opFunc {
	if n.domain != "" && n.domain != "ai.onnx" {
		return nil
	}
	return registry[n.opType]
}

// --- errors and attributes ---

func fail(f string, a ...any) { panic(fmt.Errorf(f, a...)) }

func unsupported(n *node, f string, a ...any) {
	panic(&UnsupportedError{Node: n.label(), OpType: n.opType, Msg: fmt.Sprintf(f, a...)})
}

func (n *node) attr(name string) *pb.AttributeProto { return n.attrs[name] }

func (n *node) has(name string) bool { return n.attrs[name] != nil }

func (n *node) int(name string, def int64) int64 {
	if a := n.attrs[name]; a != nil {
		return a.GetI()
	}
	return def
}

func (n *node) float(name string, def float64) float64 {
	if a := n.attrs[name]; a != nil {
		return float64(a.GetF())
	}
	return def
}

func (n *node) ints(name string) []int64 {
	if a := n.attrs[name]; a != nil {
		return a.GetInts()
	}
	return nil
}

func (n *node) floats(name string) []float32 {
	if a := n.attrs[name]; a != nil {
		return a.GetFloats()
	}
	return nil
}

func (n *node) str(name, def string) string {
	if a := n.attrs[name]; a != nil {
		return string(a.GetS())
	}
	return def
}

// --- tensor helpers ---

// isFloat reports a floating tensor: float32, float64, float16 or bfloat16.
func isFloat(t *ember.Tensor) bool { return t.DType().IsFloat() }

func host(t *ember.Tensor) []int64 {
	if t == nil {
		return nil
	}
	return t.Int64s()
}

func hostF(t *ember.Tensor) []float64 {
	if t == nil {
		return nil
	}
	return t.Float64s()
}

func opt(in []*ember.Tensor, i int) *ember.Tensor {
	if i < len(in) {
		return in[i]
	}
	return nil
}

func toInts(v []int64) []int {
	if v == nil {
		return nil
	}
	r := make([]int, len(v))
	for i, x := range v {
		r[i] = int(x)
	}
	return r
}

func axis(a int64, rank int) int {
	if a < -int64(rank) || a >= int64(rank) && !(rank == 0 && a == 0) {
		fail("axis %d out of range for rank %d", a, rank)
	}
	if a < 0 {
		a += int64(rank)
	}
	return int(a)
}

func axes(v []int64, rank int) []int {
	if v == nil {
		return nil
	}
	r := make([]int, len(v))
	for i, a := range v {
		r[i] = axis(a, rank)
	}
	return r
}

// check refuses a shape over the node's element limit: MaxElements when
// running, maxFoldElements when folding at load time.
func (n *node) check(sh []int) {
	lim := MaxElements
	if n.folding {
		lim = maxFoldElements
	}
	checkLimit(sh, lim)
}

// limitError is a tensor over the element limit.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

func checkElems(sh []int) { checkLimit(sh, MaxElements) }

func checkLimit(sh []int, lim int64) {
	n := int64(1)
	for _, d := range sh {
		if d < 0 {
			fail("negative dimension in %v", sh)
		}
		if d > 0 && n > lim/int64(d) {
			panic(&limitError{fmt.Sprintf("shape %v holds more than %d elements (onnx.MaxElements)", sh, lim)})
		}
		n *= int64(d)
	}
}

func full(sh []int, v float64, like *ember.Tensor, dt ember.DType) *ember.Tensor {
	checkElems(sh)
	return ember.Full(ember.Shape(sh), v, ember.On(like.Device()), ember.Dtype(dt))
}

func scalarLike(v float64, t *ember.Tensor) *ember.Tensor {
	return ember.Full(ember.Shape{}, v, ember.On(t.Device()), ember.Dtype(t.DType()))
}

func one(t *ember.Tensor) []*ember.Tensor { return []*ember.Tensor{t} }

// asFloat promotes integer tensors to Float32 for math that needs it.
func asFloat(t *ember.Tensor) *ember.Tensor {
	if isFloat(t) {
		return t
	}
	return t.Cast(ember.Float32)
}

// --- elementwise ---

func unaryOp(f func(x *ember.Tensor) *ember.Tensor) opFunc {
	return func(n *node, in []*ember.Tensor) []*ember.Tensor { return one(f(in[0])) }
}

func binaryOp(f func(a, b *ember.Tensor) *ember.Tensor) opFunc {
	return func(n *node, in []*ember.Tensor) []*ember.Tensor {
		return one(f(in[0], legacyBroadcast(n, in[0], in[1])))
	}
}

// legacyBroadcast applies opset < 7's broadcast=1 with axis: b's dims align
// with a's starting at axis.
func legacyBroadcast(n *node, a, b *ember.Tensor) *ember.Tensor {
	if n.opset >= 7 || n.int("broadcast", 0) == 0 || !n.has("axis") {
		return b
	}
	ax := axis(n.int("axis", 0), a.Dim())
	for b.Dim() < a.Dim()-ax {
		b = b.Unsqueeze(b.Dim())
	}
	return b
}

func variadic(f func(a, b *ember.Tensor) *ember.Tensor, mean bool) opFunc {
	return func(n *node, in []*ember.Tensor) []*ember.Tensor {
		acc := in[0]
		for _, t := range in[1:] {
			acc = f(acc, t)
		}
		if mean && len(in) > 1 {
			acc = acc.DivScalar(float64(len(in)))
		}
		return one(acc)
	}
}

func init() {
	reg(unaryOp((*ember.Tensor).Abs), "Abs")
	reg(unaryOp((*ember.Tensor).Neg), "Neg")
	reg(unaryOp((*ember.Tensor).Exp), "Exp")
	reg(unaryOp((*ember.Tensor).Log), "Log")
	reg(unaryOp((*ember.Tensor).Sqrt), "Sqrt")
	reg(unaryOp((*ember.Tensor).Reciprocal), "Reciprocal")
	reg(unaryOp((*ember.Tensor).Sin), "Sin")
	reg(unaryOp((*ember.Tensor).Cos), "Cos")
	reg(unaryOp((*ember.Tensor).Tan), "Tan")
	reg(unaryOp((*ember.Tensor).Asin), "Asin")
	reg(unaryOp((*ember.Tensor).Acos), "Acos")
	reg(unaryOp((*ember.Tensor).Atan), "Atan")
	reg(unaryOp((*ember.Tensor).Sinh), "Sinh")
	reg(unaryOp((*ember.Tensor).Cosh), "Cosh")
	reg(unaryOp((*ember.Tensor).Asinh), "Asinh")
	reg(unaryOp((*ember.Tensor).Acosh), "Acosh")
	reg(unaryOp((*ember.Tensor).Atanh), "Atanh")
	reg(unaryOp((*ember.Tensor).Tanh), "Tanh")
	reg(unaryOp((*ember.Tensor).Sigmoid), "Sigmoid")
	reg(unaryOp((*ember.Tensor).ReLU), "Relu")
	reg(unaryOp((*ember.Tensor).Floor), "Floor")
	reg(unaryOp((*ember.Tensor).Ceil), "Ceil")
	reg(unaryOp((*ember.Tensor).Round), "Round")
	reg(unaryOp((*ember.Tensor).Sign), "Sign")
	reg(unaryOp((*ember.Tensor).Erf), "Erf")
	reg(unaryOp((*ember.Tensor).LogicalNot), "Not")
	reg(unaryOp((*ember.Tensor).IsNaN), "IsNaN")
	reg(unaryOp((*ember.Tensor).Hardswish), "HardSwish")
	reg(unaryOp((*ember.Tensor).Mish), "Mish")
	reg(unaryOp(func(x *ember.Tensor) *ember.Tensor { return x.Div(x.Abs().AddScalar(1)) }), "Softsign")
	reg(unaryOp(func(x *ember.Tensor) *ember.Tensor { return x.Exp().AddScalar(1).Log() }), "Softplus")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		return one(in[0].LeakyReLU(n.float("alpha", 0.01)))
	}, "LeakyRelu")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor { return one(in[0].ELU(n.float("alpha", 1))) }, "Elu")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		return one(in[0].ELU(n.float("alpha", 1.67326319217681884765625)).MulScalar(n.float("gamma", 1.05070102214813232421875)))
	}, "Selu")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		a := n.float("alpha", 1)
		return one(in[0].DivScalar(a).ELU(1).MulScalar(a))
	}, "Celu")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		return one(in[0].MulScalar(n.float("alpha", 0.2)).AddScalar(n.float("beta", 0.5)).Clamp(0, 1))
	}, "HardSigmoid")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		return one(ember.WhereTensorScalar(x.GtScalar(n.float("alpha", 1)), x, 0))
	}, "ThresholdedRelu")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		l, b := n.float("lambd", 0.5), n.float("bias", 0)
		y := ember.WhereTensorScalar(x.GtScalar(l), x.SubScalar(b), 0)
		return one(ember.Where(x.LtScalar(-l), x.AddScalar(b), y).Cast(x.DType()))
	}, "Shrink")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x, slope := in[0], in[1]
		if slope.Dim() == 1 && x.Dim() >= 2 && slope.Size(0) == x.Size(1) && slope.Size(0) != x.Size(x.Dim()-1) {
			slope = channelShaped(slope, x.Dim()) // opset < 7: one slope per channel
		}
		return one(ember.Where(x.LtScalar(0), x.Mul(slope), x))
	}, "PRelu")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		pos, neg := n.int("detect_positive", 1) != 0, n.int("detect_negative", 1) != 0
		inf := x.IsInf()
		switch {
		case pos && neg:
			return one(inf)
		case pos:
			return one(inf.LogicalAnd(x.GtScalar(0)))
		case neg:
			return one(inf.LogicalAnd(x.LtScalar(0)))
		}
		return one(inf.LogicalAnd(x.IsNaN()))
	}, "IsInf")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor { return one(in[0]) }, "Identity")

	reg(binaryOp((*ember.Tensor).Add), "Add")
	reg(binaryOp((*ember.Tensor).Sub), "Sub")
	reg(binaryOp((*ember.Tensor).Mul), "Mul")
	reg(binaryOp(div), "Div")
	reg(binaryOp(func(a, b *ember.Tensor) *ember.Tensor { return a.Pow(b).Cast(a.DType()) }), "Pow")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		if n.int("fmod", 0) != 0 {
			return one(in[0].Fmod(in[1]))
		}
		return one(in[0].Remainder(in[1]))
	}, "Mod")
	reg(binaryOp((*ember.Tensor).LogicalAnd), "And")
	reg(binaryOp((*ember.Tensor).LogicalOr), "Or")
	reg(binaryOp((*ember.Tensor).LogicalXor), "Xor")
	reg(binaryOp((*ember.Tensor).Eq), "Equal")
	reg(binaryOp((*ember.Tensor).Lt), "Less")
	reg(binaryOp((*ember.Tensor).Gt), "Greater")
	reg(binaryOp((*ember.Tensor).Le), "LessOrEqual")
	reg(binaryOp((*ember.Tensor).Ge), "GreaterOrEqual")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x, y := in[0], in[1]
		p := ember.Full(ember.Shape{}, 2, ember.On(y.Device()), ember.Dtype(ember.Int64)).Pow(y.Cast(ember.Int64))
		if n.str("direction", "") == "LEFT" {
			return one(x.Cast(ember.Int64).Mul(p).Cast(x.DType()))
		}
		return one(x.Cast(ember.Int64).FloorDivide(p).Cast(x.DType()))
	}, "BitShift")
	reg(variadic((*ember.Tensor).Maximum, false), "Max")
	reg(variadic((*ember.Tensor).Minimum, false), "Min")
	reg(variadic((*ember.Tensor).Add, false), "Sum")
	reg(variadic((*ember.Tensor).Add, true), "Mean")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor { return one(ember.Where(in[0], in[1], in[2])) }, "Where")
	reg(clip, "Clip")
	reg(cast, "Cast")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor { return one(in[0].Cast(in[1].DType())) }, "CastLike")
}

// div is ONNX's Div: integer division truncates toward zero.
func div(a, b *ember.Tensor) *ember.Tensor {
	if isFloat(a) || isFloat(b) {
		return a.Div(b)
	}
	if a.DType() == ember.Bool || b.DType() == ember.Bool {
		fail("Div of bool tensors")
	}
	return a.Sub(a.Fmod(b)).FloorDivide(b)
}

func clip(n *node, in []*ember.Tensor) []*ember.Tensor {
	x := in[0]
	lo, hi := opt(in, 1), opt(in, 2)
	if n.opset < 11 {
		lo, hi = nil, nil
		if n.has("min") {
			lo = scalarLike(n.float("min", 0), x)
		}
		if n.has("max") {
			hi = scalarLike(n.float("max", 0), x)
		}
	}
	if lo != nil {
		x = x.Maximum(lo.Cast(x.DType()))
	}
	if hi != nil {
		x = x.Minimum(hi.Cast(x.DType()))
	}
	return one(x)
}

func cast(n *node, in []*ember.Tensor) []*ember.Tensor {
	to := int32(n.int("to", 0))
	dt, err := emberType(to)
	if err != nil {
		unsupported(n, "cast to %s: ember has no such dtype", dtypeName(to))
	}
	x := in[0]
	if x.DType() == dt {
		return one(x)
	}
	if isFloat(x) && dt != ember.Bool && !dt.IsFloat() {
		x = x.Trunc()
	}
	y := x.Cast(dt)
	switch to { // wrap to the narrow type's range, as a C cast does
	case tUint8:
		y = wrapInt(y, 256, false)
	case tInt8:
		y = wrapInt(y, 256, true)
	case tUint16:
		y = wrapInt(y, 65536, false)
	case tInt16:
		y = wrapInt(y, 65536, true)
	}
	return one(y)
}

func wrapInt(y *ember.Tensor, m float64, signed bool) *ember.Tensor {
	r := y.Remainder(scalarLike(m, y))
	if signed {
		r = ember.Where(r.GtScalar(m/2-1), r.Sub(scalarLike(m, y)), r)
	}
	return r
}

// --- reductions ---

func reduceAxes(n *node, in []*ember.Tensor, inputSince int64) ([]int, bool) {
	x := in[0]
	var ax []int64
	if n.opset >= inputSince {
		if a := opt(in, 1); a != nil {
			ax = host(a)
		}
	} else {
		ax = n.ints("axes")
	}
	if len(ax) == 0 {
		if n.int("noop_with_empty_axes", 0) != 0 {
			return nil, true
		}
		all := make([]int, x.Dim())
		for i := range all {
			all[i] = i
		}
		return all, false
	}
	r := axes(ax, x.Dim())
	sort.Ints(r)
	return r, false
}

func reduceOp(since int64, f func(x *ember.Tensor, opts []ember.ReduceOption) *ember.Tensor) opFunc {
	return func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		ax, noop := reduceAxes(n, in, since)
		if noop {
			return one(x)
		}
		keep := n.int("keepdims", 1) != 0
		if len(ax) == 0 { // a scalar
			return one(f(x, nil))
		}
		opts := []ember.ReduceOption{ember.Dims(ax...)}
		if keep {
			opts = append(opts, ember.KeepDim())
		}
		for _, a := range ax {
			if x.Size(a) == 0 {
				fail("reduction over an empty dimension")
			}
		}
		return one(f(x, opts))
	}
}

func init() {
	keepType := func(f func(x *ember.Tensor, o []ember.ReduceOption) *ember.Tensor) func(x *ember.Tensor, o []ember.ReduceOption) *ember.Tensor {
		return func(x *ember.Tensor, o []ember.ReduceOption) *ember.Tensor { return f(x, o).Cast(x.DType()) }
	}
	reg(reduceOp(13, keepType(func(x *ember.Tensor, o []ember.ReduceOption) *ember.Tensor { return x.Sum(o...) })), "ReduceSum")
	reg(reduceOp(18, keepType(func(x *ember.Tensor, o []ember.ReduceOption) *ember.Tensor { return asFloat(x).Mean(o...) })), "ReduceMean")
	reg(reduceOp(18, func(x *ember.Tensor, o []ember.ReduceOption) *ember.Tensor { return x.Max(o...) }), "ReduceMax")
	reg(reduceOp(18, func(x *ember.Tensor, o []ember.ReduceOption) *ember.Tensor { return x.Min(o...) }), "ReduceMin")
	reg(reduceOp(18, keepType(func(x *ember.Tensor, o []ember.ReduceOption) *ember.Tensor { return x.Prod(o...) })), "ReduceProd")
	reg(reduceOp(18, keepType(func(x *ember.Tensor, o []ember.ReduceOption) *ember.Tensor { return x.Abs().Sum(o...) })), "ReduceL1")
	reg(reduceOp(18, keepType(func(x *ember.Tensor, o []ember.ReduceOption) *ember.Tensor {
		return asFloat(x).Square().Sum(o...).Sqrt()
	})), "ReduceL2")
	reg(reduceOp(18, keepType(func(x *ember.Tensor, o []ember.ReduceOption) *ember.Tensor { return asFloat(x).Sum(o...).Log() })), "ReduceLogSum")
	reg(reduceOp(18, keepType(func(x *ember.Tensor, o []ember.ReduceOption) *ember.Tensor { return x.Square().Sum(o...) })), "ReduceSumSquare")
	reg(reduceOp(18, keepType(func(x *ember.Tensor, o []ember.ReduceOption) *ember.Tensor {
		x = asFloat(x)
		ko := append(append([]ember.ReduceOption(nil), o...), ember.KeepDim())
		m := x.Max(ko...)
		m = ember.Where(m.IsInf(), ember.ZerosLike(m), m)
		r := x.Sub(m).Exp().Sum(ko...).Log().Add(m)
		return reshapeLike(r, x.Sum(o...))
	})), "ReduceLogSumExp")
	reg(argOp(true), "ArgMax")
	reg(argOp(false), "ArgMin")
}

func reshapeLike(t, like *ember.Tensor) *ember.Tensor { return t.Reshape(like.Shape()...) }

func argOp(isMax bool) opFunc {
	return func(n *node, in []*ember.Tensor) []*ember.Tensor {
		x := in[0]
		a := axis(n.int("axis", 0), x.Dim())
		keep := n.int("keepdims", 1) != 0
		last := n.int("select_last_index", 0) != 0
		if last {
			x = x.Flip(a)
		}
		var idx *ember.Tensor
		if isMax {
			idx = x.ArgMaxDim(a, keep)
		} else {
			idx = x.ArgMinDim(a, keep)
		}
		if last {
			idx = idx.RSubScalar(float64(x.Size(a) - 1))
		}
		return one(idx.Cast(ember.Int64))
	}
}

// --- softmax family ---

func softmaxLike(n *node, x *ember.Tensor, f func(x *ember.Tensor, d int) *ember.Tensor) *ember.Tensor {
	if n.opset >= 13 {
		return f(x, axis(n.int("axis", -1), x.Dim()))
	}
	a := axis(n.int("axis", 1), x.Dim())
	sh := x.Shape()
	outer := 1
	for _, d := range sh[:a] {
		outer *= d
	}
	inner := 1
	for _, d := range sh[a:] {
		inner *= d
	}
	return f(x.Reshape(outer, inner), 1).Reshape(sh...)
}

func hardmax(x *ember.Tensor, d int) *ember.Tensor {
	idx := x.ArgMaxDim(d, true)
	return ember.ZerosLike(x).Scatter(d, idx, ember.OnesLike(x).Narrow(d, 0, 1))
}

func init() {
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		return one(softmaxLike(n, in[0], func(x *ember.Tensor, d int) *ember.Tensor { return x.Softmax(d) }))
	}, "Softmax")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor {
		return one(softmaxLike(n, in[0], func(x *ember.Tensor, d int) *ember.Tensor { return x.LogSoftmax(d) }))
	}, "LogSoftmax")
	reg(func(n *node, in []*ember.Tensor) []*ember.Tensor { return one(softmaxLike(n, in[0], hardmax)) }, "Hardmax")
}

var _ = math.Inf
