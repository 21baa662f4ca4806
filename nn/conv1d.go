package nn

import (
	"fmt"

	"github.com/emberml/ember"
)

// Conv1d is torch.nn.Conv1d: a 1-D convolution of [N, In, L] (or
// unbatched [In, L]) inputs with Weight [Out, In/Groups, Kernel].
type Conv1d struct {
	Base
	Weight, Bias                      *ember.Tensor
	In, Out, Kernel                   int
	Stride, Padding, Dilation, Groups int
}

// NewConv1d returns a Conv1d with PyTorch's default initialisation
// (kaiming_uniform_(a=√5), bound 1/√(In/Groups·Kernel) for weight and
// bias); it takes Conv2d's options Stride, Padding, Dilation, Groups and
// NoBias.
func NewConv1d(in, out, kernel int, opts ...ConvOption) *Conv1d {
	cfg := &Conv2d{Stride: 1, Dilation: 1, Groups: 1}
	for _, o := range opts {
		if o == nil {
			argErr("NewConv1d", "nil ConvOption")
		}
		o(cfg)
	}
	if cfg.Groups <= 0 || in%cfg.Groups != 0 || out%cfg.Groups != 0 {
		argErr("NewConv1d", "in (%d) and out (%d) channels must be divisible by groups (%d)", in, out, cfg.Groups)
	}
	c := &Conv1d{In: in, Out: out, Kernel: kernel, Stride: cfg.Stride, Padding: cfg.Padding, Dilation: cfg.Dilation, Groups: cfg.Groups}
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
	return ember.Conv1d(x, c.Weight, c.Bias, c.Stride, c.Padding, c.Dilation, c.Groups)
}

// ExtraRepr is Conv1d's settings as PyTorch prints them (defaults left out).
func (c *Conv1d) ExtraRepr() string {
	CheckNil(c, "ExtraRepr")
	s := fmt.Sprintf("%d, %d, kernel_size=%s, stride=%s", c.In, c.Out, pyTuple(c.Kernel), pyTuple(c.Stride))
	if c.Padding != 0 {
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
	return s
}
