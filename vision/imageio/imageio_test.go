package imageio

import (
	"bytes"
	"errors"
	"image"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"image/png"
)

const fixtures = "../../testdata/vision"

func want(t *testing.T, name string) *image.RGBA {
	t.Helper()
	f, err := os.Open(filepath.Join(fixtures, "want", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return ToRGB(img)
}

// diff returns the largest per-channel difference and the mean absolute one.
func diff(a, b *image.RGBA) (maxd int, mean float64) {
	s := 0
	for i := range a.Pix {
		d := int(a.Pix[i]) - int(b.Pix[i])
		if d < 0 {
			d = -d
		}
		s += d
		maxd = max(maxd, d)
	}
	return maxd, float64(s) / float64(len(a.Pix)*3/4)
}

// TestDecodeMatchesPIL: each file decoded by ember against PIL's
// Image.open(f).convert("RGB"); lossless formats exactly, JPEG within the
// stated tolerance: Go's IDCT differs from libjpeg-turbo's by a level or
// two (chroma is upsampled and converted as libjpeg-turbo does; Go's own
// replication of 4:2:0 chroma was up to ~90 levels off at sharp colour
// edges). testdata/gen_jpeg_fixtures.py makes the 4:2:2, 4:4:0, odd-size
// and narrow files. Lossy WebP decodes exactly (testdata/gen_webp_fixtures.py):
// it was decoded with JPEG's full-range colour formula, up to 76 levels off.
func TestDecodeMatchesPIL(t *testing.T) {
	for _, c := range []struct {
		file    string
		maxDiff int
		mean    float64
	}{
		{"rgb.png", 0, 0}, {"gray.png", 0, 0}, {"rgba.png", 0, 0}, {"la.png", 0, 0}, {"palette.png", 0, 0},
		{"gray16.png", 0, 0}, {"gray16trns.png", 0, 0}, {"rgb.bmp", 0, 0}, {"rgb.tiff", 0, 0}, {"lossless.webp", 0, 0}, {"rgb.ppm", 0, 0}, {"gray.pgm", 0, 0},
		{"q90_444.jpg", 3, 0.1}, {"gray.jpg", 2, 0.1}, {"q90_420.jpg", 3, 0.1}, {"cmyk.jpg", 3, 0.7},
		{"orient6.jpg", 3, 0.1}, {"q90_422.jpg", 3, 0.1}, {"q90_420_odd.jpg", 3, 0.1}, {"s440.jpg", 3, 0.1},
		{"transparent.gif", 0, 0}, {"anim_transparent.gif", 0, 0},
		{"lossy_odd.webp", 0, 0}, {"lossy_even.webp", 0, 0}, {"lossy_flat.webp", 0, 0}, {"lossy_alpha.webp", 0, 0},
		{"narrow420_3.jpg", 3, 0.1}, {"narrow420_5.jpg", 3, 0.1}, {"narrow422_4.jpg", 3, 0.2},
	} {
		got, err := Open(filepath.Join(fixtures, c.file))
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		w := want(t, c.file+".rgb.png")
		if got.Rect != w.Rect {
			t.Errorf("%s: %v, PIL %v", c.file, got.Rect, w.Rect)
			continue
		}
		md, mean := diff(got, w)
		t.Logf("%-14s max %2d mean %.3f", c.file, md, mean)
		if md > c.maxDiff || mean > c.mean {
			t.Errorf("%s: max |ember - PIL| = %d (tolerance %d), mean %.3f (tolerance %.3f)", c.file, md, c.maxDiff, mean, c.mean)
		}
	}
}

func TestAutoOrientMatchesExifTranspose(t *testing.T) {
	for _, f := range []string{"orient3.jpg", "orient6.jpg", "orient8.jpg"} {
		plain, err := Open(filepath.Join(fixtures, f))
		if err != nil {
			t.Fatal(err)
		}
		if plain.Rect.Dx() != 40 { // Image.open does not rotate
			t.Errorf("%s: opened as %v", f, plain.Rect)
		}
		got, err := Open(filepath.Join(fixtures, f), AutoOrient())
		if err != nil {
			t.Fatal(err)
		}
		w := want(t, f+".oriented.png")
		if got.Rect != w.Rect {
			t.Fatalf("%s: %v, exif_transpose %v", f, got.Rect, w.Rect)
		}
		if md, _ := diff(got, w); md > 3 {
			t.Errorf("%s: max diff %d", f, md)
		}
	}
}

func TestCorrupt(t *testing.T) {
	dir := t.TempDir()
	b, _ := os.ReadFile(filepath.Join(fixtures, "rgb.png"))
	for name, data := range map[string][]byte{"text.png": []byte("not an image"), "cut.png": b[:len(b)/2], "empty.jpg": nil} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o644)
		_, err := Open(p)
		var de *DecodeError
		if !errors.As(err, &de) || de.Path != p {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if _, err := Decode(bytes.NewReader([]byte("GIF89a"))); err == nil {
		t.Error("a bare GIF header decoded")
	}
}

func TestCMYKFormula(t *testing.T) {
	// Pillow's cmyk2rgb: nk - MULDIV255(c, nk), hand-worked
	for _, c := range [][3]int{{0, 0, 255}, {255, 0, 0}, {128, 0, 127}, {100, 50, 125}, {0, 255, 0}} {
		if got := cmyk(uint8(c[0]), uint8(c[1])); int(got) != c[2] {
			t.Errorf("cmyk(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}

// TestHostileHeaders: PNM headers whose sides multiply past int64 (two
// sides of 2³² made 0 and reached image.NewGray's panic) or that claim
// pixels the file lacks, and a 69-byte TIFF whose first directory lies at
// 2.3 GB (found by FuzzDecode: it allocated 4 GiB and took seconds), are
// *DecodeErrors, without allocating what they claim.
func TestHostileHeaders(t *testing.T) {
	tiff69 := "II*\x00\x00\x00\x00\x8c\x00\x00\x00\x15\x01\x03\x00\x01\x00\x00\x00\x03\x00\x00\x00\x16\x01\x04\x00\x01\x00\x00\x000\x00\x00\x00\x17\x01\x04\x00\x01\x00\x00\x00\x00$\x00\x00\x1c\x01\x03\x00\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\b\x00\b\x00\b\x11"
	for _, s := range []string{"P5 4294967296 4294967296 255\n", "P6 4294967296 4294967296 255\n",
		"P6 9999999999 9999999999 255\n", "P5 13000 13000 255\n", "P6 13000 13000 65535\n\x01\x02", tiff69} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		img, err := Decode(bytes.NewReader([]byte(s)))
		runtime.ReadMemStats(&after)
		var de *DecodeError
		if img != nil || !errors.As(err, &de) {
			t.Errorf("%q: image %v, err %v", s, img != nil, err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
			t.Errorf("%q: %d MiB allocated", s, got>>20)
		}
		// the same through a file, as ImageFolder checks its files
		p := filepath.Join(t.TempDir(), "x")
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&before)
		err = CheckHeader(p)
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
			t.Errorf("%q: CheckHeader allocated %d MiB (%v)", s, got>>20, err)
		}
	}
}

// FuzzDecode: any bytes decode to an image of at most MaxPixels or give a
// *DecodeError; the seeds are the fixtures of every format, a PNM among
// them (its decoder is ember's own), with EXIF orientation honoured.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"gray.pgm", "rgb.ppm", "palette.png", "orient6.jpg", "rgb.bmp", "lossless.webp", "rgb.tiff",
		"lossy_alpha.webp", "lossy_even.webp", "narrow420_3.jpg", "narrow422_4.jpg", "s440.jpg", "anim_transparent.gif"} {
		b, err := os.ReadFile(filepath.Join(fixtures, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("P5 2 2 255\n\x00\x01\x02\x03"))
	f.Add([]byte("P5 4294967296 4294967296 255\n"))
	f.Add([]byte("P6\n# c\n1 1\n65535\n\x00\x01\x00\x02\x00\x03"))
	f.Fuzz(func(t *testing.T, b []byte) {
		img, err := Decode(bytes.NewReader(b), AutoOrient())
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("%T %v", err, err)
			}
			return
		}
		r := img.Bounds()
		if r.Empty() || int64(r.Dx())*int64(r.Dy()) > MaxPixels || len(img.Pix) < 4*r.Dx()*r.Dy() {
			t.Fatalf("bounds %v, %d bytes of pixels", r, len(img.Pix))
		}
	})
}
