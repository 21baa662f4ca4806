package ember

import (
	"fmt"
	"math"

	"github.com/emberml/ember/backend"
)

// 2-D convolution. Conv2d checks its arguments and runs the backend's
// Convolver or the generic lowering (kernels.go).

// outSize is a convolution's or pool's output size along one dim.
// Sizes whose products overflow are refused (a dilated kernel's span
// d·(k−1) that wrapped round gave windows reading outside the input).
func outSize(op string, in, k, s, p, d int) int {
	if s <= 0 || k <= 0 || d <= 0 || p < 0 || p > math.MaxInt/4 {
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("invalid kernel %d, stride %d, padding %d or dilation %d", k, s, p, d)})
	}
	span := in + 2*p // the padded input (in is a tensor's dim: no overflow)
	if span < 1 || (k > 1 && d > (span-1)/(k-1)) {
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("Calculated output size is too small (input %d, kernel %d, padding %d, dilation %d)", in, k, p, d)})
	}
	return (span-d*(k-1)-1)/s + 1
}

// batched4d lifts an unbatched [C, H, W] input to [1, C, H, W]; undo
// squeezes the result back.
func batched4d(op string, x *Tensor) (*Tensor, func(*Tensor) *Tensor) {
	x.live(op)
	switch x.Dim() {
	case 4:
		return x, func(t *Tensor) *Tensor { return t }
	case 3:
		return x.Unsqueeze(0), func(t *Tensor) *Tensor { return t.Squeeze(0) }
	}
	shapeErr(op, "expected a 3-D (unbatched) or 4-D (batched) input", x.shape)
	return nil, nil
}

// Conv2d is the 2-D cross-correlation torch.nn.functional.conv2d: x is
// [N, C, H, W] (or unbatched [C, H, W]), w is [O, C/groups, KH, KW], b is
// [O] or nil. It records ConvolutionBackward0. Two-byte floats: on the CPU,
// bfloat16 operands run on the bfloat16 GEMM (each output a float32 sum of
// exact products and the bias, rounded once; so is the input gradient of
// a stride-1 convolution, the other gradients are float32 computations on
// the rounded operands, rounded once); float16, and bfloat16 elsewhere,
// compute in float32 on the rounded inputs.
func Conv2d(x, w, b *Tensor, stride, padding, dilation [2]int, groups int) *Tensor {
	return NativeKernels.Conv2d(x, w, b, stride, padding, dilation, groups)
}

// Conv2d is the package's Conv2d run with k's kernels.
func (k Kernels) Conv2d(x, w, b *Tensor, stride, padding, dilation [2]int, groups int) *Tensor {
	x.nonNil("conv2d")
	w.nonNil("conv2d")
	return k.conv2d(convNames{"conv2d", x.shape, w.shape}, x, w, b, stride, padding, dilation, groups)
}

// convNames is what a convolution's errors name: the op and the shapes
// its caller gave (Conv1d's 3-D ones, not the 4-D ones it runs on).
type convNames struct {
	op     string
	xs, ws Shape
}

func (k Kernels) conv2d(nm convNames, x, w, b *Tensor, stride, padding, dilation [2]int, groups int) *Tensor {
	name := nm.op
	if dt, ok := autocastLow(x, w, b); ok {
		return onCasts(dt, []*Tensor{x, w, b}, func(c []*Tensor) *Tensor {
			return k.conv2d(nm, c[0], c[1], c[2], stride, padding, dilation, groups)
		})
	}
	if x.dtype.IsHalf() && !k.convsHalf(x, w, b) {
		// two-byte floats: float32 products of the rounded inputs, rounded once
		return inFloat32(x.dtype, []*Tensor{x, w, b}, func(c []*Tensor) *Tensor {
			return k.conv2d(nm, c[0], c[1], c[2], stride, padding, dilation, groups)
		})
	}
	x4, undo := batched4d(name, x)
	w.live(name)
	sameDevice(name, x, w)
	if b != nil {
		sameDevice(name, x, b)
	}
	if w.Dim() != 4 || groups <= 0 {
		shapeErr(name, "expected a 4-D weight and groups > 0", nm.ws)
	}
	if x.dtype != w.dtype || (b != nil && b.dtype != x.dtype) {
		panic(&DTypeError{Op: name, DTypes: []DType{x.dtype, w.dtype}, Msg: "Input type and weight type should be the same"})
	}
	n, c, h, wd := x4.shape[0], x4.shape[1], x4.shape[2], x4.shape[3]
	o, cg, kh, kw := w.shape[0], w.shape[1], w.shape[2], w.shape[3]
	if o < groups {
		shapeErr(name, fmt.Sprintf("Given groups=%d, expected weight to be at least %d at dimension 0, but got weight of size %v instead", groups, groups, nm.ws), nm.xs, nm.ws)
	}
	if cg == 0 {
		// PyTorch returns a [N, 0, OH, OW] tensor here, not [N, O, OH, OW]:
		// refused rather than matched
		shapeErr(name, fmt.Sprintf("expected a weight with at least 1 input channel per group, but got weight of size %v", nm.ws), nm.xs, nm.ws)
	}
	if kh == 0 || kw == 0 {
		shapeErr(name, fmt.Sprintf("kernel size should be greater than zero, but got kernel_height: %d kernel_width: %d", kh, kw), nm.xs, nm.ws)
	}
	if cg*groups != c {
		shapeErr(name, fmt.Sprintf("Given groups=%d, weight of size %v, expected input%v to have %d channels, but got %d channels instead", groups, nm.ws, nm.xs, cg*groups, c), nm.xs, nm.ws)
	}
	if o%groups != 0 {
		shapeErr(name, fmt.Sprintf("Given groups=%d, expected weight to be divisible by %d at dimension 0, but got weight of size %v instead", groups, groups, nm.ws), nm.xs, nm.ws)
	}
	if b != nil && !b.shape.Equal(Shape{o}) {
		shapeErr(name, "bias must have shape [out_channels]", b.shape)
	}
	if h == 0 || wd == 0 { // (the GEMM's padded plane over nothing panicked with a string)
		shapeErr(name, fmt.Sprintf("Only zero batch or zero channel inputs are supported, but got input shape: %v", nm.xs), nm.xs)
	}
	oh := outSize(name, h, kh, stride[0], padding[0], dilation[0])
	ow := outSize(name, wd, kw, stride[1], padding[1], dilation[1])
	p := backend.Conv2dParams{Stride: stride, Padding: padding, Dilation: dilation, Groups: groups}
	return undo(k.conv(x).conv2d(x4, w, b, p, Shape{n, o, oh, ow}))
}

// Conv2dSame is torch.nn.functional.conv2d(x, w, b, padding='same',
// dilation=dilation, groups=groups): stride 1 and an output of the
// input's height and width. Each dim is padded with d·(k−1) zeros in all,
// half before and the odd one after, as PyTorch does (by padding the input
// when the split is uneven: ConstantPadNdBackward0 then comes first in
// the graph). padding='valid' is Conv2d with zero padding.
func Conv2dSame(x, w, b *Tensor, dilation [2]int, groups int) *Tensor {
	x.nonNil("conv2d")
	w.nonNil("conv2d")
	return convSame(convNames{"conv2d", x.shape, w.shape}, x, w, b, dilation, groups)
}

// convSame runs the 4-D weight w (a Conv1d's with a kernel height of 1)
// with 'same' padding.
func convSame(nm convNames, x, w, b *Tensor, dilation [2]int, groups int) *Tensor {
	x.live(nm.op)
	w.live(nm.op)
	if w.Dim() != 4 {
		shapeErr(nm.op, "expected a 4-D weight and groups > 0", nm.ws)
	}
	var left, extra [2]int
	for i := 0; i < 2; i++ {
		d, k := dilation[i], w.shape[2+i]
		if d <= 0 || k <= 0 || (k > 1 && d > math.MaxInt/(k-1)) { // (d·(k−1) would overflow)
			panic(&ShapeError{Op: nm.op, Msg: fmt.Sprintf("invalid kernel %d or dilation %d", k, d), Shapes: []Shape{nm.xs, nm.ws}})
		}
		total := d * (k - 1)
		left[i], extra[i] = total/2, total%2
	}
	if extra != [2]int{} {
		if x.Dim() < 3 {
			shapeErr(nm.op, "expected a 3-D (unbatched) or 4-D (batched) input", nm.xs)
		}
		x = Pad(x, []int{0, extra[1], 0, extra[0]}, 0)
	}
	return NativeKernels.conv2d(nm, x, w, b, [2]int{1, 1}, left, dilation, groups)
}

// Conv1d is the 1-D cross-correlation torch.nn.functional.conv1d: x is
// [N, C, L] (or unbatched [C, L]), w is [O, C/groups, K], b is [O] or
// nil. It runs as Conv2d over a height of 1 (ConvolutionBackward0).
func Conv1d(x, w, b *Tensor, stride, padding, dilation, groups int) *Tensor {
	nm := conv1dArgs(x, w)
	y := NativeKernels.conv2d(nm, x.Unsqueeze(-2), w.Unsqueeze(-2), b, [2]int{1, stride}, [2]int{0, padding}, [2]int{1, dilation}, groups).Squeeze(-2)
	return rename(y, "ConvolutionBackward0")
}

// Conv1dSame is torch.nn.functional.conv1d(x, w, b, padding='same',
// dilation=dilation, groups=groups): stride 1, an output as long as the
// input, d·(k−1) zeros in all, the odd one after (see Conv2dSame).
func Conv1dSame(x, w, b *Tensor, dilation, groups int) *Tensor {
	nm := conv1dArgs(x, w)
	y := convSame(nm, x.Unsqueeze(-2), w.Unsqueeze(-2), b, [2]int{1, dilation}, groups).Squeeze(-2)
	return rename(y, "ConvolutionBackward0")
}

// conv1dArgs checks Conv1d's input and weight ranks; its errors name
// conv1d and the shapes given.
func conv1dArgs(x, w *Tensor) convNames {
	const name = "conv1d"
	x.live(name)
	w.live(name)
	if x.Dim() != 2 && x.Dim() != 3 {
		shapeErr(name, "expected a 2-D (unbatched) or 3-D (batched) input", x.shape)
	}
	if w.Dim() != 3 {
		shapeErr(name, "expected a 3-D weight [out_channels, in_channels/groups, kernel]", w.shape)
	}
	return convNames{name, x.shape, w.shape}
}

// ConvTranspose2d is torch.nn.functional.conv_transpose2d, the gradient
// of Conv2d with respect to its input: x is [N, In, H, W] (or unbatched
// [In, H, W]), w is [In, Out/groups, KH, KW], b is [Out] or nil; the
// output is (H−1)·stride − 2·padding + dilation·(KH−1) + outputPadding + 1
// high (so wide). outputPadding adds rows and columns at the bottom and
// right and must be smaller than the stride or the dilation. It runs as
// Conv2d (ConvolutionBackward0) of the input spread out by the stride
// with zeros and padded by dilation·(k−1) − padding (cropped where that
// is negative), with the flipped, transposed weight; the gradients flow
// through those ops. (The zeros cost stride² more work than a dedicated
// kernel.)
func ConvTranspose2d(x, w, b *Tensor, stride, padding, outputPadding, dilation [2]int, groups int) *Tensor {
	const name = "conv_transpose2d"
	x.nonNil(name)
	w.nonNil(name)
	x4, undo := batched4d(name, x)
	w.live(name)
	if w.Dim() != 4 || groups <= 0 {
		shapeErr(name, "expected a 4-D weight and groups > 0", w.shape)
	}
	sameDevice(name, x, w)
	if b != nil {
		sameDevice(name, x, b)
	}
	if x.dtype != w.dtype || (b != nil && b.dtype != x.dtype) {
		panic(&DTypeError{Op: name, DTypes: []DType{x.dtype, w.dtype}, Msg: "Input type and weight type should be the same"})
	}
	n, c, h, wd := x4.shape[0], x4.shape[1], x4.shape[2], x4.shape[3]
	ci, og, kh, kw := w.shape[0], w.shape[1], w.shape[2], w.shape[3]
	if b != nil && !b.shape.Equal(Shape{og * groups}) {
		shapeErr(name, "bias must have shape [out_channels]", b.shape)
	}
	if ci < groups {
		shapeErr(name, fmt.Sprintf("Given groups=%d, expected weight to be at least %d at dimension 0, but got weight of size %v instead", groups, groups, w.shape), x.shape, w.shape)
	}
	if ci%groups != 0 {
		shapeErr(name, fmt.Sprintf("Given groups=%d, expected weight to be divisible by %d at dimension 0, but got weight of size %v instead", groups, groups, w.shape), x.shape, w.shape)
	}
	if c != ci {
		shapeErr(name, fmt.Sprintf("Given transposed=1, weight of size %v, expected input%v to have %d channels, but got %d channels instead", w.shape, x.shape, ci, c), x.shape, w.shape)
	}
	if og == 0 || kh == 0 || kw == 0 {
		shapeErr(name, fmt.Sprintf("expected a weight with output channels and a non-empty kernel, but got weight of size %v", w.shape), x.shape, w.shape)
	}
	if h == 0 || wd == 0 {
		shapeErr(name, fmt.Sprintf("Only zero batch or zero channel inputs are supported, but got input shape: %v", x.shape), x.shape)
	}
	k := [2]int{kh, kw}
	in := [2]int{h, wd}
	var lead, trail, out [2]int
	for i := 0; i < 2; i++ {
		s, p, op, d := stride[i], padding[i], outputPadding[i], dilation[i]
		if s <= 0 || d <= 0 || p < 0 || op < 0 || s > math.MaxInt32 || d > math.MaxInt32 || p > math.MaxInt32 || op > math.MaxInt32 || k[i] > math.MaxInt32 {
			panic(&ShapeError{Op: name, Msg: fmt.Sprintf("invalid stride %v, padding %v, output padding %v or dilation %v", stride, padding, outputPadding, dilation), Shapes: []Shape{x.shape, w.shape}})
		}
		if op >= s && op >= d {
			panic(&ShapeError{Op: name, Msg: fmt.Sprintf("output padding must be smaller than either stride or dilation, but got output_padding_height: %d output_padding_width: %d stride_height: %d stride_width: %d dilation_height: %d dilation_width: %d",
				outputPadding[0], outputPadding[1], stride[0], stride[1], dilation[0], dilation[1])})
		}
		out[i] = (in[i]-1)*s - 2*p + d*(k[i]-1) + op + 1
		lead[i] = d*(k[i]-1) - p
		trail[i] = lead[i] + op
	}
	if out[0] <= 0 || out[1] <= 0 {
		shapeErr(name, fmt.Sprintf("Given input size per channel: (%d x %d). Calculated output size per channel: (%d x %d). Output size is too small", h, wd, out[0], out[1]), x.shape, w.shape)
	}
	checkShape(name, Shape{n, og * groups, out[0], out[1]})
	// the input spread out: x[i, j] at (i·sh, j·sw), zeros between (a
	// dim of one element spreads to itself, whatever the stride)
	xs := x4
	if stride[1] > 1 && wd > 1 {
		xs = Pad(xs.Unsqueeze(-1), []int{0, stride[1] - 1}, 0).Reshape(n, c, h, wd*stride[1]).Narrow(3, 0, (wd-1)*stride[1]+1)
	}
	if stride[0] > 1 && h > 1 {
		ws := xs.shape[3]
		xs = Pad(xs.Unsqueeze(3), []int{0, 0, 0, stride[0] - 1}, 0).Reshape(n, c, h*stride[0], ws).Narrow(2, 0, (h-1)*stride[0]+1)
	}
	xs = Pad(xs, []int{lead[1], trail[1], lead[0], trail[0]}, 0)
	// [In, Out/g, KH, KW] → [Out, In/g, KH, KW], flipped
	wt := w.Reshape(groups, ci/groups, og, kh, kw).Transpose(1, 2).Reshape(groups*og, ci/groups, kh, kw).Flip(2, 3)
	return undo(Conv2d(xs, wt, b, [2]int{1, 1}, [2]int{}, dilation, groups))
}
