package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emberml/ember/hub"
	"github.com/emberml/ember/internal/testenv"
	"github.com/emberml/ember/vision/models"
	"github.com/emberml/ember/weights"
)

const sampleJPG, samplePNG = "../../testdata/vision/sample.jpg", "../../testdata/vision/rgb.png"

type demoFixture struct {
	Weights string
	Top5    map[string][][2]float64
}

// demoWeights runs the fixture script: a seeded full-size torchvision
// resnet18 saved under resnet18-<its sha256[:8]>.pth in torchHome, and
// torchvision's top-5 on the sample images.
func demoWeights(t *testing.T, torchHome string) demoFixture {
	t.Helper()
	err := exec.Command("/usr/bin/python3", "-c", "import torch, torchvision, PIL").Run()
	testenv.NeedLib(t, "python3-torchvision", err)
	out, err := exec.Command("/usr/bin/python3", "../../testdata/gen_vision_fixtures.py", "--demo-expect", torchHome, sampleJPG, samplePNG).Output()
	if err != nil {
		t.Fatalf("fixture script: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var fx demoFixture
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &fx); err != nil {
		t.Fatal(err)
	}
	return fx
}

// runCmd runs `ember c args...` with c's flags reset before and after; it
// returns stdout, then stderr.
func runCmd(t *testing.T, c string, args ...string) (string, string, error) {
	t.Helper()
	cmd, _, _ := rootCmd.Find([]string{c})
	resetFlags(t, cmd)
	defer resetFlags(t, cmd)
	var out, errOut bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&errOut)
	defer rootCmd.SetOut(nil)
	defer rootCmd.SetErr(nil)
	rootCmd.SetArgs(append([]string{c}, args...))
	err := rootCmd.Execute()
	return out.String(), errOut.String(), err
}

func predictJSON(t *testing.T, args ...string) []prediction {
	t.Helper()
	out, _, err := runCmd(t, "predict", append(args, "--json", "--device", "cpu")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var res []prediction
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return res
}

// checkTop5 compares with torchvision: the same classes in the same order,
// probabilities within tol (relative).
func checkTop5(t *testing.T, got prediction, want [][2]float64, tol float64) {
	t.Helper()
	worst := 0.0
	defer func() {
		t.Logf("%s: top-%d probabilities within %.2g (relative) of torchvision's", got.Image, len(want), worst)
	}()
	for k, w := range want {
		g := got.Top[k]
		worst = math.Max(worst, math.Abs(g.Probability-w[1])/w[1])
		if g.Index != int(w[0]) || math.Abs(g.Probability-w[1]) > tol*w[1] {
			t.Errorf("%s #%d: ember %d %.6f, torchvision %d %.6f", got.Image, k+1, g.Index, g.Probability, int(w[0]), w[1])
		}
		if g.Class != models.ImageNetCategories[g.Index] {
			t.Errorf("class name %q", g.Class)
		}
	}
}

// TestPredictMatchesTorchvision: ember predict against torchvision's
// Resize(256)/CenterCrop(224)/ToTensor/Normalize and resnet18 on the same
// file. PNG decodes exactly, so the only difference is float arithmetic;
// the JPEG also differs by Go's IDCT, a level or two (see vision/imageio).
func TestPredictMatchesTorchvision(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	home := t.TempDir()
	fx := demoWeights(t, home)
	res := predictJSON(t, "--weights", fx.Weights, sampleJPG, samplePNG)
	if len(res) != 2 || len(res[0].Top) != 5 {
		t.Fatalf("%+v", res)
	}
	checkTop5(t, res[0], fx.Top5[sampleJPG], 0.005)
	checkTop5(t, res[1], fx.Top5[samplePNG], 1e-3)

	// --pretrained: downloaded from a local server into $TORCH_HOME
	// under its hashed name, then found there offline
	name := filepath.Base(fx.Weights)
	ts := httptest.NewServer(http.FileServer(http.Dir(filepath.Dir(fx.Weights))))
	defer ts.Close()
	old := weightsSource
	defer func() { weightsSource = old }()
	weightsSource = func(w *models.Weights) *models.Weights {
		c := *w
		c.URL = ts.URL + "/" + name
		return &c
	}
	cache := t.TempDir()
	t.Setenv("TORCH_HOME", cache)
	res = predictJSON(t, "--pretrained", "--topk", "3", samplePNG)
	if len(res[0].Top) != 3 {
		t.Fatalf("--topk 3: %+v", res)
	}
	checkTop5(t, res[0], fx.Top5[samplePNG][:3], 1e-3)
	if _, err := os.Stat(filepath.Join(cache, "hub", "checkpoints", name)); err != nil {
		t.Errorf("not cached: %v", err)
	}
	t.Setenv("EMBER_OFFLINE", "1")
	ts.Close()
	out, _, err := runCmd(t, "predict", "--pretrained", "--device", "cpu", samplePNG)
	if err != nil || !strings.Contains(out, "1. ") || !strings.Contains(out, models.ImageNetCategories[int(fx.Top5[samplePNG][0][0])]) {
		t.Errorf("offline, cached: %v\n%s", err, out)
	}
}

func TestPredictRefusals(t *testing.T) {
	dir := t.TempDir()
	b, _ := os.ReadFile("../../testdata/nn/resnet18_w4.pth")
	bad := filepath.Join(dir, "resnet18-00000000.pth")
	os.WriteFile(bad, b, 0o644)
	_, _, err := runCmd(t, "predict", "--weights", bad, "--device", "cpu", samplePNG)
	var he *hub.HashError
	if !errors.As(err, &he) {
		t.Errorf("wrong hash: %v", err)
	}
	home := t.TempDir()
	t.Setenv("TORCH_HOME", home)
	t.Setenv("EMBER_OFFLINE", "1")
	_, _, err = runCmd(t, "predict", "--pretrained", "--device", "cpu", samplePNG)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(home, "hub", "checkpoints", "resnet18-f37072fd.pth")) {
		t.Errorf("offline: %v", err)
	}
	if _, _, err := runCmd(t, "predict", "--device", "cpu", samplePNG); err == nil {
		t.Error("neither --pretrained nor --weights accepted")
	}
	notImage := filepath.Join(dir, "x.jpg")
	os.WriteFile(notImage, []byte("text"), 0o644)
	os.WriteFile(filepath.Join(dir, "ok.pth"), b, 0o644)
	if _, _, err := runCmd(t, "predict", "--weights", filepath.Join(dir, "ok.pth"), "--device", "cpu", notImage); err == nil {
		t.Error("a reduced-width checkpoint or a text file accepted")
	}
}

// TestPredictBadImageSize: a checkpoint whose image_size metadata is out
// of range or not a number is refused before anything is resized (100 000
// was a fatal out-of-memory, 10¹⁸ a makeslice runtime error, "x" was
// ignored without a word).
func TestPredictBadImageSize(t *testing.T) {
	sd := models.NewResNet([4]int{2, 2, 2, 2}, models.NumClasses(3)).StateDict()
	for _, size := range []string{"100000", "1000000000000000000", "x", "4"} {
		p := filepath.Join(t.TempDir(), "m.safetensors")
		if err := weights.SaveSafetensorsMeta(p, sd, map[string]string{"image_size": size}); err != nil {
			t.Fatal(err)
		}
		_, _, err := runCmd(t, "predict", "--weights", p, "--device", "cpu", samplePNG)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("image_size %q: want a whole number from 8 to 4096", size)) {
			t.Errorf("image_size %s: %v", size, err)
		}
	}
}
