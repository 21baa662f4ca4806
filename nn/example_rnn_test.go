package nn_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// nn.LSTM(10, 20, num_layers=2, batch_first=True) over 3 sequences of 5
// steps: the output is the top layer's h at every step, h_n and c_n the
// last step's states of each layer (so the output's last step is h_n's top
// layer). The parameters carry PyTorch's names, so a PyTorch state dict
// loads with LoadStateDict.
func ExampleNewLSTM() {
	ember.ManualSeed(0)
	m := nn.NewLSTM(10, 20, nn.RNNOptions{NumLayers: 2, BatchFirst: true})
	fmt.Println(m)
	x := ember.Randn(ember.Shape{3, 5, 10})
	out, hn, cn := m.ForwardState(x, nil, nil) // nil: zero initial states
	fmt.Println(out.Shape(), hn.Shape(), cn.Shape())
	fmt.Println(ember.AllClose(out.Select(1, 4), hn.Select(0, 1), 0, 0))
	for _, p := range m.NamedParameters()[:4] {
		fmt.Println(p.Name, p.Tensor.Shape())
	}
	// Output:
	// LSTM(10, 20, num_layers=2, batch_first=True)
	// [3, 5, 20] [2, 3, 20] [2, 3, 20]
	// true
	// weight_ih_l0 [80, 10]
	// weight_hh_l0 [80, 20]
	// bias_ih_l0 [80]
	// bias_hh_l0 [80]
}

// A GRUCell stepped by hand over a sequence, as PyTorch's cell examples
// do; a nil state is zeros.
func ExampleNewGRUCell() {
	ember.ManualSeed(0)
	cell := nn.NewGRUCell(10, 20, true)
	x := ember.Randn(ember.Shape{6, 3, 10}) // 6 steps of a batch of 3
	var h *ember.Tensor
	for t := range x.Size(0) {
		h = cell.ForwardState(x.Select(0, t), h)
	}
	fmt.Println(cell, h.Shape())
	// Output:
	// GRUCell(10, 20) [3, 20]
}

// Sequences of different lengths padded into one batch run packed, each
// over its own steps only: h_n holds each sequence's state after its own
// last step, and the padded output is zero past it.
func ExamplePackPaddedSequence() {
	ember.ManualSeed(0)
	m := nn.NewGRU(2, 3, nn.RNNOptions{BatchFirst: true})
	x := ember.Randn(ember.Shape{3, 4, 2}) // 3 sequences padded to 4 steps
	p := nn.PackPaddedSequence(x, []int{2, 4, 1}, true, false)
	fmt.Println(p.BatchSizes, p.SortedIndices)
	out, hn := m.ForwardPacked(p, nil)
	y, lengths := nn.PadPackedSequence(out, true, 0, 0)
	fmt.Println(y.Shape(), lengths)
	last := y.Select(0, 0).Select(0, 1) // sequence 0 at its last step, 1
	fmt.Println(ember.AllClose(hn.Select(0, 0).Select(0, 0), last, 0, 0), y.Select(0, 0).Select(0, 2))
	// Output:
	// [3 2 1 1] [1 0 2]
	// [3, 4, 3] [2 4 1]
	// true tensor([0., 0., 0.], grad_fn=<SelectBackward0>)
}
