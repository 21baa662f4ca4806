package ember

import (
	"fmt"
	"math"

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

type poolOpts struct {
	ceil   bool
	dil    [2]int
	dilSet bool
}

// CeilMode is PyTorch's ceil_mode=True: the output size rounds up, so a
// last window that would hang over the (right or bottom) padded edge is
// kept, as long as it starts inside the input or its left padding; it is
// clipped there. AvgPool2d divides such a window by its part inside the
// padded input (count_include_pad) or inside the input.
func CeilMode() PoolOption { return func(o *poolOpts) { o.ceil = true } }

// PoolDilation is max pooling's dilation=d: the window's elements d
// apart along both dims (MaxPool1d uses it along its length). AvgPool2d
// takes none, as PyTorch's.
func PoolDilation(d int) PoolOption { return PoolDilationHW(d, d) }

// PoolDilationHW is max pooling's dilation=(h, w).
func PoolDilationHW(h, w int) PoolOption {
	return func(o *poolOpts) { o.dil, o.dilSet = [2]int{h, w}, true }
}

// dilation is the options' dilation (1, 1 when unset), checked as
// PyTorch's.
func (o poolOpts) dilation(op string) [2]int {
	if !o.dilSet {
		return [2]int{1, 1}
	}
	if o.dil[0] <= 0 || o.dil[1] <= 0 {
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("dilation should be greater than zero, but got dilationH: %d dilationW: %d", o.dil[0], o.dil[1])})
	}
	return o.dil
}

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
// pooling_output_shape (d is the dilation): with ceil, rounded up, but the
// last window must start inside the input or the left padding.
func poolOutSize(op string, in, k, s, p, d int, ceil bool) int {
	if !ceil || s <= 0 || p < 0 || d <= 0 {
		return outSize(op, in, k, s, p, d)
	}
	if k > 1 && d > (math.MaxInt/4)/(k-1) {
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("Calculated output size is too small (input %d, kernel %d, padding %d, dilation %d)", in, k, p, d)})
	}
	// torch: (in + 2p − d(k−1) − 1 + s − 1) floor-divided by s, plus 1,
	// without adding s (a huge stride would overflow)
	a := in + 2*p - (d*(k-1) + 1) // (2p ≤ k: no overflow)
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
// The options CeilMode and PoolDilation are ceil_mode=True and dilation
// (a dilated pool runs as the generic lowering on every backend).
func MaxPool2d(x *Tensor, kernel, stride, padding [2]int, opts ...PoolOption) *Tensor {
	return NativeKernels.MaxPool2d(x, kernel, stride, padding, opts...)
}

// MaxPool2dWithIndices is MaxPool2d with return_indices=True: it also
// returns each maximum's position in its input plane, h·W + w (Int64, of
// the output's shape), as MaxUnpool2d takes them.
func MaxPool2dWithIndices(x *Tensor, kernel, stride, padding [2]int, opts ...PoolOption) (*Tensor, *Tensor) {
	return NativeKernels.MaxPool2dWithIndices(x, kernel, stride, padding, opts...)
}

// MaxPool2d is the package's MaxPool2d run with k's kernels.
func (k Kernels) MaxPool2d(x *Tensor, kernel, stride, padding [2]int, opts ...PoolOption) *Tensor {
	out, _ := k.maxPool2d(x, kernel, stride, padding, opts, false)
	return out
}

// MaxPool2dWithIndices is the package's MaxPool2dWithIndices run with k's
// kernels.
func (k Kernels) MaxPool2dWithIndices(x *Tensor, kernel, stride, padding [2]int, opts ...PoolOption) (*Tensor, *Tensor) {
	return k.maxPool2d(x, kernel, stride, padding, opts, true)
}

// maxPool2d is MaxPool2d, and the indices of the maxima when wantIdx.
func (k Kernels) maxPool2d(x *Tensor, kernel, stride, padding [2]int, opts []PoolOption, wantIdx bool) (*Tensor, *Tensor) {
	const name = "max_pool2d"
	x.nonNil(name)
	o := poolOptions(name, opts)
	if x.dtype.IsHalf() && !k.poolsHalf(x) {
		if !wantIdx {
			return inFloat32(x.dtype, []*Tensor{x}, func(c []*Tensor) *Tensor { return k.MaxPool2d(c[0], kernel, stride, padding, opts...) }), nil
		}
		var out, idx *Tensor
		AutocastDisabled(func() {
			out, idx = k.maxPool2d(x.live(name).Cast(Float32), kernel, stride, padding, opts, true)
			out = out.Cast(x.dtype)
		})
		return out, idx
	}
	x4, undo := batched4d(name, x)
	stride = poolArgs(name, kernel, stride, padding)
	dil := o.dilation(name)
	n, c, h, wd := x4.shape[0], x4.shape[1], x4.shape[2], x4.shape[3]
	nonEmptyPlane(name, x, h, wd)
	oh := poolOutSize(name, h, kernel[0], stride[0], padding[0], dil[0], o.ceil)
	ow := poolOutSize(name, wd, kernel[1], stride[1], padding[1], dil[1], o.ceil)
	p := backend.Pool2dParams{Kernel: kernel, Stride: stride, Padding: padding}
	oshape := Shape{n, c, oh, ow}
	var out, idx *Tensor
	pk := k.pool(x)
	switch np, native := pk.(nativePool); {
	case dil == [2]int{1, 1} && native:
		out, idx = np.maxPool2dIdx(x4, p, oshape, wantIdx)
	case dil == [2]int{1, 1} && !wantIdx:
		out = pk.maxPool2d(x4, p, oshape)
	default:
		out, idx = generic{}.maxPool2dDil(x4, p, dil, oshape, wantIdx)
	}
	if idx != nil {
		idx = undo(idx)
	}
	return undo(out), idx
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
	if o.dilSet && o.dil != [2]int{1, 1} {
		panic(&ValueError{Op: name, Msg: "avg_pool2d() got an unexpected keyword argument 'dilation'"})
	}
	oh := poolOutSize(name, h, kernel[0], stride[0], padding[0], 1, o.ceil)
	ow := poolOutSize(name, wd, kernel[1], stride[1], padding[1], 1, o.ceil)
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
func pool1dArgs(op string, x *Tensor, kernel, stride, padding, dil int, ceil bool) int {
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
	poolOutSize(op, l, kernel, stride, padding, dil, ceil)
	return stride
}

// MaxPool1d is torch.nn.functional.max_pool1d over [N, C, L] (or
// [C, L]): MaxPool2d over a height of 1. A zero stride means the kernel
// size; the options CeilMode and PoolDilation(d) are ceil_mode=True and
// dilation=d.
func MaxPool1d(x *Tensor, kernel, stride, padding int, opts ...PoolOption) *Tensor {
	out, _ := maxPool1d(x, kernel, stride, padding, opts, false)
	return out
}

// MaxPool1dWithIndices is MaxPool1d with return_indices=True: it also
// returns each maximum's position along L (Int64, the output's shape).
func MaxPool1dWithIndices(x *Tensor, kernel, stride, padding int, opts ...PoolOption) (*Tensor, *Tensor) {
	return maxPool1d(x, kernel, stride, padding, opts, true)
}

func maxPool1d(x *Tensor, kernel, stride, padding int, opts []PoolOption, wantIdx bool) (*Tensor, *Tensor) {
	const name = "max_pool1d"
	o := poolOptions(name, opts)
	d := o.dilation(name)[1]
	stride = pool1dArgs(name, x, kernel, stride, padding, d, o.ceil)
	opts2 := []PoolOption{PoolDilationHW(1, d)}
	if o.ceil {
		opts2 = append(opts2, CeilMode())
	}
	out, idx := NativeKernels.maxPool2d(x.Unsqueeze(-2), [2]int{1, kernel}, [2]int{1, stride}, [2]int{0, padding}, opts2, wantIdx)
	if idx != nil {
		idx = idx.Squeeze(-2)
	}
	return out.Squeeze(-2), idx
}

// AvgPool1d is torch.nn.functional.avg_pool1d over [N, C, L] (or
// [C, L]): AvgPool2d over a height of 1. A zero stride means the kernel
// size; countIncludePad and the option CeilMode are as AvgPool2d's.
func AvgPool1d(x *Tensor, kernel, stride, padding int, countIncludePad bool, opts ...PoolOption) *Tensor {
	const name = "avg_pool1d"
	o := poolOptions(name, opts)
	if o.dilSet && o.dil != [2]int{1, 1} {
		panic(&ValueError{Op: name, Msg: "avg_pool1d() got an unexpected keyword argument 'dilation'"})
	}
	stride = pool1dArgs(name, x, kernel, stride, padding, 1, o.ceil)
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
	out, _ := adaptiveMaxPool2d(x, outH, outW, false)
	return out
}

// AdaptiveMaxPool2dWithIndices is AdaptiveMaxPool2d with
// return_indices=True: it also returns each maximum's position in its
// input plane, h·W + w (Int64, the output's shape).
func AdaptiveMaxPool2dWithIndices(x *Tensor, outH, outW int) (*Tensor, *Tensor) {
	return adaptiveMaxPool2d(x, outH, outW, true)
}

func adaptiveMaxPool2d(x *Tensor, outH, outW int, wantIdx bool) (*Tensor, *Tensor) {
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
		out, idx := NativeKernels.maxPool2d(x4, k, k, [2]int{}, nil, wantIdx)
		if idx != nil {
			idx = undo(idx)
		}
		return undo(out), idx
	}
	if outH > h || outW > w {
		// windows repeat rows or columns: as many ops as outputs along
		// that dim, bounded by the output's size
		if n := outH + outW; n > 1<<16 {
			shapeErr(name, fmt.Sprintf("an output of %d×%d from %d×%d (at most 65536 rows and columns together when larger than the input)", outH, outW, h, w), x.shape)
		}
	}
	// (the first maximum of each row's part, then the first row with the
	// window's maximum: the first in row-major order, as PyTorch's index)
	cols := make([]*Tensor, outW)
	colIx := make([]*Tensor, outW)
	for j := range cols {
		s, e := j*w/outW, ((j+1)*w+outW-1)/outW
		if wantIdx {
			cols[j], colIx[j] = maxDimLastNaN(x4.Narrow(3, s, e-s), 3) // [N, C, H]
		} else {
			cols[j], _ = x4.Narrow(3, s, e-s).MaxDim(3, false)
		}
		if wantIdx {
			colIx[j] = colIx[j].AddScalar(float64(s))
		}
	}
	cm := Stack(cols, 3) // [N, C, H, OW]
	var cix *Tensor
	if wantIdx {
		cix = Stack(colIx, 3)
	}
	rows := make([]*Tensor, outH)
	rowIx := make([]*Tensor, outH)
	for i := range rows {
		s, e := i*h/outH, ((i+1)*h+outH-1)/outH
		var ri *Tensor
		if wantIdx {
			rows[i], ri = maxDimLastNaN(cm.Narrow(2, s, e-s), 2) // [N, C, OW]
		} else {
			rows[i], _ = cm.Narrow(2, s, e-s).MaxDim(2, false)
		}
		if wantIdx {
			col := cix.Narrow(2, s, e-s).Gather(2, ri.Unsqueeze(2)).Squeeze(2)
			rowIx[i] = ri.AddScalar(float64(s)).MulScalar(float64(w)).Add(col)
		}
	}
	var idx *Tensor
	if wantIdx {
		idx = undo(Stack(rowIx, 2))
	}
	return undo(Stack(rows, 2)), idx
}

// unpoolSize is max_unpool's output size along each pooled dim: (in − 1)·
// stride − 2·padding + kernel, or outputSize (the pooled dims, or with
// the two leading ones) within stride of it, as PyTorch's
// _unpool_output_size.
func unpoolSize(op string, in, kernel, stride, padding, outputSize []int) []int {
	k := len(kernel)
	def := make([]int, k)
	for d := range def {
		// (stride, kernel and padding are at most 2^30)
		if n := in[len(in)-k+d] - 1; n > (math.MaxInt/2)/stride[d] {
			shapeErr(op, fmt.Sprintf("the unpooled size of %d elements with stride %d overflows", n+1, stride[d]), in)
		}
		def[d] = (in[len(in)-k+d]-1)*stride[d] + kernel[d] - 2*padding[d]
	}
	if outputSize == nil {
		return def
	}
	if len(outputSize) == k+2 {
		outputSize = outputSize[2:]
	}
	if len(outputSize) != k {
		panic(&ValueError{Op: op, Msg: fmt.Sprintf("output_size should be a sequence containing %d or %d elements, but it has a length of '%d'", k, k+2, len(outputSize))})
	}
	for d := range def {
		lo, hi := def[d]-stride[d], def[d]+stride[d]
		if outputSize[d] <= lo || outputSize[d] >= hi {
			panic(&ValueError{Op: op, Msg: fmt.Sprintf("invalid output_size %q (dim %d must be between %d and %d)", pyInts(outputSize), d, lo, hi)})
		}
	}
	return outputSize
}

// pyInts writes v as Python's tuple repr.
func pyInts(v []int) string {
	s := "("
	for i, x := range v {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(x)
	}
	if len(v) == 1 {
		s += ","
	}
	return s + ")"
}

// MaxUnpool2d is torch.nn.functional.max_unpool2d: the inverse of
// MaxPool2dWithIndices, x [N, C, H, W] (or [C, H, W]) written at indices
// (h·W + w in each output plane, Int64 of x's shape) into zeros of
// [N, C, OH, OW], OH = (H − 1)·stride − 2·padding + kernel (a zero stride
// means the kernel), or outputSize ((OH, OW) or the whole shape) within
// stride of that. The gradient gathers at the indices
// (MaxUnpool2DBackward0); an index outside the plane is an *IndexError.
func MaxUnpool2d(x, indices *Tensor, kernel, stride, padding [2]int, outputSize ...int) *Tensor {
	const name = "max_unpool2d"
	x.nonNil(name)
	indices.nonNil(name)
	x.live(name)
	indices.live(name)
	if x.Dim() != 3 && x.Dim() != 4 {
		shapeErr(name, fmt.Sprintf("Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with %d dimensions.", x.Dim()), x.shape)
	}
	if stride == [2]int{} {
		stride = kernel
	}
	for i := 0; i < 2; i++ {
		if kernel[i] <= 0 || stride[i] <= 0 || padding[i] < 0 || kernel[i] > 1<<30 || stride[i] > 1<<30 || padding[i] > 1<<30 {
			panic(&ShapeError{Op: name, Msg: fmt.Sprintf("invalid kernel %v, stride %v or padding %v", kernel, stride, padding), Shapes: []Shape{x.shape}})
		}
	}
	return maxUnpool(name, x, indices, kernel[:], stride[:], padding[:], outputSize)
}

// MaxUnpool1d is torch.nn.functional.max_unpool1d: MaxUnpool2d's inverse
// of MaxPool1dWithIndices over [N, C, L] (or [C, L]), indices along L.
func MaxUnpool1d(x, indices *Tensor, kernel, stride, padding int, outputSize ...int) *Tensor {
	const name = "max_unpool1d"
	x.nonNil(name)
	indices.nonNil(name)
	x.live(name)
	indices.live(name)
	if x.Dim() != 2 && x.Dim() != 3 {
		shapeErr(name, fmt.Sprintf("Input to max_unpooling1d should be a 2d or 3d Tensor, but got a tensor with %d dimensions.", x.Dim()), x.shape)
	}
	if stride == 0 {
		stride = kernel
	}
	if kernel <= 0 || stride <= 0 || padding < 0 || kernel > 1<<30 || stride > 1<<30 || padding > 1<<30 {
		panic(&ShapeError{Op: name, Msg: fmt.Sprintf("invalid kernel %d, stride %d or padding %d", kernel, stride, padding), Shapes: []Shape{x.shape}})
	}
	return maxUnpool(name, x, indices, []int{kernel}, []int{stride}, []int{padding}, outputSize)
}

// maxUnpool scatters x's last len(kernel) dims, flattened, at indices into
// zeros of the unpooled size.
func maxUnpool(name string, x, indices *Tensor, kernel, stride, padding, outputSize []int) *Tensor {
	sameDevice(name, x, indices)
	if indices.dtype != Int64 {
		panic(&DTypeError{Op: name, DTypes: []DType{indices.dtype}, Msg: fmt.Sprintf("elements in indices should be type int64 but got: %s", torchTypeName(indices.dtype))})
	}
	if !indices.shape.Equal(x.shape) {
		shapeErr(name, fmt.Sprintf("Expected shape of indices to be same as that of the input tensor (%v) but got indices tensor with shape: %v", x.shape, indices.shape), x.shape, indices.shape)
	}
	if !x.dtype.IsFloat() {
		panic(&DTypeError{Op: name, DTypes: []DType{x.dtype}, Msg: fmt.Sprintf("%q not implemented for '%s'", name, torchTypeName(x.dtype))})
	}
	k := len(kernel)
	size := unpoolSize(name, x.shape, kernel, stride, padding, outputSize)
	lead := x.shape[:x.Dim()-k].clone()
	plane, in := 1, 1
	for d := 0; d < k; d++ {
		if size[d] < 0 {
			shapeErr(name, fmt.Sprintf("negative output size %v", size), x.shape)
		}
		plane *= size[d]
		in *= x.shape[x.Dim()-k+d]
	}
	oshape := append(lead.clone(), size...)
	checkShape(name, oshape)
	flat := append(lead.clone(), plane)
	z := Zeros(flat, On(x.dev), Dtype(x.dtype))
	fx := append(lead.clone(), in)
	out := z.scatter(name, "MaxUnpool2DBackward0", len(lead), indices.Reshape(fx...), x.Reshape(fx...), false)
	gradFn := "MaxUnpool2DBackward0"
	if k == 1 {
		gradFn = "SqueezeBackward1" // PyTorch's unpools a height of 1
	}
	return rename(out.Reshape(oshape...), gradFn)
}

// maxDimLastNaN is MaxDim(d) with a slice's last NaN as its maximum, as
// PyTorch's max pools choose (MaxDim takes the first); the values are
// gathered at that index, so the gradient goes there too. (The last NaN
// of each row, then the last row holding one, is the window's last NaN in
// row-major order.)
func maxDimLastNaN(t *Tensor, d int) (*Tensor, *Tensor) {
	v, i := t.MaxDim(d, false)
	if !t.dtype.IsFloat() {
		return v, i
	}
	i = lastNaN(t, d, i)
	return t.Gather(d, i.Unsqueeze(d)).Squeeze(d), i
}

// lastNaN is i, the indices of t's maxima along d, with the last NaN of
// each slice holding one.
func lastNaN(t *Tensor, d int, i *Tensor) *Tensor {
	if !t.dtype.IsFloat() {
		return i
	}
	shape := make([]int, t.Dim())
	for k := range shape {
		shape[k] = 1
	}
	shape[d] = t.shape[d]
	q := Arange(1, float64(t.shape[d]+1), 1, On(t.dev), Dtype(Int64)).Reshape(shape...)
	last, _ := Where(t.Detach().IsNaN(), q.Expand(t.shape...), zeroLike(q)).MaxDim(d, false)
	return Where(last.GtScalar(0), last.AddScalar(-1), i)
}
