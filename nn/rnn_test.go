package nn_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/weights"
)

// The fixtures are testdata/nn/rnn.safetensors and rnn.json, written by
// testdata/gen_rnn_fixtures.py (PyTorch 1.13): each case is a layer or
// cell built by PyTorch with a fixed seed, its state dict, inputs,
// outputs and the gradients of a scalar loss.

type rnnCase struct {
	KW     map[string]any `json:"kw"`
	Repr   string         `json:"repr"`
	Train  bool           `json:"train"`
	Params [][]any        `json:"params"`
	// the packed cases': the padded input's steps, and whether the
	// batch was packed as given
	Steps         int  `json:"steps"`
	EnforceSorted bool `json:"enforce_sorted"`
}

var (
	rnnOnce  sync.Once
	rnnFix   map[string]*ember.Tensor
	rnnCases map[string]rnnCase
	rnnErr   error
)

func rnnFixture(t *testing.T) (map[string]*ember.Tensor, map[string]rnnCase) {
	t.Helper()
	rnnOnce.Do(func() {
		rnnFix, rnnErr = weights.LoadSafetensors("../testdata/nn/rnn.safetensors")
		if rnnErr != nil {
			return
		}
		var b []byte
		if b, rnnErr = os.ReadFile("../testdata/nn/rnn.json"); rnnErr == nil {
			rnnErr = json.Unmarshal(b, &rnnCases)
		}
	})
	if rnnErr != nil {
		t.Fatal(rnnErr)
	}
	return rnnFix, rnnCases
}

func rnnCaseNames(t *testing.T) []string {
	_, cases := rnnFixture(t)
	var names []string
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// rnnKind is the case's module: the name up to its first "_" (after
// "packed_").
func rnnKind(name string) string {
	kind, _, _ := strings.Cut(strings.TrimPrefix(name, "packed_"), "_")
	return kind
}

// newRNNCase builds the case's module from its PyTorch keywords, the input
// and hidden sizes read off the fixture's weight_ih.
func newRNNCase(t *testing.T, name string) nn.Module {
	f, cases := rnnFixture(t)
	c := cases[name]
	kind := rnnKind(name)
	w := f[name+".sd.weight_ih_l0"]
	if strings.HasSuffix(kind, "cell") {
		w = f[name+".sd.weight_ih"]
	}
	gates := map[string]int{"rnn": 1, "lstm": 4, "gru": 3, "rnncell": 1, "lstmcell": 4, "grucell": 3}[kind]
	in, hidden := w.Size(1), w.Size(0)/gates
	bias := c.KW["bias"] != false
	nonlin, _ := c.KW["nonlinearity"].(string)
	num := func(k string) float64 { v, _ := c.KW[k].(float64); return v }
	o := nn.RNNOptions{NumLayers: int(num("num_layers")), Nonlinearity: nonlin, NoBias: !bias,
		BatchFirst: c.KW["batch_first"] == true, Dropout: num("dropout"),
		Bidirectional: c.KW["bidirectional"] == true, ProjSize: int(num("proj_size"))}
	switch kind {
	case "rnn":
		return nn.NewRNN(in, hidden, o)
	case "lstm":
		return nn.NewLSTM(in, hidden, o)
	case "gru":
		return nn.NewGRU(in, hidden, o)
	case "rnncell":
		return nn.NewRNNCell(in, hidden, bias, nonlin)
	case "lstmcell":
		return nn.NewLSTMCell(in, hidden, bias)
	case "grucell":
		return nn.NewGRUCell(in, hidden, bias)
	}
	t.Fatalf("%s: unknown kind %q", name, kind)
	return nil
}

// runRNN calls the module's ForwardState and returns its outputs by the
// fixture's names (out, hn, cn; a cell's h' is hn and its c' cn).
func runRNN(m nn.Module, x, h0, c0 *ember.Tensor) map[string]*ember.Tensor {
	out := map[string]*ember.Tensor{}
	switch m := m.(type) {
	case *nn.RNN:
		out["out"], out["hn"] = m.ForwardState(x, h0)
	case *nn.GRU:
		out["out"], out["hn"] = m.ForwardState(x, h0)
	case *nn.LSTM:
		out["out"], out["hn"], out["cn"] = m.ForwardState(x, h0, c0)
	case *nn.RNNCell:
		out["hn"] = m.ForwardState(x, h0)
	case *nn.GRUCell:
		out["hn"] = m.ForwardState(x, h0)
	case *nn.LSTMCell:
		out["hn"], out["cn"] = m.ForwardState(x, h0, c0)
	}
	return out
}

func ints(t *ember.Tensor) []int {
	if t == nil {
		return nil
	}
	var out []int
	for _, v := range t.Int64s() {
		out = append(out, int(v))
	}
	return out
}

// runPacked packs the case's padded x as PyTorch did, runs ForwardPacked
// and pads its output back, checking the packed tensors on the way.
func runPacked(t *testing.T, label string, m nn.Module, f map[string]*ember.Tensor, name string, c rnnCase, x, h0, c0 *ember.Tensor) map[string]*ember.Tensor {
	t.Helper()
	bf := c.KW["batch_first"] == true
	lengths := ints(f[name+".lengths"])
	p := nn.PackPaddedSequence(x, lengths, bf, c.EnforceSorted)
	tfNear(t, label+" packed data", p.Data, f[name+".data"], 0)
	if got, want := fmt.Sprint(p.BatchSizes, p.SortedIndices), fmt.Sprint(ints(f[name+".batch_sizes"]), ints(f[name+".sorted_indices"])); got != want {
		t.Errorf("%s: batch sizes and sorted indices %s, want %s", label, got, want)
	}
	var y *nn.PackedSequence
	outs := map[string]*ember.Tensor{}
	switch m := m.(type) {
	case *nn.RNN:
		y, outs["hn"] = m.ForwardPacked(p, h0)
	case *nn.GRU:
		y, outs["hn"] = m.ForwardPacked(p, h0)
	case *nn.LSTM:
		y, outs["hn"], outs["cn"] = m.ForwardPacked(p, h0, c0)
	}
	tfNear(t, label+" packed output", y.Data, f[name+".out_data"], 1e-5)
	var got []int
	outs["out"], got = nn.PadPackedSequence(y, bf, 0, c.Steps)
	if fmt.Sprint(got) != fmt.Sprint(lengths) {
		t.Errorf("%s: PadPackedSequence lengths %v, want %v", label, got, lengths)
	}
	return outs
}

// TestRNNMatchesTorch loads each case's PyTorch state dict and compares
// outputs, final states and the gradients of the inputs, initial states
// and every parameter with PyTorch's, on every device.
func TestRNNMatchesTorch(t *testing.T) {
	for _, dev := range tfDevices() {
		checkRNNCases(t, dev)
	}
}

// TestRNNOnEmulatedCUDA runs the same cases on the emulated cuda:0 (the
// CUDA backend's kernels built with g++).
func TestRNNOnEmulatedCUDA(t *testing.T) {
	defer emulatedCUDA(t, "TestRNNMatchesTorch runs on it")()
	checkRNNCases(t, ember.CUDA(0))
}

func checkRNNCases(t *testing.T, dev ember.Device) {
	f, cases := rnnFixture(t)
	for _, name := range rnnCaseNames(t) {
		c := cases[name]
		label := fmt.Sprintf("%s on %v", name, dev)
		m := newRNNCase(t, name)
		sd := map[string]*ember.Tensor{}
		for k, v := range f {
			if key, ok := strings.CutPrefix(k, name+".sd."); ok {
				sd[key] = v
			}
		}
		if err := m.LoadStateDict(sd, true); err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		m.To(dev)
		m.Train(c.Train)
		x := leafOn(f[name+".x"], dev)
		ins := map[string]*ember.Tensor{"x": x}
		for _, k := range []string{"h0", "c0"} {
			if v := f[name+"."+k]; v != nil {
				ins[k] = leafOn(v, dev)
			}
		}
		var outs map[string]*ember.Tensor
		if strings.HasPrefix(name, "packed_") {
			outs = runPacked(t, label, m, f, name, c, x, ins["h0"], ins["c0"])
		} else {
			outs = runRNN(m, x, ins["h0"], ins["c0"])
		}
		var loss *ember.Tensor
		for k, o := range outs {
			tfNear(t, label+" "+k, o, f[name+"."+k], 1e-5)
			if o.Device() != dev {
				t.Errorf("%s: %s on %v", label, k, o.Device())
			}
			l := o.Mul(f[name+".g"+k].To(dev)).Sum()
			if loss == nil {
				loss = l
			} else {
				loss = loss.Add(l)
			}
		}
		loss.Backward()
		for k, v := range ins {
			tfNear(t, label+" grad "+k, v.Grad(), f[name+".grad."+k], 1e-5)
		}
		for _, p := range m.NamedParameters() {
			if p.Tensor.Grad() == nil {
				t.Errorf("%s: %s has no gradient", label, p.Name)
				continue
			}
			tfNear(t, label+" grad "+p.Name, p.Tensor.Grad(), f[name+".grad.sd."+p.Name], 1e-5)
		}
	}
}

// TestRNNLayout: a fresh module has PyTorch's parameters (names, order,
// shapes) and repr, and its initialisation is U(−1/√H, 1/√H).
func TestRNNLayout(t *testing.T) {
	_, cases := rnnFixture(t)
	for _, name := range rnnCaseNames(t) {
		c := cases[name]
		ember.ManualSeed(7)
		m := newRNNCase(t, name)
		if got := fmt.Sprint(m); got != c.Repr {
			t.Errorf("%s: repr %q, want %q", name, got, c.Repr)
		}
		ps := m.NamedParameters()
		if len(ps) != len(c.Params) {
			t.Fatalf("%s: %d parameters, want %d (%v)", name, len(ps), len(c.Params), c.Params)
		}
		hidden := 0
		for i, p := range ps {
			var shape ember.Shape
			for _, d := range c.Params[i][1].([]any) {
				shape = append(shape, int(d.(float64)))
			}
			if p.Name != c.Params[i][0] || !p.Tensor.Shape().Equal(shape) {
				t.Errorf("%s: parameter %d is %s %v, want %v %v", name, i, p.Name, p.Tensor.Shape(), c.Params[i][0], shape)
			}
			if !p.Tensor.RequiresGrad() {
				t.Errorf("%s: %s does not require grad", name, p.Name)
			}
			if strings.HasPrefix(p.Name, "weight_hh") {
				hidden = p.Tensor.Size(0) / map[string]int{"rnn": 1, "lstm": 4, "gru": 3}[strings.TrimSuffix(rnnKind(name), "cell")]
			}
		}
		bound := 1 / math.Sqrt(float64(hidden))
		for _, p := range ps {
			v := p.Tensor.Float64s()
			if len(v) == 0 {
				continue
			}
			lo, hi := v[0], v[0]
			for _, x := range v {
				lo, hi = min(lo, x), max(hi, x)
			}
			if lo < -bound || hi > bound || (len(v) > 8 && hi-lo < bound) {
				t.Errorf("%s: %s spans [%v, %v], want U(-%v, %v)", name, p.Name, lo, hi, bound, bound)
			}
		}
	}
}

// TestLSTMLoadsTorchSave loads a torch.save'd LSTM state dict (proj_size,
// two bidirectional layers) with ember's .pth reader.
func TestLSTMLoadsTorchSave(t *testing.T) {
	f, _ := rnnFixture(t)
	sd, err := weights.LoadPyTorch("../testdata/nn/rnn_lstm.pth")
	if err != nil {
		t.Fatal(err)
	}
	m := nn.NewLSTM(4, 6, nn.RNNOptions{ProjSize: 3, NumLayers: 2, Bidirectional: true})
	if err := m.LoadStateDict(sd, true); err != nil {
		t.Fatal(err)
	}
	m.Eval()
	out, hn, cn := m.ForwardState(f["lstm_proj.x"], f["lstm_proj.h0"], f["lstm_proj.c0"])
	tfNear(t, "out", out, f["lstm_proj.out"], 1e-5)
	tfNear(t, "hn", hn, f["lstm_proj.hn"], 1e-5)
	tfNear(t, "cn", cn, f["lstm_proj.cn"], 1e-5)
	if w := m.AllWeights(); len(w) != 4 || len(w[3]) != 5 || w[3][4] != m.StateDict()["weight_hr_l1_reverse"] {
		t.Errorf("AllWeights: %d groups", len(w))
	}
}

// TestRNNShapesOnMeta: output and state shapes of PyTorch's conventions,
// on the meta device.
func TestRNNShapesOnMeta(t *testing.T) {
	meta := func(s ...int) *ember.Tensor { return ember.Zeros(ember.Shape(s), ember.On(ember.Meta)) }
	type want struct{ out, hn, cn ember.Shape }
	check := func(label string, got map[string]*ember.Tensor, w want) {
		t.Helper()
		for k, s := range map[string]ember.Shape{"out": w.out, "hn": w.hn, "cn": w.cn} {
			if s == nil {
				continue
			}
			if g := got[k]; g == nil || !g.Shape().Equal(s) || g.Device() != ember.Meta {
				t.Errorf("%s: %s %v, want %v on meta", label, k, g, s)
			}
		}
	}
	l := nn.NewLSTM(3, 8, nn.RNNOptions{NumLayers: 3, Bidirectional: true, ProjSize: 2, BatchFirst: true})
	l.To(ember.Meta)
	check("lstm batch_first", runRNN(l, meta(5, 7, 3), nil, nil), want{ember.Shape{5, 7, 4}, ember.Shape{6, 5, 2}, ember.Shape{6, 5, 8}})
	check("lstm unbatched", runRNN(l, meta(7, 3), meta(6, 2), meta(6, 8)), want{ember.Shape{7, 4}, ember.Shape{6, 2}, ember.Shape{6, 8}})
	g := nn.NewGRU(3, 4, nn.RNNOptions{NumLayers: 2})
	g.To(ember.Meta)
	check("gru", runRNN(g, meta(7, 5, 3), nil, nil), want{out: ember.Shape{7, 5, 4}, hn: ember.Shape{2, 5, 4}})
	check("gru empty batch", runRNN(g, meta(7, 0, 3), nil, nil), want{out: ember.Shape{7, 0, 4}, hn: ember.Shape{2, 0, 4}})
	if y := g.Forward(meta(2, 5, 3)); !y.Shape().Equal(ember.Shape{2, 5, 4}) {
		t.Errorf("GRU.Forward: %v", y.Shape())
	}
	p := nn.PackPaddedSequence(meta(6, 3, 3), []int{2, 6, 3}, false, false)
	y, hn, cn := l.ForwardPacked(nn.PackPaddedSequence(meta(3, 6, 3), []int{2, 6, 3}, true, false), nil, nil)
	padded, _ := nn.PadPackedSequence(y, true, 0, 7)
	check("lstm packed", map[string]*ember.Tensor{"out": padded, "hn": hn, "cn": cn}, want{ember.Shape{3, 7, 4}, ember.Shape{6, 3, 2}, ember.Shape{6, 3, 8}})
	// a long total_length is one padding block (it was one tensor per step:
	// 2^40 of them here)
	if long, _ := nn.PadPackedSequence(y, false, 0, 1<<40); !long.Shape().Equal(ember.Shape{1 << 40, 3, 4}) || long.Device() != ember.Meta {
		t.Errorf("PadPackedSequence total_length 2^40 on meta: %v", long)
	}
	if !p.Data.Shape().Equal(ember.Shape{11, 3}) || fmt.Sprint(p.BatchSizes) != "[3 3 2 1 1 1]" {
		t.Errorf("packed on meta: %v %v", p.Data.Shape(), p.BatchSizes)
	}
	c := nn.NewLSTMCell(3, 4, true)
	c.To(ember.Meta)
	check("lstm cell", runRNN(c, meta(5, 3), nil, nil), want{hn: ember.Shape{5, 4}, cn: ember.Shape{5, 4}})
	check("lstm cell unbatched", runRNN(c, meta(3), meta(4), meta(4)), want{hn: ember.Shape{4}, cn: ember.Shape{4}})
}

// TestRNNDataParallel runs a batch-first GRU over two CPU replicas (which
// need GRU's own ReplicateModule: its parameters live in a slice) against
// PyTorch's output and gradients.
func TestRNNDataParallel(t *testing.T) {
	f, _ := rnnFixture(t)
	const name = "gru_2l_bidir_bf"
	m := newRNNCase(t, name)
	sd := map[string]*ember.Tensor{}
	for k, v := range f {
		if key, ok := strings.CutPrefix(k, name+".sd."); ok {
			sd[key] = v
		}
	}
	if err := m.LoadStateDict(sd, true); err != nil {
		t.Fatal(err)
	}
	m.Eval()
	if err := nn.Check(m); err != nil {
		t.Fatal(err)
	}
	dp := nn.NewDataParallel(m, ember.CPU, ember.CPU)
	x := leafOn(f[name+".x"], ember.CPU)
	out := dp.Forward(x)
	tfNear(t, "out", out, f[name+".outonly.out"], 1e-5)
	out.Mul(f[name+".gout"]).Sum().Backward()
	tfNear(t, "grad x", x.Grad(), f[name+".outonly.grad.x"], 1e-5)
	for _, p := range m.NamedParameters() {
		tfNear(t, "grad "+p.Name, p.Tensor.Grad(), f[name+".outonly.grad.sd."+p.Name], 1e-5)
	}
}

// TestRNNMisuse: bad arguments and inputs panic with typed errors naming
// the layer, in PyTorch's words.
func TestRNNMisuse(t *testing.T) {
	lstm := nn.NewLSTM(10, 20)
	rnn := nn.NewRNN(10, 20, nn.RNNOptions{NumLayers: 2})
	cell := nn.NewLSTMCell(10, 20, true)
	gcell := nn.NewGRUCell(10, 20, true)
	z := func(s ...int) *ember.Tensor { return ember.Zeros(ember.Shape(s)) }
	shape := []struct {
		what string
		f    func()
		msg  string
	}{
		{"4-D input", func() { lstm.Forward(z(2, 3, 4, 10)) }, "LSTM: Expected input to be 2-D or 3-D but received 4-D tensor"},
		{"input size", func() { lstm.Forward(z(5, 3, 5)) }, "LSTM: input.size(-1) must be equal to input_size. Expected 10, got 5"},
		{"h0 size", func() { lstm.ForwardState(z(5, 3, 10), z(1, 3, 19), z(1, 3, 20)) }, "Expected hidden[0] size (1, 3, 20), got [1, 3, 19]"},
		{"c0 size", func() { lstm.ForwardState(z(5, 3, 10), z(1, 3, 20), z(1, 2, 20)) }, "Expected hidden[1] size (1, 3, 20), got [1, 2, 20]"},
		{"h0 rank", func() { lstm.ForwardState(z(5, 3, 10), z(3, 20), z(1, 3, 20)) }, "For batched 3-D input, hx and cx should also be 3-D but got (2-D, 3-D) tensors"},
		{"rnn h0 rank", func() { rnn.ForwardState(z(5, 3, 10), z(3, 20)) }, "RNN: For batched 3-D input, hx should also be 3-D but got 2-D tensor"},
		{"rnn unbatched h0 rank", func() { rnn.ForwardState(z(5, 10), z(2, 3, 20)) }, "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor"},
		{"rnn h0 size", func() { rnn.ForwardState(z(5, 3, 10), z(2, 2, 20)) }, "RNN: Expected hidden size (2, 3, 20), got [2, 2, 20]"},
		{"empty sequence", func() { rnn.Forward(z(0, 3, 10)) }, "Expected sequence length to be larger than 0 in RNN"},
		{"nil input", func() { rnn.Forward(nil) }, "RNN: input is nil"},
		{"cell 3-D", func() { cell.Forward(z(2, 3, 10)) }, "LSTMCell: Expected input to be 1-D or 2-D but received 3-D tensor"},
		{"cell input size", func() { cell.Forward(z(3, 5)) }, "input has inconsistent input_size: got 5 expected 10"},
		{"cell h size", func() { cell.ForwardState(z(3, 10), z(3, 19), z(3, 20)) }, "hidden0 has inconsistent hidden_size: got 19, expected 20"},
		{"cell c size", func() { cell.ForwardState(z(3, 10), z(3, 20), z(3, 19)) }, "hidden1 has inconsistent hidden_size: got 19, expected 20"},
		{"cell batch", func() { gcell.ForwardState(z(3, 10), z(2, 20)) }, "GRUCell: Input batch size 3 doesn't match hidden0 batch size 2"},
		{"cell unbatched h rank", func() { gcell.ForwardState(z(10), z(1, 20)) }, "For unbatched 1-D input, hidden0 should also be 1-D but got 2-D tensor"},
	}
	for _, c := range shape {
		e := testenv.Raises[*ember.ShapeError](t, c.what, c.f)
		if !strings.Contains(e.Error(), c.msg) {
			t.Errorf("%s: %q, want %q", c.what, e, c.msg)
		}
	}
	dtype := []struct {
		what string
		f    func()
	}{
		{"float64 input", func() { lstm.Forward(z(5, 3, 10).Cast(ember.Float64)) }},
		{"float64 h0", func() { rnn.ForwardState(z(5, 3, 10), z(2, 3, 20).Cast(ember.Float64)) }},
		{"cell float64 h", func() { gcell.ForwardState(z(3, 10), z(3, 20).Cast(ember.Float64)) }},
	}
	for _, c := range dtype {
		e := testenv.Raises[*ember.DTypeError](t, c.what, c.f)
		if !strings.Contains(e.Error(), "mat1 and mat2 must have the same dtype") {
			t.Errorf("%s: %q", c.what, e)
		}
	}
	value := []struct {
		what string
		f    func()
		msg  string
	}{
		{"hidden 0", func() { nn.NewLSTM(3, 0) }, "nn.NewLSTM: hidden_size must be greater than zero"},
		{"input -1", func() { nn.NewGRU(-1, 3) }, "input_size must be non-negative"},
		{"layers -1", func() { nn.NewGRU(3, 3, nn.RNNOptions{NumLayers: -1}) }, "num_layers must be greater than zero"},
		{"two options", func() { nn.NewGRU(3, 3, nn.RNNOptions{}, nn.RNNOptions{}) }, "at most one RNNOptions"},
		{"nonlinearity", func() { nn.NewRNN(3, 3, nn.RNNOptions{Nonlinearity: "sigmoid"}) }, "nn.NewRNN: Unknown nonlinearity 'sigmoid'"},
		{"nonlinearity of LSTM", func() { nn.NewLSTM(3, 3, nn.RNNOptions{Nonlinearity: "relu"}) }, "not of LSTM"},
		{"cell nonlinearity", func() { nn.NewRNNCell(3, 3, true, "gelu") }, "Unknown nonlinearity 'gelu'"},
		{"proj of GRU", func() { nn.NewGRU(3, 3, nn.RNNOptions{ProjSize: 1}) }, "proj_size argument is only supported for LSTM, not RNN or GRU"},
		{"proj too big", func() { nn.NewLSTM(3, 3, nn.RNNOptions{ProjSize: 3}) }, "proj_size has to be smaller than hidden_size"},
		{"proj negative", func() { nn.NewLSTM(3, 3, nn.RNNOptions{ProjSize: -1}) }, "proj_size should be a positive integer or zero to disable projections"},
		{"dropout", func() { nn.NewLSTM(3, 3, nn.RNNOptions{Dropout: 1.5}) }, "dropout should be a number in range [0, 1]"},
		{"dropout NaN", func() { nn.NewLSTM(3, 3, nn.RNNOptions{Dropout: math.NaN()}) }, "dropout should be a number in range [0, 1]"},
		// sizes whose parameters an int cannot count (NumLayers 1<<62 was a
		// Go makeslice panic, hidden_size 1<<61 a "negative dimension")
		{"layers overflow", func() { nn.NewGRU(3, 2, nn.RNNOptions{NumLayers: 1 << 62}) }, "nn.NewGRU: input_size 3, hidden_size 2 and num_layers 4611686018427387904 make more parameter elements than an int can count"},
		{"layers overflow bidirectional", func() { nn.NewLSTM(3, 2, nn.RNNOptions{NumLayers: 1 << 59, Bidirectional: true}) }, "more parameter elements than an int can count"},
		{"hidden overflow", func() { nn.NewLSTM(3, 1<<61) }, "more parameter elements than an int can count"},
		{"input overflow", func() { nn.NewRNN(1<<62, 4) }, "more parameter elements than an int can count"},
		{"cell hidden -1", func() { nn.NewGRUCell(3, -1, true) }, "must be non-negative"},
		{"h0 without c0", func() { lstm.ForwardState(z(5, 3, 10), z(1, 3, 20), nil) }, "h0 and c0"},
		{"h without c", func() { cell.ForwardState(z(3, 10), nil, z(3, 20)) }, "h and c"},
	}
	for _, c := range value {
		e := testenv.Raises[*ember.ValueError](t, c.what, c.f)
		if !strings.Contains(e.Error(), c.msg) {
			t.Errorf("%s: %q, want %q", c.what, e, c.msg)
		}
	}
	// packing
	px := z(4, 3, 10)
	packed := nn.PackPaddedSequence(px, []int{4, 2, 1}, false, true)
	packedMisuse := []struct {
		what string
		f    func()
		msg  string
	}{
		{"lengths count", func() { nn.PackPaddedSequence(px, []int{4, 2}, false, true) }, "Expected `len(lengths)` to be equal to batch_size, but got 2 (batch_size=3)"},
		{"too long", func() { nn.PackPaddedSequence(px, []int{5, 2, 1}, false, true) }, "lengths[0] = 5 exceeds the padded batch's 4 steps"},
		{"empty batch", func() { nn.PackPaddedSequence(z(4, 0, 10), nil, false, true) }, "Cannot pack empty tensors."},
		{"1-D", func() { nn.PackPaddedSequence(z(4), []int{4}, false, true) }, "at least 2 dimensions"},
		{"3-D data", func() {
			lstm.ForwardPacked(&nn.PackedSequence{Data: z(7, 1, 10), BatchSizes: packed.BatchSizes}, nil, nil)
		}, "LSTM: input must have 2 dimensions, got 3"},
		{"packed input size", func() { rnn.ForwardPacked(&nn.PackedSequence{Data: z(7, 5), BatchSizes: packed.BatchSizes}, nil) }, "input.size(-1) must be equal to input_size. Expected 10, got 5"},
		{"packed rows", func() { rnn.ForwardPacked(&nn.PackedSequence{Data: z(6, 10), BatchSizes: packed.BatchSizes}, nil) }, "BatchSizes [3 2 1 1] add up to 7 rows, but Data has 6"},
		{"packed h0", func() { lstm.ForwardPacked(packed, z(1, 2, 20), z(1, 3, 20)) }, "Expected hidden[0] size (1, 3, 20), got [1, 2, 20]"},
		{"nil packed", func() { nn.PadPackedSequence(nil, false, 0, 0) }, "nil PackedSequence"},
	}
	for _, c := range packedMisuse {
		e := testenv.Raises[*ember.ShapeError](t, c.what, c.f)
		if !strings.Contains(e.Error(), c.msg) {
			t.Errorf("%s: %q, want %q", c.what, e, c.msg)
		}
	}
	packedValue := []struct {
		what string
		f    func()
		msg  string
	}{
		{"unsorted", func() { nn.PackPaddedSequence(px, []int{2, 4, 1}, false, true) }, "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True"},
		{"zero length", func() { nn.PackPaddedSequence(px, []int{4, 0, 1}, false, false) }, "Length of all samples has to be greater than 0"},
		{"total length", func() { nn.PadPackedSequence(packed, false, 0, 3) }, "Expected total_length to be at least the length of the longest sequence in input, but got total_length=3 and max sequence length being 4"},
		{"growing batch", func() {
			gru := nn.NewGRU(10, 2)
			gru.ForwardPacked(&nn.PackedSequence{Data: z(3, 10), BatchSizes: []int{1, 2}}, nil)
		}, "must be positive and non-increasing"},
		{"bad permutation", func() {
			nn.PadPackedSequence(&nn.PackedSequence{Data: z(7, 10), BatchSizes: packed.BatchSizes, SortedIndices: []int{0, 0, 1}, UnsortedIndices: []int{0, 2, 1}}, false, 0, 0)
		}, "a permutation"},
	}
	for _, c := range packedValue {
		e := testenv.Raises[*ember.ValueError](t, c.what, c.f)
		if !strings.Contains(e.Error(), c.msg) {
			t.Errorf("%s: %q, want %q", c.what, e, c.msg)
		}
	}
	// settings changed after construction
	bad := nn.NewLSTM(3, 4)
	bad.NumLayers = 2
	testenv.Raises[*nn.ModuleError](t, "NumLayers changed", func() { bad.Forward(z(2, 1, 3)) })
	var nilLSTM *nn.LSTM
	testenv.Raises[*nn.ModuleError](t, "nil LSTM", func() { nilLSTM.ForwardState(z(2, 1, 3), nil, nil) })
	testenv.Raises[*nn.ModuleError](t, "nil LSTM parameters", func() { nilLSTM.Parameters() })
}

// BenchmarkLSTMStep times one forward step of a 256-unit LSTM layer on a
// batch of 32 (ns/op is one step).
func BenchmarkLSTMStep(b *testing.B) {
	for _, grad := range []bool{false, true} {
		b.Run(fmt.Sprintf("grad=%v", grad), func(b *testing.B) {
			ember.ManualSeed(1)
			c := nn.NewLSTMCell(256, 256, true)
			x := ember.Randn(ember.Shape{32, 256})
			h, cx := ember.Zeros(ember.Shape{32, 256}), ember.Zeros(ember.Shape{32, 256})
			step := func() {
				h2, c2 := c.ForwardState(x, h, cx)
				if grad {
					h2.Sum().Add(c2.Sum()).Backward()
				}
			}
			ember.SetGradEnabled(grad, func() {
				step()
				b.ResetTimer()
				for range b.N {
					step()
				}
			})
		})
	}
}

// BenchmarkLSTMSeq times forward and backward of a one-layer LSTM (32 →
// 64 units, batch 16) over L steps (bench/torch_multiout.py times the same
// in PyTorch).
func BenchmarkLSTMSeq(b *testing.B) {
	for _, L := range []int{1000, 4000} {
		b.Run(fmt.Sprintf("L=%d", L), func(b *testing.B) {
			ember.ManualSeed(1)
			m := nn.NewLSTM(32, 64)
			x := ember.Randn(ember.Shape{L, 16, 32})
			for range b.N {
				out, _, _ := m.ForwardState(x, nil, nil)
				out.Sum().Backward()
			}
		})
	}
}
