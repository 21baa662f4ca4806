package nn

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/emberml/ember"
)

// RNNOptions are the keyword arguments of torch.nn.RNN, LSTM and GRU
// after input_size and hidden_size. The zero value is PyTorch's defaults:
// nn.NewLSTM(10, 20, nn.RNNOptions{NumLayers: 2, BatchFirst: true}) is
// nn.LSTM(10, 20, num_layers=2, batch_first=True).
type RNNOptions struct {
	NumLayers    int    // num_layers: stacked layers, each reading the one below; 0 means 1
	Nonlinearity string // nonlinearity (RNN only): "tanh" (the default; "" too) or "relu"
	NoBias       bool   // bias=False: no bias_ih_l* and bias_hh_l*
	// BatchFirst: inputs and outputs are [N, L, features], not [L, N,
	// features] (the states stay [layers·directions, N, hidden]).
	BatchFirst bool
	// Dropout on the output of every layer but the last, in training mode
	// only.
	Dropout       float64
	Bidirectional bool // a second, reverse pass per layer (*_reverse parameters)
	// ProjSize (proj_size, LSTM only) projects each hidden state to
	// ProjSize features by weight_hr_l* (0: no projection).
	ProjSize int
}

// RNNBase is what RNN, LSTM and GRU share (PyTorch's nn.RNNBase): the
// module registry, the settings (PyTorch's attributes) and the
// parameters, registered in PyTorch's order (for each layer, for each
// direction: weight_ih, weight_hh, bias_ih, bias_hh, weight_hr). Build one
// with NewRNN, NewLSTM or NewGRU. BatchFirst and Dropout (and RNN's
// Nonlinearity) may be changed; the others are fixed by the constructor.
type RNNBase struct {
	Base
	InputSize, HiddenSize int
	NumLayers             int
	Nonlinearity          string // RNN: "tanh" or "relu"; "" for LSTM and GRU
	Bias                  bool
	BatchFirst            bool
	Dropout               float64
	Bidirectional         bool
	ProjSize              int             // LSTM: the size of h when projected; 0 when not
	mode                  string          // "RNN", "LSTM" or "GRU": the layer's name
	flat                  []*ember.Tensor // the parameters' slots, in PyTorch's order
}

// gates is the number of gate blocks stacked in the weights: 4H rows for
// LSTM (i, f, g, o), 3H for GRU (r, z, n), H for RNN.
func gates(mode string) int {
	switch mode {
	case "LSTM":
		return 4
	case "GRU":
		return 3
	}
	return 1
}

func (r *RNNBase) dirs() int {
	if r.Bidirectional {
		return 2
	}
	return 1
}

// outSize is the size of the hidden state h (H_out): ProjSize if set.
func (r *RNNBase) outSize() int {
	if r.ProjSize > 0 {
		return r.ProjSize
	}
	return r.HiddenSize
}

// perCell is the number of parameters of one layer and direction.
func (r *RNNBase) perCell() int {
	n := 2
	if r.Bias {
		n += 2
	}
	if r.ProjSize > 0 {
		n++
	}
	return n
}

func newRecurrent(self Module, mode string, inputSize, hiddenSize int, opts []RNNOptions) RNNBase {
	op := "New" + mode
	if len(opts) > 1 {
		argErr(op, "takes at most one RNNOptions, got %d", len(opts))
	}
	var o RNNOptions
	if len(opts) == 1 {
		o = opts[0]
	}
	if inputSize < 0 {
		argErr(op, "input_size must be non-negative, but got %d", inputSize)
	}
	if hiddenSize <= 0 {
		argErr(op, "hidden_size must be greater than zero, but got %d", hiddenSize)
	}
	if o.NumLayers == 0 {
		o.NumLayers = 1
	}
	if o.NumLayers < 0 {
		argErr(op, "num_layers must be greater than zero, but got %d", o.NumLayers)
	}
	if !(o.Dropout >= 0 && o.Dropout <= 1) { // NaN too
		argErr(op, "dropout should be a number in range [0, 1] representing the probability of an element being zeroed")
	}
	if mode == "RNN" {
		if o.Nonlinearity == "" {
			o.Nonlinearity = "tanh"
		}
		checkNonlinearity(op, o.Nonlinearity)
	} else if o.Nonlinearity != "" {
		argErr(op, "nonlinearity is an argument of RNN and RNNCell, not of %s", mode)
	}
	if o.ProjSize != 0 && mode != "LSTM" {
		argErr(op, "proj_size argument is only supported for LSTM, not RNN or GRU")
	}
	if o.ProjSize < 0 {
		argErr(op, "proj_size should be a positive integer or zero to disable projections")
	}
	if o.ProjSize >= hiddenSize {
		argErr(op, "proj_size has to be smaller than hidden_size")
	}
	r := RNNBase{mode: mode, InputSize: inputSize, HiddenSize: hiddenSize, NumLayers: o.NumLayers,
		Nonlinearity: o.Nonlinearity, Bias: !o.NoBias, BatchFirst: o.BatchFirst, Dropout: o.Dropout,
		Bidirectional: o.Bidirectional, ProjSize: o.ProjSize}
	if !r.countable() {
		argErr(op, "input_size %d, hidden_size %d and num_layers %d make more parameter elements than an int can count", inputSize, hiddenSize, r.NumLayers)
	}
	r.Init(self)
	g, bound, hOut := gates(mode)*hiddenSize, kaimingBound(hiddenSize), r.outSize()
	// r.flat grows by append: a capacity from NumLayers would not fit in
	// memory for an absurd count (PyTorch too builds the layers one by one)
	for layer := range r.NumLayers {
		in := inputSize
		if layer > 0 {
			in = hOut * r.dirs()
		}
		for range r.dirs() {
			r.flat = append(r.flat, uniform(ember.Shape{g, in}, bound), uniform(ember.Shape{g, hOut}, bound))
			if r.Bias {
				r.flat = append(r.flat, uniform(ember.Shape{g}, bound), uniform(ember.Shape{g}, bound))
			}
			if r.ProjSize > 0 {
				r.flat = append(r.flat, uniform(ember.Shape{r.ProjSize, hiddenSize}, bound))
			}
		}
	}
	return r
}

// countable reports whether the number of the layer's parameter elements
// fits in an int (else a shape or a slot count would overflow).
func (r *RNNBase) countable() bool {
	ok := true
	mul := func(a, b int) int {
		if a != 0 && b > math.MaxInt/a {
			ok = false
			return 0
		}
		return a * b
	}
	add := func(a, b int) int {
		if a > math.MaxInt-b {
			ok = false
			return 0
		}
		return a + b
	}
	g, h, d := mul(gates(r.mode), r.HiddenSize), r.outSize(), r.dirs()
	cell := func(in int) int {
		n := add(mul(g, in), mul(g, h))
		if r.Bias {
			n = add(n, mul(2, g))
		}
		return add(n, mul(r.ProjSize, r.HiddenSize))
	}
	n := add(mul(d, cell(r.InputSize)), mul(mul(r.NumLayers-1, d), cell(mul(h, d))))
	return ok && n >= 0
}

// register registers r.flat's slots under PyTorch's names. r.flat must
// not be reallocated afterwards: the registry points into it.
func (r *RNNBase) register() {
	names := r.paramNames()
	for i := range r.flat {
		r.RegisterParameter(names[i], &r.flat[i])
	}
}

// paramNames are PyTorch's names of r.flat, in order.
func (r *RNNBase) paramNames() []string {
	var names []string
	for layer := range r.NumLayers {
		for d := range r.dirs() {
			sfx := strconv.Itoa(layer)
			if d == 1 {
				sfx += "_reverse"
			}
			names = append(names, "weight_ih_l"+sfx, "weight_hh_l"+sfx)
			if r.Bias {
				names = append(names, "bias_ih_l"+sfx, "bias_hh_l"+sfx)
			}
			if r.ProjSize > 0 {
				names = append(names, "weight_hr_l"+sfx)
			}
		}
	}
	return names
}

// replicate copies r's settings and slots into c, a new module's
// RNNBase (for DataParallel: the registry points into r.flat, outside
// the struct, so the reflection copy cannot re-point it).
func (r *RNNBase) replicate(self Module, c *RNNBase) {
	*c = RNNBase{mode: r.mode, InputSize: r.InputSize, HiddenSize: r.HiddenSize, NumLayers: r.NumLayers,
		Nonlinearity: r.Nonlinearity, Bias: r.Bias, BatchFirst: r.BatchFirst, Dropout: r.Dropout,
		Bidirectional: r.Bidirectional, ProjSize: r.ProjSize, flat: append([]*ember.Tensor(nil), r.flat...)}
	c.Init(self)
	c.register()
	c.Train(r.Training())
}

// allWeights is PyTorch's all_weights: the parameters of each layer and
// direction (forward, then reverse), in PyTorch's order.
func (r *RNNBase) allWeights() [][]*ember.Tensor {
	k := r.perCell()
	out := make([][]*ember.Tensor, 0, len(r.flat)/max(k, 1))
	for i := 0; i+k <= len(r.flat); i += k {
		out = append(out, append([]*ember.Tensor(nil), r.flat[i:i+k]...))
	}
	return out
}

// cellParams are the parameters of one layer and direction.
type cellParams struct{ wih, whh, bih, bhh, whr *ember.Tensor }

func (r *RNNBase) cell(layer, dir int) cellParams {
	k := r.perCell()
	w := r.flat[(layer*r.dirs()+dir)*k:][:k]
	p := cellParams{wih: w[0], whh: w[1]}
	w = w[2:]
	if r.Bias {
		p.bih, p.bhh, w = w[0], w[1], w[2:]
	}
	if r.ProjSize > 0 {
		p.whr = w[0]
	}
	return p
}

// extraRepr is PyTorch's RNNBase.extra_repr (defaults left out; RNN's
// nonlinearity is not shown, as in PyTorch).
func (r *RNNBase) extraRepr() string {
	s := fmt.Sprintf("%d, %d", r.InputSize, r.HiddenSize)
	if r.ProjSize != 0 {
		s += fmt.Sprintf(", proj_size=%d", r.ProjSize)
	}
	if r.NumLayers != 1 {
		s += fmt.Sprintf(", num_layers=%d", r.NumLayers)
	}
	if !r.Bias {
		s += ", bias=False"
	}
	if r.BatchFirst {
		s += ", batch_first=True"
	}
	if r.Dropout != 0 {
		s += ", dropout=" + pyFloat(r.Dropout)
	}
	if r.Bidirectional {
		s += ", bidirectional=True"
	}
	return s
}

// pyList writes a shape as Python's list: [1, 3, 20].
func pyList(s ember.Shape) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = strconv.Itoa(v)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func checkNonlinearity(op, s string) {
	if s != "tanh" && s != "relu" {
		argErr(op, "Unknown nonlinearity '%s'", s)
	}
}

func shapeErrf(op, format string, args ...any) {
	panic(&ember.ShapeError{Op: op, Msg: fmt.Sprintf(format, args...)})
}

// sameDType panics with a *ember.DTypeError unless t (the input or a
// state) has the parameters' dtype, as PyTorch's "mat1 and mat2 must have
// the same dtype".
func sameDType(op, what string, t, w *ember.Tensor) {
	if t.DType() != w.DType() {
		panic(&ember.DTypeError{Op: op, DTypes: []ember.DType{t.DType(), w.DType()},
			Msg: fmt.Sprintf("mat1 and mat2 must have the same dtype (%s is %v, the parameters are %v)", what, t.DType(), w.DType())})
	}
}

// check panics unless the layer's settings still fit its parameters.
func (r *RNNBase) check() {
	typ := fmt.Sprintf("%T", r.self)
	if want := r.NumLayers * r.dirs() * r.perCell(); len(r.flat) != want || r.NumLayers <= 0 {
		useErr(typ, "Forward", "the layer's settings (NumLayers, Bidirectional, Bias, ProjSize) no longer fit its parameters: they are fixed by the constructor")
	}
	for i, w := range r.flat {
		if w == nil {
			useErr(typ, "Forward", fmt.Sprintf("parameter %s is nil", r.paramNames()[i]))
		}
	}
	if r.mode == "RNN" && r.Nonlinearity != "tanh" && r.Nonlinearity != "relu" {
		panic(&ember.ValueError{Op: r.mode, Msg: fmt.Sprintf("Unknown nonlinearity '%s'", r.Nonlinearity)})
	}
}

// initialStates checks h0 (and c0 for LSTM), [layers·directions, n, H]
// each, against the input x, and returns them, zeros for nil ones.
func (r *RNNBase) initialStates(x *ember.Tensor, n int, h0, c0 *ember.Tensor) []*ember.Tensor {
	lstm := r.mode == "LSTM"
	states := []*ember.Tensor{h0}
	if lstm {
		states = append(states, c0)
	}
	sizes := []int{r.outSize(), r.HiddenSize}
	for i, s := range states {
		want := ember.Shape{r.NumLayers * r.dirs(), n, sizes[i]}
		if s == nil {
			states[i] = ember.Zeros(want, ember.On(x.Device()), ember.Dtype(x.DType()))
			continue
		}
		if !s.Shape().Equal(want) {
			what := "hidden"
			if lstm {
				what = fmt.Sprintf("hidden[%d]", i)
			}
			shapeErrf(r.mode, "Expected %s size %s, got %s", what, pyTuple(want...), pyList(s.Shape()))
		}
		sameDType(r.mode, "the initial state", s, r.flat[0])
	}
	return states
}

// run is PyTorch's RNN/LSTM/GRU forward: x is [L, N, In] ([N, L, In]
// with BatchFirst, [L, In] unbatched), h0 and c0 (LSTM) are
// [layers·directions, N, H] ([layers·directions, H] unbatched) or nil for
// zeros. It returns the last layer's output at every step and the final
// states (cn nil but for LSTM).
func (r *RNNBase) run(x, h0, c0 *ember.Tensor) (out, hn, cn *ember.Tensor) {
	op := r.mode
	lstm := r.mode == "LSTM"
	if x == nil {
		shapeErrf(op, "input is nil")
	}
	r.check()
	if x.Dim() != 2 && x.Dim() != 3 {
		shapeErrf(op, "Expected input to be 2-D or 3-D but received %d-D tensor", x.Dim())
	}
	batched := x.Dim() == 3
	batchDim := 1
	if r.BatchFirst {
		batchDim = 0
	}
	if lstm && (h0 == nil) != (c0 == nil) {
		panic(&ember.ValueError{Op: op, Msg: "h0 and c0 are given together or not at all (PyTorch's hx tuple)"})
	}
	if h0 != nil {
		want := 3
		kind := "batched 3-D"
		if !batched {
			want, kind = 2, "unbatched 2-D"
		}
		if lstm && (h0.Dim() != want || c0.Dim() != want) {
			shapeErrf(op, "For %s input, hx and cx should also be %d-D but got (%d-D, %d-D) tensors", kind, want, h0.Dim(), c0.Dim())
		}
		if h0.Dim() != want {
			shapeErrf(op, "For %s input, hx should also be %d-D but got %d-D tensor", kind, want, h0.Dim())
		}
		if !batched {
			h0 = h0.Unsqueeze(1)
			if c0 != nil {
				c0 = c0.Unsqueeze(1)
			}
		}
	}
	if !batched {
		x = x.Unsqueeze(batchDim)
	}
	if x.Size(-1) != r.InputSize {
		shapeErrf(op, "input.size(-1) must be equal to input_size. Expected %d, got %d", r.InputSize, x.Size(-1))
	}
	sameDType(op, "the input", x, r.flat[0])
	if r.BatchFirst {
		x = x.Transpose(0, 1)
	}
	seq, n := x.Size(0), x.Size(1)
	if seq == 0 {
		shapeErrf(op, "Expected sequence length to be larger than 0 in RNN")
	}
	states := r.initialStates(x, n, h0, c0)
	sizes := make([]int, seq)
	for t := range sizes {
		sizes[t] = n
	}
	y, finals := r.layers(x.Reshape(seq*n, r.InputSize), sizes, states)
	out, hn = y.Reshape(seq, n, y.Size(1)), finals[0]
	if lstm {
		cn = finals[1]
	}
	if r.BatchFirst {
		out = out.Transpose(0, 1)
	}
	if !batched {
		out = out.Squeeze(batchDim)
		hn = hn.Squeeze(1)
		if cn != nil {
			cn = cn.Squeeze(1)
		}
	}
	return out, hn, cn
}

// layers runs every layer and direction over the rows of x: the inputs of
// time step t are sizes[t] rows (a packed sequence's batch sizes, which
// never grow; L steps of N for a padded batch), the states [layers·directions,
// sizes[0], H]. It returns the top layer's output rows, [rows, D·H_out],
// and the final states, stacked as the initial ones: a sequence's final
// state is its state after its last step (a packed batch's shorter
// sequences end first).
func (r *RNNBase) layers(x *ember.Tensor, sizes []int, states []*ember.Tensor) (*ember.Tensor, []*ember.Tensor) {
	finals := make([][]*ember.Tensor, len(states))
	in := x
	for layer := range r.NumLayers {
		outs := make([]*ember.Tensor, r.dirs())
		for d := range outs {
			p := r.cell(layer, d)
			init := make([]*ember.Tensor, len(states))
			for i, s := range states {
				init[i] = s.Select(0, layer*r.dirs()+d)
			}
			// the input projections of all steps in one product
			steps := stepViews(ember.Linear(in, p.wih, p.bih), sizes)
			var ys, last []*ember.Tensor
			if d == 0 {
				ys, last = r.forwardDir(steps, sizes, init, p)
			} else {
				ys, last = r.reverseDir(steps, sizes, init, p)
			}
			outs[d] = ember.Cat(ys, 0)
			for i := range finals {
				finals[i] = append(finals[i], last[i])
			}
		}
		in = outs[0]
		if len(outs) == 2 {
			in = ember.Cat(outs, 1)
		}
		if layer < r.NumLayers-1 && r.Dropout > 0 && r.Training() {
			in = ember.Dropout(in, r.Dropout, true)
		}
	}
	out := make([]*ember.Tensor, len(finals))
	for i, f := range finals {
		out[i] = ember.Stack(f, 0)
	}
	return in, out
}

// step2 is step on a layer's states s: h and, for LSTM, c.
func (r *RNNBase) step2(gi *ember.Tensor, s []*ember.Tensor, p cellParams) []*ember.Tensor {
	var c *ember.Tensor
	if len(s) == 2 {
		c = s[1]
	}
	h, c := r.step(gi, s[0], c, p)
	if len(s) == 2 {
		return []*ember.Tensor{h, c}
	}
	return []*ember.Tensor{h}
}

// forwardDir runs steps 0 … L−1; when the batch shrinks, the rows that
// leave keep their states as final ones.
func (r *RNNBase) forwardDir(steps []*ember.Tensor, sizes []int, s []*ember.Tensor, p cellParams) (ys, last []*ember.Tensor) {
	ys = make([]*ember.Tensor, len(steps))
	ended := make([][]*ember.Tensor, len(s)) // rows that ended, latest first
	for t, gi := range steps {
		if rows := s[0].Size(0); sizes[t] < rows {
			for i := range s {
				ended[i] = append([]*ember.Tensor{s[i].Narrow(0, sizes[t], rows-sizes[t])}, ended[i]...)
				s[i] = s[i].Narrow(0, 0, sizes[t])
			}
		}
		s = r.step2(gi, s, p)
		ys[t] = s[0]
	}
	last = s
	for i := range s {
		if len(ended[i]) > 0 {
			last[i] = ember.Cat(append([]*ember.Tensor{s[i]}, ended[i]...), 0)
		}
	}
	return ys, last
}

// reverseDir runs steps L−1 … 0; when the batch grows, the rows that join
// start from their initial states.
func (r *RNNBase) reverseDir(steps []*ember.Tensor, sizes []int, init []*ember.Tensor, p cellParams) (ys, s []*ember.Tensor) {
	ys = make([]*ember.Tensor, len(steps))
	s = make([]*ember.Tensor, len(init))
	for i, v := range init {
		s[i] = v.Narrow(0, 0, 0)
	}
	for t := len(steps) - 1; t >= 0; t-- {
		if rows := s[0].Size(0); sizes[t] > rows {
			for i := range s {
				join := init[i].Narrow(0, rows, sizes[t]-rows)
				if rows == 0 {
					s[i] = join
				} else {
					s[i] = ember.Cat([]*ember.Tensor{s[i], join}, 0)
				}
			}
		}
		s = r.step2(steps[t], s, p)
		ys[t] = s[0]
	}
	return ys, s
}

// step is one time step of one layer and direction, given the step's
// input projection gi = x·W_ihᵀ + b_ih.
func (r *RNNBase) step(gi, h, c *ember.Tensor, p cellParams) (*ember.Tensor, *ember.Tensor) {
	switch r.mode {
	case "LSTM":
		return lstmStep(gi, h, c, p)
	case "GRU":
		return gruStep(gi, h, p), nil
	}
	return rnnStep(r.Nonlinearity, gi, h, p), nil
}

// stepViews cuts the rows of g into consecutive pieces of sizes[t] rows:
// one split, whose backward joins the steps' gradients once.
func stepViews(g *ember.Tensor, sizes []int) []*ember.Tensor {
	return g.SplitSizes(sizes, 0)
}

// rnnStep is h' = act(gi + h·W_hhᵀ + b_hh).
func rnnStep(nonlinearity string, gi, h *ember.Tensor, p cellParams) *ember.Tensor {
	a := gi.Add(ember.Linear(h, p.whh, p.bhh))
	if nonlinearity == "relu" {
		return a.ReLU()
	}
	return a.Tanh()
}

// lstmStep is PyTorch's LSTM cell: gates i, f, g, o from gi + h·W_hhᵀ +
// b_hh; c' = f·c + i·g; h' = o·tanh(c'), projected by W_hr when present.
func lstmStep(gi, h, c *ember.Tensor, p cellParams) (*ember.Tensor, *ember.Tensor) {
	ch := gi.Add(ember.Linear(h, p.whh, p.bhh)).Chunk(4, 1)
	i, f, g, o := ch[0].Sigmoid(), ch[1].Sigmoid(), ch[2].Tanh(), ch[3].Sigmoid()
	c = f.Mul(c).Add(i.Mul(g))
	h = o.Mul(c.Tanh())
	if p.whr != nil {
		h = ember.Linear(h, p.whr, nil)
	}
	return h, c
}

// gruStep is PyTorch's GRU cell: r, z from the sums of the input and
// hidden projections, n = tanh(gi_n + r·(h·W_hnᵀ + b_hn)), h' = (h − n)·z + n
// (that is (1 − z)·n + z·h, computed as ATen does).
func gruStep(gi, h *ember.Tensor, p cellParams) *ember.Tensor {
	ci := gi.Chunk(3, 1)
	chh := ember.Linear(h, p.whh, p.bhh).Chunk(3, 1)
	rg := ci[0].Add(chh[0]).Sigmoid()
	z := ci[1].Add(chh[1]).Sigmoid()
	ng := ci[2].Add(rg.Mul(chh[2])).Tanh()
	return h.Sub(ng).Mul(z).Add(ng)
}

// RNN is torch.nn.RNN: an Elman recurrence h_t = tanh(x_t·W_ihᵀ + b_ih +
// h_{t−1}·W_hhᵀ + b_hh) (ReLU with Nonlinearity "relu") over a sequence,
// in NumLayers stacked layers, optionally bidirectional. Its fields
// (RNNBase's) are PyTorch's attributes. Its parameters and state-dict keys are PyTorch's: weight_ih_l{k},
// weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}, with _reverse ones for the
// second direction, so a PyTorch state dict loads with LoadStateDict.
type RNN struct{ RNNBase }

// NewRNN returns nn.RNN(inputSize, hiddenSize, ...) with PyTorch's
// initialisation, U(−1/√hiddenSize, 1/√hiddenSize) for every parameter;
// opts (at most one) holds the other arguments.
func NewRNN(inputSize, hiddenSize int, opts ...RNNOptions) *RNN {
	m := &RNN{}
	m.RNNBase = newRecurrent(m, "RNN", inputSize, hiddenSize, opts)
	m.register()
	return m
}

// Forward returns the output of ForwardState(x, nil): the last layer's
// hidden state at every step, [L, N, D·H] ([N, L, D·H] with BatchFirst,
// [L, D·H] for an unbatched [L, In] x), D being 2 when bidirectional.
func (m *RNN) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(m, "Forward")
	out, _, _ := m.run(x, nil, nil)
	return out
}

// ForwardState is PyTorch's forward(input, h_0): it returns the output
// (see Forward) and h_n, the final hidden state of each layer and
// direction, [NumLayers·D, N, H] ([NumLayers·D, H] unbatched). A nil h0
// is zeros; else it has h_n's shape.
func (m *RNN) ForwardState(x, h0 *ember.Tensor) (out, hn *ember.Tensor) {
	CheckNil(m, "ForwardState")
	out, hn, _ = m.run(x, h0, nil)
	return out, hn
}

// AllWeights is PyTorch's all_weights: the parameters of each layer and
// direction, [w_ih, w_hh, b_ih, b_hh] (no biases without Bias).
func (m *RNN) AllWeights() [][]*ember.Tensor {
	CheckNil(m, "AllWeights")
	return m.allWeights()
}

// ExtraRepr is "10, 20, num_layers=2" as PyTorch prints it.
func (m *RNN) ExtraRepr() string {
	CheckNil(m, "ExtraRepr")
	return m.extraRepr()
}

// ReplicateModule is RNN's structural copy for DataParallel.
func (m *RNN) ReplicateModule(func(Module) Module) Module {
	CheckNil(m, "ReplicateModule")
	c := &RNN{}
	m.replicate(c, &c.RNNBase)
	return c
}

// LSTM is torch.nn.LSTM: over a sequence, gates i, f, g, o = σ, σ, tanh, σ
// of x_t·W_ihᵀ + b_ih + h_{t−1}·W_hhᵀ + b_hh (stacked in that order in the
// weights' 4·HiddenSize rows), c_t = f·c_{t−1} + i·g and h_t = o·tanh(c_t),
// projected to ProjSize features by W_hr when ProjSize > 0; in NumLayers
// stacked layers, optionally bidirectional. Fields, parameter names and
// state dict are PyTorch's, as RNN's, with weight_hr_l{k} for the
// projection.
type LSTM struct{ RNNBase }

// NewLSTM returns nn.LSTM(inputSize, hiddenSize, ...) with PyTorch's
// initialisation; opts (at most one) holds the other arguments.
func NewLSTM(inputSize, hiddenSize int, opts ...RNNOptions) *LSTM {
	m := &LSTM{}
	m.RNNBase = newRecurrent(m, "LSTM", inputSize, hiddenSize, opts)
	m.register()
	return m
}

// Forward returns the output of ForwardState(x, nil, nil): the last
// layer's h at every step, [L, N, D·H_out] ([N, L, D·H_out] with
// BatchFirst, [L, D·H_out] unbatched), H_out being ProjSize if set, else
// HiddenSize.
func (m *LSTM) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(m, "Forward")
	out, _, _ := m.run(x, nil, nil)
	return out
}

// ForwardState is PyTorch's forward(input, (h_0, c_0)): it returns the
// output (see Forward) and the final states h_n [NumLayers·D, N, H_out]
// and c_n [NumLayers·D, N, HiddenSize] (without N unbatched). h0 and c0
// have those shapes, or are both nil for zeros.
func (m *LSTM) ForwardState(x, h0, c0 *ember.Tensor) (out, hn, cn *ember.Tensor) {
	CheckNil(m, "ForwardState")
	return m.run(x, h0, c0)
}

// AllWeights is PyTorch's all_weights: the parameters of each layer and
// direction, [w_ih, w_hh, b_ih, b_hh, w_hr] (no biases without Bias, no
// w_hr without ProjSize).
func (m *LSTM) AllWeights() [][]*ember.Tensor {
	CheckNil(m, "AllWeights")
	return m.allWeights()
}

// ExtraRepr is "10, 20, num_layers=2, batch_first=True" as PyTorch prints it.
func (m *LSTM) ExtraRepr() string {
	CheckNil(m, "ExtraRepr")
	return m.extraRepr()
}

// ReplicateModule is LSTM's structural copy for DataParallel.
func (m *LSTM) ReplicateModule(func(Module) Module) Module {
	CheckNil(m, "ReplicateModule")
	c := &LSTM{}
	m.replicate(c, &c.RNNBase)
	return c
}

// GRU is torch.nn.GRU: over a sequence, r = σ(W_ir·x + b_ir + W_hr·h +
// b_hr), z = σ(W_iz·x + b_iz + W_hz·h + b_hz), n = tanh(W_in·x + b_in +
// r·(W_hn·h + b_hn)) and h' = (1 − z)·n + z·h, the gates stacked r, z, n in
// the weights' 3·HiddenSize rows; in NumLayers stacked layers, optionally
// bidirectional. Fields, parameter names and state dict are PyTorch's, as
// RNN's.
type GRU struct{ RNNBase }

// NewGRU returns nn.GRU(inputSize, hiddenSize, ...) with PyTorch's
// initialisation; opts (at most one) holds the other arguments.
func NewGRU(inputSize, hiddenSize int, opts ...RNNOptions) *GRU {
	m := &GRU{}
	m.RNNBase = newRecurrent(m, "GRU", inputSize, hiddenSize, opts)
	m.register()
	return m
}

// Forward returns the output of ForwardState(x, nil), as RNN's.
func (m *GRU) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(m, "Forward")
	out, _, _ := m.run(x, nil, nil)
	return out
}

// ForwardState is PyTorch's forward(input, h_0), as RNN's.
func (m *GRU) ForwardState(x, h0 *ember.Tensor) (out, hn *ember.Tensor) {
	CheckNil(m, "ForwardState")
	out, hn, _ = m.run(x, h0, nil)
	return out, hn
}

// AllWeights is PyTorch's all_weights, as RNN's.
func (m *GRU) AllWeights() [][]*ember.Tensor {
	CheckNil(m, "AllWeights")
	return m.allWeights()
}

// ExtraRepr is "10, 20, bidirectional=True" as PyTorch prints it.
func (m *GRU) ExtraRepr() string {
	CheckNil(m, "ExtraRepr")
	return m.extraRepr()
}

// ReplicateModule is GRU's structural copy for DataParallel.
func (m *GRU) ReplicateModule(func(Module) Module) Module {
	CheckNil(m, "ReplicateModule")
	c := &GRU{}
	m.replicate(c, &c.RNNBase)
	return c
}
