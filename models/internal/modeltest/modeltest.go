// Package modeltest holds the checks every causal language model of
// models/ (gpt2, llama) runs in its tests.
package modeltest

import (
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
	"github.com/emberml/ember/models/kvcache"
)

// LM is a causal language model as gpt2.Model and llama.Model are.
type LM interface {
	Forward(ids *ember.Tensor) *ember.Tensor
	Step(ids *ember.Tensor, c *kvcache.Cache) *ember.Tensor
	NewCache() *kvcache.Cache
}

// Misuse checks m (vocabulary vocab, context ctx) on what a caller can get
// wrong: a batch of no sequences gives empty logits (the fused attention
// kernel failed with a Go index-out-of-range panic), a Step of no tokens,
// an id past the vocabulary and a sequence past the context are typed
// errors.
func Misuse(t *testing.T, m LM, vocab, ctx int) {
	t.Helper()
	if got := m.Forward(ember.Zeros(ember.Shape{0, 3}, ember.Dtype(ember.Int64))).Shape(); !got.Equal(ember.Shape{0, 3, vocab}) {
		t.Fatalf("Forward of [0, 3] ids: shape %v, want [0 3 %d]", got, vocab)
	}
	e := testenv.Raises[*ember.ShapeError](t, "Step of no tokens", func() {
		m.Step(ember.Zeros(ember.Shape{1, 0}, ember.Dtype(ember.Int64)), m.NewCache())
	})
	if !strings.Contains(e.Error(), "at least one new token") {
		t.Fatalf("Step of no tokens: %v", e)
	}
	testenv.Raises[*ember.IndexError](t, "id past the vocabulary", func() {
		m.Forward(ember.FromSlice([]int{1, vocab}, ember.Shape{1, 2}))
	})
	testenv.Raises[*ember.ShapeError](t, "past the context", func() {
		m.Forward(ember.Zeros(ember.Shape{1, ctx + 1}, ember.Dtype(ember.Int64)))
	})
}
