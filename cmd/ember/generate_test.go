package main

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

func runCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	c, _, err := rootCmd.Find(args[:1])
	if err != nil {
		t.Fatal(err)
	}
	resetFlags(t, c)
	var out, diag bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&diag)
	rootCmd.SetArgs(args)
	defer rootCmd.SetArgs(nil)
	err = rootCmd.Execute()
	return out.String(), diag.String(), err
}

// TestGenerateGreedy: ember generate --temperature 0 --json on the tiny
// GPT-2 and Llama folders gives the prompt ids of the Python tokenizer and
// the greedy continuation PyTorch recorded (models/testdata/gen_models.py).
func TestGenerateGreedy(t *testing.T) {
	for _, dir := range []string{"../../models/gpt2/testdata/tiny", "../../models/llama/testdata/tiny"} {
		b, err := os.ReadFile(dir + "/fixture.json")
		if err != nil {
			t.Fatal(err)
		}
		var fx struct {
			Prompt    string `json:"prompt"`
			PromptIDs []int  `json:"prompt_ids"`
			Greedy    []int  `json:"greedy"`
		}
		if err := json.Unmarshal(b, &fx); err != nil {
			t.Fatal(err)
		}
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

func TestGenerateSampledIsSeeded(t *testing.T) {
	args := []string{"generate", "--model", "../../models/gpt2/testdata/tiny", "--prompt", "Hello", "--temperature", "1",
		"--top-k", "20", "--top-p", "0.9", "--max-new-tokens", "8", "--device", "cpu", "--json", "--seed", "7"}
	a, _, err := runCmd(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := runCmd(t, args...)
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
	} {
		_, _, err := runCmd(t, append(append([]string{"generate"}, tc.args...), "--device", "cpu")...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}
