package main

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/emberml/ember/vision/models"
	"github.com/emberml/ember/weights"
)

// TestEvalFollowsCheckpointMetadata: without --dataset, eval tests the
// data set the checkpoint was trained on (a synthetic run was evaluated on
// Fashion-MNIST: 10000 samples of the wrong data); a --model other than
// the checkpoint's, or an image-folder run, is a one-line error saying so
// (they were nn's list of every missing key).
func TestEvalFollowsCheckpointMetadata(t *testing.T) {
	dir := t.TempDir()
	sd := models.SimpleCNN(1, 10).StateDict()
	save := func(name string, meta map[string]string) string {
		p := filepath.Join(dir, name)
		if err := weights.SaveSafetensorsMeta(p, sd, meta); err != nil {
			t.Fatal(err)
		}
		return p
	}
	syn := save("syn.safetensors", map[string]string{"model": "cnn", "dataset": "synthetic"})
	out, _, err := runCmd(t, "eval", "--weights", syn, "--device", "cpu")
	if err != nil || !strings.Contains(out, "/2000), loss") || !strings.Contains(out, "bar 9") {
		t.Errorf("eval of a synthetic run: %v\n%s", err, out) // synthetic's test split: 2000 samples, classes "bar N"
	}
	folder := save("folder.safetensors", map[string]string{"model": "cnn", "dataset": "imagefolder:/data/flowers"})
	gpt := save("gpt.safetensors", map[string]string{"model": "gpt", "dataset": "text:/data/go", "step": "100"})
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--weights", syn, "--model", "resnet18"}, "holds a cnn (its metadata), not --model resnet18"},
		{[]string{"--weights", folder}, "was trained on --dataset imagefolder:/data/flowers: ember eval tests fashion-mnist"},
		{[]string{"--weights", gpt}, "is a GPT trained on --dataset text:/data/go: ember eval tests image classifiers (the run's metrics.csv has its validation loss; ember generate --model " + dir + " runs it)"},
	} {
		_, _, err := runCmd(t, "eval", append(c.args, "--device", "cpu")...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("eval %v: %v, want a one-line error with %q", c.args, err, c.want)
		}
	}
}

// TestPredictFollowsCheckpointMetadata: a resnet34 fine-tuned by ember
// train is predicted with as a resnet34 without --model (it failed to load
// into the default resnet18); checkpoints predict cannot run say what they
// are and which command runs them.
func TestPredictFollowsCheckpointMetadata(t *testing.T) {
	dir := t.TempDir()
	img := "../../testdata/vision/sample.jpg"
	r34 := filepath.Join(dir, "r34.safetensors")
	if err := weights.SaveSafetensorsMeta(r34, models.ResNet34(models.NumClasses(3)).StateDict(),
		map[string]string{"model": "resnet34", "dataset": "imagefolder:/data/x", "classes": "a\nb\nc", "image_size": "32"}); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCmd(t, "predict", "--weights", r34, "--device", "cpu", "--json", img)
	var res []prediction
	if err == nil {
		err = json.Unmarshal([]byte(out), &res)
	}
	if err != nil || len(res) != 1 || len(res[0].Top) != 3 {
		t.Fatalf("predict with a resnet34 checkpoint: %v\n%s", err, out)
	}
	var sum float64
	for _, c := range res[0].Top {
		sum += c.Probability
	}
	if sum < 0.999 || sum > 1.001 {
		t.Errorf("probabilities sum to %v: %v", sum, res[0].Top)
	}
	cnn := filepath.Join(dir, "cnn.safetensors")
	if err := weights.SaveSafetensorsMeta(cnn, models.SimpleCNN(1, 10).StateDict(), map[string]string{"model": "cnn", "dataset": "fashion-mnist"}); err != nil {
		t.Fatal(err)
	}
	r18mnist := filepath.Join(dir, "r18.safetensors")
	if err := weights.SaveSafetensorsMeta(r18mnist, models.ResNet18(models.InChannels(1), models.NumClasses(10)).StateDict(),
		map[string]string{"model": "resnet18", "dataset": "fashion-mnist"}); err != nil {
		t.Fatal(err)
	}
	gpt := filepath.Join(dir, "gpt.safetensors")
	if err := weights.SaveSafetensorsMeta(gpt, models.SimpleCNN(1, 10).StateDict(), map[string]string{"model": "gpt"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--weights", r34, "--model", "resnet18"}, "holds a resnet34 (its metadata), not --model resnet18"},
		{[]string{"--weights", cnn}, "holds a cnn trained on fashion-mnist: ember predict classifies RGB images"},
		{[]string{"--weights", r18mnist}, "holds a resnet18 trained on fashion-mnist (grayscale 28×28)"},
		{[]string{"--weights", gpt}, "is a GPT checkpoint: run its folder with ember generate --model " + dir},
	} {
		_, _, err := runCmd(t, "predict", append(c.args, "--device", "cpu", img)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("predict %v: %v, want a one-line error with %q", c.args, err, c.want)
		}
	}
}

// TestMissingDatasetAdvice: a missing data set is one line of advice in the
// command's terms; for mnist it advised installing dataset-fashion-mnist
// and repeated "set EMBER_DATA_DIR" twice.
func TestMissingDatasetAdvice(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("EMBER_DATA_DIR", dir)
	w := filepath.Join(dir, "w.safetensors")
	if err := weights.SaveSafetensorsMeta(w, models.SimpleCNN(1, 10).StateDict(), map[string]string{"model": "cnn"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dataset, want string }{
		{"mnist", "mnist: t10k-images-idx3-ubyte.gz not found in " + dir + ": pass --data-dir DIR with the four IDX files or set $EMBER_DATA_DIR, or use --dataset synthetic"},
		{"fashion-mnist", "fashion-mnist: t10k-images-idx3-ubyte.gz not found in " + dir + ": pass --data-dir DIR with the four IDX files or set $EMBER_DATA_DIR, install the Debian package dataset-fashion-mnist, or use --dataset synthetic"},
	} {
		_, _, err := runCmd(t, "eval", "--weights", w, "--dataset", c.dataset, "--device", "cpu")
		if err == nil || err.Error() != c.want {
			t.Errorf("--dataset %s: %v\nwant %s", c.dataset, err, c.want)
		}
	}
}

// TestPredictTellsResNetDepth: a plain state dict (torchvision's
// resnet34-*.pth, say) loads as the ResNet its blocks make without
// --model; it failed as a resnet18 with every unexpected key listed. A
// bottleneck ResNet is refused by name.
func TestPredictTellsResNetDepth(t *testing.T) {
	dir := t.TempDir()
	img := "../../testdata/vision/sample.jpg"
	r34 := filepath.Join(dir, "plain34.safetensors")
	if err := weights.SaveSafetensors(r34, models.ResNet34(models.NumClasses(4)).StateDict()); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCmd(t, "predict", "--weights", r34, "--device", "cpu", "--json", img)
	var res []prediction
	if err == nil {
		err = json.Unmarshal([]byte(out), &res)
	}
	if err != nil || len(res) != 1 || len(res[0].Top) != 4 || res[0].Top[0].Class != "class "+strconv.Itoa(res[0].Top[0].Index) {
		t.Fatalf("predict with a plain resnet34 state dict: %v\n%s", err, out)
	}
	bottleneck := filepath.Join(dir, "r50.safetensors")
	sd := models.ResNet18().StateDict()
	sd["layer1.0.conv3.weight"] = sd["layer1.0.conv2.weight"]
	if err := weights.SaveSafetensors(bottleneck, sd); err != nil {
		t.Fatal(err)
	}
	_, _, err = runCmd(t, "predict", "--weights", bottleneck, "--device", "cpu", img)
	if err == nil || !strings.Contains(err.Error(), "is a bottleneck ResNet (ResNet-50 or deeper): ember predict runs resnet18 and resnet34") {
		t.Errorf("predict with a bottleneck ResNet: %v", err)
	}
}
