package nn

import (
	"fmt"
	"math"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn/nninit"
)

// EmbeddingBag is torch.nn.EmbeddingBag: it reduces bags of rows of
// Weight [Num, Dim] (drawn N(0, 1)) to one row each, without building the
// looked-up rows' tensor per index as Embedding followed by a reduction
// would. Mode is "sum", "mean" (PyTorch's default) or "max"; a bag with no
// indices gives a row of zeros. PaddingIdx is the row that is left out of
// every bag (not counted by "mean") and gets no gradient, or -1 for none.
// MaxNorm, when positive, renormalises the looked-up rows first, as
// Embedding's (NormType 0 reads as 2). IncludeLastOffset is
// include_last_offset: the offsets given to ForwardBags end with the end
// of the last bag.
type EmbeddingBag struct {
	Base
	Weight            *ember.Tensor
	Num, Dim          int
	Mode              string
	PaddingIdx        int
	MaxNorm           float64
	NormType          float64
	IncludeLastOffset bool
}

// NewEmbeddingBag returns an EmbeddingBag of mode "sum", "mean" or "max"
// with PyTorch's N(0, 1) init (a mode outside those panics at Forward, as
// in PyTorch).
func NewEmbeddingBag(num, dim int, mode string) *EmbeddingBag {
	e := &EmbeddingBag{Num: num, Dim: dim, Mode: mode, PaddingIdx: -1, NormType: 2}
	e.Init(e)
	e.Weight = param(nninit.Normal(ember.Empty(ember.Shape{num, dim}), 0, 1))
	e.RegisterParameter("weight", &e.Weight)
	return e
}

// NewEmbeddingBagPadded is NewEmbeddingBag with padding_idx (negative
// counts from the end): that row starts at zero, is left out of the bags
// and gets no gradient.
func NewEmbeddingBagPadded(num, dim int, mode string, paddingIdx int) *EmbeddingBag {
	if paddingIdx < -num || paddingIdx >= num {
		argErr("NewEmbeddingBagPadded", "padding_idx must be within num_embeddings")
	}
	if paddingIdx < 0 {
		paddingIdx += num
	}
	e := NewEmbeddingBag(num, dim, mode)
	e.PaddingIdx = paddingIdx
	nninit.Zeros(e.Weight.Detach().Select(0, paddingIdx))
	return e
}

// Forward reduces each row of a 2-D integer input [B, N] (a bag of N
// indices) to a row of the result [B, Dim].
func (e *EmbeddingBag) Forward(input *ember.Tensor) *ember.Tensor {
	CheckNil(e, "Forward")
	return e.ForwardBags(input, nil, nil)
}

// ForwardBags is torch's forward(input, offsets, per_sample_weights). A
// 1-D input is the concatenation of the bags, bag i starting at
// offsets[i] (1-D integer, offsets[0] = 0); a 2-D input is one bag per
// row, and offsets must be nil. perSampleWeights (nil for none; input's
// shape, Weight's dtype: another panics, as in PyTorch) scales each
// looked-up row before the sum; only mode "sum" takes it. The result is
// [bags, Dim]. The indices and offsets are read back to the host to form
// the bags (on the meta device only their shapes count).
func (e *EmbeddingBag) ForwardBags(input, offsets, perSampleWeights *ember.Tensor) *ember.Tensor {
	CheckNil(e, "ForwardBags")
	const op = "EmbeddingBag"
	if input == nil {
		argErr(op, "input is nil")
	}
	if e.Mode != "sum" && e.Mode != "mean" && e.Mode != "max" {
		argErr(op, "mode has to be one of sum, mean or max")
	}
	if !input.DType().IsInt() {
		panic(&ember.DTypeError{Op: "nn." + op, DTypes: []ember.DType{input.DType()}, Msg: "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int"})
	}
	if perSampleWeights != nil && !perSampleWeights.Shape().Equal(input.Shape()) {
		argErr(op, "embedding_bag: If per_sample_weights (%v) is not None, then it must have the same shape as the input (%v)", perSampleWeights.Shape(), input.Shape())
	}
	if perSampleWeights != nil && perSampleWeights.DType() != e.Weight.DType() {
		panic(&ember.DTypeError{Op: "nn." + op, DTypes: []ember.DType{e.Weight.DType(), perSampleWeights.DType()}, Msg: "Expected tensor for argument #1 'weight' to have the same type as tensor for argument #1 'per_sample_weights' (while checking arguments for embedding_bag)"})
	}
	if perSampleWeights != nil && e.Mode != "sum" {
		argErr(op, "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' (got mode='%s'). Please open a feature request on GitHub.", e.Mode)
	}
	var starts []int64
	switch input.Dim() {
	case 2:
		if offsets != nil {
			argErr(op, "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length sequences. However, found offsets of type <class 'torch.Tensor'>")
		}
		b, n := input.Size(0), input.Size(1)
		starts = make([]int64, b)
		for i := range starts {
			starts[i] = int64(i * n)
		}
		input = input.Reshape(-1)
		if perSampleWeights != nil {
			perSampleWeights = perSampleWeights.Reshape(-1)
		}
	case 1:
		if offsets == nil {
			argErr(op, "offsets has to be a 1D Tensor but got None")
		}
		if offsets.Dim() != 1 {
			argErr(op, "offsets has to be a 1D Tensor")
		}
		if !offsets.DType().IsInt() {
			panic(&ember.DTypeError{Op: "nn." + op, DTypes: []ember.DType{offsets.DType()}, Msg: "Expected tensor for argument #2 'offsets' to have one of the following scalar types: Long, Int"})
		}
		if offsets.Device().Type == ember.MetaType { // no values: shapes only
			if w := e.Weight.Device(); w.Type != ember.MetaType {
				panic(&ember.DeviceMismatchError{Op: "nn." + op, Devices: []ember.Device{offsets.Device(), w}})
			}
			starts = make([]int64, offsets.Size(0))
		} else {
			starts = offsets.Cast(ember.Int64).Int64s()
		}
	default:
		argErr(op, "input has to be 1D or 2D Tensor, but got Tensor of dimension %d", input.Dim())
	}
	n := int64(input.NumElements())
	if e.IncludeLastOffset && len(starts) < 1 {
		argErr(op, "include_last_offset: number of offset should be at least 1")
	}
	if len(starts) > 0 {
		if starts[0] != 0 {
			argErr(op, "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, got %d", starts[0])
		}
		if last := starts[len(starts)-1]; last > n {
			argErr(op, "offsets[-1] can not be greater than input's length %d but got offsets[-1] of %d", n, last)
		}
		for i := 1; i < len(starts); i++ {
			if starts[i] < starts[i-1] {
				argErr(op, "offsets must be non-decreasing, but offsets[%d] = %d < offsets[%d] = %d", i, starts[i], i-1, starts[i-1])
			}
		}
	}
	if !e.IncludeLastOffset {
		starts = append(starts, n)
	}
	bags := len(starts) - 1
	dev := e.Weight.Device()
	if input.Device() != dev {
		panic(&ember.DeviceMismatchError{Op: "nn." + op, Devices: []ember.Device{input.Device(), dev}})
	}
	if dev.Type == ember.MetaType { // shapes only: the bags' contents are unknown
		out := ember.Zeros(ember.Shape{bags, e.Dim}, ember.On(dev), ember.Dtype(e.Weight.DType())).Add(e.Weight.Sum().MulScalar(0))
		if perSampleWeights != nil {
			out = out.Add(perSampleWeights.Sum().MulScalar(0))
		}
		return out
	}
	idx := input.Cast(ember.Int64).Int64s()
	for _, v := range idx {
		if v < 0 || v >= int64(e.Num) {
			panic(&ember.IndexError{Op: "nn." + op, Index: v, Dim: 0, Size: e.Num})
		}
	}
	if e.MaxNorm > 0 {
		nt := e.NormType
		if nt == 0 {
			nt = 2
		}
		ember.EmbeddingRenorm(e.Weight, input, e.MaxNorm, nt)
	}
	// The kept positions (padding left out), their bag and the bags' sizes.
	var pos, bagOf []int64
	count := make([]int, bags)
	maxLen := 0
	for b := 0; b < bags; b++ {
		for p := starts[b]; p < starts[b+1] && p < n; p++ {
			if int(idx[p]) == e.PaddingIdx {
				continue
			}
			pos = append(pos, p)
			bagOf = append(bagOf, int64(b))
			count[b]++
		}
		maxLen = max(maxLen, count[b])
	}
	w := e.Weight
	dt := w.DType()
	rowsIdx := make([]int64, len(pos))
	for i, p := range pos {
		rowsIdx[i] = idx[p]
	}
	on := ember.On(dev)
	rows := w.IndexSelect(0, ember.FromSlice(rowsIdx, ember.Shape{len(pos)}, on)) // [M, Dim]
	if e.Mode == "max" {
		return bagMax(rows, count, maxLen, bags, e.Dim, dt, dev)
	}
	if perSampleWeights != nil {
		if perSampleWeights.Device() != dev {
			panic(&ember.DeviceMismatchError{Op: "nn." + op, Devices: []ember.Device{perSampleWeights.Device(), dev}})
		}
		psw := perSampleWeights.Reshape(-1).IndexSelect(0, ember.FromSlice(pos, ember.Shape{len(pos)}, on))
		rows = rows.Mul(psw.Unsqueeze(1))
	}
	out := ember.Zeros(ember.Shape{bags, e.Dim}, on, ember.Dtype(dt)).IndexAdd(0, ember.FromSlice(bagOf, ember.Shape{len(bagOf)}, on), rows.Cast(dt))
	if e.Mode == "mean" {
		div := make([]float64, bags)
		for b, c := range count {
			div[b] = float64(max(c, 1))
		}
		out = out.Div(ember.FromSlice(div, ember.Shape{bags, 1}, on, ember.Dtype(dt)))
	}
	return out
}

// bagMax is mode "max": the bags' rows gathered into [bags, maxLen, Dim]
// with -inf filling the short bags, reduced over the bag, empty bags 0.
// The gradient of each output element goes to one row: the first in the
// bag holding the max.
func bagMax(rows *ember.Tensor, count []int, maxLen, bags, dim int, dt ember.DType, dev ember.Device) *ember.Tensor {
	on := ember.On(dev)
	if maxLen == 0 {
		return ember.Zeros(ember.Shape{bags, dim}, on, ember.Dtype(dt)).Add(rows.Sum().MulScalar(0))
	}
	m := rows.Size(0)
	fill := ember.Full(ember.Shape{1, dim}, math.Inf(-1), on, ember.Dtype(dt))
	table := ember.Cat([]*ember.Tensor{rows, fill}, 0) // row m is -inf
	gather := make([]int64, bags*maxLen)
	empty := make([]bool, bags)
	next := 0
	for b := 0; b < bags; b++ {
		empty[b] = count[b] == 0
		for k := 0; k < maxLen; k++ {
			if k < count[b] {
				gather[b*maxLen+k] = int64(next)
				next++
			} else {
				gather[b*maxLen+k] = int64(m)
			}
		}
	}
	g := table.IndexSelect(0, ember.FromSlice(gather, ember.Shape{bags * maxLen}, on)).Reshape(bags, maxLen, dim)
	// MaxDim, not Max: its gradient goes to the first position holding the
	// max, as PyTorch's max_indices, where Max would share it among ties.
	out, _ := g.MaxDim(1, false)
	return ember.WhereScalar(ember.FromSlice(empty, ember.Shape{bags, 1}, on), 0, out)
}

// ExtraRepr is "5, 3, mode=mean" plus max_norm, norm_type and padding_idx
// where set, as PyTorch prints it.
func (e *EmbeddingBag) ExtraRepr() string {
	CheckNil(e, "ExtraRepr")
	s := fmt.Sprintf("%d, %d", e.Num, e.Dim)
	if e.MaxNorm > 0 {
		s += ", max_norm=" + pyFloat(e.MaxNorm)
	}
	if nt := e.NormType; nt != 0 && nt != 2 {
		s += ", norm_type=" + pyFloat(nt)
	}
	s += ", mode=" + e.Mode
	if e.PaddingIdx >= 0 {
		s += fmt.Sprintf(", padding_idx=%d", e.PaddingIdx)
	}
	return s
}
