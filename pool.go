package ember

import (
	"fmt"

	"github.com/emberml/ember/backend"
)

// 2-D pooling. MaxPool2d and AvgPool2d check their arguments and run the
// backend's Pooler or the generic lowering (kernels.go);
// AdaptiveAvgPool2d is two MatMuls on every backend.

// poolArgs resolves a zero stride to the kernel and checks the padding.
func poolArgs(op string, kernel, stride, padding [2]int) [2]int {
	if kernel[0] <= 0 || kernel[1] <= 0 {
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("kernel size should be greater than zero, but got kH: %d kW: %d", kernel[0], kernel[1])})
	}
	if stride[0] == 0 && stride[1] == 0 {
		stride = kernel // PyTorch's default stride is the kernel size
	}
	for i := 0; i < 2; i++ {
		if padding[i] > kernel[i]/2 { // (padding*2 overflows for a huge padding)
			panic(&ShapeError{Op: op, Msg: fmt.Sprintf("pad should be at most half of effective kernel size, but got pad=%d, kernel_size=%d", padding[i], kernel[i])})
		}
	}
	return stride
}

// PoolOption configures MaxPool2d and AvgPool2d.
type PoolOption func(*poolOpts)

type poolOpts struct{ ceil bool }

// CeilMode is PyTorch's ceil_mode=True: the output size rounds up, so a
// last window that would hang over the (right or bottom) padded edge is
// kept, as long as it starts inside the input or its left padding; it is
// clipped there. AvgPool2d divides such a window by its part inside the
// padded input (count_include_pad) or inside the input.
func CeilMode() PoolOption { return func(o *poolOpts) { o.ceil = true } }

func poolOptions(op string, opts []PoolOption) poolOpts {
	var o poolOpts
	for _, f := range opts {
		if f == nil {
			panic(&ValueError{Op: op, Msg: "nil PoolOption"})
		}
		f(&o)
	}
	return o
}

// poolOutSize is a pool's output size along one dim, as PyTorch's
// pooling_output_shape: with ceil, rounded up, but the last window must
// start inside the input or the left padding.
func poolOutSize(op string, in, k, s, p int, ceil bool) int {
	if !ceil || s <= 0 || p < 0 {
		return outSize(op, in, k, s, p, 1)
	}
	// torch: (in + 2p − k + s − 1) floor-divided by s, plus 1, without
	// adding s (a huge stride would overflow)
	a := in + 2*p - k // (2p ≤ k: no overflow)
	o := 0
	switch {
	case a >= 0:
		o = a/s + 1
		if a%s != 0 {
			o++
		}
	case a >= 1-s:
		o = 1
	}
	if o > 1 && (o-1)*s >= in+p {
		o--
	}
	if o <= 0 {
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("Calculated output size is too small (input %d, kernel %d, stride %d, padding %d, ceil_mode=True)", in, k, s, p)})
	}
	return o
}

// nonEmptyPlane panics with a *ShapeError for an input plane with no rows
// or no columns, as PyTorch's pools (a padded output over it read past the
// input's data).
func nonEmptyPlane(op string, x *Tensor, h, w int) {
	if h == 0 || w == 0 {
		shapeErr(op, fmt.Sprintf("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got: %v", x.shape), x.shape)
	}
}

// MaxPool2d is torch.nn.functional.max_pool2d over [N, C, H, W] (or
// [C, H, W]); a zero stride means the kernel size, as PyTorch's default.
// Padding counts as -inf. The gradient goes to the first maximum of each
// window, as PyTorch routes it. It records MaxPool2DWithIndicesBackward0.
// The option CeilMode is ceil_mode=True.
func MaxPool2d(x *Tensor, kernel, stride, padding [2]int, opts ...PoolOption) *Tensor {
	return NativeKernels.MaxPool2d(x, kernel, stride, padding, opts...)
}

// MaxPool2d is the package's MaxPool2d run with k's kernels.
func (k Kernels) MaxPool2d(x *Tensor, kernel, stride, padding [2]int, opts ...PoolOption) *Tensor {
	const name = "max_pool2d"
	x.nonNil(name)
	o := poolOptions(name, opts)
	if x.dtype.IsHalf() && !k.poolsHalf(x) {
		return inFloat32(x.dtype, []*Tensor{x}, func(c []*Tensor) *Tensor { return k.MaxPool2d(c[0], kernel, stride, padding, opts...) })
	}
	x4, undo := batched4d(name, x)
	stride = poolArgs(name, kernel, stride, padding)
	n, c, h, wd := x4.shape[0], x4.shape[1], x4.shape[2], x4.shape[3]
	nonEmptyPlane(name, x, h, wd)
	oh := poolOutSize(name, h, kernel[0], stride[0], padding[0], o.ceil)
	ow := poolOutSize(name, wd, kernel[1], stride[1], padding[1], o.ceil)
	p := backend.Pool2dParams{Kernel: kernel, Stride: stride, Padding: padding}
	return undo(k.pool(x).maxPool2d(x4, p, Shape{n, c, oh, ow}))
}

// AvgPool2d is torch.nn.functional.avg_pool2d over [N, C, H, W] (or
// [C, H, W]); a zero stride means the kernel size. countIncludePad divides
// by the whole window, else by its part inside the input. It records
// AvgPool2DBackward0. The option CeilMode is ceil_mode=True.
func AvgPool2d(x *Tensor, kernel, stride, padding [2]int, countIncludePad bool, opts ...PoolOption) *Tensor {
	return NativeKernels.AvgPool2d(x, kernel, stride, padding, countIncludePad, opts...)
}

// AvgPool2d is the package's AvgPool2d run with k's kernels.
func (k Kernels) AvgPool2d(x *Tensor, kernel, stride, padding [2]int, countIncludePad bool, opts ...PoolOption) *Tensor {
	const name = "avg_pool2d"
	x.nonNil(name)
	o := poolOptions(name, opts)
	if x.dtype.IsHalf() {
		return inFloat32(x.dtype, []*Tensor{x}, func(c []*Tensor) *Tensor {
			return k.AvgPool2d(c[0], kernel, stride, padding, countIncludePad, opts...)
		})
	}
	x4, undo := batched4d(name, x)
	stride = poolArgs(name, kernel, stride, padding)
	n, c, h, wd := x4.shape[0], x4.shape[1], x4.shape[2], x4.shape[3]
	nonEmptyPlane(name, x, h, wd)
	oh := poolOutSize(name, h, kernel[0], stride[0], padding[0], o.ceil)
	ow := poolOutSize(name, wd, kernel[1], stride[1], padding[1], o.ceil)
	if !x.dtype.IsFloat() {
		panic(&DTypeError{Op: name, DTypes: []DType{x.dtype}, Msg: "avg_pool2d needs a floating dtype"})
	}
	p := backend.Pool2dParams{Kernel: kernel, Stride: stride, Padding: padding}
	return undo(k.pool(x).avgPool2d(x4, p, countIncludePad, Shape{n, c, oh, ow}))
}

// maxPoolMatrix bounds poolMatrix's elements (2 GiB of float64): built on
// the host, it would otherwise be a fatal out-of-memory rather than an
// *OutOfMemoryError (an output of 2³¹ rows from 8 was).
const maxPoolMatrix = 1 << 28

// poolMatrix is the [out, in] matrix of adaptive average pooling along one
// dim: row i averages in[floor(i*in/out) : ceil((i+1)*in/out)].
func poolMatrix(op string, in, out int, dt DType, dev Device) *Tensor {
	if n := checkShape(op, Shape{out, in}); n > maxPoolMatrix {
		shapeErr(op, fmt.Sprintf("an output size of %d from %d: its pooling matrix would have %d elements (at most %d)", out, in, n, maxPoolMatrix), Shape{out, in})
	}
	m := make([]float64, out*in)
	for i := 0; i < out; i++ {
		s, e := i*in/out, ((i+1)*in+out-1)/out
		for j := s; j < e; j++ {
			m[i*in+j] = 1 / float64(e-s)
		}
	}
	return FromSlice(m, Shape{out, in}, Dtype(dt), On(dev))
}

// AdaptiveAvgPool2d averages [N, C, H, W] (or [C, H, W]) into outH×outW
// windows as torch.nn.functional.adaptive_avg_pool2d. It records
// AdaptiveAvgPool2DBackward0.
func AdaptiveAvgPool2d(x *Tensor, outH, outW int) *Tensor {
	const name = "adaptive_avg_pool2d"
	x4, undo := batched4d(name, x)
	if outH <= 0 || outW <= 0 {
		panic(&ShapeError{Op: name, Msg: "output size must be positive"})
	}
	if !x.dtype.IsFloat() {
		panic(&DTypeError{Op: name, DTypes: []DType{x.dtype}, Msg: "adaptive_avg_pool2d needs a floating dtype"})
	}
	if x4.shape[2] == 0 || x4.shape[3] == 0 {
		// (an empty plane averaged to NaN before)
		shapeErr(name, "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions", x.shape)
	}
	if outH == 1 && outW == 1 {
		// global average pooling (ResNet's head): a mean over the plane,
		// rather than two batched products of 1-row matrices
		h, w := x4.shape[2], x4.shape[3]
		out := x4.Detach().Mean(Dims(2, 3), KeepDim())
		out = record("AdaptiveAvgPool2DBackward0", out, []*Tensor{x4}, nil, func(g *Tensor) []*Tensor {
			return []*Tensor{g.DivScalar(float64(h * w)).Expand(x4.shape...).Contiguous()}
		})
		return undo(out)
	}
	checkShape(name, Shape{x4.shape[0], x4.shape[1], outH, outW})
	// two-byte floats: the pooling matrices, the products and the
	// intermediate in float32, the result rounded once (forward and
	// backward), as PyTorch's kernels accumulate in float32
	cdt := x.dtype
	if cdt.IsHalf() {
		cdt = Float32
	}
	ph := poolMatrix(name, x4.shape[2], outH, cdt, x.dev)
	pw := poolMatrix(name, x4.shape[3], outW, cdt, x.dev)
	var out *Tensor
	AutocastDisabled(func() {
		out = ph.MatMul(x4.Detach().Cast(cdt).MatMul(pw.T())).Cast(x.dtype)
	})
	out = record("AdaptiveAvgPool2DBackward0", out, []*Tensor{x4}, nil, func(g *Tensor) []*Tensor {
		var gx *Tensor
		AutocastDisabled(func() { gx = ph.T().MatMul(g.Cast(cdt).MatMul(pw)).Cast(g.dtype) })
		return []*Tensor{gx}
	})
	return undo(out)
}

// pool1dArgs checks a 1-D pool's input [N, C, L] (or [C, L]) and
// arguments under the 1-D op's name, resolving a zero stride to the
// kernel, so that the 2-D pool it runs as (over a height of 1) finds
// nothing to refuse.
func pool1dArgs(op string, x *Tensor, kernel, stride, padding int, ceil bool) int {
	x.nonNil(op)
	x.live(op)
	if x.Dim() != 2 && x.Dim() != 3 {
		shapeErr(op, fmt.Sprintf("Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got: %v", x.shape), x.shape)
	}
	if kernel <= 0 {
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("kernel_size must be greater than zero, but got %d", kernel), Shapes: []Shape{x.shape}})
	}
	if stride == 0 {
		stride = kernel
	}
	if padding > kernel/2 {
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("padding should be at most half of kernel size, but got padding=%d and kernel_size=%d", padding, kernel), Shapes: []Shape{x.shape}})
	}
	l := x.shape[x.Dim()-1]
	if l == 0 {
		shapeErr(op, fmt.Sprintf("Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got: %v", x.shape), x.shape)
	}
	poolOutSize(op, l, kernel, stride, padding, ceil)
	return stride
}

// MaxPool1d is torch.nn.functional.max_pool1d over [N, C, L] (or
// [C, L]): MaxPool2d over a height of 1. A zero stride means the kernel
// size; the option CeilMode is ceil_mode=True.
func MaxPool1d(x *Tensor, kernel, stride, padding int, opts ...PoolOption) *Tensor {
	const name = "max_pool1d"
	stride = pool1dArgs(name, x, kernel, stride, padding, poolOptions(name, opts).ceil)
	return MaxPool2d(x.Unsqueeze(-2), [2]int{1, kernel}, [2]int{1, stride}, [2]int{0, padding}, opts...).Squeeze(-2)
}

// AvgPool1d is torch.nn.functional.avg_pool1d over [N, C, L] (or
// [C, L]): AvgPool2d over a height of 1. A zero stride means the kernel
// size; countIncludePad and the option CeilMode are as AvgPool2d's.
func AvgPool1d(x *Tensor, kernel, stride, padding int, countIncludePad bool, opts ...PoolOption) *Tensor {
	const name = "avg_pool1d"
	stride = pool1dArgs(name, x, kernel, stride, padding, poolOptions(name, opts).ceil)
	if !x.dtype.IsFloat() {
		panic(&DTypeError{Op: name, DTypes: []DType{x.dtype}, Msg: "avg_pool1d needs a floating dtype"})
	}
	return AvgPool2d(x.Unsqueeze(-2), [2]int{1, kernel}, [2]int{1, stride}, [2]int{0, padding}, countIncludePad, opts...).Squeeze(-2)
}

// AdaptiveAvgPool1d averages [N, C, L] (or [C, L]) into out windows as
// torch.nn.functional.adaptive_avg_pool1d (AdaptiveAvgPool2d over a
// height of 1).
func AdaptiveAvgPool1d(x *Tensor, out int) *Tensor {
	const name = "adaptive_avg_pool1d"
	x.nonNil(name)
	x.live(name)
	if x.Dim() != 2 && x.Dim() != 3 {
		shapeErr(name, "adaptive_avg_pool1d(): Expected 2D or 3D tensor", x.shape)
	}
	if out <= 0 {
		panic(&ShapeError{Op: name, Msg: "output size must be positive", Shapes: []Shape{x.shape}})
	}
	if x.shape[x.Dim()-1] == 0 {
		shapeErr(name, "adaptive_avg_pool1d(): Expected input to have non-zero size for non-batch dimensions", x.shape)
	}
	if !x.dtype.IsFloat() {
		panic(&DTypeError{Op: name, DTypes: []DType{x.dtype}, Msg: "adaptive_avg_pool1d needs a floating dtype"})
	}
	return AdaptiveAvgPool2d(x.Unsqueeze(-2), 1, out).Squeeze(-2)
}

// AdaptiveMaxPool2d takes the maximum of [N, C, H, W] (or [C, H, W]) over
// outH×outW windows as torch.nn.functional.adaptive_max_pool2d (without
// return_indices): window i spans rows floor(i·H/outH) to
// ceil((i+1)·H/outH), so for columns. The gradient goes to each window's
// first maximum in row-major order, as PyTorch routes it. Sizes that
// divide the input run as MaxPool2d; others as a maximum over each
// output column's columns, then over each output row's rows.
func AdaptiveMaxPool2d(x *Tensor, outH, outW int) *Tensor {
	const name = "adaptive_max_pool2d"
	x.nonNil(name)
	x4, undo := batched4d(name, x)
	if outH <= 0 || outW <= 0 {
		panic(&ShapeError{Op: name, Msg: "output size must be positive", Shapes: []Shape{x.shape}})
	}
	if !x.dtype.IsFloat() {
		panic(&DTypeError{Op: name, DTypes: []DType{x.dtype}, Msg: "adaptive_max_pool2d needs a floating dtype"})
	}
	h, w := x4.shape[2], x4.shape[3]
	if h == 0 || w == 0 {
		shapeErr(name, "adaptive_max_pool2d(): Expected input to have non-zero size for non-batch dimensions", x.shape)
	}
	checkShape(name, Shape{x4.shape[0], x4.shape[1], outH, outW})
	if h%outH == 0 && w%outW == 0 {
		k := [2]int{h / outH, w / outW}
		return undo(MaxPool2d(x4, k, k, [2]int{}))
	}
	if outH > h || outW > w {
		// windows repeat rows or columns: as many ops as outputs along
		// that dim, bounded by the output's size
		if n := outH + outW; n > 1<<16 {
			shapeErr(name, fmt.Sprintf("an output of %d×%d from %d×%d (at most 65536 rows and columns together when larger than the input)", outH, outW, h, w), x.shape)
		}
	}
	cols := make([]*Tensor, outW)
	for j := range cols {
		s, e := j*w/outW, ((j+1)*w+outW-1)/outW
		cols[j], _ = x4.Narrow(3, s, e-s).MaxDim(3, false) // [N, C, H]
	}
	cm := Stack(cols, 3) // [N, C, H, OW]
	rows := make([]*Tensor, outH)
	for i := range rows {
		s, e := i*h/outH, ((i+1)*h+outH-1)/outH
		rows[i], _ = cm.Narrow(2, s, e-s).MaxDim(2, false) // [N, C, OW]
	}
	return undo(Stack(rows, 2))
}
