package generate_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/models/generate"
	"github.com/emberml/ember/models/gpt2"
	"github.com/emberml/ember/tokenizer"
)

// Tokenize a prompt, generate with a seeded sampler (temperature, top-k,
// top-p), and decode the new tokens.
func ExampleGenerate() {
	dir := "../gpt2/testdata/tiny"
	tk, err := tokenizer.Load(dir)
	if err != nil {
		panic(err)
	}
	m, err := gpt2.Load(dir, ember.CPU)
	if err != nil {
		panic(err)
	}
	prompt := tk.Encode("Hello world")
	n := 0
	ids, stop, err := generate.Generate(m, prompt, generate.Options{
		MaxNewTokens: 8, Temperature: 0.7, TopK: 40, TopP: 0.95, Seed: 1, EOS: m.EOSIDs(),
	}, func(id int) bool { n++; return true }) // emit: called with each token as it comes
	if err != nil {
		panic(err)
	}
	text, _ := tk.Decode(ids)
	fmt.Println(len(prompt), len(ids), n, stop, len(text) > 0)
	// Output: 10 8 8 max_new_tokens true
}
