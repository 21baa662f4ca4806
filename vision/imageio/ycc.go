package imageio

import "image"

// libjpeg-turbo's YCbCr→RGB tables (jdcolor.c, build_ycc_rgb_table): 16-bit
// fixed point, the red and blue terms rounded, green's summed before the
// shift.
var crR, cbB, crG, cbG [256]int32

func init() {
	const one = 1 << 16
	fix := func(x float64) int32 { return int32(x*one + 0.5) }
	for i := range 256 {
		x := int32(i - 128)
		crR[i] = (fix(1.40200)*x + one/2) >> 16
		cbB[i] = (fix(1.77200)*x + one/2) >> 16
		crG[i] = -fix(0.71414) * x
		cbG[i] = -fix(0.34414)*x + one/2
	}
}

func clamp8(v int32) uint8 { return uint8(min(max(v, 0), 255)) }

// jpegRGB converts a decoded JPEG's YCbCr image to RGB as libjpeg-turbo
// does for PIL: chroma upsampled by its "fancy" triangle filter (3/4 of the
// nearer sample, 1/4 of the further, h2v1, h2v2 and h1v2, edges
// replicated; plain replication for other ratios and for chroma at most two
// samples wide), then its fixed-point colour conversion. Go's decoder
// replicates chroma, which differed from PIL by up to ~90 levels at sharp
// colour edges of 4:2:0 and 4:2:2 files (mean ~2). It returns nil for a
// ratio it does not know.
func jpegRGB(m *image.YCbCr) *image.RGBA {
	var hf, vf int
	switch m.SubsampleRatio {
	case image.YCbCrSubsampleRatio444:
		hf, vf = 1, 1
	case image.YCbCrSubsampleRatio422:
		hf, vf = 2, 1
	case image.YCbCrSubsampleRatio420:
		hf, vf = 2, 2
	case image.YCbCrSubsampleRatio440:
		hf, vf = 1, 2
	case image.YCbCrSubsampleRatio411:
		hf, vf = 4, 1
	case image.YCbCrSubsampleRatio410:
		hf, vf = 4, 2
	default:
		return nil
	}
	r := m.Rect
	w, h := r.Dx(), r.Dy()
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	cw, ch := (w+hf-1)/hf, (h+vf-1)/vf // libjpeg's downsampled_width/height
	cb := upsample(m.Cb[m.COffset(r.Min.X, r.Min.Y):], m.CStride, cw, ch, hf, vf, w, h)
	cr := upsample(m.Cr[m.COffset(r.Min.X, r.Min.Y):], m.CStride, cw, ch, hf, vf, w, h)
	for y := 0; y < h; y++ {
		yrow := m.Y[m.YOffset(r.Min.X, r.Min.Y+y):]
		o := out.Pix[y*out.Stride:]
		for x := 0; x < w; x++ {
			yy := int32(yrow[x])
			b, rr := cb[y*w+x], cr[y*w+x]
			o[4*x] = clamp8(yy + crR[rr])
			o[4*x+1] = clamp8(yy + (cbG[b]+crG[rr])>>16)
			o[4*x+2] = clamp8(yy + cbB[b])
			o[4*x+3] = 255
		}
	}
	return out
}

// upsample is libjpeg-turbo's upsampler (jdsample.c) for one chroma plane
// of cw×ch samples (row stride s) to w×h: the rows above the first and
// below the last repeat them, as jdmainct.c's context rows do.
func upsample(p []uint8, s, cw, ch, hf, vf, w, h int) []uint8 {
	out := make([]uint8, w*h)
	at := func(x, y int) int { return int(p[y*s+x]) }
	fancyH := hf == 2 && cw > 2
	for y := 0; y < h; y++ {
		cy := y / vf
		o := out[y*w : (y+1)*w]
		switch {
		case fancyH && vf == 1: // h2v1_fancy_upsample
			for x := range o {
				i := x / 2
				if x%2 == 0 {
					o[x] = uint8((3*at(i, cy) + at(max(i-1, 0), cy) + 1) >> 2)
				} else {
					o[x] = uint8((3*at(i, cy) + at(min(i+1, cw-1), cy) + 2) >> 2)
				}
			}
		case fancyH && vf == 2: // h2v2_fancy_upsample
			ny := max(cy-1, 0)
			if y%2 == 1 {
				ny = min(cy+1, ch-1)
			}
			col := func(i int) int { return 3*at(i, cy) + at(i, ny) }
			for x := range o {
				i := x / 2
				if x%2 == 0 {
					o[x] = uint8((3*col(i) + col(max(i-1, 0)) + 8) >> 4)
				} else {
					o[x] = uint8((3*col(i) + col(min(i+1, cw-1)) + 7) >> 4)
				}
			}
		case hf == 1 && vf == 2: // h1v2_fancy_upsample
			ny, bias := max(cy-1, 0), 1
			if y%2 == 1 {
				ny, bias = min(cy+1, ch-1), 2
			}
			for x := range o {
				o[x] = uint8((3*at(x, cy) + at(x, ny) + bias) >> 2)
			}
		default: // replication (h2 with two samples or fewer, h4, 4:4:4)
			for x := range o {
				o[x] = uint8(at(x/hf, cy))
			}
		}
	}
	return out
}
