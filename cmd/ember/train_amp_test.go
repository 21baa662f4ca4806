package main

import (
	"bytes"
	"path/filepath"
	"testing"
)

// TestTrainAMP trains the CNN one short epoch on the synthetic dataset
// under --amp bf16 and --amp fp16 (autocast; fp16 with a GradScaler): the
// run learns as the float32 one does, and a bad --amp is refused. It sets
// trainFlags directly (parsing would leave the flags marked as set for
// workerArgs in later tests).
func TestTrainAMP(t *testing.T) {
	saved := trainFlags
	defer func() { trainFlags = saved }()
	var out bytes.Buffer
	trainCmd.SetOut(&out)
	trainCmd.SetErr(&out)
	defer trainCmd.SetOut(nil)
	defer trainCmd.SetErr(nil)
	for _, amp := range []string{"bf16", "fp16"} {
		dir := t.TempDir()
		trainFlags = saved
		f := &trainFlags
		f.dataset, f.limit, f.epochs, f.batch, f.device, f.quiet, f.amp, f.out = "synthetic", 512, 1, 64, "cpu", true, amp, dir
		if err := runTrain(trainCmd); err != nil {
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
	trainFlags = saved
	trainFlags.amp = "int8"
	if err := validateTrainFlags(trainFlags); err == nil {
		t.Error("--amp int8 was accepted")
	}
}
