package ember

import (
	"fmt"
	"math"
	"strings"

	"github.com/emberml/ember/backend"
)

// Interpolation (torch.nn.functional.interpolate). Every mode is composed
// of existing ops, so that autograd and every device come for free:
// nearest modes are an IndexSelect along each spatial dim; the linear
// modes (linear, bilinear, trilinear, bicubic) are separable, one dim at a
// time from the last, each output a weighted sum of 2 (or 4) IndexSelects
// of its input, with PyTorch's source indices and weights (UpSample.h)
// computed on the host in PyTorch's precision (float32 for float32 and the
// two-byte floats, float64 for float64); area is adaptive average pooling.
// Where the backend has a Resampler (the CPU), each linear step and its
// gradient run fused in one pass, with the same values bit for bit.

// InterpolateOptions are torch.nn.functional.interpolate's arguments.
// Exactly one of Size and ScaleFactor is set: one value for every spatial
// dim, or a single value that applies to all of them (as PyTorch's int
// or float).
type InterpolateOptions struct {
	Size        []int
	ScaleFactor []float64
	// Mode is "nearest" (the default when empty), "nearest-exact",
	// "linear" (3-D input), "bilinear" (4-D), "bicubic" (4-D),
	// "trilinear" (5-D) or "area".
	Mode string
	// AlignCorners is align_corners=True of the linear modes; PyTorch's
	// None and False are both false here. It may not be set with the
	// nearest modes and area.
	AlignCorners bool
	// RecomputeScaleFactor is recompute_scale_factor=True: the output
	// size floor(in·scale) is computed first and the scale forgotten, so
	// that the source indices come from the sizes alone. Not with Size.
	RecomputeScaleFactor bool
}

// maxResampleIndex bounds the host-built index lists of Interpolate,
// Unfold and Fold (2 GiB of int64): one past it would be a fatal
// out-of-memory on the host rather than an error.
const maxResampleIndex = 1 << 28

const interpModes = "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact"

// Interpolate resamples the spatial dims of x ([N, C, L], [N, C, H, W] or
// [N, C, D, H, W]) as torch.nn.functional.interpolate: to o.Size, or to
// floor(size·scale) with o.ScaleFactor (the scale, unless recomputed,
// also places the source pixels, as PyTorch's). x must be floating point;
// the two-byte floats compute in float32 and round once. Gradients flow
// through the IndexSelects and products it is made of (area: adaptive
// average pooling's).
//
// Misuse panics as PyTorch refuses it: a *ValueError for a mode or an
// argument combination it does not take, a *ShapeError for an input of
// the wrong rank for the mode, empty channels or spatial dims, or an
// output size below 1.
func Interpolate(x *Tensor, o InterpolateOptions) *Tensor { return interpolate(x, o, true) }

// interpolate is Interpolate; fused lets the linear modes run each step on
// a backend's Resampler (the same values, in one pass).
func interpolate(x *Tensor, o InterpolateOptions, fused bool) *Tensor {
	const name = "interpolate"
	x.nonNil(name)
	x.live(name)
	mode := o.Mode
	if mode == "" {
		mode = "nearest"
	}
	nearestLike := mode == "nearest" || mode == "nearest-exact" || mode == "area"
	if nearestLike && o.AlignCorners {
		panic(&ValueError{Op: name, Msg: "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear"})
	}
	dim := x.Dim() - 2
	switch {
	case o.Size != nil && o.ScaleFactor != nil:
		panic(&ValueError{Op: name, Msg: "only one of size or scale_factor should be defined"})
	case o.Size == nil && o.ScaleFactor == nil:
		panic(&ValueError{Op: name, Msg: "either size or scale_factor should be defined"})
	case len(o.Size) > 1 && len(o.Size) != dim:
		panic(&ValueError{Op: name, Msg: fmt.Sprintf("Input and output must have the same number of spatial dimensions, but got input with spatial dimensions of %s and output size of %s. Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.", pyList(spatial(x)), pyList(o.Size))})
	case len(o.ScaleFactor) > 1 && len(o.ScaleFactor) != dim:
		panic(&ValueError{Op: name, Msg: fmt.Sprintf("Input and scale_factor must have the same number of spatial dimensions, but got input with spatial dimensions of %s and scale_factor of shape %s. Please provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.", pyList(spatial(x)), pyFloats(o.ScaleFactor))})
	case o.RecomputeScaleFactor && o.Size != nil:
		panic(&ValueError{Op: name, Msg: "recompute_scale_factor is not meaningful with an explicit size."})
	case o.Size != nil && len(o.Size) == 0, o.ScaleFactor != nil && len(o.ScaleFactor) == 0:
		panic(&ValueError{Op: name, Msg: "either size or scale_factor should be defined"})
	}
	need := map[string]int{"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
	r, linear := need[mode]
	unsupported := fmt.Sprintf("Input Error: Only 3D, 4D and 5D input Tensors supported (got %dD) for the modes: %s (got %s)", x.Dim(), interpModes, mode)
	switch {
	case !linear && !nearestLike:
		panic(&ValueError{Op: name, Msg: unsupported})
	case x.Dim() < 3 || x.Dim() > 5 || mode == "bicubic" && x.Dim() != 4:
		shapeErr(name, unsupported, x.shape)
	case linear && x.Dim() != r:
		shapeErr(name, fmt.Sprintf("Got %dD input, but %s mode needs %dD input", x.Dim(), mode, r), x.shape)
	}
	// output sizes and the scales the kernels get (0: none)
	in := spatial(x)
	out := make([]int, dim)
	scales := make([]float64, dim)
	bad := false
	for i := range out {
		if o.Size != nil {
			out[i] = o.Size[min(i, len(o.Size)-1)]
			continue
		}
		s := o.ScaleFactor[min(i, len(o.ScaleFactor)-1)]
		f := float64(in[i]) * s
		if math.IsNaN(f) || math.Abs(f) > 1<<52 {
			panic(&ValueError{Op: name, Msg: fmt.Sprintf("scale_factor %v gives an output size %v that cannot be represented", s, f)})
		}
		if o.RecomputeScaleFactor || mode == "area" {
			out[i] = int(math.Floor(f))
		} else {
			out[i], scales[i] = int(f), s // C++'s truncation
		}
	}
	for i := range out {
		bad = bad || in[i] <= 0 || out[i] <= 0
	}
	if bad {
		names := []string{"D", "H", "W"}[3-dim:]
		var a, b []string
		for i, n := range names {
			a = append(a, fmt.Sprintf("%s: %d", n, in[i]))
			b = append(b, fmt.Sprintf("%s: %d", n, out[i]))
		}
		shapeErr(name, fmt.Sprintf("Input and output sizes should be greater than 0, but got input (%s) output (%s)", strings.Join(a, ", "), strings.Join(b, ", ")), x.shape)
	}
	if x.shape[1] == 0 {
		shapeErr(name, fmt.Sprintf("Non-empty %dD data tensor expected but got a tensor with sizes %s", x.Dim(), pyList(x.shape)), x.shape)
	}
	if !x.dtype.IsFloat() {
		kind := map[string]string{"bicubic": "cubic", "area": "adaptive_avg_pool", "nearest-exact": "nearest"}[mode]
		if kind == "" {
			kind = strings.TrimPrefix(strings.TrimPrefix(mode, "tri"), "bi")
		}
		panic(&DTypeError{Op: name, DTypes: []DType{x.dtype}, Msg: fmt.Sprintf("\"compute_indices_weights_%s\" not implemented for '%s'", kind, torchTypeName(x.dtype))})
	}
	checkShape(name, append(x.shape[:2:2], out...))
	for i := range out {
		if out[i] > maxResampleIndex {
			shapeErr(name, fmt.Sprintf("an output size of %d: its source indices would have more than %d elements", out[i], maxResampleIndex), x.shape)
		}
	}
	switch mode {
	case "area":
		return interpArea(x, out)
	case "nearest", "nearest-exact":
		y := x
		for i := dim - 1; i >= 0; i-- {
			idx := make([]int64, out[i])
			for j := range idx {
				idx[j] = nearestIndex(j, in[i], out[i], scales[i], mode == "nearest-exact")
			}
			y = indexSelect("IndexSelectBackward0", y, 2+i, FromSlice(idx, Shape{out[i]}, On(x.dev)))
		}
		if y == x {
			y = x.Clone()
		}
		return rename(y, interpGradName(mode, dim))
	}
	cubic := mode == "bicubic"
	y := x
	cdt := x.dtype
	if cdt.IsHalf() {
		cdt = Float32
		y = x.Cast(Float32)
	}
	for i := dim - 1; i >= 0; i-- {
		var idx [][]int64
		var w [][]float64
		if cdt == Float64 {
			idx, w = interpWeights[float64](in[i], out[i], scales[i], o.AlignCorners, cubic)
		} else {
			idx, w = interpWeights[float32](in[i], out[i], scales[i], o.AlignCorners, cubic)
		}
		bshape := make([]int, x.Dim())
		for k := range bshape {
			bshape[k] = 1
		}
		bshape[2+i] = out[i]
		if fused {
			if r := resampleFused(y, 2+i, idx, w, bshape); r != nil {
				y = r
				continue
			}
		}
		var acc *Tensor
		for k := range idx {
			g := indexSelect("IndexSelectBackward0", y, 2+i, FromSlice(idx[k], Shape{out[i]}, On(x.dev)))
			t := g.Mul(FromSlice(w[k], Shape(bshape), On(x.dev), Dtype(cdt)))
			if acc == nil {
				acc = t
			} else {
				acc = acc.Add(t)
			}
		}
		y = acc
	}
	return rename(y.Cast(x.dtype), interpGradName(mode, dim))
}

// resampleFused is one step of the linear modes along dim d on y's
// backend's Resampler: Σk IndexSelect(y, d, idx[k])·w[k] (w of shape
// bshape) in one pass, nil where the backend has none, or where the
// gradient it records could differ from the composed ops' in rounding
// (more than 2 taps: their gradients' order of summation is the graph's).
// The gradient is the composed ops': each tap's g·w[k] index-added into
// zeros, the taps summed.
func resampleFused(y *Tensor, d int, idx [][]int64, w [][]float64, bshape []int) *Tensor {
	rs, ok := y.be().(backend.Resampler)
	if !ok || len(idx) > 2 && y.RequiresGrad() && IsGradEnabled() {
		return nil
	}
	src := y.Contiguous()
	shape := withSize(y.shape, d, len(idx[0]))
	out := empty(shape, y.dtype, y.dev)
	if !rs.Resample(out.view(), src.view(), d, idx, w) {
		out.Release()
		return nil
	}
	in := y.shape.clone()
	return record("AddBackward0", out, []*Tensor{y}, nil, func(g *Tensor) []*Tensor {
		if !needsGrad(g) && g.dtype == y.dtype {
			gc := g.Contiguous()
			dx := empty(in, g.dtype, g.dev)
			if rs.ResampleGrad(dx.view(), gc.view(), d, idx, w) {
				return []*Tensor{dx}
			}
			dx.Release()
		}
		var acc *Tensor
		for k := range idx {
			ix := FromSlice(idx[k], Shape{len(idx[k])}, On(g.dev))
			gk := g.Mul(FromSlice(w[k], Shape(bshape), On(g.dev), Dtype(g.dtype)))
			z := Zeros(in, On(g.dev), Dtype(g.dtype))
			scatterRaw(z, d, lineIndex(ix, d, gk.shape), gk.view(), true)
			if acc == nil {
				acc = z
			} else {
				acc = acc.Add(z)
			}
		}
		return []*Tensor{acc}
	})
}

// interpGradName is PyTorch's grad_fn name of an upsampling op.
func interpGradName(mode string, dim int) string {
	m := map[string]string{"nearest": "Nearest", "nearest-exact": "NearestExact", "linear": "Linear",
		"bilinear": "Bilinear", "bicubic": "Bicubic", "trilinear": "Trilinear"}[mode]
	return fmt.Sprintf("Upsample%s%dDBackward1", m, dim)
}

// spatial is x's sizes after the batch and channel dims.
func spatial(x *Tensor) []int {
	if x.Dim() < 2 {
		return []int{}
	}
	return append([]int{}, x.shape[2:]...)
}

// nearestIndex is PyTorch's nearest_neighbor_(exact_)compute_source_index:
// the source of output j, from a float32 scale (1/scale when a scale is
// given, else in/out). (PyTorch 1.13's CPU kernel has no shortcut for
// equal sizes: a scale of 1.3 from 3 to 3 pixels reads 0, 0, 1.)
func nearestIndex(j, in, out int, scale float64, exact bool) int64 {
	s := float32(in) / float32(out)
	if scale > 0 {
		s = float32(1.0 / scale)
	}
	var src float32
	if exact {
		src = float32(float32(float32(j)+0.5) * s)
	} else {
		src = float32(float32(j) * s)
	}
	return min(int64(math.Floor(float64(src))), int64(in-1))
}

// interpWeights returns the source indices and weights along one dim of
// the linear modes (2 taps) or bicubic (4 taps, A = -0.75), computed in F
// as PyTorch's compute_indices_weights_linear/cubic in its opmath type.
func interpWeights[F float32 | float64](in, out int, scale float64, align, cubic bool) ([][]int64, [][]float64) {
	taps := 2
	if cubic {
		taps = 4
	}
	idx := make([][]int64, taps)
	w := make([][]float64, taps)
	for k := range idx {
		idx[k] = make([]int64, out)
		w[k] = make([]float64, out)
	}
	// area_pixel_compute_scale
	var ratio F
	switch {
	case align && out > 1:
		ratio = F(in-1) / F(out-1)
	case align:
		ratio = 0
	case scale > 0:
		ratio = F(1.0 / scale)
	default:
		ratio = F(in) / F(out)
	}
	for j := 0; j < out; j++ {
		// area_pixel_compute_source_index
		var src F
		if align {
			src = F(ratio * F(j))
		} else {
			src = F(F(ratio*F(F(j)+0.5)) - 0.5)
			if !cubic && src < 0 {
				src = 0
			}
		}
		if cubic {
			i0 := int64(math.Floor(float64(float32(src)))) // floorf
			t := F(src - F(i0))
			const a = -0.75
			c1 := func(x F) F { return F(F(F(F(F(a+2)*x)-F(a+3))*x)*x) + 1 }
			c2 := func(x F) F { return F(F(F(F(F(F(a*x)-F(5*a))*x)+F(8*a))*x) - F(4*a)) }
			cs := [4]F{c2(F(t + 1)), c1(t), c1(F(1 - t)), c2(F(F(1-t) + 1))}
			for k := 0; k < 4; k++ {
				idx[k][j] = min(max(i0-1+int64(k), 0), int64(in-1))
				w[k][j] = float64(cs[k])
			}
			continue
		}
		if out == in { // compute_source_index_and_lambda: a copy
			idx[0][j], idx[1][j], w[0][j], w[1][j] = int64(j), int64(j), 1, 0
			continue
		}
		i0 := int64(src)
		i1 := i0
		if i0 < int64(in-1) {
			i1++
		}
		l1 := min(max(F(src-F(i0)), 0), 1)
		idx[0][j], idx[1][j], w[0][j], w[1][j] = i0, i1, float64(F(1-l1)), float64(l1)
	}
	return idx, w
}

// interpArea is mode "area": adaptive average pooling to out.
func interpArea(x *Tensor, out []int) *Tensor {
	switch len(out) {
	case 1:
		return AdaptiveAvgPool1d(x, out[0])
	case 2:
		return AdaptiveAvgPool2d(x, out[0], out[1])
	}
	// 5-D: adaptive_avg_pool3d, separable: a pooling matrix along each dim
	const name = "adaptive_avg_pool3d"
	cdt := x.dtype
	if cdt.IsHalf() {
		cdt = Float32
	}
	y := x.Cast(cdt)
	AutocastDisabled(func() {
		for i := 2; i >= 0; i-- {
			d := 2 + i
			m := poolMatrix(name, x.shape[d], out[i], cdt, x.dev)
			y = y.Transpose(d, 4).MatMul(m.T()).Transpose(d, 4)
		}
	})
	return y.Contiguous().Cast(x.dtype)
}

// pyList writes sizes as a Python list; pyFloats floats as a Python tuple.
func pyList(s []int) string {
	p := make([]string, len(s))
	for i, v := range s {
		p[i] = fmt.Sprint(v)
	}
	return "[" + strings.Join(p, ", ") + "]"
}

func pyFloats(s []float64) string {
	p := make([]string, len(s))
	for i, v := range s {
		p[i] = fmt.Sprint(v)
		if v == math.Trunc(v) && !math.IsInf(v, 0) && math.Abs(v) < 1e16 {
			p[i] += ".0"
		}
	}
	return "(" + strings.Join(p, ", ") + ")"
}
