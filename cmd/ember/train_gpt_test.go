package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/weights"
)

// TestTrainGPT: a tiny byte-level GPT learns a repetitive text (the
// validation loss falls far below a uniform guess's ln 256 ≈ 5.545 nats),
// writes metrics, plot and a checkpoint that ember generate loads as a
// GPT-2 folder, and --resume of the finished run has nothing to do.
func TestTrainGPT(t *testing.T) {
	dir := t.TempDir()
	text := strings.Repeat("func main() { fmt.Println(\"hello, world\") }\n", 400)
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	args := []string{"train", "--model", "gpt", "--dataset", "text:" + filepath.Join(dir, "a.go"), "--n-layer", "1", "--n-head", "2",
		"--n-embd", "32", "--block-size", "32", "--batch", "8", "--max-steps", "60", "--eval-interval", "30", "--eval-iters", "2",
		"--warmup", "5", "--lr", "1e-2", "--sample", "20", "--device", "cpu", "--out", out, "--quiet"}
	stdout, _, err := runCmd(t, args[0], args[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "--- sample ---\nfunc ") || !strings.Contains(stdout, "step 60: train loss") {
		t.Errorf("output:\n%s", stdout)
	}
	rows, err := readGPTMetrics(filepath.Join(out, "metrics.csv"))
	if err != nil || len(rows) != 2 {
		t.Fatalf("metrics: %v, %v", rows, err)
	}
	if v := rows[1].valLoss; !(v < 0.5*math.Log(256)) {
		t.Errorf("validation loss %v after 60 steps, want well below ln 256 = %.3f", v, math.Log(256))
	}
	for _, f := range []string{"plot.png", "model.safetensors", "optim.safetensors", "config.json", "vocab.json", "merges.txt"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	gen, _, err := runCmd(t, "generate", "--model", out, "--prompt", "func ", "--max-new-tokens", "10", "--temperature", "0", "--device", "cpu", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		PromptIDs []int `json:"prompt_ids"`
		IDs       []int `json:"ids"`
	}
	if err := json.Unmarshal([]byte(gen), &g); err != nil || len(g.IDs) != 10 || len(g.PromptIDs) != 5 || g.PromptIDs[0] != 'f' {
		t.Errorf("generate from the checkpoint: %s (%v)", gen, err)
	}
	stdout, _, err = runCmd(t, args[0], append(args[1:], "--resume")...)
	if err != nil || !strings.Contains(stdout, "nothing to do") {
		t.Errorf("--resume of a finished run: %v\n%s", err, stdout)
	}
}

func TestTrainGPTBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dataset", "fashion-mnist"}, "--dataset text:PATH"},
		{[]string{"--dataset", "text:/nonexistent/x"}, "no such file"},
		{[]string{"--dataset", "text:.", "--n-embd", "30", "--n-head", "4"}, "--n-embd 30 is not a multiple of --n-head 4"},
		{[]string{"--dataset", "text:.", "--min-lr-frac", "NaN"}, "--min-lr-frac NaN: want 0 to 1"},
		{[]string{"--dataset", "text:.", "--min-lr-frac", "2"}, "--min-lr-frac 2: want 0 to 1"},
		{[]string{"--dataset", "text:.", "--grad-clip", "NaN"}, "--grad-clip NaN not negative"},
		// go.mod's last tenth is shorter than a window: an error, not IntN's panic
		{[]string{"--dataset", "text:../../go.mod", "--block-size", "4096", "--max-steps", "1"}, "--block-size 4096 needs more than 4096 in each"},
		// past gpt2.MaxDim: New's panic out of the command
		{[]string{"--dataset", "text:.", "--n-embd", "4294967296", "--n-head", "1", "--max-steps", "1"}, "must be at most 2147483648"},
	} {
		_, _, err := runCmd(t, "train", append([]string{"--model", "gpt", "--device", "cpu", "--out", t.TempDir()}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestTrainGPTAMP: --amp bf16 and --amp fp16 (autocast; fp16 with a
// GradScaler, unscaled before the clipping) train the tiny GPT of
// TestTrainGPT as the float32 run does: the validation loss falls far
// below a uniform guess's, and the checkpoint's parameters stay float32.
func TestTrainGPTAMP(t *testing.T) {
	dir := t.TempDir()
	text := strings.Repeat("func main() { fmt.Println(\"hello, world\") }\n", 400)
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, amp := range []string{"bf16", "fp16"} {
		out := filepath.Join(dir, amp)
		stdout, _, err := runCmd(t, "train", "--model", "gpt", "--dataset", "text:"+filepath.Join(dir, "a.go"), "--n-layer", "1", "--n-head", "2",
			"--n-embd", "32", "--block-size", "32", "--batch", "8", "--max-steps", "60", "--eval-interval", "60", "--eval-iters", "2",
			"--warmup", "5", "--lr", "1e-2", "--device", "cpu", "--out", out, "--quiet", "--amp", amp)
		if err != nil {
			t.Fatalf("--amp %s: %v", amp, err)
		}
		if !strings.Contains(stdout, "amp: autocast to ") {
			t.Errorf("--amp %s: output\n%s", amp, stdout)
		}
		rows, err := readGPTMetrics(filepath.Join(out, "metrics.csv"))
		if err != nil || len(rows) != 1 {
			t.Fatalf("--amp %s: metrics %v, %v", amp, rows, err)
		}
		t.Logf("--amp %s: train loss %.4f, validation loss %.4f", amp, rows[0].trainLoss, rows[0].valLoss)
		if v := rows[0].valLoss; !(v < 0.5*math.Log(256)) {
			t.Errorf("--amp %s: validation loss %v after 60 steps, want well below ln 256 = %.3f", amp, v, math.Log(256))
		}
		sd, err := weights.LoadSafetensors(filepath.Join(out, "model.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		if w := sd["transformer.h.0.attn.c_attn.weight"]; w == nil || w.DType() != ember.Float32 {
			t.Errorf("--amp %s: checkpoint weight %v", amp, w)
		}
	}
	_, _, err := runCmd(t, "train", "--model", "gpt", "--dataset", "text:"+filepath.Join(dir, "a.go"), "--device", "cpu",
		"--out", t.TempDir(), "--amp", "int8")
	if err == nil || !strings.Contains(err.Error(), `--amp "int8": want bf16 or fp16`) {
		t.Errorf("--amp int8: %v", err)
	}
}

// TestTrainGPTShortContext: --sample with a --block-size shorter than the
// sample's prompt "func " samples after its end; the run failed at its
// first evaluation with "prompt longer than the model's context".
func TestTrainGPTShortContext(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte(strings.Repeat("abcd\n", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, err := runCmd(t, "train", "--model", "gpt", "--dataset", "text:"+filepath.Join(dir, "a.txt"), "--n-layer", "1", "--n-head", "1",
		"--n-embd", "8", "--block-size", "3", "--batch", "2", "--max-steps", "2", "--eval-interval", "2", "--eval-iters", "1",
		"--sample", "10", "--device", "cpu", "--out", filepath.Join(dir, "run"), "--quiet")
	if err != nil {
		t.Fatal(err)
	}
	// the last 2 bytes of the prompt, then 1 character: the context of 3
	const head = "--- sample ---\nc "
	i := strings.Index(stdout, head)
	if i < 0 || len(stdout) < i+len(head)+2 || stdout[i+len(head)+1] != '\n' {
		t.Errorf("output:\n%s", stdout)
	}
}
