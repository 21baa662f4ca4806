package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
	"github.com/emberml/ember/vision/datasets"
	"github.com/emberml/ember/vision/models"
	"github.com/emberml/ember/weights"
)

func TestMetricsAndPlot(t *testing.T) {
	dir := t.TempDir()
	rows := []epochRow{{1, 0.9, 0.7, 0.8, 0.75, 10, 6000}, {2, 0.5, 0.85, 0.45, 0.86, 9.5, 6300}}
	p := filepath.Join(dir, "metrics.csv")
	if err := writeMetrics(p, rows); err != nil {
		t.Fatal(err)
	}
	got, err := readMetrics(p)
	if err != nil || len(got) != 2 || got[1] != rows[1] {
		t.Fatalf("read back %v, %v", got, err)
	}
	if err := writePlot(filepath.Join(dir, "plot.png"), rows); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "plot.png")); !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Error("plot.png is not a PNG")
	}
}

func TestEvalCommand(t *testing.T) {
	_, err := os.Stat(filepath.Join(datasets.DefaultFashionMNISTDir, "t10k-images-idx3-ubyte.gz"))
	testenv.NeedLib(t, "dataset-fashion-mnist", err)
	dir := t.TempDir()
	w := filepath.Join(dir, "model.safetensors")
	if err := weights.SaveSafetensorsMeta(w, models.SimpleCNN(1, 10).StateDict(), map[string]string{"model": "cnn"}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetArgs([]string{"eval", "--weights", w, "--limit", "100", "--device", "cpu"})
	if err := rootCmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "test accuracy") || !strings.Contains(s, "/100)") || !strings.Contains(s, "Ankle boot") {
		t.Errorf("output:\n%s", s)
	}
}

func TestTrainCommandLearnsAndResumes(t *testing.T) {
	_, err := os.Stat(filepath.Join(datasets.DefaultFashionMNISTDir, "train-images-idx3-ubyte.gz"))
	testenv.NeedLib(t, "dataset-fashion-mnist", err)
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&errOut)
	defer rootCmd.SetErr(nil)
	rootCmd.SetArgs([]string{"train", "--limit", "512", "--epochs", "1", "--batch", "64", "--device", "cpu", "--quiet", "--mem-report", "--out", dir})
	if err := rootCmd.Execute(); err != nil {
		t.Fatal(err)
	}
	rows, err := readMetrics(filepath.Join(dir, "metrics.csv"))
	if err != nil || len(rows) != 1 {
		t.Fatalf("metrics %v, %v", rows, err)
	}
	// 512 samples are enough to beat chance (0.1) on the 512 test images.
	if rows[0].testAcc < 0.3 || rows[0].trainLoss > 2.2 {
		t.Errorf("after one epoch: %+v", rows[0])
	}
	if !strings.Contains(errOut.String(), "== cpu:") {
		t.Errorf("--mem-report printed no report:\n%s", errOut.String())
	}
	rootCmd.SetArgs([]string{"train", "--limit", "512", "--epochs", "2", "--batch", "64", "--device", "cpu", "--quiet", "--resume", "--out", dir})
	if err := rootCmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if rows, err = readMetrics(filepath.Join(dir, "metrics.csv")); err != nil || len(rows) != 2 || rows[1].epoch != 2 {
		t.Fatalf("after resume: %v, %v", rows, err)
	}
}

// TestPickCheckpointRefusesBadMetadata: a checkpoint whose epoch or batch
// is negative or not a number is refused (a negative epoch went on to
// train from there, a huge one overflowed the scheduler's step count).
func TestPickCheckpointRefusesBadMetadata(t *testing.T) {
	dir := t.TempDir()
	sd := map[string]*ember.Tensor{"w": ember.Ones(ember.Shape{2})}
	opt := filepath.Join(dir, "optim.safetensors")
	if err := weights.SaveSafetensors(opt, sd); err != nil {
		t.Fatal(err)
	}
	for _, meta := range []map[string]string{{"epoch": "-3"}, {"epoch": "x"}, {}, {"epoch": "1", "batch": "-1"}} {
		p := filepath.Join(dir, "model.safetensors")
		if err := weights.SaveSafetensorsMeta(p, sd, meta); err != nil {
			t.Fatal(err)
		}
		if ck, err := pickCheckpoint(p, opt, filepath.Join(dir, "none"), filepath.Join(dir, "none")); err == nil {
			t.Errorf("%v: picked epoch %d batch %d", meta, ck.epoch, ck.batch)
		}
	}
}

// TestResumeRefusesAnotherModelOrDataset: --resume continues the run in
// --out with its model and data. Another --dataset silently trained the
// checkpoint on other data (appending to its metrics.csv); another --model
// was nn's list of every missing key; a gpt run without --model gpt was
// "not a checkpoint of ember train".
func TestResumeRefusesAnotherModelOrDataset(t *testing.T) {
	dir := t.TempDir()
	if out, err := trainRun(t, dir, "1", -1, -1); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "resnet18"}, "was saved by --model cnn: resume it with --model cnn"},
		{[]string{"--dataset", "fashion-mnist"}, "was trained on --dataset synthetic: resume it with --dataset synthetic"},
	} {
		_, err := trainRun(t, dir, "2", -1, -1, append(c.args, "--resume")...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("--resume %v: %v, want a one-line error with %q", c.args, err, c.want)
		}
	}
	rows, err := readMetrics(filepath.Join(dir, "metrics.csv"))
	if err != nil || len(rows) != 1 {
		t.Errorf("metrics.csv after the refusals: %v, %v; want the first run's one epoch", rows, err)
	}
	gpt := t.TempDir()
	sd := map[string]*ember.Tensor{"w": ember.Ones(ember.Shape{2})}
	if err := weights.SaveSafetensorsMeta(filepath.Join(gpt, "model.safetensors"), sd, map[string]string{"model": "gpt", "dataset": "text:a.txt", "step": "10"}); err != nil {
		t.Fatal(err)
	}
	if err := weights.SaveSafetensors(filepath.Join(gpt, "optim.safetensors"), sd); err != nil {
		t.Fatal(err)
	}
	_, err = trainRun(t, gpt, "2", -1, -1, "--resume")
	if err == nil || !strings.Contains(err.Error(), "is a --model gpt checkpoint: resume it with --model gpt --dataset text:a.txt") {
		t.Errorf("--resume of a gpt run without --model gpt: %v", err)
	}
}

// TestDivergedRunKeepsGoing: a NaN or infinite loss (a learning rate far
// too high) leaves gaps in plot.png; the run failed at its first plot with
// "plotter: NaN data point", before writing a checkpoint.
func TestDivergedRunKeepsGoing(t *testing.T) {
	dir := t.TempDir()
	nan, inf := math.NaN(), math.Inf(1)
	for _, rows := range [][]epochRow{
		{{1, nan, 0.1, nan, 0.1, 1, 1}},
		{{1, 2.3, 0.1, 2.2, 0.1, 1, 1}, {2, nan, 0.1, inf, 0.1, 1, 1}, {3, nan, 0.1, nan, 0.1, 1, 1}},
	} {
		if err := writePlot(filepath.Join(dir, "plot.png"), rows); err != nil {
			t.Errorf("%v: %v", rows, err)
		}
	}
	for _, rows := range [][]gptRow{{{10, nan, nan, 1e-3, 1, 1}}, {{10, 5.5, 5.4, 1e-3, 1, 1}, {20, nan, inf, 1e-3, 1, 1}}} {
		if err := writeGPTPlot(filepath.Join(dir, "gpt.png"), rows); err != nil {
			t.Errorf("%v: %v", rows, err)
		}
	}
	run := filepath.Join(dir, "run")
	out, err := trainRun(t, run, "1", -1, -1, "--lr", "1e30")
	if err != nil || !strings.Contains(out, "train loss NaN") {
		t.Fatalf("--lr 1e30: %v\n%s", err, out)
	}
	for _, f := range []string{"model.safetensors", "optim.safetensors", "plot.png", "metrics.csv"} {
		if _, err := os.Stat(filepath.Join(run, f)); err != nil {
			t.Error(err)
		}
	}
}
