package ember

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The CPU backend's convolution, pooling and batch norm kernels (the
// Convolver, Pooler and BatchNormer paths) against the generic path built
// from views, copies, MatMul and reductions: outputs and every gradient,
// on random shapes with odd and tiny sizes, strides, dilation, groups,
// padding, non-contiguous and offset inputs, float32 and float64, batch 1
// and unbatched.

// nativeRun is one side of a comparison: the output and the gradients of
// Σ out·r with respect to the inputs (nil where one does not require grad).
type nativeRun struct {
	out   *Tensor
	grads []*Tensor
}

// runBoth evaluates f with NativeKernels and GenericKernels on fresh
// leaves cloned from ins, and returns both runs.
func runBoth(t *testing.T, ins []*Tensor, f func(k Kernels, in []*Tensor) *Tensor) (native, generic nativeRun) {
	t.Helper()
	var r *Tensor
	one := func(k Kernels) (res nativeRun) {
		leaves := make([]*Tensor, len(ins))
		for i, in := range ins {
			if in == nil {
				continue
			}
			leaves[i] = in.Detach().Clone().SetRequiresGrad(in.RequiresGrad())
		}
		// the same (possibly non-contiguous) layout as the input
		args := make([]*Tensor, len(ins))
		for i, in := range ins {
			if in == nil {
				continue
			}
			args[i] = sameLayout(leaves[i], in)
		}
		out := f(k, args)
		if r == nil {
			r = Randn(out.Shape(), Dtype(out.DType()))
		}
		res.out = out.Detach()
		out.Mul(r).Sum().Backward()
		for _, l := range leaves {
			if l != nil && l.RequiresGrad() {
				res.grads = append(res.grads, l.Grad())
			} else {
				res.grads = append(res.grads, nil)
			}
		}
		return res
	}
	return one(NativeKernels), one(GenericKernels)
}

// sameLayout returns a tensor with src's values (those of leaf) and the
// layout of like: a permuted or narrowed view when like is one.
func sameLayout(leaf, like *Tensor) *Tensor {
	if like.IsContiguous() && like.offset == 0 {
		return leaf
	}
	// rebuild like's layout: a bigger buffer viewed through like's strides
	buf := Full(Shape{like.st.s.Len()}, math.NaN(), Dtype(like.dtype))
	v := buf.asStrided(like.shape, like.strides, like.offset)
	v.CopyFrom(leaf.Detach())
	return v.addGradTo(leaf)
}

// addGradTo makes v a differentiable alias of leaf: v = leaf + (v − leaf)
// detached, so gradients flow to leaf while v keeps its strides for the
// forward kernel.
func (v *Tensor) addGradTo(leaf *Tensor) *Tensor {
	return record("AliasBackward0", v.Detach(), []*Tensor{leaf}, nil, func(g *Tensor) []*Tensor { return []*Tensor{g} })
}

func compareRuns(t *testing.T, what string, a, b nativeRun, tol float64) {
	t.Helper()
	check := func(name string, x, y *Tensor) {
		if (x == nil) != (y == nil) {
			t.Fatalf("%s: %s: native %v, generic %v", what, name, x != nil, y != nil)
		}
		if x == nil {
			return
		}
		if !x.Shape().Equal(y.Shape()) {
			t.Fatalf("%s: %s shape %v, generic %v", what, name, x.Shape(), y.Shape())
		}
		xs, ys := x.Cast(Float64).Float64s(), y.Cast(Float64).Float64s()
		scale := 0.0
		for _, v := range ys {
			scale = math.Max(scale, math.Abs(v))
		}
		for i := range xs {
			if math.Abs(xs[i]-ys[i]) > tol*(1+scale) || math.IsNaN(xs[i]) != math.IsNaN(ys[i]) {
				t.Fatalf("%s: %s[%d] = %g, generic %g", what, name, i, xs[i], ys[i])
			}
		}
	}
	check("out", a.out, b.out)
	for i := range a.grads {
		check(fmt.Sprintf("grad %d", i), a.grads[i], b.grads[i])
	}
}

// layoutFor returns a tensor of shape with random values in one of three
// layouts: contiguous, channels-last (a permuted view) or an offset slice
// of a bigger tensor.
func layoutFor(r *rand.Rand, shape Shape, dt DType) (*Tensor, string) {
	x := Randn(shape, Dtype(dt))
	if len(shape) != 4 {
		return x, "contiguous"
	}
	switch r.IntN(3) {
	case 1:
		p := Randn(Shape{shape[0], shape[2], shape[3], shape[1]}, Dtype(dt)).Permute(0, 3, 1, 2)
		return p, "channels-last"
	case 2:
		big := Randn(Shape{shape[0] + 1, shape[1] + 2, shape[2] + 1, shape[3] + 3}, Dtype(dt))
		return big.Narrow(0, 1, shape[0]).Narrow(1, 1, shape[1]).Narrow(2, 1, shape[2]).Narrow(3, 2, shape[3]), "offset"
	}
	return x, "contiguous"
}

func TestNativeConv2d(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	n := 60
	if testing.Short() {
		n = 25
	}
	for i := range n {
		dt := []DType{Float32, Float64}[i%2]
		groups := []int{1, 1, 2, 3}[r.IntN(4)]
		cg, og := 1+r.IntN(4), 1+r.IntN(4)
		if r.IntN(6) == 0 { // depthwise
			groups, cg, og = 3, 1, 1+r.IntN(2)
		}
		c, o := cg*groups, og*groups
		h, w := 1+r.IntN(10), 1+r.IntN(10)
		kh, kw := 1+r.IntN(3), 1+r.IntN(3)
		stride := [2]int{1 + r.IntN(3), 1 + r.IntN(2)}
		dil := [2]int{1, 1}
		if r.IntN(4) == 0 {
			dil = [2]int{1 + r.IntN(2), 1 + r.IntN(3)}
		}
		pad := [2]int{r.IntN(3), r.IntN(2)}
		if r.IntN(6) == 0 {
			pad = [2]int{kh + 1, kw + 2} // more padding than kernel
		}
		if h+2*pad[0]-dil[0]*(kh-1)-1 < 0 || w+2*pad[1]-dil[1]*(kw-1)-1 < 0 {
			continue
		}
		batch := []int{0, 1, 1 + r.IntN(3)}[r.IntN(3)] // 0: unbatched
		shape := Shape{batch, c, h, w}
		if batch == 0 {
			shape = Shape{1, c, h, w}
		}
		x, layout := layoutFor(r, shape, dt)
		if batch == 0 {
			x = x.Squeeze(0)
		}
		wt := Randn(Shape{o, cg, kh, kw}, Dtype(dt))
		var b *Tensor
		if r.IntN(2) == 0 {
			b = Randn(Shape{o}, Dtype(dt))
		}
		x.SetRequiresGrad(r.IntN(4) != 0)
		wt.SetRequiresGrad(true)
		what := fmt.Sprintf("conv x%v(%s) w%v bias=%v stride%v pad%v dil%v groups %d %v", x.Shape(), layout, wt.Shape(), b != nil, stride, pad, dil, groups, dt)
		nat, gen := runBoth(t, []*Tensor{x, wt, b}, func(k Kernels, in []*Tensor) *Tensor {
			return k.Conv2d(in[0], in[1], in[2], stride, pad, dil, groups)
		})
		compareRuns(t, what, nat, gen, map[DType]float64{Float32: 2e-5, Float64: 1e-12}[dt])
	}
	// Channels enough for the CPU's Winograd path (3×3, stride 1), in the
	// forward pass and in the input gradient.
	for _, dt := range []DType{Float32, Float64} {
		x := Randn(Shape{2, 16, 9, 11}, Dtype(dt)).SetRequiresGrad(true)
		wt := Randn(Shape{20, 16, 3, 3}, Dtype(dt)).SetRequiresGrad(true)
		b := Randn(Shape{20}, Dtype(dt)).SetRequiresGrad(true)
		one := [2]int{1, 1}
		nat, gen := runBoth(t, []*Tensor{x, wt, b}, func(k Kernels, in []*Tensor) *Tensor {
			return k.Conv2d(in[0], in[1], in[2], one, one, one, 1)
		})
		compareRuns(t, fmt.Sprintf("conv 3×3 16→20 %v", dt), nat, gen, map[DType]float64{Float32: 2e-5, Float64: 1e-12}[dt])
	}
}

func TestNativePool2d(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for i := range 60 {
		dt := []DType{Float32, Float64}[i%2]
		kernel := [2]int{1 + r.IntN(3), 1 + r.IntN(4)}
		stride := [2]int{r.IntN(3), 1 + r.IntN(2)}
		if stride[0] == 0 {
			stride = [2]int{} // the default: the kernel
		}
		pad := [2]int{r.IntN(kernel[0]/2 + 1), r.IntN(kernel[1]/2 + 1)}
		h, w := kernel[0]+r.IntN(8), kernel[1]+r.IntN(8)
		batch := r.IntN(3)
		shape := Shape{max(batch, 1), 1 + r.IntN(4), h, w}
		x, layout := layoutFor(r, shape, dt)
		if batch == 0 {
			x = x.Squeeze(0)
		}
		x.SetRequiresGrad(true)
		what := fmt.Sprintf("pool x%v(%s) kernel%v stride%v pad%v %v", x.Shape(), layout, kernel, stride, pad, dt)
		tol := map[DType]float64{Float32: 1e-6, Float64: 1e-13}[dt]
		nat, gen := runBoth(t, []*Tensor{x}, func(k Kernels, in []*Tensor) *Tensor { return k.MaxPool2d(in[0], kernel, stride, pad) })
		compareRuns(t, "max "+what, nat, gen, tol)
		for _, cip := range []bool{true, false} {
			nat, gen := runBoth(t, []*Tensor{x}, func(k Kernels, in []*Tensor) *Tensor { return k.AvgPool2d(in[0], kernel, stride, pad, cip) })
			compareRuns(t, fmt.Sprintf("avg(countIncludePad=%v) %s", cip, what), nat, gen, tol)
		}
	}
}

// PyTorch's max_pool2d indices: the last NaN of a window wins, ties go to
// the first maximum, and a window of -inf points at its first element
// (torch 1.13: values [1, nan, 3, nan] → index 3; [2, 5, 5, 1] → 1;
// [-inf, -inf] → 0).
func TestNativeMaxPoolIndices(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(-1)
	for _, c := range []struct {
		in   []float64
		want int
	}{{[]float64{1, nan, 3, nan}, 3}, {[]float64{2, 5, 5, 1}, 1}, {[]float64{inf, inf}, 0}} {
		x := FromSlice(c.in, Shape{1, 1, 1, len(c.in)}).SetRequiresGrad(true)
		MaxPool2d(x, [2]int{1, len(c.in)}, [2]int{}, [2]int{}).Sum().Backward()
		g := x.Grad().Float64s()
		for i, v := range g {
			if want := map[bool]float64{true: 1}[i == c.want]; v != want {
				t.Fatalf("max_pool2d %v: gradient %v, want 1 at %d", c.in, g, c.want)
			}
		}
	}
}

func TestNativeBatchNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for i := range 40 {
		dt := []DType{Float32, Float64}[i%2]
		var shape Shape
		switch r.IntN(3) {
		case 0:
			shape = Shape{2 + r.IntN(5), 1 + r.IntN(5)}
		case 1:
			shape = Shape{1 + r.IntN(3), 1 + r.IntN(5), 1 + r.IntN(9)}
		default:
			shape = Shape{1 + r.IntN(3), 1 + r.IntN(5), 1 + r.IntN(6), 2 + r.IntN(6)}
		}
		c := shape[1]
		x, layout := layoutFor(r, shape, dt)
		x.SetRequiresGrad(true)
		var w, b *Tensor
		if r.IntN(3) != 0 {
			w = Rand(Shape{c}, Dtype(dt)).AddScalar(0.5).SetRequiresGrad(true)
		}
		if r.IntN(3) != 0 {
			b = Randn(Shape{c}, Dtype(dt)).SetRequiresGrad(true)
		}
		training := r.IntN(3) != 0
		rm0 := Randn(Shape{c}, Dtype(dt))
		rv0 := Rand(Shape{c}, Dtype(dt)).AddScalar(0.5)
		var rms, rvs [2]*Tensor
		side := 0
		what := fmt.Sprintf("batch_norm x%v(%s) weight=%v bias=%v training=%v %v", x.Shape(), layout, w != nil, b != nil, training, dt)
		nat, gen := runBoth(t, []*Tensor{x, w, b}, func(k Kernels, in []*Tensor) *Tensor {
			rm, rv := rm0.Clone(), rv0.Clone()
			rms[side], rvs[side] = rm, rv
			side++
			return k.BatchNorm(in[0], rm, rv, in[1], in[2], training, 0.1, 1e-5)
		})
		tol := map[DType]float64{Float32: 1e-5, Float64: 1e-12}[dt]
		compareRuns(t, what, nat, gen, tol)
		compareRuns(t, what+" running stats", nativeRun{out: rms[0], grads: []*Tensor{rvs[0]}}, nativeRun{out: rms[1], grads: []*Tensor{rvs[1]}}, tol)
	}
}
