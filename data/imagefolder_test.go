package data

import (
	"encoding/json"
	"errors"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
	"github.com/emberml/ember/vision/imageio"
	"github.com/emberml/ember/vision/transforms"
)

const vfix = "../testdata/vision"

// tree builds the folder torchvision listed in imagefolder.json, with real
// images of each file's type (the .txt and .md files stay text).
func tree(t *testing.T, files []string) string {
	t.Helper()
	root := t.TempDir()
	img := image.NewRGBA(image.Rect(0, 0, 20, 10))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	copyOf := func(name string) []byte { b, _ := os.ReadFile(filepath.Join(vfix, name)); return b }
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		var b []byte
		switch strings.ToLower(filepath.Ext(f)) {
		case ".png":
			fh, _ := os.Create(p)
			png.Encode(fh, img)
			fh.Close()
			continue
		case ".jpg", ".jpeg":
			fh, _ := os.Create(p)
			jpeg.Encode(fh, img, nil)
			fh.Close()
			continue
		case ".webp":
			b = copyOf("lossless.webp")
		case ".bmp":
			b = copyOf("rgb.bmp")
		case ".tif":
			b = copyOf("rgb.tiff")
		default:
			b = []byte("not an image")
		}
		os.WriteFile(p, b, 0o644)
	}
	return root
}

type folderFixture struct {
	Files      []string
	Classes    []string
	ClassToIdx map[string]int `json:"class_to_idx"`
	Samples    [][2]any
	EmptyError string `json:"empty_error"`
}

func TestImageFolderMatchesTorchvision(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(vfix, "want", "imagefolder.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fx folderFixture
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	root := tree(t, fx.Files)
	// with the empty class: torchvision's error
	_, err = NewImageFolder(root)
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(fx.EmptyError)) {
		t.Errorf("empty class: %v\nwant %s", err, fx.EmptyError)
	}
	os.RemoveAll(filepath.Join(root, "empty"))
	d, err := NewImageFolder(root)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(d.Classes, ",") != strings.Join(fx.Classes, ",") {
		t.Errorf("classes %v, torchvision %v", d.Classes, fx.Classes)
	}
	for k, v := range fx.ClassToIdx {
		if d.ClassToIdx[k] != v {
			t.Errorf("class_to_idx[%s] = %d, torchvision %d", k, d.ClassToIdx[k], v)
		}
	}
	if len(d.Samples) != len(fx.Samples) {
		t.Fatalf("%d samples, torchvision %d", len(d.Samples), len(fx.Samples))
	}
	for i, s := range fx.Samples {
		rel, _ := filepath.Rel(root, d.Samples[i].Path)
		if filepath.ToSlash(rel) != s[0].(string) || d.Samples[i].Class != int(s[1].(float64)) {
			t.Errorf("sample %d: %s %d, torchvision %v %v", i, rel, d.Samples[i].Class, s[0], s[1])
		}
	}
	// decoding in the loader's workers, in parallel, in order
	pre := transforms.Preset{Image: transforms.Compose{transforms.Resize{Size: 12}, transforms.CenterCrop{Size: 8}}}
	d, _ = NewImageFolder(root, WithImageTransform(pre, 1))
	l := NewLoader(d, BatchSize(3), Workers(3))
	var labels []int64
	for b := range l.Epoch(0) {
		if s := b.Input.Shape(); s[1] != 3 || s[2] != 8 || s[3] != 8 {
			t.Fatalf("batch shape %v", s)
		}
		labels = append(labels, b.Target.Int64s()...)
	}
	for i, s := range fx.Samples {
		if labels[i] != int64(s[1].(float64)) {
			t.Errorf("label %d = %d", i, labels[i])
		}
	}
}

func TestImageFolderBadFiles(t *testing.T) {
	root := tree(t, []string{"a/1.png", "a/2.png", "b/3.jpg", "b/notes.txt"})
	bad := filepath.Join(root, "b", "fake.png")
	os.WriteFile(bad, []byte("this is text"), 0o644)
	_, err := NewImageFolder(root)
	var be *BadImagesError
	if !errors.As(err, &be) || len(be.Errs) != 1 || !strings.Contains(err.Error(), bad) {
		t.Fatalf("err = %v", err)
	}
	d, err := NewImageFolder(root, SkipBadImages())
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 3 || len(d.Skipped) != 1 || !strings.Contains(d.Skipped[0].Error(), bad) {
		t.Errorf("len %d, skipped %v", d.Len(), d.Skipped)
	}
	// a valid header over corrupt data: Get fails naming the file
	p := filepath.Join(root, "a", "2.png")
	full, _ := os.ReadFile(p)
	os.WriteFile(p, full[:len(full)-30], 0o644)
	d, err = NewImageFolder(root, SkipBadImages())
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Load(1)
	var de *imageio.DecodeError
	if !errors.As(err, &de) || de.Path != p {
		t.Fatalf("Load: %v", err)
	}
	defer func() {
		if r, ok := recover().(error); !ok || !strings.Contains(r.Error(), p) {
			t.Errorf("loader panic %v", r)
		}
	}()
	for range NewLoader(d, BatchSize(1), Workers(2)).Epoch(0) {
	}
}

// As torchvision's dataset[i] (a Python list's indexing): -1 is the last
// sample, and past either end an IndexError, not Go's "index out of range".
func TestImageFolderIndexing(t *testing.T) {
	root := tree(t, []string{"a/1.png", "b/2.png", "b/3.png"})
	d, err := NewImageFolder(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, y := d.Get(-1); y.Int64s()[0] != 1 {
		t.Errorf("Get(-1) class %v, want 1", y)
	}
	if _, y := d.Get(-3); y.Int64s()[0] != 0 {
		t.Errorf("Get(-3) class %v, want 0", y)
	}
	for _, i := range []int{3, -4, 1 << 40} {
		e := testenv.Raises[*ember.IndexError](t, "Get out of range", func() { d.Get(i) })
		if e.Index != int64(i) || e.Size != 3 || e.Op != "data.ImageFolder.Get" {
			t.Error(e)
		}
		testenv.Raises[*ember.IndexError](t, "Load out of range", func() { d.Load(i) })
	}
	sub := &Subset{DS: d, Indices: []int{2, 0}}
	if _, y := sub.Get(-2); y.Int64s()[0] != 1 {
		t.Errorf("Subset.Get(-2) class %v, want 1 (sample 2)", y)
	}
	testenv.Raises[*ember.IndexError](t, "Subset.Get(-3)", func() { sub.Get(-3) })
}
