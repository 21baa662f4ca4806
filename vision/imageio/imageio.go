// Package imageio decodes image files into 8-bit RGB the way PIL's
// Image.open(path).convert("RGB") does, so torchvision pipelines see the
// same pixels: JPEG, PNG and GIF through Go's standard library, WebP, BMP
// and TIFF through golang.org/x/image. Grayscale is replicated to three
// channels, alpha is dropped (not composited: PIL's RGBA→RGB), palettes are
// looked up, CMYK is converted as PIL does, 16-bit colour samples keep their
// high byte and 16-bit grayscale is clipped to 255 (PIL's mode I). JPEG
// and lossy WebP chroma is upsampled and converted to RGB with libjpeg-turbo's
// and libwebp's arithmetic, as PIL gets it from them (JPEG within a level
// or two: Go's IDCT differs). EXIF orientation is applied only when asked
// (AutoOrient), since Image.open does not apply it either
// (ImageOps.exif_transpose does).
package imageio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/gif"  // GIF decoder
	_ "image/jpeg" // JPEG decoder
	_ "image/png"  // PNG decoder
	"io"
	"os"

	_ "golang.org/x/image/bmp"  // BMP decoder
	_ "golang.org/x/image/tiff" // TIFF decoder
	_ "golang.org/x/image/webp" // WebP decoder
)

// DecodeError is a file that is not an image ember can decode.
type DecodeError struct {
	Path string // "" when decoding a reader
	Err  error
}

func (e *DecodeError) Error() string {
	if e.Path == "" {
		return "imageio: " + e.Err.Error()
	}
	return fmt.Sprintf("imageio: %s: %v", e.Path, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Option configures Decode and Open.
type Option func(*options)

type options struct{ orient bool }

// AutoOrient rotates and mirrors a JPEG by its EXIF Orientation tag, as
// PIL's ImageOps.exif_transpose.
func AutoOrient() Option { return func(o *options) { o.orient = true } }

// MaxPixels bounds a decoded image (width × height); larger headers are
// refused before decoding, as PIL's decompression-bomb check (PIL warns
// above 89 478 485 pixels and refuses above twice that).
const MaxPixels = 2 * 89478485

// Open reads and decodes the image file at path.
func Open(path string, opts ...Option) (*image.RGBA, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	img, err := decode(b, opts)
	if err != nil {
		var de *DecodeError
		if errors.As(err, &de) {
			de.Path = path
		}
		return nil, err
	}
	return img, nil
}

// Decode reads an image from r.
func Decode(r io.Reader, opts ...Option) (*image.RGBA, error) {
	if r == nil {
		return nil, &DecodeError{Err: errors.New("nil reader")}
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return decode(b, opts)
}

// peeker gives the decoders Peek, so that image.Decode and DecodeConfig
// pass it on as it is rather than wrapped in a bufio.Reader of their own,
// and ReadAt, so that the TIFF decoder reads at the offsets its header
// gives through ReadAt. Given a reader without ReadAt it buffered
// everything up to such an offset: a 69-byte TIFF pointing at 2 GiB
// allocated 4 GiB and took seconds.
type peeker struct {
	*bufio.Reader
	io.ReaderAt
}

// newPeeker reads r from its start, and ra (the same bytes) at offsets.
func newPeeker(r io.Reader, ra io.ReaderAt) peeker { return peeker{bufio.NewReader(r), ra} }

func decode(b []byte, opts []Option) (*image.RGBA, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	cfg, format, err := image.DecodeConfig(newPeeker(bytes.NewReader(b), bytes.NewReader(b)))
	if err != nil {
		return nil, &DecodeError{Err: err}
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > MaxPixels || cfg.Height > MaxPixels || int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
		return nil, &DecodeError{Err: fmt.Errorf("%s of %dx%d pixels: refused (at most %d)", format, cfg.Width, cfg.Height, MaxPixels)}
	}
	if format == "gif" {
		b = opaqueGIF(b)
	}
	img, _, err := image.Decode(newPeeker(bytes.NewReader(b), bytes.NewReader(b)))
	if err != nil {
		return nil, &DecodeError{Err: fmt.Errorf("%s: %w", format, err)}
	}
	if m, ok := img.(*image.NRGBA64); ok && format == "png" && len(b) > 25 && b[24] == 16 && b[25] == 0 {
		img = gray16Of(m)
	}
	var rgb *image.RGBA
	switch m := img.(type) {
	case *image.YCbCr:
		if format == "jpeg" {
			rgb = jpegRGB(m)
		} else if format == "webp" {
			rgb = webpRGB(m)
		}
	case *image.NYCbCrA: // a lossy WebP with alpha, which PIL's RGB drops
		if format == "webp" {
			rgb = webpRGB(&m.YCbCr)
		}
	}
	if rgb == nil {
		rgb = ToRGB(img)
	}
	if o.orient && format == "jpeg" {
		rgb = Orient(rgb, exifOrientation(b))
	}
	return rgb, nil
}

// ToRGB converts img to opaque 8-bit RGB as PIL's convert("RGB") does
// (nil for nil).
func ToRGB(img image.Image) *image.RGBA {
	if img == nil {
		return nil
	}
	r := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	px := out.Pix
	set := func(i int, cr, cg, cb uint8) { px[i], px[i+1], px[i+2], px[i+3] = cr, cg, cb, 255 }
	i := 0
	switch m := img.(type) {
	case *image.Gray:
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				v := m.GrayAt(x, y).Y
				set(i, v, v, v)
				i += 4
			}
		}
	case *image.Gray16:
		// PIL opens 16-bit grayscale as mode I and clips it to 0..255 on
		// convert("RGB")
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				v := uint8(min(m.Gray16At(x, y).Y, 255))
				set(i, v, v, v)
				i += 4
			}
		}
	case *image.CMYK:
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				c := m.CMYKAt(x, y)
				set(i, cmyk(c.C, c.K), cmyk(c.M, c.K), cmyk(c.Y, c.K))
				i += 4
			}
		}
	case *image.NRGBA: // straight alpha: the colour survives alpha 0
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				c := m.NRGBAAt(x, y)
				set(i, c.R, c.G, c.B)
				i += 4
			}
		}
	case *image.NRGBA64:
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				c := m.NRGBA64At(x, y)
				set(i, uint8(c.R>>8), uint8(c.G>>8), uint8(c.B>>8))
				i += 4
			}
		}
	default:
		// straight (non-premultiplied) colour, alpha dropped
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				switch c := img.At(x, y).(type) {
				case color.NRGBA: // palette entries with tRNS
					set(i, c.R, c.G, c.B)
				default:
					n := color.NRGBA64Model.Convert(c).(color.NRGBA64)
					set(i, uint8(n.R>>8), uint8(n.G>>8), uint8(n.B>>8))
				}
				i += 4
			}
		}
	}
	return out
}

// gray16Of is the gray channel of a 16-bit grayscale PNG with a tRNS
// chunk, which Go decodes as NRGBA64: PIL opens it as mode I, like one
// without tRNS, and clips it to 0..255 rather than taking its high byte.
func gray16Of(m *image.NRGBA64) *image.Gray16 {
	g := image.NewGray16(m.Rect)
	for y := m.Rect.Min.Y; y < m.Rect.Max.Y; y++ {
		for x := m.Rect.Min.X; x < m.Rect.Max.X; x++ {
			g.SetGray16(x, y, color.Gray16{Y: m.NRGBA64At(x, y).R})
		}
	}
	return g
}

// cmyk is Pillow's cmyk2rgb: (255-c)(255-k)/255 with MULDIV255 rounding.
func cmyk(c, k uint8) uint8 {
	nk := 255 - int(k)
	t := int(c)*nk + 128
	return uint8(nk - ((t>>8)+t)>>8)
}

// CheckHeader reads only as much of the file at path as its header needs
// and reports whether it is an image ember can decode (a *DecodeError
// naming the path when not).
func CheckHeader(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return &DecodeError{Path: path, Err: err}
	}
	defer f.Close()
	cfg, format, err := image.DecodeConfig(newPeeker(f, f))
	if err != nil {
		return &DecodeError{Path: path, Err: err}
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > MaxPixels || cfg.Height > MaxPixels || int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
		return &DecodeError{Path: path, Err: fmt.Errorf("%s of %dx%d pixels: refused", format, cfg.Width, cfg.Height)}
	}
	return nil
}
