package ember

import (
	"math"

	"github.com/emberml/ember/backend"
)

// generic is the lowering of the ops with optional backend kernels to the
// kernels every backend has (the kernel providers' signatures are in
// kernels.go). Windows are strided views (asStrided) of a padded copy,
// made contiguous and fed to MatMul or a reduction (im2col); the gradient
// goes back to the input by one strided in-place add per kernel position
// into a padded gradient (col2im without a kernel of its own).
type generic struct{}

// conv2d is im2col by a strided copy, then one MatMul per group.
func (generic) conv2d(x4, w, b *Tensor, p backend.Conv2dParams, oshape Shape) *Tensor {
	stride, padding, dilation, groups := p.Stride, p.Padding, p.Dilation, p.Groups
	oh, ow := oshape[2], oshape[3]
	n, c, h, wd := x4.shape[0], x4.shape[1], x4.shape[2], x4.shape[3]
	o, cg, kh, kw := w.shape[0], w.shape[1], w.shape[2], w.shape[3]
	g, og, k, l := groups, o/groups, cg*kh*kw, oh*ow
	xp := pad2d(x4.Detach(), padding[0], padding[1], 0)
	win := window{n: n, c: c, hp: xp.shape[2], wp: xp.shape[3], kh: kh, kw: kw, oh: oh, ow: ow, stride: stride, dil: dilation}
	// cols: [C, KH, KW, N, OH, OW] = [G, K, N*L], so each group is one matmul
	cols := win.view(xp).Permute(1, 4, 5, 0, 2, 3).Contiguous().View(g, k, n*l)
	wg := w.Detach().Reshape(g, og, k)
	prod := wg.MatMul(cols)
	out := prod.View(g, og, n, oh, ow).Permute(2, 0, 1, 3, 4).Contiguous().View(n, o, oh, ow)
	releaseTemp(prod, out)
	if b != nil {
		biased := out.Add(b.Detach().Reshape(1, o, 1, 1))
		releaseTemp(out, biased)
		out = biased
	}
	if !IsGradEnabled() || !(x4.RequiresGrad() || w.RequiresGrad() || (b != nil && b.RequiresGrad())) {
		// No graph will keep the unfolded input: free it now rather than
		// when the GC gets to it (it is the largest buffer of a conv).
		releaseTemp(cols, x4, w, out)
		releaseTemp(xp, x4, w, out)
	}
	out = recordTwice("ConvolutionBackward0", out, []*Tensor{x4, w, b}, []*Tensor{cols, wg}, func(gr *Tensor) []*Tensor {
		gv := gr.Reshape(n, g, og, l).Permute(1, 2, 0, 3).Contiguous().View(g, og, n*l)
		gx := gradIf(x4, func() *Tensor {
			gcols := wg.Transpose(1, 2).MatMul(gv).View(c, kh, kw, n, oh, ow)
			return win.scatter(x4.dev, x4.dtype, padding, h, wd, func(i, j int) *Tensor {
				return gcols.Select(1, i).Select(1, j).Permute(1, 0, 2, 3)
			})
		})
		gw := gradIf(w, func() *Tensor { return gv.MatMul(cols.Transpose(1, 2)).Reshape(o, cg, kh, kw) })
		var gb *Tensor
		if b != nil {
			gb = gradIf(b, func() *Tensor { return gr.Sum(Dims(0, 2, 3)) })
		}
		return []*Tensor{gx, gw, gb}
	}, nil)
	if nd := nodeOf(out); nd != nil {
		// twice needs x4 with its history: its data is rebuilt from the
		// saved, version-checked cols (the elements no window covers do
		// not reach the output), as x4 may have changed in place since
		p := backend.Conv2dParams{Stride: stride, Padding: padding, Dilation: dilation, Groups: groups}
		nd.twice = func(gr *Tensor) []*Tensor {
			var xr *Tensor
			NoGrad(func() {
				cv := cols.View(c, kh, kw, n, oh, ow)
				xr = win.place(x4.dev, x4.dtype, padding, h, wd, func(i, j int) *Tensor {
					return cv.Select(1, i).Select(1, j).Permute(1, 0, 2, 3)
				})
			})
			if nd.edges[0].live() {
				pass := func(g *Tensor) []*Tensor { return []*Tensor{g} }
				xr.ag = &autograd{requiresGrad: true, node: &node{name: "ConvolutionBackward0", edges: nd.edges[:1], backward: pass, twice: pass}}
			}
			return convTwice(xr, w, b, p)(gr)
		}
	}
	return out
}

// maxPool2d takes the maximum of each window's contiguous copy; the
// gradient goes to the first maximum by a one-hot mask.
func (g generic) maxPool2d(x4 *Tensor, p backend.Pool2dParams, oshape Shape) *Tensor {
	out, _ := g.maxPool2dDil(x4, p, [2]int{1, 1}, oshape, false)
	return out
}

// maxPool2dDil is maxPool2d with the window's elements dil apart, and
// (when wantIdx) the maxima's positions in their input planes, h·W + w.
func (generic) maxPool2dDil(x4 *Tensor, p backend.Pool2dParams, dil [2]int, oshape Shape, wantIdx bool) (*Tensor, *Tensor) {
	kernel, stride, padding := p.Kernel, p.Stride, p.Padding
	n, c, h, wd := x4.shape[0], x4.shape[1], x4.shape[2], x4.shape[3]
	oh, ow := oshape[2], oshape[3]
	eh, ew := poolOverhang(h, wd, p, dil, oshape)
	xp := pad2dEnd(x4.Detach(), padding[0], padding[1], eh, ew, lowest(x4.dtype))
	win := window{n: n, c: c, hp: xp.shape[2], wp: xp.shape[3], kh: kernel[0], kw: kernel[1], oh: oh, ow: ow, stride: stride, dil: dil}
	kk := kernel[0] * kernel[1]
	flat := win.view(xp).Contiguous().View(n, c, oh, ow, kk)
	out, idx := flat.MaxDim(4, false)
	if wantIdx || needsGrad(x4) {
		// which element is the maximum matters to the indices and the
		// gradient's route only (not worth two more passes otherwise)
		if padding != [2]int{} {
			// a window whose input elements all hold the lowest value takes
			// the first of them, as PyTorch's kernels (their maximum starts
			// there, at -inf); MaxDim's first maximum may be a padding element
			idx = Where(out.EqScalar(lowest(x4.dtype)), firstInside(oh, ow, kernel[1], stride, padding, dil, x4.dev), idx)
		}
		// a window's last NaN is its maximum, as PyTorch's kernels (and the
		// backends') keep the last NaN they meet
		idx = lastNaN(flat, 4, idx)
	}
	// window position q of output (i, j) is input row
	// i·s − p + (q / kw)·d, column j·s − p + (q % kw)·d (worked out on
	// the device: a host table of every window's positions has the
	// size of the windows)
	position := func() *Tensor {
		qh := idx.FloorDivide(Full(Shape{}, float64(kernel[1]), On(x4.dev), Dtype(Int64)))
		qw := idx.Sub(qh.MulScalar(float64(kernel[1])))
		r0 := Arange(float64(-padding[0]), float64(oh*stride[0]-padding[0]), float64(stride[0]), On(x4.dev), Dtype(Int64)).Reshape(oh, 1)
		c0 := Arange(float64(-padding[1]), float64(ow*stride[1]-padding[1]), float64(stride[1]), On(x4.dev), Dtype(Int64))
		return qh.MulScalar(float64(dil[0])).Add(r0).MulScalar(float64(wd)).Add(qw.MulScalar(float64(dil[1])).Add(c0))
	}
	var pos *Tensor
	if wantIdx {
		pos = position()
	}
	back := func(g *Tensor) []*Tensor {
		mask := oneHot(idx.Unsqueeze(4), 4, kk)
		gwin := Where(mask, g.Unsqueeze(4), zeroLike(g)).View(n, c, oh, ow, kernel[0], kernel[1])
		return []*Tensor{win.scatter(x4.dev, x4.dtype, padding, h, wd, func(i, j int) *Tensor {
			return gwin.Select(4, i).Select(4, j)
		})}
	}
	out = recordTwice("MaxPool2DWithIndicesBackward0", out, []*Tensor{x4}, []*Tensor{idx}, back,
		linearTwice("MaxPool2DWithIndicesBackwardBackward0", back, func(gg *Tensor) *Tensor {
			// the adjoint of routing g to the maxima: gathering from them
			return gg.Reshape(n, c, h*wd).Gather(2, position().Reshape(n, c, -1)).Reshape(n, c, oh, ow)
		}))
	return out, pos
}

// firstInside is, for each window of a pool's [OH, OW] output, the window
// position (row-major over kh×kw) of its first element inside the input:
// row i·s − p + a·d, column j·s − p + b·d with a, b the least keeping them
// from the padding, ⌈max(p − i·s, 0) / d⌉ (made on the device: OH and OW
// have no bound on meta).
func firstInside(oh, ow, kw int, stride, padding, dil [2]int, dev Device) *Tensor {
	first := func(o, d int) *Tensor {
		r := Arange(float64(padding[d]), float64(padding[d]-o*stride[d]), float64(-stride[d]), On(dev), Dtype(Int64))
		return r.Clamp(0, math.Inf(1)).AddScalar(float64(dil[d] - 1)).FloorDivide(Full(Shape{}, float64(dil[d]), On(dev), Dtype(Int64)))
	}
	return first(oh, 0).MulScalar(float64(kw)).Reshape(oh, 1).Add(first(ow, 1))
}

// poolOverhang is how far a ceil_mode pool's last windows reach past the
// padded input (rows, columns); zero otherwise.
func poolOverhang(h, w int, p backend.Pool2dParams, dil [2]int, oshape Shape) (int, int) {
	eh := (oshape[2]-1)*p.Stride[0] + dil[0]*(p.Kernel[0]-1) + 1 - (h + 2*p.Padding[0])
	ew := (oshape[3]-1)*p.Stride[1] + dil[1]*(p.Kernel[1]-1) + 1 - (w + 2*p.Padding[1])
	return max(eh, 0), max(ew, 0)
}

// avgPool2d sums each window and divides by its size, or by the count of
// its elements inside the input (a pooled plane of ones).
func (generic) avgPool2d(x4 *Tensor, p backend.Pool2dParams, countIncludePad bool, oshape Shape) *Tensor {
	kernel, stride, padding := p.Kernel, p.Stride, p.Padding
	n, c, h, wd := x4.shape[0], x4.shape[1], x4.shape[2], x4.shape[3]
	oh, ow := oshape[2], oshape[3]
	xd := x4.Detach()
	eh, ew := poolOverhang(h, wd, p, [2]int{1, 1}, oshape)
	xp := pad2dEnd(xd, padding[0], padding[1], eh, ew, 0)
	win := window{n: n, c: c, hp: xp.shape[2], wp: xp.shape[3], kh: kernel[0], kw: kernel[1], oh: oh, ow: ow, stride: stride, dil: [2]int{1, 1}}
	sum := win.view(xp).Sum(Dims(4, 5))
	var div *Tensor
	switch {
	case countIncludePad && eh == 0 && ew == 0:
		div = Full(Shape{}, float64(kernel[0]*kernel[1]), On(x4.dev), Dtype(x4.dtype))
	case countIncludePad:
		// the window clipped to the padded input: padding counts, a
		// ceil_mode overhang does not (PyTorch's divisor)
		ones := pad2dEnd(Ones(Shape{1, 1, h + 2*padding[0], wd + 2*padding[1]}, On(x4.dev), Dtype(x4.dtype)), 0, 0, eh, ew, 0)
		w1 := win
		w1.n, w1.c = 1, 1
		div = w1.view(ones).Sum(Dims(4, 5))
	default:
		ones := pad2dEnd(Ones(Shape{1, 1, h, wd}, On(x4.dev), Dtype(x4.dtype)), padding[0], padding[1], eh, ew, 0)
		w1 := win
		w1.n, w1.c = 1, 1
		div = w1.view(ones).Sum(Dims(4, 5))
	}
	out := sum.Div(div)
	back := func(g *Tensor) []*Tensor {
		gd := g.Div(div)
		return []*Tensor{win.scatter(x4.dev, x4.dtype, padding, h, wd, func(i, j int) *Tensor { return gd })}
	}
	// (the adjoint of an average pool's backward is the pool itself)
	out = recordTwice("AvgPool2DBackward0", out, []*Tensor{x4}, []*Tensor{div}, back,
		linearTwice("AvgPool2DBackwardBackward0", back, func(gg *Tensor) *Tensor { return generic{}.avgPool2d(gg, p, countIncludePad, oshape) }))
	return out
}

// batchNorm normalises by reductions over every dim but the channel's and
// keeps the normalised input for the backward.
func (generic) batchNorm(x, runningMean, runningVar, weight, bias *Tensor, training bool, momentum, eps float64) *Tensor {
	bshape := make([]int, x.Dim())
	dims := []int{0}
	for i := range bshape {
		bshape[i] = 1
		if i >= 2 {
			dims = append(dims, i)
		}
	}
	bshape[1] = x.shape[1]
	cnt := x.NumElements() / x.shape[1]
	xd := x.Detach()
	var mean, invstd *Tensor
	if training {
		mean = xd.Mean(Dims(dims...), KeepDim())
		dev := xd.Sub(mean)
		v := dev.Mul(dev).Mean(Dims(dims...), KeepDim())
		invstd = v.AddScalar(eps).Rsqrt()
		updateRunning(runningMean, runningVar, mean, v, cnt, momentum)
	} else {
		mean = runningMean.Detach().Cast(x.dtype).Reshape(bshape...)
		invstd = runningVar.Detach().Cast(x.dtype).Reshape(bshape...).AddScalar(eps).Rsqrt()
	}
	xhat := xd.Sub(mean).Mul(invstd)
	out := xhat
	var wd *Tensor
	if weight != nil {
		wd = weight.Detach().Reshape(bshape...)
		out = out.Mul(wd)
	}
	if bias != nil {
		out = out.Add(bias.Detach().Reshape(bshape...))
	}
	out = record("NativeBatchNormBackward0", out, []*Tensor{x, weight, bias}, []*Tensor{xhat, invstd, wd}, func(g *Tensor) []*Tensor {
		gx := gradIf(x, func() *Tensor {
			gh := g
			if wd != nil {
				gh = g.Mul(wd)
			}
			if !training {
				return gh.Mul(invstd)
			}
			m1 := gh.Mean(Dims(dims...), KeepDim())
			m2 := gh.Mul(xhat).Mean(Dims(dims...), KeepDim())
			return gh.Sub(m1).Sub(xhat.Mul(m2)).Mul(invstd)
		})
		var gw, gb *Tensor
		if weight != nil {
			gw = gradIf(weight, func() *Tensor { return g.Mul(xhat).Sum(Dims(dims...)).Reshape(weight.shape...) })
		}
		if bias != nil {
			gb = gradIf(bias, func() *Tensor { return g.Sum(Dims(dims...)).Reshape(bias.shape...) })
		}
		return []*Tensor{gx, gw, gb}
	})
	if nd := nodeOf(out); nd != nil {
		nd.twice = normTwice(nd, &normGraph{name: nd.name, xhat: xhat, invstd: invstd, dims: dims, n: float64(cnt), eval: !training}, weight, bias, bshape)
	}
	return out
}

// asStrided is a detached view of t's storage with the given shape, strides
// and absolute offset. The caller keeps it within the storage.
func (t *Tensor) asStrided(shape Shape, strides []int, offset int) *Tensor {
	return t.Detach().as(shape.clone(), append([]int(nil), strides...), offset)
}

// lowest is the smallest value of dt: what max pooling pads with.
func lowest(dt DType) float64 {
	switch dt {
	case Int64:
		return math.MinInt64
	case Int32:
		return math.MinInt32
	case Bool:
		return 0
	}
	return math.Inf(-1)
}

// pad2d returns a contiguous copy of the 4-D x with ph rows and pw columns
// of value added on each side.
func pad2d(x *Tensor, ph, pw int, value float64) *Tensor {
	return pad2dEnd(x, ph, pw, 0, 0, value)
}

// pad2dEnd is pad2d with eh more rows at the bottom and ew more columns
// on the right (a ceil_mode pool's overhang).
func pad2dEnd(x *Tensor, ph, pw, eh, ew int, value float64) *Tensor {
	n, c, h, w := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	xp := Full(Shape{n, c, h + 2*ph + eh, w + 2*pw + ew}, value, On(x.dev), Dtype(x.dtype))
	xp.Narrow(2, ph, h).Narrow(3, pw, w).CopyFrom(x)
	return xp
}

// window describes KH×KW windows over a padded [N, C, Hp, Wp] tensor.
type window struct {
	n, c, hp, wp   int
	kh, kw, oh, ow int
	stride, dil    [2]int
}

func (w window) strides() (sN, sC, sH, sW int) { return w.c * w.hp * w.wp, w.hp * w.wp, w.wp, 1 }

// view returns the windows of the contiguous padded xp as [N, C, OH, OW, KH, KW].
func (w window) view(xp *Tensor) *Tensor {
	sN, sC, sH, sW := w.strides()
	return xp.asStrided(Shape{w.n, w.c, w.oh, w.ow, w.kh, w.kw},
		[]int{sN, sC, w.stride[0] * sH, w.stride[1] * sW, w.dil[0] * sH, w.dil[1] * sW}, xp.offset)
}

// scatter adds part(i, j), an [N, C, OH, OW] gradient for kernel position
// (i, j), into a zero padded gradient, and returns it cut to [N, C, H, W].
// place is scatter with each part copied, not added: it rebuilds a
// [N, C, H, W] tensor from its windows (zero where no window reaches).
func (w window) place(dev Device, dt DType, pad [2]int, h, wd int, part func(i, j int) *Tensor) *Tensor {
	xp := Zeros(Shape{w.n, w.c, w.hp, w.wp}, On(dev), Dtype(dt))
	sN, sC, sH, sW := w.strides()
	for i := 0; i < w.kh; i++ {
		for j := 0; j < w.kw; j++ {
			dst := xp.asStrided(Shape{w.n, w.c, w.oh, w.ow}, []int{sN, sC, w.stride[0] * sH, w.stride[1] * sW}, i*w.dil[0]*sH+j*w.dil[1]*sW)
			dst.CopyFrom(part(i, j))
		}
	}
	return xp.Narrow(2, pad[0], h).Narrow(3, pad[1], wd).Contiguous()
}

func (w window) scatter(dev Device, dt DType, pad [2]int, h, wd int, part func(i, j int) *Tensor) *Tensor {
	gxp := Zeros(Shape{w.n, w.c, w.hp, w.wp}, On(dev), Dtype(dt))
	sN, sC, sH, sW := w.strides()
	for i := 0; i < w.kh; i++ {
		for j := 0; j < w.kw; j++ {
			dst := gxp.asStrided(Shape{w.n, w.c, w.oh, w.ow}, []int{sN, sC, w.stride[0] * sH, w.stride[1] * sW}, i*w.dil[0]*sH+j*w.dil[1]*sW)
			dst.AddInPlace(part(i, j))
		}
	}
	return gxp.Narrow(2, pad[0], h).Narrow(3, pad[1], wd)
}

// releaseTemp frees an op's intermediate t now, unless it shares storage
// with one of keep (views and no-op copies do).
func releaseTemp(t *Tensor, keep ...*Tensor) {
	for _, k := range keep {
		if k != nil && k.st == t.st {
			return
		}
	}
	t.Release()
}
