package ember

import (
	"fmt"
	"strings"
)

// PadMode is torch.nn.functional.pad with a mode: "constant" (zeros; Pad
// takes another value), "reflect", "replicate" or "circular". pad lists
// (before, after) pairs from the last dim backwards, as Pad's; a negative
// entry crops.
//
// As PyTorch 1.13, the other modes pad the last 1, 2 or 3 dims of an input
// with one or two more dims (an optional batch dim, then channels);
// "circular" needs the batch dim. "reflect" mirrors about the edge element
// (each pad less than its dim's size), "replicate" repeats the edge
// element, "circular" wraps around (each pad at most the dim's size).
// "reflect" and "replicate" take floating dtypes only. The values are
// gathered with a computed index (index_select), so every device and the
// gradient (index-added back) come with it; the node is named as PyTorch's
// (ReflectionPad2DBackward0, ...; CopySlices for circular).
func PadMode(t *Tensor, pad []int, mode string) *Tensor {
	const name = "pad"
	t.live(name)
	if len(pad)%2 != 0 {
		panic(&ValueError{Op: name, Msg: "Padding length must be divisible by 2"})
	}
	if len(pad)/2 > t.Dim() {
		shapeErr(name, "Padding length too large", t.shape)
	}
	switch mode {
	case "constant":
		return Pad(t, pad, 0)
	case "reflect", "replicate", "circular":
	default:
		panic(&ValueError{Op: name, Msg: fmt.Sprintf("Unrecognised padding mode %s", mode)})
	}
	k, r := len(pad)/2, t.Dim()
	if k < 1 || k > 3 || (r != k+1 && r != k+2) {
		panic(&ValueError{Op: name, Msg: "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now"})
	}
	for _, p := range pad {
		if p > 1<<48 || p < -(1<<48) {
			shapeErr(name, fmt.Sprintf("padding %d is out of range", p), t.shape)
		}
	}
	out := t
	if mode == "circular" {
		if r != k+2 {
			shapeErr(name, fmt.Sprintf("Invalid padding size, expected %d but got %d", 2*(r-2), len(pad)), t.shape)
		}
		for i := 0; i < k; i++ {
			d := r - 1 - i
			n, before, after := t.shape[d], pad[2*i], pad[2*i+1]
			if before > n || after > n {
				shapeErr(name, "Padding value causes wrapping around more than once.", t.shape)
			}
			if n+before+after < 0 {
				shapeErr(name, "Negative padding value is resulting in an empty dimension", t.shape)
			}
			// crop first, then wrap around what is left (PyTorch copies the
			// wrapped parts from the cropped result; a pad wider than that
			// would read memory it never wrote, so it is refused here)
			lo, hi := max(-before, 0), n-max(-after, 0)
			m := hi - lo
			if max(before, 0) > m || max(after, 0) > m {
				shapeErr(name, "Padding value causes wrapping around more than once.", t.shape)
			}
			size := n + before + after
			checkShape(name, withSize(out.shape, d, size))
			// lo + (j − before⁺) mod m, made on the device (a dim's size
			// has no bound on meta: no host index of it)
			b := max(before, 0)
			ix := Arange(float64(-b), float64(size-b), 1, On(t.dev), Dtype(Int64))
			ix = ix.Remainder(Full(Shape{}, float64(max(m, 1)), On(t.dev), Dtype(Int64))).AddScalar(float64(lo))
			out = indexSelect("CopySlices", out, d, ix)
		}
		return rename(out, "CopySlices")
	}

	fn := "reflection_pad"
	grad := "ReflectionPad"
	if mode == "replicate" {
		fn, grad = "replication_pad", "ReplicationPad"
	}
	if !t.dtype.IsFloat() {
		panic(&DTypeError{Op: name, DTypes: []DType{t.dtype}, Msg: fmt.Sprintf("%q not implemented for '%s'", fmt.Sprintf("%s%dd", fn, k), torchTypeName(t.dtype))})
	}
	// PyTorch takes an empty batch dim; the unbatched 1-d and 2-d
	// reflection pads take empty channels too.
	zeroOK := 0
	if r == k+2 || (mode == "reflect" && k < 3) {
		zeroOK = 1
	}
	for i := zeroOK; i < r; i++ {
		if t.shape[i] == 0 {
			shapeErr(name, fmt.Sprintf("Expected %dD or %dD (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: %v", k+1, k+2, t.shape), t.shape)
		}
	}
	sizes := make([]int, k) // output sizes, outermost padded dim first
	var ins, outs []string
	anyPositive := false
	for i := 0; i < k; i++ {
		d := r - 1 - i
		n, before, after := t.shape[d], pad[2*i], pad[2*i+1]
		if mode == "reflect" && (before >= n || after >= n) {
			var of any = t.shape
			if k == 2 {
				of = r // PyTorch's 2-d message names the rank
			}
			shapeErr(name, fmt.Sprintf("Argument #%d: Padding size should be less than the corresponding input dimension, but got: padding (%d, %d) at dimension %d of input %v", 4+2*i, before, after, d, of), t.shape)
		}
		sizes[k-1-i] = n + before + after
		anyPositive = anyPositive || sizes[k-1-i] >= 1
	}
	if !anyPositive {
		for i, s := range sizes {
			l := "DHW"[3-k+i : 3-k+i+1]
			ins = append(ins, fmt.Sprintf("%s: %d", l, t.shape[r-k+i]))
			outs = append(outs, fmt.Sprintf("%s: %d", l, s))
		}
		shapeErr(name, fmt.Sprintf("input (%s) is too small. Calculated output %s", strings.Join(ins, ", "), strings.Join(outs, " ")), t.shape)
	}
	for _, s := range sizes {
		if s < 0 {
			shapeErr(name, fmt.Sprintf("Trying to create tensor with negative dimension %d", s), t.shape)
		}
	}
	checkShape(name, padShape(t.shape, sizes))
	grad = fmt.Sprintf("%s%dDBackward0", grad, k)
	for i := 0; i < k; i++ {
		d := r - 1 - i
		n, before := t.shape[d], pad[2*i]
		if mode == "replicate" {
			// the pads have no bound here: the index is made on the device
			// (a typed out-of-memory error, not the host's)
			ix := Arange(float64(-before), float64(sizes[k-1-i]-before), 1, On(t.dev), Dtype(Int64)).Clamp(0, float64(n-1))
			out = indexSelect(grad, out, d, ix)
			continue
		}
		// reflect (|pad| < n): s = |j − before| mirrored about n − 1,
		// (n − 1) − |(n − 1) − s|, made on the device as replicate's
		ix := Arange(float64(-before), float64(sizes[k-1-i]-before), 1, On(t.dev), Dtype(Int64)).Abs()
		ix = ix.RSubScalar(float64(n - 1)).Abs().RSubScalar(float64(n - 1))
		out = indexSelect(grad, out, d, ix)
	}
	return rename(out, grad)
}

// padShape is s with its last len(sizes) dims set to sizes.
func padShape(s Shape, sizes []int) Shape {
	o := s.clone()
	copy(o[len(o)-len(sizes):], sizes)
	return o
}
