package nn

import (
	"fmt"

	"github.com/emberml/ember"
)

// ConvTranspose2d is torch.nn.ConvTranspose2d: the transpose (input
// gradient) of a Conv2d, mapping [N, In, H, W] (or unbatched [In, H, W])
// to [N, Out, (H−1)·Stride − 2·Padding + Dilation·(Kernel−1) +
// OutputPadding + 1, ...]. Weight is [In, Out/Groups, Kernel[0],
// Kernel[1]]. The sizes are (height, width) pairs; Forward takes no
// output_size (set OutputPadding instead).
type ConvTranspose2d struct {
	Base
	Weight, Bias                                     *ember.Tensor
	In, Out                                          int
	Kernel, Stride, Padding, OutputPadding, Dilation [2]int
	Groups                                           int
}

// NewConvTranspose2d returns a ConvTranspose2d with a kernel×kernel
// kernel and PyTorch's default initialisation (kaiming_uniform_(a=√5),
// whose fan-in is Out/Groups·KH·KW, the weight's dim 1 on). It takes the
// options KernelHW, Stride(HW), Padding(HW), OutputPadding(HW),
// Dilation(HW), Groups and NoBias; padding='same' and 'valid' are not
// taken (PyTorch has no string padding for transposed convolutions).
func NewConvTranspose2d(in, out, kernel int, opts ...ConvOption) *ConvTranspose2d {
	cfg := &Conv2d{Kernel: [2]int{kernel, kernel}, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1}
	for _, o := range opts {
		if o == nil {
			argErr("NewConvTranspose2d", "nil ConvOption")
		}
		o(cfg)
	}
	if cfg.Groups <= 0 || in%cfg.Groups != 0 || out%cfg.Groups != 0 {
		argErr("NewConvTranspose2d", "in (%d) and out (%d) channels must be divisible by groups (%d)", in, out, cfg.Groups)
	}
	if cfg.PaddingMode != "" && cfg.PaddingMode != "zeros" {
		argErr("NewConvTranspose2d", `Only "zeros" padding mode is supported for ConvTranspose2d`)
	}
	if cfg.PaddingName != "" {
		argErr("NewConvTranspose2d", "padding='%s' is not supported for transposed convolutions", cfg.PaddingName)
	}
	kh, kw := cfg.Kernel[0], cfg.Kernel[1]
	if kh < 0 || kw < 0 {
		argErr("NewConvTranspose2d", "kernel size (%d, %d) must not be negative", kh, kw)
	}
	c := &ConvTranspose2d{In: in, Out: out, Kernel: cfg.Kernel, Stride: cfg.Stride, Padding: cfg.Padding,
		OutputPadding: cfg.outputPadding, Dilation: cfg.Dilation, Groups: cfg.Groups}
	c.Init(c)
	fanIn := out / c.Groups * kh * kw
	c.Weight = uniform(ember.Shape{in, out / c.Groups, kh, kw}, kaimingBound(fanIn))
	if !cfg.noBias {
		c.Bias = uniform(ember.Shape{out}, kaimingBound(fanIn))
	}
	c.RegisterParameter("weight", &c.Weight)
	c.RegisterParameter("bias", &c.Bias)
	return c
}

// Forward applies the transposed convolution (ember.ConvTranspose2d).
func (c *ConvTranspose2d) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(c, "Forward")
	return ember.ConvTranspose2d(x, c.Weight, c.Bias, c.Stride, c.Padding, c.OutputPadding, c.Dilation, c.Groups)
}

// ExtraRepr is ConvTranspose2d's settings as PyTorch prints them
// (defaults left out).
func (c *ConvTranspose2d) ExtraRepr() string {
	CheckNil(c, "ExtraRepr")
	s := fmt.Sprintf("%d, %d, kernel_size=%s, stride=%s", c.In, c.Out, pyTuple(c.Kernel[:]...), pyTuple(c.Stride[:]...))
	if c.Padding != [2]int{} {
		s += ", padding=" + pyTuple(c.Padding[:]...)
	}
	if c.Dilation != [2]int{1, 1} {
		s += ", dilation=" + pyTuple(c.Dilation[:]...)
	}
	if c.OutputPadding != [2]int{} {
		s += ", output_padding=" + pyTuple(c.OutputPadding[:]...)
	}
	if c.Groups != 1 {
		s += fmt.Sprintf(", groups=%d", c.Groups)
	}
	if c.Bias == nil {
		s += ", bias=False"
	}
	return s
}
