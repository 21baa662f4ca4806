package nn

import (
	"fmt"

	"github.com/emberml/ember"
)

// Conv1d is torch.nn.Conv1d: a 1-D convolution of [N, In, L] (or
// unbatched [In, L]) inputs with Weight [Out, In/Groups, Kernel].
// PaddingName is "same" or "valid" for padding='same' or 'valid' (then
// Padding is unused), "" for Padding. PaddingMode is padding_mode, as
// Conv2d's.
type Conv1d struct {
	Base
	Weight, Bias                      *ember.Tensor
	In, Out, Kernel                   int
	Stride, Padding, Dilation, Groups int
	PaddingName                       string
	PaddingMode                       string
}

// NewConv1d returns a Conv1d with PyTorch's default initialisation
// (kaiming_uniform_(a=√5), bound 1/√(In/Groups·Kernel) for weight and
// bias); it takes Conv2d's options Stride, Padding, PaddingSame,
// PaddingValid, Dilation, Groups and NoBias (not the two-size ones).
func NewConv1d(in, out, kernel int, opts ...ConvOption) *Conv1d {
	cfg := &Conv2d{Kernel: [2]int{kernel, kernel}, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1, PaddingMode: "zeros"}
	for _, o := range opts {
		if o == nil {
			argErr("NewConv1d", "nil ConvOption")
		}
		o(cfg)
	}
	if cfg.Groups <= 0 || in%cfg.Groups != 0 || out%cfg.Groups != 0 {
		argErr("NewConv1d", "in (%d) and out (%d) channels must be divisible by groups (%d)", in, out, cfg.Groups)
	}
	for _, v := range []struct {
		name string
		v    [2]int
	}{{"kernel", cfg.Kernel}, {"stride", cfg.Stride}, {"padding", cfg.Padding}, {"dilation", cfg.Dilation}} {
		if v.v[0] != v.v[1] || (v.name == "kernel" && v.v[0] != kernel) {
			argErr("NewConv1d", "a 1-D convolution takes one %s, not %s (a two-size option)", v.name, pyTuple(v.v[:]...))
		}
	}
	if cfg.outputPadding != [2]int{} {
		argErr("NewConv1d", "output_padding is an argument of ConvTranspose2d, not of Conv1d")
	}
	checkPaddingName("NewConv1d", cfg.PaddingName, cfg.Stride[0])
	checkPaddingMode("NewConv1d", cfg.PaddingMode)
	c := &Conv1d{In: in, Out: out, Kernel: kernel, Stride: cfg.Stride[0], Padding: cfg.Padding[0], Dilation: cfg.Dilation[0], Groups: cfg.Groups, PaddingName: cfg.PaddingName, PaddingMode: cfg.PaddingMode}
	c.Init(c)
	fanIn := in / c.Groups * kernel
	c.Weight = uniform(ember.Shape{out, in / c.Groups, kernel}, kaimingBound(fanIn))
	if !cfg.noBias {
		c.Bias = uniform(ember.Shape{out}, kaimingBound(fanIn))
	}
	c.RegisterParameter("weight", &c.Weight)
	c.RegisterParameter("bias", &c.Bias)
	return c
}

// Forward convolves x.
func (c *Conv1d) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(c, "Forward")
	checkPaddingName("Conv1d.Forward", c.PaddingName, c.Stride)
	checkPaddingMode("Conv1d.Forward", c.PaddingMode)
	if c.PaddingMode != "" && c.PaddingMode != "zeros" {
		x = modePad(x, c.PaddingMode, c.PaddingName, []int{c.Padding}, []int{c.Kernel}, []int{c.Dilation})
		return ember.Conv1d(x, c.Weight, c.Bias, c.Stride, 0, c.Dilation, c.Groups)
	}
	switch c.PaddingName {
	case "same":
		return ember.Conv1dSame(x, c.Weight, c.Bias, c.Dilation, c.Groups)
	case "valid":
		return ember.Conv1d(x, c.Weight, c.Bias, c.Stride, 0, c.Dilation, c.Groups)
	}
	return ember.Conv1d(x, c.Weight, c.Bias, c.Stride, c.Padding, c.Dilation, c.Groups)
}

// ExtraRepr is Conv1d's settings as PyTorch prints them (defaults left out).
func (c *Conv1d) ExtraRepr() string {
	CheckNil(c, "ExtraRepr")
	s := fmt.Sprintf("%d, %d, kernel_size=%s, stride=%s", c.In, c.Out, pyTuple(c.Kernel), pyTuple(c.Stride))
	if c.PaddingName != "" {
		s += ", padding=" + c.PaddingName
	} else if c.Padding != 0 {
		s += ", padding=" + pyTuple(c.Padding)
	}
	if c.Dilation != 1 {
		s += ", dilation=" + pyTuple(c.Dilation)
	}
	if c.Groups != 1 {
		s += fmt.Sprintf(", groups=%d", c.Groups)
	}
	if c.Bias == nil {
		s += ", bias=False"
	}
	if c.PaddingMode != "" && c.PaddingMode != "zeros" {
		s += ", padding_mode=" + c.PaddingMode
	}
	return s
}
