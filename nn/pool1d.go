package nn

import (
	"fmt"

	"github.com/emberml/ember"
)

// Pool1d is MaxPool1d or AvgPool1d over [N, C, L] (or [C, L]) inputs.
// CountIncludePad (true from NewAvgPool1d) and CeilMode are as Pool's;
// Dilation is MaxPool1d's dilation (1 from the constructors; 0 means 1
// too), ForwardWithIndices its return_indices=True.
type Pool1d struct {
	stateless
	Max                     bool
	Kernel, Stride, Padding int
	Dilation                int
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
	l := &Pool1d{Max: max, Kernel: k, Stride: s, Padding: p, Dilation: 1}
	l.Init(l)
	return l
}

// Forward pools x.
func (p *Pool1d) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(p, "Forward")
	opts := p.options()
	if p.Max {
		return ember.MaxPool1d(x, p.Kernel, p.Stride, p.Padding, opts...)
	}
	return ember.AvgPool1d(x, p.Kernel, p.Stride, p.Padding, p.CountIncludePad, opts...)
}

// ForwardWithIndices is a MaxPool1d's forward with return_indices=True:
// the output and each maximum's position along L, as MaxUnpool1d takes
// them.
func (p *Pool1d) ForwardWithIndices(x *ember.Tensor) (*ember.Tensor, *ember.Tensor) {
	CheckNil(p, "ForwardWithIndices")
	if !p.Max {
		useErr("AvgPool1d", "ForwardWithIndices", "AvgPool1d has no indices (return_indices is MaxPool1d's)")
	}
	return ember.MaxPool1dWithIndices(x, p.Kernel, p.Stride, p.Padding, p.options()...)
}

func (p *Pool1d) dilation() int {
	if p.Dilation == 0 {
		return 1
	}
	return p.Dilation
}

func (p *Pool1d) options() []ember.PoolOption {
	var opts []ember.PoolOption
	if p.CeilMode {
		opts = append(opts, ember.CeilMode())
	}
	if d := p.dilation(); p.Max || d != 1 {
		opts = append(opts, ember.PoolDilation(d))
	}
	return opts
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
		return fmt.Sprintf("kernel_size=%d, stride=%d, padding=%d, dilation=%d, ceil_mode=%s", p.Kernel, p.Stride, p.Padding, p.dilation(), pyBool(p.CeilMode))
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
// (ember.AdaptiveMaxPool2d; ForwardWithIndices is return_indices=True).
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

// ForwardWithIndices pools x with return_indices=True: the output and
// each maximum's position in its input plane (h·W + w).
func (a *AdaptiveMaxPool2d) ForwardWithIndices(x *ember.Tensor) (*ember.Tensor, *ember.Tensor) {
	CheckNil(a, "ForwardWithIndices")
	return ember.AdaptiveMaxPool2dWithIndices(x, a.H, a.W)
}

// ExtraRepr is "output_size=(h, w)".
func (a *AdaptiveMaxPool2d) ExtraRepr() string {
	CheckNil(a, "ExtraRepr")
	return "output_size=" + pyTuple(a.H, a.W)
}

// MaxUnpool is nn.MaxUnpool1d or nn.MaxUnpool2d: Unpool writes a max
// pool's output at its indices into zeros (ember.MaxUnpool2d,
// ember.MaxUnpool1d). Kernel, Stride and Padding are (height, width) for
// MaxUnpool2d; MaxUnpool1d uses their first elements.
type MaxUnpool struct {
	stateless
	Kernel, Stride, Padding [2]int
	oneD                    bool
}

// NewMaxUnpool2d is nn.MaxUnpool2d(kernel, stride, padding); stride 0
// means the kernel size.
func NewMaxUnpool2d(kernel, stride, padding int) *MaxUnpool {
	return NewMaxUnpool2dHW([2]int{kernel, kernel}, [2]int{stride, stride}, [2]int{padding, padding})
}

// NewMaxUnpool2dHW is NewMaxUnpool2d with (height, width) sizes.
func NewMaxUnpool2dHW(kernel, stride, padding [2]int) *MaxUnpool {
	if stride == [2]int{} {
		stride = kernel
	}
	u := &MaxUnpool{Kernel: kernel, Stride: stride, Padding: padding}
	u.Init(u)
	return u
}

// NewMaxUnpool1d is nn.MaxUnpool1d(kernel, stride, padding); stride 0
// means the kernel size.
func NewMaxUnpool1d(kernel, stride, padding int) *MaxUnpool {
	if stride == 0 {
		stride = kernel
	}
	u := &MaxUnpool{Kernel: [2]int{kernel, kernel}, Stride: [2]int{stride, stride}, Padding: [2]int{padding, padding}, oneD: true}
	u.Init(u)
	return u
}

// Forward panics with a *ModuleError: unpooling needs the indices
// (Unpool), as PyTorch's forward(input, indices).
func (u *MaxUnpool) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(u, "Forward")
	useErr(u.moduleName(), "Forward", "needs the pool's indices: call Unpool(x, indices)")
	return nil
}

// Unpool is PyTorch's forward(input, indices, output_size): x written at
// indices into zeros; outputSize, if given, is output_size.
func (u *MaxUnpool) Unpool(x, indices *ember.Tensor, outputSize ...int) *ember.Tensor {
	CheckNil(u, "Unpool")
	if u.oneD {
		return ember.MaxUnpool1d(x, indices, u.Kernel[0], u.Stride[0], u.Padding[0], outputSize...)
	}
	return ember.MaxUnpool2d(x, indices, u.Kernel, u.Stride, u.Padding, outputSize...)
}

func (u *MaxUnpool) moduleName() string {
	if u.oneD {
		return "MaxUnpool1d"
	}
	return "MaxUnpool2d"
}

// ExtraRepr is PyTorch's "kernel_size=(2, 2), stride=(2, 2), padding=(0, 0)".
func (u *MaxUnpool) ExtraRepr() string {
	CheckNil(u, "ExtraRepr")
	if u.oneD {
		return fmt.Sprintf("kernel_size=%s, stride=%s, padding=%s", pyTuple(u.Kernel[0]), pyTuple(u.Stride[0]), pyTuple(u.Padding[0]))
	}
	return fmt.Sprintf("kernel_size=%s, stride=%s, padding=%s", pyTuple(u.Kernel[:]...), pyTuple(u.Stride[:]...), pyTuple(u.Padding[:]...))
}
