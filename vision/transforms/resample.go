package transforms

import (
	"image"
	"math"
)

// coeffs is Pillow's precompute_coeffs for the bilinear (triangle) filter
// with antialiasing: for each output pixel the first input pixel, the count,
// and normalised weights (ksize per pixel).
func coeffs(inSize int, in0, in1 float64, outSize int) (bounds []int, kk []float64, ksize int) {
	scale := (in1 - in0) / float64(outSize)
	filterscale := max(scale, 1.0)
	support := 1.0 * filterscale
	ksize = int(math.Ceil(support))*2 + 1
	kk = make([]float64, outSize*ksize)
	bounds = make([]int, outSize*2)
	for xx := 0; xx < outSize; xx++ {
		center := in0 + (float64(xx)+0.5)*scale
		ww := 0.0
		ss := 1.0 / filterscale
		xmin := max(int(center-support+0.5), 0) // C's (int) truncation; the value is ≥ -0.5+…
		if center-support+0.5 < 0 {
			xmin = 0
		}
		xmax := min(int(center+support+0.5), inSize) - xmin
		k := kk[xx*ksize : (xx+1)*ksize]
		for x := 0; x < xmax; x++ {
			w := triangle((float64(x+xmin) - center + 0.5) * ss)
			k[x] = w
			ww += w
		}
		for x := 0; x < xmax; x++ {
			if ww != 0 {
				k[x] /= ww
			}
		}
		bounds[xx*2], bounds[xx*2+1] = xmin, xmax
	}
	return bounds, kk, ksize
}

func triangle(x float64) float64 {
	x = math.Abs(x)
	if x < 1 {
		return 1 - x
	}
	return 0
}

const precisionBits = 32 - 8 - 2

// fixed is Pillow's normalize_coeffs_8bpc.
func fixed(kk []float64) []int32 {
	out := make([]int32, len(kk))
	for i, v := range kk {
		if v < 0 {
			out[i] = int32(-0.5 + v*(1<<precisionBits))
		} else {
			out[i] = int32(0.5 + v*(1<<precisionBits))
		}
	}
	return out
}

func clip8(v int32) uint8 {
	if v >= 1<<precisionBits<<8 {
		return 255
	}
	if v <= 0 {
		return 0
	}
	return uint8(v >> precisionBits)
}

// resampleRGBA resizes the box (x0, y0)-(x1, y1) of img to w×h exactly as
// Pillow's ImagingResample with the BILINEAR filter: a horizontal pass into
// 8-bit rows, then a vertical pass, fixed-point weights with 22 fraction
// bits, round half up and clamp.
func resampleRGBA(img *image.RGBA, x0, y0, x1, y1 float64, w, h int) *image.RGBA {
	checkOut("transforms.Resize", w, h)
	iw, ih := img.Rect.Dx(), img.Rect.Dy()
	needH := w != iw || x0 != 0 || x1 != float64(w)
	needV := h != ih || y0 != 0 || y1 != float64(h)
	bh, kh, ksh := coeffs(iw, x0, x1, w)
	bv, kv, ksv := coeffs(ih, y0, y1, h)
	src, sw, sh := img.Pix, iw, ih
	if needH {
		yFirst := bv[0]
		yLast := bv[h*2-2] + bv[h*2-1]
		for i := 0; i < h; i++ {
			bv[i*2] -= yFirst
		}
		k := fixed(kh)
		rows := yLast - yFirst
		tmp := make([]uint8, w*rows*4)
		for yy := 0; yy < rows; yy++ {
			row := src[(yy+yFirst)*sw*4:]
			for xx := 0; xx < w; xx++ {
				xmin, xmax := bh[xx*2], bh[xx*2+1]
				kx := k[xx*ksh:]
				s0, s1, s2 := int32(1<<(precisionBits-1)), int32(1<<(precisionBits-1)), int32(1<<(precisionBits-1))
				for x := 0; x < xmax; x++ {
					p := row[(x+xmin)*4:]
					s0 += int32(p[0]) * kx[x]
					s1 += int32(p[1]) * kx[x]
					s2 += int32(p[2]) * kx[x]
				}
				o := tmp[(yy*w+xx)*4:]
				o[0], o[1], o[2], o[3] = clip8(s0), clip8(s1), clip8(s2), 255
			}
		}
		src, sw, sh = tmp, w, rows
	} else {
		src = append([]uint8(nil), img.Pix...)
	}
	if needV {
		k := fixed(kv)
		out := make([]uint8, w*h*4)
		for yy := 0; yy < h; yy++ {
			ymin, ymax := bv[yy*2], bv[yy*2+1]
			ky := k[yy*ksv:]
			for xx := 0; xx < w; xx++ {
				s0, s1, s2 := int32(1<<(precisionBits-1)), int32(1<<(precisionBits-1)), int32(1<<(precisionBits-1))
				for y := 0; y < ymax; y++ {
					p := src[((y+ymin)*sw+xx)*4:]
					s0 += int32(p[0]) * ky[y]
					s1 += int32(p[1]) * ky[y]
					s2 += int32(p[2]) * ky[y]
				}
				o := out[(yy*w+xx)*4:]
				o[0], o[1], o[2], o[3] = clip8(s0), clip8(s1), clip8(s2), 255
			}
		}
		src, sh = out, h
	}
	_ = sh
	return &image.RGBA{Pix: src, Stride: w * 4, Rect: image.Rect(0, 0, w, h)}
}

// resampleFloat is the same antialiased bilinear filter on float32 planes
// ([C][H][W]), as torch.nn.functional.interpolate(mode="bilinear",
// antialias=True, align_corners=False): horizontal then vertical, no
// rounding between the passes.
func resampleFloat(px []float32, c, ih, iw, h, w int) []float32 {
	checkOut("transforms.ResizeTensor", w, h)
	bh, kh, ksh := coeffs(iw, 0, float64(iw), w)
	bv, kv, ksv := coeffs(ih, 0, float64(ih), h)
	tmp := make([]float32, c*ih*w)
	for p := 0; p < c*ih; p++ {
		row := px[p*iw:]
		for xx := 0; xx < w; xx++ {
			xmin, xmax := bh[xx*2], bh[xx*2+1]
			var s float32
			for x := 0; x < xmax; x++ {
				s += row[x+xmin] * float32(kh[xx*ksh+x])
			}
			tmp[p*w+xx] = s
		}
	}
	out := make([]float32, c*h*w)
	for ch := 0; ch < c; ch++ {
		for yy := 0; yy < h; yy++ {
			ymin, ymax := bv[yy*2], bv[yy*2+1]
			for xx := 0; xx < w; xx++ {
				var s float32
				for y := 0; y < ymax; y++ {
					s += tmp[(ch*ih+y+ymin)*w+xx] * float32(kv[yy*ksv+y])
				}
				out[(ch*h+yy)*w+xx] = s
			}
		}
	}
	return out
}
