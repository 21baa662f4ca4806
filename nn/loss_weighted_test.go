package nn

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
)

// lossCase is one case of testdata/nn/loss_weighted.json, written by
// testdata/gen_loss_fixtures.py (PyTorch 1.13).
type lossCase struct {
	Loss        string    `json:"loss"`
	Shape       []int     `json:"shape"`
	Input       []float64 `json:"input"`
	TargetShape []int     `json:"target_shape"`
	Target      []int64   `json:"target"`
	TargetProbs []float64 `json:"target_probs"`
	Weight      []float64 `json:"weight"`
	LS          float64   `json:"ls"`
	Reduction   string    `json:"reduction"`
	OutShape    []int     `json:"out_shape"`
	Out         []float64 `json:"out"`
	Grad        []float64 `json:"grad"`
}

// TestWeightedLossesMatchTorch: CrossEntropyLoss and NLLLoss with class
// weights leave IgnoreIndex targets out of the label-smoothing term too
// (they had added it), take probability targets and [N, C, d] and [C]
// inputs (they had rejected all but [N, C] with [N]), forward and
// backward, as PyTorch.
func TestWeightedLossesMatchTorch(t *testing.T) {
	b, err := os.ReadFile("../testdata/nn/loss_weighted.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs []lossCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	red := map[string]Reduction{"mean": Mean, "sum": Sum, "none": None}
	for _, c := range cs {
		name := fmt.Sprintf("%s %v weight=%v ls=%v %s probs=%v", c.Loss, c.Shape, c.Weight != nil, c.LS, c.Reduction, c.TargetProbs != nil)
		x := ember.FromSlice(c.Input, ember.Shape(c.Shape), ember.WithGrad())
		var tg, w *ember.Tensor
		if c.TargetProbs != nil {
			tg = ember.FromSlice(c.TargetProbs, ember.Shape(c.TargetShape))
		} else {
			tg = ember.FromSlice(c.Target, ember.Shape(c.TargetShape))
		}
		if c.Weight != nil {
			w = ember.FromSlice(c.Weight, ember.Shape{len(c.Weight)})
		}
		var out *ember.Tensor
		if c.Loss == "ce" {
			out = CrossEntropyLoss{LabelSmoothing: c.LS, Reduction: red[c.Reduction], Weight: w}.Loss(x, tg)
		} else {
			out = NLLLoss{Reduction: red[c.Reduction], Weight: w}.Loss(x, tg)
		}
		close(t, name+" output", out, ember.FromSlice(c.Out, ember.Shape(c.OutShape)), 1e-9)
		wt := ember.Arange(1, float64(out.NumElements())+1, 1, ember.Dtype(ember.Float64)).Reshape(out.Shape()...)
		out.Mul(wt).Sum().Backward()
		close(t, name+" grad", x.Grad(), ember.FromSlice(c.Grad, ember.Shape(c.Shape)), 1e-9)
	}
}

// TestWeightedLossErrors: a weighted loss checks its targets and weight
// as the unweighted one does (an out-of-range target was silently
// ignored), with PyTorch's messages.
func TestWeightedLossErrors(t *testing.T) {
	x := ember.Zeros(ember.Shape{2, 3})
	w := ember.Ones(ember.Shape{3})
	tg := ember.FromSlice([]int64{3, 0}, ember.Shape{2})
	for _, l := range []Loss{CrossEntropyLoss{Weight: w}, NLLLoss{Weight: w}} {
		testenv.Raises[*ember.ValueError](t, "out-of-range target", func() { l.Loss(x, tg) })
		testenv.Raises[*ember.ShapeError](t, "target shape", func() { l.Loss(x, ember.Zeros(ember.Shape{3}, ember.Dtype(ember.Int64))) })
	}
	testenv.Raises[*ember.ShapeError](t, "weight size", func() {
		CrossEntropyLoss{Weight: ember.Ones(ember.Shape{2})}.Loss(x, ember.Zeros(ember.Shape{2}, ember.Dtype(ember.Int64)))
	})
	testenv.Raises[*ember.ShapeError](t, "label smoothing", func() {
		CrossEntropyLoss{Weight: w, LabelSmoothing: 1.5}.Loss(x, ember.Zeros(ember.Shape{2}, ember.Dtype(ember.Int64)))
	})
	for _, l := range []Loss{CrossEntropyLoss{Weight: w}, NLLLoss{Weight: w}, CrossEntropyLoss{}, NLLLoss{}} {
		testenv.Raises[*ember.ShapeError](t, "0-d input", func() { l.Loss(ember.Scalar(1), ember.Scalar(0, ember.Dtype(ember.Int64))) })
	}
	testenv.Raises[*ember.DTypeError](t, "nll float target", func() {
		NLLLoss{Weight: w}.Loss(x, ember.Zeros(ember.Shape{2, 3}))
	})
}

// TestPointwiseLossesMatchTorch: L1Loss, SmoothL1Loss, HuberLoss,
// KLDivLoss and BCELoss against testdata/nn/loss_pointwise.json
// (testdata/gen_loss_fixtures.py, PyTorch 1.13): differences at 0 and at
// beta/delta, targets of 0 for KL, inputs of 0 and 1 for BCE (the clamped
// logs), every reduction, forward and the input's gradient.
func TestPointwiseLossesMatchTorch(t *testing.T) {
	b, err := os.ReadFile("../testdata/nn/loss_pointwise.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs []struct {
		Loss   string `json:"loss"`
		Params struct {
			Reduction string  `json:"reduction"`
			Beta      float64 `json:"beta"`
			Delta     float64 `json:"delta"`
			LogTarget bool    `json:"log_target"`
		} `json:"params"`
		Shape    []int     `json:"shape"`
		Input    []float64 `json:"input"`
		Target   []float64 `json:"target"`
		Weight   []float64 `json:"weight"`
		OutShape []int     `json:"out_shape"`
		Out      []float64 `json:"out"`
		Grad     []float64 `json:"grad"`
	}
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	red := map[string]Reduction{"mean": Mean, "sum": Sum, "none": None, "batchmean": BatchMean}
	for _, c := range cs {
		name := fmt.Sprintf("%s %+v weight=%v", c.Loss, c.Params, c.Weight != nil)
		x := ember.FromSlice(c.Input, ember.Shape(c.Shape), ember.WithGrad())
		tg := ember.FromSlice(c.Target, ember.Shape(c.Shape))
		r := red[c.Params.Reduction]
		var l Loss
		switch c.Loss {
		case "l1":
			l = L1Loss{Reduction: r}
		case "smooth_l1":
			l = SmoothL1Loss{Reduction: r, Beta: c.Params.Beta}
		case "huber":
			l = HuberLoss{Reduction: r, Delta: c.Params.Delta}
		case "kl_div":
			l = KLDivLoss{Reduction: r, LogTarget: c.Params.LogTarget}
		case "bce":
			var w *ember.Tensor
			if c.Weight != nil {
				w = ember.FromSlice(c.Weight, ember.Shape{len(c.Weight)})
			}
			l = BCELoss{Reduction: r, Weight: w}
		}
		out := l.Loss(x, tg)
		close(t, name+" output", out, ember.FromSlice(c.Out, ember.Shape(c.OutShape)), 1e-9)
		wt := ember.Arange(1, float64(out.NumElements())+1, 1, ember.Dtype(ember.Float64)).Reshape(out.Shape()...)
		out.Mul(wt).Sum().Backward()
		close(t, name+" grad", x.Grad(), ember.FromSlice(c.Grad, ember.Shape(c.Shape)), 1e-9)
	}
	x := ember.Zeros(ember.Shape{2})
	testenv.Raises[*ember.ValueError](t, "negative beta", func() { SmoothL1Loss{Beta: -1}.Loss(x, x) })
	testenv.Raises[*ember.ValueError](t, "negative delta", func() { HuberLoss{Delta: -1}.Loss(x, x) })
	testenv.Raises[*ember.ShapeError](t, "batchmean L1", func() { L1Loss{Reduction: BatchMean}.Loss(x, x) })
	testenv.Raises[*ember.ShapeError](t, "batchmean MSE", func() { MSELoss{Reduction: BatchMean}.Loss(x, x) })
	testenv.Raises[*ember.ShapeError](t, "BCE shapes", func() { BCELoss{}.Loss(x, ember.Zeros(ember.Shape{3})) })
	if got := (BCELoss{}).Loss(x, x).GradFn(); got != "" {
		t.Fatalf("BCE of tensors without gradients records %q", got)
	}
	xg := ember.Zeros(ember.Shape{2}, ember.WithGrad())
	if got := (BCELoss{}).Loss(xg, x).GradFn(); got != "BinaryCrossEntropyBackward0" {
		t.Fatalf("BCE grad_fn %q", got)
	}
}

// TestPointwiseLossesAutocast: under autocast the pointwise losses run in
// float32, as PyTorch's autocast lists l1_loss, smooth_l1_loss,
// huber_loss and kl_div; the input's gradient keeps its dtype. The value
// is worked by hand: L1 of [0.2, 0.7] against [0, 1] is (0.2 + 0.3)/2 in
// float16 inputs.
func TestPointwiseLossesAutocast(t *testing.T) {
	x := ember.FromSlice([]float32{0.2, 0.7}, ember.Shape{2}).Cast(ember.Float16).SetRequiresGrad(true)
	y := ember.FromSlice([]float32{0, 1}, ember.Shape{2}).Cast(ember.Float16)
	ember.Autocast(ember.CPU, ember.Float16, func() {
		for _, l := range []Loss{L1Loss{}, SmoothL1Loss{}, HuberLoss{}, KLDivLoss{}, BCELoss{}} {
			o := l.Loss(x, y)
			if o.DType() != ember.Float32 {
				t.Fatalf("%T under autocast: %v, want float32", l, o.DType())
			}
			o.Backward()
			if x.Grad().DType() != ember.Float16 {
				t.Fatalf("%T: gradient %v, want float16", l, x.Grad().DType())
			}
			x.ZeroGrad()
		}
	})
	x16, y16 := x.Detach().Cast(ember.Float32).Float64s(), y.Cast(ember.Float32).Float64s()
	want := (x16[0] - y16[0] + y16[1] - x16[1]) / 2
	ember.Autocast(ember.CPU, ember.Float16, func() {
		if got := (L1Loss{}).Loss(x, y).Item(); got != float64(float32(want)) {
			t.Fatalf("L1 = %v, want %v", got, want)
		}
	})
}
