package nn_test

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
	"github.com/emberml/ember/nn"
)

// nnextra is testdata/nn/nnextra.json (testdata/gen_nnextra_fixtures.py,
// PyTorch 1.13).
type nnextra struct {
	EmbeddingBag []struct {
		Mode              string    `json:"mode"`
		Num               int       `json:"num"`
		Dim               int       `json:"dim"`
		Weight            []float64 `json:"weight"`
		Input             []int64   `json:"input"`
		InputShape        []int     `json:"input_shape"`
		Offsets           []int64   `json:"offsets"`
		PaddingIdx        *int      `json:"padding_idx"`
		IncludeLastOffset bool      `json:"include_last_offset"`
		MaxNorm           *float64  `json:"max_norm"`
		PSW               []float64 `json:"psw"`
		GradPSW           []float64 `json:"grad_psw"`
		OutShape          []int     `json:"out_shape"`
		Out               []float64 `json:"out"`
		GradWeight        []float64 `json:"grad_weight"`
		WeightAfter       []float64 `json:"weight_after"`
		Repr              string    `json:"repr"`
	} `json:"embedding_bag"`
	P2V struct {
		Params [][]float64 `json:"params"`
		Shapes [][]int     `json:"shapes"`
		Vec    []float64   `json:"vec"`
		Grads  [][]float64 `json:"grads"`
	} `json:"p2v"`
	Layers []moreLayerCase `json:"layers"`
}

type moreLayerCase struct {
	Layer      string                   `json:"layer"`
	Params     map[string]any           `json:"params"`
	Train      bool                     `json:"train"`
	Repr       string                   `json:"repr"`
	Inputs     []fixtureTensor          `json:"inputs"`
	Parameters map[string]fixtureTensor `json:"parameters"`
	Buffers    map[string]fixtureTensor `json:"buffers"`
	StateDict  []string                 `json:"state_dict"`
	OutShape   []int                    `json:"out_shape"`
	Out        []float64                `json:"out"`
}

func loadNNExtra(t *testing.T) nnextra {
	t.Helper()
	b, err := os.ReadFile("../testdata/nn/nnextra.json")
	if err != nil {
		t.Fatal(err)
	}
	var f nnextra
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

func allDevices() []ember.Device {
	devs := []ember.Device{ember.CPU}
	for i := 0; i < ember.DeviceCount(); i++ {
		devs = append(devs, ember.CUDA(i))
	}
	return devs
}

// TestEmbeddingBagMatchesTorch: modes sum, mean and max; 1-D input with
// offsets (an empty bag, include_last_offset), 2-D input, padding_idx (a
// bag of padding only), per_sample_weights, max_norm, an empty input and
// max with ties (the gradient goes to the first row holding the max):
// the output, the gradients of the weight and of the per-sample weights,
// the weight after max_norm's renorm, and the repr, against PyTorch 1.13
// on every device.
func TestEmbeddingBagMatchesTorch(t *testing.T) { testEmbeddingBag(t, allDevices()) }

// The same on the emulated cuda:0.
func TestEmbeddingBagEmulatedCUDA(t *testing.T) {
	defer emulatedCUDA(t, "TestEmbeddingBagMatchesTorch runs on it")()
	testEmbeddingBag(t, []ember.Device{ember.CUDA(0)})
}

func testEmbeddingBag(t *testing.T, devs []ember.Device) {
	f := loadNNExtra(t)
	for _, dev := range devs {
		for i, c := range f.EmbeddingBag {
			name := fmt.Sprintf("case %d %s %v offsets %v on %v", i, c.Mode, c.Input, c.Offsets, dev)
			var e *nn.EmbeddingBag
			if c.PaddingIdx != nil {
				e = nn.NewEmbeddingBagPadded(c.Num, c.Dim, c.Mode, *c.PaddingIdx)
			} else {
				e = nn.NewEmbeddingBag(c.Num, c.Dim, c.Mode)
			}
			e.IncludeLastOffset = c.IncludeLastOffset
			if c.MaxNorm != nil {
				e.MaxNorm = *c.MaxNorm
			}
			if got := e.String(); got != c.Repr {
				t.Fatalf("%s: repr %q, PyTorch %q", name, got, c.Repr)
			}
			e.Weight = e.Weight.Detach().Cast(ember.Float64).SetRequiresGrad(true) // (the fixture's module is float64)
			if err := e.LoadStateDict(map[string]*ember.Tensor{"weight": ember.FromSlice(c.Weight, ember.Shape{c.Num, c.Dim})}, true); err != nil {
				t.Fatal(err)
			}
			e.To(dev)
			on := ember.On(dev)
			in := ember.FromSlice(c.Input, ember.Shape(c.InputShape), on)
			var off, psw *ember.Tensor
			if c.Offsets != nil {
				off = ember.FromSlice(c.Offsets, ember.Shape{len(c.Offsets)}, on)
			}
			if c.PSW != nil {
				psw = ember.FromSlice(c.PSW, ember.Shape(c.InputShape), on, ember.WithGrad())
			}
			var y *ember.Tensor
			if in.Dim() == 2 && psw == nil {
				y = e.Forward(in)
			} else {
				y = e.ForwardBags(in, off, psw)
			}
			if !y.Shape().Equal(ember.Shape(c.OutShape)) {
				t.Fatalf("%s: shape %v, PyTorch %v", name, y.Shape(), c.OutShape)
			}
			near(t, name+" output", y.Float64s(), c.Out)
			w := ember.Arange(1, float64(y.NumElements())+1, 1, ember.Dtype(ember.Float64), on).Reshape(y.Shape()...)
			y.Mul(w).Sum().Backward()
			near(t, name+" grad weight", e.Weight.Grad().Float64s(), c.GradWeight)
			near(t, name+" weight after", e.Weight.Float64s(), c.WeightAfter)
			if psw != nil {
				near(t, name+" grad per_sample_weights", psw.Grad().Float64s(), c.GradPSW)
			}
		}
		// max of an empty bag is 0, as PyTorch documents (its 1.13 CPU
		// kernel corrupts its heap there, so there is no fixture)
		e := nn.NewEmbeddingBag(4, 2, "max")
		e.To(dev)
		y := e.ForwardBags(ember.FromSlice([]int64{1, 3, 2}, ember.Shape{3}, ember.On(dev)), ember.FromSlice([]int64{0, 0, 2}, ember.Shape{3}, ember.On(dev)), nil)
		wt := e.Weight.Float64s()
		near(t, "max with an empty bag", y.Float64s(), []float64{0, 0, max(wt[2], wt[6]), max(wt[3], wt[7]), wt[4], wt[5]})
		y.Sum().Backward()
		g := []float64{0, 0, 0, 0, 1, 1, 0, 0}
		for d := 0; d < 2; d++ {
			if wt[2+d] > wt[6+d] {
				g[2+d] = 1
			} else {
				g[6+d] = 1
			}
		}
		near(t, "max with an empty bag: grad", e.Weight.Grad().Float64s(), g)
	}
}

// TestEmbeddingBagErrors: PyTorch's refusals and their messages.
func TestEmbeddingBagErrors(t *testing.T) {
	e := nn.NewEmbeddingBag(5, 3, "sum")
	i1 := ember.FromSlice([]int64{1, 2}, ember.Shape{2})
	msg := func(what, want string, f func()) {
		t.Helper()
		if ve := testenv.Raises[*ember.ValueError](t, what, f); ve == nil || ve.Msg != want {
			t.Errorf("%s: %v, want %q", what, ve, want)
		}
	}
	msg("no offsets", "offsets has to be a 1D Tensor but got None", func() { e.ForwardBags(i1, nil, nil) })
	msg("2-D offsets", "offsets has to be a 1D Tensor", func() { e.ForwardBags(i1, ember.FromSlice([]int64{0}, ember.Shape{1, 1}), nil) })
	msg("2-D input with offsets", "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length sequences. However, found offsets of type <class 'torch.Tensor'>", func() {
		e.ForwardBags(i1.Reshape(1, 2), ember.FromSlice([]int64{0}, ember.Shape{1}), nil)
	})
	msg("offsets[0]", "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, got 1", func() { e.ForwardBags(i1, ember.FromSlice([]int64{1}, ember.Shape{1}), nil) })
	msg("offsets[-1]", "offsets[-1] can not be greater than input's length 2 but got offsets[-1] of 3", func() { e.ForwardBags(i1, ember.FromSlice([]int64{0, 3}, ember.Shape{2}), nil) })
	msg("3-D", "input has to be 1D or 2D Tensor, but got Tensor of dimension 3", func() { e.Forward(i1.Reshape(1, 1, 2)) })
	msg("psw shape", "embedding_bag: If per_sample_weights ([3]) is not None, then it must have the same shape as the input ([2])", func() {
		e.ForwardBags(i1, ember.FromSlice([]int64{0}, ember.Shape{1}), ember.Ones(ember.Shape{3}))
	})
	msg("psw mean", "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' (got mode='mean'). Please open a feature request on GitHub.", func() {
		nn.NewEmbeddingBag(5, 3, "mean").ForwardBags(i1, ember.FromSlice([]int64{0}, ember.Shape{1}), ember.Ones(ember.Shape{2}))
	})
	msg("mode", "mode has to be one of sum, mean or max", func() { nn.NewEmbeddingBag(5, 3, "avg").Forward(i1.Reshape(1, 2)) })
	msg("include_last_offset", "include_last_offset: number of offset should be at least 1", func() {
		l := nn.NewEmbeddingBag(5, 3, "sum")
		l.IncludeLastOffset = true
		l.ForwardBags(i1, ember.Zeros(ember.Shape{0}, ember.Dtype(ember.Int64)), nil)
	})
	msg("padding_idx", "padding_idx must be within num_embeddings", func() { nn.NewEmbeddingBagPadded(5, 3, "sum", 5) })
	msg("decreasing", "offsets must be non-decreasing, but offsets[2] = 1 < offsets[1] = 2", func() { e.ForwardBags(i1, ember.FromSlice([]int64{0, 2, 1}, ember.Shape{3}), nil) })
	testenv.Raises[*ember.IndexError](t, "index", func() {
		e.ForwardBags(ember.FromSlice([]int64{1, 7}, ember.Shape{2}), ember.FromSlice([]int64{0}, ember.Shape{1}), nil)
	})
	testenv.Raises[*ember.DTypeError](t, "float input", func() { e.Forward(ember.Zeros(ember.Shape{1, 2})) })
	testenv.Raises[*ember.DTypeError](t, "float offsets", func() { e.ForwardBags(i1, ember.Zeros(ember.Shape{1}), nil) })
	// per_sample_weights must have the weight's dtype: PyTorch refuses a
	// float64 (or integer) one for a float32 weight, where promoting would
	// silently give a float64 result
	for _, dt := range []ember.DType{ember.Float64, ember.Int64} {
		testenv.Raises[*ember.DTypeError](t, "psw "+dt.String(), func() {
			e.ForwardBags(i1, ember.FromSlice([]int64{0}, ember.Shape{1}), ember.Ones(ember.Shape{2}, ember.Dtype(dt)))
		})
	}
	// 2-D input with include_last_offset: torch's functional turns the rows
	// into offsets 0, N, 2N, ... and so returns B-1 bags
	l := nn.NewEmbeddingBag(5, 3, "sum")
	l.IncludeLastOffset = true
	if s := l.Forward(ember.FromSlice([]int64{1, 2, 3, 4, 0, 0}, ember.Shape{3, 2})).Shape(); !s.Equal(ember.Shape{2, 3}) {
		t.Errorf("2-D include_last_offset: shape %v, PyTorch [2, 3]", s)
	}
	if sd := l.StateDict(); len(sd) != 1 || sd["weight"] == nil {
		t.Errorf("state dict %v, PyTorch's is weight", sd)
	}
}

// TestParametersToVector: parameters_to_vector's values and gradient, and
// vector_to_parameters, against PyTorch 1.13.
func TestParametersToVector(t *testing.T) {
	f := loadNNExtra(t).P2V
	for _, dev := range allDevices() {
		var ps []*ember.Tensor
		for i, p := range f.Params {
			ps = append(ps, ember.FromSlice(p, ember.Shape(f.Shapes[i]), ember.On(dev), ember.WithGrad()))
		}
		v := nn.ParametersToVector(ps)
		near(t, "vector", v.Float64s(), f.Vec)
		v.Mul(ember.Arange(1, float64(len(f.Vec))+1, 1, ember.On(dev), ember.Dtype(ember.Float64))).Sum().Backward()
		for i, p := range ps {
			near(t, fmt.Sprintf("grad %d", i), p.Grad().Float64s(), f.Grads[i])
		}
		// back: the vector 1..10 lands in the parameters in order
		nn.VectorToParameters(ember.Arange(1, 12, 1, ember.On(dev)), ps)
		near(t, "param 0", ps[0].Float64s(), []float64{1, 2, 3, 4, 5, 6})
		near(t, "param 1", ps[1].Float64s(), []float64{7, 8, 9, 10})
		if !ps[0].RequiresGrad() || ps[0].DType() != ember.Float64 {
			t.Error("VectorToParameters changed a parameter's requires_grad or dtype")
		}
	}
	ps := []*ember.Tensor{ember.Zeros(ember.Shape{3, 2})}
	testenv.Raises[*ember.ShapeError](t, "short vec", func() { nn.VectorToParameters(ember.Zeros(ember.Shape{4}), ps) })
	testenv.Raises[*ember.ShapeError](t, "2-D vec", func() { nn.VectorToParameters(ember.Zeros(ember.Shape{2, 3}), ps) })
	testenv.Raises[*ember.ValueError](t, "no params", func() { nn.ParametersToVector(nil) })
	testenv.Raises[*ember.ValueError](t, "devices", func() {
		nn.ParametersToVector([]*ember.Tensor{ember.Zeros(ember.Shape{1}), ember.Zeros(ember.Shape{1}, ember.On(ember.Meta))})
	})
}

// TestEmbeddingBagMeta: on the meta device EmbeddingBag gives PyTorch's
// shapes (the bags are counted from the shapes: the indices and offsets
// have no values to read).
func TestEmbeddingBagMeta(t *testing.T) {
	meta := ember.On(ember.Meta)
	idx := func(s ...int) *ember.Tensor { return ember.Zeros(ember.Shape(s), ember.Dtype(ember.Int64), meta) }
	for _, mode := range []string{"sum", "mean", "max"} {
		e := nn.NewEmbeddingBag(5, 3, mode)
		e.To(ember.Meta)
		for _, c := range []struct {
			last      bool
			in, off   *ember.Tensor
			wantBags  int
			withShape string
		}{
			{false, idx(4, 2), nil, 4, "2-D"},
			{false, idx(7), idx(3), 3, "1-D"},
			{true, idx(7), idx(3), 2, "1-D, include_last_offset"},
			{false, idx(0), idx(1), 1, "empty input"},
		} {
			e.IncludeLastOffset = c.last
			y := e.ForwardBags(c.in, c.off, nil)
			if want := (ember.Shape{c.wantBags, 3}); !y.Shape().Equal(want) || y.Device() != ember.Meta || !y.RequiresGrad() {
				t.Errorf("%s %s on meta: %v on %v (requires grad %v), want %v on meta, requiring grad", mode, c.withShape, y.Shape(), y.Device(), y.RequiresGrad(), want)
			}
		}
	}
	e := nn.NewEmbeddingBag(5, 3, "sum")
	e.To(ember.Meta)
	y := e.ForwardBags(idx(4), idx(2), ember.Ones(ember.Shape{4}, meta))
	if !y.Shape().Equal(ember.Shape{2, 3}) {
		t.Errorf("per_sample_weights on meta: %v, want [2, 3]", y.Shape())
	}
	// offsets on meta for a weight that is not: a device mismatch
	testenv.Raises[*ember.DeviceMismatchError](t, "meta offsets", func() {
		nn.NewEmbeddingBag(5, 3, "sum").ForwardBags(ember.Zeros(ember.Shape{4}, ember.Dtype(ember.Int64)), idx(2), nil)
	})
}
