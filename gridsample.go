package ember

import "fmt"

// Grid sampling (torch.nn.functional.grid_sample and affine_grid), for
// spatial transformer networks, optical-flow warping and deformable
// sampling. Both are composed of existing ops, so that every device and
// autograd (with respect to the input and to the grid) come for free:
// the grid's coordinates are unnormalized and padded (clipped or
// reflected) elementwise, the corner (or 4×4 bicubic) pixels are
// gathered from the flattened input at indices computed on the device,
// and weighted by their interpolation weights. The gradient of the
// padding follows PyTorch's CPU kernel (GridSamplerKernel.cpp): a
// coordinate clipped onto a border, or exactly on it, gets none.

// GridSampleOptions are torch.nn.functional.grid_sample's arguments; the
// zero value is PyTorch's defaults (bilinear, zeros, align_corners=False;
// PyTorch 1.13 warns when align_corners is not given, ember does not).
type GridSampleOptions struct {
	// Mode is "bilinear" (the default when empty), "nearest" or
	// "bicubic" (4-D input only).
	Mode string
	// PaddingMode is "zeros" (the default when empty), "border" or
	// "reflection": what grid locations outside the input read.
	PaddingMode string
	// AlignCorners: -1 and 1 are the centres of the corner pixels (true)
	// or their outer edges (false).
	AlignCorners bool
}

// GridSample samples input ([N, C, H, W] or [N, C, D, H, W]) at the
// locations of grid ([N, Hout, Wout, 2] or [N, Dout, Hout, Wout, 3], the
// last dim x, y(, z) in [-1, 1] across the input's W, H(, D)), as
// torch.nn.functional.grid_sample: the result is [N, C, Hout, Wout] (or
// [N, C, Dout, Hout, Wout]). input and grid have the same floating dtype
// (float32 or float64) and device. Gradients flow to the input and to the
// grid; with mode nearest the grid's gradient is zero, as PyTorch's.
//
// Misuse panics as PyTorch refuses it: a *ValueError for an unknown mode
// or padding mode, a *ShapeError for mismatched ranks, batch sizes or
// coordinate counts, empty spatial dims, or bicubic on 5-D input, a
// *DTypeError for other dtypes or differing ones.
func GridSample(input, grid *Tensor, o GridSampleOptions) *Tensor {
	const name = "grid_sample"
	input.nonNil(name)
	grid.nonNil(name)
	input.live(name)
	grid.live(name)
	mode, pad := o.Mode, o.PaddingMode
	if mode == "" {
		mode = "bilinear"
	}
	if pad == "" {
		pad = "zeros"
	}
	if mode != "bilinear" && mode != "nearest" && mode != "bicubic" {
		panic(&ValueError{Op: name, Msg: fmt.Sprintf("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '%s'", mode)})
	}
	if pad != "zeros" && pad != "border" && pad != "reflection" {
		panic(&ValueError{Op: name, Msg: fmt.Sprintf("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', but got: '%s'", pad)})
	}
	sameDevice(name, input, grid)
	is, gs := input.shape, grid.shape
	if input.Dim() == 0 || grid.Dim() == 0 || is[0] != gs[0] {
		shapeErr(name, fmt.Sprintf("grid_sampler(): expected grid and input to have same batch size, but got input with sizes %s and grid with sizes %s", pyList(is), pyList(gs)), is, gs)
	}
	if gs[len(gs)-1] != input.Dim()-2 {
		shapeErr(name, fmt.Sprintf("grid_sampler(): expected grid to have size %d in last dimension, but got grid with sizes %s", input.Dim()-2, pyList(gs)), is, gs)
	}
	for i := 2; i < input.Dim(); i++ {
		if is[i] <= 0 {
			shapeErr(name, fmt.Sprintf("grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes %s with dimension %d being empty", pyList(is), i), is, gs)
		}
	}
	want := 5
	if input.Dim() == 4 {
		want = 4
	}
	if input.Dim() != want || grid.Dim() != want {
		shapeErr(name, fmt.Sprintf("grid_sampler(): expected %dD input and grid with same number of dimensions, but got input with sizes %s and grid with sizes %s", want, pyList(is), pyList(gs)), is, gs)
	}
	if want == 5 && mode == "bicubic" {
		shapeErr(name, "grid_sampler(): bicubic interpolation only supports 4D input", is, gs)
	}
	if input.dtype != Float32 && input.dtype != Float64 {
		panic(&DTypeError{Op: name, DTypes: []DType{input.dtype}, Msg: fmt.Sprintf("grid_sampler_%dd_cpu not implemented for %s", want-2, torchTypeName(input.dtype))})
	}
	if grid.dtype != input.dtype {
		panic(&DTypeError{Op: name, DTypes: []DType{input.dtype, grid.dtype}, Msg: fmt.Sprintf("expected scalar type %s but found %s", torchTypeName(input.dtype), torchTypeName(grid.dtype))})
	}
	k := want - 2
	n, c := is[0], is[1]
	outShape := append(Shape{n, c}, gs[1:len(gs)-1]...)
	checkShape(name, outShape)
	gradName := fmt.Sprintf("GridSampler%dDBackward0", k)
	m := 1
	for _, s := range gs[1 : len(gs)-1] {
		m *= s
	}
	if input.dev.Type == MetaType || outShape.NumElements() == 0 {
		out := Zeros(outShape, On(input.dev), Dtype(input.dtype))
		return record(gradName, out, []*Tensor{input, grid}, nil, func(g *Tensor) []*Tensor {
			return []*Tensor{Zeros(is, On(g.dev), Dtype(g.dtype)), Zeros(gs, On(g.dev), Dtype(g.dtype))}
		})
	}
	g := grid.Reshape(n, m, k)
	total := 1
	for _, s := range is[2:] {
		total *= s
	}
	flat := input.Reshape(n, c, total)
	// taps of each spatial axis (grid coordinate j is input dim 1+k-j)
	axes := make([][]gridTap, k)
	stride := 1
	for j := 0; j < k; j++ {
		size := is[1+k-j]
		axes[j] = gridAxisTaps(g.Select(2, j), size, stride, mode, pad, o.AlignCorners, k == 3)
		stride *= size
	}
	var acc *Tensor
	pick := make([]int, k)
	for {
		var idx, w, mask *Tensor
		for j := 0; j < k; j++ {
			t := axes[j][pick[j]]
			idx = addOrSet(idx, t.idx)
			w = mulOrSet(w, t.w)
			if t.mask != nil {
				if mask == nil {
					mask = t.mask
				} else {
					mask = mask.LogicalAnd(t.mask)
				}
			}
		}
		ix := idx.Unsqueeze(1).Expand(n, c, m)
		v := gatherValid(flat, 2, ix)
		// out-of-bounds taps read zero, not the pixel at the index they
		// were clamped to (which may be Inf or NaN): PyTorch's 2-D kernel
		// gathers zero there and still multiplies by the weight (NaN
		// weights stay NaN), its 3-D kernel skips the tap altogether
		if mask != nil {
			v = WhereTensorScalar(mask.Unsqueeze(1), v, 0)
		}
		if w != nil {
			v = v.Mul(w.Unsqueeze(1))
		}
		if mask != nil && w != nil && k == 3 {
			v = WhereTensorScalar(mask.Unsqueeze(1), v, 0)
		}
		acc = addOrSet(acc, v)
		j := 0
		for ; j < k; j++ {
			if pick[j]++; pick[j] < len(axes[j]) {
				break
			}
			pick[j] = 0
		}
		if j == k {
			break
		}
	}
	out := acc.Reshape(outShape...)
	if mode == "nearest" {
		// the output does not depend on the grid, whose gradient is zero
		y := out
		out = record(gradName, y.Detach(), []*Tensor{y, grid}, nil, func(g *Tensor) []*Tensor {
			return []*Tensor{g, Zeros(gs, On(g.dev), Dtype(g.dtype))}
		})
	}
	return rename(out, gradName)
}

// gridTap is one interpolation tap along one axis: the flat index
// (tap coordinate × the axis's stride, Int64, 0 out of bounds), its
// weight (nil: 1) and where the coordinate is in bounds (nil: always).
type gridTap struct{ idx, w, mask *Tensor }

func addOrSet(a, b *Tensor) *Tensor {
	if a == nil {
		return b
	}
	return a.Add(b)
}

func mulOrSet(a, b *Tensor) *Tensor {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return a.Mul(b)
}

// gridUnnormalize maps grid coordinates in [-1, 1] to pixel coordinates
// of an axis of the given size, as PyTorch's CPU kernel.
func gridUnnormalize(x *Tensor, size int, align bool) *Tensor {
	if align {
		return x.AddScalar(1).MulScalar(float64(size-1) / 2)
	}
	return x.AddScalar(1).MulScalar(float64(size) / 2).SubScalar(0.5)
}

// gridClip clips x to [0, size-1]; its gradient is 1 strictly inside
// and 0 on or beyond the borders (and NaN clips to 0), as PyTorch's
// clip_coordinates_get_grad. With nanHigh NaN clips to size-1, as
// PyTorch's 3-D kernel's std::min(size-1, std::max(x, 0)).
func gridClip(x *Tensor, size int, nanHigh bool) *Tensor {
	hi := float64(size - 1)
	if nanHigh {
		y := WhereTensorScalar(x.LtScalar(hi), x, hi)
		return WhereScalar(y.GtScalar(0).LogicalNot(), 0, y)
	}
	return WhereScalar(x.GtScalar(0).LogicalNot(), 0, WhereTensorScalar(x.LtScalar(hi), x, hi))
}

// gridReflect reflects x into [low, low+span] (low 0 and span size-1
// with align, else -0.5 and size) as PyTorch's reflect_coordinates.
func gridReflect(x *Tensor, size int, align bool) *Tensor {
	low, twice := -0.5, 2*float64(size)
	if align {
		if size <= 1 {
			return x.MulScalar(0).Detach()
		}
		low, twice = 0, 2*float64(size-1)
	}
	a := x.SubScalar(low).Abs()
	flips := a.Detach().DivScalar(twice).Trunc()
	extra := a.Sub(flips.MulScalar(twice))
	return extra.Minimum(extra.RSubScalar(twice)).AddScalar(low)
}

// gridPad applies the padding mode to the (integer or not) coordinate x
// (threeD: as PyTorch's 3-D kernel, see gridClip).
func gridPad(x *Tensor, size int, pad string, align, threeD bool) *Tensor {
	switch pad {
	case "border":
		return gridClip(x, size, threeD)
	case "reflection":
		return gridClip(gridReflect(x, size, align), size, threeD)
	}
	return x
}

// gridAxisTaps returns the taps of one axis for coordinates x ([N, M]).
// away is set for 3-D input: nearest rounds ties away from zero and
// NaN pads as PyTorch's 3-D kernel pads it.
func gridAxisTaps(x *Tensor, size int, stride int, mode, pad string, align, away bool) []gridTap {
	u := gridUnnormalize(x, size, align)
	tap := func(at *Tensor, w *Tensor) gridTap {
		at = at.Detach()
		t := gridTap{w: w}
		if pad == "zeros" {
			t.mask = at.GtScalar(-1).LogicalAnd(at.LtScalar(float64(size)))
		} else if mode == "bilinear" {
			t.mask = at.LtScalar(float64(size)) // the east / south neighbour of the last pixel
		}
		if t.mask != nil {
			at = WhereTensorScalar(t.mask, at, 0) // NaN too
		}
		t.idx = at.Cast(Int64).MulScalar(float64(stride))
		return t
	}
	switch mode {
	case "nearest":
		p := gridPad(u, size, pad, align, away).Detach()
		r := p.Round() // half to even (nearbyint), PyTorch's 2-D kernel
		if away {      // std::round, its 3-D kernel's
			tr := p.Trunc()
			r = Where(p.Sub(tr).Abs().EqScalar(0.5), tr.Add(p.Sign()), r)
		}
		return []gridTap{tap(r, nil)}
	case "bilinear":
		p := gridPad(u, size, pad, align, away)
		f := p.Detach().Floor()
		t := p.Sub(f)
		return []gridTap{tap(f, t.RSubScalar(1)), tap(f.AddScalar(1), t)}
	}
	// bicubic: the taps floor-1 .. floor+2 of the unpadded coordinate,
	// each padded on its own (PyTorch's get_value_bounded)
	f := u.Detach().Floor()
	t := u.Sub(f)
	const a = -0.75
	cc1 := func(x *Tensor) *Tensor { // ((A+2)x - (A+3))x² + 1
		return x.MulScalar(a + 2).SubScalar(a + 3).Mul(x).Mul(x).AddScalar(1)
	}
	cc2 := func(x *Tensor) *Tensor { // ((Ax - 5A)x + 8A)x - 4A
		return x.MulScalar(a).SubScalar(5 * a).Mul(x).AddScalar(8 * a).Mul(x).SubScalar(4 * a)
	}
	ws := []*Tensor{cc2(t.AddScalar(1)), cc1(t), cc1(t.RSubScalar(1)), cc2(t.RSubScalar(2))}
	taps := make([]gridTap, 4)
	for i := range taps {
		taps[i] = tap(gridPad(f.AddScalar(float64(i-1)), size, pad, align, away), ws[i])
	}
	return taps
}

// gatherValid is Gather without the range check, for indices in range by
// construction.
func gatherValid(t *Tensor, d int, index *Tensor) *Tensor {
	out := gatherRaw(t, d, index, index.view(), index.shape)
	ix := index.Detach()
	return record("GatherBackward0", out, []*Tensor{t}, []*Tensor{ix}, func(g *Tensor) []*Tensor {
		z := Zeros(t.shape, On(g.dev), Dtype(g.dtype))
		scatterRaw(z, d, ix.view(), g.view(), true)
		return []*Tensor{z}
	})
}

// AffineGrid returns the sampling grid of the affine transforms theta, as
// torch.nn.functional.affine_grid: for size [N, C, H, W] theta is
// [N, 2, 3] and the grid [N, H, W, 2]; for [N, C, D, H, W] theta is
// [N, 3, 4] and the grid [N, D, H, W, 3]. The grid is differentiable with
// respect to theta (floating point). Misuse panics as PyTorch refuses it:
// a *ValueError for a theta of the wrong shape or dtype or a size
// not positive, a *ShapeError for another rank of size or a batch size
// that differs.
func AffineGrid(theta *Tensor, size []int, alignCorners bool) *Tensor {
	const name = "affine_grid"
	theta.nonNil(name)
	theta.live(name)
	if !theta.dtype.IsFloat() {
		panic(&ValueError{Op: name, Msg: fmt.Sprintf("Expected theta to have floating point type, but got torch.%s", theta.dtype)})
	}
	k := len(size) - 2
	if k != 2 && k != 3 {
		shapeErr(name, fmt.Sprintf("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. Got size %s.", pyList(size)), theta.shape)
	}
	if theta.Dim() != 3 || theta.shape[1] != k || theta.shape[2] != k+1 {
		panic(&ValueError{Op: name, Msg: fmt.Sprintf("Expected a batch of %dD affine matrices of shape Nx%dx%d for size %s. Got torch.Size(%s).", k, k, k+1, pyList(size), pyList(theta.shape))})
	}
	spatialMin := size[2]
	for _, s := range size[2:] {
		spatialMin = min(spatialMin, s)
	}
	if !(alignCorners && spatialMin == 1) {
		for _, s := range size {
			if s <= 0 {
				panic(&ValueError{Op: name, Msg: fmt.Sprintf("Expected non-zero, positive output size. Got %s", pyList(size))})
			}
		}
	}
	if size[0] != theta.shape[0] {
		shapeErr(name, fmt.Sprintf("Expected size for first two dimensions of batch2 tensor to be: [%d, %d] but got: [%d, %d].", size[0], k+1, theta.shape[0], k+1), theta.shape)
	}
	sp := size[2:]
	checkShape(name, append(Shape{size[0]}, append(append([]int{}, sp...), k)...))
	// base grid [prod(sp), k+1]: x (along the last dim), y(, z), 1
	m := 1
	for _, s := range sp {
		m *= s
	}
	cols := make([]*Tensor, 0, k+1)
	for j := 0; j < k; j++ {
		d := k - 1 - j // spatial dim of coordinate j
		steps := sp[d]
		var l *Tensor
		if steps <= 1 {
			l = Zeros(Shape{max(steps, 0)}, On(theta.dev), Dtype(theta.dtype))
		} else {
			l = Linspace(-1, 1, steps, On(theta.dev), Dtype(theta.dtype))
			if !alignCorners {
				l = l.MulScalar(float64(steps-1) / float64(steps))
			}
		}
		view := make([]int, k)
		for i := range view {
			view[i] = 1
		}
		view[d] = max(steps, 0)
		cols = append(cols, l.Reshape(view...).Expand(sp...).Reshape(m))
	}
	cols = append(cols, Full(Shape{m}, 1, On(theta.dev), Dtype(theta.dtype)))
	base := Stack(cols, 1)
	grid := base.MatMul(theta.Transpose(1, 2)) // [N, m, k]
	return rename(grid.Reshape(append(append([]int{size[0]}, sp...), k)...), "AffineGridGeneratorBackward0")
}
