package tokenizer_test

import (
	"fmt"

	"github.com/emberml/ember/tokenizer"
)

// Load reads a model folder's vocab.json + merges.txt (or tokenizer.json);
// Encode and Decode round-trip any bytes.
func Example() {
	tk, err := tokenizer.Load("testdata/gpt2-tiny")
	if err != nil {
		panic(err)
	}
	ids := tk.Encode("the text<|endoftext|>")
	text, _ := tk.Decode(ids)
	fmt.Println(len(ids) > 0, ids[len(ids)-1] == tk.VocabSize()-1, text)
	// Output: true true the text<|endoftext|>
}
