package ember

import (
	"fmt"
	"math"
)

// Pixel shuffle and unfold/fold (im2col/col2im), composed of existing
// ops: reshapes and a permute; a constant pad and one IndexSelect (unfold)
// or index-add (fold, unfold's adjoint) along the flattened plane, so
// that autograd and every device come for free.

// PixelShuffle rearranges x [*, C·r², H, W] into [*, C, H·r, W·r] as
// torch.nn.functional.pixel_shuffle(x, r). It records
// PixelShuffleBackward0.
func PixelShuffle(x *Tensor, r int) *Tensor {
	const name = "pixel_shuffle"
	x.nonNil(name)
	x.live(name)
	if x.Dim() < 3 {
		shapeErr(name, fmt.Sprintf("pixel_shuffle expects input to have at least 3 dimensions, but got input with %d dimension(s)", x.Dim()), x.shape)
	}
	if r <= 0 {
		panic(&ValueError{Op: name, Msg: fmt.Sprintf("pixel_shuffle expects a positive upscale_factor, but got %d", r)})
	}
	n := x.Dim()
	c, h, w := x.shape[n-3], x.shape[n-2], x.shape[n-1]
	if c != 0 && (r > c || c%(r*r) != 0) { // r > c: r² could overflow; 0 divides by any
		shapeErr(name, fmt.Sprintf("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but input.size(-3)=%d is not divisible by %d", c, mulSat(r, r)), x.shape)
	}
	oc := 0
	if c != 0 {
		oc = c / (r * r)
	}
	oshape := append(x.shape[:n-3:n-3], oc, mulSat(h, r), mulSat(w, r))
	checkShape(name, oshape)
	if c == 0 {
		return rename(x.Reshape(oshape...), "PixelShuffleBackward0")
	}
	batch := x.shape[: n-3 : n-3]
	y := x.Reshape(append(batch, oc, r, r, h, w)...)
	perm := make([]int, 0, n+3)
	for i := range batch {
		perm = append(perm, i)
	}
	b := len(batch)
	perm = append(perm, b, b+3, b+1, b+4, b+2) // C, H, r, W, r
	y = y.Permute(perm...).Contiguous().Reshape(append(batch, oc, h*r, w*r)...)
	return rename(y, "PixelShuffleBackward0")
}

// PixelUnshuffle rearranges x [*, C, H·r, W·r] into [*, C·r², H, W], the
// inverse of PixelShuffle, as torch.nn.functional.pixel_unshuffle(x, r).
// It records PixelUnshuffleBackward0.
func PixelUnshuffle(x *Tensor, r int) *Tensor {
	const name = "pixel_unshuffle"
	x.nonNil(name)
	x.live(name)
	if x.Dim() < 3 {
		shapeErr(name, fmt.Sprintf("pixel_unshuffle expects input to have at least 3 dimensions, but got input with %d dimension(s)", x.Dim()), x.shape)
	}
	if r <= 0 {
		panic(&ValueError{Op: name, Msg: fmt.Sprintf("pixel_unshuffle expects a positive downscale_factor, but got %d", r)})
	}
	n := x.Dim()
	c, h, w := x.shape[n-3], x.shape[n-2], x.shape[n-1]
	if h%r != 0 {
		shapeErr(name, fmt.Sprintf("pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=%d is not divisible by %d", h, r), x.shape)
	}
	if w%r != 0 {
		shapeErr(name, fmt.Sprintf("pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=%d is not divisible by %d", w, r), x.shape)
	}
	oh, ow := h/r, w/r
	batch := x.shape[: n-3 : n-3]
	checkShape(name, append(batch, mulSat(c, mulSat(r, r)), oh, ow))
	y := x.Reshape(append(batch, c, oh, r, ow, r)...)
	perm := make([]int, 0, n+3)
	for i := range batch {
		perm = append(perm, i)
	}
	b := len(batch)
	perm = append(perm, b, b+2, b+4, b+1, b+3) // C, r, r, H, W
	y = y.Permute(perm...).Contiguous().Reshape(append(batch, c*r*r, oh, ow)...)
	return rename(y, "PixelUnshuffleBackward0")
}

// mulSat is a·b for non-negative sizes, saturating instead of wrapping.
func mulSat(a, b int) int {
	if a != 0 && b > math.MaxInt/a {
		return math.MaxInt
	}
	return a * b
}

// foldArgs checks the kernel, dilation, padding and stride of Unfold and
// Fold as PyTorch's im2col/col2im shape checks do.
func foldArgs(op string, kernel, dilation, padding, stride [2]int) {
	switch {
	case kernel[0] <= 0 || kernel[1] <= 0:
		panic(&ValueError{Op: op, Msg: fmt.Sprintf("kernel size should be greater than zero, but got kernel_height: %d kernel_width: %d", kernel[0], kernel[1])})
	case stride[0] <= 0 || stride[1] <= 0:
		panic(&ValueError{Op: op, Msg: fmt.Sprintf("stride should be greater than zero, but got stride_height: %d stride_width: %d", stride[0], stride[1])})
	case dilation[0] <= 0 || dilation[1] <= 0:
		panic(&ValueError{Op: op, Msg: fmt.Sprintf("dilation should be greater than zero, but got dilation_height: %d dilation_width: %d", dilation[0], dilation[1])})
	case padding[0] < 0 || padding[1] < 0:
		panic(&ValueError{Op: op, Msg: fmt.Sprintf("padding should be non-negative, but got pad_height: %d pad_width: %d", padding[0], padding[1])})
	}
	for i := 0; i < 2; i++ {
		if kernel[i] > 1<<30 || dilation[i] > 1<<30 || padding[i] > 1<<30 || stride[i] > 1<<30 {
			panic(&ValueError{Op: op, Msg: fmt.Sprintf("kernel_size=%s, dilation=%s, padding=%s, stride=%s: too large", pair(kernel), pair(dilation), pair(padding), pair(stride))})
		}
	}
}

func pair(p [2]int) string { return fmt.Sprintf("(%d, %d)", p[0], p[1]) }

// blocks is the number of sliding blocks along one dim (C's division, as
// PyTorch's: it may be 0 or negative).
func blocks(in, k, d, p, s int) int { return (in+2*p-(d*(k-1)+1))/s + 1 }

// planeIndex is the flat position in the padded plane [hp, wp] of each
// (kernel offset, block) pair, kernel offsets outer: im2col's gather.
func planeIndex(oh, ow, wp int, kernel, dilation, stride [2]int) []int64 {
	idx := make([]int64, 0, kernel[0]*kernel[1]*oh*ow)
	for ki := 0; ki < kernel[0]; ki++ {
		for kj := 0; kj < kernel[1]; kj++ {
			for i := 0; i < oh; i++ {
				for j := 0; j < ow; j++ {
					idx = append(idx, int64((i*stride[0]+ki*dilation[0])*wp+j*stride[1]+kj*dilation[1]))
				}
			}
		}
	}
	return idx
}

// Unfold extracts the sliding kernel-sized blocks of x [N, C, H, W] (or
// unbatched [C, H, W]) as torch.nn.functional.unfold (im2col): the result
// is [N, C·kh·kw, L], L the number of blocks, each column one block,
// channel outer, kernel position inner. x is zero-padded by padding on
// both sides. It records Im2ColBackward0.
func Unfold(x *Tensor, kernel, dilation, padding, stride [2]int) *Tensor {
	const name = "unfold"
	x.nonNil(name)
	x.live(name)
	foldArgs(name, kernel, dilation, padding, stride)
	if x.Dim() != 3 && x.Dim() != 4 || x.shape[x.Dim()-1] == 0 || x.shape[x.Dim()-2] == 0 || x.shape[x.Dim()-3] == 0 {
		shapeErr(name, fmt.Sprintf("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: %s", pyList(x.shape)), x.shape)
	}
	if !x.dtype.IsFloat() {
		panic(&DTypeError{Op: name, DTypes: []DType{x.dtype}, Msg: fmt.Sprintf("\"im2col_out_cpu\" not implemented for '%s'", torchTypeName(x.dtype))})
	}
	x4, undo := batched4d(name, x)
	n, c, h, w := x4.shape[0], x4.shape[1], x4.shape[2], x4.shape[3]
	oh := blocks(h, kernel[0], dilation[0], padding[0], stride[0])
	ow := blocks(w, kernel[1], dilation[1], padding[1], stride[1])
	if oh < 1 || ow < 1 {
		shapeErr(name, fmt.Sprintf("Given input with spatial size (%d, %d), kernel_size=%s, dilation=%s, padding=%s, calculated shape of the array of sliding blocks as (%d, %d), but its components must be at least one.", h, w, pair(kernel), pair(dilation), pair(padding), oh, ow), x.shape)
	}
	k := kernel[0] * kernel[1]
	checkShape(name, Shape{n, mulSat(c, k), mulSat(oh, ow)})
	if n := checkShape(name, Shape{mulSat(k, oh), ow}); n > maxResampleIndex {
		shapeErr(name, fmt.Sprintf("%d blocks of %d elements: the index would have more than %d elements", oh*ow, k, maxResampleIndex), x.shape)
	}
	xp := x4
	if padding != [2]int{} {
		xp = Pad(x4, []int{padding[1], padding[1], padding[0], padding[0]}, 0)
	}
	hp, wp := h+2*padding[0], w+2*padding[1]
	idx := FromSlice(planeIndex(oh, ow, wp, kernel, dilation, stride), Shape{k * oh * ow}, On(x.dev))
	y := indexSelect("IndexSelectBackward0", xp.Reshape(n, c, hp*wp), 2, idx)
	y = y.Reshape(n, c*k, oh*ow)
	return rename(undo(y), "Im2ColBackward0")
}

// Fold sums the columns of x [N, C·kh·kw, L] (or unbatched [C·kh·kw, L])
// into an output [N, C, outH, outW] as torch.nn.functional.fold
// (col2im), the adjoint of Unfold: each column's values are added at its
// block's positions (overlaps accumulate), positions in the padding
// dropped. It records Col2ImBackward0.
func Fold(x *Tensor, outputSize, kernel, dilation, padding, stride [2]int) *Tensor {
	const name = "fold"
	x.nonNil(name)
	x.live(name)
	foldArgs(name, kernel, dilation, padding, stride)
	if x.Dim() != 2 && x.Dim() != 3 || x.shape[x.Dim()-1] == 0 || x.shape[x.Dim()-2] == 0 {
		shapeErr(name, fmt.Sprintf("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for input, but got: %s", pyList(x.shape)), x.shape)
	}
	if outputSize[0] > 1<<30 || outputSize[1] > 1<<30 {
		panic(&ValueError{Op: name, Msg: fmt.Sprintf("output_size=%s: too large", pair(outputSize))})
	}
	x3 := x
	if x.Dim() == 2 {
		x3 = x.Unsqueeze(0)
	}
	n, ck, l := x3.shape[0], x3.shape[1], x3.shape[2]
	k := kernel[0] * kernel[1]
	if ck%k != 0 {
		shapeErr(name, fmt.Sprintf("Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)=%d and kernel_size=%s.", ck, pair(kernel)), x.shape)
	}
	oh := blocks(outputSize[0], kernel[0], dilation[0], padding[0], stride[0])
	ow := blocks(outputSize[1], kernel[1], dilation[1], padding[1], stride[1])
	desc := fmt.Sprintf("Given output_size=%s, kernel_size=%s, dilation=%s, padding=%s, stride=%s", pair(outputSize), pair(kernel), pair(dilation), pair(padding), pair(stride))
	if oh*ow != l {
		shapeErr(name, fmt.Sprintf("%s, expected size of input's dimension 2 to match the calculated number of sliding blocks %d * %d = %d, but got input.size(2)=%d.", desc, oh, ow, oh*ow, l), x.shape)
	}
	if oh < 1 || ow < 1 {
		shapeErr(name, fmt.Sprintf("%s, calculated shape of the array of sliding blocks as (%d, %d), which is too small (non-positive)", desc, oh, ow), x.shape)
	}
	if !x.dtype.IsFloat() {
		panic(&DTypeError{Op: name, DTypes: []DType{x.dtype}, Msg: fmt.Sprintf("\"col2im_out_cpu\" not implemented for '%s'", torchTypeName(x.dtype))})
	}
	c := ck / k
	hp, wp := outputSize[0]+2*padding[0], outputSize[1]+2*padding[1]
	checkShape(name, Shape{n, c, hp, wp})
	if k*l > maxResampleIndex {
		shapeErr(name, fmt.Sprintf("%d blocks of %d elements: the index would have more than %d elements", l, k, maxResampleIndex), x.shape)
	}
	ix := FromSlice(planeIndex(oh, ow, wp, kernel, dilation, stride), Shape{k * l}, On(x.dev))
	src := x3.Reshape(n, c, k*l)
	// index-add src into a zero plane along dim 2 (IndexAdd without its
	// range check: the positions are in range by construction)
	out := Zeros(Shape{n, c, hp * wp}, Dtype(x.dtype), On(x.dev))
	scatterRaw(out, 2, lineIndex(ix, 2, src.shape), src.Contiguous().view(), true)
	out = record("IndexAddBackward0", out, []*Tensor{src}, []*Tensor{ix}, func(g *Tensor) []*Tensor {
		return []*Tensor{gatherRaw(g, 2, ix, lineIndex(ix, 2, src.shape), src.shape)}
	})
	y := out.Reshape(n, c, hp, wp)
	if padding != [2]int{} {
		y = y.Narrow(2, padding[0], outputSize[0]).Narrow(3, padding[1], outputSize[1]).Contiguous()
	}
	if x.Dim() == 2 {
		y = y.Squeeze(0)
	}
	return rename(y, "Col2ImBackward0")
}
