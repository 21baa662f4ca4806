package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDeviceMetaRefused: --device meta is a one-line error naming the flag
// on every command that computes. It reached the commands: train, eval and
// generate panicked ("meta tensors have no data") with a stack trace, and
// predict and onnx test printed zeros as if they were results.
func TestDeviceMetaRefused(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	for _, args := range [][]string{
		{"train", "--out", dir, "--dataset", "synthetic", "--epochs", "1"},
		{"train", "--out", dir, "--model", "gpt", "--dataset", "text:../../go.mod"},
		{"eval", "--weights", missing},
		{"predict", "--weights", missing, missing},
		{"generate", "--model", "../../models/gpt2/testdata/tiny", "--prompt", "Hi"},
		{"onnx", "run", missing, "--output-dir", dir},
		{"onnx", "test", missing},
	} {
		var out string
		var err error
		if args[0] == "onnx" {
			out, err = runONNX(t, append(args[1:], "--device", "meta")...)
		} else {
			out, _, err = runCmd(t, args[0], append(args[1:], "--device", "meta")...)
		}
		if err == nil || !strings.Contains(err.Error(), "--device meta: meta tensors have no data") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v --device meta: %v, want a one-line error naming --device meta", args, err)
		}
		if out != "" {
			t.Errorf("%v --device meta printed %q", args, out)
		}
	}
}

// TestTypedPanicIsAnError: a typed ember panic inside a command (here
// PyTorch's batch-norm error: one sample of 1×1 features in training) is
// the command's one-line error; it was a panic with a goroutine trace.
func TestTypedPanicIsAnError(t *testing.T) {
	root := colourFolder(t, 1, 1)
	_, _, err := runCmd(t, "train", "--model", "resnet18", "--dataset", "imagefolder:"+root, "--image-size", "16", "--batch", "1",
		"--epochs", "1", "--device", "cpu", "--quiet", "--workers", "0", "--out", filepath.Join(t.TempDir(), "run"))
	// (a *ember.ShapeError here, PyTorch's ValueError in later ember: the
	// point is the one-line error, whichever typed error it is)
	if err == nil || !strings.Contains(err.Error(), "batch_norm: Expected more than 1 value per channel when training, got input size [1, 256, 1, 1]") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("train: %v, want batch_norm's one-line error", err)
	}
}
