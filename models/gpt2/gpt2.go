// Package gpt2 is OpenAI's GPT-2 as Hugging Face's transformers defines it
// (GPT2LMHeadModel): token and position embeddings, pre-norm blocks of
// causal self-attention and an MLP, a final LayerNorm and a language-model
// head tied to the token embedding.
//
// Load reads a Hugging Face model folder: config.json and the weights as
// model.safetensors, a sharded model.safetensors.index.json, or
// pytorch_model.bin, with or without the "transformer." key prefix. The
// parameters keep Hugging Face's names and layout (Conv1D weights are
// [in, out]), so StateDict round-trips with save_pretrained's files. New
// builds a randomly initialised model of any shape (nanoGPT's
// initialisation), which is what `ember train --model gpt` trains.
//
// Forward runs a batch of token ids to logits; with a kvcache.Cache it
// runs only the new tokens, attending to the keys and values the cache
// holds, for incremental decoding (models/generate).
package gpt2

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

// Config is the part of Hugging Face's GPT2Config that the model uses
// (config.json's field names).
type Config struct {
	VocabSize  int `json:"vocab_size"`
	NPositions int `json:"n_positions"`
	NEmbd      int `json:"n_embd"`
	NLayer     int `json:"n_layer"`
	NHead      int `json:"n_head"`
	// NInner is the MLP's hidden width; 0 means 4·NEmbd (config.json's null).
	NInner int `json:"n_inner"`
	// Activation is activation_function: gelu_new (the default),
	// gelu_pytorch_tanh, gelu_fast (all three the tanh approximation of
	// GELU), gelu, relu or silu.
	Activation   string  `json:"activation_function"`
	LayerNormEps float64 `json:"layer_norm_epsilon"`
	// TieWordEmbeddings shares lm_head's weight with wte (the default).
	TieWordEmbeddings *bool `json:"tie_word_embeddings"`
	// EOSTokenID is eos_token_id: a number, a list of numbers, or nil;
	// generation stops there (see EOSIDs).
	EOSTokenID any `json:"eos_token_id"`

	ScaleAttnByInverseLayerIdx bool `json:"scale_attn_by_inverse_layer_idx"`
	ReorderAndUpcastAttn       bool `json:"reorder_and_upcast_attn"`
	// ScaleAttnWeights is scale_attn_weights (nil: true, the default);
	// false, attention without the 1/√d, is not supported.
	ScaleAttnWeights *bool `json:"scale_attn_weights"`
}

// Small is GPT-2 small's configuration (124M parameters).
func Small() Config {
	return Config{VocabSize: 50257, NPositions: 1024, NEmbd: 768, NLayer: 12, NHead: 12, Activation: "gelu_new", LayerNormEps: 1e-5}
}

// activations maps activation_function to the op.
var activations = map[string]func(*ember.Tensor) *ember.Tensor{
	"gelu_new":          (*ember.Tensor).GELUTanh,
	"gelu_pytorch_tanh": (*ember.Tensor).GELUTanh,
	"gelu_fast":         (*ember.Tensor).GELUTanh,
	"gelu":              ember.GELU,
	"relu":              (*ember.Tensor).ReLU,
	"silu":              (*ember.Tensor).SiLU,
	"swish":             (*ember.Tensor).SiLU,
}

// Tied reports whether lm_head shares wte's weight.
func (c Config) Tied() bool { return c.TieWordEmbeddings == nil || *c.TieWordEmbeddings }

// Inner is the MLP's hidden width.
func (c Config) Inner() int {
	if c.NInner > 0 {
		return c.NInner
	}
	return 4 * c.NEmbd
}

// MaxDim bounds the sizes in a Config (2³¹; no model comes near it), so
// that the weights' shapes computed from them (3·n_embd, …) cannot
// overflow before a checkpoint's shapes refute them.
const MaxDim = 1 << 31

// Validate reports a configuration the model cannot be built from.
func (c Config) Validate() error {
	switch {
	case c.VocabSize < 1 || c.NPositions < 1 || c.NEmbd < 1 || c.NLayer < 1 || c.NHead < 1:
		return fmt.Errorf("gpt2: vocab_size %d, n_positions %d, n_embd %d, n_layer %d and n_head %d must all be positive",
			c.VocabSize, c.NPositions, c.NEmbd, c.NLayer, c.NHead)
	case max(c.VocabSize, c.NPositions, c.NEmbd, c.NInner) > MaxDim:
		return fmt.Errorf("gpt2: vocab_size %d, n_positions %d, n_embd %d and n_inner %d must be at most %d",
			c.VocabSize, c.NPositions, c.NEmbd, c.NInner, MaxDim)
	case c.NEmbd%c.NHead != 0:
		return fmt.Errorf("gpt2: n_embd %d is not a multiple of n_head %d", c.NEmbd, c.NHead)
	case c.ScaleAttnByInverseLayerIdx || c.ReorderAndUpcastAttn:
		return fmt.Errorf("gpt2: scale_attn_by_inverse_layer_idx and reorder_and_upcast_attn are not supported")
	case c.ScaleAttnWeights != nil && !*c.ScaleAttnWeights:
		return fmt.Errorf("gpt2: scale_attn_weights false (attention scores not divided by √head_dim) is not supported")
	}
	if _, ok := activations[c.Activation]; !ok {
		return fmt.Errorf("gpt2: unknown activation_function %q (known: gelu_new, gelu_pytorch_tanh, gelu_fast, gelu, relu, silu)", c.Activation)
	}
	return nil
}

// LoadConfig reads dir/config.json. vocab_size, n_positions (or n_ctx),
// n_embd, n_layer and n_head must be present; activation_function
// defaults to gelu_new and layer_norm_epsilon to 1e-5, as in transformers.
func LoadConfig(dir string) (Config, error) {
	var c Config
	raw, err := hf.ReadConfig(dir, &c)
	if err != nil {
		return c, err
	}
	if _, ok := raw["n_positions"]; !ok {
		if _, ok := raw["n_ctx"]; ok {
			var ctx struct {
				N int `json:"n_ctx"`
			}
			hf.ReadConfig(dir, &ctx)
			c.NPositions = ctx.N
			raw["n_positions"] = raw["n_ctx"]
		}
	}
	path := filepath.Join(dir, "config.json")
	if err := hf.Require(path, raw, "vocab_size", "n_positions", "n_embd", "n_layer", "n_head"); err != nil {
		return c, fmt.Errorf("gpt2: %w", err)
	}
	if _, ok := raw["activation_function"]; !ok {
		c.Activation = "gelu_new"
	}
	if _, ok := raw["layer_norm_epsilon"]; !ok {
		c.LayerNormEps = 1e-5
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Model is GPT2LMHeadModel. Its parameters are named as transformers
// names them ("transformer.h.0.attn.c_attn.weight", ...); LMHead is nil
// when the head is tied to the token embedding.
type Model struct {
	nn.Base
	Config      Config
	Transformer *Transformer
	LMHead      *nn.Linear
}

// Transformer is GPT2Model: the embeddings, the blocks and ln_f.
type Transformer struct {
	nn.Base
	WTE, WPE *nn.Embedding
	H        *nn.Sequential
	LnF      *nn.LayerNorm
	blocks   []*Block
	nPos     int
}

// Forward maps ids [B, T] to the hidden states [B, T, n_embd] after ln_f.
func (t *Transformer) Forward(ids *ember.Tensor) *ember.Tensor {
	nn.CheckNil(t, "Forward")
	return t.hidden(ids, nil)
}

// Block is one GPT-2 block: x + attn(ln_1(x)), then + mlp(ln_2(·)).
type Block struct {
	nn.Base
	Ln1  *nn.LayerNorm
	Attn *Attention
	Ln2  *nn.LayerNorm
	MLP  *MLP
}

// Attention is GPT-2's causal self-attention: c_attn makes q, k and v,
// c_proj mixes the heads.
type Attention struct {
	nn.Base
	CAttn, CProj *Conv1D
	NHead        int
}

// MLP is c_proj(act(c_fc(x))).
type MLP struct {
	nn.Base
	CFc, CProj *Conv1D
	act        func(*ember.Tensor) *ember.Tensor
}

// Conv1D is transformers' Conv1D: y = x·W + b with W [in, out] (the
// transpose of a Linear's).
type Conv1D struct {
	nn.Base
	Weight, Bias *ember.Tensor
}

// source hands out the model's tensors by name: new random ones (New) or
// a checkpoint's (Load).
type source func(name string, shape []int, init func(shape []int) *ember.Tensor) *ember.Tensor

func normal(std float64) func([]int) *ember.Tensor {
	return func(s []int) *ember.Tensor { return ember.Randn(s).MulScalar(std) }
}
func constant(v float64) func([]int) *ember.Tensor {
	return func(s []int) *ember.Tensor { return ember.Full(s, v) }
}

func newConv1D(src source, name string, in, out int, std float64) *Conv1D {
	c := &Conv1D{}
	c.Init(c)
	c.Weight = src(name+".weight", []int{in, out}, normal(std))
	c.Bias = src(name+".bias", []int{out}, constant(0))
	c.RegisterParameter("weight", &c.Weight)
	c.RegisterParameter("bias", &c.Bias)
	return c
}

// Forward is x·W + b over the last dim.
func (c *Conv1D) Forward(x *ember.Tensor) *ember.Tensor {
	nn.CheckNil(c, "Forward")
	s := x.Shape()
	in, out := c.Weight.Shape()[0], c.Weight.Shape()[1]
	x2 := x.Reshape(-1, in)
	y := ember.Linear(x2, c.Weight.T(), c.Bias)
	return y.Reshape(append(append([]int(nil), s[:len(s)-1]...), out)...)
}

func newLayerNorm(src source, name string, n int, eps float64) *nn.LayerNorm {
	l := &nn.LayerNorm{Shape: ember.Shape{n}, Eps: eps}
	l.Init(l)
	l.Weight = src(name+".weight", []int{n}, constant(1))
	l.Bias = src(name+".bias", []int{n}, constant(0))
	l.RegisterParameter("weight", &l.Weight)
	l.RegisterParameter("bias", &l.Bias)
	return l
}

func newEmbedding(src source, name string, num, dim int) *nn.Embedding {
	e := &nn.Embedding{Num: num, Dim: dim, PaddingIdx: -1}
	e.Init(e)
	e.Weight = src(name+".weight", []int{num, dim}, normal(0.02))
	e.RegisterParameter("weight", &e.Weight)
	return e
}

func build(c Config, src source) *Model {
	m := &Model{Config: c}
	m.Init(m)
	t := &Transformer{nPos: c.NPositions}
	t.Init(t)
	t.WTE = newEmbedding(src, "transformer.wte", c.VocabSize, c.NEmbd)
	t.WPE = newEmbedding(src, "transformer.wpe", c.NPositions, c.NEmbd)
	projStd := 0.02 / math.Sqrt(2*float64(c.NLayer))
	layers := make([]nn.Module, c.NLayer)
	for i := range c.NLayer {
		p := fmt.Sprintf("transformer.h.%d.", i)
		b := &Block{}
		b.Init(b)
		b.Ln1 = newLayerNorm(src, p+"ln_1", c.NEmbd, c.LayerNormEps)
		b.Attn = &Attention{NHead: c.NHead}
		b.Attn.Init(b.Attn)
		b.Attn.CAttn = newConv1D(src, p+"attn.c_attn", c.NEmbd, 3*c.NEmbd, 0.02)
		b.Attn.CProj = newConv1D(src, p+"attn.c_proj", c.NEmbd, c.NEmbd, projStd)
		b.Attn.RegisterModule("c_attn", b.Attn.CAttn)
		b.Attn.RegisterModule("c_proj", b.Attn.CProj)
		b.Ln2 = newLayerNorm(src, p+"ln_2", c.NEmbd, c.LayerNormEps)
		b.MLP = &MLP{act: activations[c.Activation]}
		b.MLP.Init(b.MLP)
		b.MLP.CFc = newConv1D(src, p+"mlp.c_fc", c.NEmbd, c.Inner(), 0.02)
		b.MLP.CProj = newConv1D(src, p+"mlp.c_proj", c.Inner(), c.NEmbd, projStd)
		b.MLP.RegisterModule("c_fc", b.MLP.CFc)
		b.MLP.RegisterModule("c_proj", b.MLP.CProj)
		b.RegisterModule("ln_1", b.Ln1)
		b.RegisterModule("attn", b.Attn)
		b.RegisterModule("ln_2", b.Ln2)
		b.RegisterModule("mlp", b.MLP)
		layers[i] = b
		t.blocks = append(t.blocks, b)
	}
	t.H = nn.NewSequential(layers...)
	t.LnF = newLayerNorm(src, "transformer.ln_f", c.NEmbd, c.LayerNormEps)
	t.RegisterModule("wte", t.WTE)
	t.RegisterModule("wpe", t.WPE)
	t.RegisterModule("h", t.H)
	t.RegisterModule("ln_f", t.LnF)
	m.Transformer = t
	m.RegisterModule("transformer", t)
	if !c.Tied() {
		h := &nn.Linear{In: c.NEmbd, Out: c.VocabSize}
		h.Init(h)
		h.Weight = src("lm_head.weight", []int{c.VocabSize, c.NEmbd}, normal(0.02))
		h.RegisterParameter("weight", &h.Weight)
		h.RegisterParameter("bias", &h.Bias)
		m.LMHead = h
		m.RegisterModule("lm_head", h)
	}
	return m
}

// New returns a randomly initialised model on the CPU, as nanoGPT
// initialises GPT-2: weights N(0, 0.02), the residual projections
// N(0, 0.02/√(2·n_layer)), biases 0, LayerNorms 1 and 0 (seeded by
// ember.ManualSeed). It panics on a config that does not Validate.
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
// Float32 (the default), BFloat16 or Float16. A checkpoint stored in dt
// (Hugging Face's are often bf16 or fp16) is kept as it is, not widened;
// others are rounded to it. The model then runs in dt: the matrix products
// and attention compute in float32 from the rounded operands and round
// once, LayerNorm and the softmax compute in float32, and Step returns
// float32 logits for sampling (Forward's are in dt, as transformers').
func WithDType(dt ember.DType) Option { return func(o *options) { o.dtype = dt } }

func makeOptions(opts []Option) (options, error) {
	o := options{dtype: ember.Float32}
	for _, f := range opts {
		f(&o)
	}
	return o, hf.CheckDType("gpt2", o.dtype)
}

// Load reads the model folder dir (config.json and the weights; see the
// package comment) and returns the model on dev, in evaluation mode. Any
// problem (a bad config, a missing or extra weight, a weight of the wrong
// shape, naming the key and both shapes) is an error and no model is
// returned.
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
// transformers' names (the "transformer." prefix optional) on dev; path
// names the source in errors.
func FromStateDict(c Config, sd map[string]*ember.Tensor, path string, dev ember.Device, opts ...Option) (*Model, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	w := hf.NewWeights(path, strip(sd))
	w.SetDType(o.dtype)
	// buffers older transformers saved: the causal mask and its fill value
	w.Skip(func(k string) bool {
		return strings.HasSuffix(k, ".attn.bias") || strings.HasSuffix(k, ".attn.masked_bias")
	})
	if c.Tied() {
		w.Skip(func(k string) bool { return k == "lm_head.weight" }) // tied: the same tensor as wte
	}
	// a block's ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj:
	// a weight and a bias each
	if err := w.CheckLayers("n_layer", c.NLayer, 12); err != nil {
		return nil, fmt.Errorf("gpt2: %w", err)
	}
	m := build(c, func(name string, shape []int, _ func([]int) *ember.Tensor) *ember.Tensor {
		t := w.Take(name, shape...)
		if t == nil {
			// an error is recorded and the model dropped: a stand-in of no
			// size (the config's shape may not even have a size, n_embd
			// 10¹² making [10¹², 3·10¹²])
			return ember.Zeros(ember.Shape{0}, ember.On(ember.Meta), ember.Dtype(o.dtype))
		}
		return t
	})
	if err := w.Err(); err != nil {
		return nil, fmt.Errorf("gpt2: %w", err)
	}
	m.To(dev)
	m.Eval()
	return m, nil
}

// strip gives every GPT2Model key the "transformer." prefix.
func strip(sd map[string]*ember.Tensor) map[string]*ember.Tensor {
	out := make(map[string]*ember.Tensor, len(sd))
	for k, v := range sd {
		if !strings.HasPrefix(k, "transformer.") && !strings.HasPrefix(k, "lm_head.") {
			k = "transformer." + k
		}
		out[k] = v
	}
	return out
}

// NewCache returns an empty KV cache for the model.
func (m *Model) NewCache() *kvcache.Cache {
	nn.CheckNil(m, "NewCache")
	return kvcache.New(m.Config.NLayer)
}

// ContextLength is n_positions, the most tokens a sequence may have.
func (m *Model) ContextLength() int {
	nn.CheckNil(m, "ContextLength")
	return m.Config.NPositions
}

// EOS is eos_token_id (the first, for a list), or -1.
func (m *Model) EOS() int {
	nn.CheckNil(m, "EOS")
	return hf.FirstID(m.Config.EOSTokenID)
}

// EOSIDs is every id of eos_token_id (none for nil); pass it as
// generate.Options.EOS.
func (m *Model) EOSIDs() []int {
	nn.CheckNil(m, "EOSIDs")
	return hf.IDs(m.Config.EOSTokenID)
}

// Forward maps token ids [B, T] (Int64) to logits [B, T, vocab], with
// causal attention over the T positions.
func (m *Model) Forward(ids *ember.Tensor) *ember.Tensor {
	nn.CheckNil(m, "Forward")
	return m.ForwardCache(ids, nil)
}

// Step runs ids [B, T] after the positions c holds and returns the logits
// of the last position, [B, vocab], in Float32 (whatever the model's
// dtype, as transformers' generate samples): a decoding step
// (models/generate).
func (m *Model) Step(ids *ember.Tensor, c *kvcache.Cache) *ember.Tensor {
	nn.CheckNil(m, "Step")
	stepIDs(ids)
	h := m.Transformer.hidden(ids, c)
	t := h.Shape()[1]
	return m.head(h.Narrow(1, t-1, 1)).Squeeze(1).Cast(ember.Float32)
}

// DType is the dtype of the model's parameters (WithDType).
func (m *Model) DType() ember.DType {
	nn.CheckNil(m, "DType")
	return m.Transformer.WTE.Weight.DType()
}

// ForwardCache is Forward for ids [B, T] that follow the c.Len()
// positions the cache holds (c nil: none, and nothing is stored): their
// keys and values are appended to c and the logits [B, T, vocab] of the
// new positions returned. It panics with a *ember.ShapeError if the
// positions would pass n_positions.
func (m *Model) ForwardCache(ids *ember.Tensor, c *kvcache.Cache) *ember.Tensor {
	nn.CheckNil(m, "ForwardCache")
	return m.head(m.Transformer.hidden(ids, c))
}

func (m *Model) head(h *ember.Tensor) *ember.Tensor {
	w := m.Transformer.WTE.Weight
	if m.LMHead != nil {
		w = m.LMHead.Weight
	}
	s := h.Shape()
	return ember.Linear(h.Reshape(-1, s[2]), w, nil).Reshape(s[0], s[1], w.Shape()[0])
}

// hidden is the transformer's output, after ln_f.
func (tr *Transformer) hidden(ids *ember.Tensor, c *kvcache.Cache) *ember.Tensor {
	if ids.Dim() != 2 {
		panic(&ember.ShapeError{Op: "gpt2", Msg: fmt.Sprintf("ids must be [batch, tokens], got %v", ids.Shape())})
	}
	past := 0
	if c != nil {
		past = c.Len()
	}
	t := ids.Shape()[1]
	if past+t > tr.nPos {
		panic(&ember.ShapeError{Op: "gpt2", Msg: fmt.Sprintf("%d positions (%d cached + %d new) exceed the context of %d (n_positions)", past+t, past, t, tr.nPos)})
	}
	pos := ember.Arange(float64(past), float64(past+t), 1, ember.On(ids.Device()), ember.Dtype(ember.Int64))
	x := tr.WTE.Forward(ids).Add(tr.WPE.Forward(pos))
	mask := causalMask(t, past, ids.Device())
	for i, b := range tr.blocks {
		x = b.forward(x, c, i, mask)
	}
	return tr.LnF.Forward(x)
}

// causalMask is the attention mask of t new positions after past cached
// ones: nil with Causal for a prompt (past 0), nil for a single token
// (it sees everything), else a Bool [t, past+t] mask.
func causalMask(t, past int, dev ember.Device) *ember.Tensor {
	if past == 0 || t == 1 {
		return nil
	}
	s := past + t
	b := make([]bool, t*s)
	for i := range t {
		for j := 0; j <= past+i; j++ {
			b[i*s+j] = true
		}
	}
	return ember.FromSlice(b, ember.Shape{t, s}, ember.On(dev))
}

// Forward is the block without a cache (causal over x's positions).
func (b *Block) Forward(x *ember.Tensor) *ember.Tensor {
	nn.CheckNil(b, "Forward")
	return b.forward(x, nil, 0, nil)
}

func (b *Block) forward(x *ember.Tensor, c *kvcache.Cache, layer int, mask *ember.Tensor) *ember.Tensor {
	x = x.Add(b.Attn.forward(b.Ln1.Forward(x), c, layer, mask))
	return x.Add(b.MLP.Forward(b.Ln2.Forward(x)))
}

// Forward is causal self-attention over x [B, T, C], without a cache.
func (a *Attention) Forward(x *ember.Tensor) *ember.Tensor {
	nn.CheckNil(a, "Forward")
	return a.forward(x, nil, 0, nil)
}

func (a *Attention) forward(x *ember.Tensor, c *kvcache.Cache, layer int, mask *ember.Tensor) *ember.Tensor {
	s := x.Shape()
	bsz, t, ch := s[0], s[1], s[2]
	h := a.NHead
	d := ch / h
	qkv := a.CAttn.Forward(x)
	parts := qkv.Split(ch, 2)
	heads := func(y *ember.Tensor) *ember.Tensor { return y.Reshape(bsz, t, h, d).Transpose(1, 2) }
	q, k, v := heads(parts[0]), heads(parts[1]), heads(parts[2])
	opt := ember.AttentionOptions{Causal: true}
	if c != nil {
		past := c.Len()
		k, v = c.Append(layer, k, v)
		if past > 0 {
			opt = ember.AttentionOptions{Mask: mask}
		}
	}
	y := ember.ScaledDotProductAttention(q, k, v, opt)
	return a.CProj.Forward(y.Transpose(1, 2).Reshape(bsz, t, ch))
}

// Forward is the MLP.
func (p *MLP) Forward(x *ember.Tensor) *ember.Tensor {
	nn.CheckNil(p, "Forward")
	return p.CProj.Forward(p.act(p.CFc.Forward(x)))
}

// stepIDs checks that Step has a token to give the logits of.
func stepIDs(ids *ember.Tensor) {
	if ids != nil && ids.Dim() == 2 && ids.Shape()[1] == 0 {
		panic(&ember.ShapeError{Op: "gpt2.Step", Msg: fmt.Sprintf("ids %v: Step needs at least one new token (it returns the logits of the last)", ids.Shape())})
	}
}
