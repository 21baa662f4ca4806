package bench

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/emberml/ember"
	"github.com/emberml/ember/onnx"
)

//go:embed torch_bench.py
var torchBench []byte

// ONNXResNet18Path is where onnx_resnet18 finds its model: the file
// EMBER_BENCH_ONNX names, else resnet18_b16.onnx in the user's cache folder,
// which the case writes (once) by running torch_bench.py --export-onnx with
// /usr/bin/python3 when it is missing.
func ONNXResNet18Path() string {
	if p := os.Getenv("EMBER_BENCH_ONNX"); p != "" {
		return p
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "ember", "bench", "resnet18_b16.onnx")
}

func exportResNet18(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	cmd := exec.Command("/usr/bin/python3", "-", "--export-onnx", tmp)
	cmd.Stdin = bytes.NewReader(torchBench)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("torch.onnx.export: %v: %s", err, lastLine(out))
	}
	return os.Rename(tmp, path)
}

func lastLine(b []byte) string {
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	return string(b)
}

// onnxResNet18 runs resnet18_fwd's model (the same weights, seed 1) as
// torch.onnx.export wrote it, through package onnx: batch 16, 3×224×224.
// PyTorch's side in torch_bench.py is that module run eagerly.
func onnxResNet18() (func() float64, error) {
	path := ONNXResNet18Path()
	if _, err := os.Stat(path); err != nil {
		if err := exportResNet18(path); err != nil {
			return nil, notAvailable("no ONNX model (" + err.Error() + ")")
		}
	}
	m, err := onnx.Load(path)
	if err != nil {
		return nil, err
	}
	ember.ManualSeed(1)
	x := ember.Randn(ember.Shape{16, 3, 224, 224})
	flops := 2 * 16 * ResNet18MACs(224)
	name := m.Inputs[0].Name
	var runErr error
	return func() float64 {
		out, err := m.Run(map[string]*ember.Tensor{name: x})
		if err != nil {
			runErr = err
			panic(err)
		}
		for _, t := range out {
			t.Release()
		}
		return flops
	}, runErr
}
