package backend

// Optional kernels for convolutional networks. A backend that implements
// one of these interfaces gets its kernels called; ember builds the same
// ops from the generic kernels of Backend (strided views, copies, MatMul,
// reductions) for a backend that does not. All work on NCHW tensors of a
// floating dtype.

// Conv2dParams are a 2-D convolution's stride, zero padding and dilation
// (rows, columns) and its number of groups.
type Conv2dParams struct {
	Stride, Padding, Dilation [2]int
	Groups                    int
}

// Convolver is implemented by backends with 2-D convolution kernels.
// Shapes: x [N, C, H, W], w [O, C/Groups, KH, KW], out and gout
// [N, O, OH, OW], with OH = (H + 2·pad − dil·(KH−1) − 1)/stride + 1 (and
// likewise OW); ember checks them.
type Convolver interface {
	// Conv2d writes the cross-correlation of x with w, plus bias ([O];
	// bias.S is nil for none), into the contiguous out. x and bias may have
	// any strides; w is contiguous.
	Conv2d(out, x, w, bias View, p Conv2dParams)
	// Conv2dGradInput writes the gradient with respect to x into the
	// contiguous gx, given the output's gradient gout and w (both
	// contiguous).
	Conv2dGradInput(gx, gout, w View, p Conv2dParams)
	// Conv2dGradWeight writes the gradient with respect to w into the
	// contiguous gw, given x (any strides) and the contiguous gout.
	Conv2dGradWeight(gw, x, gout View, p Conv2dParams)
}

// Pool2dParams are a 2-D pooling window's size, stride and padding (rows,
// columns).
type Pool2dParams struct {
	Kernel, Stride, Padding [2]int
}

// Pooler is implemented by backends with 2-D pooling kernels. Shapes: x and
// gx [N, C, H, W]; out, gout and idx [N, C, OH, OW] with
// OH = (H + 2·pad − KH)/stride + 1, or with ceil_mode one more, when the
// last window starts inside the input or its left padding (ember checks
// them, and that padding is at most half the window): a window is clipped
// to the input, and for count_include_pad to the padded input, so that an
// overhang past the right or bottom padding counts for nothing. gx, out
// and idx are contiguous; x and gout may have any strides.
type Pooler interface {
	// MaxPool2d writes each window's maximum into out and its position in
	// the input plane (h·W + w, an Int64) into idx. Padding does not take
	// part; ties go to the first in row-major order, NaN beats everything
	// and the last NaN wins (torch.nn.functional.max_pool2d's indices).
	// idx.S is nil when the indices are not wanted.
	MaxPool2d(out, idx, x View, p Pool2dParams)
	// MaxPool2dBackward writes into gx the sum of gout over the windows whose
	// maximum each input element is (zero elsewhere).
	MaxPool2dBackward(gx, gout, idx View)
	// AvgPool2d writes each window's mean into out: divided by the whole
	// window when countIncludePad, else by its part inside the input.
	AvgPool2d(out, x View, p Pool2dParams, countIncludePad bool)
	// AvgPool2dBackward writes into gx the gradient of AvgPool2d.
	AvgPool2dBackward(gx, gout View, p Pool2dParams, countIncludePad bool)
}

// BatchNormer is implemented by backends with per-channel kernels for batch
// normalisation over x [N, C, *] (the channel is dim 1). Per-channel
// operands are [C] views of x's dtype; all are contiguous.
type BatchNormer interface {
	// ChannelStats writes each channel's mean and biased variance.
	ChannelStats(mean, variance, x View)
	// ChannelAffine writes out = x·scale[c] + shift[c].
	ChannelAffine(out, x, scale, shift View)
	// ChannelGradSums writes sumG[c] = Σ g and sumGX[c] = Σ g·(x − mean[c])
	// over each channel.
	ChannelGradSums(sumG, sumGX, g, x, mean View)
	// ChannelAffine2 writes out = g·a[c] + x·b[c] + d[c] (g and x have
	// out's shape).
	ChannelAffine2(out, g, x, a, b, d View)
}

// HalfBatchNormer is implemented by backends whose BatchNormer kernels also
// take x, out and g of the two-byte float dt with the per-channel operands
// (mean, variance, scale, shift, sums, a, b, d) float32: they compute as
// on x and g widened to float32 and round out once to dt.
type HalfBatchNormer interface {
	BatchNormsHalf(dt DType) bool
}

// HalfConvolver is implemented by backends whose Convolver also takes x,
// w, bias, out and the gradients of the two-byte float dt, each element a
// float32 computation on the two-byte operands rounded once to dt.
type HalfConvolver interface {
	ConvsHalf(dt DType) bool
}

// HalfPooler is implemented by backends whose Pooler's MaxPool2d and
// MaxPool2dBackward take views of the two-byte float dt (x, out, gx and
// gout of dt; idx Int64) and give what pooling the float32 widening of x
// would, rounded once to dt: the maxima exactly, each gradient element
// summed in float32.
type HalfPooler interface {
	PoolsHalf(dt DType) bool
}
