package ember

import "github.com/emberml/ember/backend"

// The backends' own kernels behind the kernel providers' signatures
// (kernels.go): each allocates the outputs, calls the backend and records
// a backward that calls the backend again.

// nativeConv runs Conv2d on a backend's Convolver; the graph saves the
// input and the weight.
type nativeConv struct{ cvr backend.Convolver }

func (k nativeConv) conv2d(x4, w, b *Tensor, p backend.Conv2dParams, oshape Shape) *Tensor {
	cvr := k.cvr
	xd, wd := x4.Detach(), w.Detach().Contiguous()
	out := empty(oshape, x4.dtype, x4.dev)
	var bv backend.View
	if b != nil {
		bv = b.view()
	}
	cvr.Conv2d(out.view(), xd.view(), wd.view(), bv, p)
	return recordTwice("ConvolutionBackward0", out, []*Tensor{x4, w, b}, []*Tensor{x4, w}, func(gr *Tensor) []*Tensor {
		gc := gr.Contiguous()
		gx := gradIf(x4, func() *Tensor {
			gx := empty(xd.shape, xd.dtype, xd.dev)
			cvr.Conv2dGradInput(gx.view(), gc.view(), wd.view(), p)
			return gx
		})
		gw := gradIf(w, func() *Tensor {
			gw := empty(wd.shape, wd.dtype, wd.dev)
			cvr.Conv2dGradWeight(gw.view(), xd.view(), gc.view(), p)
			return gw
		})
		var gb *Tensor
		if b != nil {
			gb = gradIf(b, func() *Tensor { return gr.Sum(Dims(0, 2, 3)) })
		}
		return []*Tensor{gx, gw, gb}
	}, convTwice(x4, w, b, p))
}

// convTwice is a convolution's backward in differentiable ops (Conv2d's
// double backward): the input's gradient folds wᵀ·g back (col2im), the
// weight's is g times the unfolded input, per group; x4 and w are the
// convolution's own operands, which its backward saves anyway.
func convTwice(x4, w, b *Tensor, p backend.Conv2dParams) func(g *Tensor) []*Tensor {
	return func(g *Tensor) []*Tensor {
		n, c, h, wd := x4.shape[0], x4.shape[1], x4.shape[2], x4.shape[3]
		o, cg, kh, kw := w.shape[0], w.shape[1], w.shape[2], w.shape[3]
		gr := p.Groups
		og, l, k := o/gr, g.shape[2]*g.shape[3], [2]int{kh, kw}
		gv := g.Reshape(n, gr, og, l)
		gx := gradIf(x4, func() *Tensor {
			gcols := w.Reshape(gr, og, cg*kh*kw).Transpose(1, 2).MatMul(gv) // [n, G, cg·kh·kw, L]
			return Fold(gcols.Reshape(n, c*kh*kw, l), [2]int{h, wd}, k, p.Dilation, p.Padding, p.Stride)
		})
		gw := gradIf(w, func() *Tensor {
			cols := Unfold(x4, k, p.Dilation, p.Padding, p.Stride).Reshape(n, gr, cg*kh*kw, l)
			return gv.MatMul(cols.Transpose(2, 3)).Sum(Dims(0)).Reshape(o, cg, kh, kw)
		})
		var gb *Tensor
		if b != nil {
			gb = gradIf(b, func() *Tensor { return g.Sum(Dims(0, 2, 3)) })
		}
		return []*Tensor{gx, gw, gb}
	}
}

// nativePool runs the pools on a backend's Pooler; max pooling saves the
// indices of the maxima, and only when a gradient is wanted.
type nativePool struct{ pl backend.Pooler }

func (k nativePool) maxPool2d(x4 *Tensor, p backend.Pool2dParams, oshape Shape) *Tensor {
	out, _ := k.maxPool2dIdx(x4, p, oshape, false)
	return out
}

// maxPool2dIdx is maxPool2d, and the indices of the maxima (h·W + w in
// the input plane, the backend's) when wantIdx.
func (k nativePool) maxPool2dIdx(x4 *Tensor, p backend.Pool2dParams, oshape Shape, wantIdx bool) (*Tensor, *Tensor) {
	out := empty(oshape, x4.dtype, x4.dev)
	if !needsGrad(x4) && !wantIdx {
		k.pl.MaxPool2d(out.view(), backend.View{}, x4.view(), p)
		return out, nil
	}
	idx := empty(oshape, Int64, x4.dev)
	k.pl.MaxPool2d(out.view(), idx.view(), x4.view(), p)
	if !needsGrad(x4) {
		return out, idx
	}
	back := func(g *Tensor) []*Tensor {
		gx := empty(x4.shape, x4.dtype, x4.dev)
		k.pl.MaxPool2dBackward(gx.view(), g.view(), idx.view())
		return []*Tensor{gx}
	}
	n, c, h, w := x4.shape[0], x4.shape[1], x4.shape[2], x4.shape[3]
	return recordTwice("MaxPool2DWithIndicesBackward0", out, []*Tensor{x4}, []*Tensor{idx}, back,
		linearTwice("MaxPool2DWithIndicesBackwardBackward0", back, func(gg *Tensor) *Tensor {
			// the adjoint of routing g to the maxima: gathering from them
			return gg.Reshape(n, c, h*w).Gather(2, idx.Reshape(n, c, -1)).Reshape(oshape...)
		})), idx
}

func (k nativePool) avgPool2d(x4 *Tensor, p backend.Pool2dParams, countIncludePad bool, oshape Shape) *Tensor {
	out := empty(oshape, x4.dtype, x4.dev)
	k.pl.AvgPool2d(out.view(), x4.Detach().view(), p, countIncludePad)
	back := func(g *Tensor) []*Tensor {
		gx := empty(x4.shape, x4.dtype, x4.dev)
		k.pl.AvgPool2dBackward(gx.view(), g.view(), p, countIncludePad)
		return []*Tensor{gx}
	}
	// (the adjoint of an average pool's backward is the pool itself)
	return recordTwice("AvgPool2DBackward0", out, []*Tensor{x4}, nil, back,
		linearTwice("AvgPool2DBackwardBackward0", back, func(gg *Tensor) *Tensor { return k.avgPool2d(gg, p, countIncludePad, oshape) }))
}

// nativeBatchNorm runs BatchNorm on a backend's per-channel kernels: the
// statistics in one pass, the normalisation in one more; backward reads
// the saved input again (no normalised copy is kept).
type nativeBatchNorm struct{ bn backend.BatchNormer }

func (k nativeBatchNorm) batchNorm(x, runningMean, runningVar, weight, bias *Tensor, training bool, momentum, eps float64) *Tensor {
	bn := k.bn
	c := x.shape[1]
	xc := x.Detach().Contiguous()
	// per-channel operands: float32 for a two-byte x (HalfBatchNormer)
	pdt := x.dtype
	if pdt.IsHalf() {
		pdt = Float32
	}
	perC := func(t *Tensor) *Tensor { return t.Detach().Cast(pdt).Reshape(c) }
	var mean, invstd *Tensor
	if training {
		mean = empty(Shape{c}, pdt, x.dev)
		v := empty(Shape{c}, pdt, x.dev)
		bn.ChannelStats(mean.view(), v.view(), xc.view())
		invstd = v.AddScalar(eps).Rsqrt()
		updateRunning(runningMean, runningVar, mean, v, x.NumElements()/c, momentum)
	} else {
		mean = perC(runningMean)
		invstd = perC(runningVar).AddScalar(eps).Rsqrt()
	}
	// out = x·scale + shift, scale = invstd·weight, shift = bias − mean·scale
	scale := invstd
	if weight != nil {
		scale = invstd.Mul(perC(weight))
	}
	shift := mean.Mul(scale).Neg()
	if bias != nil {
		shift = shift.Add(perC(bias))
	}
	out := empty(x.shape, x.dtype, x.dev)
	bn.ChannelAffine(out.view(), xc.view(), scale.view(), shift.view())
	out = record("NativeBatchNormBackward0", out, []*Tensor{x, weight, bias}, []*Tensor{x, weight}, func(g *Tensor) []*Tensor {
		gc := g.Contiguous()
		sumG := empty(Shape{c}, pdt, x.dev)
		sumGX := empty(Shape{c}, pdt, x.dev)
		bn.ChannelGradSums(sumG.view(), sumGX.view(), gc.view(), xc.view(), mean.view())
		gx := gradIf(x, func() *Tensor {
			gx := empty(x.shape, x.dtype, x.dev)
			if !training {
				bn.ChannelAffine(gx.view(), gc.view(), scale.view(), zeroLike(scale).Expand(c).Contiguous().view())
				return gx
			}
			// gx = scale·(g − ΣG/cnt − x̂·invstd·ΣGX/cnt), x̂ = (x − mean)·invstd,
			// as g·a + x·b + d
			cnt := float64(x.NumElements() / c)
			b := scale.Mul(invstd).Mul(invstd).Mul(sumGX).MulScalar(-1 / cnt)
			d := scale.Mul(sumG).MulScalar(-1 / cnt).Sub(mean.Mul(b))
			bn.ChannelAffine2(gx.view(), gc.view(), xc.view(), scale.view(), b.view(), d.view())
			return gx
		})
		var gw, gb *Tensor
		if weight != nil {
			gw = gradIf(weight, func() *Tensor { return sumGX.Mul(invstd).Reshape(weight.shape...).Cast(weight.dtype) })
		}
		if bias != nil {
			gb = gradIf(bias, func() *Tensor { return sumG.Reshape(bias.shape...).Cast(bias.dtype) })
		}
		return []*Tensor{gx, gw, gb}
	})
	if nd := nodeOf(out); nd != nil {
		// twice: x̂ and invstd made again from the saved input, in x's
		// dtype (the per-channel statistics may be float32)
		nd.twice = func(g *Tensor) []*Tensor {
			bshape := make([]int, x.Dim())
			var dims []int
			for i := range bshape {
				bshape[i] = 1
				if i != 1 {
					dims = append(dims, i)
				}
			}
			bshape[1] = c
			is := invstd.Reshape(bshape...)
			xhat := xc.Sub(mean.Reshape(bshape...)).Mul(is)
			ng := &normGraph{name: nd.name, xhat: xhat, invstd: is, dims: dims, n: float64(x.NumElements() / c), eval: !training}
			return normTwice(nd, ng, weight, bias, bshape)(g)
		}
	}
	return out
}
