package nn

import (
	"fmt"
	"math"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn/nninit"
)

// uniform returns a float32 tensor of shape drawn from U(-bound, bound)
// with ember's global generator (ember.ManualSeed): nninit.Uniform, as
// PyTorch's layers call init.uniform_ (directly or through
// kaiming_uniform_ and xavier_uniform_).
func uniform(shape ember.Shape, bound float64) *ember.Tensor {
	return nninit.Uniform(ember.Empty(shape), -bound, bound).SetRequiresGrad(true)
}

// kaimingBound is the bound of kaiming_uniform_(a=√5), PyTorch's default
// for Linear and Conv weights: gain·√(3/fan_in) with gain = √(2/(1+a²)),
// which is 1/√fan_in. It is also the bound of their biases. A layer with
// no inputs (fan_in 0) has an empty weight and, as PyTorch's "1/√fan_in if
// fan_in > 0 else 0", a zero bias (not 1/√0 = +Inf, whose uniform draw is
// NaN).
func kaimingBound(fanIn int) float64 {
	if fanIn <= 0 {
		return 0
	}
	return 1 / math.Sqrt(float64(fanIn))
}

func param(t *ember.Tensor) *ember.Tensor { return t.SetRequiresGrad(true) }

// Linear is y = x·Wᵀ + b with W [Out, In].
type Linear struct {
	Base
	Weight, Bias *ember.Tensor
	In, Out      int
}

// NewLinear returns a Linear layer with PyTorch's default initialisation;
// bias=false leaves Bias nil.
func NewLinear(in, out int, bias bool) *Linear {
	l := &Linear{In: in, Out: out}
	l.Init(l)
	l.Weight = uniform(ember.Shape{out, in}, kaimingBound(in))
	if bias {
		l.Bias = uniform(ember.Shape{out}, kaimingBound(in))
	}
	l.RegisterParameter("weight", &l.Weight)
	l.RegisterParameter("bias", &l.Bias)
	return l
}

// Forward applies the layer to [..., In] inputs.
func (l *Linear) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(l, "Forward")
	return ember.Linear(x, l.Weight, l.Bias)
}

// Conv2d is torch.nn.Conv2d; Weight is [Out, In/Groups, Kernel[0],
// Kernel[1]]. Kernel, Stride, Padding and Dilation are (height, width)
// pairs, as PyTorch stores them: the options Stride, Padding and Dilation
// set both, StrideHW, PaddingHW, DilationHW and KernelHW each. PaddingName
// is "same" or "valid" for padding='same' or 'valid' (PaddingSame,
// PaddingValid), and then Padding is unused; "" means Padding.
// PaddingMode is torch's padding_mode: "zeros" (the default; "" too),
// "reflect", "replicate" or "circular" pad the input with ember.PadMode
// and then convolve without padding, as PyTorch does.
type Conv2d struct {
	Base
	Weight, Bias                      *ember.Tensor
	In, Out                           int
	Kernel, Stride, Padding, Dilation [2]int
	PaddingName                       string
	PaddingMode                       string
	Groups                            int
	noBias                            bool
	outputPadding                     [2]int // OutputPadding's, for ConvTranspose2d
}

// ConvOption configures a Conv2d (or a Conv1d, which takes the options
// of one size: Stride, Padding, Dilation, PaddingSame, PaddingValid,
// Groups and NoBias).
type ConvOption func(*Conv2d)

// Stride sets the stride (default 1).
func Stride(s int) ConvOption { return func(c *Conv2d) { c.Stride = [2]int{s, s} } }

// StrideHW sets the stride along the height and the width.
func StrideHW(h, w int) ConvOption { return func(c *Conv2d) { c.Stride = [2]int{h, w} } }

// Padding sets the zero padding on each side (default 0).
func Padding(p int) ConvOption {
	return func(c *Conv2d) { c.Padding, c.PaddingName = [2]int{p, p}, "" }
}

// PaddingHW sets the zero padding above and below (h) and left and right
// (w).
func PaddingHW(h, w int) ConvOption {
	return func(c *Conv2d) { c.Padding, c.PaddingName = [2]int{h, w}, "" }
}

// PaddingSame is padding='same': the output is the input's size (the
// stride must be 1); d·(k−1) zeros in all along each dim, the odd one
// after (see ember.Conv2dSame).
func PaddingSame() ConvOption {
	return func(c *Conv2d) { c.Padding, c.PaddingName = [2]int{}, "same" }
}

// PaddingValid is padding='valid': no padding.
func PaddingValid() ConvOption {
	return func(c *Conv2d) { c.Padding, c.PaddingName = [2]int{}, "valid" }
}

// PaddingMode sets padding_mode: "zeros" (the default), "reflect",
// "replicate" or "circular" (transposed convolutions take "zeros" only).
func PaddingMode(mode string) ConvOption { return func(c *Conv2d) { c.PaddingMode = mode } }

// Dilation sets the kernel dilation (default 1).
func Dilation(d int) ConvOption { return func(c *Conv2d) { c.Dilation = [2]int{d, d} } }

// DilationHW sets the kernel dilation along the height and the width.
func DilationHW(h, w int) ConvOption { return func(c *Conv2d) { c.Dilation = [2]int{h, w} } }

// KernelHW makes a Conv2d's kernel h×w (kernel_size=(h, w)), in place of
// NewConv2d's square one.
func KernelHW(h, w int) ConvOption { return func(c *Conv2d) { c.Kernel = [2]int{h, w} } }

// OutputPadding sets a ConvTranspose2d's output_padding: rows and
// columns added at the bottom and right of its output (default 0).
func OutputPadding(p int) ConvOption { return func(c *Conv2d) { c.outputPadding = [2]int{p, p} } }

// OutputPaddingHW sets a ConvTranspose2d's output_padding along the height
// and the width.
func OutputPaddingHW(h, w int) ConvOption { return func(c *Conv2d) { c.outputPadding = [2]int{h, w} } }

// Groups splits the channels into g groups convolved separately
// (default 1); In and Out must be divisible by g.
func Groups(g int) ConvOption { return func(c *Conv2d) { c.Groups = g } }

// NoBias leaves out the bias.
func NoBias() ConvOption { return func(c *Conv2d) { c.Bias = nil; c.noBias = true } }

// NewConv2d returns a Conv2d with a kernel×kernel kernel (KernelHW for
// another) and PyTorch's default initialisation.
func NewConv2d(in, out, kernel int, opts ...ConvOption) *Conv2d {
	c := &Conv2d{In: in, Out: out, Kernel: [2]int{kernel, kernel}, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1, PaddingMode: "zeros"}
	c.Init(c)
	for _, o := range opts {
		if o == nil {
			argErr("NewConv2d", "nil ConvOption")
		}
		o(c)
	}
	if c.Groups <= 0 || in%c.Groups != 0 || out%c.Groups != 0 {
		argErr("NewConv2d", "in (%d) and out (%d) channels must be divisible by groups (%d)", in, out, c.Groups)
	}
	if c.outputPadding != [2]int{} {
		argErr("NewConv2d", "output_padding is an argument of ConvTranspose2d, not of Conv2d")
	}
	checkPaddingName("NewConv2d", c.PaddingName, c.Stride[0], c.Stride[1])
	checkPaddingMode("NewConv2d", c.PaddingMode)
	kh, kw := c.Kernel[0], c.Kernel[1]
	if kh < 0 || kw < 0 {
		argErr("NewConv2d", "kernel size (%d, %d) must not be negative", kh, kw)
	}
	fanIn := in / c.Groups * kh * kw
	c.Weight = uniform(ember.Shape{out, in / c.Groups, kh, kw}, kaimingBound(fanIn))
	if !c.noBias {
		c.Bias = uniform(ember.Shape{out}, kaimingBound(fanIn))
	}
	c.RegisterParameter("weight", &c.Weight)
	c.RegisterParameter("bias", &c.Bias)
	return c
}

// checkPaddingName panics with PyTorch's ValueErrors for a padding string
// other than "same" and "valid", and for 'same' with a stride.
func checkPaddingName(op, name string, strides ...int) {
	switch name {
	case "", "valid":
	case "same":
		for _, s := range strides {
			if s != 1 {
				argErr(op, "padding='same' is not supported for strided convolutions")
			}
		}
	default:
		argErr(op, "Invalid padding string '%s', should be one of {'valid', 'same'}", name)
	}
}

// checkPaddingMode panics with PyTorch's ValueError for a padding_mode
// it does not know.
func checkPaddingMode(op, mode string) {
	switch mode {
	case "", "zeros", "reflect", "replicate", "circular":
	default:
		argErr(op, "padding_mode must be one of {'zeros', 'reflect', 'replicate', 'circular'}, but got padding_mode='%s'", mode)
	}
}

// modePad pads x by padding_mode before a convolution padded by pad
// (PaddingName "" or "valid") or by padding='same' (each dim's d·(k−1)
// split as torch's _reversed_padding_repeated_twice, the odd one after);
// pads are (height, width) or one size.
func modePad(x *ember.Tensor, mode, name string, pad, kernel, dilation []int) *ember.Tensor {
	k := len(pad)
	p := make([]int, 2*k)
	for i := 0; i < k; i++ {
		lo, hi := pad[i], pad[i]
		switch name {
		case "valid":
			lo, hi = 0, 0
		case "same":
			total := dilation[i] * (kernel[i] - 1)
			lo, hi = total/2, total-total/2
		}
		p[2*(k-1-i)], p[2*(k-1-i)+1] = lo, hi
	}
	return ember.PadMode(x, p, mode)
}

// Forward convolves a [N, In, H, W] batch (or an unbatched [In, H, W]).
func (c *Conv2d) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(c, "Forward")
	checkPaddingName("Conv2d.Forward", c.PaddingName, c.Stride[0], c.Stride[1])
	checkPaddingMode("Conv2d.Forward", c.PaddingMode)
	if c.PaddingMode != "" && c.PaddingMode != "zeros" {
		x = modePad(x, c.PaddingMode, c.PaddingName, c.Padding[:], c.Kernel[:], c.Dilation[:])
		return ember.Conv2d(x, c.Weight, c.Bias, c.Stride, [2]int{}, c.Dilation, c.Groups)
	}
	switch c.PaddingName {
	case "same":
		return ember.Conv2dSame(x, c.Weight, c.Bias, c.Dilation, c.Groups)
	case "valid":
		return ember.Conv2d(x, c.Weight, c.Bias, c.Stride, [2]int{}, c.Dilation, c.Groups)
	}
	return ember.Conv2d(x, c.Weight, c.Bias, c.Stride, c.Padding, c.Dilation, c.Groups)
}

// BatchNorm normalises over the batch (and spatial dims): BatchNorm1d for
// [N, C] or [N, C, L] inputs, BatchNorm2d for [N, C, H, W].
//
// PyTorch's constructor flags are fields: nil Weight and Bias are
// affine=False; nil RunningMean, RunningVar and NumBatchesTracked are
// track_running_stats=False (the batch's statistics are then used in
// evaluation mode too); CumulativeAverage is momentum=None (the running
// statistics are the plain average of all batches seen, the factor being
// 1/NumBatchesTracked instead of Momentum).
type BatchNorm struct {
	Base
	Weight, Bias            *ember.Tensor
	RunningMean, RunningVar *ember.Tensor
	NumBatchesTracked       *ember.Tensor
	Features                int
	Eps, Momentum           float64
	CumulativeAverage       bool
	dims                    string // "1d" or "2d", for printing
}

func newBN(c int) *BatchNorm {
	b := &BatchNorm{Features: c, Eps: 1e-5, Momentum: 0.1}
	b.Init(b)
	b.Weight = param(ember.Ones(ember.Shape{c}))
	b.Bias = param(ember.Zeros(ember.Shape{c}))
	b.RunningMean = ember.Zeros(ember.Shape{c})
	b.RunningVar = ember.Ones(ember.Shape{c})
	b.NumBatchesTracked = ember.Zeros(ember.Shape{}, ember.Dtype(ember.Int64))
	b.RegisterParameter("weight", &b.Weight)
	b.RegisterParameter("bias", &b.Bias)
	b.RegisterBuffer("running_mean", &b.RunningMean)
	b.RegisterBuffer("running_var", &b.RunningVar)
	b.RegisterBuffer("num_batches_tracked", &b.NumBatchesTracked)
	return b
}

// NewBatchNorm1d returns a BatchNorm over c features (weight 1, bias 0).
func NewBatchNorm1d(c int) *BatchNorm { b := newBN(c); b.dims = "1d"; return b }

// NewBatchNorm2d returns a BatchNorm over c channels (weight 1, bias 0).
func NewBatchNorm2d(c int) *BatchNorm { b := newBN(c); b.dims = "2d"; return b }

// Forward normalises x; in training mode it updates the running statistics
// (and NumBatchesTracked) in place, so the buffers keep their identity.
// BatchNorm1d takes [N, C] or [N, C, L] inputs and BatchNorm2d [N, C, H, W]
// ones; another rank panics with an *ember.ValueError, as PyTorch's
// "expected 4D input (got 2D input)".
func (b *BatchNorm) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(b, "Forward")
	if x == nil {
		panic(&ember.ShapeError{Op: "nn.BatchNorm" + b.dims, Msg: "nil tensor"})
	}
	switch d := x.Dim(); {
	case b.dims == "1d" && d != 2 && d != 3:
		panic(&ember.ValueError{Op: "nn.BatchNorm1d", Msg: fmt.Sprintf("expected 2D or 3D input (got %dD input)", d)})
	case b.dims == "2d" && d != 4:
		panic(&ember.ValueError{Op: "nn.BatchNorm2d", Msg: fmt.Sprintf("expected 4D input (got %dD input)", d)})
	}
	tracking := b.RunningMean != nil || b.RunningVar != nil
	momentum := b.Momentum
	if b.CumulativeAverage && b.Training() && tracking && b.NumBatchesTracked == nil {
		panic(&ember.ValueError{Op: "nn.BatchNorm" + b.dims, Msg: "CumulativeAverage (momentum=None) needs the NumBatchesTracked buffer, which is nil"})
	}
	if b.Training() && tracking && b.NumBatchesTracked != nil {
		b.NumBatchesTracked.AddScalarInPlace(1) // an integer buffer: no graph
		if b.CumulativeAverage {
			momentum = 1 / b.NumBatchesTracked.Item()
		}
	}
	// as PyTorch, without running statistics the batch's are used in
	// evaluation mode too
	return ember.BatchNorm(x, b.RunningMean, b.RunningVar, b.Weight, b.Bias, b.Training() || !tracking, momentum, b.Eps)
}

// LayerNorm normalises over the last len(Shape) dims.
type LayerNorm struct {
	Base
	Weight, Bias *ember.Tensor
	Shape        ember.Shape
	Eps          float64
}

// NewLayerNorm returns a LayerNorm over the trailing shape (weight 1, bias 0).
func NewLayerNorm(shape ...int) *LayerNorm {
	if len(shape) == 0 {
		argErr("NewLayerNorm", "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but got normalized_shape = []")
	}
	l := &LayerNorm{Shape: shape, Eps: 1e-5}
	l.Init(l)
	l.Weight = param(ember.Ones(shape))
	l.Bias = param(ember.Zeros(shape))
	l.RegisterParameter("weight", &l.Weight)
	l.RegisterParameter("bias", &l.Bias)
	return l
}

// Forward normalises x.
func (l *LayerNorm) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(l, "Forward")
	return ember.LayerNorm(x, l.Shape, l.Weight, l.Bias, l.Eps)
}

// Embedding maps int64 indices to rows of Weight [Num, Dim], drawn N(0, 1).
// PaddingIdx is the row that gets no gradient (torch's padding_idx), or
// -1 for none. MaxNorm, when positive, is max_norm: Forward first scales
// each looked-up row whose NormType-norm (2 from NewEmbedding; 0 reads as
// 2) exceeds it down to MaxNorm, in place under no-grad
// (ember.EmbeddingRenorm, torch.embedding_renorm_).
type Embedding struct {
	Base
	Weight     *ember.Tensor
	Num, Dim   int
	PaddingIdx int
	MaxNorm    float64
	NormType   float64
}

// NewEmbedding returns an Embedding table with PyTorch's N(0, 1) init.
func NewEmbedding(num, dim int) *Embedding {
	e := &Embedding{Num: num, Dim: dim, PaddingIdx: -1, NormType: 2}
	e.Init(e)
	e.Weight = param(nninit.Normal(ember.Empty(ember.Shape{num, dim}), 0, 1))
	e.RegisterParameter("weight", &e.Weight)
	return e
}

// NewEmbeddingPadded is NewEmbedding with padding_idx (negative counts
// from the end): that row starts at zero and gets no gradient, as in
// torch.nn.Embedding(num, dim, padding_idx=paddingIdx).
func NewEmbeddingPadded(num, dim, paddingIdx int) *Embedding {
	if paddingIdx < -num || paddingIdx >= num {
		panic(&ember.ShapeError{Op: "Embedding", Msg: "Padding_idx must be within num_embeddings"})
	}
	if paddingIdx < 0 {
		paddingIdx += num
	}
	e := NewEmbedding(num, dim)
	e.PaddingIdx = paddingIdx
	e.Weight.Detach().Select(0, paddingIdx).ZeroInPlace()
	return e
}

// Forward looks up the rows of an integer index tensor.
func (e *Embedding) Forward(idx *ember.Tensor) *ember.Tensor {
	CheckNil(e, "Forward")
	if e.MaxNorm > 0 {
		ember.EmbeddingRenorm(e.Weight, idx, e.MaxNorm, e.normType())
	}
	if e.PaddingIdx >= 0 {
		return ember.EmbeddingPadded(idx, e.Weight, e.PaddingIdx)
	}
	return ember.Embedding(idx, e.Weight)
}

func (e *Embedding) normType() float64 {
	if e.NormType == 0 {
		return 2
	}
	return e.NormType
}

// stateless is the base of layers without parameters.
type stateless struct{ Base }

// Activation is a parameterless elementwise layer.
type Activation struct {
	stateless
	Name  string
	f     func(*ember.Tensor) *ember.Tensor
	extra string // ExtraRepr
}

// Forward applies the function.
func (a *Activation) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(a, "Forward")
	return a.f(x)
}

func act(name string, f func(*ember.Tensor) *ember.Tensor) *Activation {
	a := &Activation{Name: name, f: f}
	a.Init(a)
	return a
}

// NewReLU returns max(x, 0).
func NewReLU() *Activation { return act("ReLU", (*ember.Tensor).ReLU) }

// NewLeakyReLU returns x for x > 0, slope·x otherwise (PyTorch's default slope 0.01).
func NewLeakyReLU(slope float64) *Activation {
	a := act("LeakyReLU", func(x *ember.Tensor) *ember.Tensor { return x.LeakyReLU(slope) })
	a.extra = "negative_slope=" + pyFloat(slope)
	return a
}

// NewGELU returns the exact GELU, x·Φ(x) = x/2·(1+erf(x/√2)), or with
// approximate "tanh" its tanh approximation (nn.GELU(approximate='tanh'));
// any other approximation panics.
func NewGELU(approximate ...string) *Activation {
	if len(approximate) > 0 && approximate[0] != "none" {
		if approximate[0] != "tanh" {
			argErr("NewGELU", "approximation %q: want \"none\" or \"tanh\"", approximate[0])
		}
		a := act("GELU", (*ember.Tensor).GELUTanh)
		a.extra = "approximate='tanh'"
		return a
	}
	a := act("GELU", ember.GELU)
	a.extra = "approximate='none'"
	return a
}

// NewSigmoid returns 1/(1+e^-x).
func NewSigmoid() *Activation { return act("Sigmoid", (*ember.Tensor).Sigmoid) }

// NewTanh returns tanh(x).
func NewTanh() *Activation { return act("Tanh", (*ember.Tensor).Tanh) }

// NewIdentity returns x itself, as nn.Identity() (a placeholder layer).
func NewIdentity() *Activation {
	return act("Identity", func(x *ember.Tensor) *ember.Tensor { return x })
}

// NewSoftmax returns the softmax over dim (negative counts from the end),
// as nn.Softmax(dim).
func NewSoftmax(dim int) *Activation {
	a := act("Softmax", func(x *ember.Tensor) *ember.Tensor { return x.Softmax(dim) })
	a.extra = fmt.Sprintf("dim=%d", dim)
	return a
}

// NewLogSoftmax returns the log-softmax over dim, as nn.LogSoftmax(dim).
func NewLogSoftmax(dim int) *Activation {
	a := act("LogSoftmax", func(x *ember.Tensor) *ember.Tensor { return x.LogSoftmax(dim) })
	a.extra = fmt.Sprintf("dim=%d", dim)
	return a
}

// NewFlatten returns x flattened from dim 1 on, as nn.Flatten().
func NewFlatten() *Activation {
	a := act("Flatten", func(x *ember.Tensor) *ember.Tensor { return x.Flatten(1, -1) })
	a.extra = "start_dim=1, end_dim=-1"
	return a
}

// Dropout zeroes elements with probability P in training mode and scales
// the rest by 1/(1-P); in evaluation mode it is the identity.
type Dropout struct {
	stateless
	P    float64
	kind string // "" (Dropout), "Dropout1d", "Dropout2d" or "AlphaDropout"
}

// NewDropout returns a Dropout layer.
func NewDropout(p float64) *Dropout {
	if !(p >= 0 && p <= 1) {
		argErr("NewDropout", "dropout probability has to be between 0 and 1, but got %v", p)
	}
	d := &Dropout{P: p}
	d.Init(d)
	return d
}

// Forward applies dropout.
func (d *Dropout) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(d, "Forward")
	if d.kind != "" {
		return d.forwardKind(x)
	}
	return ember.Dropout(x, d.P, d.Training())
}

// Pool is MaxPool2d or AvgPool2d. Kernel, Stride and Padding are
// (height, width) pairs, as PyTorch stores a tuple (NewMaxPool2dHW,
// NewAvgPool2dHW; NewMaxPool2d and NewAvgPool2d make square ones). For
// AvgPool2d, CountIncludePad (true from the constructors, PyTorch's
// default) divides by the whole window; false is count_include_pad=False,
// dividing by the window's part inside the input. CeilMode is
// ceil_mode=True (see ember.CeilMode): the output size rounds up, keeping
// a last window that hangs over the bottom or right edge. Dilation is
// MaxPool2d's dilation ({1, 1} from the constructors; zero means 1 too);
// ForwardWithIndices is return_indices=True.
type Pool struct {
	stateless
	Max                     bool
	Kernel, Stride, Padding [2]int
	Dilation                [2]int
	CountIncludePad         bool
	CeilMode                bool
}

// NewMaxPool2d returns a max pooling layer; stride 0 means the kernel size.
func NewMaxPool2d(kernel, stride, padding int) *Pool {
	return newPool(true, [2]int{kernel, kernel}, [2]int{stride, stride}, [2]int{padding, padding})
}

// NewAvgPool2d returns an average pooling layer (count_include_pad, unless
// CountIncludePad is set false); stride 0 means the kernel size.
func NewAvgPool2d(kernel, stride, padding int) *Pool {
	return newPool(false, [2]int{kernel, kernel}, [2]int{stride, stride}, [2]int{padding, padding})
}

// NewMaxPool2dHW is NewMaxPool2d with (height, width) sizes, as
// nn.MaxPool2d((2, 1)); a zero stride means the kernel size.
func NewMaxPool2dHW(kernel, stride, padding [2]int) *Pool {
	return newPool(true, kernel, stride, padding)
}

// NewAvgPool2dHW is NewAvgPool2d with (height, width) sizes; a zero
// stride means the kernel size.
func NewAvgPool2dHW(kernel, stride, padding [2]int) *Pool {
	return newPool(false, kernel, stride, padding)
}

func newPool(max bool, k, s, p [2]int) *Pool {
	if s == [2]int{} {
		s = k
	}
	l := &Pool{Max: max, Kernel: k, Stride: s, Padding: p, Dilation: [2]int{1, 1}, CountIncludePad: !max}
	l.Init(l)
	return l
}

// Forward pools a [N, C, H, W] batch (or an unbatched [C, H, W]).
func (p *Pool) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(p, "Forward")
	opts := p.options()
	if p.Max {
		return ember.MaxPool2d(x, p.Kernel, p.Stride, p.Padding, opts...)
	}
	return ember.AvgPool2d(x, p.Kernel, p.Stride, p.Padding, p.CountIncludePad, opts...)
}

// ForwardWithIndices is a MaxPool2d's forward with return_indices=True:
// the output and each maximum's position in its input plane (h·W + w), as
// MaxUnpool2d takes them.
func (p *Pool) ForwardWithIndices(x *ember.Tensor) (*ember.Tensor, *ember.Tensor) {
	CheckNil(p, "ForwardWithIndices")
	if !p.Max {
		useErr("AvgPool2d", "ForwardWithIndices", "AvgPool2d has no indices (return_indices is MaxPool2d's)")
	}
	return ember.MaxPool2dWithIndices(x, p.Kernel, p.Stride, p.Padding, p.options()...)
}

// dilation is p.Dilation, zero read as 1.
func (p *Pool) dilation() [2]int {
	if p.Dilation == [2]int{} {
		return [2]int{1, 1}
	}
	return p.Dilation
}

func (p *Pool) options() []ember.PoolOption {
	var opts []ember.PoolOption
	if p.CeilMode {
		opts = append(opts, ember.CeilMode())
	}
	if d := p.dilation(); p.Max || d != [2]int{1, 1} {
		opts = append(opts, ember.PoolDilationHW(d[0], d[1]))
	}
	return opts
}

// AdaptiveAvgPool2d averages to a fixed output size.
type AdaptiveAvgPool2d struct {
	stateless
	H, W int
}

// NewAdaptiveAvgPool2d returns the layer for an h×w output.
func NewAdaptiveAvgPool2d(h, w int) *AdaptiveAvgPool2d {
	a := &AdaptiveAvgPool2d{H: h, W: w}
	a.Init(a)
	return a
}

// Forward pools x.
func (a *AdaptiveAvgPool2d) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(a, "Forward")
	return ember.AdaptiveAvgPool2d(x, a.H, a.W)
}

// KaimingNormalFanOut returns a tensor of w's shape drawn from
// N(0, 2/fan_out), fan_out = O·k·k for a conv weight [O, I, k, k], as
// torchvision's ResNet init (kaiming_normal_, mode="fan_out",
// nonlinearity="relu").
// A w of fewer than 2 dims panics with PyTorch's *ember.ValueError.
func KaimingNormalFanOut(w *ember.Tensor) *ember.Tensor {
	s := w.Shape()
	if len(s) < 2 {
		argErr("KaimingNormalFanOut", "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions (got shape %v)", s)
	}
	fanOut := s[0]
	for _, d := range s[2:] {
		fanOut *= d
	}
	std := math.Sqrt(2 / float64(fanOut))
	return ember.Randn(s, ember.On(w.Device()), ember.Dtype(w.DType())).MulScalar(std).SetRequiresGrad(w.RequiresGrad())
}
