package tokenizer

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emberml/ember/internal/testenv"
)

// cases.json: ids from testdata/gen_tokenizer_fixtures.py's Python
// implementation of GPT-2's encoder (python3-regex for the pattern).
type tcase struct {
	Text       string   `json:"text"`
	IDs        []int    `json:"ids"`
	IDsSpecial []int    `json:"ids_special"`
	Pieces     []string `json:"pieces"`
}

func loadCases(t testing.TB) []tcase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cs []tcase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

func b64(t testing.TB, s string) string {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func tokenizers(t testing.TB) map[string]*Tokenizer {
	t.Helper()
	out := map[string]*Tokenizer{}
	for _, d := range []string{"gpt2-tiny", "gpt2-tiny-json"} {
		tk, err := Load(filepath.Join("testdata", d))
		if err != nil {
			t.Fatal(err)
		}
		out[d] = tk
	}
	return out
}

func TestMatchesPython(t *testing.T) {
	cases := loadCases(t)
	for name, tk := range tokenizers(t) {
		for i, c := range cases {
			text := b64(t, c.Text)
			if got := tk.EncodeOrdinary(text); !reflect.DeepEqual(nz(got), nz(c.IDs)) {
				t.Errorf("%s case %d %q: EncodeOrdinary\n got %v\nwant %v", name, i, text, got, c.IDs)
			}
			if got := tk.Encode(text); !reflect.DeepEqual(nz(got), nz(c.IDsSpecial)) {
				t.Errorf("%s case %d %q: Encode\n got %v\nwant %v", name, i, text, got, c.IDsSpecial)
			}
			for _, ids := range [][]int{c.IDs, c.IDsSpecial} {
				if back, err := tk.Decode(ids); err != nil || back != text {
					t.Errorf("%s case %d: Decode = %q, %v; want %q", name, i, back, err, text)
				}
			}
		}
	}
}

// nz makes nil and empty slices equal.
func nz(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}

func TestSpecialToken(t *testing.T) {
	tk := tokenizers(t)["gpt2-tiny"]
	eot, ok := tk.TokenID("<|endoftext|>")
	if !ok || eot != tk.VocabSize()-1 {
		t.Fatalf("<|endoftext|> id %d %v, vocab %d", eot, ok, tk.VocabSize())
	}
	got := tk.Encode("<|endoftext|>")
	if len(got) != 1 || got[0] != eot {
		t.Fatalf("Encode = %v, want [%d]", got, eot)
	}
	if got := tk.EncodeOrdinary("<|endoftext|>"); len(got) < 2 {
		t.Fatalf("EncodeOrdinary treats the special token as text: %v", got)
	}
}

func TestAddPrefixSpace(t *testing.T) {
	tk := tokenizers(t)["gpt2-tiny-json"]
	tk2, err := Load(filepath.Join("testdata", "gpt2-tiny-json"))
	if err != nil {
		t.Fatal(err)
	}
	tk2.pre = []preStep{byteLevelStep(true, true)}
	if a, b := tk2.Encode("Hello"), tk.Encode(" Hello"); !reflect.DeepEqual(a, b) {
		t.Fatalf("add_prefix_space: %v, want %v", a, b)
	}
}

func write(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), dir)
	os.MkdirAll(d, 0o755)
	for n, s := range files {
		if err := os.WriteFile(filepath.Join(d, n), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func TestBadFiles(t *testing.T) {
	good, _ := os.ReadFile(filepath.Join("testdata", "gpt2-tiny", "vocab.json"))
	merges, _ := os.ReadFile(filepath.Join("testdata", "gpt2-tiny", "merges.txt"))
	tj, _ := os.ReadFile(filepath.Join("testdata", "gpt2-tiny-json", "tokenizer.json"))
	for name, c := range map[string]struct {
		files map[string]string
		want  string
	}{
		"empty folder":     {map[string]string{}, "no tokenizer.json and no vocab.json"},
		"no merges":        {map[string]string{"vocab.json": string(good)}, "merges.txt"},
		"no vocab":         {map[string]string{"merges.txt": string(merges)}, "vocab.json"},
		"vocab not json":   {map[string]string{"vocab.json": "{oops", "merges.txt": string(merges)}, "not a JSON object"},
		"vocab list":       {map[string]string{"vocab.json": "[1,2]", "merges.txt": string(merges)}, "not a JSON object"},
		"merge 3 tokens":   {map[string]string{"vocab.json": string(good), "merges.txt": "#version: 0.2\nĠ t h\n"}, "merges.txt:2"},
		"merge unknown":    {map[string]string{"vocab.json": string(good), "merges.txt": "zz qq\n"}, "not in the vocabulary"},
		"bytes missing":    {map[string]string{"vocab.json": `{"a": 0, "b": 1}`, "merges.txt": ""}, "lacks byte"},
		"json malformed":   {map[string]string{"tokenizer.json": `{"model": `}, "tokenizer.json"},
		"json not bpe":     {map[string]string{"tokenizer.json": strings.Replace(string(tj), `"type": "BPE"`, `"type": "WordPiece"`, 1)}, "only BPE"},
		"json not bytelvl": {map[string]string{"tokenizer.json": strings.Replace(string(tj), `"pre_tokenizer": {"type": "ByteLevel"`, `"pre_tokenizer": {"type": "Whitespace"`, 1)}, "ByteLevel"},
		"json no model":    {map[string]string{"tokenizer.json": `{"added_tokens": []}`}, "no model"},
		"json metaspace in sequence": {map[string]string{"tokenizer.json": strings.Replace(string(tj), `"pre_tokenizer": {"type": "ByteLevel"`,
			`"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Metaspace"}, {"type": "ByteLevel"}]}, "x": {"type": "ByteLevel"`, 1)}, `pre_tokenizer "Metaspace" is not supported`},
		"json split removed": {map[string]string{"tokenizer.json": strings.Replace(string(tj), `"pre_tokenizer": {"type": "ByteLevel"`,
			`"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Removed"}, {"type": "ByteLevel"}]}, "x": {"type": "ByteLevel"`, 1)}, `behavior "Removed" is not supported`},
		"json split bad regex": {map[string]string{"tokenizer.json": strings.Replace(string(tj), `"pre_tokenizer": {"type": "ByteLevel"`,
			`"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "(a"}, "behavior": "Isolated"}, {"type": "ByteLevel"}]}, "x": {"type": "ByteLevel"`, 1)}, `pattern "(a"`},
		"json split only": {map[string]string{"tokenizer.json": strings.Replace(string(tj), `"pre_tokenizer": {"type": "ByteLevel"`,
			`"pre_tokenizer": {"type": "Split", "pattern": {"String": " "}, "behavior": "Isolated"}, "x": {"type": "ByteLevel"`, 1)}, "no ByteLevel pre_tokenizer"},
		"json lowercase":      {map[string]string{"tokenizer.json": strings.Replace(string(tj), `"normalizer": null`, `"normalizer": {"type": "Lowercase"}`, 1)}, `normalizer "Lowercase" is not supported`},
		"json subword prefix": {map[string]string{"tokenizer.json": strings.Replace(string(tj), `"continuing_subword_prefix": ""`, `"continuing_subword_prefix": "##"`, 1)}, "continuing_subword_prefix"},
	} {
		_, err := Load(write(t, "m", c.files))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, c.want)
		}
	}
	tk := tokenizers(t)["gpt2-tiny"]
	if _, err := tk.Decode([]int{1, 99999}); err == nil {
		t.Error("Decode of an unknown id: no error")
	}
}

// FuzzRoundTrip: every byte sequence decodes back from its ids, with and
// without special tokens recognised. CI runs the seeds (go test); go test
// -fuzz FuzzRoundTrip ./tokenizer explores.
func FuzzRoundTrip(f *testing.F) {
	for _, c := range loadCases(f) {
		f.Add([]byte(b64(f, c.Text)))
	}
	f.Add([]byte{0xf0, 0x9f})
	f.Add([]byte("'s's'S  \n\n  "))
	tk, err := Load(filepath.Join("testdata", "gpt2-tiny"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, ids := range [][]int{tk.Encode(string(b)), tk.EncodeOrdinary(string(b))} {
			back, err := tk.Decode(ids)
			if err != nil || back != string(b) {
				t.Fatalf("%q → %v → %q, %v", b, ids, back, err)
			}
		}
	})
}

// fuzzTokenizer checks what a loaded tokenizer does with text and ids.
func fuzzTokenizer(t *testing.T, tk *Tokenizer) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(*PatternTimeoutError); !ok { // a fuzzed pattern may backtrack for ever
				panic(r)
			}
		}
	}()
	strips := false // an added token's lstrip or rstrip drops whitespace
	for _, a := range append(slices.Clone(tk.raw), tk.norm...) {
		strips = strips || a.lstrip || a.rstrip
	}
	for _, s := range []string{"Hello world", " \x00\xff", "<|endoftext|>"} {
		ids := tk.Encode(s)
		if back, err := tk.Decode(ids); err != nil || back != s && !strips {
			t.Fatalf("%q → %v → %q, %v", s, ids, back, err)
		}
	}
	if _, err := tk.Decode([]int{-1, tk.VocabSize() + 5}); err == nil {
		t.Fatal("Decode of unknown ids: no error")
	}
}

// FuzzFromFiles: any vocab.json and merges.txt load or give an error; a
// tokenizer that loads encodes and decodes text.
func FuzzFromFiles(f *testing.F) {
	vocab, _ := os.ReadFile(filepath.Join("testdata", "gpt2-tiny", "vocab.json"))
	merges, _ := os.ReadFile(filepath.Join("testdata", "gpt2-tiny", "merges.txt"))
	f.Add(vocab, merges)
	f.Add(vocab, []byte("#version: 0.2\n"))
	f.Add([]byte(`{"a": 1000000000000}`), []byte(""))
	f.Fuzz(func(t *testing.T, vocab, merges []byte) {
		dir := t.TempDir()
		v, m := filepath.Join(dir, "vocab.json"), filepath.Join(dir, "merges.txt")
		if os.WriteFile(v, vocab, 0o644) != nil || os.WriteFile(m, merges, 0o644) != nil {
			t.Fatal("write")
		}
		if tk, err := FromFiles(v, m); err == nil {
			fuzzTokenizer(t, tk)
		}
	})
}

// FuzzFromTokenizerJSON: any tokenizer.json loads or gives an error; a
// tokenizer that loads encodes and decodes text.
func FuzzFromTokenizerJSON(f *testing.F) {
	tj, _ := os.ReadFile(filepath.Join("testdata", "gpt2-tiny-json", "tokenizer.json"))
	f.Add(tj)
	f.Add([]byte(`{"model": {"type": "BPE", "vocab": {"a": 99999999999}, "merges": []}}`))
	f.Add([]byte(strings.Replace(string(tj), `"pre_tokenizer": {"type": "ByteLevel"`, `"normalizer2": null, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [`+
		`{"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "MergedWithNext", "invert": true}, {"type": "Digits", "individual_digits": true}, {"type": "ByteLevel", "use_regex": false}]}, "x": {"type": "ByteLevel"`, 1)))
	f.Add([]byte(strings.Replace(string(tj), `"added_tokens": [`, `"added_tokens": [`+
		`{"id": 600, "content": " ", "rstrip": true, "lstrip": true}, {"id": 601, "content": "ﬁ", "single_word": true, "normalized": true}, `+
		`{"id": 602, "content": "<|endoftext|> ", "special": true, "normalized": false}, `, 1)))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "tokenizer.json")
		if os.WriteFile(p, b, 0o644) != nil {
			t.Fatal("write")
		}
		if tk, err := FromTokenizerJSON(p); err == nil {
			fuzzTokenizer(t, tk)
		}
	})
}

// pipeline.json: testdata/gen_tokenizer_pipeline_fixtures.py's variants
// of gpt2-tiny-json/tokenizer.json (Llama 3's and Qwen2's Split patterns,
// Digits, the split behaviors, normalizers, ignore_merges) and the ids of
// its Python implementation of the tokenizers library's pipeline.
type pipelineVariant struct {
	Name         string          `json:"name"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	IgnoreMerges bool            `json:"ignore_merges"`
	ExtraVocab   map[string]int  `json:"extra_vocab"`
	Cases        []tcase         `json:"cases"`
}

// variantJSON is gpt2-tiny-json's tokenizer.json with v's fields.
func variantJSON(t *testing.T, v pipelineVariant) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "gpt2-tiny-json", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tj map[string]any
	if err := json.Unmarshal(b, &tj); err != nil {
		t.Fatal(err)
	}
	tj["normalizer"] = v.Normalizer
	tj["pre_tokenizer"] = v.PreTokenizer
	model := tj["model"].(map[string]any)
	model["ignore_merges"] = v.IgnoreMerges
	vocab := model["vocab"].(map[string]any)
	for tok, id := range v.ExtraVocab {
		vocab[tok] = id
	}
	out, err := json.Marshal(tj)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestPipelineMatchesPython: a tokenizer.json's whole pre-tokenizer
// pipeline, normalizer and ignore_merges are applied (they were ignored,
// GPT-2's pattern standing in for Llama 3's Split, Digits and NFC, and the
// ids silently differed from the tokenizers library's).
func TestPipelineMatchesPython(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "pipeline.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vs []pipelineVariant
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		tk, err := Load(write(t, v.Name, map[string]string{"tokenizer.json": variantJSON(t, v)}))
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		for _, c := range v.Cases {
			text := b64(t, c.Text)
			if got := tk.EncodeOrdinary(text); !reflect.DeepEqual(got, c.IDs) && len(got)+len(c.IDs) > 0 {
				t.Fatalf("%s: EncodeOrdinary(%q) = %v, want %v", v.Name, text, got, c.IDs)
			}
			if c.IDsSpecial == nil { // the same
				c.IDsSpecial = c.IDs
			}
			if got := tk.Encode(text); !reflect.DeepEqual(got, c.IDsSpecial) && len(got)+len(c.IDsSpecial) > 0 {
				t.Fatalf("%s: Encode(%q) = %v, want %v", v.Name, text, got, c.IDsSpecial)
			}
		}
	}
}

// TestCacheBounded: the cache of pieces' ids stops growing at maxCached
// entries (it grew with every distinct word a long-running program saw),
// and pieces past it still encode.
func TestCacheBounded(t *testing.T) {
	tk, err := Load(filepath.Join("testdata", "gpt2-tiny"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := range maxCached + 100 {
		fmt.Fprintf(&b, " %d", i)
	}
	text := b.String()
	ids := tk.Encode(text)
	if n := tk.cached.Load(); n != maxCached {
		t.Fatalf("%d pieces cached, want %d", n, maxCached)
	}
	if back, err := tk.Decode(ids); err != nil || back != text {
		t.Fatalf("round trip past the cache's bound: %v", err)
	}
}

// gpt2BPE is GPT-2's encoder.py bpe: merge every occurrence of the
// lowest-ranked pair, left to right, until none has a rank.
func gpt2BPE(word []string, ranks map[[2]string]int) []string {
	for len(word) > 1 {
		best, at := -1, -1
		for i := 0; i+1 < len(word); i++ {
			if r, ok := ranks[[2]string{word[i], word[i+1]}]; ok && (best < 0 || r < best) {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		a, b := word[at], word[at+1]
		var merged []string
		for i := 0; i < len(word); i++ {
			if i+1 < len(word) && word[i] == a && word[i+1] == b {
				merged = append(merged, a+b)
				i++
			} else {
				merged = append(merged, word[i])
			}
		}
		word = merged
	}
	return word
}

// TestLongPiece: a 200 kB run of letters is one piece; with thousands of
// merges that apply (a vocabulary of all 400 pairs of 20 letters, then
// 3000 pairs of those), merging with a heap takes tens of milliseconds,
// where a pass over the piece per merge took half a minute. The ids of
// its first 4 kB are GPT-2's algorithm's.
func TestLongPiece(t *testing.T) {
	const letters = "abcdefghijklmnopqrst"
	vocab := map[string]int{}
	for b := range 256 {
		vocab[ByteToken(byte(b))] = b
	}
	var merges [][2]string
	ranks := map[[2]string]int{}
	add := func(a, b string) {
		if _, dup := ranks[[2]string{a, b}]; dup {
			return
		}
		ranks[[2]string{a, b}] = len(merges)
		merges = append(merges, [2]string{a, b})
		vocab[a+b] = len(vocab)
	}
	var pairs []string
	x := uint32(1)
	rnd := func(n int) int {
		x = x*1664525 + 1013904223
		return int(x>>16) % n
	}
	for range 400 { // the letter pairs in a seeded order
		a, b := string(letters[rnd(20)]), string(letters[rnd(20)])
		add(a, b)
		pairs = append(pairs, a+b)
	}
	for range 3000 {
		add(pairs[rnd(len(pairs))], pairs[rnd(len(pairs))])
	}
	tk, err := New(vocab, merges, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 200_000)
	for i := range b {
		b[i] = letters[rnd(20)]
	}
	start := time.Now()
	ids := tk.Encode(string(b))
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("%d bytes took %v", len(b), d)
	}
	if back, err := tk.Decode(ids); err != nil || back != string(b) {
		t.Fatalf("round trip: %v", err)
	}
	word := make([]string, 4000)
	for i := range word {
		word[i] = string(b[i])
	}
	var want []int
	for _, w := range gpt2BPE(word, ranks) {
		want = append(want, vocab[w])
	}
	if got := tk.Encode(string(b[:4000])); !reflect.DeepEqual(got, want) {
		t.Fatalf("4 kB: %d ids, GPT-2's algorithm %d", len(got), len(want))
	}
	if len(want) > 3000 {
		t.Fatalf("%d tokens for 4000 letters: the test's merges hardly apply", len(want))
	}
}

// TestManySpecials: with Llama 3's count of special tokens (256) and a
// corpus of 20000 documents joined by <|endoftext|>, EncodeWithSpecial
// looks for each special token once, not once per occurrence of another
// (which scanned the rest of 360 kB 5 million times).
func TestManySpecials(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "gpt2-tiny", "vocab.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vocab map[string]int
	if err := json.Unmarshal(b, &vocab); err != nil {
		t.Fatal(err)
	}
	ms, err := os.ReadFile(filepath.Join("testdata", "gpt2-tiny", "merges.txt"))
	if err != nil {
		t.Fatal(err)
	}
	merges, err := parseMerges("merges.txt", ms)
	if err != nil {
		t.Fatal(err)
	}
	special := map[string]int{"<|endoftext|>": vocab["<|endoftext|>"]}
	for k := range 255 {
		special[fmt.Sprintf("<|reserved_special_token_%d|>", k)] = len(vocab) + k
	}
	tk, err := New(vocab, merges, special)
	if err != nil {
		t.Fatal(err)
	}
	doc := tk.Encode("hello world")
	var want []int
	for range 20000 {
		want = append(want, doc...)
		want = append(want, special["<|endoftext|>"])
	}
	start := time.Now()
	got := tk.Encode(strings.Repeat("hello world<|endoftext|>", 20000))
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%d ids, want %d", len(got), len(want))
	}
	// the leftmost occurrence wins, the longest where two start together
	got = tk.Encode("a<|reserved_special_token_12|><|reserved_special_token_1|>")
	if len(got) != 3 || got[1] != special["<|reserved_special_token_12|>"] || got[2] != special["<|reserved_special_token_1|>"] {
		t.Fatalf("two specials: %v", got)
	}
}

// TestEncodeForModel: tokenizer.json's post_processor is what
// EncodeForModel puts around the text, as tokenizer(text) does in
// Hugging Face: Llama 3's TemplateProcessing puts <|begin_of_text|> first
// (a Llama 3 prompt without it was what ember generate ran), Roberta's
// <s> … </s>; GPT-2's ByteLevel nothing.
func TestEncodeForModel(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "gpt2-tiny-json", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Load(filepath.Join("testdata", "gpt2-tiny-json"))
	if err != nil {
		t.Fatal(err)
	}
	text := "Hello world<|endoftext|> again"
	body := plain.Encode(text)
	if got := plain.EncodeForModel(text); !reflect.DeepEqual(got, body) {
		t.Fatalf("GPT-2's post_processor: %v, want %v", got, body)
	}
	const bos = `{"id": 564, "content": "<|begin_of_text|>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}, `
	withBOS := strings.Replace(string(b), `"added_tokens": [`, `"added_tokens": [`+bos, 1)
	for _, c := range []struct {
		name, post string
		want       []int
	}{
		{"llama3", `{"type": "Sequence", "processors": [{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
			{"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
			 "pair": [], "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [564], "tokens": ["<|begin_of_text|>"]}}}]}`,
			append([]int{564}, body...)},
		{"suffix", `{"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}],
			 "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [563], "tokens": ["<|endoftext|>"]}}}`,
			append(slices.Clone(body), 563)},
		{"roberta", `{"type": "RobertaProcessing", "sep": ["<|endoftext|>", 563], "cls": ["<|begin_of_text|>", 564], "trim_offsets": true, "add_prefix_space": false}`,
			append(append([]int{564}, body...), 563)},
	} {
		tj := strings.Replace(withBOS, `"post_processor": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true}`, `"post_processor": `+c.post, 1)
		tk, err := Load(write(t, c.name, map[string]string{"tokenizer.json": tj}))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := tk.EncodeForModel(text); !reflect.DeepEqual(got, c.want) {
			t.Fatalf("%s: %v, want %v", c.name, got, c.want)
		}
		if got := tk.Encode(text); !reflect.DeepEqual(got, body) {
			t.Fatalf("%s: EncodeWithSpecial %v, want %v", c.name, got, body)
		}
	}
	for post, want := range map[string]string{
		`{"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}], "special_tokens": {}}`:                        `template token "<s>" is not in its special_tokens`,
		`{"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}], "special_tokens": {"<s>": {"ids": [99999]}}}`: "post_processor adds id 99999",
		`{"type": "BertProcessing", "sep": ["x"], "cls": ["y", 1]}`: "not [token, id] pairs",
		`{"type": "Mystery"}`: `post_processor "Mystery" is not supported`,
	} {
		tj := strings.Replace(string(b), `"post_processor": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true}`, `"post_processor": `+post, 1)
		if _, err := Load(write(t, "bad", map[string]string{"tokenizer.json": tj})); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error containing %q", post, err, want)
		}
	}
}

// TestDuplicateMerge: a merge listed twice takes its last rank, as GPT-2's
// bpe_ranks = dict(zip(merges, range(n))) and the tokenizers library's
// BPE builder (a map filled in order) do. With merges [b c, a b, b c],
// "abc" merges a b (rank 1) before b c (rank 2): ["ab", "c"]; the first
// rank (0) would give ["a", "bc"].
func TestDuplicateMerge(t *testing.T) {
	vocab := map[string]int{}
	for b := range 256 {
		vocab[ByteToken(byte(b))] = b
	}
	vocab["ab"], vocab["bc"] = 256, 257
	tk, err := New(vocab, [][2]string{{"b", "c"}, {"a", "b"}, {"b", "c"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tk.Encode("abc"), []int{256, 'c'}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Encode(abc) = %v, want %v", got, want)
	}
}

// TestHostileSplitPattern: a tokenizer.json Split pattern that backtracks
// catastrophically ((a+)+$ on 40 a's and a !: 2^40 ways to fail) makes
// Encode panic with a *PatternTimeoutError after MatchTimeout, where it
// hung (and a search error ended the matching early, silently dropping
// the rest of the text's splits).
func TestHostileSplitPattern(t *testing.T) {
	tj := variantJSON(t, pipelineVariant{PreTokenizer: json.RawMessage(`{"type": "Sequence", "pretokenizers": [` +
		`{"type": "Split", "pattern": {"Regex": "(a+)+$"}, "behavior": "Isolated"}, {"type": "ByteLevel", "add_prefix_space": false}]}`)})
	tk, err := Load(write(t, "hostile", map[string]string{"tokenizer.json": tj}))
	if err != nil {
		t.Fatal(err)
	}
	if ids := tk.Encode("aaa"); len(ids) == 0 { // a text it matches quickly
		t.Fatal("no ids")
	}
	start := time.Now()
	e := testenv.Raises[*PatternTimeoutError](t, "Encode", func() { tk.Encode(strings.Repeat("a", 40) + "!") })
	if d := time.Since(start); d > 10*MatchTimeout {
		t.Fatalf("took %v", d)
	}
	if e.Pattern != "(a+)+$" || !strings.Contains(e.Error(), "backtracks") {
		t.Fatalf("%v", e)
	}

	// each search well within MatchTimeout ((x+)+$ fails on 20 x's in
	// about 0.1 s), but 80 of them: all together bounded too
	tj = variantJSON(t, pipelineVariant{PreTokenizer: json.RawMessage(`{"type": "Sequence", "pretokenizers": [` +
		`{"type": "Split", "pattern": {"Regex": "(x+)+$|a"}, "behavior": "Isolated"}, {"type": "ByteLevel", "add_prefix_space": false}]}`)})
	if tk, err = Load(write(t, "hostile2", map[string]string{"tokenizer.json": tj})); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	testenv.Raises[*PatternTimeoutError](t, "Encode", func() { tk.Encode(strings.Repeat(strings.Repeat("x", 20)+"a", 80)) })
	if d := time.Since(start); d > 6*MatchTimeout {
		t.Fatalf("took %v", d)
	}
}

// TestAddedTokenOptions: Encode matches tokenizer.json's added tokens,
// special or not, with their options, as the tokenizers library's
// AddedVocabulary does; the cases are its own unit tests' (can_extract_
// added_tokens, test_single_word_is_correct, test_lstrip_unicode_space,
// test_encode_special_tokens), worked by hand: the text between the
// tokens is encoded as a tokenizer without added tokens does. Encode
// matched only the special ones (EncodeWithSpecial matched all, with no
// options), where Hugging Face's tokenizer(text) matches all of them.
func TestAddedTokenOptions(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "gpt2-tiny-json", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	load := func(normalizer, added string) *Tokenizer {
		t.Helper()
		var tj map[string]any
		if err := json.Unmarshal(b, &tj); err != nil {
			t.Fatal(err)
		}
		tj["normalizer"] = json.RawMessage(normalizer)
		tj["added_tokens"] = json.RawMessage(added)
		out, _ := json.Marshal(tj)
		tk, err := Load(write(t, "added", map[string]string{"tokenizer.json": string(out)}))
		if err != nil {
			t.Fatal(err)
		}
		return tk
	}
	tok := func(id int, content string, special, lstrip, rstrip, single, normalized bool) string {
		s, _ := json.Marshal(map[string]any{"id": id, "content": content, "special": special, "lstrip": lstrip, "rstrip": rstrip,
			"single_word": single, "normalized": normalized})
		return string(s)
	}
	// ids is the ids of parts: an int is a token's id, a string the text
	// between tokens, encoded by base
	ids := func(base *Tokenizer, parts ...any) []int {
		var out []int
		for _, p := range parts {
			switch p := p.(type) {
			case int:
				out = append(out, p)
			case string:
				out = append(out, base.Encode(p)...)
			}
		}
		return out
	}
	base := load("null", "[]")
	four := load("null", "["+tok(600, "my", false, false, false, false, true)+","+tok(601, "name", false, false, false, false, true)+","+
		tok(602, "[CLS]", true, false, false, false, false)+","+tok(603, "[SEP]", true, false, false, false, false)+"]")
	text := "[CLS] My name is Anthony [SEP]"
	check := func(what string, got, want []int) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %v\nwant %v", what, got, want)
		}
	}
	check("special and not", four.Encode(text), ids(base, 602, " My ", 601, " is Anthony ", 603))
	check("EncodeForModel", four.EncodeForModel(text), four.Encode(text))
	check("split_special_tokens", four.EncodeOrdinary(text), ids(base, "[CLS] My ", 601, " is Anthony [SEP]"))
	check("not special, in EncodeOrdinary", four.EncodeOrdinary("myname"), []int{600, 601})

	single := load("null", "["+tok(604, "<mask>", false, false, false, true, false)+"]")
	check("single_word", single.Encode("<mask> My name <mask> A<mask> <mask>ony <mask>"),
		ids(base, 604, " My name ", 604, " A<mask> <mask>ony ", 604))

	strip := load("null", "["+tok(604, "<mask>", true, true, true, true, false)+"]")
	text = "Hi <mask> there\t<mask>\t<mask>\u2000"
	check("lstrip, rstrip", strip.Encode(text), ids(base, "Hi", 604, "there", 604, 604))
	check("lstrip, rstrip, split_special_tokens", strip.EncodeOrdinary(text), base.Encode(text))

	// test_encode_special_tokens: a special <mask> left as text by
	// split_special_tokens holds the non-special, normalized ask>
	three := load("null", "["+tok(604, "<mask>", true, true, true, true, false)+","+tok(605, "ask>", false, false, false, false, true)+","+
		tok(606, "<pad>", true, false, false, false, false)+"]")
	text = "Hi <mask> there\t<mask>\t<mask>\u2000 <pad> <mask><pad><pad>"
	check("three", three.Encode(text), ids(base, "Hi", 604, "there", 604, 604, 606, 604, 606, 606))
	check("three, split_special_tokens", three.EncodeOrdinary(text),
		ids(base, "Hi <m", 605, " there\t<m", 605, "\t<m", 605, "\u2000 <pad> <m", 605, "<pad><pad>"))

	// normalized: ﬁx (NFKC fix) matches in the normalized text, ﬁy only
	// as it is
	nfkc := `{"type": "NFKC"}`
	norm := load(nfkc, "["+tok(605, "ﬁx", false, false, false, false, true)+","+tok(606, "ﬁy", false, false, false, false, false)+"]")
	nbase := load(nfkc, "[]")
	check("normalized", norm.Encode("fix ﬁx ﬁy fiy"), ids(nbase, 605, " ", 605, " ", 606, " fiy"))
}
