// Package transforms is torchvision.transforms for ember: the same
// operations, giving the same values, on 8-bit RGB images (*image.RGBA, as
// imageio decodes them; torchvision's PIL path) and on [C, H, W] float32
// tensors.
//
// Image operations reproduce Pillow's arithmetic (Resize is Pillow's
// fixed-point antialiased bilinear resampler, ColorJitter's adjustments are
// ImageEnhance's blends and Pillow's HSV conversion), so the pipeline
//
//	transforms.Compose{transforms.Resize{Size: 256}, transforms.CenterCrop{Size: 224}}
//
// followed by ToTensor and Normalize gives what torchvision 0.14 gives on
// the same decoded pixels; the package's tests state the tolerances.
//
// Random transforms draw from the *rand.Rand they are given
// (data.Transformed hands each sample its own), not from torch's generator:
// the distributions are torchvision's, the draws are not.
package transforms

import (
	"fmt"
	"image"
	"math"
	"math/rand/v2"

	"github.com/emberml/ember"
	"github.com/emberml/ember/vision/imageio"
)

// Transform maps an image to another; r is the source of randomness for
// random transforms (deterministic ones ignore it, and it may be nil).
type Transform interface {
	Apply(img *image.RGBA, r *rand.Rand) *image.RGBA
}

// Compose applies its transforms in order.
type Compose []Transform

// Apply runs the transforms.
func (c Compose) Apply(img *image.RGBA, r *rand.Rand) *image.RGBA {
	for _, t := range c {
		img = t.Apply(img, r)
	}
	return img
}

// Resize scales the shorter side to Size keeping the aspect ratio
// (torchvision: the longer side becomes int(Size·long/short)), with
// antialiased bilinear interpolation. Width and Height, when both set,
// give the exact output size instead.
type Resize struct{ Size, Width, Height int }

// Apply resizes img.
func (t Resize) Apply(img *image.RGBA, _ *rand.Rand) *image.RGBA {
	img = normal("transforms.Resize", img)
	w, h := img.Rect.Dx(), img.Rect.Dy()
	ow, oh := t.Width, t.Height
	if ow <= 0 || oh <= 0 {
		ow, oh = ResizedSize(w, h, t.Size)
	}
	return ResizeImage(img, ow, oh)
}

// ResizedSize is the size torchvision's Resize(size) gives a w×h image.
func ResizedSize(w, h, size int) (int, int) {
	if size <= 0 {
		panic(&ember.ValueError{Op: "transforms.Resize", Msg: fmt.Sprintf("size %d", size)})
	}
	if w <= h {
		return size, int(float64(size) * float64(h) / float64(w))
	}
	return int(float64(size) * float64(w) / float64(h)), size
}

// ResizeImage scales img to w×h as PIL's img.resize((w, h), BILINEAR).
func ResizeImage(img *image.RGBA, w, h int) *image.RGBA {
	img = normal("transforms.Resize", img)
	if w == img.Rect.Dx() && h == img.Rect.Dy() {
		return clone(img)
	}
	return resampleRGBA(img, 0, 0, float64(img.Rect.Dx()), float64(img.Rect.Dy()), w, h)
}

// CenterCrop takes the central Size×Size (or Width×Height) region,
// padding with black where the image is smaller, as torchvision.
type CenterCrop struct{ Size, Width, Height int }

// Apply crops img.
func (t CenterCrop) Apply(img *image.RGBA, _ *rand.Rand) *image.RGBA {
	img = normal("transforms.CenterCrop", img)
	cw, ch := t.Width, t.Height
	if cw <= 0 || ch <= 0 {
		cw, ch = t.Size, t.Size
	}
	top, left := centerOffsets(img.Rect.Dx(), img.Rect.Dy(), cw, ch)
	return Crop(img, top, left, ch, cw)
}

// centerOffsets is torchvision's int(round((size - crop) / 2.0)) —
// Python's round, half to even — after padding a too-small image.
func centerOffsets(w, h, cw, ch int) (top, left int) {
	if cw > w || ch > h {
		// torchvision pads (crop - size) // 2 on the left/top and the rest
		// on the right/bottom, then crops centrally from the padded image
		pl, pt := 0, 0
		if cw > w {
			pl = (cw - w) / 2
		}
		if ch > h {
			pt = (ch - h) / 2
		}
		pw, ph := w, h
		if cw > w {
			pw = cw
		}
		if ch > h {
			ph = ch
		}
		t2 := int(math.RoundToEven(float64(ph-ch) / 2))
		l2 := int(math.RoundToEven(float64(pw-cw) / 2))
		return t2 - pt, l2 - pl
	}
	return int(math.RoundToEven(float64(h-ch) / 2)), int(math.RoundToEven(float64(w-cw) / 2))
}

// checkOut panics with a *ember.ValueError unless an op's w×h output is
// at most imageio.MaxPixels (the decoders' bound) with neither side
// negative: a size of 100 000 from a checkpoint's metadata was a fatal
// out-of-memory, one of 10¹⁸ a makeslice runtime error.
func checkOut(op string, w, h int) {
	if w < 0 || h < 0 || w > imageio.MaxPixels || h > imageio.MaxPixels || w*h > imageio.MaxPixels {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("an output of %d×%d pixels (at most imageio.MaxPixels, %d, and no side negative)", w, h, imageio.MaxPixels)})
	}
}

// Crop returns the h×w region of img whose top-left corner is (left, top);
// outside the image is black, as PIL's crop.
func Crop(img *image.RGBA, top, left, h, w int) *image.RGBA {
	checkOut("transforms.Crop", w, h)
	img = normal("transforms.Crop", img)
	iw, ih := img.Rect.Dx(), img.Rect.Dy()
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range out.Pix {
		if i%4 == 3 {
			out.Pix[i] = 255
		}
	}
	for y := 0; y < h; y++ {
		sy := top + y
		if sy < 0 || sy >= ih {
			continue
		}
		x0, x1 := max(0, -left), min(w, iw-left)
		if x0 < x1 {
			copy(out.Pix[(y*w+x0)*4:(y*w+x1)*4], img.Pix[(sy*iw+left+x0)*4:(sy*iw+left+x1)*4])
		}
	}
	return out
}

// ResizedCrop crops and then resizes to w×h, as F.resized_crop.
func ResizedCrop(img *image.RGBA, top, left, h, w, outW, outH int) *image.RGBA {
	return ResizeImage(Crop(img, top, left, h, w), outW, outH)
}

// RandomResizedCrop crops a random region of Scale (fraction of the area,
// default [0.08, 1]) and aspect Ratio (default [3/4, 4/3], drawn
// log-uniformly) and resizes it to Size×Size, as torchvision.
type RandomResizedCrop struct {
	Size         int
	Scale, Ratio [2]float64
}

// Apply draws the region and resizes it.
func (t RandomResizedCrop) Apply(img *image.RGBA, r *rand.Rand) *image.RGBA {
	img = normal("transforms.RandomResizedCrop", img)
	top, left, h, w := t.Params(img.Rect.Dx(), img.Rect.Dy(), r)
	return ResizedCrop(img, top, left, h, w, t.Size, t.Size)
}

// Params is torchvision's RandomResizedCrop.get_params: ten tries at a
// region inside the image, else the central crop of the nearest allowed
// aspect ratio.
func (t RandomResizedCrop) Params(width, height int, r *rand.Rand) (top, left, h, w int) {
	needRand("transforms.RandomResizedCrop", r)
	scale, ratio := t.Scale, t.Ratio
	if scale == [2]float64{} {
		scale = [2]float64{0.08, 1}
	}
	if ratio == [2]float64{} {
		ratio = [2]float64{3.0 / 4, 4.0 / 3}
	}
	area := float64(width * height)
	lr0, lr1 := math.Log(ratio[0]), math.Log(ratio[1])
	for range 10 {
		target := area * (scale[0] + r.Float64()*(scale[1]-scale[0]))
		ar := math.Exp(lr0 + r.Float64()*(lr1-lr0))
		w := int(math.RoundToEven(math.Sqrt(target * ar)))
		h := int(math.RoundToEven(math.Sqrt(target / ar)))
		if w > 0 && w <= width && h > 0 && h <= height {
			return r.IntN(height - h + 1), r.IntN(width - w + 1), h, w
		}
	}
	in := float64(width) / float64(height)
	switch {
	case in < ratio[0]:
		w = width
		h = int(math.RoundToEven(float64(w) / ratio[0]))
	case in > ratio[1]:
		h = height
		w = int(math.RoundToEven(float64(h) * ratio[1]))
	default:
		w, h = width, height
	}
	return (height - h) / 2, (width - w) / 2, h, w
}

// RandomHorizontalFlip mirrors the image with probability P.
type RandomHorizontalFlip struct{ P float64 }

// Apply flips img or returns it.
func (t RandomHorizontalFlip) Apply(img *image.RGBA, r *rand.Rand) *image.RGBA {
	img = normal("transforms.RandomHorizontalFlip", img)
	needRand("transforms.RandomHorizontalFlip", r)
	if r.Float64() < t.P {
		return HFlip(img)
	}
	return img
}

// HFlip mirrors img left to right.
func HFlip(img *image.RGBA) *image.RGBA {
	img = normal("transforms.HFlip", img)
	w, h := img.Rect.Dx(), img.Rect.Dy()
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			copy(out.Pix[(y*w+x)*4:(y*w+x)*4+4], img.Pix[(y*w+w-1-x)*4:])
		}
	}
	return out
}

// ToTensor is F.to_tensor: a [3, H, W] float32 tensor with values in [0, 1].
func ToTensor(img *image.RGBA) *ember.Tensor {
	img = normal("transforms.ToTensor", img)
	w, h := img.Rect.Dx(), img.Rect.Dy()
	px := make([]float32, 3*h*w)
	for i := 0; i < h*w; i++ {
		for c := 0; c < 3; c++ {
			px[c*h*w+i] = float32(img.Pix[i*4+c]) / 255
		}
	}
	return ember.FromSlice(px, ember.Shape{3, h, w})
}

// Normalize is F.normalize on a [C, H, W] (or [N, C, H, W]) tensor:
// (x - mean) / std per channel, in float32 as torch computes it; one mean
// and std apply to every channel. A std that is zero in float32 panics
// with an *ember.ValueError, as torchvision's "std evaluated to zero".
func Normalize(t *ember.Tensor, mean, std []float64) *ember.Tensor {
	s := t.Shape()
	if len(s) < 3 || (s[len(s)-3] != len(mean) && len(mean) != 1) || len(std) != len(mean) {
		panic(&ember.ShapeError{Op: "transforms.Normalize", Msg: fmt.Sprintf("%d means, %d stds for the tensor", len(mean), len(std)), Shapes: []ember.Shape{s}})
	}
	for _, v := range std {
		if float32(v) == 0 {
			panic(&ember.ValueError{Op: "transforms.Normalize", Msg: fmt.Sprintf("std %v evaluated to zero after conversion to float32, leading to division by zero", std)})
		}
	}
	c, hw := s[len(s)-3], s[len(s)-2]*s[len(s)-1]
	px := t.Cast(ember.Float32).Contiguous().Float32s()
	out := make([]float32, len(px))
	for i := range px {
		ch := 0
		if len(mean) > 1 {
			ch = (i / hw) % c
		}
		out[i] = (px[i] - float32(mean[ch])) / float32(std[ch])
	}
	return ember.FromSlice(out, s)
}

// Preset is a whole preprocessing: image transforms, then ToTensor and
// Normalize(Mean, Std) (skipped when Mean is nil).
type Preset struct {
	Image     Compose
	Mean, Std []float64
}

// Apply preprocesses one image into a [3, H, W] tensor.
func (p Preset) Apply(img *image.RGBA, r *rand.Rand) *ember.Tensor {
	t := ToTensor(p.Image.Apply(img, r))
	if p.Mean != nil {
		t = Normalize(t, p.Mean, p.Std)
	}
	return t
}

// ImageNetEval is torchvision's classic evaluation preprocessing:
// Resize(resize), CenterCrop(crop), ToTensor, Normalize(mean, std).
func ImageNetEval(resize, crop int, mean, std [3]float64) Preset {
	return Preset{Image: Compose{Resize{Size: resize}, CenterCrop{Size: crop}}, Mean: mean[:], Std: std[:]}
}

// normal returns img with its origin at (0, 0) and a tight stride. A nil
// image (an imageio.Open error unchecked) or one whose Pix is too short
// for its Rect and Stride panics with an *ember.ValueError naming op
// rather than a nil dereference or an index out of range.
func normal(op string, img *image.RGBA) *image.RGBA {
	if img == nil {
		panic(&ember.ValueError{Op: op, Msg: "nil *image.RGBA (an unchecked decoding error?)"})
	}
	if r := img.Rect; !r.Empty() {
		off := img.PixOffset(r.Min.X, r.Min.Y)
		if img.Stride < 4*r.Dx() || off < 0 || off > len(img.Pix) || (len(img.Pix)-off-4*r.Dx())/img.Stride < r.Dy()-1 || len(img.Pix)-off < 4*r.Dx() {
			panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("image of %v with stride %d holds %d bytes, too few", r, img.Stride, len(img.Pix))})
		}
	}
	if img.Rect.Min == (image.Point{}) && img.Stride == img.Rect.Dx()*4 {
		return img
	}
	out := image.NewRGBA(image.Rect(0, 0, img.Rect.Dx(), img.Rect.Dy()))
	for y := 0; y < img.Rect.Dy(); y++ {
		copy(out.Pix[y*out.Stride:(y+1)*out.Stride], img.Pix[img.PixOffset(img.Rect.Min.X, img.Rect.Min.Y+y):])
	}
	return out
}

// needRand panics with an *ember.ValueError naming op when a random
// transform is given no random source.
func needRand(op string, r *rand.Rand) {
	if r == nil {
		panic(&ember.ValueError{Op: op, Msg: "a random transform needs a *rand.Rand (got nil)"})
	}
}

func clone(img *image.RGBA) *image.RGBA {
	return &image.RGBA{Pix: append([]uint8(nil), img.Pix...), Stride: img.Stride, Rect: img.Rect}
}
