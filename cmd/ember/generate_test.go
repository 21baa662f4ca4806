package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGenerateGreedy: ember generate --temperature 0 --json on the tiny
// GPT-2 and Llama folders gives the prompt ids of the Python tokenizer and
// the greedy continuation PyTorch recorded (models/testdata/gen_models.py).
func TestGenerateGreedy(t *testing.T) {
	for _, dir := range []string{"../../models/gpt2/testdata/tiny", "../../models/llama/testdata/tiny"} {
		fx := modelFixture(t, dir)
		out, _, err := runCmd(t, "generate", "--model", dir, "--prompt", fx.Prompt, "--temperature", "0",
			"--max-new-tokens", "12", "--device", "cpu", "--json")
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			PromptIDs []int  `json:"prompt_ids"`
			IDs       []int  `json:"ids"`
			Text      string `json:"text"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%s: %v in %q", dir, err, out)
		}
		if !slices.Equal(got.PromptIDs, fx.PromptIDs) || !slices.Equal(got.IDs, fx.Greedy) {
			t.Errorf("%s: prompt_ids %v ids %v, want %v %v", dir, got.PromptIDs, got.IDs, fx.PromptIDs, fx.Greedy)
		}
		// streamed: the same text after the prompt, then the counts
		sout, serr, err := runCmd(t, "generate", "--model", dir, "--prompt", fx.Prompt, "--temperature", "0",
			"--max-new-tokens", "12", "--device", "cpu")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(sout, fx.Prompt) || !strings.Contains(serr, "prompt tokens 10, new tokens 12, ") {
			t.Errorf("%s: streamed %q, stderr %q", dir, sout, serr)
		}
	}
}

// TestGenerateHalf: --dtype bf16 and fp16 on the bf16 checkpoints give
// the greedy continuation PyTorch's forward in that dtype gives
// (models/testdata/gen_half.py), which on these fixtures is also the
// float32 model's; --dtype fp32 widens the bf16 file.
func TestGenerateHalf(t *testing.T) {
	for _, dir := range []string{"../../models/gpt2/testdata/tiny-bf16", "../../models/llama/testdata/tiny-bf16"} {
		b, err := os.ReadFile(dir + "/fixture.json")
		if err != nil {
			t.Fatal(err)
		}
		var fx map[string]json.RawMessage
		if err := json.Unmarshal(b, &fx); err != nil {
			t.Fatal(err)
		}
		var prompt string
		var greedy32 []int
		json.Unmarshal(fx["prompt"], &prompt)
		json.Unmarshal(fx["greedy_float32"], &greedy32)
		for flag, key := range map[string]string{"bf16": "bfloat16", "fp16": "float16", "fp32": ""} {
			want := greedy32
			if key != "" {
				var d struct {
					Greedy []int `json:"greedy"`
				}
				json.Unmarshal(fx[key], &d)
				want = d.Greedy
			}
			out, _, err := runCmd(t, "generate", "--model", dir, "--prompt", prompt, "--temperature", "0",
				"--max-new-tokens", "12", "--device", "cpu", "--json", "--dtype", flag)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				IDs []int `json:"ids"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%s: %v in %q", dir, err, out)
			}
			if len(want) != 12 || !slices.Equal(got.IDs, want) {
				t.Errorf("%s --dtype %s: ids %v, want %v", dir, flag, got.IDs, want)
			}
		}
	}
}

func TestGenerateSampledIsSeeded(t *testing.T) {
	args := []string{"generate", "--model", "../../models/gpt2/testdata/tiny", "--prompt", "Hello", "--temperature", "1",
		"--top-k", "20", "--top-p", "0.9", "--max-new-tokens", "8", "--device", "cpu", "--json", "--seed", "7"}
	a, _, err := runCmd(t, args[0], args[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := runCmd(t, args[0], args[1:]...)
	if a != b {
		t.Errorf("the same seed gave %s and %s", a, b)
	}
}

func TestGenerateErrors(t *testing.T) {
	long := strings.Repeat("x", 40) // 40 tokens: the tiny GPT-2's context is 32
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "../../models/gpt2/testdata/tiny-bin", "--prompt", "Hi"}, "no tokenizer.json and no vocab.json + merges.txt"},
		{[]string{"--model", "../../models/gpt2/testdata/tiny", "--prompt", long}, "prompt longer than the model's context: 40 tokens, the context is 32"},
		{[]string{"--prompt", "Hi"}, "--model DIR is required"},
		{[]string{"--model", "../../models/gpt2/testdata/tiny", "--prompt", "Hi", "--dtype", "int8"}, `--dtype "int8": want fp32, bf16 or fp16`},
		{[]string{"--model", "../../models/gpt2/testdata/tiny", "--prompt", "Hi", "--temperature", "-1"}, "--temperature -1: want 0"},
		{[]string{"--model", "../../models/gpt2/testdata/tiny", "--prompt", "Hi", "--temperature", "NaN"}, "--temperature NaN: want 0"},
		{[]string{"--model", "../../models/gpt2/testdata/tiny", "--prompt", "Hi", "--top-k", "-3"}, "--top-k -3: want 0"},
		{[]string{"--model", "../../models/gpt2/testdata/tiny", "--prompt", "Hi", "--top-p", "1.5"}, "--top-p 1.5: want 0 to 1"},
	} {
		out, _, err := runCmd(t, "generate", append(tc.args, "--device", "cpu")...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
		if out != "" { // the prompt was echoed before the error
			t.Errorf("%v: printed %q before failing", tc.args, out)
		}
	}
}

// TestGenerateFromHubCache: --model NAME finds the snapshot in the Hugging
// Face hub cache (files symlinked to blobs, as huggingface_hub stores
// them) and gives the same greedy ids as the folder.
func TestGenerateFromHubCache(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("HF_HUB_CACHE", cache)
	const commit = "0123456789abcdef0123456789abcdef01234567"
	base := filepath.Join(cache, "models--ember--tiny-gpt2")
	snap := filepath.Join(base, "snapshots", commit)
	for _, d := range []string{filepath.Join(base, "refs"), filepath.Join(base, "blobs"), snap} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(base, "refs", "main"), []byte(commit), 0o644)
	for i, f := range []string{"config.json", "model.safetensors", "vocab.json", "merges.txt"} {
		b, err := os.ReadFile(filepath.Join("../../models/gpt2/testdata/tiny", f))
		if err != nil {
			t.Fatal(err)
		}
		blob := filepath.Join(base, "blobs", strings.Repeat(string(rune('a'+i)), 8))
		os.WriteFile(blob, b, 0o644)
		if err := os.Symlink(filepath.Join("..", "..", "blobs", filepath.Base(blob)), filepath.Join(snap, f)); err != nil {
			t.Fatal(err)
		}
	}
	out, _, err := runCmd(t, "generate", "--model", "ember/tiny-gpt2", "--prompt", "Hello world", "--temperature", "0",
		"--max-new-tokens", "5", "--device", "cpu", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"ids":[368,173,244,244,244]`) {
		t.Errorf("from the hub cache: %s", out)
	}
	_, _, err = runCmd(t, "generate", "--model", "ember/absent", "--prompt", "Hi", "--device", "cpu")
	if err == nil || !strings.Contains(err.Error(), "not in the Hugging Face cache") {
		t.Errorf("absent model: %v", err)
	}
}

// TestGeneratePromptTemplate: a tokenizer.json whose post_processor puts a
// token first (Llama 3's <|begin_of_text|>; here <|endoftext|>, id 563)
// gives ember generate and ember tokenize that token before the prompt's
// ids, as Hugging Face's tokenizer(prompt) does; --no-special leaves it out.
func TestGeneratePromptTemplate(t *testing.T) {
	dir, tj := tinyModelDir(t, "llama")
	const old = `"post_processor": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true}`
	tmpl := `"post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
		"special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [563], "tokens": ["<|endoftext|>"]}}}`
	if !strings.Contains(string(tj), old) {
		t.Fatal("the fixture's post_processor changed")
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte(strings.Replace(string(tj), old, tmpl, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	plain, err := runTokenize(t, "--model", "../../tokenizer/testdata/gpt2-tiny-json", "--no-special", "Hello world")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	if err := json.Unmarshal([]byte(plain), &ids); err != nil || len(ids) == 0 {
		t.Fatalf("%q: %v", plain, err)
	}
	want := append([]int{563}, ids...)
	out, _, err := runCmd(t, "generate", "--model", dir, "--prompt", "Hello world", "--temperature", "0",
		"--max-new-tokens", "2", "--device", "cpu", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		PromptIDs []int `json:"prompt_ids"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || !slices.Equal(got.PromptIDs, want) {
		t.Fatalf("prompt_ids %v (%v), want %v", got.PromptIDs, err, want)
	}
	tok, err := runTokenize(t, "--model", dir, "Hello world")
	if w, _ := json.Marshal(want); err != nil || strings.TrimSpace(tok) != string(w) {
		t.Fatalf("tokenize: %q, %v; want %s", tok, err, w)
	}
	if tok, err := runTokenize(t, "--model", dir, "--no-special", "Hello world"); err != nil || tok != plain {
		t.Fatalf("tokenize --no-special: %q, %v; want %q", tok, err, plain)
	}
}

// TestGenerateEOSList: a config's eos_token_id list (Llama 3.2 Instruct's
// [128001, 128008, 128009]) stops generation at any of its ids; only the
// first stopped it, so an instruct model ran on past its end of turn.
func TestGenerateEOSList(t *testing.T) {
	const src = "../../models/llama/testdata/tiny"
	fx := modelFixture(t, src)
	dir := t.TempDir()
	for _, f := range []string{"config.json", "model.safetensors", "vocab.json", "merges.txt"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "config.json" { // the third greedy token, second in the list
			b = []byte(strings.Replace(string(b), `"eos_token_id": null`, fmt.Sprintf(`"eos_token_id": [563, %d]`, fx.Greedy[2]), 1))
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		flags []string
		want  []int
	}{
		{nil, fx.Greedy[:3]},
		{[]string{"--ignore-eos"}, fx.Greedy},
	} {
		out, _, err := runCmd(t, "generate", append([]string{"--model", dir, "--prompt", fx.Prompt, "--temperature", "0",
			"--max-new-tokens", "12", "--device", "cpu", "--json"}, c.flags...)...)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			IDs []int `json:"ids"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil || !slices.Equal(got.IDs, c.want) {
			t.Errorf("%v: ids %v (%v), want %v", c.flags, got.IDs, err, c.want)
		}
	}
}

// TestGeneratePromptPastVocab: a tokenizer with a token the model's
// embedding lacks (an added token past vocab_size) is an error naming
// both, not the embedding's panic out of the command.
func TestGeneratePromptPastVocab(t *testing.T) {
	dir, tj := tinyModelDir(t, "gpt2")
	added := `"added_tokens": [{"id": 600, "content": "<|user|>", "special": true}, `
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte(strings.Replace(string(tj), `"added_tokens": [`, added, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := runCmd(t, "generate", "--model", dir, "--prompt", "<|user|> hi", "--max-new-tokens", "2", "--device", "cpu", "--json")
	if err == nil || !strings.Contains(err.Error(), "token 600 is past the model's vocabulary of 564") {
		t.Fatalf("%v, want an error naming token 600 and the vocabulary of 564", err)
	}
}

// genFolder copies the tiny GPT-2 folder (config, weights, vocab.json and
// merges.txt) to a temporary one, with files added or replaced.
func genFolder(t *testing.T, files map[string]string) string {
	t.Helper()
	const src = "../../models/gpt2/testdata/tiny"
	dir := t.TempDir()
	for _, f := range []string{"config.json", "model.safetensors", "vocab.json", "merges.txt"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for f, s := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// genJSON runs ember generate --json with args and returns its ids.
func genJSON(t *testing.T, args ...string) (promptIDs, ids []int, text string) {
	t.Helper()
	out, _, err := runCmd(t, "generate", append([]string{"--device", "cpu", "--json"}, args...)...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	var got struct {
		PromptIDs []int  `json:"prompt_ids"`
		IDs       []int  `json:"ids"`
		Text      string `json:"text"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %v in %q", args, err, out)
	}
	return got.PromptIDs, got.IDs, got.Text
}

// TestGenerateConfig: generation_config.json is read as transformers
// reads it: its eos_token_id stops generation (PyTorch's greedy ids of
// the tiny GPT-2 stop at their third, 244), do_sample false is greedy
// without --temperature 0, do_sample true samples with its settings
// (transformers' top_k 50 where it has none), and flags override it.
// generate read no generation_config.json.
func TestGenerateConfig(t *testing.T) {
	fx := modelFixture(t, "../../models/gpt2/testdata/tiny")
	base := []string{"--prompt", fx.Prompt, "--max-new-tokens", "12", "--seed", "3"}
	plain := genFolder(t, nil)
	if _, ids, _ := genJSON(t, append([]string{"--model", genFolder(t, map[string]string{"generation_config.json": `{"eos_token_id": 244, "do_sample": false}`})}, base...)...); !slices.Equal(ids, fx.Greedy[:3]) {
		t.Errorf("eos_token_id 244, do_sample false: %v, want %v", ids, fx.Greedy[:3])
	}
	if _, ids, _ := genJSON(t, append([]string{"--model", genFolder(t, map[string]string{"generation_config.json": `{"eos_token_id": [7, 244], "do_sample": false}`}), "--ignore-eos"}, base...)...); !slices.Equal(ids, fx.Greedy) {
		t.Errorf("--ignore-eos: %v, want %v", ids, fx.Greedy)
	}
	sampled := genFolder(t, map[string]string{"generation_config.json": `{"do_sample": true, "temperature": 1.7, "top_p": 0.9}`})
	_, want, _ := genJSON(t, append([]string{"--model", plain, "--temperature", "1.7", "--top-k", "50", "--top-p", "0.9"}, base...)...)
	if _, ids, _ := genJSON(t, append([]string{"--model", sampled}, base...)...); !slices.Equal(ids, want) {
		t.Errorf("do_sample true: %v, want %v (temperature 1.7, top-k 50, top-p 0.9)", ids, want)
	}
	if slices.Equal(want, fx.Greedy) {
		t.Fatal("the sampled ids are the greedy ones: the test cannot tell them apart")
	}
	_, want, _ = genJSON(t, append([]string{"--model", plain, "--temperature", "0.9", "--top-k", "3", "--top-p", "1"}, base...)...)
	if _, ids, _ := genJSON(t, append([]string{"--model", sampled, "--temperature", "0.9", "--top-k", "3", "--top-p", "1"}, base...)...); !slices.Equal(ids, want) {
		t.Errorf("flags over do_sample true: %v, want %v", ids, want)
	}
	greedyCfg := genFolder(t, map[string]string{"generation_config.json": `{"do_sample": false}`})
	if _, ids, _ := genJSON(t, append([]string{"--model", greedyCfg, "--temperature", "0.9", "--top-k", "3"}, base...)...); !slices.Equal(ids, want) {
		t.Errorf("--temperature over do_sample false: %v, want %v", ids, want)
	}
	for cfg, msg := range map[string]string{`{"eos_token_id": "x"}`: "eos_token_id", `{`: "generation_config.json"} {
		_, _, err := runCmd(t, "generate", "--model", genFolder(t, map[string]string{"generation_config.json": cfg}), "--prompt", "hi", "--device", "cpu")
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want an error naming %s", cfg, err, msg)
		}
	}
}

// TestGenerateEmptyPrompt: an empty prompt starts from bos_token_id (of
// generation_config.json, else config.json), as transformers' generate
// does without input_ids, and continues as the prompt of that one token
// does; without one it is an error naming bos_token_id.
func TestGenerateEmptyPrompt(t *testing.T) {
	cfg, err := os.ReadFile("../../models/gpt2/testdata/tiny/config.json")
	if err != nil {
		t.Fatal(err)
	}
	withBOS := strings.Replace(string(cfg), `"model_type": "gpt2",`, `"model_type": "gpt2", "bos_token_id": 563,`, 1)
	args := []string{"--prompt", "", "--temperature", "0", "--max-new-tokens", "5"}
	_, want, _ := genJSON(t, "--model", genFolder(t, nil), "--prompt", "<|endoftext|>", "--temperature", "0", "--max-new-tokens", "5")
	for _, files := range []map[string]string{
		{"config.json": withBOS},
		{"generation_config.json": `{"bos_token_id": 563}`},
	} {
		prompt, ids, _ := genJSON(t, append([]string{"--model", genFolder(t, files)}, args...)...)
		if !slices.Equal(prompt, []int{563}) || !slices.Equal(ids, want) {
			t.Errorf("%v: prompt %v ids %v, want [563] %v", files, prompt, ids, want)
		}
	}
	if _, _, err := runCmd(t, "generate", append([]string{"--model", genFolder(t, nil), "--device", "cpu"}, args...)...); err == nil || !strings.Contains(err.Error(), "bos_token_id") {
		t.Errorf("no bos_token_id: %v", err)
	}
}

// TestGenerateUnknownID: a model that produces an id its tokenizer lacks
// (a vocabulary padded past the tokenizer's: here the tokenizer's "ed",
// PyTorch's first greedy token 368, is moved to id 600) leaves it out of
// the text, as Hugging Face's decode does; generate failed at the end,
// after the text had streamed.
func TestGenerateUnknownID(t *testing.T) {
	vocab, err := os.ReadFile("../../models/gpt2/testdata/tiny/vocab.json")
	if err != nil {
		t.Fatal(err)
	}
	moved := strings.Replace(string(vocab), `"ed": 368,`, `"ed": 600,`, 1)
	if moved == string(vocab) {
		t.Fatal("no \"ed\": 368 in vocab.json")
	}
	dir := genFolder(t, map[string]string{"vocab.json": moved})
	_, ids, text := genJSON(t, "--model", dir, "--prompt", "Hello world", "--temperature", "0", "--max-new-tokens", "3")
	if !slices.Equal(ids, []int{368, 173, 244}) {
		t.Fatalf("ids %v, want PyTorch's greedy 368 173 244", ids)
	}
	_, _, want := genJSON(t, "--model", genFolder(t, nil), "--prompt", "Hello world", "--temperature", "0", "--max-new-tokens", "3")
	if want != "ed"+text || text == "" {
		t.Errorf("text %q, want the text of 173 244 (%q without its \"ed\")", text, want)
	}
	out, _, err := runCmd(t, "generate", "--model", dir, "--prompt", "Hello world", "--temperature", "0", "--max-new-tokens", "3", "--device", "cpu")
	// 173 and 244 are the bytes 0xad and 0xf4 (GPT-2's Ń and ô)
	if err != nil || out != "Hello world\xad\xf4\n" {
		t.Errorf("streamed %q, %v; want %q", out, err, "Hello world\xad\xf4\n")
	}
}

// tinyModelDir copies the tiny test model of models/<model>/testdata (its
// config.json and weights) into a new folder, and returns it with the
// tiny GPT-2 tokenizer.json for the caller to change and write there.
func tinyModelDir(t *testing.T, model string) (string, []byte) {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"config.json", "model.safetensors"} {
		b, err := os.ReadFile(filepath.Join("../../models", model, "testdata/tiny", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tj, err := os.ReadFile("../../tokenizer/testdata/gpt2-tiny-json/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	return dir, tj
}

// genFixture is a tiny model folder's fixture.json: a prompt, its ids and
// the greedy continuation PyTorch recorded (models/testdata/gen_models.py).
type genFixture struct {
	Prompt    string `json:"prompt"`
	PromptIDs []int  `json:"prompt_ids"`
	Greedy    []int  `json:"greedy"`
}

// modelFixture reads dir's fixture.json.
func modelFixture(t *testing.T, dir string) genFixture {
	t.Helper()
	b, err := os.ReadFile(dir + "/fixture.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx genFixture
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	return fx
}
