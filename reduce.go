package ember

import (
	"fmt"
	"math"

	"github.com/emberml/ember/backend"
)

// ReduceOption selects the dims of a reduction and whether they are kept.
type ReduceOption func(*reduceOpts)

type reduceOpts struct {
	dims       []int
	dimsSet    bool
	keep       bool
	correction float64
}

// Dims reduces over the given dims (default: all).
func Dims(d ...int) ReduceOption {
	return func(o *reduceOpts) { o.dims, o.dimsSet = append(o.dims, d...), true }
}

// KeepDim keeps reduced dims with size 1.
func KeepDim() ReduceOption { return func(o *reduceOpts) { o.keep = true } }

// Correction sets Var's and Std's divisor to N - c (default 1, Bessel's correction).
func Correction(c float64) ReduceOption { return func(o *reduceOpts) { o.correction = c } }

// reduction resolves options against t: the dims reduced (sorted, unique)
// and the keepdim shape. It reads only t's shape (backward calls it on a
// shape-only Tensor).
func (t *Tensor) reduction(op string, opts []ReduceOption) (reduceOpts, []bool, Shape) {
	o := reduceOpts{correction: 1}
	for _, f := range opts {
		f(&o)
	}
	red := make([]bool, len(t.shape))
	if !o.dimsSet || len(o.dims) == 0 {
		for i := range red {
			red[i] = true
		}
	}
	for _, d := range o.dims {
		if len(t.shape) == 0 {
			wrapDim(op, d, 0, t.shape)
			continue
		}
		d = t.dim(op, d)
		if red[d] && o.dimsSet && len(o.dims) > 1 {
			cnt := 0
			for _, e := range o.dims {
				if wrapDim(op, e, len(t.shape), t.shape) == d {
					cnt++
				}
			}
			if cnt > 1 {
				shapeErr(op, fmt.Sprintf("dim %d appears multiple times in the list of dims", d), t.shape)
			}
		}
		red[d] = true
	}
	keep := t.shape.clone()
	for i, r := range red {
		if r {
			keep[i] = 1
		}
	}
	return o, red, keep
}

func finalShape(keep Shape, red []bool, keepdim bool) Shape {
	if keepdim {
		return keep
	}
	out := Shape{}
	for i, d := range keep {
		if !red[i] {
			out = append(out, d)
		}
	}
	return out
}

func (t *Tensor) reduce(op backend.ReduceOp, name string, outDT DType, opts []ReduceOption) *Tensor {
	t.live(name)
	o, red, keep := t.reduction(name, opts)
	arg := op == backend.ArgMax || op == backend.ArgMin
	src := t
	switch {
	case op == backend.Any || op == backend.All:
		src = t.Cast(Bool)
	case arg:
	case t.dtype.IsHalf() && (outDT == t.dtype || outDT == Float32):
		// accumulated in float32 below
	case src.dtype != outDT:
		src = t.Cast(outDT)
	}
	finish := func(out *Tensor) *Tensor {
		res := out.as(finalShape(keep, red, o.keep), nil, 0)
		res.strides = backend.ContiguousStrides(res.shape)
		return res
	}
	if src.dtype.IsHalf() {
		if !arg {
			// bfloat16 and float16 reduce in float32 and round once, as
			// PyTorch accumulates them.
			out := src.reduceHalf(op, keep)
			if outDT.IsHalf() {
				out = out.Cast(outDT)
			}
			return finish(out)
		}
		src = src.Cast(Float32)
	}
	out := empty(keep, outDT, t.dev)
	out.be().Reduce(op, out.view(), src.view())
	return finish(out)
}

// reduceHalf reduces the bfloat16 or float16 t into a new float32 tensor of
// the keepdim shape keep, unrounded: straight from the two-byte data where
// the backend can (backend.HalfReducer), else through a float32 copy.
func (t *Tensor) reduceHalf(op backend.ReduceOp, keep Shape) *Tensor {
	out := empty(keep, Float32, t.dev)
	if hr, ok := t.be().(backend.HalfReducer); ok && hr.ReduceHalf(op, out.view(), t.view()) {
		return out
	}
	// a float32 copy for the float32 kernels, handed back at once
	f := t.Detach().Cast(Float32)
	out.be().Reduce(op, out.view(), f.view())
	f.Release()
	return out
}

func sumType(dt DType) DType {
	if dt.IsFloat() {
		return dt
	}
	return Int64
}

// Sum adds elements over dims (all by default). Integers and bools sum to Int64.
func (t *Tensor) Sum(opts ...ReduceOption) *Tensor {
	t.nonNil("sum")
	if autocastF32(t) {
		if !needsGrad(t) { // the float32 sum, without a float32 copy
			return t.reduce(backend.Sum, "sum", Float32, opts)
		}
		return t.Cast(Float32).Sum(opts...)
	}
	return recordSum(t, t.reduce(backend.Sum, "sum", sumType(t.dtype), opts), opts)
}

// Prod multiplies elements over dims. Integers and bools give Int64.
func (t *Tensor) Prod(opts ...ReduceOption) *Tensor {
	t.nonNil("prod")
	return recordProd(t, t.reduce(backend.Prod, "prod", sumType(t.dtype), opts), opts)
}

func (t *Tensor) reducedCount(opts []ReduceOption) int {
	_, red, _ := t.reduction("mean", opts)
	n := 1
	for i, r := range red {
		if r {
			n *= t.shape[i]
		}
	}
	return n
}

// Mean averages over dims. It needs a floating dtype, as in PyTorch.
func (t *Tensor) Mean(opts ...ReduceOption) *Tensor {
	t.nonNil("mean")
	if !t.dtype.IsFloat() {
		panic(&DTypeError{Op: "mean", DTypes: []DType{t.dtype}, Msg: "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype"})
	}
	n := t.reducedCount(opts)
	if t.dtype.IsHalf() { // sum and divide in float32, round once
		m := t.Detach().reduce(backend.Sum, "mean", Float32, opts).DivScalar(float64(n)).Cast(t.dtype)
		return recordMean(t, m, opts, n)
	}
	s := t.Detach().Sum(opts...)
	return recordMean(t, s.DivScalar(float64(n)), opts, n) // 0/0 = NaN for an empty reduction, as in PyTorch
}

func (t *Tensor) nonEmpty(op string, opts []ReduceOption) {
	_, red, _ := t.reduction(op, opts)
	for i, r := range red {
		if r && t.shape[i] == 0 {
			shapeErr(op, fmt.Sprintf("Expected reduction dim %d to have non-zero size", i), t.shape)
		}
	}
	if t.NumElements() == 0 && t.Dim() == 0 {
		shapeErr(op, "empty tensor", t.shape)
	}
}

// Max returns the largest element over dims (NaN propagates).
func (t *Tensor) Max(opts ...ReduceOption) *Tensor {
	t.nonNil("max")
	t.nonEmpty("max", opts)
	if t.dtype == Bool { // the max of bools is their or
		return t.reduce(backend.Any, "max", Bool, opts)
	}
	return recordMaxMin(t, t.reduce(backend.Max, "max", t.dtype, opts), opts, true)
}

// Min returns the smallest element over dims (NaN propagates).
func (t *Tensor) Min(opts ...ReduceOption) *Tensor {
	t.nonNil("min")
	t.nonEmpty("min", opts)
	if t.dtype == Bool { // the min of bools is their and
		return t.reduce(backend.All, "min", Bool, opts)
	}
	return recordMaxMin(t, t.reduce(backend.Min, "min", t.dtype, opts), opts, false)
}

func (t *Tensor) argReduce(op backend.ReduceOp, name string, dim *int, keep bool) *Tensor {
	src := t
	opts := []ReduceOption{}
	if dim == nil {
		src = t.Reshape(-1)
		opts = append(opts, Dims(0))
	} else {
		opts = append(opts, Dims(*dim))
	}
	if keep {
		opts = append(opts, KeepDim())
	}
	src.nonEmpty(name, opts)
	if src.dtype == Bool {
		src = src.Cast(Int64)
	}
	return src.reduce(op, name, Int64, opts)
}

// ArgMax returns the index of the largest element of the flattened tensor
// (first occurrence; NaN counts as largest).
func (t *Tensor) ArgMax() *Tensor { return t.argReduce(backend.ArgMax, "argmax", nil, false) }

// ArgMin returns the index of the smallest element of the flattened tensor.
func (t *Tensor) ArgMin() *Tensor { return t.argReduce(backend.ArgMin, "argmin", nil, false) }

// ArgMaxDim returns the indices of the largest elements along dim.
func (t *Tensor) ArgMaxDim(dim int, keepdim bool) *Tensor {
	t.nonNil("argmax")
	return t.argReduce(backend.ArgMax, "argmax", &dim, keepdim)
}

// ArgMinDim returns the indices of the smallest elements along dim.
func (t *Tensor) ArgMinDim(dim int, keepdim bool) *Tensor {
	t.nonNil("argmin")
	return t.argReduce(backend.ArgMin, "argmin", &dim, keepdim)
}

// MaxDim returns the largest values along dim and their indices (torch.max(t, dim)).
func (t *Tensor) MaxDim(dim int, keepdim bool) (values, indices *Tensor) {
	t.nonNil("max")
	opts := []ReduceOption{Dims(dim)}
	if keepdim {
		opts = append(opts, KeepDim())
	}
	indices = t.ArgMaxDim(dim, keepdim)
	return recordMaxDim(t, t.Detach().Max(opts...), indices, dim, keepdim, true), indices
}

// MinDim returns the smallest values along dim and their indices.
func (t *Tensor) MinDim(dim int, keepdim bool) (values, indices *Tensor) {
	t.nonNil("min")
	opts := []ReduceOption{Dims(dim)}
	if keepdim {
		opts = append(opts, KeepDim())
	}
	indices = t.ArgMinDim(dim, keepdim)
	return recordMaxDim(t, t.Detach().Min(opts...), indices, dim, keepdim, false), indices
}

// Any reports, over dims, whether any element is nonzero (Bool).
func (t *Tensor) Any(opts ...ReduceOption) *Tensor { return t.reduce(backend.Any, "any", Bool, opts) }

// All reports, over dims, whether every element is nonzero (Bool).
func (t *Tensor) All(opts ...ReduceOption) *Tensor { return t.reduce(backend.All, "all", Bool, opts) }

// Var returns the variance over dims with divisor N - correction (default 1).
func (t *Tensor) Var(opts ...ReduceOption) *Tensor {
	t.nonNil("var")
	if !t.dtype.IsFloat() {
		panic(&DTypeError{Op: "var", DTypes: []DType{t.dtype}, Msg: "std and var only support floating point and complex dtypes"})
	}
	if t.dtype.IsHalf() { // in float32, rounded once
		return recordVar(t, t.Detach().Cast(Float32).Var(opts...).Cast(t.dtype), opts, false)
	}
	o, _, _ := t.reduction("var", opts)
	n := float64(t.reducedCount(opts))
	keepOpts := append(append([]ReduceOption{}, opts...), KeepDim())
	td := t.Detach()
	mean := td.Mean(keepOpts...)
	dev := td.Sub(mean)
	ss := dev.Mul(dev).Sum(opts...)
	return recordVar(t, ss.DivScalar(math.Max(n-o.correction, 0)), opts, false)
}

// Std returns the standard deviation over dims (sqrt of Var).
func (t *Tensor) Std(opts ...ReduceOption) *Tensor {
	t.nonNil("std")
	if t.dtype.IsHalf() {
		return recordVar(t, t.Detach().Cast(Float32).Var(opts...).Sqrt().Cast(t.dtype), opts, true)
	}
	return recordVar(t, t.Detach().Var(opts...).Sqrt(), opts, true)
}

// Softmax normalises exp(t) along dim.
func (t *Tensor) Softmax(dim int) *Tensor { return t.softmax("softmax", dim, false) }

// LogSoftmax is log(Softmax(t)) computed stably.
func (t *Tensor) LogSoftmax(dim int) *Tensor { return t.softmax("log_softmax", dim, true) }

func (t *Tensor) softmax(name string, dim int, log bool) *Tensor {
	t.live(name)
	if autocastF32(t) {
		return t.Cast(Float32).softmax(name, dim, log)
	}
	if !t.dtype.IsFloat() { // as torch: cast first (x.Cast(Float32).Softmax(d))
		panic(&DTypeError{Op: name, DTypes: []DType{t.dtype}, Msg: fmt.Sprintf("%q not implemented for '%s'", name+"_lastdim_kernel_impl", torchTypeName(t.dtype))})
	}
	src := t.Detach()
	if t.dtype.IsHalf() {
		src = t.Cast(Float32) // two-byte floats: in float32, rounded back below
	}
	if t.Dim() == 0 {
		src = src.Reshape(1)
	}
	d := src.dim(name, dim)
	last := src.Dim() - 1
	moved := src
	if d != last {
		moved = src.Transpose(d, last)
	}
	c := moved.Contiguous()
	out := empty(c.shape, c.dtype, c.dev)
	out.be().Softmax(out.view(), c.view(), log)
	if d != last {
		out = out.Transpose(d, last).Contiguous()
	}
	if t.Dim() == 0 {
		out = out.Reshape()
	}
	if t.dtype.IsHalf() {
		out = out.Cast(t.dtype)
	}
	return recordSoftmax(t, out, d, log)
}

// LogSumExp returns log(Σ exp(t)) over dims (all by default), as
// torch.logsumexp: computed stably (each slice's max subtracted first), a
// slice of -Inf (or an empty one) gives -Inf and a +Inf gives +Inf, not
// NaN. Integer and Bool inputs give Float32. Its gradient is
// exp(t − result), NaN where t and the result are both infinite, as
// PyTorch's (LogsumexpBackward0).
func (t *Tensor) LogSumExp(opts ...ReduceOption) *Tensor {
	const name = "logsumexp"
	t.live(name)
	if !t.dtype.IsFloat() {
		return t.Cast(Float32).LogSumExp(opts...)
	}
	if t.dtype.IsHalf() { // in float32, rounded once
		return t.Cast(Float32).LogSumExp(opts...).Cast(t.dtype)
	}
	o, red, keep := t.reduction(name, opts)
	keepOpts := append(append([]ReduceOption{}, opts...), KeepDim())
	td := t.Detach()
	var m *Tensor
	empty := false
	for i, r := range red {
		empty = empty || r && t.shape[i] == 0
	}
	if empty || t.NumElements() == 0 {
		m = Zeros(keep, On(t.dev), Dtype(t.dtype))
	} else {
		m = td.Max(keepOpts...)
		m = WhereTensorScalar(m.IsInf().LogicalNot(), m, 0) // ±Inf maxima: subtract nothing
	}
	s := td.Sub(m).Exp().Sum(keepOpts...).Log().Add(m) // the keepdim shape
	out := s.Reshape(finalShape(keep, red, o.keep)...)
	if !needsGrad(t) {
		return out
	}
	back := func(g, t, s *Tensor) []*Tensor { return []*Tensor{g.Reshape(keep...).Mul(t.Sub(s).Exp())} }
	// twice: t and the output (td's and s's storages)
	return recordTwice("LogsumexpBackward0", out, []*Tensor{t}, []*Tensor{td, s},
		func(g *Tensor) []*Tensor { return back(g, td, s) },
		func(g *Tensor) []*Tensor { return back(g, t, out.Reshape(keep...)) })
}

// Norm returns the p-norm of t over dims (all by default), as
// torch.linalg.vector_norm(t, ord=p, dim, keepdim): (Σ|t|^p)^(1/p), the
// largest |t| for p = +Inf, the smallest for -Inf and the number of
// non-zero elements for 0. t must be floating, as in PyTorch. Its gradient
// where the norm is 0 is 0, as PyTorch's norm_backward, not the 0/0 that
// composing Sqrt(Sum(Square)) gives (LinalgVectorNormBackward0).
func (t *Tensor) Norm(p float64, opts ...ReduceOption) *Tensor {
	const name = "linalg.vector_norm"
	t.live(name)
	if !t.dtype.IsFloat() {
		panic(&DTypeError{Op: name, DTypes: []DType{t.dtype}, Msg: fmt.Sprintf("linalg.vector_norm: Expected a floating point or complex tensor as input. Got %s", torchTypeName(t.dtype))})
	}
	if math.IsNaN(p) {
		panic(&ValueError{Op: name, Msg: "linalg.vector_norm: ord must not be NaN"})
	}
	if t.dtype.IsHalf() { // in float32, rounded once
		return t.Cast(Float32).Norm(p, opts...).Cast(t.dtype)
	}
	switch {
	case math.IsInf(p, 1):
		return rename(t.Abs().Max(opts...), "LinalgVectorNormBackward0")
	case math.IsInf(p, -1):
		return rename(t.Abs().Min(opts...), "LinalgVectorNormBackward0")
	case p == 0: // a count: its gradient is 0, as PyTorch's
		out := t.Detach().Ne(zeroLike(t)).Cast(t.dtype).Sum(opts...)
		if !needsGrad(t) {
			return out
		}
		shape := t.shape.clone()
		return record("LinalgVectorNormBackward0", out, []*Tensor{t}, nil, func(g *Tensor) []*Tensor {
			return []*Tensor{Zeros(shape, On(g.dev), Dtype(g.dtype))}
		})
	}
	o, red, keep := t.reduction(name, opts)
	td := t.Detach()
	a := td.Abs()
	var nk *Tensor // the keepdim norm
	keepOpts := append(append([]ReduceOption{}, opts...), KeepDim())
	switch p {
	case 1:
		nk = a.Sum(keepOpts...)
	case 2:
		nk = td.Square().Sum(keepOpts...).Sqrt()
	default:
		nk = a.PowScalar(p).Sum(keepOpts...).PowScalar(1 / p)
	}
	out := nk.Reshape(finalShape(keep, red, o.keep)...)
	if !needsGrad(t) {
		return out
	}
	back := func(g, td, nk *Tensor) []*Tensor {
		gk := g.Reshape(keep...)
		if p == 1 {
			return []*Tensor{gk.Mul(td.Sign())}
		}
		// sgn(x)·|x|^(p-1) (0 where x is 0) times g / norm^(p-1) (0 where
		// the norm is 0), as PyTorch's norm_backward
		nz := nk.EqScalar(0).LogicalNot()
		var scale, d *Tensor
		if p == 2 {
			d, scale = td, gk.Div(nk)
		} else {
			d = td.Sign().Mul(WhereTensorScalar(td.EqScalar(0).LogicalNot(), td.Abs().PowScalar(p-1), 0))
			scale = gk.Div(nk.PowScalar(p - 1))
		}
		return []*Tensor{d.Mul(WhereTensorScalar(nz, scale, 0))}
	}
	// twice: t and the output, whose storages are td's and nk's
	return recordTwice("LinalgVectorNormBackward0", out, []*Tensor{t}, []*Tensor{td, nk},
		func(g *Tensor) []*Tensor { return back(g, td, nk) },
		func(g *Tensor) []*Tensor { return back(g, t, out.Reshape(keep...)) })
}
