package transforms

import (
	"fmt"
	"image"
	"math"
	"math/rand/v2"

	"github.com/emberml/ember"
)

// blend is Pillow's ImagingBlend of two 8-bit images: in1 + alpha·(in2 -
// in1) in C float, truncated, clamped when extrapolating. in1 is given per
// pixel by deg.
func blend(op string, img *image.RGBA, alpha float32, deg func(i int) (uint8, uint8, uint8)) *image.RGBA {
	img = normal(op, img)
	out := image.NewRGBA(img.Rect)
	for i := 0; i < len(img.Pix); i += 4 {
		d0, d1, d2 := deg(i)
		for c, d := range [3]uint8{d0, d1, d2} {
			v := float32(int(d)) + alpha*float32(int(img.Pix[i+c])-int(d))
			switch {
			case alpha >= 0 && alpha <= 1:
				out.Pix[i+c] = uint8(int32(v))
			case v <= 0:
				out.Pix[i+c] = 0
			case v >= 255:
				out.Pix[i+c] = 255
			default:
				out.Pix[i+c] = uint8(int32(v))
			}
		}
		out.Pix[i+3] = 255
	}
	return out
}

// luma is Pillow's RGB→L: (R·19595 + G·38470 + B·7471 + 0x8000) >> 16.
func luma(r, g, b uint8) uint8 {
	return uint8((uint32(r)*19595 + uint32(g)*38470 + uint32(b)*7471 + 0x8000) >> 16)
}

// AdjustBrightness is F.adjust_brightness: a blend with black.
func AdjustBrightness(img *image.RGBA, factor float64) *image.RGBA {
	return blend("transforms.AdjustBrightness", img, float32(factor), func(int) (uint8, uint8, uint8) { return 0, 0, 0 })
}

// AdjustContrast is F.adjust_contrast: a blend with the grey of the
// image's mean luma (rounded).
func AdjustContrast(img *image.RGBA, factor float64) *image.RGBA {
	img = normal("transforms.AdjustContrast", img)
	var sum float64
	for i := 0; i < len(img.Pix); i += 4 {
		sum += float64(luma(img.Pix[i], img.Pix[i+1], img.Pix[i+2]))
	}
	m := uint8(int(sum/float64(len(img.Pix)/4) + 0.5))
	return blend("transforms.AdjustContrast", img, float32(factor), func(int) (uint8, uint8, uint8) { return m, m, m })
}

// AdjustSaturation is F.adjust_saturation: a blend with the image's
// grayscale.
func AdjustSaturation(img *image.RGBA, factor float64) *image.RGBA {
	img = normal("transforms.AdjustSaturation", img)
	return blend("transforms.AdjustSaturation", img, float32(factor), func(i int) (uint8, uint8, uint8) {
		l := luma(img.Pix[i], img.Pix[i+1], img.Pix[i+2])
		return l, l, l
	})
}

// AdjustHue is F.adjust_hue for PIL images: the image in Pillow's 8-bit
// HSV, the hue channel shifted by uint8(factor·255) with wrap-around, and
// back to RGB. factor is in [-0.5, 0.5].
func AdjustHue(img *image.RGBA, factor float64) *image.RGBA {
	if factor < -0.5 || factor > 0.5 {
		panic(&ember.ValueError{Op: "transforms.AdjustHue", Msg: fmt.Sprintf("factor %v not in [-0.5, 0.5]", factor)})
	}
	img = normal("transforms.AdjustHue", img)
	shift := uint8(int64(factor * 255)) // numpy's uint8(float): truncate, wrap
	out := image.NewRGBA(img.Rect)
	for i := 0; i < len(img.Pix); i += 4 {
		h, s, v := rgb2hsv(img.Pix[i], img.Pix[i+1], img.Pix[i+2])
		out.Pix[i], out.Pix[i+1], out.Pix[i+2] = hsv2rgb(h+shift, s, v)
		out.Pix[i+3] = 255
	}
	return out
}

func clip8i(v int) uint8 { return uint8(min(max(v, 0), 255)) }

// rgb2hsv is Pillow's rgb2hsv_row (Convert.c).
func rgb2hsv(r, g, b uint8) (uint8, uint8, uint8) {
	maxc, minc := max(r, g, b), min(r, g, b)
	if maxc == minc {
		return 0, 0, maxc
	}
	cr := float32(maxc - minc)
	s := cr / float32(maxc)
	rc := float32(maxc-r) / cr
	gc := float32(maxc-g) / cr
	bc := float32(maxc-b) / cr
	var h float32
	switch {
	case r == maxc:
		h = bc - gc
	case g == maxc:
		h = 2.0 + rc - bc
	default:
		h = 4.0 + gc - rc
	}
	h = float32(math.Mod(float64(h)/6.0+1.0, 1.0))
	return clip8i(int(float64(h) * 255.0)), clip8i(int(float64(s) * 255.0)), maxc
}

// hsv2rgb is Pillow's hsv2rgb (Convert.c).
func hsv2rgb(h, s, v uint8) (uint8, uint8, uint8) {
	if s == 0 {
		return v, v, v
	}
	i := int(math.Floor(float64(float32(h)) * 6.0 / 255.0))
	f := float32(float64(float32(h))*6.0/255.0 - float64(float32(i)))
	fs := float32(float64(float32(s)) / 255.0)
	fv := float64(float32(v))
	p := clip8i(int(math.Round(fv * (1.0 - float64(fs)))))
	q := clip8i(int(math.Round(fv * (1.0 - float64(fs*f)))))
	t := clip8i(int(math.Round(fv * (1.0 - float64(fs)*(1.0-float64(f))))))
	switch i % 6 {
	case 0:
		return v, t, p
	case 1:
		return q, v, p
	case 2:
		return p, v, t
	case 3:
		return p, q, v
	case 4:
		return t, p, v
	default:
		return v, p, q
	}
}

// ColorJitter randomly changes brightness, contrast, saturation and hue
// as torchvision.transforms.ColorJitter(brightness, contrast, saturation,
// hue): factors drawn uniformly from [max(0, 1-b), 1+b] (hue from [-h, h]),
// applied in a random order; zero leaves a property alone.
type ColorJitter struct{ Brightness, Contrast, Saturation, Hue float64 }

// Apply draws the factors and the order and adjusts img.
func (t ColorJitter) Apply(img *image.RGBA, r *rand.Rand) *image.RGBA {
	img = normal("transforms.ColorJitter", img)
	needRand("transforms.ColorJitter", r)
	draw := func(v float64) float64 { lo := max(0, 1-v); return lo + r.Float64()*(1+v-lo) }
	for _, k := range r.Perm(4) {
		switch {
		case k == 0 && t.Brightness > 0:
			img = AdjustBrightness(img, draw(t.Brightness))
		case k == 1 && t.Contrast > 0:
			img = AdjustContrast(img, draw(t.Contrast))
		case k == 2 && t.Saturation > 0:
			img = AdjustSaturation(img, draw(t.Saturation))
		case k == 3 && t.Hue > 0:
			img = AdjustHue(img, -t.Hue+r.Float64()*2*t.Hue)
		}
	}
	return img
}
