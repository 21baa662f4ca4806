package generate

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
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
		{Options{MaxNewTokens: 3, EOS: -1}, nil, []int{2, 2, 2}, StopMaxTokens},
		{Options{MaxNewTokens: 3, EOS: 2}, nil, []int{2}, StopEOS},
		{Options{MaxNewTokens: 3, EOS: -1}, func(int) bool { return false }, []int{2}, StopCallback},
		{Options{MaxNewTokens: 0, EOS: -1}, nil, nil, StopMaxTokens},
	} {
		got, stop, err := Generate(fixed{}, []int{0}, tc.o, tc.emit)
		if err != nil || !slices.Equal(got, tc.want) || stop != tc.stop {
			t.Errorf("%+v: %v %q %v, want %v %q", tc.o, got, stop, err, tc.want, tc.stop)
		}
	}
	if got, stop, err := Generate(fixed{ctx: 3}, []int{0}, Options{MaxNewTokens: 5, EOS: -1}, nil); err != nil || len(got) != 2 || stop != StopContext {
		t.Errorf("context 3: %v %q %v, want two tokens and %q", got, stop, err, StopContext)
	}
}
