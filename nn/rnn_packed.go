package nn

import (
	"fmt"
	"sort"

	"github.com/emberml/ember"
)

// PackedSequence is torch.nn.utils.rnn.PackedSequence: a batch of
// sequences of different lengths stored step by step, the sequences
// sorted longest first. Data holds BatchSizes[0] rows of step 0 (one per
// sequence), then BatchSizes[1] rows of step 1 (the sequences that are
// that long), and so on. SortedIndices[i] is the batch index of sorted
// sequence i and UnsortedIndices its inverse; both are nil when the batch
// was packed as given (enforceSorted). RNN, LSTM and GRU run over it
// with ForwardPacked, which steps each sequence only over its own length.
type PackedSequence struct {
	Data            *ember.Tensor
	BatchSizes      []int
	SortedIndices   []int
	UnsortedIndices []int
}

// PackPaddedSequence is torch.nn.utils.rnn.pack_padded_sequence: it packs
// x, a padded batch [T, B, *] ([B, T, *] with batchFirst), whose sequence
// b is lengths[b] steps long. With enforceSorted the lengths must be
// decreasing; otherwise the batch is sorted (stably, longest first) and the
// order recorded in SortedIndices. Gradients flow back to x.
func PackPaddedSequence(x *ember.Tensor, lengths []int, batchFirst, enforceSorted bool) *PackedSequence {
	const op = "pack_padded_sequence"
	if x == nil {
		shapeErrf(op, "input is nil")
	}
	if x.Dim() < 2 {
		shapeErrf(op, "expected a padded batch of at least 2 dimensions ([T, B, *] or [B, T, *]), got %v", x.Shape())
	}
	batchDim := 1
	if batchFirst {
		batchDim = 0
	}
	b, steps := x.Size(batchDim), x.Size(1-batchDim)
	if len(lengths) != b {
		shapeErrf(op, "Expected `len(lengths)` to be equal to batch_size, but got %d (batch_size=%d)", len(lengths), b)
	}
	if b == 0 {
		shapeErrf(op, "Cannot pack empty tensors.")
	}
	for i, n := range lengths {
		if n <= 0 {
			panic(&ember.ValueError{Op: op, Msg: "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0"})
		}
		if n > steps {
			shapeErrf(op, "lengths[%d] = %d exceeds the padded batch's %d steps", i, n, steps)
		}
	}
	p := &PackedSequence{}
	sorted := lengths
	if enforceSorted {
		for i := 1; i < len(lengths); i++ {
			if lengths[i] > lengths[i-1] {
				panic(&ember.ValueError{Op: op, Msg: "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if you do not need ONNX exportability."})
			}
		}
	} else {
		p.SortedIndices = make([]int, b)
		for i := range p.SortedIndices {
			p.SortedIndices[i] = i
		}
		sort.SliceStable(p.SortedIndices, func(i, j int) bool { return lengths[p.SortedIndices[i]] > lengths[p.SortedIndices[j]] })
		p.UnsortedIndices = invert(p.SortedIndices)
		sorted = make([]int, b)
		for i, k := range p.SortedIndices {
			sorted[i] = lengths[k]
		}
		x = x.IndexSelect(batchDim, indexTensor(p.SortedIndices, x.Device()))
	}
	if batchFirst {
		x = x.Transpose(0, 1)
	}
	p.BatchSizes = make([]int, sorted[0])
	for t := range p.BatchSizes {
		for _, n := range sorted {
			if n > t {
				p.BatchSizes[t]++
			}
		}
	}
	// the first BatchSizes[t] rows of each step (one unbind: its backward
	// joins the steps' gradients once)
	rows := x.Unbind(0)[:len(p.BatchSizes)]
	for t, n := range p.BatchSizes {
		rows[t] = rows[t].Narrow(0, 0, n)
	}
	p.Data = ember.Cat(rows, 0)
	return p
}

// PadPackedSequence is torch.nn.utils.rnn.pad_packed_sequence: the padded
// batch [T, B, *] ([B, T, *] with batchFirst) of p, in the original batch
// order, with paddingValue after each sequence's end, and the sequences'
// lengths. T is totalLength, or the longest sequence's length when
// totalLength is 0 (PyTorch's None). Gradients flow back to p.Data.
func PadPackedSequence(p *PackedSequence, batchFirst bool, paddingValue float64, totalLength int) (*ember.Tensor, []int) {
	const op = "pad_packed_sequence"
	p.check(op)
	steps, b := len(p.BatchSizes), p.BatchSizes[0]
	if totalLength == 0 {
		totalLength = steps
	}
	if totalLength < steps {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("Expected total_length to be at least the length of the longest sequence in input, but got total_length=%d and max sequence length being %d", totalLength, steps)})
	}
	rest := p.Data.Shape()[1:]
	pad := func(lead ...int) *ember.Tensor {
		return ember.Full(append(ember.Shape(lead), rest...), paddingValue, ember.On(p.Data.Device()), ember.Dtype(p.Data.DType()))
	}
	rows := stepViews(p.Data, p.BatchSizes)
	for t, r := range rows {
		if n := p.BatchSizes[t]; n < b {
			rows[t] = ember.Cat([]*ember.Tensor{r, pad(b - n)}, 0)
		}
	}
	out := ember.Stack(rows, 0)
	if totalLength > steps { // the steps past the longest sequence: one block
		out = ember.Cat([]*ember.Tensor{out, pad(totalLength-steps, b)}, 0)
	}
	lengths := make([]int, b)
	for i := range lengths {
		for _, n := range p.BatchSizes {
			if n > i {
				lengths[i]++
			}
		}
	}
	if p.UnsortedIndices != nil {
		out = out.IndexSelect(1, indexTensor(p.UnsortedIndices, out.Device()))
		byBatch := make([]int, b)
		for j, i := range p.UnsortedIndices {
			byBatch[j] = lengths[i]
		}
		lengths = byBatch
	}
	if batchFirst {
		out = out.Transpose(0, 1)
	}
	return out, lengths
}

// check panics unless p is a well-formed packed batch.
func (p *PackedSequence) check(op string) {
	if p == nil || p.Data == nil {
		shapeErrf(op, "nil PackedSequence or Data")
	}
	if p.Data.Dim() == 0 || len(p.BatchSizes) == 0 {
		shapeErrf(op, "an empty PackedSequence (Data %v, BatchSizes %v)", p.Data.Shape(), p.BatchSizes)
	}
	sum := 0
	for t, n := range p.BatchSizes {
		if n <= 0 || (t > 0 && n > p.BatchSizes[t-1]) {
			panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("BatchSizes %v must be positive and non-increasing", p.BatchSizes)})
		}
		sum += n
	}
	if sum != p.Data.Size(0) {
		shapeErrf(op, "BatchSizes %v add up to %d rows, but Data has %d", p.BatchSizes, sum, p.Data.Size(0))
	}
	if (p.SortedIndices == nil) != (p.UnsortedIndices == nil) {
		panic(&ember.ValueError{Op: op, Msg: "SortedIndices and UnsortedIndices are set together or not at all"})
	}
	if p.SortedIndices == nil {
		return
	}
	b := p.BatchSizes[0]
	if len(p.SortedIndices) != b || len(p.UnsortedIndices) != b {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("SortedIndices and UnsortedIndices must have %d entries (the batch size), got %d and %d", b, len(p.SortedIndices), len(p.UnsortedIndices))})
	}
	for i, k := range p.SortedIndices {
		if k < 0 || k >= b || p.UnsortedIndices[k] != i {
			panic(&ember.ValueError{Op: op, Msg: "SortedIndices must be a permutation of the batch and UnsortedIndices its inverse"})
		}
	}
}

// invert returns the inverse of the permutation p.
func invert(p []int) []int {
	inv := make([]int, len(p))
	for i, k := range p {
		inv[k] = i
	}
	return inv
}

func indexTensor(idx []int, dev ember.Device) *ember.Tensor {
	v := make([]int64, len(idx))
	for i, k := range idx {
		v[i] = int64(k)
	}
	return ember.FromSlice(v, ember.Shape{len(v)}).To(dev)
}

// runPacked is PyTorch's forward of a PackedSequence: the output is
// packed as x, h_n and c_n are in the original batch order.
func (r *RNNBase) runPacked(x *PackedSequence, h0, c0 *ember.Tensor) (*PackedSequence, *ember.Tensor, *ember.Tensor) {
	op := r.mode
	x.check(op)
	r.check()
	lstm := r.mode == "LSTM"
	if lstm && (h0 == nil) != (c0 == nil) {
		panic(&ember.ValueError{Op: op, Msg: "h0 and c0 are given together or not at all (PyTorch's hx tuple)"})
	}
	data := x.Data
	if data.Dim() != 2 {
		shapeErrf(op, "input must have 2 dimensions, got %d", data.Dim())
	}
	if data.Size(-1) != r.InputSize {
		shapeErrf(op, "input.size(-1) must be equal to input_size. Expected %d, got %d", r.InputSize, data.Size(-1))
	}
	sameDType(op, "the input", data, r.flat[0])
	states := r.initialStates(data, x.BatchSizes[0], h0, c0)
	if h0 != nil && x.SortedIndices != nil {
		idx := indexTensor(x.SortedIndices, data.Device())
		for i, s := range states {
			states[i] = s.IndexSelect(1, idx)
		}
	}
	y, finals := r.layers(data, x.BatchSizes, states)
	if x.UnsortedIndices != nil {
		idx := indexTensor(x.UnsortedIndices, data.Device())
		for i, s := range finals {
			finals[i] = s.IndexSelect(1, idx)
		}
	}
	out := &PackedSequence{Data: y, BatchSizes: append([]int(nil), x.BatchSizes...),
		SortedIndices: append([]int(nil), x.SortedIndices...), UnsortedIndices: append([]int(nil), x.UnsortedIndices...)}
	if x.SortedIndices == nil {
		out.SortedIndices, out.UnsortedIndices = nil, nil
	}
	var cn *ember.Tensor
	if lstm {
		cn = finals[1]
	}
	return out, finals[0], cn
}

// ForwardPacked is PyTorch's forward of a PackedSequence (see
// PackPaddedSequence): each sequence runs over its own length only. It
// returns the output packed as x and h_n [NumLayers·D, B, H], each
// sequence's state after its last step, in x's original batch order (as
// h0, nil for zeros).
func (m *RNN) ForwardPacked(x *PackedSequence, h0 *ember.Tensor) (*PackedSequence, *ember.Tensor) {
	CheckNil(m, "ForwardPacked")
	out, hn, _ := m.runPacked(x, h0, nil)
	return out, hn
}

// ForwardPacked is PyTorch's forward of a PackedSequence, as RNN's, with
// the cell states c0 and c_n.
func (m *LSTM) ForwardPacked(x *PackedSequence, h0, c0 *ember.Tensor) (*PackedSequence, *ember.Tensor, *ember.Tensor) {
	CheckNil(m, "ForwardPacked")
	return m.runPacked(x, h0, c0)
}

// ForwardPacked is PyTorch's forward of a PackedSequence, as RNN's.
func (m *GRU) ForwardPacked(x *PackedSequence, h0 *ember.Tensor) (*PackedSequence, *ember.Tensor) {
	CheckNil(m, "ForwardPacked")
	out, hn, _ := m.runPacked(x, h0, nil)
	return out, hn
}
