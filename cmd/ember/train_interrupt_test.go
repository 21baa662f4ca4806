package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emberml/ember/vision/models"
	"github.com/emberml/ember/weights"
)

// trainRun runs ember train in-process; interruptAt (epoch, batch), if not
// (-1, -1), cancels the run as Ctrl-C would, after that batch.
func trainRun(t *testing.T, dir string, epochs string, interruptEpoch, interruptBatch int, extra ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	interruptContext = func() (context.Context, context.CancelFunc) { return ctx, cancel }
	afterBatch = func(e, b int) {
		if e == interruptEpoch && b == interruptBatch {
			cancel()
		}
	}
	defer func() {
		interruptContext = func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }
		afterBatch = nil
	}()
	var out bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&out)
	defer rootCmd.SetOut(nil)
	defer rootCmd.SetErr(nil)
	args := append([]string{"train", "--dataset", "synthetic", "--limit", "320", "--batch", "64", "--epochs", epochs,
		"--device", "cpu", "--quiet", "--workers", "0", "--out", dir}, extra...)
	resetFlags(t, trainCmd)
	rootCmd.SetArgs(args)
	err := rootCmd.Execute()
	resetFlags(t, trainCmd)
	return out.String(), err
}

func epochOf(t *testing.T, path string) (string, string) {
	t.Helper()
	_, meta, err := loadWeights(path)
	if err != nil {
		t.Fatal(err)
	}
	return meta["epoch"], meta["batch"]
}

func TestTrainInterruptAndResume(t *testing.T) {
	dir := t.TempDir()
	model, mid := filepath.Join(dir, "model.safetensors"), filepath.Join(dir, "interrupted.safetensors")
	// Ctrl-C after batch 2 of epoch 1 (5 batches an epoch): exit 130, the
	// position saved apart, no end-of-epoch checkpoint claimed
	_, err := trainRun(t, dir, "2", 0, 2)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 130 || !strings.Contains(ee.msg, "after batch 2 of 5") {
		t.Fatalf("interrupt: %v, want exit 130 naming batch 2 of 5", err)
	}
	if _, err := os.Stat(model); err == nil {
		t.Fatal("an interrupt in the first epoch wrote model.safetensors")
	}
	if e, b := epochOf(t, mid); e != "0" || b != "2" {
		t.Fatalf("interrupted checkpoint: epoch %q batch %q, want 0 and 2", e, b)
	}
	// --resume says what it picked up and goes on from batch 3; interrupt
	// again in epoch 2: the end-of-epoch checkpoint of epoch 1 stays
	out, err := trainRun(t, dir, "2", 1, 3, "--resume")
	if !strings.Contains(out, "interrupted.safetensors: epoch 1 from batch 3 of 5") {
		t.Fatalf("resume output:\n%s", out)
	}
	if !errors.As(err, &ee) || ee.code != 130 {
		t.Fatalf("second interrupt: %v", err)
	}
	if e, b := epochOf(t, model); e != "1" || b != "" {
		t.Fatalf("model.safetensors: epoch %q batch %q, want the finished epoch 1", e, b)
	}
	if e, b := epochOf(t, mid); e != "1" || b != "3" {
		t.Fatalf("interrupted checkpoint: epoch %q batch %q, want 1 and 3", e, b)
	}
	// a mid-epoch resume with another seed would shuffle the rest of the
	// epoch differently: refused, naming the flag, changing nothing
	if _, err := trainRun(t, dir, "2", -1, -1, "--resume", "--seed", "7"); err == nil || !strings.Contains(err.Error(), "with --seed 0; resuming it with --seed 7 would repeat or skip samples") {
		t.Fatalf("mid-epoch resume with another seed: %v", err)
	}
	// resume to the end: the interrupted checkpoint is gone afterwards
	if out, err = trainRun(t, dir, "2", -1, -1, "--resume"); err != nil || !strings.Contains(out, "epoch 2 from batch 4 of 5") {
		t.Fatalf("final resume: %v\n%s", err, out)
	}
	if _, err := os.Stat(mid); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("interrupted checkpoint left after its epoch finished: %v", err)
	}
	rows, err := readMetrics(filepath.Join(dir, "metrics.csv"))
	if err != nil || len(rows) != 2 || rows[1].epoch != 2 {
		t.Fatalf("metrics %v, %v", rows, err)
	}
	// resuming a finished run says so
	if out, err = trainRun(t, dir, "2", -1, -1, "--resume"); err != nil || !strings.Contains(out, "nothing to do") {
		t.Fatalf("resuming a finished run: %v\n%s", err, out)
	}
}

func TestTrainFlagValidation(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ flag, val, want string }{
		{"--batch", "0", "--batch 0: want at least 1"},
		{"--epochs", "0", "--epochs 0: want at least 1"},
		{"--limit", "-5", "--limit -5"},
		{"--workers", "-1", "--workers -1"},
		{"--lr", "-1", "--lr -1"},
		{"--lr", "NaN", "--lr NaN"},
		{"--momentum", "NaN", "--momentum and --weight-decay"},
		{"--model", "bogus", `--model "bogus"`},
		{"--dataset", "text:x.txt", "--dataset text:x.txt is text: it trains --model gpt, not cnn"},
	} {
		_, err := trainRun(t, dir, "1", -1, -1, c.flag, c.val)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s %s: %v, want a one-line error with %q", c.flag, c.val, err, c.want)
		}
	}
	folder := "imagefolder:" + dir
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dataset", "imagefolder:" + filepath.Join(dir, "nope")}, "--dataset imagefolder:" + filepath.Join(dir, "nope") + ": not a folder"},
		{[]string{"--dataset", folder, "--image-size", "2"}, "--image-size 2: want 8 to 4096"},
		{[]string{"--dataset", folder, "--unfreeze-at", "-1"}, "--unfreeze-at -1: want 0"},
		{[]string{"--dataset", folder, "--num-classes", "-2"}, "--num-classes -2: want 0"},
	} {
		_, err := trainRun(t, dir, "1", -1, -1, append([]string{"--model", "resnet18"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want a one-line error with %q", c.args, err, c.want)
		}
	}
	var out bytes.Buffer
	trainCmd.SetOut(&out)
	defer trainCmd.SetOut(nil)
	if err := trainCmd.Help(); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--ddp") && !strings.Contains(line, "--ddp    ") {
			t.Errorf("--ddp looks as if it took an argument: %q", line)
		}
	}
}

func TestProgressOffTerminal(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, 100, "epoch 1/1")
	for range 100 {
		p.add("loss 0.5000")
	}
	p.finish()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 10 || lines[9] != "epoch 1/1 batch 100/100 loss 0.5000" || b.Len() > 400 {
		t.Fatalf("%d lines, %d bytes:\n%s", len(lines), b.Len(), b.String())
	}
}

func TestEvalAndDataErrorsNameTheFlag(t *testing.T) {
	dir := t.TempDir()
	w := filepath.Join(dir, "plain.safetensors")
	if err := weights.SaveSafetensors(w, models.SimpleCNN(1, 10).StateDict()); err != nil {
		t.Fatal(err)
	}
	rootCmd.SetArgs([]string{"eval", "--weights", w, "--device", "cpu", "--dataset", "synthetic"})
	err := rootCmd.Execute()
	resetFlags(t, evalCmd)
	if err == nil || !strings.Contains(err.Error(), "pass --model") {
		t.Fatalf("eval without metadata: %v, want a request for --model", err)
	}
	for _, c := range [][2]string{{"--batch", "0"}, {"--batch", "-4"}, {"--limit", "-3"}} {
		rootCmd.SetArgs([]string{"eval", "--weights", w, "--device", "cpu", "--dataset", "synthetic", "--model", "cnn", c[0], c[1]})
		err := rootCmd.Execute()
		resetFlags(t, evalCmd)
		if want := c[0] + " " + c[1] + ": want"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("eval %s %s: %v, want an error with %q", c[0], c[1], err, want)
		}
	}
	_, err = trainRun(t, dir, "1", -1, -1, "--dataset", "fashion-mnist", "--data-dir", filepath.Join(dir, "missing"))
	if err == nil || !strings.Contains(err.Error(), "--data-dir") {
		t.Fatalf("missing data folder: %v, want it to name --data-dir", err)
	}
}

func TestBenchStatusLine(t *testing.T) {
	var b bytes.Buffer
	s := &statusLine{w: &b}
	fmt.Fprintln(s, "sgemm_256  1.0 ms")
	fmt.Fprintln(s, "sum_16M    2.0 ms")
	s.clear()
	if got := b.String(); got != "\r\x1b[Ksgemm_256  1.0 ms\r\x1b[Ksum_16M    2.0 ms\r\x1b[K" || strings.Contains(got, "\n") {
		t.Fatalf("%q", got)
	}
}
