package optim

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/nilguard/nilguardtest"
	"github.com/emberml/ember/internal/testenv"
	"github.com/emberml/ember/nn"
)

type swaFixture struct {
	LinearInit map[string]fixTensor `json:"linear_init"`
	Models     []map[string]fixTensor
	Steps      []struct{ Avg, Ema map[string]fixTensor }
	BNInit     map[string]fixTensor `json:"bn_init"`
	BNBatches  []fixTensor          `json:"bn_batches"`
	BNAfter    map[string]fixTensor `json:"bn_after"`
	BNTraining bool                 `json:"bn_training"`
}

func loadInto(t *testing.T, m nn.Module, sd map[string]fixTensor, dev ember.Device) {
	t.Helper()
	in := map[string]*ember.Tensor{}
	for k, v := range sd {
		x := v.on(dev)
		if strings.HasSuffix(k, "num_batches_tracked") {
			x = x.Cast(ember.Int64)
		}
		in[k] = x
	}
	if err := m.LoadStateDict(in, true); err != nil {
		t.Fatal(err)
	}
}

// TestAveragedModelMatchesTorch: AveragedModel's running average and an
// EMA (a custom AvgFn) of a Linear after four updates, and its state dict
// ("module.weight", "module.bias", "n_averaged"), against
// torch.optim.swa_utils 1.13; the average is a copy (the model's later
// changes do not reach it); UpdateBN's BatchNorm statistics over three
// batches against update_bn's, the model left in evaluation mode.
func TestAveragedModelMatchesTorch(t *testing.T) {
	var f swaFixture
	if err := json.Unmarshal(readMoreFixture(t).Swa, &f); err != nil {
		t.Fatal(err)
	}
	eachDevice(t, func(t *testing.T, dev ember.Device) {
		lin := nn.NewLinear(3, 2, true).To(dev)
		loadInto(t, lin, f.LinearInit, dev)
		avg := NewAveragedModel(lin, nil)
		ema := NewAveragedModel(lin, func(a, m *ember.Tensor, _ int64) *ember.Tensor { return a.MulScalar(0.9).Add(m.MulScalar(0.1)) })
		for k, st := range f.Models {
			loadInto(t, lin, st, dev)
			avg.UpdateParameters(lin)
			ema.UpdateParameters(lin)
			for name, a := range map[string]*AveragedModel{"avg": avg, "ema": ema} {
				want := f.Steps[k].Avg
				if name == "ema" {
					want = f.Steps[k].Ema
				}
				got := a.StateDict()
				if gk, wk := slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)); !slices.Equal(gk, wk) {
					t.Fatalf("%s keys %v, want torch's %v", name, gk, wk)
				}
				for key, w := range want {
					near(t, name+" "+key, got[key].Cast(ember.Float64).CPU().Float64s(), w.Data, 1e-6)
				}
			}
		}
		if y := avg.Forward(ember.Ones(ember.Shape{1, 3}).To(dev)); !y.Shape().Equal(ember.Shape{1, 2}) {
			t.Errorf("Forward shape %v", y.Shape())
		}

		net := nn.NewSequential(nn.NewLinear(3, 4, true), nn.NewBatchNorm1d(4)).To(dev)
		loadInto(t, net, f.BNInit, dev)
		net.Eval()
		batches := make([]*ember.Tensor, len(f.BNBatches))
		for i, b := range f.BNBatches {
			batches[i] = b.on(dev)
		}
		UpdateBNBatches(batches, net)
		if net.Training() != f.BNTraining {
			t.Errorf("training %v after UpdateBN", net.Training())
		}
		got := net.StateDict()
		for key, w := range f.BNAfter {
			near(t, "update_bn "+key, got[key].Cast(ember.Float64).CPU().Float64s(), w.Data, 1e-5)
		}
	})
}

// TestAveragedModelRefuses: a nil model, a model of other parameters, an
// AvgFn of the wrong shape.
func TestAveragedModelRefuses(t *testing.T) {
	lin := nn.NewLinear(3, 2, true)
	a := NewAveragedModel(lin, nil)
	for name, f := range map[string]func(){
		"nil model":   func() { NewAveragedModel(nil, nil) },
		"nil update":  func() { a.UpdateParameters(nil) },
		"other model": func() { a.UpdateParameters(nn.NewLinear(4, 2, true)) },
		"no bias":     func() { a.UpdateParameters(nn.NewLinear(3, 2, false)) },
		"bad avg": func() {
			b := NewAveragedModel(lin, func(a, _ *ember.Tensor, _ int64) *ember.Tensor { return a.Sum() })
			b.UpdateParameters(lin)
			b.UpdateParameters(lin)
		},
		"nil inputs": func() { UpdateBN(nil, lin) },
		"zero":       func() { (&AveragedModel{}).UpdateParameters(lin) },
		"zero fwd":   func() { (&AveragedModel{}).Forward(ember.Ones(ember.Shape{1, 3})) },
	} {
		testenv.Raises[*ember.ValueError](t, name, f)
	}
	// a model without BatchNorm is left alone
	UpdateBNBatches([]*ember.Tensor{ember.Ones(ember.Shape{2, 3})}, lin)
	if a.NAveraged.Item() != 0 {
		t.Errorf("n_averaged %v after refused updates", a.NAveraged.Item())
	}
}

// Every method of a nil *AveragedModel panics with an *nn.ModuleError,
// and zz_nilguard.go is current (go generate).
func TestNilAveragedModel(t *testing.T) {
	nilguardtest.Check(t, (*AveragedModel)(nil))
}

// TestUpdateBNSharedBatchNorm: a BatchNorm registered twice (torch's
// modules() yields it once) gets its momentum back: UpdateBN leaves
// CumulativeAverage as it found it, and the statistics are the plain
// average over the batches (each batch passing it twice, as torch's
// model(input) does).
func TestUpdateBNSharedBatchNorm(t *testing.T) {
	bn := nn.NewBatchNorm1d(2)
	net := nn.NewSequential(bn, bn)
	UpdateBNBatches([]*ember.Tensor{ember.FromSlice([]float32{0, 2, 2, 6}, ember.Shape{2, 2})}, net)
	if bn.CumulativeAverage {
		t.Errorf("CumulativeAverage left true after UpdateBN of a shared BatchNorm")
	}
	// PyTorch 1.13: running_mean (0.5, 2), running_var (2, 5) (the first
	// pass's mean (1, 4) and unbiased var (2, 8), the second's of the
	// normalized batch, 0 and ≈2, averaged)
	near(t, "running_mean", bn.RunningMean.Cast(ember.Float64).Float64s(), []float64{0.5, 2}, 1e-5)
	near(t, "running_var", bn.RunningVar.Cast(ember.Float64).Float64s(), []float64{2, 5}, 1e-3)
}
