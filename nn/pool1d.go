package nn

import (
	"fmt"

	"github.com/emberml/ember"
)

// Pool1d is MaxPool1d or AvgPool1d over [N, C, L] (or [C, L]) inputs.
// CountIncludePad (true from NewAvgPool1d) and CeilMode are as Pool's.
type Pool1d struct {
	stateless
	Max                     bool
	Kernel, Stride, Padding int
	CountIncludePad         bool
	CeilMode                bool
}

// NewMaxPool1d returns a 1-D max pooling layer; stride 0 means the kernel
// size.
func NewMaxPool1d(kernel, stride, padding int) *Pool1d {
	return newPool1d(true, kernel, stride, padding)
}

// NewAvgPool1d returns a 1-D average pooling layer (count_include_pad,
// unless CountIncludePad is set false); stride 0 means the kernel size.
func NewAvgPool1d(kernel, stride, padding int) *Pool1d {
	p := newPool1d(false, kernel, stride, padding)
	p.CountIncludePad = true
	return p
}

func newPool1d(max bool, k, s, p int) *Pool1d {
	if s == 0 {
		s = k
	}
	l := &Pool1d{Max: max, Kernel: k, Stride: s, Padding: p}
	l.Init(l)
	return l
}

// Forward pools x.
func (p *Pool1d) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(p, "Forward")
	var opts []ember.PoolOption
	if p.CeilMode {
		opts = append(opts, ember.CeilMode())
	}
	if p.Max {
		return ember.MaxPool1d(x, p.Kernel, p.Stride, p.Padding, opts...)
	}
	return ember.AvgPool1d(x, p.Kernel, p.Stride, p.Padding, p.CountIncludePad, opts...)
}

func (p *Pool1d) moduleName() string {
	if p.Max {
		return "MaxPool1d"
	}
	return "AvgPool1d"
}

// ExtraRepr is the pooling window as PyTorch prints it (AvgPool1d's as
// 1-tuples).
func (p *Pool1d) ExtraRepr() string {
	CheckNil(p, "ExtraRepr")
	if p.Max {
		return fmt.Sprintf("kernel_size=%d, stride=%d, padding=%d, dilation=1, ceil_mode=%s", p.Kernel, p.Stride, p.Padding, pyBool(p.CeilMode))
	}
	return fmt.Sprintf("kernel_size=%s, stride=%s, padding=%s", pyTuple(p.Kernel), pyTuple(p.Stride), pyTuple(p.Padding))
}

// AdaptiveAvgPool1d averages [N, C, L] (or [C, L]) to a fixed length.
type AdaptiveAvgPool1d struct {
	stateless
	Size int
}

// NewAdaptiveAvgPool1d returns the layer for an output of length size.
func NewAdaptiveAvgPool1d(size int) *AdaptiveAvgPool1d {
	a := &AdaptiveAvgPool1d{Size: size}
	a.Init(a)
	return a
}

// Forward pools x.
func (a *AdaptiveAvgPool1d) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(a, "Forward")
	return ember.AdaptiveAvgPool1d(x, a.Size)
}

// ExtraRepr is "output_size=n".
func (a *AdaptiveAvgPool1d) ExtraRepr() string {
	CheckNil(a, "ExtraRepr")
	return fmt.Sprintf("output_size=%d", a.Size)
}

// AdaptiveMaxPool2d takes maxima over windows giving a fixed output size
// (ember.AdaptiveMaxPool2d; return_indices is not provided).
type AdaptiveMaxPool2d struct {
	stateless
	H, W int
}

// NewAdaptiveMaxPool2d returns the layer for an h×w output.
func NewAdaptiveMaxPool2d(h, w int) *AdaptiveMaxPool2d {
	a := &AdaptiveMaxPool2d{H: h, W: w}
	a.Init(a)
	return a
}

// Forward pools x.
func (a *AdaptiveMaxPool2d) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(a, "Forward")
	return ember.AdaptiveMaxPool2d(x, a.H, a.W)
}

// ExtraRepr is "output_size=(h, w)".
func (a *AdaptiveMaxPool2d) ExtraRepr() string {
	CheckNil(a, "ExtraRepr")
	return "output_size=" + pyTuple(a.H, a.W)
}
