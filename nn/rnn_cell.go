package nn

import (
	"fmt"

	"github.com/emberml/ember"
)

// The cells are one time step of RNN, LSTM and GRU, with PyTorch's
// parameters weight_ih [G·H, In], weight_hh [G·H, H], bias_ih and bias_hh
// [G·H] (G gate blocks: 1, 4 or 3), initialised U(−1/√H, 1/√H).

func newCellParams(op string, self Module, b *Base, inputSize, hiddenSize, g int, bias bool, wih, whh, bih, bhh **ember.Tensor) {
	if inputSize < 0 || hiddenSize < 0 {
		argErr(op, "input_size (%d) and hidden_size (%d) must be non-negative", inputSize, hiddenSize)
	}
	b.Init(self)
	bound := kaimingBound(hiddenSize)
	*wih = uniform(ember.Shape{g * hiddenSize, inputSize}, bound)
	*whh = uniform(ember.Shape{g * hiddenSize, hiddenSize}, bound)
	if bias {
		*bih = uniform(ember.Shape{g * hiddenSize}, bound)
		*bhh = uniform(ember.Shape{g * hiddenSize}, bound)
	}
	b.RegisterParameter("weight_ih", wih)
	b.RegisterParameter("weight_hh", whh)
	b.RegisterParameter("bias_ih", bih)
	b.RegisterParameter("bias_hh", bhh)
}

func cellRepr(in, hidden int, bias *ember.Tensor) string {
	s := fmt.Sprintf("%d, %d", in, hidden)
	if bias == nil {
		s += ", bias=False"
	}
	return s
}

// cellInputs checks a cell's input x ([N, In] or unbatched [In]) and
// states (each [N, H], [H] unbatched, or nil for zeros) and returns them
// batched, with whether x was.
func cellInputs(op string, x *ember.Tensor, p cellParams, hidden int, states ...*ember.Tensor) (*ember.Tensor, []*ember.Tensor, bool) {
	if x == nil {
		shapeErrf(op, "input is nil")
	}
	if p.wih == nil || p.whh == nil {
		shapeErrf(op, "weight_ih or weight_hh is nil")
	}
	if x.Dim() != 1 && x.Dim() != 2 {
		shapeErrf(op, "Expected input to be 1-D or 2-D but received %d-D tensor", x.Dim())
	}
	batched := x.Dim() == 2
	if !batched {
		x = x.Unsqueeze(0)
	}
	if in := p.wih.Size(1); x.Size(1) != in {
		shapeErrf(op, "input has inconsistent input_size: got %d expected %d", x.Size(1), in)
	}
	sameDType(op, "the input", x, p.wih)
	out := make([]*ember.Tensor, len(states))
	for i, s := range states {
		if s == nil {
			out[i] = ember.Zeros(ember.Shape{x.Size(0), hidden}, ember.On(x.Device()), ember.Dtype(x.DType()))
			continue
		}
		if want := 1 + boolInt(batched); s.Dim() != want {
			kind := "unbatched 1-D"
			if batched {
				kind = "batched 2-D"
			}
			shapeErrf(op, "For %s input, hidden%d should also be %d-D but got %d-D tensor", kind, i, want, s.Dim())
		}
		if !batched {
			s = s.Unsqueeze(0)
		}
		if s.Size(0) != x.Size(0) {
			shapeErrf(op, "Input batch size %d doesn't match hidden%d batch size %d", x.Size(0), i, s.Size(0))
		}
		if s.Size(1) != hidden {
			shapeErrf(op, "hidden%d has inconsistent hidden_size: got %d, expected %d", i, s.Size(1), hidden)
		}
		sameDType(op, fmt.Sprintf("hidden%d", i), s, p.wih)
		out[i] = s
	}
	return x, out, batched
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// unbatch drops the batch dim of a cell's result for an unbatched input.
func unbatch(t *ember.Tensor, batched bool) *ember.Tensor {
	if batched {
		return t
	}
	return t.Squeeze(0)
}

// RNNCell is torch.nn.RNNCell: h' = tanh(x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh),
// ReLU in place of tanh with Nonlinearity "relu".
type RNNCell struct {
	Base
	WeightIH, WeightHH, BiasIH, BiasHH *ember.Tensor
	InputSize, HiddenSize              int
	Nonlinearity                       string // "tanh" or "relu"
}

// NewRNNCell returns nn.RNNCell(inputSize, hiddenSize, bias, nonlinearity)
// with PyTorch's initialisation; nonlinearity is "tanh" ("" too) or
// "relu" (PyTorch checks it in forward, ember here already).
func NewRNNCell(inputSize, hiddenSize int, bias bool, nonlinearity string) *RNNCell {
	if nonlinearity == "" {
		nonlinearity = "tanh"
	}
	checkNonlinearity("NewRNNCell", nonlinearity)
	c := &RNNCell{InputSize: inputSize, HiddenSize: hiddenSize, Nonlinearity: nonlinearity}
	newCellParams("NewRNNCell", c, &c.Base, inputSize, hiddenSize, 1, bias, &c.WeightIH, &c.WeightHH, &c.BiasIH, &c.BiasHH)
	return c
}

// Forward is ForwardState(x, nil).
func (c *RNNCell) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(c, "Forward")
	return c.ForwardState(x, nil)
}

// ForwardState is PyTorch's forward(input, hx): the next hidden state
// [N, H] of x [N, In] and h [N, H] ([H] for an unbatched [In] x; nil h is
// zeros).
func (c *RNNCell) ForwardState(x, h *ember.Tensor) *ember.Tensor {
	CheckNil(c, "ForwardState")
	const op = "RNNCell"
	if c.Nonlinearity != "tanh" && c.Nonlinearity != "relu" {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("Unknown nonlinearity: %s", c.Nonlinearity)})
	}
	p := cellParams{wih: c.WeightIH, whh: c.WeightHH, bih: c.BiasIH, bhh: c.BiasHH}
	x, s, batched := cellInputs(op, x, p, c.HiddenSize, h)
	return unbatch(rnnStep(c.Nonlinearity, ember.Linear(x, p.wih, p.bih), s[0], p), batched)
}

// ExtraRepr is "10, 20" as PyTorch prints it (", bias=False",
// ", nonlinearity=relu" when not the defaults).
func (c *RNNCell) ExtraRepr() string {
	CheckNil(c, "ExtraRepr")
	s := cellRepr(c.InputSize, c.HiddenSize, c.BiasIH)
	if c.Nonlinearity != "tanh" {
		s += ", nonlinearity=" + c.Nonlinearity
	}
	return s
}

// LSTMCell is torch.nn.LSTMCell: gates i, f, g, o = σ, σ, tanh, σ of
// x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh (stacked in that order), c' = f·c + i·g,
// h' = o·tanh(c').
type LSTMCell struct {
	Base
	WeightIH, WeightHH, BiasIH, BiasHH *ember.Tensor
	InputSize, HiddenSize              int
}

// NewLSTMCell returns nn.LSTMCell(inputSize, hiddenSize, bias) with
// PyTorch's initialisation.
func NewLSTMCell(inputSize, hiddenSize int, bias bool) *LSTMCell {
	c := &LSTMCell{InputSize: inputSize, HiddenSize: hiddenSize}
	newCellParams("NewLSTMCell", c, &c.Base, inputSize, hiddenSize, 4, bias, &c.WeightIH, &c.WeightHH, &c.BiasIH, &c.BiasHH)
	return c
}

// Forward returns h' of ForwardState(x, nil, nil).
func (c *LSTMCell) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(c, "Forward")
	h, _ := c.ForwardState(x, nil, nil)
	return h
}

// ForwardState is PyTorch's forward(input, (h, c)): the next hidden and
// cell states [N, H] of x [N, In] and h, cx [N, H] (all without N for an
// unbatched x); h and cx nil are zeros.
func (c *LSTMCell) ForwardState(x, h, cx *ember.Tensor) (h1, c1 *ember.Tensor) {
	CheckNil(c, "ForwardState")
	const op = "LSTMCell"
	if (h == nil) != (cx == nil) {
		panic(&ember.ValueError{Op: op, Msg: "h and c are given together or not at all (PyTorch's hx tuple)"})
	}
	p := cellParams{wih: c.WeightIH, whh: c.WeightHH, bih: c.BiasIH, bhh: c.BiasHH}
	x, s, batched := cellInputs(op, x, p, c.HiddenSize, h, cx)
	h1, c1 = lstmStep(ember.Linear(x, p.wih, p.bih), s[0], s[1], p)
	return unbatch(h1, batched), unbatch(c1, batched)
}

// ExtraRepr is "10, 20" as PyTorch prints it.
func (c *LSTMCell) ExtraRepr() string {
	CheckNil(c, "ExtraRepr")
	return cellRepr(c.InputSize, c.HiddenSize, c.BiasIH)
}

// GRUCell is torch.nn.GRUCell: r = σ(W_ir·x + b_ir + W_hr·h + b_hr),
// z = σ(W_iz·x + b_iz + W_hz·h + b_hz), n = tanh(W_in·x + b_in +
// r·(W_hn·h + b_hn)), h' = (1 − z)·n + z·h.
type GRUCell struct {
	Base
	WeightIH, WeightHH, BiasIH, BiasHH *ember.Tensor
	InputSize, HiddenSize              int
}

// NewGRUCell returns nn.GRUCell(inputSize, hiddenSize, bias) with
// PyTorch's initialisation.
func NewGRUCell(inputSize, hiddenSize int, bias bool) *GRUCell {
	c := &GRUCell{InputSize: inputSize, HiddenSize: hiddenSize}
	newCellParams("NewGRUCell", c, &c.Base, inputSize, hiddenSize, 3, bias, &c.WeightIH, &c.WeightHH, &c.BiasIH, &c.BiasHH)
	return c
}

// Forward is ForwardState(x, nil).
func (c *GRUCell) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(c, "Forward")
	return c.ForwardState(x, nil)
}

// ForwardState is PyTorch's forward(input, hx), as RNNCell's.
func (c *GRUCell) ForwardState(x, h *ember.Tensor) *ember.Tensor {
	CheckNil(c, "ForwardState")
	p := cellParams{wih: c.WeightIH, whh: c.WeightHH, bih: c.BiasIH, bhh: c.BiasHH}
	x, s, batched := cellInputs("GRUCell", x, p, c.HiddenSize, h)
	return unbatch(gruStep(ember.Linear(x, p.wih, p.bih), s[0], p), batched)
}

// ExtraRepr is "10, 20" as PyTorch prints it.
func (c *GRUCell) ExtraRepr() string {
	CheckNil(c, "ExtraRepr")
	return cellRepr(c.InputSize, c.HiddenSize, c.BiasIH)
}
