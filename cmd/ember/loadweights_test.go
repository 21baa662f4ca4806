package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emberml/ember/weights"
)

// loadWeights tells the format by the file's bytes: torch.save checkpoints
// named model_best.pth.tar (PyTorch's ImageNet example), pytorch_model.bin
// (Hugging Face) or .ckpt were read as safetensors ("header length ...
// exceeds the limit"), and the legacy format got that error too instead of
// the one that names it.
func TestLoadWeightsSniffsFormat(t *testing.T) {
	dir := t.TempDir()
	pth, err := os.ReadFile("../../testdata/nn/weights.pth")
	if err != nil {
		t.Fatal(err)
	}
	want, err := weights.ParsePyTorch(pth)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.ReadFile("../../testdata/nn/weights.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	wantST, _, err := weights.ParseSafetensors(st)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"model_best.pth.tar": pth, "pytorch_model.bin": pth, "last.ckpt": pth,
		"model.pth": pth, "model.bin": st, "model.safetensors": st,
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		sd, _, err := loadWeights(p)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		w := want
		if &b[0] == &st[0] {
			w = wantST
		}
		if len(sd) != len(w) {
			t.Errorf("%s: %d tensors, want %d", name, len(sd), len(w))
		}
		for k := range w {
			if sd[k] == nil {
				t.Errorf("%s: no %s", name, k)
			}
		}
	}
	legacy := filepath.Join(dir, "old.pth.tar")
	b, err := os.ReadFile("../../testdata/pth/legacy.pth")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(legacy, b, 0o644)
	_, _, err = loadWeights(legacy)
	if fe, ok := err.(*weights.FormatError); !ok || fe.Path != legacy || !strings.Contains(err.Error(), "legacy (pre-1.6, non-zip) torch.save format") {
		t.Errorf("legacy file: %v", err)
	}
	_, _, err = loadWeights(filepath.Join(dir, "absent.pth"))
	if !os.IsNotExist(err) {
		t.Errorf("absent file: %v", err)
	}
}

// A --classes file's lines lose their "\r\n" line ends as well as "\n".
func TestClassLines(t *testing.T) {
	for in, want := range map[string]string{
		"cat\ndog\n":          "cat|dog",
		"cat\r\ndog\r\n":      "cat|dog",
		"cat\r\ndog":          "cat|dog",
		"a b\r\nc\n\n\r\n":    "a b|c",
		"tench, fish\r\n\r\n": "tench, fish",
	} {
		if got := strings.Join(classLines(in), "|"); got != want {
			t.Errorf("classLines(%q) = %q, want %q", in, got, want)
		}
	}
}
