package nn

import (
	"math"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/weights"
)

var fx map[string]*ember.Tensor

func fixture(t *testing.T) map[string]*ember.Tensor {
	t.Helper()
	if fx == nil {
		var err error
		if fx, err = weights.LoadSafetensors("../testdata/nn/layers.safetensors"); err != nil {
			t.Fatal(err)
		}
	}
	return fx
}

func close(t *testing.T, name string, got, want *ember.Tensor, tol float64) {
	t.Helper()
	if want == nil {
		t.Fatalf("%s: no fixture", name)
	}
	if !got.Shape().Equal(want.Shape()) {
		t.Fatalf("%s: shape %v, want %v", name, got.Shape(), want.Shape())
	}
	g, w := got.Cast(ember.Float64).Float64s(), want.Cast(ember.Float64).Float64s()
	for i := range g {
		if math.Abs(g[i]-w[i]) > tol*(1+math.Abs(w[i])) {
			t.Errorf("%s[%d] = %v, want %v", name, i, g[i], w[i])
			return
		}
	}
}

func load(t *testing.T, m Module, prefix string) {
	t.Helper()
	f := fixture(t)
	sd := map[string]*ember.Tensor{}
	for k := range m.StateDict() {
		sd[k] = f[prefix+"."+k]
	}
	if err := m.LoadStateDict(sd, true); err != nil {
		t.Fatal(err)
	}
}

func TestLayersMatchTorch(t *testing.T) {
	f := fixture(t)
	cases := []struct {
		name string
		m    Module
	}{
		{"linear", NewLinear(5, 3, true)},
		{"conv", NewConv2d(3, 4, 3, Stride(2), Padding(1), Dilation(2))},
		{"conv1x1", NewConv2d(3, 2, 1, NoBias())},
		{"bn2d_train", NewBatchNorm2d(3)},
		{"bn1d_eval", NewBatchNorm1d(6)},
		{"layernorm", NewLayerNorm(4, 3)},
		{"gelu", NewGELU()},
		{"leakyrelu", NewLeakyReLU(0.2)},
		{"sigmoid", NewSigmoid()},
		{"tanh", NewTanh()},
		{"maxpool", NewMaxPool2d(3, 2, 1)},
		{"avgpool", NewAvgPool2d(3, 2, 1)},
		{"adaptive", NewAdaptiveAvgPool2d(3, 2)},
	}
	for _, c := range cases {
		load(t, c.m, c.name)
		if c.name == "bn1d_eval" {
			c.m.Eval()
		}
		close(t, c.name, c.m.Forward(f[c.name+".x"]), f[c.name+".y"], 1e-5)
		for k, v := range c.m.StateDict() {
			if after := f[c.name+".after."+k]; after != nil {
				close(t, c.name+" "+k, v, after, 1e-5)
			}
		}
	}
	e := NewEmbedding(7, 3)
	e.LoadStateDict(map[string]*ember.Tensor{"weight": f["embedding.weight"]}, true)
	close(t, "embedding", e.Forward(f["embedding.x"]), f["embedding.y"], 1e-6)
}

func TestLossesMatchTorch(t *testing.T) {
	f := fixture(t)
	lg, tg, w := f["loss.logits"], f["loss.target"], f["loss.weight"]
	close(t, "ce", CrossEntropyLoss{}.Loss(lg, tg), f["loss.ce"], 1e-5)
	close(t, "ce_smooth", CrossEntropyLoss{LabelSmoothing: 0.1}.Loss(lg, tg), f["loss.ce_smooth"], 1e-5)
	close(t, "ce_weight_smooth", CrossEntropyLoss{LabelSmoothing: 0.2, Weight: w}.Loss(lg, tg), f["loss.ce_weight_smooth"], 1e-5)
	close(t, "ce_sum", CrossEntropyLoss{Reduction: Sum}.Loss(lg, tg), f["loss.ce_sum"], 1e-5)
	close(t, "nll", NLLLoss{}.Loss(lg.LogSoftmax(1), tg), f["loss.nll"], 1e-5)
	close(t, "nll_weight", NLLLoss{Weight: w}.Loss(lg.LogSoftmax(1), tg), f["loss.nll_weight"], 1e-5)
	a, b := f["loss.a"], f["loss.b"]
	close(t, "mse", MSELoss{}.Loss(a, b), f["loss.mse"], 1e-5)
	close(t, "bce", BCEWithLogitsLoss{}.Loss(a.MulScalar(5), f["loss.bce_target"]), f["loss.bce"], 1e-5)
	close(t, "bce_pw", BCEWithLogitsLoss{Reduction: None, PosWeight: f["loss.pos_weight"]}.Loss(a.MulScalar(5), f["loss.bce_target"]), f["loss.bce_pw_none"], 1e-5)
}

func TestDefaultInit(t *testing.T) {
	ember.ManualSeed(1)
	l := NewLinear(100, 50, true)
	c := NewConv2d(4, 8, 3)
	for name, tc := range map[string]struct {
		t     *ember.Tensor
		bound float64
	}{
		"linear.weight": {l.Weight, 0.1}, "linear.bias": {l.Bias, 0.1},
		"conv.weight": {c.Weight, 1 / 6.0}, "conv.bias": {c.Bias, 1 / 6.0},
	} {
		v := tc.t.Float32s()
		lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
		for _, x := range v {
			lo, hi, sum = math.Min(lo, float64(x)), math.Max(hi, float64(x)), sum+float64(x)
		}
		if lo < -tc.bound || hi > tc.bound || (len(v) > 100 && (hi < 0.9*tc.bound || lo > -0.9*tc.bound)) {
			t.Errorf("%s in [%v, %v], want U(-%v, %v)", name, lo, hi, tc.bound, tc.bound)
		}
		if !tc.t.RequiresGrad() {
			t.Errorf("%s does not require grad", name)
		}
	}
	bn := NewBatchNorm2d(3)
	if bn.Weight.Sum().Item() != 3 || bn.Bias.Sum().Item() != 0 || bn.RunningVar.Sum().Item() != 3 {
		t.Error("BatchNorm init is not weight 1, bias 0, running var 1")
	}
}

func TestSequentialAndModes(t *testing.T) {
	s := NewSequential(NewLinear(4, 3, true), NewReLU(), NewDropout(0.5), NewSequential(NewBatchNorm1d(3)), NewLinear(3, 2, false))
	names := []string{}
	for _, n := range s.NamedParameters() {
		names = append(names, n.Name)
	}
	if got := strings.Join(names, " "); got != "0.weight 0.bias 3.0.weight 3.0.bias 4.weight" {
		t.Errorf("names %q", got)
	}
	if bn := s.NamedBuffers(); len(bn) != 3 || bn[0].Name != "3.0.running_mean" || bn[2].Name != "3.0.num_batches_tracked" {
		t.Errorf("buffers %v", bn)
	}
	if s.At(-1).(*Linear).Out != 2 || s.Len() != 5 {
		t.Error("At")
	}
	s.Eval()
	if s.At(2).Training() || s.At(3).(*Sequential).At(0).Training() {
		t.Error("Eval did not reach children")
	}
	x := ember.Ones(ember.Shape{5, 4})
	d := NewDropout(0.5)
	if y := d.Forward(x).Float32s(); func() bool {
		for _, v := range y {
			if v != 0 && v != 2 {
				return true
			}
		}
		return false
	}() {
		t.Errorf("dropout values %v, want 0 or 2", y)
	}
	d.Eval()
	if d.Forward(x) != x {
		t.Error("eval dropout is not the identity")
	}
	if m := s.To(ember.CPU); m != Module(s) {
		t.Error("To did not return the module")
	}
	if NumParameters(s) != 4*3+3+3+3+3*2 {
		t.Errorf("NumParameters %d", NumParameters(s))
	}
}
