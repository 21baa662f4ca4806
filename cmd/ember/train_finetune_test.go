package main

import (
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
	"github.com/emberml/ember/tensorboard"
	"github.com/emberml/ember/vision/models"
	"github.com/emberml/ember/weights"
)

// colourFolder writes root/{train,val}/{blue,red}/*.png: noisy images that
// are mostly blue or mostly red.
func colourFolder(t *testing.T, nTrain, nVal int) string {
	t.Helper()
	root := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	for split, n := range map[string]int{"train": nTrain, "val": nVal} {
		for ci, cls := range []string{"blue", "red"} {
			d := filepath.Join(root, split, cls)
			os.MkdirAll(d, 0o755)
			for k := range n {
				img := image.NewRGBA(image.Rect(0, 0, 40, 30))
				for i := 0; i < len(img.Pix); i += 4 {
					hi, lo := uint8(150+r.IntN(100)), uint8(r.IntN(90))
					img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = lo, lo/2, hi, 255
					if ci == 1 {
						img.Pix[i], img.Pix[i+2] = hi, lo
					}
				}
				fh, _ := os.Create(filepath.Join(d, string(rune('a'+k))+".png"))
				png.Encode(fh, img)
				fh.Close()
			}
		}
	}
	return root
}

func loadSD(t *testing.T, p string) (map[string]*ember.Tensor, map[string]string) {
	t.Helper()
	sd, meta, err := loadWeights(p)
	if err != nil {
		t.Fatal(err)
	}
	return sd, meta
}

func TestTrainImageFolderFreezeUnfreezeTensorBoard(t *testing.T) {
	root := colourFolder(t, 6, 3)
	out, tb := filepath.Join(t.TempDir(), "run"), filepath.Join(t.TempDir(), "tb")
	args := []string{"--model", "resnet18", "--dataset", "imagefolder:" + root, "--image-size", "32", "--batch", "4",
		"--freeze-backbone", "--unfreeze-at", "2", "--device", "cpu", "--quiet", "--out", out, "--tensorboard", tb, "--lr", "0.01", "--workers", "2"}
	if o, e, err := runCmd(t, "train", append(args, "--epochs", "1")...); err != nil {
		t.Fatalf("%v\n%s%s", err, o, e)
	}
	// epoch 1: only the head trained; the backbone is its seeded initialisation
	ember.ManualSeed(0)
	init := models.NewResNet([4]int{2, 2, 2, 2}, models.NumClasses(2)).StateDict()
	sd, meta := loadSD(t, filepath.Join(out, "model.safetensors"))
	if meta["classes"] != "blue\nred" || meta["image_size"] != "32" {
		t.Errorf("meta %v", meta)
	}
	if !ember.Equal(sd["conv1.weight"], init["conv1.weight"]) || !ember.Equal(sd["layer4.1.conv2.weight"], init["layer4.1.conv2.weight"]) {
		t.Error("a frozen backbone weight changed in epoch 1")
	}
	if ember.Equal(sd["fc.weight"], init["fc.weight"]) {
		t.Error("the head did not train")
	}
	// epoch 2 (--resume): --unfreeze-at 2 trains everything
	if o, e, err := runCmd(t, "train", append(args, "--epochs", "2", "--resume")...); err != nil {
		t.Fatalf("%v\n%s%s", err, o, e)
	}
	sd2, _ := loadSD(t, filepath.Join(out, "model.safetensors"))
	if ember.Equal(sd2["conv1.weight"], sd["conv1.weight"]) {
		t.Error("the backbone did not train after --unfreeze-at")
	}
	rows, err := readMetrics(filepath.Join(out, "metrics.csv"))
	if err != nil || len(rows) != 2 {
		t.Fatalf("metrics %v %v", rows, err)
	}
	if _, err := os.Stat(filepath.Join(out, "plot.png")); err != nil {
		t.Error(err)
	}
	// TensorBoard: the event files read back with every CRC checked
	files, _ := filepath.Glob(filepath.Join(tb, "events.out.tfevents.*"))
	tags := map[string]int{}
	for _, f := range files {
		evs, err := tensorboard.ReadEvents(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			for _, v := range e.GetSummary().GetValue() {
				tags[v.Tag]++
			}
		}
	}
	if len(files) != 2 || tags["batch/loss"] != 6 || tags["samples_per_s"] != 2 || tags["weights/fc.weight"] != 2 || tags["config/text_summary"] != 2 {
		t.Errorf("%d event files (one per run), tags %v", len(files), tags)
	}
	for _, sub := range []string{"loss_train", "loss_test", "accuracy_train", "accuracy_test"} {
		fs, _ := filepath.Glob(filepath.Join(tb, sub, "events.out.tfevents.*"))
		if len(fs) != 2 {
			t.Errorf("%s: %d event files", sub, len(fs))
		}
	}
	// the fine-tuned model's class names reach ember predict
	img := filepath.Join(root, "val", "red", "a.png")
	res := predictJSON(t, "--weights", filepath.Join(out, "model.safetensors"), "--topk", "2", img)
	if len(res[0].Top) != 2 || (res[0].Top[0].Class != "red" && res[0].Top[0].Class != "blue") {
		t.Errorf("predict: %+v", res)
	}
}

func TestTensorBoardFlagDefault(t *testing.T) {
	t.Chdir(t.TempDir())
	root := colourFolder(t, 2, 1)
	o, e, err := runCmd(t, "train", "--model", "resnet18", "--dataset", "imagefolder:"+root, "--image-size", "16", "--batch", "4",
		"--epochs", "1", "--device", "cpu", "--quiet", "--out", "runs/exp7", "--tensorboard", "--workers", "0")
	if err != nil {
		t.Fatalf("%v\n%s%s", err, o, e)
	}
	if fs, _ := filepath.Glob("runs/exp7/events.out.tfevents.*"); len(fs) != 1 {
		t.Errorf("--tensorboard without a value: %d event files in runs/exp7", len(fs))
	}
	_, _, err = runCmd(t, "train", "--pretrained", "--epochs", "1", "--dataset", "synthetic")
	if err == nil || !strings.Contains(err.Error(), "imagefolder") {
		t.Errorf("--pretrained on synthetic: %v", err)
	}
	// a class folder with a file that is not an image: named; skipped on request
	bad := filepath.Join(root, "train", "red", "broken.png")
	os.WriteFile(bad, []byte("text"), 0o644)
	_, _, err = runCmd(t, "train", "--model", "resnet18", "--dataset", "imagefolder:"+root, "--image-size", "16", "--epochs", "1", "--device", "cpu", "--quiet", "--out", "runs/x")
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad image: %v", err)
	}
	_, e, err = runCmd(t, "train", "--model", "resnet18", "--dataset", "imagefolder:"+root, "--image-size", "16", "--epochs", "1", "--device", "cpu", "--quiet", "--out", "runs/y", "--skip-bad-images")
	if err != nil || !strings.Contains(e, "skipped:") || !strings.Contains(e, bad) {
		t.Errorf("--skip-bad-images: %v\n%s", err, e)
	}
}

// TestTrainPretrainedHead: --pretrained loads torchvision-format weights
// (made by the fixture script, fetched from a local server), replaces the
// head with --num-classes outputs and trains it alone.
func TestTrainPretrainedHead(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	err := exec.Command("/usr/bin/python3", "-c", "import torch, torchvision").Run()
	testenv.NeedLib(t, "python3-torchvision", err)
	home := t.TempDir()
	t.Setenv("TORCH_HOME", home)
	out, err := exec.Command("/usr/bin/python3", "../../testdata/gen_vision_fixtures.py", "--demo-weights", home).Output()
	if err != nil {
		t.Fatal(err)
	}
	p := strings.TrimSpace(string(out))
	old := weightsSource
	defer func() { weightsSource = old }()
	weightsSource = func(w *models.Weights) *models.Weights {
		c := *w
		c.URL = "http://127.0.0.1:1/" + filepath.Base(p)
		return &c
	}
	t.Setenv("EMBER_OFFLINE", "1") // in the cache already: no download
	root := colourFolder(t, 4, 2)
	run := filepath.Join(t.TempDir(), "run")
	if o, e, err := runCmd(t, "train", "--model", "resnet18", "--dataset", "imagefolder:"+root, "--pretrained", "--freeze-backbone",
		"--num-classes", "3", "--image-size", "32", "--batch", "4", "--epochs", "1", "--device", "cpu", "--quiet", "--out", run); err != nil {
		t.Fatalf("%v\n%s%s", err, o, e)
	}
	pre, err := weights.LoadPyTorch(p)
	if err != nil {
		t.Fatal(err)
	}
	sd, meta := loadSD(t, filepath.Join(run, "model.safetensors"))
	if !ember.Equal(sd["layer3.0.conv1.weight"], pre["layer3.0.conv1.weight"]) {
		t.Error("the backbone is not the pretrained one, or it trained while frozen")
	}
	if s := sd["fc.weight"].Shape(); s[0] != 3 || s[1] != 512 {
		t.Errorf("head %v", s)
	}
	if meta["classes"] != "blue\nred\nclass 2" {
		t.Errorf("classes %q", meta["classes"])
	}
}
