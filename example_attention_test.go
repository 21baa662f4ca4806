package ember_test

import (
	"fmt"
	"math"

	"github.com/emberml/ember"
)

// One query, two keys, scale 1: the weights are softmax(0, ln 3) =
// (1/4, 3/4), so the output is ¼·v₀ + ¾·v₁; with Causal the query sees
// key 0 only.
func ExampleScaledDotProductAttention() {
	q := ember.FromSlice([]float32{1, 0}, ember.Shape{1, 1, 2})
	k := ember.FromSlice([]float32{0, 5, float32(math.Log(3)), 7}, ember.Shape{1, 2, 2})
	v := ember.FromSlice([]float32{4, 8, 0, 4}, ember.Shape{1, 2, 2})
	out := ember.ScaledDotProductAttention(q, k, v, ember.AttentionOptions{Scale: 1})
	causal := ember.ScaledDotProductAttention(q, k, v, ember.AttentionOptions{Scale: 1, Causal: true})
	fmt.Printf("%.4f %.4f\n", out.Float32s(), causal.Float32s())
	// Output: [1.0000 5.0000] [4.0000 8.0000]
}
