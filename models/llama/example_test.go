package llama_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/models/generate"
	"github.com/emberml/ember/models/llama"
)

// Load a Hugging Face Llama folder (grouped-query attention: 4 query
// heads, 2 key/value heads) and continue a prompt greedily.
func Example() {
	m, err := llama.Load("testdata/tiny", ember.CPU)
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Config.NumAttentionHeads, m.Config.KVHeads())
	prompt := []int{72, 101, 108, 108, 111, 280, 111, 114, 108, 100} // "Hello world"
	ids, _, err := generate.Generate(m, prompt, generate.Options{MaxNewTokens: 5}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(ids)
	// Output:
	// 4 2
	// [535 290 3 262 49]
}
