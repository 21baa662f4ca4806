package imageio

import (
	"bytes"
	"encoding/json"
	"errors"
	"image"
	"os"
	"path/filepath"
	"testing"
)

// TestPNMMaxvalMatchesPIL decodes PGM/PPM files whose maxval is not 255
// (8- and 16-bit samples) against Pillow 9.4's Image.open(f).convert("RGB")
// (testdata/gen_pnm_fixtures.py): samples rounded, not truncated, when
// scaled, and a 16-bit PGM clipped to 255 as PIL's mode I is. ember
// truncated (v·255/maxval) and scaled 16-bit PGMs, so a P5 of maxval 65535
// holding 1000 gave 3 where PIL gives 255.
func TestPNMMaxvalMatchesPIL(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(fixtures, "pnm_maxval.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		File []byte
		W, H int
		RGB  []uint8
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range cases {
		head := string(c.File[:min(len(c.File), 12)])
		img, err := Decode(bytes.NewReader(c.File))
		if err != nil {
			t.Errorf("%q: %v", head, err)
			continue
		}
		if img.Rect.Dx() != c.W || img.Rect.Dy() != c.H {
			t.Errorf("%q: %v, PIL %dx%d", head, img.Rect, c.W, c.H)
			continue
		}
		var got []uint8
		for i := 0; i < len(img.Pix); i += 4 {
			got = append(got, img.Pix[i:i+3]...)
		}
		if !bytes.Equal(got, c.RGB) {
			t.Errorf("%q: %v, PIL %v", head, got, c.RGB)
		}
	}
}

// Decode(nil) is a *DecodeError, not a nil dereference in io.ReadAll.
func TestDecodeNilReader(t *testing.T) {
	var de *DecodeError
	if _, err := Decode(nil); !errors.As(err, &de) {
		t.Errorf("Decode(nil): %T %v", err, err)
	}
}

// Orient reads a sub-image at its own origin and stride (it read Pix as if
// the image started at (0, 0) with a tight stride: the wrong pixels, or an
// index out of range), and Orient(nil, o) is nil.
func TestOrientSubImage(t *testing.T) {
	full := image.NewRGBA(image.Rect(0, 0, 5, 4))
	for i := range full.Pix {
		full.Pix[i] = uint8(i)
	}
	sub := full.SubImage(image.Rect(1, 1, 4, 3)).(*image.RGBA) // 3×2 at (1, 1)
	got := Orient(sub, 6)                                      // rotate 90° clockwise: 2×3
	if got.Rect != image.Rect(0, 0, 2, 3) {
		t.Fatalf("rect %v", got.Rect)
	}
	// output (dx, dy) = (h-1-y, x) takes input (x, y)
	for y := 0; y < 2; y++ {
		for x := 0; x < 3; x++ {
			want := full.RGBAAt(1+x, 1+y)
			if g := got.RGBAAt(2-1-y, x); g != want {
				t.Errorf("input (%d, %d): %v, want %v", x, y, g, want)
			}
		}
	}
	if Orient(nil, 6) != nil {
		t.Error("Orient(nil) not nil")
	}
}
