package bench

import (
	"github.com/emberml/ember"
	"github.com/emberml/ember/models/gpt2"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// The transformer cases (torch_bench.py has the same, on a plain-torch
// GPT-2 with its own KV cache):
//
//	gpt2_fwd        GPT-2 small (124M parameters, random weights), batch 1, 128 tokens, eval, NoGrad: the logits
//	gpt2_decode     GPT2DecodeTokens greedy decoding steps with the KV cache after a 128-token prompt
//	                (the prompt's keys and values are computed once, in setup; each run truncates the cache to them)
//	gpt_train_step  the nanoGPT shape of `ember train --model gpt`'s quick run: 4 layers, 4 heads, 128 wide,
//	                block 128, vocabulary 256, batch 32: forward, cross entropy, backward, clipping, AdamW

// GPT2DecodeTokens is how many tokens one gpt2_decode run decodes.
const GPT2DecodeTokens = 32

// GPTForwardFLOPs is the FLOP count of a GPT-2 forward pass over t tokens
// per sequence: 2 per multiply-add of the blocks' matrices (12·C² per
// token per layer), the LM head (C·V per token) and causal attention
// (q·kᵀ and ·v: 2·t²·C per layer, halved for the triangle); past cached
// positions count in the attention of the new ones.
func GPTForwardFLOPs(layers, width, vocab, t, past int) float64 {
	l, c, v := float64(layers), float64(width), float64(vocab)
	tok := float64(t)
	attn := 2 * tok * (float64(past) + (tok+1)/2) * c * l // q·kᵀ and ·v multiply-adds, causal
	return 2 * (tok*(l*12*c*c+c*v) + attn)
}

func gpt2Small() *gpt2.Model {
	ember.ManualSeed(1)
	m := gpt2.New(gpt2.Small())
	m.Eval()
	return m
}

func promptIDs(n, vocab int) *ember.Tensor {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64((i*7919 + 13) % vocab)
	}
	return ember.FromSlice(ids, ember.Shape{1, n})
}

func gpt2Fwd() (func() float64, error) {
	m := gpt2Small()
	c := m.Config
	ids := promptIDs(128, c.VocabSize)
	return func() float64 {
		ember.NoGrad(func() { m.Forward(ids).Release() })
		return GPTForwardFLOPs(c.NLayer, c.NEmbd, c.VocabSize, 128, 0)
	}, nil
}

func gpt2Decode() (func() float64, error) {
	m := gpt2Small()
	c := m.Config
	cache := m.NewCache()
	ember.NoGrad(func() { m.Step(promptIDs(128, c.VocabSize), cache) })
	return func() float64 {
		cache.Truncate(128)
		work := 0.0
		ember.NoGrad(func() {
			next := int64(0)
			for i := range GPT2DecodeTokens {
				logits := m.Step(ember.FromSlice([]int64{next}, ember.Shape{1, 1}), cache)
				next = logits.ArgMaxDim(1, false).Int64s()[0]
				work += GPTForwardFLOPs(c.NLayer, c.NEmbd, c.VocabSize, 1, 128+i)
			}
		})
		return work
	}, nil
}

func gptTrainStep() (func() float64, error) {
	if !autogradWorks() {
		return nil, notAvailable("no autograd")
	}
	const batch, block, vocab = 32, 128, 256
	ember.ManualSeed(1)
	cfg := gpt2.Config{VocabSize: vocab, NPositions: block, NEmbd: 128, NLayer: 4, NHead: 4, Activation: "gelu_new", LayerNormEps: 1e-5}
	m := gpt2.New(cfg)
	m.Train(true)
	var decay, other []optim.Param
	for _, p := range optim.ModuleParams(m) {
		if p.Tensor.Dim() >= 2 {
			decay = append(decay, p)
		} else {
			other = append(other, p)
		}
	}
	opts := []*optim.Adam{optim.NewAdamW(decay, nil, 1e-3, 0.9, 0.99, 1e-8, 0.1), optim.NewAdamW(other, nil, 1e-3, 0.9, 0.99, 1e-8, 0)}
	params := m.Parameters()
	xs, ys := make([]int64, batch*block), make([]int64, batch*block)
	for i := range xs {
		xs[i], ys[i] = int64(i*31%vocab), int64((i*31+1)%vocab)
	}
	x, y := ember.FromSlice(xs, ember.Shape{batch, block}), ember.FromSlice(ys, ember.Shape{batch * block})
	ce := nn.CrossEntropyLoss{}
	return func() float64 {
		for _, o := range opts {
			o.ZeroGrad()
		}
		loss := ce.Loss(m.Forward(x).Reshape(-1, vocab), y)
		loss.Backward()
		nn.ClipGradNorm(params, 1, 2)
		for _, o := range opts {
			o.Step()
		}
		loss.Item()
		return 3 * batch * GPTForwardFLOPs(cfg.NLayer, cfg.NEmbd, vocab, block, 0)
	}, nil
}
