package onnx_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend/cuda/cudatest"
	"github.com/emberml/ember/internal/testenv"
	"github.com/emberml/ember/npy"
	"github.com/emberml/ember/onnx"
)

// roundTrip loads dir/name.onnx, runs it on dev with name.input.npy and
// compares with PyTorch's name.output.npy (written by testdata/export.py).
func roundTrip(t *testing.T, dir, name string, dev ember.Device) {
	t.Helper()
	m, err := onnx.Load(filepath.Join(dir, name+".onnx"))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	x, err := npy.ReadFile(filepath.Join(dir, name+".input.npy"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := npy.ReadFile(filepath.Join(dir, name+".output.npy"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.Run(map[string]*ember.Tensor{m.Inputs[0].Name: x.To(dev)})
	if err != nil {
		t.Fatalf("%s on %v: %v", name, dev, err)
	}
	got := out[m.Outputs[0].Name]
	if got.Device() != dev {
		t.Errorf("%s: output on %v, want %v", name, got.Device(), dev)
	}
	got = got.CPU()
	if !got.Shape().Equal(want.Shape()) {
		t.Fatalf("%s on %v: shape %v, want %v", name, dev, got.Shape(), want.Shape())
	}
	diff := got.Sub(want).Abs().Max().Item()
	if !ember.AllClose(got, want, 1e-4, 1e-4) {
		t.Errorf("%s on %v: max |ember - torch| = %g, over 1e-4", name, dev, diff)
	}
	t.Logf("%s on %v: max |ember - torch| = %.3g (max |torch| = %.3g)", name, dev, diff, want.Abs().Max().Item())
}

var small = []string{"transformer_layer_op17", "transformer_layer_op13", "gpt2_block", "gpt2_block_dynamic", "recurrent_loop", "scripted_lists"}

var (
	bigOnce sync.Once
	bigDir  string
	bigErr  error
)

// bigModels exports ResNet-18 and MobileNetV2 with PyTorch (once per test
// binary) into a temporary folder.
func bigModels(t *testing.T) string {
	bigOnce.Do(func() {
		if _, err := os.Stat("/usr/bin/python3"); err != nil {
			bigErr = err
			return
		}
		bigDir, bigErr = os.MkdirTemp("", "ember-onnx-")
		if bigErr != nil {
			return
		}
		out, err := exec.Command("/usr/bin/python3", "testdata/export.py", bigDir, "big").CombinedOutput()
		if err != nil {
			bigErr = err
			if s := string(out); strings.Contains(s, "No module named") {
				bigErr = &exec.Error{Name: "torch/torchvision", Err: err}
			}
			t.Logf("%s", out)
		}
	})
	testenv.NeedLib(t, "python3-torch and python3-torchvision", bigErr)
	return bigDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bigDir != "" {
		os.RemoveAll(bigDir)
	}
	os.Exit(code)
}

func TestRoundTripTransformers(t *testing.T) {
	for _, name := range small {
		roundTrip(t, "testdata", name, ember.CPU)
	}
}

func TestRoundTripTorchvision(t *testing.T) {
	if testing.Short() {
		t.Skip("exports ResNet-18 and MobileNetV2 with PyTorch (10 s): runs in the full suite")
	}
	dir := bigModels(t)
	for _, name := range []string{"resnet18", "mobilenet_v2"} {
		roundTrip(t, dir, name, ember.CPU)
	}
}

func TestRoundTripOnEmulatedCUDA(t *testing.T) {
	if ember.DeviceCount() > 0 {
		t.Skip("a real GPU is present")
	}
	names := small
	var dir string
	if !testing.Short() {
		dir = bigModels(t)
	}
	restore := cudatest.Use(t)
	defer restore()
	for _, name := range names {
		roundTrip(t, "testdata", name, ember.CUDA(0))
	}
	if dir != "" {
		for _, name := range []string{"resnet18", "mobilenet_v2"} {
			roundTrip(t, dir, name, ember.CUDA(0))
		}
	}
}
