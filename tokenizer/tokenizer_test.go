package tokenizer

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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
			if got := tk.Encode(text); !reflect.DeepEqual(nz(got), nz(c.IDs)) {
				t.Errorf("%s case %d %q: Encode\n got %v\nwant %v", name, i, text, got, c.IDs)
			}
			if got := tk.EncodeWithSpecial(text); !reflect.DeepEqual(nz(got), nz(c.IDsSpecial)) {
				t.Errorf("%s case %d %q: EncodeWithSpecial\n got %v\nwant %v", name, i, text, got, c.IDsSpecial)
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
	got := tk.EncodeWithSpecial("<|endoftext|>")
	if len(got) != 1 || got[0] != eot {
		t.Fatalf("EncodeWithSpecial = %v, want [%d]", got, eot)
	}
	if got := tk.Encode("<|endoftext|>"); len(got) < 2 {
		t.Fatalf("Encode treats the special token as text: %v", got)
	}
}

func TestAddPrefixSpace(t *testing.T) {
	tk := tokenizers(t)["gpt2-tiny-json"]
	tk2, err := Load(filepath.Join("testdata", "gpt2-tiny-json"))
	if err != nil {
		t.Fatal(err)
	}
	tk2.addPrefixSpace = true
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
		for _, ids := range [][]int{tk.Encode(string(b)), tk.EncodeWithSpecial(string(b))} {
			back, err := tk.Decode(ids)
			if err != nil || back != string(b) {
				t.Fatalf("%q → %v → %q, %v", b, ids, back, err)
			}
		}
	})
}

// fuzzTokenizer checks what a loaded tokenizer does with text and ids.
func fuzzTokenizer(t *testing.T, tk *Tokenizer) {
	for _, s := range []string{"Hello world", " \x00\xff", "<|endoftext|>"} {
		ids := tk.EncodeWithSpecial(s)
		if back, err := tk.Decode(ids); err != nil || back != s {
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
