package imageio

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io"
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
	sample := func(i int) uint8 { // scaled to 0..255 as PIL does for maxval != 255
		v := int(buf[i*bps])
		if bps == 2 {
			v = v<<8 | int(buf[i*bps+1])
		}
		if hd.maxval == 255 {
			return uint8(v)
		}
		return uint8(min(v*255/hd.maxval, 255))
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
