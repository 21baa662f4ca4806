package main

import (
	"errors"
	"fmt"
	"github.com/emberml/ember/dist"
	"github.com/emberml/ember/nn"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emberml/ember"
)

func TestWorkerArgs(t *testing.T) {
	resetFlags(t, trainCmd)
	defer resetFlags(t, trainCmd)
	if err := trainCmd.ParseFlags([]string{"--ddp", "--nproc-per-node", "2", "--epochs", "3", "--lr=0.1", "--out", "runs/x"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"train", "--ddp=true", "--epochs=3", "--lr=0.1", "--out=runs/x"} // pflag visits by name
	if got := workerArgs(trainCmd); !slices.Equal(got, want) {
		t.Errorf("workerArgs = %q, want %q", got, want)
	}
}

func TestTrainDDPArguments(t *testing.T) {
	if _, _, err := runCLI(t, "train", "--nproc-per-node", "2"); err == nil || !strings.Contains(err.Error(), "needs --ddp") {
		t.Errorf("--nproc-per-node without --ddp: %v", err)
	}
	t.Setenv("RANK", "0")
	if _, _, err := runCLI(t, "train", "--ddp", "--nproc-per-node", "2"); err == nil || !strings.Contains(err.Error(), "RANK is set") {
		t.Errorf("--nproc-per-node in a launched job: %v", err)
	}
	t.Setenv("WORLD_SIZE", "1")
	if _, _, err := runCLI(t, "train", "--ddp", "--backend", "mpi", "--device", "cpu"); err == nil || !strings.Contains(err.Error(), `--backend "mpi"`) {
		t.Errorf("--backend mpi: %v", err)
	}
	t.Setenv("RANK", "")
	t.Setenv("WORLD_SIZE", "")
	if _, _, err := runCLI(t, "train", "--ddp", "--device", "cpu"); err == nil || !strings.Contains(err.Error(), "--nproc-per-node N") {
		t.Errorf("--ddp outside a launched job: %v", err)
	}
	t.Setenv("RANK", "0")
	t.Setenv("WORLD_SIZE", "1")
	t.Setenv("LOCAL_RANK", "x")
	if _, _, err := runCLI(t, "train", "--ddp", "--device", "cpu"); err == nil || !strings.Contains(err.Error(), "LOCAL_RANK") {
		t.Errorf("LOCAL_RANK=x: %v", err)
	}
}

func TestDDPDeviceAndBackend(t *testing.T) {
	if ember.DeviceCount() == 0 {
		if d, err := ddpDevice("auto", 3); err != nil || d != ember.CPU {
			t.Errorf("auto without GPUs: %v, %v; want cpu", d, err)
		}
		if _, err := ddpDevice("cuda", 0); err == nil {
			t.Error("cuda without GPUs: no error")
		}
	} else {
		n := ember.DeviceCount()
		if d, err := ddpDevice("auto", n-1); err != nil || d != ember.CUDA(n-1) {
			t.Errorf("auto, local rank %d: %v, %v", n-1, d, err)
		}
		if _, err := ddpDevice("auto", n); err == nil || !strings.Contains(err.Error(), "launch at most") {
			t.Errorf("auto, local rank %d of %d GPUs: %v", n, n, err)
		}
	}
	if d, err := ddpDevice("cpu", 5); err != nil || d != ember.CPU {
		t.Errorf("cpu: %v, %v", d, err)
	}
	for _, c := range []struct {
		flag string
		dev  ember.Device
		want string
	}{{"auto", ember.CUDA(1), "nccl"}, {"auto", ember.CPU, "cpu"}, {"cpu", ember.CUDA(0), "cpu"}, {"nccl", ember.CUDA(0), "nccl"}} {
		if got, err := ddpBackend(c.flag, c.dev); err != nil || got != c.want {
			t.Errorf("ddpBackend(%q, %v) = %q, %v; want %q", c.flag, c.dev, got, err, c.want)
		}
	}
}

func TestSyntheticDataset(t *testing.T) {
	tr, te := newSynthetic(true), newSynthetic(false)
	x, y := tr.Get(13)
	if !x.Shape().Equal([]int{1, 28, 28}) || y.Item() != 3 {
		t.Fatalf("sample 13: %v, label %v", x.Shape(), y.Item())
	}
	x2, _ := tr.Get(13)
	xt, _ := te.Get(13)
	if !slices.Equal(x.Float32s(), x2.Float32s()) || slices.Equal(x.Float32s(), xt.Float32s()) {
		t.Error("a sample is not a function of (split, index)")
	}
	// Label 3 is a bar at rows 3..10 (one pixel of jitter), columns 16..22:
	// the brightest pixels (≥ 0.8; the noise is below 0.4) lie there, 24 of them.
	bright := 0
	for i, v := range x.Float32s() {
		if v >= 0.8 {
			bright++
			if r, c := i/28, i%28; r < 3 || r > 10 || c < 16 || c > 22 {
				t.Fatalf("bright pixel at (%d, %d)", r, c)
			}
		}
	}
	if bright != 24 {
		t.Errorf("%d bright pixels, want 24", bright)
	}
}

// TestTrainDDP runs `ember train --ddp --nproc-per-node 2` on the cpu
// backend: two workers (this test binary, as ember) train on the synthetic
// dataset; rank 0 alone writes the run directory and prints.
func TestTrainDDP(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(cliHelper, "1") // the launched workers run main()
	limit := 256
	if testing.Short() { // -race -short: a smoke run of 2 steps per rank
		limit = 64
	}
	out, errOut, err := runCLI(t, "train", "--ddp", "--nproc-per-node", "2", "--dataset", "synthetic", "--limit", strconv.Itoa(limit),
		"--epochs", "1", "--batch", "16", "--lr", "0.02", "--device", "cpu", "--workers", "0", "--quiet", "--out", dir)
	if err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	if want := fmt.Sprintf("[rank0]: ddp: 2 ranks (backend cpu, rank 0 on cpu); batch 16 per rank, 32 in all; %d of %d samples per rank per epoch\n", limit/2, limit); !strings.Contains(out, want) {
		t.Errorf("stdout:\n%s", out)
	}
	if strings.Contains(out, "[rank1]") || strings.Contains(errOut, "[rank1]") {
		t.Errorf("rank 1 printed:\n%s\n%s", out, errOut)
	}
	rows, err := readMetrics(filepath.Join(dir, "metrics.csv"))
	if err != nil || len(rows) != 1 {
		t.Fatalf("metrics %v, %v", rows, err)
	}
	// The synthetic bars are learnt within 8 steps of 32 samples (one
	// process: test accuracy about 0.97).
	if !testing.Short() && rows[0].testAcc < 0.6 {
		t.Errorf("after one epoch: %+v", rows[0])
	}
}

// A DDP collective's failure is one line and an exit status; other panics
// are not swallowed.
func TestCatchDDPFailure(t *testing.T) {
	err := catchDDPFailure(func() error {
		panic(&nn.DDPError{Op: "all_reduce of gradient bucket 0", Err: &dist.RankError{Op: "all_reduce", Rank: 1, After: 15 * time.Second, Err: errors.New("rank 1 did not take part")}})
	})
	ee, ok := err.(*exitError)
	if !ok || ee.code != ddpExitCode || strings.Contains(ee.msg, "\n") || !strings.Contains(ee.msg, "rank 1") {
		t.Fatalf("err = %#v", err)
	}
	defer func() {
		if r := recover(); r != "other" {
			t.Errorf("recovered %v, want the other panic to go on", r)
		}
	}()
	catchDDPFailure(func() error { panic("other") })
}
