package imageio

import "image"

// webpRGB converts a lossy WebP's 4:2:0 YCbCr (VP8's limited-range
// BT.601) to RGB as libwebp does for PIL: its "fancy" upsampler
// (upsampling.c: chroma interpolated 9:3:3:1 between the two nearest rows
// and columns, the first row, and the last of an even height, from one
// chroma row) and its fixed-point conversion (yuv.h: VP8YUVToR/G/B). Go's
// YCbCr→RGB is JPEG's full-range formula, which shifted every lossy WebP's
// colours (a flat (200, 30, 60) decoded with red 190). It returns nil for
// a ratio other than 4:2:0.
func webpRGB(m *image.YCbCr) *image.RGBA {
	if m.SubsampleRatio != image.YCbCrSubsampleRatio420 {
		return nil
	}
	r := m.Rect
	w, h := r.Dx(), r.Dy()
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	if w == 0 || h == 0 {
		return out
	}
	ch := (h + 1) / 2
	crow := func(p []uint8, cy int) []uint8 { return p[m.COffset(r.Min.X, r.Min.Y+2*cy):] }
	u, v := make([]int, w), make([]int, w)
	for y := 0; y < h; y++ {
		// the chroma rows nearer (near) and further (far) from luma row y
		var near, far int
		switch {
		case y == 0:
			near, far = 0, 0
		case y%2 == 1:
			near, far = (y-1)/2, min((y+1)/2, ch-1)
		default:
			near, far = y/2, y/2-1
		}
		fancyRow(u, crow(m.Cb, near), crow(m.Cb, far), w)
		fancyRow(v, crow(m.Cr, near), crow(m.Cr, far), w)
		yrow := m.Y[m.YOffset(r.Min.X, r.Min.Y+y):]
		o := out.Pix[y*out.Stride:]
		for x := 0; x < w; x++ {
			yy := mulHi(int(yrow[x]), 19077)
			o[4*x] = vp8Clip8(yy + mulHi(v[x], 26149) - 14234)
			o[4*x+1] = vp8Clip8(yy - mulHi(u[x], 6419) - mulHi(v[x], 13320) + 8708)
			o[4*x+2] = vp8Clip8(yy + mulHi(u[x], 33050) - 17685)
			o[4*x+3] = 255
		}
	}
	return out
}

// fancyRow is libwebp's UpsampleRgbLinePair for one output row and one
// chroma plane: near is the chroma row nearer the output row, far the
// other (the same row at the top and bottom edges).
func fancyRow(dst []int, near, far []uint8, w int) {
	n := func(i int) int { return int(near[i]) }
	f := func(i int) int { return int(far[i]) }
	dst[0] = (3*n(0) + f(0) + 2) >> 2
	last := (w - 1) >> 1
	for j := 1; j <= last; j++ {
		// the 2×2 samples around pixels 2j-1 and 2j: a is the nearer row's
		// left sample, b its right one, c and d the further row's
		a, b, c, d := n(j-1), n(j), f(j-1), f(j)
		avg := a + b + c + d + 8
		dA := (avg + 2*(b+c)) >> 3 // leans towards a (and d)
		dB := (avg + 2*(a+d)) >> 3 // leans towards b (and c)
		dst[2*j-1] = (dA + a) >> 1
		dst[2*j] = (dB + b) >> 1
	}
	if w%2 == 0 {
		dst[w-1] = (3*n(last) + f(last) + 2) >> 2
	}
}

func mulHi(v, coeff int) int { return (v * coeff) >> 8 }

// vp8Clip8 is libwebp's VP8Clip8: a value with 6 fractional bits to a byte.
func vp8Clip8(v int) uint8 {
	const mask = (256 << 6) - 1
	if v&^mask == 0 {
		return uint8(v >> 6)
	}
	if v < 0 {
		return 0
	}
	return 255
}
