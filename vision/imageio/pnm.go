package imageio

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io"
	"math"
)

// Binary PGM (P5) and PPM (P6), which torchvision's ImageFolder lists
// and Go's libraries do not decode.
func init() {
	image.RegisterFormat("pgm", "P5", decodePNM, decodePNMConfig)
	image.RegisterFormat("ppm", "P6", decodePNM, decodePNMConfig)
}

type pnmHeader struct {
	magic        string
	w, h, maxval int
}

func readPNMHeader(br *bufio.Reader) (pnmHeader, error) {
	var hd pnmHeader
	word := func() (int, string, error) {
		var s []byte
		for {
			c, err := br.ReadByte()
			if err != nil {
				return 0, "", err
			}
			if c == '#' && len(s) == 0 {
				if _, err := br.ReadString('\n'); err != nil {
					return 0, "", err
				}
				continue
			}
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				if len(s) > 0 {
					break
				}
				continue
			}
			s = append(s, c)
			if len(s) > 10 {
				return 0, "", errors.New("pnm: header field too long")
			}
		}
		n := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				return 0, string(s), nil
			}
			n = n*10 + int(c-'0')
		}
		return n, string(s), nil
	}
	_, m, err := word()
	if err != nil {
		return hd, err
	}
	hd.magic = m
	if m != "P5" && m != "P6" {
		return hd, fmt.Errorf("pnm: magic %q", m)
	}
	for _, p := range []*int{&hd.w, &hd.h, &hd.maxval} {
		if *p, _, err = word(); err != nil {
			return hd, err
		}
	}
	// each side at most MaxPixels, so that w·h cannot overflow (two
	// 10-digit sides of 2³² multiplied to 0)
	if hd.w <= 0 || hd.h <= 0 || hd.w > MaxPixels || hd.h > MaxPixels || hd.maxval <= 0 || hd.maxval > 65535 {
		return hd, fmt.Errorf("pnm: bad header %dx%d maxval %d", hd.w, hd.h, hd.maxval)
	}
	return hd, nil
}

func decodePNMConfig(r io.Reader) (image.Config, error) {
	hd, err := readPNMHeader(bufio.NewReader(r))
	if err != nil {
		return image.Config{}, err
	}
	m := color.Model(color.RGBAModel)
	if hd.magic == "P5" {
		m = color.GrayModel
	}
	return image.Config{ColorModel: m, Width: hd.w, Height: hd.h}, nil
}

func decodePNM(r io.Reader) (image.Image, error) {
	br := bufio.NewReader(r)
	hd, err := readPNMHeader(br)
	if err != nil {
		return nil, err
	}
	if int64(hd.w)*int64(hd.h) > MaxPixels {
		return nil, errors.New("pnm: too large")
	}
	ch, bps := 1, 1
	if hd.magic == "P6" {
		ch = 3
	}
	if hd.maxval > 255 {
		bps = 2
	}
	// read what is there rather than allocate what the header claims: a
	// 20-byte header claiming MaxPixels costs no gigabyte
	need := hd.w * hd.h * ch * bps
	buf, err := io.ReadAll(io.LimitReader(br, int64(need)))
	if err != nil {
		return nil, fmt.Errorf("pnm: %w", err)
	}
	if len(buf) < need {
		return nil, fmt.Errorf("pnm: %d bytes of pixels, the header says %d", len(buf), need)
	}
	lut := pnmLUT(hd.magic, hd.maxval, bps)
	sample := func(i int) uint8 {
		if bps == 2 {
			return lut[int(buf[2*i])<<8|int(buf[2*i+1])]
		}
		return lut[buf[i]]
	}
	rect := image.Rect(0, 0, hd.w, hd.h)
	if ch == 1 {
		g := image.NewGray(rect)
		for i := range g.Pix {
			g.Pix[i] = sample(i)
		}
		return g, nil
	}
	out := image.NewRGBA(rect)
	for i := 0; i < hd.w*hd.h; i++ {
		out.Pix[i*4], out.Pix[i*4+1], out.Pix[i*4+2], out.Pix[i*4+3] = sample(3*i), sample(3*i+1), sample(3*i+2), 255
	}
	return out, nil
}

// pnmLUT maps each possible sample to the byte PIL's
// Image.open(f).convert("RGB") gives it. Pillow 9.4 scales a sample v to
// min(out, round(v / maxval * out)) (Python's round, half to even), with
// out 255, except for a 16-bit PGM (maxval > 255): that opens as mode I
// with out 65535 (maxval 65535 read as it is), and convert("RGB") clips
// mode I to 0..255 rather than scaling it, as for a 16-bit PNG.
func pnmLUT(magic string, maxval, bps int) []uint8 {
	out := 255
	if magic == "P5" && maxval > 255 {
		out = 65535
	}
	lut := make([]uint8, 1<<(8*bps))
	for v := range lut {
		s := v
		if maxval != out {
			s = int(min(float64(out), math.RoundToEven(float64(v)/float64(maxval)*float64(out))))
		}
		lut[v] = uint8(min(s, 255))
	}
	return lut
}
