package gpt2_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/models/generate"
	"github.com/emberml/ember/models/gpt2"
)

// Load a Hugging Face GPT-2 folder and continue a prompt greedily with the
// KV cache (the ids are PyTorch's greedy continuation of this tiny model).
func Example() {
	m, err := gpt2.Load("testdata/tiny", ember.CPU)
	if err != nil {
		panic(err)
	}
	prompt := []int{72, 101, 108, 108, 111, 280, 111, 114, 108, 100} // "Hello world"
	ids, stop, err := generate.Generate(m, prompt, generate.Options{MaxNewTokens: 5, EOS: m.EOSIDs()}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(ids, stop)
	// Output: [368 173 244 244 244] max_new_tokens
}

// The logits of a batch of token ids, and of the same ids decoded one at a
// time with a cache.
func ExampleModel_ForwardCache() {
	m, _ := gpt2.Load("testdata/tiny", ember.CPU)
	ids := []int{72, 101, 108}
	ember.NoGrad(func() {
		full := m.Forward(ember.FromSlice(ids, ember.Shape{1, 3}))
		c := m.NewCache()
		for _, id := range ids {
			m.ForwardCache(ember.FromSlice([]int{id}, ember.Shape{1, 1}), c)
		}
		fmt.Println(full.Shape(), c.Len())
	})
	// Output: [1, 3, 564] 3
}
