package models

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emberml/ember/hub"
	"github.com/emberml/ember/internal/testenv"
)

// hashed copies src into dir under "stem-<sha256[:8]>.pth" and returns that name.
func hashed(t *testing.T, src, dir, stem string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	name := stem + "-" + hex.EncodeToString(s[:])[:8] + ".pth"
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

func tenClasses() []string { return strings.Fields("a b c d e f g h i j") }

func TestPretrainedFromCacheOffline(t *testing.T) {
	t.Setenv("EMBER_OFFLINE", "1") // found in the cache: no network needed
	dir := t.TempDir()
	name := hashed(t, "../../testdata/nn/resnet18_w4.pth", dir, "resnet18w4")
	w := &Weights{Name: "w4", URL: "http://127.0.0.1:1/models/" + name, Categories: tenClasses()}
	m := ResNet18(Width(4), NumClasses(10), PretrainedFrom(w, hub.Dir(dir)))
	checkParityLoaded(t, m, "../../testdata/nn", "resnet18_w4", 1e-4)
}

func TestPretrainedDownloads(t *testing.T) {
	src := t.TempDir()
	name := hashed(t, "../../testdata/nn/resnet18_w4.pth", src, "resnet18w4")
	ts := httptest.NewServer(http.FileServer(http.Dir(src)))
	defer ts.Close()
	cache := t.TempDir()
	t.Setenv("TORCH_HOME", cache)
	w := &Weights{Name: "w4", URL: ts.URL + "/" + name, Categories: tenClasses()}
	m := ResNet18(Width(4), NumClasses(10), PretrainedFrom(w, hub.Progress(nil)))
	if _, err := os.Stat(filepath.Join(cache, "hub", "checkpoints", name)); err != nil {
		t.Errorf("not cached under $TORCH_HOME/hub/checkpoints: %v", err)
	}
	checkParityLoaded(t, m, "../../testdata/nn", "resnet18_w4", 1e-4)
}

func TestPretrainedRefusesWrongHash(t *testing.T) {
	dir := t.TempDir()
	b, _ := os.ReadFile("../../testdata/nn/resnet18_w4.pth")
	os.WriteFile(filepath.Join(dir, "resnet18w4-0badc0de.pth"), b, 0o644)
	w := &Weights{Name: "w4", URL: "http://127.0.0.1:1/resnet18w4-0badc0de.pth", Categories: tenClasses()}
	defer func() {
		err, _ := recover().(error)
		var pe *PretrainedError
		var he *hub.HashError
		if !errors.As(err, &pe) || !errors.As(err, &he) || !strings.Contains(err.Error(), "refusing to load it") {
			t.Fatalf("panic %v, want a PretrainedError wrapping a HashError", err)
		}
	}()
	ResNet18(Width(4), NumClasses(10), PretrainedFrom(w, hub.Dir(dir)))
}

func TestPretrainedOfflineSaysWhere(t *testing.T) {
	home := t.TempDir()
	t.Setenv("TORCH_HOME", home)
	t.Setenv("HF_HUB_OFFLINE", "1")
	_, w, err := LoadPretrained("resnet18")
	want := filepath.Join(home, "hub", "checkpoints", "resnet18-f37072fd.pth")
	var oe *hub.OfflineError
	if !errors.As(err, &oe) || oe.Path != want || w.CachePath() != want || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v", err)
	}
	if _, _, err := LoadPretrained("resnet34"); err == nil || !strings.Contains(err.Error(), "resnet34-b627a593.pth") {
		t.Errorf("resnet34: %v", err)
	}
	if _, _, err := LoadPretrained("vgg16"); err == nil {
		t.Error("vgg16 accepted")
	}
	defer func() {
		if pe, ok := recover().(*PretrainedError); !ok || !strings.Contains(pe.Error(), "predicts 1000 classes") {
			t.Errorf("NumClasses(10) with ImageNet weights: %v", pe)
		}
	}()
	ResNet18(NumClasses(10), Pretrained())
}

func TestWeightsMeta(t *testing.T) {
	c := ResNet18Weights.Categories
	if len(c) != 1000 || c[0] != "tench" || c[1] != "goldfish" || c[281] != "tabby" || c[999] != "toilet tissue" {
		t.Errorf("categories: %d, %q %q %q", len(c), c[0], c[281], c[999])
	}
	p := ResNet18Weights.Preprocess
	if p.ResizeSize != 256 || p.CropSize != 224 || p.Mean != [3]float64{0.485, 0.456, 0.406} || p.Std != [3]float64{0.229, 0.224, 0.225} {
		t.Errorf("preprocess %+v", p)
	}
	if ResNet18Weights.FileName() != "resnet18-f37072fd.pth" || ResNet34Weights.FileName() != "resnet34-b627a593.pth" {
		t.Error(ResNet18Weights.FileName())
	}
}

// TestLoadPretrainedFull: a full-size ResNet-18 saved by PyTorch at test
// time, served under its torchvision-style hashed name, fetched and compared.
func TestLoadPretrainedFull(t *testing.T) {
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
	name := hashed(t, filepath.Join(dir, "resnet18.pth"), dir, "resnet18")
	ts := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer ts.Close()
	w := &Weights{Name: "test", URL: ts.URL + "/" + name, Categories: ImageNetCategories}
	m, err := LoadPretrainedFrom([4]int{2, 2, 2, 2}, w, hub.Dir(t.TempDir()), hub.Progress(nil))
	if err != nil {
		t.Fatal(err)
	}
	checkParityLoaded(t, m, dir, "resnet18", 1e-4)
}

// LoadPretrainedFrom(layers, nil) is a *PretrainedError, not a nil
// dereference.
func TestLoadPretrainedFromNil(t *testing.T) {
	var pe *PretrainedError
	if _, err := LoadPretrainedFrom([4]int{2, 2, 2, 2}, nil); !errors.As(err, &pe) {
		t.Errorf("nil weights: %T %v", err, err)
	}
}
