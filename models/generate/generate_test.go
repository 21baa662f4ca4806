package generate

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
	"github.com/emberml/ember/models/kvcache"
)

// fixed is a model whose every step gives the logits [1, 2, 3, 0.5].
type fixed struct{ ctx int }

func (fixed) Step(*ember.Tensor, *kvcache.Cache) *ember.Tensor {
	return ember.FromSlice([]float32{1, 2, 3, 0.5}, ember.Shape{1, 4})
}
func (fixed) NewCache() *kvcache.Cache { return kvcache.New(1) }
func (f fixed) ContextLength() int     { return f.ctx }

// TestOptions: settings no sampler can use (NaNs included) are an error
// before any step; greedy decoding takes the argmax (2) and stops at the
// limit, at EOS and when the callback says so.
func TestOptions(t *testing.T) {
	nan := math.NaN()
	for _, o := range []Options{
		{MaxNewTokens: 1, Temperature: -1},
		{MaxNewTokens: 1, Temperature: nan},
		{MaxNewTokens: 1, TopK: -1},
		{MaxNewTokens: 1, TopP: 1.5},
		{MaxNewTokens: 1, TopP: -0.1},
		{MaxNewTokens: 1, TopP: nan},
	} {
		if _, _, err := Generate(fixed{}, []int{0}, o, nil); err == nil || !strings.Contains(err.Error(), "want temperature") {
			t.Errorf("%+v: %v, want an error", o, err)
		}
	}
	if _, _, err := Generate(fixed{}, nil, Options{MaxNewTokens: 1}, nil); err == nil {
		t.Error("an empty prompt generated")
	}
	for _, tc := range []struct {
		o    Options
		emit func(int) bool
		want []int
		stop Stop
	}{
		{Options{MaxNewTokens: 3}, nil, []int{2, 2, 2}, StopMaxTokens},
		{Options{MaxNewTokens: 3, EOS: []int{2}}, nil, []int{2}, StopEOS},
		{Options{MaxNewTokens: 3, EOS: []int{7, 2}}, nil, []int{2}, StopEOS},
		{Options{MaxNewTokens: 3, EOS: []int{7, 1}}, nil, []int{2, 2, 2}, StopMaxTokens},
		{Options{MaxNewTokens: 3}, func(int) bool { return false }, []int{2}, StopCallback},
		{Options{MaxNewTokens: 0}, nil, nil, StopMaxTokens},
	} {
		got, stop, err := Generate(fixed{}, []int{0}, tc.o, tc.emit)
		if err != nil || !slices.Equal(got, tc.want) || stop != tc.stop {
			t.Errorf("%+v: %v %q %v, want %v %q", tc.o, got, stop, err, tc.want, tc.stop)
		}
	}
	if got, stop, err := Generate(fixed{ctx: 3}, []int{0}, Options{MaxNewTokens: 5}, nil); err != nil || len(got) != 2 || stop != StopContext {
		t.Errorf("context 3: %v %q %v, want two tokens and %q", got, stop, err, StopContext)
	}
}

// TestSamplerDistribution: the frequencies of 40000 draws from logits
// [1, 2, 3, 0.5] follow softmax(logits/T) within top-k and the top-p
// nucleus (HF's TopK then TopP warpers), worked by hand: e^x/Σe^x over
// the kept tokens.
func TestSamplerDistribution(t *testing.T) {
	logits := []float32{1, 2, 3, 0.5}
	softmax := func(T float64, keep ...int) []float64 {
		p := make([]float64, 4)
		sum := 0.0
		for _, i := range keep {
			p[i] = math.Exp(float64(logits[i]) / T)
			sum += p[i]
		}
		for i := range p {
			p[i] /= sum
		}
		return p
	}
	// T=1: probabilities .0854 .2321 .6308 .0518 (e^x / 31.84); most
	// likely first, their sums are .6308 .8629 .9482 1
	for _, c := range []struct {
		o    Options
		want []float64
	}{
		{Options{Temperature: 1}, softmax(1, 0, 1, 2, 3)},
		{Options{Temperature: 2}, softmax(2, 0, 1, 2, 3)},
		{Options{Temperature: 1, TopK: 2}, softmax(1, 1, 2)},
		{Options{Temperature: 1, TopK: 100}, softmax(1, 0, 1, 2, 3)},
		// the nucleus: the fewest most likely tokens whose sum reaches p
		{Options{Temperature: 1, TopP: 0.8}, softmax(1, 1, 2)},
		{Options{Temperature: 1, TopP: 0.5}, softmax(1, 2)},
		{Options{Temperature: 1, TopP: 0.9}, softmax(1, 0, 1, 2)},
		{Options{Temperature: 1, TopP: 0.95}, softmax(1, 0, 1, 2, 3)},
		// within the top 3 (.6652 .2447 .0901) 0.99 needs all three
		{Options{Temperature: 1, TopP: 1}, softmax(1, 0, 1, 2, 3)},
		{Options{Temperature: 1, TopK: 3, TopP: 0.99}, softmax(1, 0, 1, 2)},
	} {
		c.o.Seed = 3
		s := NewSampler(c.o)
		const n = 40000
		count := make([]float64, 4)
		for range n {
			count[s.Sample(logits)]++
		}
		for i := range count {
			got, want := count[i]/n, c.want[i]
			if math.Abs(got-want) > 4*math.Sqrt(want*(1-want)/n)+1e-9 {
				t.Fatalf("%+v: token %d frequency %.4f, want %.4f", c.o, i, got, want)
			}
		}
	}
}

// badStep gives the logits it holds.
type badStep struct{ logits []float32 }

func (b badStep) Step(*ember.Tensor, *kvcache.Cache) *ember.Tensor {
	return ember.FromSlice(b.logits, ember.Shape{1, len(b.logits)})
}
func (badStep) NewCache() *kvcache.Cache { return kvcache.New(1) }
func (badStep) ContextLength() int       { return 0 }

// TestBadLogits: logits with no distribution (NaN, none; sampling, also
// +Inf or all −Inf) are an error wrapping ErrBadLogits from Generate and
// a *ember.ValueError panic from Sample, not a token picked from NaN
// probabilities (or an index out of range for none); greedy decoding
// takes torch.argmax's pick of +Inf and all −Inf logits.
func TestBadLogits(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, c := range []struct {
		logits []float32
		temps  []float64
	}{
		{[]float32{1, float32(math.NaN()), 2}, []float64{0, 1}},
		{[]float32{}, []float64{0, 1}},
		{[]float32{1, inf, 2}, []float64{1}},
		{[]float32{-inf, -inf}, []float64{1}},
	} {
		for _, temp := range c.temps {
			_, _, err := Generate(badStep{c.logits}, []int{0}, Options{MaxNewTokens: 2, Temperature: temp}, nil)
			if !errors.Is(err, ErrBadLogits) {
				t.Errorf("%v T=%v: %v, want ErrBadLogits", c.logits, temp, err)
			}
			testenv.Raises[*ember.ValueError](t, "Sample", func() { NewSampler(Options{Temperature: temp}).Sample(c.logits) })
		}
	}
	for _, c := range []struct {
		logits []float32
		want   int
	}{{[]float32{1, inf, 2}, 1}, {[]float32{-inf, -inf}, 0}} {
		got, _, err := Generate(badStep{c.logits}, []int{0}, Options{MaxNewTokens: 1}, nil)
		if err != nil || !slices.Equal(got, []int{c.want}) {
			t.Errorf("greedy %v: %v %v, want [%d] (torch.argmax)", c.logits, got, err, c.want)
		}
	}
	// −Inf logits are fine where some are finite (a masked vocabulary)
	if id := NewSampler(Options{Temperature: 1}).Sample([]float32{-inf, 0, -inf}); id != 1 {
		t.Fatalf("sampled %d from one finite logit", id)
	}
}

// TestTopKTies: top-k keeps every token tied with the k-th, as
// transformers' TopKLogitsWarper (it removes scores < the k-th value):
// from logits [1, 2, 2, 0.5, 2] top-k 1 and 2 keep the three 2s, equally
// likely (1/3 each); top-k 4 keeps all but 0.5 (e^1 : e^2 : e^2 : e^2).
func TestTopKTies(t *testing.T) {
	logits := []float32{1, 2, 2, 0.5, 2}
	e1, e2 := math.E, math.E*math.E
	for _, c := range []struct {
		k    int
		want []float64
	}{
		{1, []float64{0, 1. / 3, 1. / 3, 0, 1. / 3}},
		{2, []float64{0, 1. / 3, 1. / 3, 0, 1. / 3}},
		{4, []float64{e1 / (e1 + 3*e2), e2 / (e1 + 3*e2), e2 / (e1 + 3*e2), 0, e2 / (e1 + 3*e2)}},
	} {
		s := NewSampler(Options{Temperature: 1, TopK: c.k, Seed: 5})
		const n = 30000
		count := make([]float64, len(logits))
		for range n {
			count[s.Sample(logits)]++
		}
		for i := range count {
			got, want := count[i]/n, c.want[i]
			if math.Abs(got-want) > 4*math.Sqrt(want*(1-want)/n)+1e-9 {
				t.Fatalf("top-k %d: token %d frequency %.4f, want %.4f", c.k, i, got, want)
			}
		}
	}
}
