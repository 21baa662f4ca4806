package transforms

import (
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
	"github.com/emberml/ember/vision/imageio"
	"github.com/emberml/ember/weights"
)

const fix = "../../testdata/vision"

func load(t *testing.T, name string) *image.RGBA {
	t.Helper()
	f, err := os.Open(filepath.Join(fix, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return imageio.ToRGB(img)
}

func src(t *testing.T) *image.RGBA { return load(t, "rgb.png") } // 64×48

func maxDiff(a, b *image.RGBA) int {
	m := 0
	for i := range a.Pix {
		d := int(a.Pix[i]) - int(b.Pix[i])
		m = max(m, d, -d)
	}
	return m
}

// same compares an image with a torchvision/PIL fixture: size exactly,
// pixels within tol levels.
func same(t *testing.T, name string, got *image.RGBA, tol int) {
	t.Helper()
	w := load(t, "want/"+name)
	if got.Rect != w.Rect {
		t.Errorf("%s: %v, torchvision %v", name, got.Rect, w.Rect)
		return
	}
	if d := maxDiff(got, w); d > tol {
		t.Errorf("%s: max |ember - torchvision| = %d levels > %d", name, d, tol)
	}
}

// Pillow's resampler is reproduced in its fixed-point arithmetic: exact.
func TestResizeExact(t *testing.T) {
	s := src(t)
	for _, n := range []int{24, 17, 48, 100} {
		same(t, fmt.Sprintf("resize%d.png", n), Resize{Size: n}.Apply(s, nil), 0)
	}
	same(t, "resize30x50.png", Resize{Width: 50, Height: 30}.Apply(s, nil), 0)
	same(t, "tall_resize20.png", Resize{Size: 20}.Apply(rot90(s), nil), 0)
	same(t, "rcrop.png", ResizedCrop(s, 5, 7, 30, 41, 32, 32), 0)
}

// rot90 is PIL's transpose(ROTATE_90) (counter-clockwise).
func rot90(img *image.RGBA) *image.RGBA {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	out := image.NewRGBA(image.Rect(0, 0, h, w))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			copy(out.Pix[((w-1-x)*h+y)*4:], img.Pix[(y*w+x)*4:(y*w+x)*4+4])
		}
	}
	return out
}

func TestCropFlipExact(t *testing.T) {
	s := src(t)
	for _, n := range []int{32, 33, 47} {
		same(t, fmt.Sprintf("ccrop%d.png", n), CenterCrop{Size: n}.Apply(s, nil), 0)
	}
	same(t, "ccrop70x30.png", CenterCrop{Width: 30, Height: 70}.Apply(s, nil), 0)
	same(t, "hflip.png", HFlip(s), 0)
	same(t, "hflip.png", RandomHorizontalFlip{P: 1}.Apply(s, rand.New(rand.NewPCG(1, 1))), 0)
	if got := (RandomHorizontalFlip{P: 0}).Apply(s, rand.New(rand.NewPCG(1, 1))); maxDiff(got, s) != 0 {
		t.Error("P=0 flipped")
	}
}

// ColorJitter's adjustments: brightness, contrast and saturation are
// Pillow's blends (exact); hue goes through Pillow's 8-bit HSV, reproduced
// to within one level.
func TestColorAdjust(t *testing.T) {
	s := src(t)
	for _, v := range []float64{0.6, 1.3} {
		same(t, fmt.Sprintf("brightness%g.png", v), AdjustBrightness(s, v), 0)
	}
	for _, v := range []float64{0.5, 1.4} {
		same(t, fmt.Sprintf("contrast%g.png", v), AdjustContrast(s, v), 0)
	}
	for _, v := range []float64{0, 0.4, 1.7} {
		same(t, fmt.Sprintf("saturation%g.png", v), AdjustSaturation(s, v), 0)
	}
	for _, v := range []float64{-0.3, -0.05, 0.1, 0.45} {
		name := fmt.Sprintf("hue%g.png", v)
		got := AdjustHue(s, v)
		same(t, name, got, 2)
		w, n := load(t, "want/"+name), 0
		for i := range w.Pix {
			if w.Pix[i] != got.Pix[i] {
				n++
			}
		}
		if frac := float64(n) / float64(len(w.Pix)*3/4); frac > 0.01 {
			t.Errorf("%s: %.2f%% of values differ", name, 100*frac)
		} else {
			t.Logf("%s: %.2f%% of values differ", name, 100*frac)
		}
	}
}

func TestColorJitterDistribution(t *testing.T) {
	s := src(t)
	r := rand.New(rand.NewPCG(3, 4))
	cj := ColorJitter{Brightness: 0.4}
	// brightness only: the result is the brightness blend with the factor
	// drawn uniformly from [0.6, 1.4] after the order's permutation
	for seed := range uint64(5) {
		r1, r2 := rand.New(rand.NewPCG(seed, 9)), rand.New(rand.NewPCG(seed, 9))
		got := cj.Apply(s, r1)
		r2.Perm(4)
		f := 0.6 + r2.Float64()*0.8
		if maxDiff(AdjustBrightness(s, f), got) != 0 {
			t.Errorf("seed %d: not the brightness blend with factor %v", seed, f)
		}
	}
	if maxDiff(ColorJitter{}.Apply(s, r), s) != 0 {
		t.Error("ColorJitter{} changed the image")
	}
}

func TestRandomResizedCropParams(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	rc := RandomResizedCrop{Size: 16}
	for range 200 {
		top, left, h, w := rc.Params(64, 48, r)
		area := float64(h*w) / (64 * 48)
		ratio := float64(w) / float64(h)
		if top < 0 || left < 0 || top+h > 48 || left+w > 64 || area < 0.07 || area > 1 || ratio < 0.7 || ratio > 1.4 {
			t.Fatalf("params %d %d %d %d: area %.3f ratio %.3f", top, left, h, w, area, ratio)
		}
	}
	// impossible ratio: torchvision's fallback, the central crop at the
	// nearest allowed ratio: 64×48 with ratio ≥ 2 → w = 64, h = round(64/2)... but
	// in > ratio[1] is false; in < ratio[0]: w = width, h = round(w / 2) = 32
	top, left, h, w := RandomResizedCrop{Size: 8, Scale: [2]float64{2, 3}, Ratio: [2]float64{2, 3}}.Params(64, 48, r)
	if top != 8 || left != 0 || h != 32 || w != 64 {
		t.Errorf("fallback %d %d %d %d, want 8 0 32 64", top, left, h, w)
	}
	got := rc.Apply(src(t), r)
	if got.Rect.Dx() != 16 || got.Rect.Dy() != 16 {
		t.Errorf("size %v", got.Rect)
	}
}

func tensors(t *testing.T) map[string]*ember.Tensor {
	m, err := weights.LoadSafetensors(filepath.Join(fix, "want", "tensors.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func closeTo(t *testing.T, name string, got, want *ember.Tensor, tol float64) {
	t.Helper()
	if !got.Shape().Equal(want.Shape()) {
		t.Errorf("%s: shape %v, torchvision %v", name, got.Shape(), want.Shape())
		return
	}
	g, w := got.Float32s(), want.Float32s()
	d := 0.0
	for i := range g {
		d = math.Max(d, math.Abs(float64(g[i]-w[i])))
	}
	t.Logf("%-16s max |ember - torchvision| = %.2g", name, d)
	if d > tol {
		t.Errorf("%s: max |ember - torchvision| = %g > %g", name, d, tol)
	}
}

var imagenetMean, imagenetStd = []float64{0.485, 0.456, 0.406}, []float64{0.229, 0.224, 0.225}

func TestTensorTransforms(t *testing.T) {
	want := tensors(t)
	s := src(t)
	x := ToTensor(s)
	closeTo(t, "to_tensor", x, want["to_tensor"], 0)
	closeTo(t, "normalize", Normalize(x, imagenetMean, imagenetStd), want["normalize"], 1e-6)
	p := Preset{Image: Compose{Resize{Size: 40}, CenterCrop{Size: 32}}, Mean: imagenetMean, Std: imagenetStd}
	closeTo(t, "pipeline", p.Apply(s, nil), want["pipeline"], 1e-6)
	closeTo(t, "tensor_resize24", ResizeTensor(x, 24), want["tensor_resize24"], 1e-5)
	closeTo(t, "tensor_resize100", ResizeTensor(x, 100), want["tensor_resize100"], 1e-5)
	closeTo(t, "tensor_ccrop33", CenterCropTensor(x, 33), want["tensor_ccrop33"], 0)
	closeTo(t, "tensor_hflip", HFlipTensor(x), want["tensor_hflip"], 0)
}

// TestOutputBound: an output past imageio.MaxPixels, or with a negative
// side, is a *ember.ValueError naming the transform (a resize to 100 000²
// was a fatal out-of-memory, one to 10¹⁸ a makeslice runtime error).
func TestOutputBound(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	x := ember.Ones(ember.Shape{3, 4, 5})
	for name, f := range map[string]func(){
		"transforms.Resize":           func() { ResizeImage(img, 100000, 100000) },
		"transforms.Resize ":          func() { Resize{Size: 1 << 60}.Apply(img, nil) },
		"transforms.Crop":             func() { Crop(img, 0, 0, -1, 2) },
		"transforms.Crop ":            func() { CenterCrop{Size: 1 << 40}.Apply(img, nil) },
		"transforms.ResizeTensor":     func() { ResizeTensor(x, 1<<40) },
		"transforms.CenterCropTensor": func() { CenterCropTensor(x, 1<<31) },
	} {
		err := ember.Try(f)
		var ve *ember.ValueError
		if !errors.As(err, &ve) || ve.Op != strings.TrimSpace(name) || !strings.Contains(err.Error(), "MaxPixels") {
			t.Errorf("%s: %T %v", name, err, err)
		}
	}
}

// As F.normalize: one mean and std apply to every channel (ember refused
// them as a shape mismatch), and a std that is zero in float32 is a
// ValueError ("std evaluated to zero"), not a tensor of Inf and NaN.
func TestNormalizeOneValueAndZeroStd(t *testing.T) {
	x := ember.FromSlice([]float32{0, 0.5, 1, 0.75}, ember.Shape{2, 1, 2})
	got := Normalize(x, []float64{0.5}, []float64{0.25}).Float32s()
	if want := []float32{-2, 0, 2, 1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Normalize(x, [0.5], [0.25]) = %v, want %v", got, want)
	}
	for _, std := range [][]float64{{0}, {1, 1e-46}} {
		mean := make([]float64, len(std))
		e := testenv.Raises[*ember.ValueError](t, "zero std", func() { Normalize(x, mean, std) })
		if e.Op != "transforms.Normalize" || !strings.Contains(e.Msg, "evaluated to zero") {
			t.Error(e)
		}
	}
}

// A nil image (imageio.Open's error unchecked), one whose Pix is shorter
// than its Rect needs, and a random transform without a random source are
// *ember.ValueErrors naming the transform, not a nil dereference or an
// index out of range.
func TestBadImagesAndNilRand(t *testing.T) {
	short := &image.RGBA{Rect: image.Rect(0, 0, 4, 4), Stride: 16, Pix: make([]uint8, 60)}
	negStride := &image.RGBA{Rect: image.Rect(0, 0, 4, 4), Stride: -16, Pix: make([]uint8, 64)}
	r := rand.New(rand.NewPCG(1, 2))
	for _, img := range []*image.RGBA{nil, short, negStride} {
		for op, f := range map[string]func(){
			"transforms.Resize":               func() { Resize{Size: 2}.Apply(img, nil) },
			"transforms.Resize ":              func() { ResizeImage(img, 2, 2) },
			"transforms.CenterCrop":           func() { CenterCrop{Size: 2}.Apply(img, nil) },
			"transforms.Crop":                 func() { Crop(img, 0, 0, 2, 2) },
			"transforms.RandomResizedCrop":    func() { RandomResizedCrop{Size: 2}.Apply(img, r) },
			"transforms.RandomHorizontalFlip": func() { RandomHorizontalFlip{P: 1}.Apply(img, r) },
			"transforms.HFlip":                func() { HFlip(img) },
			"transforms.ToTensor":             func() { ToTensor(img) },
			"transforms.AdjustBrightness":     func() { AdjustBrightness(img, 1.2) },
			"transforms.AdjustContrast":       func() { AdjustContrast(img, 1.2) },
			"transforms.AdjustSaturation":     func() { AdjustSaturation(img, 1.2) },
			"transforms.AdjustHue":            func() { AdjustHue(img, 0.1) },
			"transforms.ColorJitter":          func() { ColorJitter{Brightness: 0.5}.Apply(img, r) },
		} {
			e := testenv.Raises[*ember.ValueError](t, op, f)
			if e.Op != strings.TrimSpace(op) {
				t.Errorf("%s: %v", op, e)
			}
		}
	}
	ok := image.NewRGBA(image.Rect(0, 0, 4, 4))
	for op, f := range map[string]func(){
		"transforms.RandomResizedCrop":    func() { RandomResizedCrop{Size: 2}.Apply(ok, nil) },
		"transforms.RandomHorizontalFlip": func() { RandomHorizontalFlip{P: 0.5}.Apply(ok, nil) },
		"transforms.ColorJitter":          func() { ColorJitter{Hue: 0.1}.Apply(ok, nil) },
	} {
		if e := testenv.Raises[*ember.ValueError](t, op+" nil rand", f); e.Op != op || !strings.Contains(e.Msg, "*rand.Rand") {
			t.Errorf("%s: %v", op, e)
		}
	}
	// a sub-image (non-zero origin, wide stride) is fine
	sub := image.NewRGBA(image.Rect(0, 0, 8, 8)).SubImage(image.Rect(2, 3, 6, 7)).(*image.RGBA)
	if got := ToTensor(sub).Shape(); !got.Equal(ember.Shape{3, 4, 4}) {
		t.Errorf("ToTensor(sub-image) shape %v", got)
	}
}
