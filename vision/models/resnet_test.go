package models

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/weights"
)

func maxDiff(a, b *ember.Tensor) float64 {
	x, y := a.Float32s(), b.Float32s()
	d := 0.0
	for i := range x {
		d = math.Max(d, math.Abs(float64(x[i]-y[i])))
	}
	return d
}

func checkParity(t *testing.T, m *ResNet, dir, prefix string, tol float64) {
	t.Helper()
	io, err := weights.LoadSafetensors(filepath.Join(dir, prefix+"_io.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".pth", ".safetensors"} {
		var sd map[string]*ember.Tensor
		if ext == ".pth" {
			sd, err = weights.LoadPyTorch(filepath.Join(dir, prefix+ext))
		} else {
			sd, err = weights.LoadSafetensors(filepath.Join(dir, prefix+ext))
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := m.LoadStateDict(sd, true); err != nil {
			t.Fatal(err)
		}
		m.Eval()
		y := m.Forward(io["input"])
		if !y.Shape().Equal(io["output"].Shape()) {
			t.Fatalf("%s: output %v, want %v", ext, y.Shape(), io["output"].Shape())
		}
		if d := maxDiff(y, io["output"]); d > tol {
			t.Errorf("%s: max |ember - torch| = %g > %g", ext, d, tol)
		}
	}
}

// checkParityLoaded compares an already loaded model's output with PyTorch's.
func checkParityLoaded(t *testing.T, m *ResNet, dir, prefix string, tol float64) {
	t.Helper()
	io, err := weights.LoadSafetensors(filepath.Join(dir, prefix+"_io.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	m.Eval()
	y := m.Forward(io["input"])
	if !y.Shape().Equal(io["output"].Shape()) {
		t.Fatalf("output %v, want %v", y.Shape(), io["output"].Shape())
	}
	if d := maxDiff(y, io["output"]); d > tol {
		t.Errorf("max |ember - torch| = %g > %g", d, tol)
	}
}

func TestResNet18NamesMatchTorchvision(t *testing.T) {
	m := ResNet18(Width(4), NumClasses(10))
	sd, err := weights.LoadSafetensors("../../testdata/nn/resnet18_w4.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	got := m.StateDict()
	if len(got) != len(sd) {
		t.Errorf("%d state dict entries, torch has %d", len(got), len(sd))
	}
	for k, v := range sd {
		if g, ok := got[k]; !ok || !g.Shape().Equal(v.Shape()) {
			t.Errorf("%s: torch shape %v, ember %v", k, v.Shape(), g)
		}
	}
	np := m.NamedParameters()
	if np[0].Name != "conv1.weight" || np[len(np)-1].Name != "fc.bias" || np[3].Name != "layer1.0.conv1.weight" {
		t.Errorf("parameter order %s, %s, %s", np[0].Name, np[3].Name, np[len(np)-1].Name)
	}
	if _, ok := got["layer2.0.downsample.0.weight"]; !ok {
		t.Error("no layer2.0.downsample.0.weight")
	}
	bad := map[string]*ember.Tensor{"fc.weight": ember.Zeros(ember.Shape{3, 3}), "extra": ember.Zeros(nil)}
	err = m.LoadStateDict(bad, true)
	se, ok := err.(*nn.StateDictError)
	if !ok || len(se.Missing) != len(got)-1 || len(se.Unexpected) != 1 || len(se.Mismatched) != 1 || !strings.Contains(err.Error(), "fc.weight: checkpoint shape [3, 3] vs model shape [10, 32]") {
		t.Errorf("err = %v", err)
	}
}

func TestResNet18ParityReduced(t *testing.T) {
	checkParity(t, ResNet18(Width(4), NumClasses(10)), "../../testdata/nn", "resnet18_w4", 1e-4)
}

func TestResNet34Shapes(t *testing.T) {
	m := ResNet34(Width(2), NumClasses(5), InChannels(1))
	m.Eval()
	y := m.Forward(ember.Randn(ember.Shape{1, 1, 32, 32}))
	if !y.Shape().Equal([]int{1, 5}) {
		t.Errorf("output %v", y.Shape())
	}
	if n := len(m.Layer3.Layers); n != 6 {
		t.Errorf("layer3 has %d blocks", n)
	}
}

// TestResNet18ParityFull builds a full-size ResNet-18 with PyTorch at test
// time and compares outputs.
func TestResNet18ParityFull(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	_, err := os.Stat("/usr/bin/python3")
	if err == nil {
		err = exec.Command("/usr/bin/python3", "-c", "import torch").Run()
	}
	testenv.NeedLib(t, "python3-torch", err)
	dir := t.TempDir()
	out, err := exec.Command("/usr/bin/python3", "../../testdata/gen_nn_fixtures.py", "--resnet18-full", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("fixture script: %v\n%s", err, out)
	}
	checkParity(t, ResNet18(), dir, "resnet18", 1e-4)
}
