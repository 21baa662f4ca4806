// Package llama is the Llama architecture as Hugging Face's transformers
// defines it (LlamaForCausalLM): pre-norm blocks of RMSNorm, rotary
// position embeddings, grouped-query attention and a SwiGLU MLP, a final
// RMSNorm and a language-model head (tied to the embedding or not).
//
// Load reads a Hugging Face model folder (config.json as LlamaConfig and
// the weights as model.safetensors, a sharded index or pytorch_model.bin)
// with transformers' parameter names; Forward and Step run as in
// models/gpt2, with a kvcache.Cache for incremental decoding. The cache
// holds the key/value heads only (num_key_value_heads), so grouped-query
// attention's memory saving carries over.
package llama

//go:generate go run github.com/emberml/ember/internal/nilguard/gen

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/emberml/ember"
	"github.com/emberml/ember/models/internal/hf"
	"github.com/emberml/ember/models/kvcache"
	"github.com/emberml/ember/nn"
)

// Config is the part of Hugging Face's LlamaConfig the model uses.
type Config struct {
	VocabSize         int `json:"vocab_size"`
	HiddenSize        int `json:"hidden_size"`
	IntermediateSize  int `json:"intermediate_size"`
	NumHiddenLayers   int `json:"num_hidden_layers"`
	NumAttentionHeads int `json:"num_attention_heads"`
	// NumKeyValueHeads is the number of key/value heads (grouped-query
	// attention); 0 means NumAttentionHeads.
	NumKeyValueHeads int `json:"num_key_value_heads"`
	// HeadDim is head_dim; 0 means HiddenSize / NumAttentionHeads.
	HeadDim    int     `json:"head_dim"`
	RMSNormEps float64 `json:"rms_norm_eps"`
	// RopeTheta is the rotary base (default 10000).
	RopeTheta float64 `json:"rope_theta"`
	// MaxPositionEmbeddings bounds a sequence (0: no bound).
	MaxPositionEmbeddings int    `json:"max_position_embeddings"`
	TieWordEmbeddings     bool   `json:"tie_word_embeddings"`
	HiddenAct             string `json:"hidden_act"`
	AttentionBias         bool   `json:"attention_bias"`
	MLPBias               bool   `json:"mlp_bias"`
	// RopeScaling is rope_scaling: absent or null, or the rope_type (or
	// type) "llama3" (Llama 3.1 and 3.2: factor, low_freq_factor,
	// high_freq_factor, original_max_position_embeddings), "linear"
	// (factor) or "default"; the others (dynamic, yarn, longrope) are
	// refused.
	RopeScaling any `json:"rope_scaling"`
	// EOSTokenID is eos_token_id: a number, a list (Llama 3.1's and 3.2's
	// [128001, 128008, 128009]; EOS is its first, EOSIDs all), or nil.
	EOSTokenID any `json:"eos_token_id"`
}

// KVHeads is the number of key/value heads.
func (c Config) KVHeads() int {
	if c.NumKeyValueHeads > 0 {
		return c.NumKeyValueHeads
	}
	return c.NumAttentionHeads
}

// Head is the dimension of one head.
func (c Config) Head() int {
	if c.HeadDim > 0 {
		return c.HeadDim
	}
	return c.HiddenSize / max(1, c.NumAttentionHeads)
}

// MaxDim bounds the sizes in a Config (2³¹; no model comes near it), so
// that the weights' shapes computed from them (heads·head_dim, …) cannot
// overflow before a checkpoint's shapes refute them.
const MaxDim = 1 << 31

// Validate reports a configuration the model cannot be built from.
func (c Config) Validate() error {
	switch {
	case c.VocabSize < 1 || c.HiddenSize < 1 || c.IntermediateSize < 1 || c.NumHiddenLayers < 1 || c.NumAttentionHeads < 1:
		return fmt.Errorf("llama: vocab_size %d, hidden_size %d, intermediate_size %d, num_hidden_layers %d and num_attention_heads %d must all be positive",
			c.VocabSize, c.HiddenSize, c.IntermediateSize, c.NumHiddenLayers, c.NumAttentionHeads)
	case c.NumKeyValueHeads < 0 || c.HeadDim < 0 || c.MaxPositionEmbeddings < 0:
		return fmt.Errorf("llama: num_key_value_heads %d, head_dim %d and max_position_embeddings %d may not be negative",
			c.NumKeyValueHeads, c.HeadDim, c.MaxPositionEmbeddings)
	case max(c.VocabSize, c.HiddenSize, c.IntermediateSize, c.NumAttentionHeads, c.NumKeyValueHeads, c.HeadDim) > MaxDim:
		return fmt.Errorf("llama: vocab_size %d, hidden_size %d, intermediate_size %d, num_attention_heads %d, num_key_value_heads %d and head_dim %d must be at most %d",
			c.VocabSize, c.HiddenSize, c.IntermediateSize, c.NumAttentionHeads, c.NumKeyValueHeads, c.HeadDim, MaxDim)
	case c.HeadDim == 0 && c.HiddenSize%c.NumAttentionHeads != 0:
		return fmt.Errorf("llama: hidden_size %d is not a multiple of num_attention_heads %d", c.HiddenSize, c.NumAttentionHeads)
	case c.NumAttentionHeads%c.KVHeads() != 0:
		return fmt.Errorf("llama: num_attention_heads %d is not a multiple of num_key_value_heads %d", c.NumAttentionHeads, c.KVHeads())
	case c.Head()%2 != 0:
		return fmt.Errorf("llama: the head dimension %d is odd (rotary embeddings rotate pairs)", c.Head())
	case c.HiddenAct != "silu":
		return fmt.Errorf("llama: unknown hidden_act %q (known: silu)", c.HiddenAct)
	case ropeErr(c.RopeScaling) != nil:
		return ropeErr(c.RopeScaling)
	case !(c.RMSNormEps > 0) || !(c.RopeTheta > 0):
		return fmt.Errorf("llama: rms_norm_eps %v and rope_theta %v must be positive", c.RMSNormEps, c.RopeTheta)
	}
	return nil
}

// LoadConfig reads dir/config.json. vocab_size, hidden_size,
// intermediate_size, num_attention_heads, num_hidden_layers and
// rms_norm_eps must be present; num_key_value_heads defaults to
// num_attention_heads, rope_theta to 10000, hidden_act to silu.
func LoadConfig(dir string) (Config, error) {
	var c Config
	raw, err := hf.ReadConfig(dir, &c)
	if err != nil {
		return c, err
	}
	path := filepath.Join(dir, "config.json")
	if err := hf.Require(path, raw, "vocab_size", "hidden_size", "intermediate_size", "num_attention_heads", "num_hidden_layers", "rms_norm_eps"); err != nil {
		return c, fmt.Errorf("llama: %w", err)
	}
	if _, ok := raw["rope_theta"]; !ok {
		c.RopeTheta = 10000
	}
	if _, ok := raw["hidden_act"]; !ok {
		c.HiddenAct = "silu"
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Model is LlamaForCausalLM; LMHead is nil when tied to the embedding.
type Model struct {
	nn.Base
	Config Config
	Model  *Decoder
	LMHead *nn.Linear
}

// Decoder is LlamaModel: embed_tokens, the layers and the final norm.
type Decoder struct {
	nn.Base
	EmbedTokens *nn.Embedding
	Layers      *nn.Sequential
	Norm        *nn.RMSNorm
	layers      []*Layer
	cfg         Config
	invFreq     []float64
}

// Layer is LlamaDecoderLayer.
type Layer struct {
	nn.Base
	InputLayernorm         *nn.RMSNorm
	SelfAttn               *Attention
	PostAttentionLayernorm *nn.RMSNorm
	MLP                    *MLP
}

// Attention is LlamaAttention: q, k, v and o projections with rotary
// embeddings on q and k and grouped key/value heads.
type Attention struct {
	nn.Base
	QProj, KProj, VProj, OProj *nn.Linear
	heads, kvHeads, dim        int
	invFreq                    []float64
}

// MLP is down_proj(silu(gate_proj(x)) · up_proj(x)).
type MLP struct {
	nn.Base
	GateProj, UpProj, DownProj *nn.Linear
}

type source func(name string, shape []int, init func([]int) *ember.Tensor) *ember.Tensor

func normal(std float64) func([]int) *ember.Tensor {
	return func(s []int) *ember.Tensor { return ember.Randn(s).MulScalar(std) }
}

func newLinear(src source, name string, in, out int, bias bool) *nn.Linear {
	l := &nn.Linear{In: in, Out: out}
	l.Init(l)
	l.Weight = src(name+".weight", []int{out, in}, normal(0.02))
	if bias {
		l.Bias = src(name+".bias", []int{out}, func(s []int) *ember.Tensor { return ember.Zeros(s) })
	}
	l.RegisterParameter("weight", &l.Weight)
	l.RegisterParameter("bias", &l.Bias)
	return l
}

func newRMSNorm(src source, name string, n int, eps float64) *nn.RMSNorm {
	r := &nn.RMSNorm{Dim: n, Eps: eps}
	r.Init(r)
	r.Weight = src(name+".weight", []int{n}, func(s []int) *ember.Tensor { return ember.Ones(s) })
	r.RegisterParameter("weight", &r.Weight)
	return r
}

func build(c Config, src source) *Model {
	m := &Model{Config: c}
	m.Init(m)
	d := &Decoder{cfg: c}
	d.Init(d)
	e, hd := c.HiddenSize, c.Head()
	d.invFreq = make([]float64, hd/2)
	for i := range d.invFreq {
		// as transformers computes it, in float32
		d.invFreq[i] = float64(float32(1 / math.Pow(c.RopeTheta, float64(float32(2*i)/float32(hd)))))
	}
	scaleInvFreq(d.invFreq, c.RopeScaling)
	d.EmbedTokens = &nn.Embedding{Num: c.VocabSize, Dim: e, PaddingIdx: -1}
	d.EmbedTokens.Init(d.EmbedTokens)
	d.EmbedTokens.Weight = src("model.embed_tokens.weight", []int{c.VocabSize, e}, normal(0.02))
	d.EmbedTokens.RegisterParameter("weight", &d.EmbedTokens.Weight)
	layers := make([]nn.Module, c.NumHiddenLayers)
	for i := range layers {
		p := fmt.Sprintf("model.layers.%d.", i)
		l := &Layer{}
		l.Init(l)
		a := &Attention{heads: c.NumAttentionHeads, kvHeads: c.KVHeads(), dim: hd}
		a.Init(a)
		a.QProj = newLinear(src, p+"self_attn.q_proj", e, a.heads*hd, c.AttentionBias)
		a.KProj = newLinear(src, p+"self_attn.k_proj", e, a.kvHeads*hd, c.AttentionBias)
		a.VProj = newLinear(src, p+"self_attn.v_proj", e, a.kvHeads*hd, c.AttentionBias)
		a.OProj = newLinear(src, p+"self_attn.o_proj", a.heads*hd, e, c.AttentionBias)
		for _, x := range []struct {
			n string
			l *nn.Linear
		}{{"q_proj", a.QProj}, {"k_proj", a.KProj}, {"v_proj", a.VProj}, {"o_proj", a.OProj}} {
			a.RegisterModule(x.n, x.l)
		}
		f := &MLP{}
		f.Init(f)
		f.GateProj = newLinear(src, p+"mlp.gate_proj", e, c.IntermediateSize, c.MLPBias)
		f.UpProj = newLinear(src, p+"mlp.up_proj", e, c.IntermediateSize, c.MLPBias)
		f.DownProj = newLinear(src, p+"mlp.down_proj", c.IntermediateSize, e, c.MLPBias)
		f.RegisterModule("gate_proj", f.GateProj)
		f.RegisterModule("up_proj", f.UpProj)
		f.RegisterModule("down_proj", f.DownProj)
		l.InputLayernorm = newRMSNorm(src, p+"input_layernorm", e, c.RMSNormEps)
		l.SelfAttn = a
		l.PostAttentionLayernorm = newRMSNorm(src, p+"post_attention_layernorm", e, c.RMSNormEps)
		l.MLP = f
		l.RegisterModule("input_layernorm", l.InputLayernorm)
		l.RegisterModule("self_attn", a)
		l.RegisterModule("post_attention_layernorm", l.PostAttentionLayernorm)
		l.RegisterModule("mlp", f)
		layers[i] = l
		d.layers = append(d.layers, l)
	}
	d.Layers = nn.NewSequential(layers...)
	d.Norm = newRMSNorm(src, "model.norm", e, c.RMSNormEps)
	d.RegisterModule("embed_tokens", d.EmbedTokens)
	d.RegisterModule("layers", d.Layers)
	d.RegisterModule("norm", d.Norm)
	for _, l := range d.layers {
		l.SelfAttn.invFreq = d.invFreq
	}
	m.Model = d
	m.RegisterModule("model", d)
	if !c.TieWordEmbeddings {
		m.LMHead = newLinear(src, "lm_head", e, c.VocabSize, false)
		m.RegisterModule("lm_head", m.LMHead)
	}
	return m
}

// New returns a randomly initialised model (weights N(0, 0.02), norms 1)
// on the CPU; it panics on a config that does not Validate.
func New(c Config) *Model {
	if err := c.Validate(); err != nil {
		panic(err)
	}
	return build(c, func(_ string, shape []int, init func([]int) *ember.Tensor) *ember.Tensor { return init(shape) })
}

// An Option changes how Load and FromStateDict build the model.
type Option func(*options)

type options struct{ dtype ember.DType }

// WithDType loads the parameters in dt, as from_pretrained's torch_dtype:
// Float32 (the default), BFloat16 or Float16. A checkpoint stored in dt is
// kept as it is, not widened; others are rounded to it. The model then
// runs in dt as transformers' LlamaForCausalLM does: RMSNorm computes in
// float32 and rounds before the weight, the rotary tables are rounded to
// dt, the matrix products and attention compute in float32 from the
// rounded operands and round once, and Step returns float32 logits.
func WithDType(dt ember.DType) Option { return func(o *options) { o.dtype = dt } }

func makeOptions(opts []Option) (options, error) {
	o := options{dtype: ember.Float32}
	for _, f := range opts {
		f(&o)
	}
	return o, hf.CheckDType("llama", o.dtype)
}

// Load reads the model folder dir and returns the model on dev, in
// evaluation mode; any problem (config, a missing, extra or misshapen
// weight) is an error and no model is returned.
func Load(dir string, dev ember.Device, opts ...Option) (*Model, error) {
	if _, err := makeOptions(opts); err != nil {
		return nil, err
	}
	c, err := LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	sd, path, err := hf.LoadWeights(dir)
	if err != nil {
		return nil, err
	}
	return FromStateDict(c, sd, path, dev, opts...)
}

// FromStateDict builds the model of config c from a state dict with
// transformers' names on dev; path names the source in errors.
func FromStateDict(c Config, sd map[string]*ember.Tensor, path string, dev ember.Device, opts ...Option) (*Model, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	w := hf.NewWeights(path, sd)
	w.SetDType(o.dtype)
	w.Skip(func(k string) bool { return strings.HasSuffix(k, ".rotary_emb.inv_freq") }) // a buffer older versions saved
	if c.TieWordEmbeddings {
		w.Skip(func(k string) bool { return k == "lm_head.weight" })
	}
	// a layer's two norms, q, k, v and o, gate, up and down
	if err := w.CheckLayers("num_hidden_layers", c.NumHiddenLayers, 9); err != nil {
		return nil, fmt.Errorf("llama: %w", err)
	}
	// the rotary table has a value per pair of a head's dims: a hostile
	// head_dim (or hidden_size) must not size it before the weights refute it
	total := 0
	for _, t := range sd {
		total += t.Shape().NumElements()
	}
	if c.Head() > total {
		return nil, fmt.Errorf("llama: %s: the head dimension %d is more than the %d values the weights hold", path, c.Head(), total)
	}
	m := build(c, func(name string, shape []int, _ func([]int) *ember.Tensor) *ember.Tensor {
		if t := w.Take(name, shape...); t != nil {
			return t
		}
		// an error is recorded and the model dropped: a stand-in of no
		// size (the config's shape may not even have a size)
		return ember.Zeros(ember.Shape{0}, ember.On(ember.Meta), ember.Dtype(o.dtype))
	})
	if err := w.Err(); err != nil {
		return nil, fmt.Errorf("llama: %w", err)
	}
	m.To(dev)
	m.Eval()
	return m, nil
}

// NewCache returns an empty KV cache for the model.
func (m *Model) NewCache() *kvcache.Cache {
	nn.CheckNil(m, "NewCache")
	return kvcache.New(m.Config.NumHiddenLayers)
}

// ContextLength is max_position_embeddings (0: no bound).
func (m *Model) ContextLength() int {
	nn.CheckNil(m, "ContextLength")
	return m.Config.MaxPositionEmbeddings
}

// EOS is eos_token_id (the first, for a list), or -1.
func (m *Model) EOS() int {
	nn.CheckNil(m, "EOS")
	return hf.FirstID(m.Config.EOSTokenID)
}

// EOSIDs is every id of eos_token_id (none for nil): generation stops at
// any of them, as transformers' generate does with a list; pass it as
// generate.Options.EOS.
func (m *Model) EOSIDs() []int {
	nn.CheckNil(m, "EOSIDs")
	return hf.IDs(m.Config.EOSTokenID)
}

// Forward maps ids [B, T] to logits [B, T, vocab] (causal).
func (m *Model) Forward(ids *ember.Tensor) *ember.Tensor {
	nn.CheckNil(m, "Forward")
	return m.ForwardCache(ids, nil)
}

// ForwardCache runs ids [B, T] after the positions c holds (c nil: none),
// appending their keys and values, and returns their logits [B, T, vocab].
func (m *Model) ForwardCache(ids *ember.Tensor, c *kvcache.Cache) *ember.Tensor {
	nn.CheckNil(m, "ForwardCache")
	return m.head(m.Model.hidden(ids, c))
}

// Step returns the logits of the last of ids' positions, [B, vocab], in
// Float32 whatever the model's dtype.
func (m *Model) Step(ids *ember.Tensor, c *kvcache.Cache) *ember.Tensor {
	nn.CheckNil(m, "Step")
	stepIDs(ids)
	h := m.Model.hidden(ids, c)
	return m.head(h.Narrow(1, h.Shape()[1]-1, 1)).Squeeze(1).Cast(ember.Float32)
}

// DType is the dtype of the model's parameters (WithDType).
func (m *Model) DType() ember.DType {
	nn.CheckNil(m, "DType")
	return m.Model.EmbedTokens.Weight.DType()
}

func (m *Model) head(h *ember.Tensor) *ember.Tensor {
	w := m.Model.EmbedTokens.Weight
	if m.LMHead != nil {
		w = m.LMHead.Weight
	}
	s := h.Shape()
	return ember.Linear(h.Reshape(-1, s[2]), w, nil).Reshape(s[0], s[1], w.Shape()[0])
}

// Forward maps ids [B, T] to the hidden states after the final norm.
func (d *Decoder) Forward(ids *ember.Tensor) *ember.Tensor {
	nn.CheckNil(d, "Forward")
	return d.hidden(ids, nil)
}

func (d *Decoder) hidden(ids *ember.Tensor, c *kvcache.Cache) *ember.Tensor {
	if ids.Dim() != 2 {
		panic(&ember.ShapeError{Op: "llama", Msg: fmt.Sprintf("ids must be [batch, tokens], got %v", ids.Shape())})
	}
	past := 0
	if c != nil {
		past = c.Len()
	}
	t := ids.Shape()[1]
	if n := d.cfg.MaxPositionEmbeddings; n > 0 && past+t > n {
		panic(&ember.ShapeError{Op: "llama", Msg: fmt.Sprintf("%d positions (%d cached + %d new) exceed the context of %d (max_position_embeddings)", past+t, past, t, n)})
	}
	dev := ids.Device()
	cos, sin := rotary(d.invFreq, past, t, dev)
	if dt := d.EmbedTokens.Weight.DType(); dt != ember.Float32 {
		cos, sin = cos.Cast(dt), sin.Cast(dt) // transformers: cos.to(x.dtype)
	}
	var mask *ember.Tensor
	if past > 0 && t > 1 {
		s := past + t
		b := make([]bool, t*s)
		for i := range t {
			for j := 0; j <= past+i; j++ {
				b[i*s+j] = true
			}
		}
		mask = ember.FromSlice(b, ember.Shape{t, s}, ember.On(dev))
	}
	x := d.EmbedTokens.Forward(ids)
	for i, l := range d.layers {
		x = x.Add(l.SelfAttn.forward(l.InputLayernorm.Forward(x), c, i, cos, sin, mask))
		x = x.Add(l.MLP.Forward(l.PostAttentionLayernorm.Forward(x)))
	}
	return d.Norm.Forward(x)
}

// rotary returns cos and sin [T, D] of positions past … past+T-1
// (transformers' layout: the frequencies repeated, cat(freqs, freqs)).
func rotary(invFreq []float64, past, t int, dev ember.Device) (cos, sin *ember.Tensor) {
	h := len(invFreq)
	cs, sn := make([]float32, t*2*h), make([]float32, t*2*h)
	for p := range t {
		for i, f := range invFreq {
			a := float64(float32(float64(past+p) * f))
			c, s := float32(math.Cos(a)), float32(math.Sin(a))
			cs[p*2*h+i], cs[p*2*h+h+i] = c, c
			sn[p*2*h+i], sn[p*2*h+h+i] = s, s
		}
	}
	return ember.FromSlice(cs, ember.Shape{t, 2 * h}, ember.On(dev)), ember.FromSlice(sn, ember.Shape{t, 2 * h}, ember.On(dev))
}

// rope applies the rotation to x [B, H, T, D]: x·cos + rotate_half(x)·sin.
func rope(x, cos, sin *ember.Tensor) *ember.Tensor {
	d := x.Shape()[3]
	x1, x2 := x.Narrow(3, 0, d/2), x.Narrow(3, d/2, d/2)
	rot := ember.Cat([]*ember.Tensor{x2.Neg(), x1}, 3)
	return x.Mul(cos).Add(rot.Mul(sin))
}

// Forward is causal self-attention over x [B, T, hidden] without a
// cache, at positions 0 … T-1.
func (a *Attention) Forward(x *ember.Tensor) *ember.Tensor {
	nn.CheckNil(a, "Forward")
	cos, sin := rotary(a.invFreq, 0, x.Shape()[1], x.Device())
	if dt := x.DType(); dt.IsHalf() {
		cos, sin = cos.Cast(dt), sin.Cast(dt)
	}
	return a.forward(x, nil, 0, cos, sin, nil)
}

// Forward is the layer without a cache, at positions 0 … T-1.
func (l *Layer) Forward(x *ember.Tensor) *ember.Tensor {
	nn.CheckNil(l, "Forward")
	x = x.Add(l.SelfAttn.Forward(l.InputLayernorm.Forward(x)))
	return x.Add(l.MLP.Forward(l.PostAttentionLayernorm.Forward(x)))
}

func (a *Attention) forward(x *ember.Tensor, c *kvcache.Cache, layer int, cos, sin, mask *ember.Tensor) *ember.Tensor {
	s := x.Shape()
	b, t := s[0], s[1]
	heads := func(l *nn.Linear, n int) *ember.Tensor { return l.Forward(x).Reshape(b, t, n, a.dim).Transpose(1, 2) }
	q := rope(heads(a.QProj, a.heads), cos, sin)
	k := rope(heads(a.KProj, a.kvHeads), cos, sin)
	v := heads(a.VProj, a.kvHeads)
	opt := ember.AttentionOptions{Causal: true}
	if c != nil {
		past := c.Len()
		k, v = c.Append(layer, k, v)
		if past > 0 {
			opt = ember.AttentionOptions{Mask: mask}
		}
	}
	rep := a.heads / a.kvHeads
	if rep > 1 {
		// grouped-query attention: each key/value head serves rep query
		// heads, by broadcasting (no copies of k and v)
		q = q.Reshape(b, a.kvHeads, rep, t, a.dim)
		k, v = k.Unsqueeze(2), v.Unsqueeze(2)
		if opt.Mask != nil {
			opt.Mask = opt.Mask.Unsqueeze(0)
		}
	}
	y := ember.ScaledDotProductAttention(q, k, v, opt).Reshape(b, a.heads, t, a.dim)
	return a.OProj.Forward(y.Transpose(1, 2).Reshape(b, t, a.heads*a.dim))
}

// Forward is the SwiGLU MLP.
func (f *MLP) Forward(x *ember.Tensor) *ember.Tensor {
	nn.CheckNil(f, "Forward")
	return f.DownProj.Forward(f.GateProj.Forward(x).SiLU().Mul(f.UpProj.Forward(x)))
}

// stepIDs checks that Step has a token to give the logits of.
func stepIDs(ids *ember.Tensor) {
	if ids != nil && ids.Dim() == 2 && ids.Shape()[1] == 0 {
		panic(&ember.ShapeError{Op: "llama.Step", Msg: fmt.Sprintf("ids %v: Step needs at least one new token (it returns the logits of the last)", ids.Shape())})
	}
}

// ropeScaling is rope_scaling's parameters.
type ropeScaling struct {
	kind                                        string
	factor, lowFreqFactor, highFreqFactor, orig float64
}

// parseRope reads rope_scaling (nil: none).
func parseRope(v any) (*ropeScaling, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("llama: rope_scaling %v is not an object", v)
	}
	kind, _ := m["rope_type"].(string)
	if kind == "" {
		kind, _ = m["type"].(string)
	}
	num := func(k string) (float64, error) {
		f, ok := m[k].(float64)
		if !ok || !(f > 0) {
			return 0, fmt.Errorf("llama: rope_scaling %q needs a positive %s, got %v", kind, k, m[k])
		}
		return f, nil
	}
	r := &ropeScaling{kind: kind}
	var err error
	switch kind {
	case "default":
		return nil, nil
	case "linear":
		r.factor, err = num("factor")
	case "llama3":
		for _, f := range []struct {
			k string
			p *float64
		}{{"factor", &r.factor}, {"low_freq_factor", &r.lowFreqFactor}, {"high_freq_factor", &r.highFreqFactor}, {"original_max_position_embeddings", &r.orig}} {
			if *f.p, err = num(f.k); err != nil {
				return nil, err
			}
		}
		if r.highFreqFactor <= r.lowFreqFactor {
			return nil, fmt.Errorf("llama: rope_scaling llama3's high_freq_factor %v must exceed low_freq_factor %v", r.highFreqFactor, r.lowFreqFactor)
		}
	default:
		return nil, fmt.Errorf("llama: rope_scaling %v is not supported (rope_type llama3, linear or default)", v)
	}
	return r, err
}

// ropeErr is parseRope's error.
func ropeErr(v any) error {
	_, err := parseRope(v)
	return err
}

// scaleInvFreq applies rope_scaling to the rotary frequencies as
// transformers' modeling_rope_utils does (in float32): "linear" divides
// them by factor; "llama3" divides those of wavelength above
// original_max_position_embeddings/low_freq_factor by factor, keeps those
// below original/high_freq_factor, and blends the ones between.
func scaleInvFreq(invFreq []float64, v any) {
	r, _ := parseRope(v) // Validate has checked it
	if r == nil {
		return
	}
	f32 := func(x float64) float64 { return float64(float32(x)) }
	for i, f := range invFreq {
		switch r.kind {
		case "linear":
			invFreq[i] = f32(f / r.factor)
		case "llama3":
			lowWavelen, highWavelen := r.orig/r.lowFreqFactor, r.orig/r.highFreqFactor
			wavelen := f32(2 * math.Pi / f)
			scaled := f
			if wavelen > lowWavelen {
				scaled = f32(f / r.factor)
			}
			if wavelen >= highWavelen && wavelen <= lowWavelen {
				smooth := f32((f32(r.orig/wavelen) - r.lowFreqFactor) / (r.highFreqFactor - r.lowFreqFactor))
				scaled = f32(f32(f32(1-smooth)*scaled/r.factor) + f32(smooth*scaled))
			}
			invFreq[i] = scaled
		}
	}
}
