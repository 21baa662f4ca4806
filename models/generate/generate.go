// Package generate produces text token by token from a causal language
// model with a KV cache (models/gpt2, models/llama): the prompt is run
// once, then each new token alone, attending to the cached keys and
// values. Sampling is greedy (temperature 0) or from the softmax of the
// logits divided by the temperature, restricted to the top-k tokens and
// to the nucleus of probability top-p, with a seeded generator.
package generate

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/emberml/ember"
	"github.com/emberml/ember/models/kvcache"
)

// Model is a causal language model with a KV cache.
type Model interface {
	// Step runs ids [B, T] after the positions c holds (appending their
	// keys and values) and returns the logits of the last position, [B, vocab].
	Step(ids *ember.Tensor, c *kvcache.Cache) *ember.Tensor
	// NewCache returns an empty cache for the model.
	NewCache() *kvcache.Cache
	// ContextLength is the most positions a sequence may have (0: no bound).
	ContextLength() int
}

// Options are the generation settings; the zero value is greedy decoding
// of no tokens.
type Options struct {
	MaxNewTokens int
	// Temperature divides the logits; 0 is greedy (argmax).
	Temperature float64
	// TopK keeps the k most likely tokens and those tied with the k-th,
	// as transformers' TopKLogitsWarper (0: all).
	TopK int
	// TopP keeps the most likely tokens whose probabilities sum to at
	// least p (0 or 1: all).
	TopP float64
	// Seed seeds the sampler (a PCG stream): the same seed gives the same text.
	Seed uint64
	// EOS are the ids that end generation when produced (the one produced
	// is included in the result); nil: none. A model's eos_token_id, which
	// may be a list (Llama 3.2 Instruct's end of turn), is its EOSIDs().
	EOS []int
	// Device is where the model lives (the ids are made there).
	Device ember.Device
}

// Stop says why generation ended.
type Stop string

// The reasons generation ends.
const (
	StopMaxTokens Stop = "max_new_tokens"
	StopEOS       Stop = "eos"
	StopContext   Stop = "context" // the sequence filled the model's context
	StopCallback  Stop = "callback"
)

// ErrPromptTooLong is returned (wrapped, with the lengths) for a prompt
// longer than the model's context.
var ErrPromptTooLong = errors.New("prompt longer than the model's context")

// Generate continues prompt with up to o.MaxNewTokens tokens, calling emit
// (if not nil) with each as soon as it is chosen (emit returning false
// stops). It returns the new tokens and why it stopped. A prompt longer
// than the context is an error wrapping ErrPromptTooLong; generation that
// reaches the context stops there with StopContext (positions are never
// silently dropped).
func Generate(m Model, prompt []int, o Options, emit func(id int) bool) ([]int, Stop, error) {
	if len(prompt) == 0 {
		return nil, "", errors.New("generate: empty prompt (a model needs at least one token to continue)")
	}
	if ctx := m.ContextLength(); ctx > 0 && len(prompt) > ctx {
		return nil, "", fmt.Errorf("generate: %w: %d tokens, the context is %d", ErrPromptTooLong, len(prompt), ctx)
	}
	if !(o.Temperature >= 0) || o.TopK < 0 || !(o.TopP >= 0 && o.TopP <= 1) { // (NaNs too)
		return nil, "", fmt.Errorf("generate: temperature %v, top-k %d and top-p %v: want temperature ≥ 0, top-k ≥ 0, 0 ≤ top-p ≤ 1", o.Temperature, o.TopK, o.TopP)
	}
	if o.MaxNewTokens <= 0 {
		return nil, StopMaxTokens, nil
	}
	s := NewSampler(o)
	c := m.NewCache()
	defer c.Release()
	var out []int
	var err error
	stop := StopMaxTokens
	next := prompt
	n := len(prompt)
	ember.NoGrad(func() {
		for len(out) < o.MaxNewTokens {
			ids := ember.FromSlice(next, ember.Shape{1, len(next)}, ember.On(o.Device))
			logits := m.Step(ids, c).Float32s()
			if err = checkLogits(logits, len(out), o.Temperature == 0); err != nil {
				return
			}
			id := s.Sample(logits)
			out = append(out, id)
			n++
			if emit != nil && !emit(id) {
				stop = StopCallback
				return
			}
			if slices.Contains(o.EOS, id) {
				stop = StopEOS
				return
			}
			if ctx := m.ContextLength(); ctx > 0 && n >= ctx && len(out) < o.MaxNewTokens {
				stop = StopContext
				return
			}
			next = []int{id}
		}
	})
	if err != nil {
		return out, "", err
	}
	return out, stop, nil
}

// ErrBadLogits is returned (wrapped, with the step) when the model's
// logits cannot be decoded from: empty or NaN (a model that overflowed,
// in float16 say), and when sampling also +Inf or all −Inf, which
// torch.multinomial refuses too (greedy decoding takes the argmax of
// those, as torch.argmax does).
var ErrBadLogits = errors.New("the model's logits cannot be decoded from")

// checkLogits returns an error wrapping ErrBadLogits for logits that
// have no distribution (no argmax, when greedy).
func checkLogits(logits []float32, step int, greedy bool) error {
	if msg := badLogits(logits, greedy); msg != "" {
		return fmt.Errorf("generate: %w: token %d: %s", ErrBadLogits, step, msg)
	}
	return nil
}

// badLogits says what is wrong with logits ("" for nothing).
func badLogits(logits []float32, greedy bool) string {
	if len(logits) == 0 {
		return "no logits"
	}
	finite := false
	for i, v := range logits {
		switch {
		case math.IsNaN(float64(v)):
			return fmt.Sprintf("logit %d is NaN", i)
		case math.IsInf(float64(v), 1):
			if !greedy {
				return fmt.Sprintf("logit %d is +Inf", i)
			}
		case !math.IsInf(float64(v), -1):
			finite = true
		}
	}
	if !finite && !greedy {
		return "no logit is finite"
	}
	return ""
}

// Sampler picks tokens from logits.
type Sampler struct {
	o   Options
	rng *rand.Rand
	idx []int
	p   []float64
}

// NewSampler returns a sampler with o's temperature, top-k, top-p and seed.
func NewSampler(o Options) *Sampler {
	return &Sampler{o: o, rng: rand.New(rand.NewPCG(o.Seed, 0x656d626572))}
}

// Sample returns the next token for logits over the vocabulary. It
// panics with an *ember.ValueError on logits that have no distribution
// (empty or NaN, and when sampling +Inf or all −Inf; ErrBadLogits), as
// torch.multinomial raises.
func (s *Sampler) Sample(logits []float32) int {
	if msg := badLogits(logits, s.o.Temperature == 0); msg != "" {
		panic(&ember.ValueError{Op: "generate.Sampler.Sample", Msg: msg})
	}
	if s.o.Temperature == 0 {
		best := 0
		for i, v := range logits {
			if v > logits[best] {
				best = i
			}
		}
		return best
	}
	n := len(logits)
	if cap(s.idx) < n {
		s.idx, s.p = make([]int, n), make([]float64, n)
	}
	idx, p := s.idx[:n], s.p[:n]
	for i := range idx {
		idx[i] = i
	}
	// most likely first; ties by id, so the order is deterministic
	sort.SliceStable(idx, func(a, b int) bool { return logits[idx[a]] > logits[idx[b]] })
	k := n
	if s.o.TopK > 0 && s.o.TopK < n {
		// transformers' TopKLogitsWarper removes the scores below the
		// k-th (logits/temperature in float32): the tokens tied with it
		// stay
		k = s.o.TopK
		temp := float32(s.o.Temperature)
		kth := logits[idx[k-1]] / temp
		for k < n && logits[idx[k]]/temp >= kth {
			k++
		}
	}
	top := float64(logits[idx[0]])
	sum := 0.0
	for i := range k {
		p[i] = math.Exp((float64(logits[idx[i]]) - top) / s.o.Temperature)
		sum += p[i]
	}
	if s.o.TopP > 0 && s.o.TopP < 1 {
		acc := 0.0
		for i := range k {
			acc += p[i] / sum
			if acc >= s.o.TopP {
				k = i + 1
				break
			}
		}
		sum = 0
		for i := range k {
			sum += p[i]
		}
	}
	r := s.rng.Float64() * sum
	for i := range k {
		r -= p[i]
		if r < 0 {
			return idx[i]
		}
	}
	return idx[k-1]
}
