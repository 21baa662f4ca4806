package main

import (
	"bytes"
	"path/filepath"
	"testing"
)

// TestTrainAMP trains the CNN one short epoch on the synthetic dataset
// under --amp bf16 and --amp fp16 (autocast; fp16 with a GradScaler): the
// run learns as the float32 one does, and a bad --amp is refused.
func TestTrainAMP(t *testing.T) {
	defer func() { trainFlags.amp = "" }()
	var out bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&out)
	defer rootCmd.SetErr(nil)
	for _, amp := range []string{"bf16", "fp16"} {
		dir := t.TempDir()
		rootCmd.SetArgs([]string{"train", "--dataset", "synthetic", "--limit", "512", "--epochs", "1", "--batch", "64", "--device", "cpu", "--quiet", "--amp", amp, "--out", dir})
		if err := rootCmd.Execute(); err != nil {
			t.Fatalf("--amp %s: %v", amp, err)
		}
		rows, err := readMetrics(filepath.Join(dir, "metrics.csv"))
		if err != nil || len(rows) != 1 {
			t.Fatalf("--amp %s: metrics %v, %v", amp, rows, err)
		}
		// the float32 run of these flags: test accuracy 0.97, train loss 0.82
		if rows[0].testAcc < 0.8 || rows[0].trainLoss > 1.2 {
			t.Errorf("--amp %s after one epoch: %+v", amp, rows[0])
		}
	}
	rootCmd.SetArgs([]string{"train", "--dataset", "synthetic", "--amp", "int8", "--out", t.TempDir()})
	if err := rootCmd.Execute(); err == nil {
		t.Error("--amp int8 was accepted")
	}
}
