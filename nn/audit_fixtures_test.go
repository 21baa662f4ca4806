package nn

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
)

// jsonTensor is a tensor of testdata/nn/audit.json.
type jsonTensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

func (j jsonTensor) tensor() *ember.Tensor {
	return ember.FromSlice(j.Data, ember.Shape(j.Shape)).Cast(ember.Float32)
}

// auditFixtures reads testdata/nn/audit.json, written by
// testdata/gen_nn_audit_fixtures.py (PyTorch 1.13).
func auditFixtures(t *testing.T) (f struct {
	BN []struct {
		Name, Dims  string
		KW          map[string]any `json:"kw"`
		TrainX      []jsonTensor   `json:"train_x"`
		TrainY      []jsonTensor   `json:"train_y"`
		RunningMean []jsonTensor   `json:"running_mean"`
		RunningVar  []jsonTensor   `json:"running_var"`
		Tracked     []int64        `json:"tracked"`
		EvalX       jsonTensor     `json:"eval_x"`
		EvalY       jsonTensor     `json:"eval_y"`
		Repr        string
	}
	Clip []struct {
		NormType any        `json:"norm_type"`
		Total    float64    `json:"total"`
		G1       jsonTensor `json:"g1"`
		G2       jsonTensor `json:"g2"`
	}
}) {
	t.Helper()
	b, err := os.ReadFile("../testdata/nn/audit.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestBatchNormRunningStatsMatchTorch runs three training steps and one
// evaluation step of BatchNorm1d/2d as PyTorch 1.13 does: momentum 0.1 and
// 0.3, momentum=None (CumulativeAverage: the running statistics had
// followed momentum 0.1), affine=False (nil Weight and Bias) and
// track_running_stats=False (nil running buffers: evaluation mode had
// panicked instead of using the batch's statistics).
func TestBatchNormRunningStatsMatchTorch(t *testing.T) {
	for _, c := range auditFixtures(t).BN {
		var b *BatchNorm
		if c.Dims == "1d" {
			b = NewBatchNorm1d(3)
		} else {
			b = NewBatchNorm2d(3)
		}
		if m, ok := c.KW["momentum"]; ok {
			if m == nil {
				b.CumulativeAverage = true
			} else {
				b.Momentum = m.(float64)
			}
		}
		if c.KW["affine"] == false {
			b.Weight, b.Bias = nil, nil
		} else {
			b.Weight.Detach().CopyFrom(ember.FromSlice([]float32{0.5, 1.5, -1}, ember.Shape{3}))
			b.Bias.Detach().CopyFrom(ember.FromSlice([]float32{0.1, -0.2, 0.3}, ember.Shape{3}))
		}
		if c.KW["track_running_stats"] == false {
			b.RunningMean, b.RunningVar, b.NumBatchesTracked = nil, nil, nil
		}
		if got := b.String(); got != c.Repr {
			t.Errorf("%s: repr %q, want %q", c.Name, got, c.Repr)
		}
		for i := range c.TrainX {
			y := b.Forward(c.TrainX[i].tensor())
			close(t, c.Name+" train y", y, c.TrainY[i].tensor(), 1e-5)
			if b.RunningMean == nil {
				continue
			}
			close(t, c.Name+" running_mean", b.RunningMean, c.RunningMean[i].tensor(), 1e-5)
			close(t, c.Name+" running_var", b.RunningVar, c.RunningVar[i].tensor(), 1e-5)
			if got := b.NumBatchesTracked.Int64s()[0]; got != c.Tracked[i] {
				t.Errorf("%s: num_batches_tracked %d, want %d", c.Name, got, c.Tracked[i])
			}
		}
		b.Eval()
		close(t, c.Name+" eval y", b.Forward(c.EvalX.tensor()), c.EvalY.tensor(), 1e-5)
	}
}

// TestBatchNormBatchOfOne: one value per channel in training panics with
// PyTorch's ValueError (it was a ShapeError); evaluation mode takes it.
func TestBatchNormBatchOfOne(t *testing.T) {
	b := NewBatchNorm1d(3)
	e := testenv.Raises[*ember.ValueError](t, "BatchNorm1d on [1, 3]", func() { b.Forward(ember.Ones(ember.Shape{1, 3})) })
	if !strings.Contains(e.Error(), "Expected more than 1 value per channel when training") {
		t.Errorf("error %q", e)
	}
	b.Eval()
	close(t, "eval on [1, 3]", b.Forward(ember.Ones(ember.Shape{1, 3})), ember.Full(ember.Shape{1, 3}, 1/math.Sqrt(1+1e-5)), 1e-6)
}

// TestClipGradNormTypesMatchTorch: clip_grad_norm_ for norm types 0 (the
// count of non-zeros) and -Inf (the smallest |g|), which had given 1 for
// any gradients (|g|^0 summed, to the power 1/0), as well as 1, 2, 3 and
// Inf, against PyTorch 1.13.
func TestClipGradNormTypesMatchTorch(t *testing.T) {
	for _, c := range auditFixtures(t).Clip {
		nt := 0.0
		switch v := c.NormType.(type) {
		case float64:
			nt = v
		case string:
			nt = math.Inf(1)
			if v == "-inf" {
				nt = math.Inf(-1)
			}
		}
		ps := []*ember.Tensor{ember.Zeros(ember.Shape{3}, ember.WithGrad()), ember.Zeros(ember.Shape{2}, ember.WithGrad()), ember.Zeros(ember.Shape{2}, ember.WithGrad())}
		ps[0].SetGrad(ember.FromSlice([]float32{1, 0.5, 2}, ember.Shape{3}))
		ps[1].SetGrad(ember.FromSlice([]float32{0, -3}, ember.Shape{2}))
		tot := ClipGradNorm(ps, 1, nt)
		if got := tot.Item(); math.Abs(got-c.Total) > 1e-6*(1+math.Abs(c.Total)) {
			t.Errorf("norm %v: total %v, want %v", nt, got, c.Total)
		}
		close(t, "g1", ps[0].Grad(), c.G1.tensor(), 1e-6)
		close(t, "g2", ps[1].Grad(), c.G2.tensor(), 1e-6)
	}
}

// TestGroupNormMatchesTorch checks the new GroupNorm (forward, input,
// weight and bias gradients, repr) against PyTorch 1.13, with and without
// normCase is a normalisation layer's fixture: with or without its
// affine weight and bias, the output and the gradients for an upstream
// gradient Gout, and the repr.
type normCase struct {
	Affine               bool
	X, Y, Gout, Gx       jsonTensor
	Weight, Bias, Gw, Gb jsonTensor
	Repr                 string
}

// check loads c's affine parameters into m (whose fields weight and bias
// hold them; nil both without affine) and compares m's repr, output and
// gradients with c's (the weight's within gwTol).
func (c normCase) check(t *testing.T, m Module, weight, bias **ember.Tensor, gwTol float64) {
	t.Helper()
	if c.Affine {
		if err := m.LoadStateDict(map[string]*ember.Tensor{"weight": c.Weight.tensor(), "bias": c.Bias.tensor()}, true); err != nil {
			t.Fatal(err)
		}
	} else {
		*weight, *bias = nil, nil
	}
	if fmt.Sprint(m) != c.Repr {
		t.Errorf("repr %q, want %q", fmt.Sprint(m), c.Repr)
	}
	x := c.X.tensor().SetRequiresGrad(true)
	y := m.Forward(x)
	close(t, c.Repr+" y", y, c.Y.tensor(), 1e-5)
	y.Mul(c.Gout.tensor()).Sum().Backward()
	close(t, c.Repr+" grad x", x.Grad(), c.Gx.tensor(), 1e-4)
	if c.Affine {
		close(t, c.Repr+" grad weight", (*weight).Grad(), c.Gw.tensor(), gwTol)
		close(t, c.Repr+" grad bias", (*bias).Grad(), c.Gb.tensor(), 1e-5)
	}
}

// affine, over [N, C], [N, C, L] and [N, C, H, W] inputs.
func TestGroupNormMatchesTorch(t *testing.T) {
	b, err := os.ReadFile("../testdata/nn/audit.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		GroupNorm []struct {
			Groups, Channels int
			normCase
		}
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.GroupNorm) == 0 {
		t.Fatal("no fixtures")
	}
	for _, c := range f.GroupNorm {
		m := NewGroupNorm(c.Groups, c.Channels)
		c.check(t, m, &m.Weight, &m.Bias, 1e-4)
	}
	testenv.Raises[*ember.ValueError](t, "NewGroupNorm(4, 6)", func() { NewGroupNorm(4, 6) })
	testenv.Raises[*ember.ValueError](t, "NewGroupNorm(0, 6)", func() { NewGroupNorm(0, 6) })
	testenv.Raises[*ember.ShapeError](t, "GroupNorm(2, 6) on [2, 4]", func() { NewGroupNorm(2, 6).Forward(ember.Ones(ember.Shape{2, 4})) })
	testenv.Raises[*ember.DTypeError](t, "GroupNorm on int64", func() { NewGroupNorm(1, 3).Forward(ember.Ones(ember.Shape{2, 3}, ember.Dtype(ember.Int64))) })
	testenv.Raises[*ember.ValueError](t, "GroupNorm(1, 1) on [1, 1]", func() { NewGroupNorm(1, 1).Forward(ember.Ones(ember.Shape{1, 1})) })
	// fields changed after the constructor are checked again
	testenv.Raises[*ember.ValueError](t, "Groups = 0", func() { g := NewGroupNorm(2, 6); g.Groups = 0; g.Forward(ember.Ones(ember.Shape{2, 6})) })
	testenv.Raises[*ember.ValueError](t, "Groups = 4 of 6", func() { g := NewGroupNorm(2, 6); g.Groups = 4; g.Forward(ember.Ones(ember.Shape{2, 6})) })
	testenv.Raises[*ember.ValueError](t, "CumulativeAverage without NumBatchesTracked", func() {
		b := NewBatchNorm2d(2)
		b.CumulativeAverage, b.NumBatchesTracked = true, nil
		b.Forward(ember.Ones(ember.Shape{2, 2, 1, 1}))
	})
	// half inputs: float32 statistics, the output in the input's dtype
	h := NewGroupNorm(2, 4).Forward(ember.Randn(ember.Shape{2, 4, 3}).Cast(ember.BFloat16))
	if h.DType() != ember.BFloat16 {
		t.Errorf("bfloat16 input gave %v", h.DType())
	}
}

// TestConv1dMatchesTorch checks the new Conv1d module (stride, padding,
// dilation, groups, bias=False, an unbatched input) against PyTorch 1.13:
// forward, gradients and repr; and its initialisation bound 1/√fan_in.
func TestConv1dMatchesTorch(t *testing.T) {
	b, err := os.ReadFile("../testdata/nn/audit.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Conv1d []struct {
			KW                         map[string]any `json:"kw"`
			X, Y, Gout, Gx, Weight, Gw jsonTensor
			Bias, Gb                   *jsonTensor
			Repr                       string
		}
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Conv1d) == 0 {
		t.Fatal("no fixtures")
	}
	for _, c := range f.Conv1d {
		num := func(k string, def int) int {
			if v, ok := c.KW[k]; ok {
				return int(v.(float64))
			}
			return def
		}
		opts := []ConvOption{Stride(num("stride", 1)), Padding(num("padding", 0)), Dilation(num("dilation", 1)), Groups(num("groups", 1))}
		if c.KW["bias"] == false {
			opts = append(opts, NoBias())
		}
		m := NewConv1d(num("in_channels", 0), num("out_channels", 0), num("kernel_size", 0), opts...)
		sd := map[string]*ember.Tensor{"weight": c.Weight.tensor()}
		if c.Bias != nil {
			sd["bias"] = c.Bias.tensor()
		}
		if err := m.LoadStateDict(sd, true); err != nil {
			t.Fatal(err)
		}
		if m.String() != c.Repr {
			t.Errorf("repr %q, want %q", m.String(), c.Repr)
		}
		x := c.X.tensor().SetRequiresGrad(true)
		y := m.Forward(x)
		close(t, c.Repr+" y", y, c.Y.tensor(), 1e-5)
		y.Mul(c.Gout.tensor()).Sum().Backward()
		close(t, c.Repr+" grad x", x.Grad(), c.Gx.tensor(), 1e-5)
		close(t, c.Repr+" grad weight", m.Weight.Grad(), c.Gw.tensor(), 1e-5)
		if c.Bias != nil {
			close(t, c.Repr+" grad bias", m.Bias.Grad(), c.Gb.tensor(), 1e-5)
		}
	}
	// U(-1/√fan_in, 1/√fan_in): fan_in = 8/2·5 = 20
	m := NewConv1d(8, 400, 5, Groups(2))
	bound := 1 / math.Sqrt(20)
	for name, p := range map[string]*ember.Tensor{"weight": m.Weight, "bias": m.Bias} {
		lo, hi := p.Min().Item(), p.Max().Item()
		if lo < -bound || hi > bound || hi-lo < 1.8*bound {
			t.Errorf("%s in [%v, %v], want about U(-%v, %v)", name, lo, hi, bound, bound)
		}
	}
	testenv.Raises[*ember.ValueError](t, "NewConv1d groups 3", func() { NewConv1d(4, 6, 3, Groups(3)) })
}

// TestClipGradNormFinite: torch's error_if_nonfinite=True, an error for an
// infinite or NaN total norm with the gradients left as they were, and
// ClipGradNorm's result otherwise.
func TestClipGradNormFinite(t *testing.T) {
	p := ember.Zeros(ember.Shape{3}, ember.WithGrad())
	p.SetGrad(ember.FromSlice([]float32{1, float32(math.Inf(1)), 2}, ember.Shape{3}))
	if _, err := ClipGradNormFinite([]*ember.Tensor{p}, 1, 2); err == nil || !strings.Contains(err.Error(), "non-finite") {
		t.Errorf("inf gradient: err %v", err)
	}
	if g := p.Grad().Float64s(); g[0] != 1 || !math.IsInf(g[1], 1) || g[2] != 2 {
		t.Errorf("the gradients changed: %v", g)
	}
	p.SetGrad(ember.FromSlice([]float32{3, 0, 4}, ember.Shape{3}))
	tot, err := ClipGradNormFinite([]*ember.Tensor{p}, 1, 2)
	if err != nil || tot.Item() != 5 {
		t.Fatalf("total %v, err %v", tot, err)
	}
	close(t, "clipped", p.Grad(), ember.FromSlice([]float64{0.6, 0, 0.8}, ember.Shape{3}), 1e-6)
}

// TestEmbeddingPaddedRepr: print(torch.nn.Embedding(10, 4, padding_idx=-2))
// in PyTorch 1.13 is "Embedding(10, 4, padding_idx=8)" (ember had left
// padding_idx out).
func TestEmbeddingPaddedRepr(t *testing.T) {
	if got := NewEmbeddingPadded(10, 4, -2).String(); got != "Embedding(10, 4, padding_idx=8)" {
		t.Errorf("repr %q", got)
	}
	if got := NewEmbedding(10, 4).String(); got != "Embedding(10, 4)" {
		t.Errorf("repr %q", got)
	}
}

// TestIdentitySoftmaxLayers: nn.Identity, nn.Softmax and nn.LogSoftmax,
// values and reprs from PyTorch 1.13 (x = [[1, 2, 3], [0, 0, 1]]).
func TestIdentitySoftmaxLayers(t *testing.T) {
	x := ember.FromSlice([]float32{1, 2, 3, 0, 0, 1}, ember.Shape{2, 3})
	for _, c := range []struct {
		m    *Activation
		repr string
		want []float64
	}{
		{NewIdentity(), "Identity()", []float64{1, 2, 3, 0, 0, 1}},
		{NewSoftmax(-1), "Softmax(dim=-1)", []float64{0.09003057330846786, 0.2447284758090973, 0.6652409434318542, 0.21194155514240265, 0.21194155514240265, 0.5761168599128723}},
		{NewLogSoftmax(0), "LogSoftmax(dim=0)", []float64{-0.31326165795326233, -0.12692804634571075, -0.12692804634571075, -1.31326162815094, -2.1269280910491943, -2.1269280910491943}},
	} {
		if c.m.String() != c.repr {
			t.Errorf("repr %q, want %q", c.m.String(), c.repr)
		}
		close(t, c.repr, c.m.Forward(x), ember.FromSlice(c.want, ember.Shape{2, 3}), 1e-6)
	}
}

// TestInitBounds: PyTorch's reset_parameters, kaiming_uniform_(a=√5) for
// the weight and U(±1/√fan_in) for the bias, is U(±1/√fan_in) for both,
// fan_in = In/Groups·k·k for Conv2d.
func TestInitBounds(t *testing.T) {
	conv := NewConv2d(8, 400, 3, Groups(4), Stride(2), Dilation(2))
	lin := NewLinear(50, 400, true)
	for _, c := range []struct {
		name  string
		p     *ember.Tensor
		bound float64
	}{
		{"conv weight", conv.Weight, 1 / math.Sqrt(18)}, {"conv bias", conv.Bias, 1 / math.Sqrt(18)},
		{"linear weight", lin.Weight, 1 / math.Sqrt(50)}, {"linear bias", lin.Bias, 1 / math.Sqrt(50)},
	} {
		lo, hi := c.p.Min().Item(), c.p.Max().Item()
		if lo < -c.bound || hi > c.bound || hi-lo < 1.8*c.bound {
			t.Errorf("%s in [%v, %v], want about U(-%v, %v)", c.name, lo, hi, c.bound, c.bound)
		}
		// the variance of U(-b, b) is b²/3
		if v := c.p.Square().Mean().Item(); math.Abs(v-c.bound*c.bound/3) > 0.15*c.bound*c.bound/3 {
			t.Errorf("%s: mean square %v, want about %v", c.name, v, c.bound*c.bound/3)
		}
	}
	if NewConv2d(4, 4, 3, NoBias()).Bias != nil {
		t.Error("NoBias left a bias")
	}
}

// TestAvgPoolCountIncludePad: nn.AvgPool2d(3, 2, 1) on arange(16) as
// [1, 1, 4, 4], with and without count_include_pad (PyTorch 1.13's
// values; ember always counted the padding).
func TestAvgPoolCountIncludePad(t *testing.T) {
	x := ember.Arange(0, 16, 1).Cast(ember.Float32).Reshape(1, 1, 4, 4)
	p := NewAvgPool2d(3, 2, 1)
	close(t, "count_include_pad", p.Forward(x).Flatten(0, -1), ember.FromSlice([]float64{1.1111111640930176, 2.6666667461395264, 5.666666507720947, 10}, ember.Shape{4}), 1e-6)
	p.CountIncludePad = false
	close(t, "count_include_pad=False", p.Forward(x).Flatten(0, -1), ember.FromSlice([]float64{2.5, 4, 8.5, 10}, ember.Shape{4}), 1e-6)
}

// TestLayerNormOddShapesMatchTorch: LayerNorm over (3, 1), (2, 3), (5,), (4,)
// with and without affine, and eps 1e-3, forward, gradients and repr
// against PyTorch 1.13.
func TestLayerNormOddShapesMatchTorch(t *testing.T) {
	b, err := os.ReadFile("../testdata/nn/audit.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		LayerNorm []struct {
			Norm []int
			Eps  float64
			normCase
		}
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.LayerNorm) == 0 {
		t.Fatal("no fixtures")
	}
	for _, c := range f.LayerNorm {
		m := NewLayerNorm(c.Norm...)
		m.Eps = c.Eps
		c.check(t, m, &m.Weight, &m.Bias, 1e-5)
	}
}
