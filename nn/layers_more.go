package nn

import (
	"fmt"
	"math"

	"github.com/emberml/ember"
)

// NewHardtanh returns x clamped to [minVal, maxVal], as
// nn.Hardtanh(min_val, max_val) (PyTorch's defaults -1, 1): the gradient
// is 1 strictly inside the interval and 0 elsewhere, its ends included.
// maxVal must exceed minVal.
func NewHardtanh(minVal, maxVal float64) *Activation {
	if !(maxVal > minVal) {
		argErr("NewHardtanh", "max_val (%v) must be greater than min_val (%v)", maxVal, minVal)
	}
	a := act("Hardtanh", func(x *ember.Tensor) *ember.Tensor { return hardtanh(x, minVal, maxVal) })
	a.extra = "min_val=" + pyFloat(minVal) + ", max_val=" + pyFloat(maxVal)
	return a
}

// NewReLU6 returns min(max(x, 0), 6), as nn.ReLU6 (Hardtanh(0, 6)).
func NewReLU6() *Activation {
	return act("ReLU6", func(x *ember.Tensor) *ember.Tensor { return hardtanh(x, 0, 6) })
}

// hardtanh is x inside (lo, hi) and the clamped constant outside, so the
// gradient is hardtanh_backward's: 0 at the ends.
func hardtanh(x *ember.Tensor, lo, hi float64) *ember.Tensor {
	inside := x.GtScalar(lo).LogicalAnd(x.LtScalar(hi))
	return ember.Where(inside, x, x.Detach().Clamp(lo, hi))
}

// NewSoftmin returns softmax(-x) over dim, as nn.Softmin(dim).
func NewSoftmin(dim int) *Activation {
	a := act("Softmin", func(x *ember.Tensor) *ember.Tensor { return x.Neg().Softmax(dim) })
	a.extra = fmt.Sprintf("dim=%d", dim)
	return a
}

// NewSoftmax2d returns the softmax over the channels of a [N, C, H, W] or
// [C, H, W] input (dim -3), as nn.Softmax2d.
func NewSoftmax2d() *Activation {
	return act("Softmax2d", func(x *ember.Tensor) *ember.Tensor {
		if d := x.Dim(); d != 3 && d != 4 {
			panic(&ember.ShapeError{Op: "nn.Softmax2d", Msg: fmt.Sprintf("Softmax2d: expected input to be 3D or 4D, got %dD instead", d), Shapes: []ember.Shape{x.Shape()}})
		}
		return x.Softmax(-3)
	})
}

// NewUnflatten returns x with dim (negative counts from the end) split
// into sizes (one of them may be -1, inferred), as nn.Unflatten(dim,
// sizes).
func NewUnflatten(dim int, sizes ...int) *Activation {
	if len(sizes) == 0 {
		argErr("NewUnflatten", "unflattened_size must be non-empty")
	}
	sizes = append([]int(nil), sizes...)
	a := act("Unflatten", func(x *ember.Tensor) *ember.Tensor { return unflatten(x, dim, sizes) })
	a.extra = fmt.Sprintf("dim=%d, unflattened_size=%s", dim, pyTuple(sizes...))
	return a
}

func unflatten(x *ember.Tensor, dim int, sizes []int) *ember.Tensor {
	s := x.Shape()
	d := dim
	if d < 0 {
		d += len(s)
	}
	if d < 0 || d >= len(s) {
		panic(&ember.ShapeError{Op: "nn.Unflatten", Msg: fmt.Sprintf("Dimension out of range (expected to be in range of [%d, %d], but got %d)", -len(s), len(s)-1, dim), Shapes: []ember.Shape{s}})
	}
	prod, infer := 1, -1
	for i, v := range sizes {
		switch {
		case v == -1 && infer < 0:
			infer = i
		case v < 0:
			argErr("Unflatten", "unflatten: invalid size %d in %v", v, sizes)
		default:
			prod *= v
		}
	}
	n := s[d]
	ok := prod == n
	if infer >= 0 {
		ok = prod != 0 && n%prod == 0
	}
	if !ok {
		panic(&ember.ShapeError{Op: "nn.Unflatten", Msg: fmt.Sprintf("unflatten: Provided sizes %s don't multiply up to the size of dim %d (%d) in the input tensor", pyList(sizes), dim, n), Shapes: []ember.Shape{s}})
	}
	shape := append(append(append([]int{}, s[:d]...), sizes...), s[d+1:]...)
	return x.Reshape(shape...)
}

// NewChannelShuffle returns x [N, C, ...] with its C channels, seen as
// [groups, C/groups], transposed to [C/groups, groups], as
// nn.ChannelShuffle(groups). (PyTorch 1.13 has no gradient for it; ember's
// is the permutation's.)
func NewChannelShuffle(groups int) *Activation {
	if groups <= 0 {
		argErr("NewChannelShuffle", "Number of groups to divide channels in must be positive. Value of groups:%d", groups)
	}
	a := act("ChannelShuffle", func(x *ember.Tensor) *ember.Tensor {
		s := x.Shape()
		if len(s) < 3 {
			panic(&ember.ShapeError{Op: "nn.ChannelShuffle", Msg: fmt.Sprintf("channel_shuffle expects input to have at least 3 dimensions, but got input with sizes %s", pyList(s)), Shapes: []ember.Shape{s}})
		}
		if s[1]%groups != 0 {
			panic(&ember.ShapeError{Op: "nn.ChannelShuffle", Msg: fmt.Sprintf("Number of channels must be divisible by groups. Got %d channels and %d groups.", s[1], groups), Shapes: []ember.Shape{s}})
		}
		g := append([]int{s[0], groups, s[1] / groups}, s[2:]...)
		return x.Reshape(g...).Transpose(1, 2).Reshape(s...)
	})
	a.extra = fmt.Sprintf("groups=%d", groups)
	return a
}

// LocalResponseNorm is nn.LocalResponseNorm: each element of a [N, C, ...]
// input divided by (K + Alpha/Size · Σ x²)^Beta, the sum over the Size
// neighbouring channels [c - Size/2, c + (Size-1)/2] (zero outside).
type LocalResponseNorm struct {
	stateless
	Size           int
	Alpha, Beta, K float64
}

// NewLocalResponseNorm returns a LocalResponseNorm (PyTorch's defaults:
// alpha 1e-4, beta 0.75, k 1).
func NewLocalResponseNorm(size int, alpha, beta, k float64) *LocalResponseNorm {
	if size <= 0 {
		argErr("NewLocalResponseNorm", "size must be positive, got %d", size)
	}
	l := &LocalResponseNorm{Size: size, Alpha: alpha, Beta: beta, K: k}
	l.Init(l)
	return l
}

// Forward normalises x (3 or more dims).
func (l *LocalResponseNorm) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(l, "Forward")
	if x == nil {
		argErr("LocalResponseNorm", "input is nil")
	}
	d := x.Dim()
	if d < 3 {
		argErr("LocalResponseNorm", "Expected 3D or higher dimensionality input (got %d dimensions)", d)
	}
	if x.NumElements() == 0 {
		return x
	}
	pad := make([]int, 2*(d-1))
	pad[len(pad)-2], pad[len(pad)-1] = l.Size/2, (l.Size-1)/2
	sq := ember.Pad(x.Mul(x), pad, 0)
	c := x.Size(1)
	sum := sq.Narrow(1, 0, c)
	for i := 1; i < l.Size; i++ {
		sum = sum.Add(sq.Narrow(1, i, c))
	}
	div := sum.MulScalar(l.Alpha / float64(l.Size)).AddScalar(l.K).PowScalar(l.Beta)
	return x.Div(div)
}

// ExtraRepr is "2, alpha=0.0001, beta=0.75, k=1.0".
func (l *LocalResponseNorm) ExtraRepr() string {
	CheckNil(l, "ExtraRepr")
	return fmt.Sprintf("%d, alpha=%s, beta=%s, k=%s", l.Size, pyFloat(l.Alpha), pyFloat(l.Beta), pyFloat(l.K))
}

// InstanceNorm is nn.InstanceNorm1d / 2d: each channel of each sample
// normalised by its own mean and (biased) variance over the spatial dims;
// with Affine, then scaled by Weight and shifted by Bias ([C], 1 and 0);
// with TrackRunningStats, training updates RunningMean and RunningVar
// (momentum, the unbiased variance, averaged over the batch) and
// evaluation uses them. An unbatched input ([C, L] for 1d, [C, H, W] for
// 2d) is taken as a batch of one.
type InstanceNorm struct {
	Base
	Weight, Bias            *ember.Tensor
	RunningMean, RunningVar *ember.Tensor
	NumBatchesTracked       *ember.Tensor
	Features                int
	Eps, Momentum           float64
	Affine                  bool
	TrackRunningStats       bool
	spatial                 int // 1 or 2
}

// NewInstanceNorm1d returns an InstanceNorm over c channels of [N, C, L]
// or [C, L] inputs (eps 1e-5, momentum 0.1).
func NewInstanceNorm1d(c int, affine, trackRunningStats bool) *InstanceNorm {
	return newIN(c, 1, affine, trackRunningStats)
}

// NewInstanceNorm2d returns an InstanceNorm over c channels of
// [N, C, H, W] or [C, H, W] inputs (eps 1e-5, momentum 0.1).
func NewInstanceNorm2d(c int, affine, trackRunningStats bool) *InstanceNorm {
	return newIN(c, 2, affine, trackRunningStats)
}

func newIN(c, spatial int, affine, track bool) *InstanceNorm {
	n := &InstanceNorm{Features: c, Eps: 1e-5, Momentum: 0.1, Affine: affine, TrackRunningStats: track, spatial: spatial}
	n.Init(n)
	if affine {
		n.Weight = param(ember.Ones(ember.Shape{c}))
		n.Bias = param(ember.Zeros(ember.Shape{c}))
		n.RegisterParameter("weight", &n.Weight)
		n.RegisterParameter("bias", &n.Bias)
	}
	if track {
		n.RunningMean = ember.Zeros(ember.Shape{c})
		n.RunningVar = ember.Ones(ember.Shape{c})
		n.NumBatchesTracked = ember.Zeros(ember.Shape{}, ember.Dtype(ember.Int64))
		n.RegisterBuffer("running_mean", &n.RunningMean)
		n.RegisterBuffer("running_var", &n.RunningVar)
		n.RegisterBuffer("num_batches_tracked", &n.NumBatchesTracked)
	}
	return n
}

func (n *InstanceNorm) moduleName() string { return fmt.Sprintf("InstanceNorm%dd", n.spatial) }

// ExtraRepr is "3, eps=1e-05, momentum=0.1, affine=False,
// track_running_stats=False".
func (n *InstanceNorm) ExtraRepr() string {
	CheckNil(n, "ExtraRepr")
	return fmt.Sprintf("%d, eps=%s, momentum=%s, affine=%s, track_running_stats=%s", n.Features, pyFloat(n.Eps), pyFloat(n.Momentum), pyBool(n.Affine), pyBool(n.TrackRunningStats))
}

// Forward normalises x.
func (n *InstanceNorm) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(n, "Forward")
	op := n.moduleName()
	if x == nil {
		argErr(op, "input is nil")
	}
	d := x.Dim()
	if d != n.spatial+1 && d != n.spatial+2 {
		argErr(op, "expected %dD or %dD input (got %dD input)", n.spatial+1, n.spatial+2, d)
	}
	if d == n.spatial+1 { // unbatched
		return n.Forward(x.Unsqueeze(0)).Squeeze(0)
	}
	s := x.Shape()
	if s[1] != n.Features && n.Affine {
		argErr(op, "expected input's size at dim=1 to match num_features (%d), but got: %d.", n.Features, s[1])
	}
	c := s[1]
	xr := x.Reshape(s[0], c, -1)
	m := xr.Size(2)
	useInput := n.Training() || !n.TrackRunningStats
	var mean, vr *ember.Tensor
	if useInput {
		if m <= 1 {
			argErr(op, "Expected more than 1 spatial element when training, got input size %s", pyList(s))
		}
		mean = xr.Mean(ember.Dims(2), ember.KeepDim())
		vr = xr.Var(ember.Dims(2), ember.KeepDim(), ember.Correction(0))
		if n.TrackRunningStats && n.RunningMean != nil && n.RunningVar != nil {
			mom := n.Momentum
			bm := mean.Detach().Mean(ember.Dims(0)).Reshape(c)
			bv := vr.Detach().MulScalar(float64(m) / float64(m-1)).Mean(ember.Dims(0)).Reshape(c)
			ember.NoGrad(func() {
				n.RunningMean.CopyFrom(n.RunningMean.MulScalar(1 - mom).Add(bm.MulScalar(mom).Cast(n.RunningMean.DType())))
				n.RunningVar.CopyFrom(n.RunningVar.MulScalar(1 - mom).Add(bv.MulScalar(mom).Cast(n.RunningVar.DType())))
			})
		}
	} else {
		mean = n.RunningMean.Reshape(1, c, 1).Cast(x.DType())
		vr = n.RunningVar.Reshape(1, c, 1).Cast(x.DType())
	}
	y := xr.Sub(mean).Mul(vr.AddScalar(n.Eps).Rsqrt())
	if n.Affine {
		y = y.Mul(n.Weight.Reshape(1, c, 1)).Add(n.Bias.Reshape(1, c, 1))
	}
	return y.Reshape(s...)
}

// NewDropout1d returns a Dropout that zeroes whole channels of [N, C, L]
// (or unbatched [C, L]) inputs, as nn.Dropout1d(p).
func NewDropout1d(p float64) *Dropout { return newDropoutKind("Dropout1d", p) }

// NewDropout2d returns a Dropout that zeroes whole channels of [N, C, H,
// W] inputs, as nn.Dropout2d(p) (which, as PyTorch 1.13, takes a 3-D
// input as [N, C, L]).
func NewDropout2d(p float64) *Dropout { return newDropoutKind("Dropout2d", p) }

// NewAlphaDropout returns nn.AlphaDropout(p): in training each element is
// kept with probability 1-p, the dropped ones set to SELU's negative
// saturation, and an affine map a·x+b restores zero mean and unit
// variance.
func NewAlphaDropout(p float64) *Dropout { return newDropoutKind("AlphaDropout", p) }

func newDropoutKind(kind string, p float64) *Dropout {
	if !(p >= 0 && p <= 1) {
		argErr("New"+kind, "dropout probability has to be between 0 and 1, but got %v", p)
	}
	d := &Dropout{P: p, kind: kind}
	d.Init(d)
	return d
}

func (d *Dropout) moduleName() string {
	if d.kind == "" {
		return "Dropout"
	}
	return d.kind
}

// featureDropout zeroes whole channels (dims 0 and 1 of x) with
// probability p and scales the rest by 1/(1-p).
func featureDropout(op string, x *ember.Tensor, p float64) *ember.Tensor {
	return x.Mul(keepMask(x, featureShape(op, x), p, 1/(1-p)))
}

// keepMask is 1/(1-p)·Bernoulli(1-p) of shape (scale), in x's dtype, on
// x's device; all zeros for p = 1.
func keepMask(x *ember.Tensor, shape ember.Shape, p, scale float64) *ember.Tensor {
	dt := x.DType()
	if !dt.IsFloat() {
		panic(&ember.DTypeError{Op: "nn.Dropout", DTypes: []ember.DType{dt}, Msg: "dropout needs a floating dtype"})
	}
	keep := ember.Rand(shape, ember.On(x.Device())).LtScalar(1 - p).Cast(dt)
	if p == 1 {
		return keep.MulScalar(0)
	}
	return keep.MulScalar(scale)
}

func (d *Dropout) forwardKind(x *ember.Tensor) *ember.Tensor {
	if x == nil {
		argErr(d.kind, "input is nil")
	}
	if !(d.P >= 0 && d.P <= 1) { // P set after construction (NaN too), as ember.Dropout
		argErr(d.kind, "dropout probability has to be between 0 and 1, but got %v", d.P)
	}
	if !d.Training() || d.P == 0 || x.NumElements() == 0 {
		return x
	}
	switch d.kind {
	case "Dropout1d":
		dim := x.Dim()
		if dim != 2 && dim != 3 {
			panic(&ember.ShapeError{Op: "nn.Dropout1d", Msg: fmt.Sprintf("dropout1d: Expected 2D or 3D input, but received a %dD input. Note that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).", dim), Shapes: []ember.Shape{x.Shape()}})
		}
		if dim == 2 {
			return featureDropout("Dropout1d", x.Unsqueeze(0), d.P).Squeeze(0)
		}
		return featureDropout("Dropout1d", x, d.P)
	case "Dropout2d":
		return featureDropout("Dropout2d", x, d.P)
	case "Dropout3d":
		if x.Dim() != 5 {
			return featureDropout("Dropout3d", x.Unsqueeze(0), d.P).Squeeze(0)
		}
		return featureDropout("Dropout3d", x, d.P)
	case "FeatureAlphaDropout":
		return alphaDropout(x, featureShape("FeatureAlphaDropout", x), d.P)
	}
	return alphaDropout(x, x.Shape(), d.P)
}

// NewInstanceNorm3d returns an InstanceNorm over c channels of
// [N, C, D, H, W] or [C, D, H, W] inputs (eps 1e-5, momentum 0.1).
func NewInstanceNorm3d(c int, affine, trackRunningStats bool) *InstanceNorm {
	return newIN(c, 3, affine, trackRunningStats)
}

// NewDropout3d returns a Dropout that zeroes whole channels of
// [N, C, D, H, W] inputs (an input of another rank is taken as unbatched,
// as PyTorch 1.13 does), as nn.Dropout3d(p).
func NewDropout3d(p float64) *Dropout { return newDropoutKind("Dropout3d", p) }

// NewFeatureAlphaDropout returns nn.FeatureAlphaDropout(p): AlphaDropout
// with whole channels (dims 0 and 1 of the input) kept or dropped.
func NewFeatureAlphaDropout(p float64) *Dropout { return newDropoutKind("FeatureAlphaDropout", p) }

// alphaDropout is ATen's _dropout_impl with alpha_dropout: for a kept
// element a·x + α·a·p, for a dropped one α·a·(p-1), the mask of shape
// (x's for AlphaDropout, [N, C, 1, ...] for FeatureAlphaDropout).
func alphaDropout(x *ember.Tensor, shape ember.Shape, p float64) *ember.Tensor {
	if p == 1 {
		return x.MulScalar(0)
	}
	const alpha = 1.7580993408473766
	a := 1 / math.Sqrt((alpha*alpha*p+1)*(1-p))
	keep := keepMask(x, shape, p, 1)
	b := keep.AddScalar(-1).MulScalar(alpha * a).AddScalar(alpha * a * p)
	return x.Mul(keep.MulScalar(a)).Add(b)
}

// featureShape is [N, C, 1, ...] for x; x must have 2 or more dims.
func featureShape(op string, x *ember.Tensor) ember.Shape {
	s := x.Shape()
	if len(s) < 2 {
		panic(&ember.ShapeError{Op: "nn." + op, Msg: "Feature dropout requires at least 2 dimensions in the input", Shapes: []ember.Shape{s}})
	}
	ms := make(ember.Shape, len(s))
	for i := range ms {
		ms[i] = 1
	}
	ms[0], ms[1] = s[0], s[1]
	return ms
}

// LPPool is nn.LPPool1d / LPPool2d: the p-norm of each window,
// (Σ x^p)^(1/p), computed as PyTorch does from an average pool of x^p (so
// a window whose sum is 0 has gradient 0, and a negative sum with an odd p
// gives NaN). Kernel and Stride are (height, width) pairs ({1, k} for
// 1d); a zero Stride is PyTorch's stride=None, the kernel size.
type LPPool struct {
	stateless
	NormType       float64
	Kernel, Stride [2]int
	CeilMode       bool
	dims           int // 1 or 2
}

// NewLPPool1d returns an LPPool1d over windows of kernel along L (stride
// 0: the kernel).
func NewLPPool1d(normType float64, kernel, stride int, ceilMode bool) *LPPool {
	return newLPPool(normType, [2]int{1, kernel}, [2]int{1, stride}, ceilMode, 1)
}

// NewLPPool2d returns an LPPool2d over (height, width) windows (stride
// {0, 0}: the kernel).
func NewLPPool2d(normType float64, kernel, stride [2]int, ceilMode bool) *LPPool {
	return newLPPool(normType, kernel, stride, ceilMode, 2)
}

func newLPPool(p float64, k, s [2]int, ceil bool, dims int) *LPPool {
	if k[0] <= 0 || k[1] <= 0 || s[0] < 0 || s[1] < 0 {
		argErr(fmt.Sprintf("NewLPPool%dd", dims), "kernel_size must be positive and stride non-negative, got %v and %v", k, s)
	}
	if dims == 1 && s[1] == 0 {
		s = [2]int{}
	}
	l := &LPPool{NormType: p, Kernel: k, Stride: s, CeilMode: ceil, dims: dims}
	l.Init(l)
	return l
}

func (l *LPPool) moduleName() string { return fmt.Sprintf("LPPool%dd", l.dims) }

// ExtraRepr is "norm_type=2, kernel_size=3, stride=None, ceil_mode=False".
func (l *LPPool) ExtraRepr() string {
	CheckNil(l, "ExtraRepr")
	nt := pyFloat(l.NormType)
	if l.NormType == math.Trunc(l.NormType) && math.Abs(l.NormType) < 1e15 {
		nt = fmt.Sprint(int64(l.NormType)) // as PyTorch prints the int it was given
	}
	k, s := pySize(l.Kernel), "None"
	if l.dims == 1 {
		k = fmt.Sprint(l.Kernel[1])
	}
	if l.Stride != [2]int{} {
		s = pySize(l.Stride)
		if l.dims == 1 {
			s = fmt.Sprint(l.Stride[1])
		}
	}
	return fmt.Sprintf("norm_type=%s, kernel_size=%s, stride=%s, ceil_mode=%s", nt, k, s, pyBool(l.CeilMode))
}

// Forward pools x ([N, C, L] or [C, L] for 1d, [N, C, H, W] or [C, H, W]
// for 2d).
func (l *LPPool) Forward(x *ember.Tensor) *ember.Tensor {
	CheckNil(l, "Forward")
	if x == nil {
		argErr(l.moduleName(), "input is nil")
	}
	stride := l.Stride
	if stride == [2]int{} {
		stride = l.Kernel
	}
	var opts []ember.PoolOption
	if l.CeilMode {
		opts = append(opts, ember.CeilMode())
	}
	xp := x.PowScalar(l.NormType)
	var out *ember.Tensor
	if l.dims == 1 {
		out = ember.AvgPool1d(xp, l.Kernel[1], stride[1], 0, true, opts...)
	} else {
		out = ember.AvgPool2d(xp, l.Kernel, stride, [2]int{}, true, opts...)
	}
	n := float64(l.Kernel[0] * l.Kernel[1])
	return out.Sign().Mul(out.Abs().ReLU()).MulScalar(n).PowScalar(1 / l.NormType)
}
