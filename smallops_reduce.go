package ember

import (
	"fmt"
	"math"
)

// Reductions that PyTorch users reach for, composed of ember's own.

// allDims makes a reduction over no dims reduce over every dim, as
// torch.amax(t, dim=()) does, and names the dims explicitly (so Max
// records amax's gradient rather than max()'s).
func allDims(opts []ReduceOption) []ReduceOption {
	return append([]ReduceOption{Dims()}, opts...)
}

// Amax returns the largest element over dims (all by default), as
// torch.amax (NaN propagates). Its gradient is shared evenly among the
// elements equal to the maximum of their slice (AmaxBackward0), unlike
// MaxDim's, which goes to one index. A reduced dim of size 0 panics with a
// *ShapeError.
func (t *Tensor) Amax(opts ...ReduceOption) *Tensor {
	t.nonNil("amax")
	t.nonEmpty("amax()", opts)
	return t.Max(allDims(opts)...)
}

// Amin returns the smallest element over dims (all by default), as
// torch.amin; its gradient is shared evenly among ties (AminBackward0).
func (t *Tensor) Amin(opts ...ReduceOption) *Tensor {
	t.nonNil("amin")
	t.nonEmpty("amin()", opts)
	return t.Min(allDims(opts)...)
}

// Aminmax returns Amin and Amax over dims (all by default), as
// torch.aminmax. Like PyTorch 1.13's, it has no gradient: the results do
// not require grad.
func (t *Tensor) Aminmax(opts ...ReduceOption) (min, max *Tensor) {
	t.nonNil("aminmax")
	if o, _, _ := t.reduction("aminmax", opts); (!o.dimsSet || len(o.dims) == 0) && t.NumElements() == 0 {
		panic(&ShapeError{Op: "aminmax", Shapes: []Shape{t.shape}, Msg: "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity."})
	}
	t.nonEmpty("aminmax", opts)
	d := t.Detach()
	return d.Min(allDims(opts)...), d.Max(allDims(opts)...)
}

// CountNonzero returns, as Int64, the number of non-zero elements over
// dims (all by default; NaN counts as non-zero), as torch.count_nonzero.
func (t *Tensor) CountNonzero(dims ...int) *Tensor {
	t.nonNil("count_nonzero")
	return t.Detach().Ne(zeroLike(t)).Sum(Dims(dims...))
}

// VarMean returns Var(opts...) and Mean over the same dims, as
// torch.var_mean (Correction sets the divisor N - correction, default 1).
func (t *Tensor) VarMean(opts ...ReduceOption) (variance, mean *Tensor) {
	t.nonNil("var_mean")
	if !t.dtype.IsFloat() {
		panic(&DTypeError{Op: "var_mean", DTypes: []DType{t.dtype}, Msg: "var_mean only support floating point and complex dtypes"})
	}
	return t.Var(opts...), t.Mean(opts...)
}

// StdMean returns Std(opts...) and Mean over the same dims, as
// torch.std_mean.
func (t *Tensor) StdMean(opts ...ReduceOption) (std, mean *Tensor) {
	t.nonNil("std_mean")
	if !t.dtype.IsFloat() {
		panic(&DTypeError{Op: "std_mean", DTypes: []DType{t.dtype}, Msg: "std_mean only support floating point and complex dtypes"})
	}
	return t.Std(opts...), t.Mean(opts...)
}

// Isin reports, as Bool of elements' shape, whether each element occurs in
// testElements (of any shape), as torch.isin; invert negates the answer.
// The two are compared in their promoted dtype (so 1 is not in [1.5]);
// NaN is in nothing. Bool tensors panic with a *DTypeError, as PyTorch's.
// It sorts testElements and searches it: O((n+m)·log m).
func Isin(elements, testElements *Tensor, invert bool) *Tensor {
	const op = "isin"
	elements.live(op)
	testElements.live(op)
	sameDevice(op, elements, testElements)
	for _, x := range []*Tensor{elements, testElements} {
		if x.dtype == Bool {
			panic(&DTypeError{Op: op, DTypes: []DType{elements.dtype, testElements.dtype}, Msg: fmt.Sprintf("Unsupported input type encountered for isin(): %s", torchTypeName(x.dtype))})
		}
	}
	ct := PromoteTypes(elements.dtype, testElements.dtype)
	e := elements.Detach().Cast(ct)
	var found *Tensor
	if isMeta(e) || testElements.NumElements() == 0 || elements.NumElements() == 0 {
		found = Zeros(e.shape, On(e.dev), Dtype(Bool))
	} else {
		s, _ := testElements.Detach().Cast(ct).Reshape(-1).Sort(0, false)
		flat := e.Reshape(-1)
		key := s
		if s.dtype.IsFloat() { // NaNs (sorted last) searched as +Inf: the match is read from s, where they equal nothing
			key = WhereTensorScalar(s.IsNaN().LogicalNot(), s, math.Inf(1))
		}
		idx := Searchsorted(key, flat, false, nil).Clamp(0, float64(s.NumElements()-1))
		found = s.Gather(0, idx).Eq(flat).Reshape(e.shape...)
	}
	if invert {
		return found.LogicalNot()
	}
	return found
}
