package nn

import (
	"fmt"
	"strings"

	"github.com/emberml/ember"
)

// Upsample resamples its input's spatial dims with ember.Interpolate, as
// torch.nn.Upsample; UpsamplingNearest2d and UpsamplingBilinear2d are it
// with a fixed mode (their constructors set it).
type Upsample struct {
	stateless
	// Options are the interpolation's: Size or ScaleFactor, Mode (empty:
	// "nearest"), AlignCorners, RecomputeScaleFactor. They are checked
	// when Forward runs, as PyTorch's.
	Options ember.InterpolateOptions
	name    string // the PyTorch class printed
}

// NewUpsample returns the layer interpolating with o.
func NewUpsample(o ember.InterpolateOptions) *Upsample {
	return newUpsample("Upsample", o)
}

// NewUpsamplingNearest2d is torch.nn.UpsamplingNearest2d(size,
// scale_factor): Upsample in mode "nearest". Set one of size and scale
// (nil for the other): one value for both dims, or (height, width).
func NewUpsamplingNearest2d(size []int, scale []float64) *Upsample {
	return newUpsample("UpsamplingNearest2d", ember.InterpolateOptions{Size: size, ScaleFactor: scale, Mode: "nearest"})
}

// NewUpsamplingBilinear2d is torch.nn.UpsamplingBilinear2d(size,
// scale_factor): Upsample in mode "bilinear" with align_corners=True.
func NewUpsamplingBilinear2d(size []int, scale []float64) *Upsample {
	return newUpsample("UpsamplingBilinear2d", ember.InterpolateOptions{Size: size, ScaleFactor: scale, Mode: "bilinear", AlignCorners: true})
}

func newUpsample(name string, o ember.InterpolateOptions) *Upsample {
	u := &Upsample{Options: o, name: name}
	u.Init(u)
	return u
}

// Forward interpolates x ([N, C, L], [N, C, H, W] or [N, C, D, H, W]).
func (u *Upsample) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(u, "Forward")
	return ember.Interpolate(x, u.Options)
}

func (u *Upsample) moduleName() string {
	if u.name == "" {
		return "Upsample"
	}
	return u.name
}

// ExtraRepr is PyTorch's: "scale_factor=2.0, mode=nearest" or
// "size=(3, 4), mode=bilinear".
func (u *Upsample) ExtraRepr() string {
	CheckNil(u, "ExtraRepr")
	o := u.Options
	var s string
	switch {
	case o.ScaleFactor != nil:
		if len(o.ScaleFactor) == 1 {
			s = "scale_factor=" + pyFloat(o.ScaleFactor[0])
		} else {
			p := make([]string, len(o.ScaleFactor))
			for i, f := range o.ScaleFactor {
				p[i] = pyFloat(f)
			}
			s = "scale_factor=(" + strings.Join(p, ", ") + ")"
		}
	case len(o.Size) == 1:
		s = fmt.Sprintf("size=%d", o.Size[0])
	case o.Size != nil:
		s = "size=" + pyTuple(o.Size...)
	default:
		s = "size=None"
	}
	mode := o.Mode
	if mode == "" {
		mode = "nearest"
	}
	return s + ", mode=" + mode
}

// PixelShuffle is torch.nn.PixelShuffle: ember.PixelShuffle by
// UpscaleFactor.
type PixelShuffle struct {
	stateless
	UpscaleFactor int
}

// NewPixelShuffle returns the layer for upscale factor r.
func NewPixelShuffle(r int) *PixelShuffle {
	p := &PixelShuffle{UpscaleFactor: r}
	p.Init(p)
	return p
}

// Forward rearranges [*, C·r², H, W] into [*, C, H·r, W·r].
func (p *PixelShuffle) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(p, "Forward")
	return ember.PixelShuffle(x, p.UpscaleFactor)
}

// ExtraRepr is "upscale_factor=r".
func (p *PixelShuffle) ExtraRepr() string {
	CheckNil(p, "ExtraRepr")
	return fmt.Sprintf("upscale_factor=%d", p.UpscaleFactor)
}

// PixelUnshuffle is torch.nn.PixelUnshuffle: ember.PixelUnshuffle by
// DownscaleFactor.
type PixelUnshuffle struct {
	stateless
	DownscaleFactor int
}

// NewPixelUnshuffle returns the layer for downscale factor r.
func NewPixelUnshuffle(r int) *PixelUnshuffle {
	p := &PixelUnshuffle{DownscaleFactor: r}
	p.Init(p)
	return p
}

// Forward rearranges [*, C, H·r, W·r] into [*, C·r², H, W].
func (p *PixelUnshuffle) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(p, "Forward")
	return ember.PixelUnshuffle(x, p.DownscaleFactor)
}

// ExtraRepr is "downscale_factor=r".
func (p *PixelUnshuffle) ExtraRepr() string {
	CheckNil(p, "ExtraRepr")
	return fmt.Sprintf("downscale_factor=%d", p.DownscaleFactor)
}

// Unfold is torch.nn.Unfold: ember.Unfold (im2col) with its kernel,
// dilation, padding and stride, each (height, width).
type Unfold struct {
	stateless
	KernelSize, Dilation, Padding, Stride [2]int
}

// NewUnfold returns the layer; a zero dilation or stride means 1
// (PyTorch's defaults), a zero padding none.
func NewUnfold(kernel, dilation, padding, stride [2]int) *Unfold {
	u := &Unfold{KernelSize: kernel, Dilation: ones(dilation), Padding: padding, Stride: ones(stride)}
	u.Init(u)
	return u
}

// ones maps a zero [2]int to (1, 1).
func ones(v [2]int) [2]int {
	if v == [2]int{} {
		return [2]int{1, 1}
	}
	return v
}

// Forward extracts the blocks of [N, C, H, W] (or [C, H, W]) into
// [N, C·kh·kw, L].
func (u *Unfold) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(u, "Forward")
	return ember.Unfold(x, u.KernelSize, u.Dilation, u.Padding, u.Stride)
}

// ExtraRepr is "kernel_size=2, dilation=1, padding=0, stride=1".
func (u *Unfold) ExtraRepr() string {
	CheckNil(u, "ExtraRepr")
	return fmt.Sprintf("kernel_size=%s, dilation=%s, padding=%s, stride=%s", pySize(u.KernelSize), pySize(u.Dilation), pySize(u.Padding), pySize(u.Stride))
}

// Fold is torch.nn.Fold: ember.Fold (col2im) into OutputSize with its
// kernel, dilation, padding and stride, each (height, width).
type Fold struct {
	stateless
	OutputSize, KernelSize, Dilation, Padding, Stride [2]int
}

// NewFold returns the layer; a zero dilation or stride means 1
// (PyTorch's defaults), a zero padding none.
func NewFold(outputSize, kernel, dilation, padding, stride [2]int) *Fold {
	f := &Fold{OutputSize: outputSize, KernelSize: kernel, Dilation: ones(dilation), Padding: padding, Stride: ones(stride)}
	f.Init(f)
	return f
}

// Forward sums the columns of [N, C·kh·kw, L] (or [C·kh·kw, L]) into
// [N, C, H, W].
func (f *Fold) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(f, "Forward")
	return ember.Fold(x, f.OutputSize, f.KernelSize, f.Dilation, f.Padding, f.Stride)
}

// ExtraRepr is "output_size=(4, 5), kernel_size=2, dilation=1,
// padding=0, stride=1".
func (f *Fold) ExtraRepr() string {
	CheckNil(f, "ExtraRepr")
	return fmt.Sprintf("output_size=%s, kernel_size=%s, dilation=%s, padding=%s, stride=%s", pySize(f.OutputSize), pySize(f.KernelSize), pySize(f.Dilation), pySize(f.Padding), pySize(f.Stride))
}
