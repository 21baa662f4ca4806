package nn_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
	"github.com/emberml/ember/nn"
)

// extraLossCase is one case of testdata/nn/losses_extra.json, written by
// testdata/gen_losses_fixtures.py (PyTorch 1.13).
type extraLossCase struct {
	Loss   string `json:"loss"`
	Params struct {
		Reduction string  `json:"reduction"`
		Margin    float64 `json:"margin"`
		P         float64 `json:"p"`
		Eps       float64 `json:"eps"`
		Swap      bool    `json:"swap"`
		LogInput  bool    `json:"log_input"`
		Full      bool    `json:"full"`
		Blank     int     `json:"blank"`
		ZeroInf   bool    `json:"zero_infinity"`
	} `json:"params"`
	Tensors []struct {
		Name  string    `json:"name"`
		DType string    `json:"dtype"`
		Shape []int     `json:"shape"`
		Data  []float64 `json:"data"`
		Grad  []float64 `json:"grad"`
	} `json:"tensors"`
	OutShape []int     `json:"out_shape"`
	Out      []float64 `json:"out"`
}

var reductions = map[string]nn.Reduction{"mean": nn.Mean, "sum": nn.Sum, "none": nn.None}

// runExtraLoss computes case c's loss of the tensors ts.
func runExtraLoss(c extraLossCase, ts map[string]*ember.Tensor) *ember.Tensor {
	p, r := c.Params, reductions[c.Params.Reduction]
	switch c.Loss {
	case "margin_ranking":
		return nn.MarginRankingLoss{Margin: p.Margin, Reduction: r}.Loss(ts["input1"], ts["input2"], ts["target"])
	case "hinge_embedding":
		return nn.HingeEmbeddingLoss{Margin: p.Margin, Reduction: r}.Loss(ts["input"], ts["target"])
	case "soft_margin":
		return nn.SoftMarginLoss{Reduction: r}.Loss(ts["input"], ts["target"])
	case "multilabel_soft_margin":
		return nn.MultiLabelSoftMarginLoss{Reduction: r, Weight: ts["weight"]}.Loss(ts["input"], ts["target"])
	case "multi_margin":
		return nn.MultiMarginLoss{P: int(p.P), Margin: p.Margin, Weight: ts["weight"], Reduction: r}.Loss(ts["input"], ts["target"])
	case "multilabel_margin":
		return nn.MultiLabelMarginLoss{Reduction: r}.Loss(ts["input"], ts["target"])
	case "cosine_embedding":
		return nn.CosineEmbeddingLoss{Margin: p.Margin, Reduction: r}.Loss(ts["input1"], ts["input2"], ts["target"])
	case "triplet_margin":
		return nn.TripletMarginLoss{Margin: p.Margin, P: p.P, Eps: p.Eps, Swap: p.Swap, Reduction: r}.Loss(ts["anchor"], ts["positive"], ts["negative"])
	case "poisson_nll":
		return nn.PoissonNLLLoss{LogInput: p.LogInput, Full: p.Full, Eps: p.Eps, Reduction: r}.Loss(ts["input"], ts["target"])
	case "gaussian_nll":
		return nn.GaussianNLLLoss{Full: p.Full, Eps: p.Eps, Reduction: r}.Loss(ts["input"], ts["target"], ts["var"])
	case "ctc":
		return nn.CTCLoss{Blank: p.Blank, ZeroInfinity: p.ZeroInf, Reduction: r}.Loss(ts["log_probs"], ts["targets"], ts["input_lengths"], ts["target_lengths"])
	}
	panic("unknown loss " + c.Loss)
}

func testExtraLosses(t *testing.T, devs []ember.Device) {
	b, err := os.ReadFile("../testdata/nn/losses_extra.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs []extraLossCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	for _, dev := range devs {
		for i, c := range cs {
			name := fmt.Sprintf("case %d %s %+v on %v", i, c.Loss, c.Params, dev)
			ts := map[string]*ember.Tensor{}
			for _, e := range c.Tensors {
				var x *ember.Tensor
				if e.DType == "int64" {
					v := make([]int64, len(e.Data))
					for j, f := range e.Data {
						v[j] = int64(f)
					}
					x = ember.FromSlice(v, ember.Shape(e.Shape), ember.On(dev))
				} else {
					x = ember.FromSlice(e.Data, ember.Shape(e.Shape), ember.On(dev))
				}
				if e.Grad != nil {
					x.SetRequiresGrad(true)
				}
				ts[e.Name] = x
			}
			out := runExtraLoss(c, ts)
			if !out.Shape().Equal(ember.Shape(c.OutShape)) {
				t.Fatalf("%s: shape %v, PyTorch %v", name, out.Shape(), c.OutShape)
			}
			near(t, name+" output", out.Float64s(), c.Out)
			w := ember.Arange(1, float64(out.NumElements())+1, 1, ember.Dtype(ember.Float64), ember.On(dev)).Reshape(out.Shape()...)
			out.Mul(w).Sum().Backward()
			for _, e := range c.Tensors {
				if e.Grad == nil {
					continue
				}
				g := ts[e.Name].Grad()
				if g == nil {
					g = ember.ZerosLike(ts[e.Name])
				}
				near(t, name+" grad "+e.Name, g.Float64s(), e.Grad)
			}
		}
	}
}

func near(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, PyTorch %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if math.IsNaN(w) && math.IsNaN(g) || math.IsInf(w, 0) && g == w {
			continue
		}
		if !(math.Abs(g-w) <= 1e-8*(1+math.Abs(w))) { // (the zero cosine row's 1e5 gradients agree to 2e-9)
			t.Fatalf("%s[%d] = %.17g, PyTorch %.17g\ngot  %v\nwant %v", what, i, g, w, got, want)
		}
	}
}

// TestExtraLossesMatchTorch: the margin, embedding, Poisson, Gaussian and
// CTC losses against PyTorch 1.13 (testdata/gen_losses_fixtures.py):
// every reduction, outputs and the inputs' gradients, at hinge kinks,
// ignored and repeated targets, clamped variances, on every device.
func TestExtraLossesMatchTorch(t *testing.T) {
	devs := []ember.Device{ember.CPU}
	for i := 0; i < ember.DeviceCount(); i++ {
		devs = append(devs, ember.CUDA(i))
	}
	testExtraLosses(t, devs)
}

// The same on the emulated cuda:0 (the real CUDA kernels built with g++).
func TestExtraLossesEmulatedCUDA(t *testing.T) {
	defer emulatedCUDA(t, "TestExtraLossesMatchTorch runs on it")()
	testExtraLosses(t, []ember.Device{ember.CUDA(0)})
}

// TestExtraLossErrors: argument rules, with PyTorch's messages.
func TestExtraLossErrors(t *testing.T) {
	x := ember.Zeros(ember.Shape{2, 3})
	i64 := func(v ...int64) *ember.Tensor { return ember.FromSlice(v, ember.Shape{len(v)}) }
	testenv.Raises[*ember.ValueError](t, "multi margin p", func() { nn.MultiMarginLoss{P: 3}.Loss(x, i64(0, 1)) })
	testenv.Raises[*ember.ValueError](t, "multi margin range", func() { nn.NewMultiMarginLoss().Loss(x, i64(0, 3)) })
	testenv.Raises[*ember.ShapeError](t, "multi margin target size", func() { nn.NewMultiMarginLoss().Loss(x, i64(0, 1, 1)) })
	testenv.Raises[*ember.ShapeError](t, "multi margin 3-d", func() { nn.NewMultiMarginLoss().Loss(ember.Zeros(ember.Shape{2, 3, 1}), i64(0, 1)) })
	testenv.Raises[*ember.DTypeError](t, "multi margin float target", func() { nn.NewMultiMarginLoss().Loss(x, ember.Zeros(ember.Shape{2})) })
	testenv.Raises[*ember.ShapeError](t, "multi margin weight", func() {
		nn.MultiMarginLoss{P: 1, Margin: 1, Weight: ember.Ones(ember.Shape{2})}.Loss(x, i64(0, 1))
	})
	testenv.Raises[*ember.ValueError](t, "multilabel margin range", func() {
		nn.MultiLabelMarginLoss{}.Loss(x, ember.FromSlice([]int64{0, 3, -1, 0, 0, 0}, ember.Shape{2, 3}))
	})
	testenv.Raises[*ember.ShapeError](t, "multilabel margin size", func() { nn.MultiLabelMarginLoss{}.Loss(x, i64(0, 1)) })
	testenv.Raises[*ember.ShapeError](t, "cosine 2-d target", func() {
		nn.CosineEmbeddingLoss{}.Loss(x, x, ember.Ones(ember.Shape{2, 1}))
	})
	testenv.Raises[*ember.ShapeError](t, "cosine dims", func() {
		nn.CosineEmbeddingLoss{}.Loss(ember.Zeros(ember.Shape{3}), ember.Zeros(ember.Shape{3}), ember.Ones(ember.Shape{2}))
	})
	testenv.Raises[*ember.ShapeError](t, "triplet dims", func() { nn.NewTripletMarginLoss().Loss(x, x, ember.Zeros(ember.Shape{3})) })
	testenv.Raises[*ember.ShapeError](t, "margin ranking dims", func() {
		nn.MarginRankingLoss{}.Loss(ember.Zeros(ember.Shape{2}), ember.Zeros(ember.Shape{2}), ember.Zeros(ember.Shape{2, 1}))
	})
	testenv.Raises[*ember.ValueError](t, "gaussian var size", func() { nn.NewGaussianNLLLoss().Loss(x, x, ember.Ones(ember.Shape{3})) })
	testenv.Raises[*ember.ValueError](t, "gaussian negative var", func() { nn.NewGaussianNLLLoss().Loss(x, x, ember.Full(ember.Shape{2, 3}, -1)) })
	testenv.Raises[*ember.ShapeError](t, "soft margin broadcast", func() { nn.SoftMarginLoss{}.Loss(x, ember.Ones(ember.Shape{2, 4})) })
	testenv.Raises[*ember.ShapeError](t, "batchmean", func() { nn.SoftMarginLoss{Reduction: nn.BatchMean}.Loss(x, x) })
	// CTC: argument rules, and an impossible alignment's infinite loss
	lp := ember.Zeros(ember.Shape{4, 2, 3}, ember.Dtype(ember.Float64)).LogSoftmax(2)
	tg := ember.FromSlice([]int64{1, 2, 1, 1}, ember.Shape{2, 2})
	ctc := nn.CTCLoss{Reduction: nn.None}
	testenv.Raises[*ember.ValueError](t, "ctc input length", func() { ctc.Loss(lp, tg, i64(5, 3), i64(2, 2)) })
	testenv.Raises[*ember.ValueError](t, "ctc zero input length", func() { ctc.Loss(lp, tg, i64(0, 3), i64(0, 2)) })
	testenv.Raises[*ember.ShapeError](t, "ctc target length", func() { ctc.Loss(lp, tg, i64(4, 3), i64(0, 3)) })
	testenv.Raises[*ember.ValueError](t, "ctc blank", func() { nn.CTCLoss{Blank: 3}.Loss(lp, tg, i64(4, 3), i64(2, 2)) })
	testenv.Raises[*ember.ShapeError](t, "ctc concatenated", func() { ctc.Loss(lp, i64(1, 2, 1), i64(4, 3), i64(1, 1)) })
	testenv.Raises[*ember.ShapeError](t, "ctc lengths size", func() { ctc.Loss(lp, tg, i64(4), i64(2, 2)) })
	testenv.Raises[*ember.ValueError](t, "ctc label range", func() { ctc.Loss(lp, ember.FromSlice([]int64{1, 5, 1, 1}, ember.Shape{2, 2}), i64(4, 3), i64(2, 2)) })
	testenv.Raises[*ember.DTypeError](t, "ctc float targets", func() { ctc.Loss(lp, ember.Zeros(ember.Shape{2, 2}), i64(4, 3), i64(2, 2)) })
	// three 1s need five frames: PyTorch's loss is inf
	if v := ctc.Loss(lp, ember.FromSlice([]int64{1, 1, 1, 1, 1, 1}, ember.Shape{2, 3}), i64(4, 4), i64(3, 1)).Float64s(); !math.IsInf(v[0], 1) || math.IsInf(v[1], 0) {
		t.Fatalf("impossible CTC alignment: %v, want [+Inf, finite]", v)
	}
	// shapes on the meta device
	m := ember.Zeros(ember.Shape{4, 3}, ember.On(ember.Meta))
	tm := ember.Zeros(ember.Shape{4}, ember.On(ember.Meta), ember.Dtype(ember.Int64))
	if s := (nn.MultiMarginLoss{P: 1, Reduction: nn.None}).Loss(m, tm).Shape(); !s.Equal(ember.Shape{4}) {
		t.Fatalf("meta multi margin shape %v", s)
	}
	if s := (nn.MultiLabelMarginLoss{Reduction: nn.None}).Loss(m, ember.Zeros(ember.Shape{4, 3}, ember.On(ember.Meta), ember.Dtype(ember.Int64))).Shape(); !s.Equal(ember.Shape{4}) {
		t.Fatalf("meta multilabel margin shape %v", s)
	}
}

// TestMultiLabelMarginManyClasses: a row listing 2 of C = 3000 classes,
// all inputs 0, loses 2·(C−2)/C (each listed class against each other at
// margin 1); the loss must not take O(C²) memory (PyTorch's is O(C)).
func TestMultiLabelMarginManyClasses(t *testing.T) {
	const c = 3000
	tv := make([]int64, c)
	for i := range tv {
		tv[i] = -1
	}
	tv[0], tv[1] = 7, 2999
	x := ember.Zeros(ember.Shape{1, c}, ember.Dtype(ember.Float64)).SetRequiresGrad(true)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l := nn.MultiLabelMarginLoss{Reduction: nn.Sum}.Loss(x, ember.FromSlice(tv, ember.Shape{1, c}))
	l.Backward()
	runtime.ReadMemStats(&after)
	if got, want := l.Item(), 2.0*(c-2)/c; math.Abs(got-want) > 1e-12 {
		t.Errorf("loss %v, want %v", got, want)
	}
	// ∂/∂x[k] = 2/C for the C−2 unlisted k, −(C−2)/C for the two listed
	g := x.Grad().Float64s()
	if math.Abs(g[7]+float64(c-2)/c) > 1e-12 || math.Abs(g[0]-2.0/c) > 1e-12 {
		t.Errorf("grad %v, %v; want %v, %v", g[7], g[0], -float64(c-2)/c, 2.0/c)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 8<<20 {
		t.Errorf("allocated %d bytes for C = %d (O(C²) is %d)", d, c, 8*c*c)
	}
}
