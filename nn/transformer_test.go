package nn_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/weights"
)

// The fixtures are testdata/nn/transformer.safetensors, written by
// gen_transformer in testdata/gen_nn_fixtures.py (PyTorch 1.13): the cases
// below mirror its tables by name.

var (
	tfOnce sync.Once
	tfFix  map[string]*ember.Tensor
	tfErr  error
)

func tfFixture(t *testing.T) map[string]*ember.Tensor {
	t.Helper()
	tfOnce.Do(func() { tfFix, tfErr = weights.LoadSafetensors("../testdata/nn/transformer.safetensors") })
	if tfErr != nil {
		t.Fatal(tfErr)
	}
	return tfFix
}

// tfDevices is the CPU and every CUDA device present.
func tfDevices() []ember.Device {
	devs := []ember.Device{ember.CPU}
	for i := range ember.DeviceCount() {
		devs = append(devs, ember.CUDA(i))
	}
	return devs
}

// tfNear fails unless got and want agree within tol·(1 + |want|) everywhere
// (NaNs agree with NaNs).
func tfNear(t *testing.T, name string, got, want *ember.Tensor, tol float64) {
	t.Helper()
	if want == nil {
		t.Fatalf("%s: no fixture", name)
	}
	if got == nil {
		t.Fatalf("%s: nil result", name)
	}
	if !got.Shape().Equal(want.Shape()) {
		t.Fatalf("%s: shape %v, want %v", name, got.Shape(), want.Shape())
	}
	g, w := got.CPU().Cast(ember.Float64).Float64s(), want.CPU().Cast(ember.Float64).Float64s()
	worst, at := 0.0, -1
	for i := range g {
		if math.IsNaN(w[i]) != math.IsNaN(g[i]) {
			t.Fatalf("%s[%d] = %v, want %v", name, i, g[i], w[i])
		}
		if d := math.Abs(g[i]-w[i]) / (1 + math.Abs(w[i])); d > worst {
			worst, at = d, i
		}
	}
	if worst > tol {
		t.Errorf("%s[%d] = %v, want %v (relative error %.2g > %.2g)", name, at, g[at], w[at], worst, tol)
	}
}

// tfLoad loads the "<name>.sd.*" state dict into m, strictly, and moves m to dev.
func tfLoad(t *testing.T, m nn.Module, name string, dev ember.Device) {
	t.Helper()
	f := tfFixture(t)
	sd := map[string]*ember.Tensor{}
	for k, v := range f {
		if key, ok := strings.CutPrefix(k, name+".sd."); ok {
			sd[key] = v
		}
	}
	if err := m.LoadStateDict(sd, true); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	m.Eval()
	m.To(dev)
}

// tfIn returns fixture name.key on dev (nil when absent).
func tfIn(f map[string]*ember.Tensor, key string, dev ember.Device) *ember.Tensor {
	if v := f[key]; v != nil {
		return v.To(dev)
	}
	return nil
}

// leafOn returns a fresh leaf that requires grad with t's values, on dev.
func leafOn(t *ember.Tensor, dev ember.Device) *ember.Tensor {
	return t.To(dev).Detach().Clone().SetRequiresGrad(true)
}

type mhaCase struct {
	name string
	opts []nn.TransformerOption
	avg  bool // average_attn_weights
	grad bool
}

var mhaCases = []mhaCase{
	{"mha_self", nil, true, true},
	{"mha_self_bf", []nn.TransformerOption{nn.BatchFirst()}, false, false},
	{"mha_cross", nil, true, true},
	{"mha_kvdim", []nn.TransformerOption{nn.KVDims(5, 7), nn.BatchFirst()}, false, true},
	{"mha_nobias", []nn.TransformerOption{nn.NoAttnBias()}, true, false},
	{"mha_floatkpm", []nn.TransformerOption{nn.BatchFirst()}, true, false},
	{"mha_float_bool", nil, true, false},
	{"mha_unbatched", nil, false, false},
	{"mha_dropout_eval", []nn.TransformerOption{nn.WithDropout(0.3), nn.BatchFirst()}, true, false},
}

// mhaInputs returns the case's query, key and value on dev (the same tensor
// for self-attention, as PyTorch's call passed it), as leaves when grad.
func mhaInputs(f map[string]*ember.Tensor, name string, dev ember.Device, grad bool) (q, k, v *ember.Tensor, names []string) {
	in := func(key string) *ember.Tensor {
		if grad {
			return leafOn(f[name+"."+key], dev)
		}
		return f[name+"."+key].To(dev)
	}
	switch {
	case f[name+".x"] != nil:
		x := in("x")
		return x, x, x, []string{"x"}
	case f[name+".kv"] != nil:
		kv := in("kv")
		return in("q"), kv, kv, []string{"q", "kv"}
	}
	return in("q"), in("k"), in("v"), []string{"q", "k", "v"}
}

func checkMHA(t *testing.T, dev ember.Device) {
	f := tfFixture(t)
	for _, c := range mhaCases {
		m := nn.NewMultiheadAttention(8, 2, c.opts...)
		tfLoad(t, m, c.name, dev)
		q, k, v, _ := mhaInputs(f, c.name, dev, false)
		for _, need := range []bool{false, true} {
			o := nn.MHAOptions{AttnMask: tfIn(f, c.name+".attn_mask", dev), KeyPaddingMask: tfIn(f, c.name+".key_padding_mask", dev),
				NeedWeights: need, PerHeadWeights: !c.avg}
			y, w := m.Attend(q, k, v, o)
			label := fmt.Sprintf("%s %v need_weights=%v", c.name, dev, need)
			tfNear(t, label+" output", y, f[c.name+".y"], 1e-5)
			if need {
				tfNear(t, label+" weights", w, f[c.name+".w"], 1e-5)
			} else if w != nil {
				t.Errorf("%s: weights without NeedWeights", label)
			}
		}
	}
}

// TestMultiheadAttentionMatchesTorch compares nn.MultiheadAttention's
// outputs and attention weights with PyTorch's for every option and mask
// kind, through both the fused path (need_weights false) and the explicit
// softmax.
func TestMultiheadAttentionMatchesTorch(t *testing.T) {
	for _, dev := range tfDevices() {
		checkMHA(t, dev)
	}
}

// checkGrads runs (y·gout).sum() + extra backward and compares the inputs'
// and parameters' gradients with the fixture's "<name>.grad.*".
func checkGrads(t *testing.T, label, name string, m nn.Module, y *ember.Tensor, extra *ember.Tensor, inputs map[string]*ember.Tensor, tol float64) {
	t.Helper()
	f := tfFixture(t)
	loss := y.Mul(f[name+".gout"].To(y.Device())).Sum()
	if extra != nil {
		loss = loss.Add(extra)
	}
	loss.Backward()
	for k, x := range inputs {
		tfNear(t, label+" grad "+k, x.Grad(), f[name+".grad."+k], tol)
	}
	n := 0
	for _, p := range m.NamedParameters() {
		want := f[name+".grad.sd."+p.Name]
		if want == nil {
			t.Errorf("%s: no PyTorch gradient for %s", label, p.Name)
			continue
		}
		if p.Tensor.Grad() == nil {
			t.Errorf("%s: %s has no gradient", label, p.Name)
			continue
		}
		tfNear(t, label+" grad "+p.Name, p.Tensor.Grad(), want, tol)
		n++
	}
	if n == 0 {
		t.Errorf("%s: no parameters", label)
	}
}

func checkMHAGrads(t *testing.T, dev ember.Device) {
	f := tfFixture(t)
	for _, c := range mhaCases {
		if !c.grad {
			continue
		}
		for _, need := range []bool{false, true} {
			m := nn.NewMultiheadAttention(8, 2, c.opts...)
			tfLoad(t, m, c.name, dev)
			q, k, v, names := mhaInputs(f, c.name, dev, true)
			y, _ := m.Attend(q, k, v, nn.MHAOptions{AttnMask: tfIn(f, c.name+".attn_mask", dev),
				KeyPaddingMask: tfIn(f, c.name+".key_padding_mask", dev), NeedWeights: need})
			ins := map[string]*ember.Tensor{}
			for i, t := range []*ember.Tensor{q, k, v}[:len(names)] {
				ins[names[i]] = t
			}
			checkGrads(t, fmt.Sprintf("%s %v need_weights=%v", c.name, dev, need), c.name, m, y, nil, ins, 1e-5)
		}
	}
	// through the returned per-head weights as well
	m := nn.NewMultiheadAttention(8, 2)
	tfLoad(t, m, "mha_wgrad", dev)
	x := leafOn(f["mha_wgrad.x"], dev)
	y, w := m.Attend(x, x, x, nn.MHAOptions{AttnMask: tfIn(f, "mha_wgrad.attn_mask", dev), NeedWeights: true, PerHeadWeights: true})
	tfNear(t, "mha_wgrad weights", w, f["mha_wgrad.w"], 1e-5)
	checkGrads(t, fmt.Sprintf("mha_wgrad %v", dev), "mha_wgrad", m, y, w.Mul(f["mha_wgrad.gw"].To(dev)).Sum(), map[string]*ember.Tensor{"x": x}, 1e-5)
}

// TestMultiheadAttentionGradMatchesTorch compares the gradients of the
// inputs and of every parameter with torch.autograd's, through the fused
// attention's backward and the explicit softmax's.
func TestMultiheadAttentionGradMatchesTorch(t *testing.T) {
	for _, dev := range tfDevices() {
		checkMHAGrads(t, dev)
	}
}

type layerCase struct {
	name string
	opts []nn.TransformerOption
	grad bool
}

var encCases = []layerCase{
	{"enc_post_relu", nil, true},
	{"enc_pre_gelu_bf", []nn.TransformerOption{nn.NormFirst(), nn.WithActivation("gelu"), nn.BatchFirst()}, true},
	{"enc_post_bf_masks", []nn.TransformerOption{nn.BatchFirst()}, false},
	{"enc_pre_relu", []nn.TransformerOption{nn.NormFirst(), nn.LayerNormEps(1e-6)}, false},
}

var decCases = []layerCase{
	{"dec_post_relu", nil, true},
	{"dec_pre_gelu_bf", []nn.TransformerOption{nn.NormFirst(), nn.WithActivation("gelu"), nn.BatchFirst()}, false},
}

func layerOpts(c layerCase) []nn.TransformerOption {
	return append([]nn.TransformerOption{nn.FeedForward(16)}, c.opts...)
}

func checkEncoderLayers(t *testing.T, dev ember.Device, grads bool) {
	f := tfFixture(t)
	for _, c := range encCases {
		if grads && !c.grad {
			continue
		}
		m := nn.NewTransformerEncoderLayer(8, 2, layerOpts(c)...)
		tfLoad(t, m, c.name, dev)
		x := f[c.name+".x"].To(dev)
		if grads {
			x = leafOn(x, dev)
		}
		y := m.Encode(x, nn.TransformerMasks{SrcMask: tfIn(f, c.name+".src_mask", dev), SrcKeyPaddingMask: tfIn(f, c.name+".src_key_padding_mask", dev)})
		label := fmt.Sprintf("%s %v", c.name, dev)
		tfNear(t, label, y, f[c.name+".y"], 1e-5)
		if grads {
			checkGrads(t, label, c.name, m, y, nil, map[string]*ember.Tensor{"x": x}, 1e-5)
		}
	}
}

func checkDecoderLayers(t *testing.T, dev ember.Device, grads bool) {
	f := tfFixture(t)
	for _, c := range decCases {
		if grads && !c.grad {
			continue
		}
		m := nn.NewTransformerDecoderLayer(8, 2, layerOpts(c)...)
		tfLoad(t, m, c.name, dev)
		tgt, mem := f[c.name+".tgt"].To(dev), f[c.name+".memory"].To(dev)
		if grads {
			tgt, mem = leafOn(tgt, dev), leafOn(mem, dev)
		}
		y := m.Decode(tgt, mem, nn.TransformerMasks{
			TgtMask: tfIn(f, c.name+".tgt_mask", dev), MemoryMask: tfIn(f, c.name+".memory_mask", dev),
			TgtKeyPaddingMask: tfIn(f, c.name+".tgt_key_padding_mask", dev), MemoryKeyPaddingMask: tfIn(f, c.name+".memory_key_padding_mask", dev)})
		label := fmt.Sprintf("%s %v", c.name, dev)
		tfNear(t, label, y, f[c.name+".y"], 1e-5)
		if grads {
			checkGrads(t, label, c.name, m, y, nil, map[string]*ember.Tensor{"tgt": tgt, "memory": mem}, 1e-5)
		}
	}
}

// TestTransformerLayersMatchTorch compares the encoder and decoder layers
// (post- and pre-norm, relu and gelu, sequence- and batch-first, each kind
// of mask) with PyTorch's outputs.
func TestTransformerLayersMatchTorch(t *testing.T) {
	for _, dev := range tfDevices() {
		checkEncoderLayers(t, dev, false)
		checkDecoderLayers(t, dev, false)
	}
}

// TestTransformerLayersGradMatchTorch compares the gradients of the input
// and of every parameter of an encoder layer (post-norm relu, pre-norm
// gelu with masks) and a decoder layer with torch.autograd's.
func TestTransformerLayersGradMatchTorch(t *testing.T) {
	for _, dev := range tfDevices() {
		checkEncoderLayers(t, dev, true)
		checkDecoderLayers(t, dev, true)
	}
}

// TestTransformerStacksMatchTorch runs nn.TransformerEncoder (2 layers,
// final norm, batch-first, causal and padding masks) and
// nn.TransformerDecoder (2 pre-norm layers, every mask) with PyTorch's
// weights, and loads the encoder's state dict from the file torch.save
// wrote.
func TestTransformerStacksMatchTorch(t *testing.T) {
	f := tfFixture(t)
	for _, dev := range tfDevices() {
		enc := nn.NewTransformerEncoder(nn.NewTransformerEncoderLayer(8, 2, nn.FeedForward(16), nn.BatchFirst()), 2, nn.NewLayerNorm(8))
		tfLoad(t, enc, "encstack", dev)
		m := nn.TransformerMasks{SrcMask: tfIn(f, "encstack.mask", dev), SrcKeyPaddingMask: tfIn(f, "encstack.src_key_padding_mask", dev)}
		tfNear(t, fmt.Sprintf("encoder stack %v", dev), enc.Encode(f["encstack.x"].To(dev), m), f["encstack.y"], 1e-5)

		dec := nn.NewTransformerDecoder(nn.NewTransformerDecoderLayer(8, 2, nn.FeedForward(16), nn.NormFirst()), 2, nn.NewLayerNorm(8))
		tfLoad(t, dec, "decstack", dev)
		dm := nn.TransformerMasks{TgtMask: tfIn(f, "decstack.tgt_mask", dev), MemoryMask: tfIn(f, "decstack.memory_mask", dev),
			TgtKeyPaddingMask: tfIn(f, "decstack.tgt_key_padding_mask", dev), MemoryKeyPaddingMask: tfIn(f, "decstack.memory_key_padding_mask", dev)}
		tfNear(t, fmt.Sprintf("decoder stack %v", dev), dec.Decode(f["decstack.tgt"].To(dev), f["decstack.memory"].To(dev), dm), f["decstack.y"], 1e-5)
	}

	sd, err := weights.LoadPyTorch("../testdata/nn/transformer_encoder.pth")
	if err != nil {
		t.Fatal(err)
	}
	if sd["layers.0.self_attn.in_proj_weight"] == nil || sd["layers.1.linear1.weight"] == nil || sd["norm.weight"] == nil {
		t.Fatalf("unexpected keys in the checkpoint: %d keys", len(sd))
	}
	enc := nn.NewTransformerEncoder(nn.NewTransformerEncoderLayer(8, 2, nn.FeedForward(16), nn.BatchFirst()), 2, nn.NewLayerNorm(8))
	if err := enc.LoadStateDict(sd, true); err != nil {
		t.Fatal(err)
	}
	enc.Eval()
	m := nn.TransformerMasks{SrcMask: f["encstack.mask"], SrcKeyPaddingMask: f["encstack.src_key_padding_mask"]}
	tfNear(t, "encoder stack from .pth", enc.Encode(f["encstack.x"], m), f["encstack.y"], 1e-5)

	tfNear(t, "square subsequent mask", nn.GenerateSquareSubsequentMask(5), f["square_mask5"], 0)
}

// TestRMSNormMatchesTorch compares RMSNorm's output and gradients with
// Llama's RMSNorm in plain torch.
func TestRMSNormMatchesTorch(t *testing.T) {
	f := tfFixture(t)
	for _, dev := range tfDevices() {
		r := nn.NewRMSNorm(8, 1e-6)
		tfLoad(t, r, "rmsnorm", dev)
		x := leafOn(f["rmsnorm.x"], dev)
		y := r.Forward(x)
		tfNear(t, fmt.Sprintf("rmsnorm %v", dev), y, f["rmsnorm.y"], 1e-5)
		checkGrads(t, fmt.Sprintf("rmsnorm %v", dev), "rmsnorm", r, y, nil, map[string]*ember.Tensor{"x": x}, 1e-5)
	}
}

// TestTransformerRepr compares the modules' printing with PyTorch's repr
// (testdata/nn/repr_transformer.json, gen_repr_fixtures.py).
func TestTransformerRepr(t *testing.T) {
	b, err := os.ReadFile("../testdata/nn/repr_transformer.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]string
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	enc := nn.NewTransformerEncoderLayer(8, 2, nn.FeedForward(16), nn.WithDropout(0.2), nn.WithActivation("gelu"),
		nn.LayerNormEps(1e-6), nn.BatchFirst(), nn.NormFirst())
	got := map[string]fmt.Stringer{
		"mha":     nn.NewMultiheadAttention(8, 2),
		"mha_kv":  nn.NewMultiheadAttention(8, 2, nn.WithDropout(0.1), nn.NoAttnBias(), nn.KVDims(4, 6), nn.BatchFirst()),
		"encoder": nn.NewTransformerEncoder(enc, 2, nn.NewLayerNorm(8)),
		"decoder": nn.NewTransformerDecoder(nn.NewTransformerDecoderLayer(8, 2, nn.FeedForward(32)), 1, nil),
		"rmsnorm": nn.NewSequential(nn.NewRMSNorm(8, 1e-6), nn.NewRMSNorm(4, 1e-5)),
	}
	for name, m := range got {
		if want[name] == "" {
			t.Errorf("%s: no fixture", name)
		}
		if s := fmt.Sprint(m); s != want[name] {
			t.Errorf("%s:\n%s\nwant (PyTorch):\n%s", name, s, want[name])
		}
	}
}

// TestMultiheadAttentionCausal checks Causal against PyTorch's weights made
// with the square subsequent mask, on both paths, and alone or combined
// with a padding mask.
func TestMultiheadAttentionCausal(t *testing.T) {
	f := tfFixture(t)
	m := nn.NewMultiheadAttention(8, 2)
	tfLoad(t, m, "mha_wgrad", ember.CPU)
	x := f["mha_wgrad.x"]
	for _, need := range []bool{false, true} {
		y, w := m.Attend(x, x, x, nn.MHAOptions{Causal: true, NeedWeights: need, PerHeadWeights: true})
		tfNear(t, fmt.Sprintf("causal need_weights=%v", need), y, f["mha_wgrad.y"], 1e-5)
		if need {
			tfNear(t, "causal weights", w, f["mha_wgrad.w"], 1e-5)
		}
	}
	bf := nn.NewMultiheadAttention(8, 2, nn.BatchFirst())
	tfLoad(t, bf, "mha_self_bf", ember.CPU)
	x = f["mha_self_bf.x"]
	for _, need := range []bool{false, true} {
		y, w := bf.Attend(x, x, x, nn.MHAOptions{Causal: true, KeyPaddingMask: f["mha_self_bf.key_padding_mask"], NeedWeights: need, PerHeadWeights: true})
		tfNear(t, fmt.Sprintf("causal + padding need_weights=%v", need), y, f["mha_self_bf.y"], 1e-5)
		if need {
			tfNear(t, "causal + padding weights", w, f["mha_self_bf.w"], 1e-5)
		}
	}
}

// TestTransformerDropout: in training mode dropout zeroes attention weights
// and scales the rest by 1/(1−p) (each returned weight is 0 or twice the
// evaluation-mode weight for p = 0.5); a layer built WithDropout(0) in
// training mode is PyTorch's evaluation-mode layer.
func TestTransformerDropout(t *testing.T) {
	f := tfFixture(t)
	ember.ManualSeed(3)
	m := nn.NewMultiheadAttention(8, 2, nn.WithDropout(0.5), nn.BatchFirst())
	tfLoad(t, m, "mha_dropout_eval", ember.CPU)
	x := f["mha_dropout_eval.x"]
	_, we := m.Attend(x, x, x, nn.MHAOptions{NeedWeights: true, PerHeadWeights: true})
	m.Train(true)
	_, wt := m.Attend(x, x, x, nn.MHAOptions{NeedWeights: true, PerHeadWeights: true})
	e, tr := we.Float64s(), wt.Float64s()
	zeros := 0
	for i := range e {
		switch {
		case tr[i] == 0:
			zeros++
		case math.Abs(tr[i]-2*e[i]) > 1e-6:
			t.Fatalf("training weight %d = %v, want 0 or %v", i, tr[i], 2*e[i])
		}
	}
	if zeros == 0 || zeros == len(e) {
		t.Errorf("%d of %d weights dropped", zeros, len(e))
	}
	if y := m.Forward(x); !y.Shape().Equal(x.Shape()) || ember.AllClose(y, f["mha_dropout_eval.y"], 1e-4, 1e-4) {
		t.Errorf("training-mode output %v equals the evaluation one", y.Shape())
	}

	l := nn.NewTransformerEncoderLayer(8, 2, nn.FeedForward(16), nn.WithDropout(0))
	tfLoad(t, l, "enc_post_relu", ember.CPU)
	l.Train(true)
	tfNear(t, "dropout 0 in training mode", l.Forward(f["enc_post_relu.x"]), f["enc_post_relu.y"], 1e-5)
	l = nn.NewTransformerEncoderLayer(8, 2, nn.FeedForward(16))
	tfLoad(t, l, "enc_post_relu", ember.CPU)
	l.Train(true)
	if ember.AllClose(l.Forward(f["enc_post_relu.x"]), f["enc_post_relu.y"], 1e-4, 1e-4) {
		t.Error("dropout 0.1 in training mode changed nothing")
	}
}

// TestTransformerAutocastDropout: a TransformerEncoderLayer with its
// default dropout 0.1 trains under Autocast(CPU, BFloat16) (the dropout
// after the bfloat16 linear layers needs bfloat16 random numbers): with
// dropout 0 it is the evaluation-mode fixture to bfloat16's precision,
// with 0.1 it differs from it, and the backward reaches the float32
// weights.
func TestTransformerAutocastDropout(t *testing.T) {
	f := tfFixture(t)
	ember.ManualSeed(4)
	x, want := f["enc_post_relu.x"], f["enc_post_relu.y"]
	for _, p := range []float64{0, 0.1} {
		opts := []nn.TransformerOption{nn.FeedForward(16)}
		if p == 0 {
			opts = append(opts, nn.WithDropout(0))
		}
		l := nn.NewTransformerEncoderLayer(8, 2, opts...)
		tfLoad(t, l, "enc_post_relu", ember.CPU)
		l.Train(true)
		var y *ember.Tensor
		ember.Autocast(ember.CPU, ember.BFloat16, func() { y = l.Forward(x) })
		if y.DType() != ember.Float32 || !y.Shape().Equal(want.Shape()) {
			t.Fatalf("p=%v: %v %v", p, y.DType(), y.Shape())
		}
		if close := ember.AllClose(y, want, 0.05, 0.05); close != (p == 0) {
			t.Errorf("p=%v: close to the evaluation-mode output: %v", p, close)
		}
		y.Square().Sum().Backward()
		g := l.Linear1.Weight.Grad()
		if g == nil || g.DType() != ember.Float32 || !ember.AllClose(g, g, 0, 0) {
			t.Fatalf("p=%v: linear1 weight grad %v", p, g)
		}
	}
}

// TestTransformerModules covers construction: parameter names and shapes,
// PyTorch's initialisation, deep copies in the stacks, option misuse and
// mask errors.
func TestTransformerModules(t *testing.T) {
	ember.ManualSeed(1)
	m := nn.NewMultiheadAttention(64, 4, nn.KVDims(32, 48))
	var names []string
	for _, p := range m.NamedParameters() {
		names = append(names, fmt.Sprintf("%s%v", p.Name, p.Tensor.Shape()))
	}
	if got := strings.Join(names, " "); got != "q_proj_weight[64, 64] k_proj_weight[64, 32] v_proj_weight[64, 48] in_proj_bias[192] out_proj.weight[64, 64] out_proj.bias[64]" {
		t.Errorf("parameters %s", got)
	}
	p := nn.NewMultiheadAttention(64, 4)
	bound := math.Sqrt(6.0 / (64 + 192)) // xavier_uniform_ of [3E, E]
	if w := p.InProjWeight.Abs().Max().Item(); w > bound || w < 0.9*bound {
		t.Errorf("in_proj_weight max %v, want U(±%v)", w, bound)
	}
	if p.InProjBias.Abs().Sum().Item() != 0 || p.OutProj.Bias.Abs().Sum().Item() != 0 {
		t.Error("biases do not start at zero")
	}
	if b := p.OutProj.Weight.Abs().Max().Item(); b > 1/8.0 {
		t.Errorf("out_proj.weight max %v, want Linear's U(±1/8)", b)
	}

	layer := nn.NewTransformerEncoderLayer(8, 2, nn.FeedForward(16))
	enc := nn.NewTransformerEncoder(layer, 2, nil)
	if err := nn.Check(enc); err != nil {
		t.Error(err)
	}
	l0 := enc.Layers.At(0).(*nn.TransformerEncoderLayer)
	l1 := enc.Layers.At(1).(*nn.TransformerEncoderLayer)
	if l0 == layer || l0.SelfAttn.InProjWeight == layer.SelfAttn.InProjWeight || l0.Linear1.Weight == l1.Linear1.Weight {
		t.Error("the stack's layers share tensors")
	}
	if !ember.Equal(l1.Linear1.Weight, layer.Linear1.Weight) || !l1.Linear1.Weight.RequiresGrad() {
		t.Error("a clone's weights differ from the layer's")
	}
	if n := len(enc.StateDict()); n != 2*len(layer.StateDict()) {
		t.Errorf("%d state-dict keys", n)
	}
	l0.Linear1.Weight.Detach().ZeroInPlace()
	if l1.Linear1.Weight.Abs().Sum().Item() == 0 || layer.Linear1.Weight.Abs().Sum().Item() == 0 {
		t.Error("writing one clone wrote another")
	}

	for name, f := range map[string]func(){
		"KVDims on a layer":    func() { nn.NewTransformerEncoderLayer(8, 2, nn.KVDims(4, 4)) },
		"NormFirst on MHA":     func() { nn.NewMultiheadAttention(8, 2, nn.NormFirst()) },
		"unknown activation":   func() { nn.NewTransformerDecoderLayer(8, 2, nn.WithActivation("tanh")) },
		"heads do not divide":  func() { nn.NewMultiheadAttention(8, 3) },
		"dropout out of range": func() { nn.NewMultiheadAttention(8, 2, nn.WithDropout(1.5)) },
		"decoder Forward":      func() { nn.NewTransformerDecoderLayer(8, 2).Forward(ember.Zeros(ember.Shape{1, 1, 8})) },
		"stack Forward": func() {
			nn.NewTransformerDecoder(nn.NewTransformerDecoderLayer(8, 2), 1, nil).Forward(ember.Zeros(ember.Shape{1, 1, 8}))
		},
		"ModuleList Forward":   func() { nn.NewModuleList().Forward(ember.Zeros(ember.Shape{1})) },
		"negative layers":      func() { nn.NewTransformerEncoder(layer, -1, nil) },
		"negative dec layers":  func() { nn.NewTransformerDecoder(nn.NewTransformerDecoderLayer(8, 2), -1, nil) },
		"encoder of a Linear":  func() { nn.NewTransformerEncoder(nn.NewLinear(2, 2, true), 1, nil) },
		"Dropout 1.5":          func() { nn.NewDropout(1.5) },
		"Dropout NaN":          func() { nn.NewDropout(math.NaN()) },
		"LayerNorm of no dims": func() { nn.NewLayerNorm() },
		"GELU approximation":   func() { nn.NewGELU("bogus") },
		"groups do not divide": func() { nn.NewConv2d(4, 4, 3, nn.Groups(3)) },
		"DataParallel of nil":  func() { nn.NewDataParallel(nil, ember.CPU) },
	} {
		// typed errors, which ember.Try returns
		err := ember.Try(f)
		var ve *ember.ValueError
		var me *nn.ModuleError
		if !errors.As(err, &ve) && !errors.As(err, &me) {
			t.Errorf("%s: %v, want an *ember.ValueError or *nn.ModuleError", name, err)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	if _, err := nn.NewDistributedDataParallel(nil); err == nil || !strings.Contains(err.Error(), "nil module") {
		t.Errorf("NewDistributedDataParallel(nil): %v", err)
	}
	var se *ember.ShapeError
	x := ember.Zeros(ember.Shape{4, 3, 8})
	for name, o := range map[string]nn.MHAOptions{
		"key padding mask": {KeyPaddingMask: ember.Zeros(ember.Shape{4, 3}, ember.Dtype(ember.Bool))},
		"2-D attn mask":    {AttnMask: ember.Zeros(ember.Shape{4, 5})},
		"3-D attn mask":    {AttnMask: ember.Zeros(ember.Shape{3, 4, 4})},
	} {
		err := ember.Try(func() { nn.NewMultiheadAttention(8, 2).Attend(x, x, x, o) })
		if !asShapeError(err, &se) {
			t.Errorf("%s: %v, want a *ShapeError", name, err)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

func asShapeError(err error, se **ember.ShapeError) bool {
	e, ok := err.(*ember.ShapeError)
	*se = e
	return ok
}

// TestTransformerReplica: DataParallel's structural copy of an encoder
// layer (embedded Linear in out_proj, the activation func) computes what the
// layer does.
func TestTransformerReplica(t *testing.T) {
	f := tfFixture(t)
	l := nn.NewTransformerEncoderLayer(8, 2, nn.FeedForward(16), nn.NormFirst(), nn.WithActivation("gelu"), nn.BatchFirst())
	tfLoad(t, l, "enc_pre_gelu_bf", ember.CPU)
	r := nn.ReplicaOn(l, ember.CPU).(*nn.TransformerEncoderLayer)
	m := nn.TransformerMasks{SrcMask: f["enc_pre_gelu_bf.src_mask"], SrcKeyPaddingMask: f["enc_pre_gelu_bf.src_key_padding_mask"]}
	tfNear(t, "replica", r.Encode(f["enc_pre_gelu_bf.x"], m), f["enc_pre_gelu_bf.y"], 1e-5)
}

// TestTransformerOnEmulatedCUDA runs MultiheadAttention, the layers and
// RMSNorm, forward and backward, on the emulated cuda:0 (the CUDA
// backend's kernels built with g++) against PyTorch's values.
func TestTransformerOnEmulatedCUDA(t *testing.T) {
	defer emulatedCUDA(t, "the transformer tests run on it")()
	dev := ember.CUDA(0)
	checkMHA(t, dev)
	checkMHAGrads(t, dev)
	checkEncoderLayers(t, dev, false)
	checkEncoderLayers(t, dev, true)
	checkDecoderLayers(t, dev, false)
	checkDecoderLayers(t, dev, true)
	f := tfFixture(t)
	r := nn.NewRMSNorm(8, 1e-6)
	tfLoad(t, r, "rmsnorm", dev)
	x := leafOn(f["rmsnorm.x"], dev)
	y := r.Forward(x)
	tfNear(t, "rmsnorm cuda:0", y, f["rmsnorm.y"], 1e-5)
	t.Logf("ran on %v", y.Device())
	checkGrads(t, "rmsnorm cuda:0", "rmsnorm", r, y, nil, map[string]*ember.Tensor{"x": x}, 1e-5)
}
