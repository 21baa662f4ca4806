package ember

import (
	"fmt"
	"math"

	"github.com/emberml/ember/backend"
)

// Convolution, pooling and normalisation, built from existing kernels:
// windows are strided views (asStrided) of a padded copy, made contiguous
// and fed to MatMul or a reduction (im2col); the gradient goes back to the
// input by one strided in-place add per kernel position into a padded
// gradient (col2im without a kernel of its own).

// asStrided is a detached view of t's storage with the given shape, strides
// and absolute offset. The caller keeps it within the storage.
func (t *Tensor) asStrided(shape Shape, strides []int, offset int) *Tensor {
	return t.Detach().as(shape.clone(), append([]int(nil), strides...), offset)
}

// pad2d returns a contiguous copy of the 4-D x with ph rows and pw columns
// of value added on each side.
func pad2d(x *Tensor, ph, pw int, value float64) *Tensor {
	n, c, h, w := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	xp := Full(Shape{n, c, h + 2*ph, w + 2*pw}, value, On(x.dev), Dtype(x.dtype))
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

func outSize(op string, in, k, s, p, d int) int {
	if s <= 0 || k <= 0 || d <= 0 || p < 0 {
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("invalid kernel %d, stride %d, padding %d or dilation %d", k, s, p, d)})
	}
	o := (in+2*p-d*(k-1)-1)/s + 1
	if in+2*p-d*(k-1)-1 < 0 || o <= 0 {
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("Calculated output size is too small (input %d, kernel %d, padding %d, dilation %d)", in, k, p, d)})
	}
	return o
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
// [O] or nil. It records ConvolutionBackward0.
func Conv2d(x, w, b *Tensor, stride, padding, dilation [2]int, groups int) *Tensor {
	const name = "conv2d"
	x4, undo := batched4d(name, x)
	w.live(name)
	sameDevice(name, x, w)
	if b != nil {
		sameDevice(name, x, b)
	}
	if w.Dim() != 4 || groups <= 0 {
		shapeErr(name, "expected a 4-D weight and groups > 0", w.shape)
	}
	if x.dtype != w.dtype || (b != nil && b.dtype != x.dtype) {
		panic(&DTypeError{Op: name, DTypes: []DType{x.dtype, w.dtype}, Msg: "Input type and weight type should be the same"})
	}
	n, c, h, wd := x4.shape[0], x4.shape[1], x4.shape[2], x4.shape[3]
	o, cg, kh, kw := w.shape[0], w.shape[1], w.shape[2], w.shape[3]
	if cg*groups != c || o%groups != 0 {
		shapeErr(name, fmt.Sprintf("expected input with %d channels and out channels divisible by groups=%d", cg*groups, groups), x.shape, w.shape)
	}
	if b != nil && !b.shape.Equal(Shape{o}) {
		shapeErr(name, "bias must have shape [out_channels]", b.shape)
	}
	oh := outSize(name, h, kh, stride[0], padding[0], dilation[0])
	ow := outSize(name, wd, kw, stride[1], padding[1], dilation[1])
	if cvr, ok := x.be().(backend.Convolver); ok && nativeKernels && x.dtype.IsFloat() {
		return undo(conv2dNative(cvr, x4, w, b, backend.Conv2dParams{Stride: stride, Padding: padding, Dilation: dilation, Groups: groups}, Shape{n, o, oh, ow}))
	}
	return undo(conv2dGeneric(x4, w, b, stride, padding, dilation, groups, oh, ow))
}

// nativeKernels lets tests turn the backends' optional kernels (Convolver,
// Pooler, BatchNormer) off, to compare them with the generic path.
var nativeKernels = true

// conv2dNative runs the convolution on the backend's Convolver kernels; the
// graph saves the input and the weight.
func conv2dNative(cvr backend.Convolver, x4, w, b *Tensor, p backend.Conv2dParams, oshape Shape) *Tensor {
	xd, wd := x4.Detach(), w.Detach().Contiguous()
	out := empty(oshape, x4.dtype, x4.dev)
	var bv backend.View
	if b != nil {
		bv = b.view()
	}
	cvr.Conv2d(out.view(), xd.view(), wd.view(), bv, p)
	return record("ConvolutionBackward0", out, []*Tensor{x4, w, b}, []*Tensor{x4, w}, func(gr *Tensor) []*Tensor {
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
	})
}

// conv2dGeneric builds the convolution from generic kernels: im2col by a
// strided copy, then MatMul.
func conv2dGeneric(x4, w, b *Tensor, stride, padding, dilation [2]int, groups, oh, ow int) *Tensor {
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
	out = record("ConvolutionBackward0", out, []*Tensor{x4, w, b}, []*Tensor{cols, wg}, func(gr *Tensor) []*Tensor {
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
	})
	return out
}

func poolArgs(op string, kernel, stride, padding [2]int) [2]int {
	if stride[0] == 0 && stride[1] == 0 {
		stride = kernel // PyTorch's default stride is the kernel size
	}
	for i := 0; i < 2; i++ {
		if padding[i]*2 > kernel[i] {
			panic(&ShapeError{Op: op, Msg: fmt.Sprintf("pad should be at most half of effective kernel size, but got pad=%d, kernel_size=%d", padding[i], kernel[i])})
		}
	}
	return stride
}

// MaxPool2d is torch.nn.functional.max_pool2d over [N, C, H, W] (or
// [C, H, W]); a zero stride means the kernel size, as PyTorch's default.
// Padding counts as -inf. The gradient goes to the first maximum of each
// window, as PyTorch routes it. It records MaxPool2DWithIndicesBackward0.
func MaxPool2d(x *Tensor, kernel, stride, padding [2]int) *Tensor {
	const name = "max_pool2d"
	x4, undo := batched4d(name, x)
	stride = poolArgs(name, kernel, stride, padding)
	n, c, h, wd := x4.shape[0], x4.shape[1], x4.shape[2], x4.shape[3]
	oh := outSize(name, h, kernel[0], stride[0], padding[0], 1)
	ow := outSize(name, wd, kernel[1], stride[1], padding[1], 1)
	if pl, ok := x.be().(backend.Pooler); ok && nativeKernels && x.dtype.IsFloat() {
		p := backend.Pool2dParams{Kernel: kernel, Stride: stride, Padding: padding}
		out := empty(Shape{n, c, oh, ow}, x.dtype, x.dev)
		if !needsGrad(x4) {
			pl.MaxPool2d(out.view(), backend.View{}, x4.view(), p)
			return undo(out)
		}
		idx := empty(Shape{n, c, oh, ow}, Int64, x.dev)
		pl.MaxPool2d(out.view(), idx.view(), x4.view(), p)
		return undo(record("MaxPool2DWithIndicesBackward0", out, []*Tensor{x4}, []*Tensor{idx}, func(g *Tensor) []*Tensor {
			gx := empty(x4.shape, x4.dtype, x4.dev)
			pl.MaxPool2dBackward(gx.view(), g.view(), idx.view())
			return []*Tensor{gx}
		}))
	}
	xp := pad2d(x4.Detach(), padding[0], padding[1], math.Inf(-1))
	win := window{n: n, c: c, hp: xp.shape[2], wp: xp.shape[3], kh: kernel[0], kw: kernel[1], oh: oh, ow: ow, stride: stride, dil: [2]int{1, 1}}
	kk := kernel[0] * kernel[1]
	flat := win.view(xp).Contiguous().View(n, c, oh, ow, kk)
	out, idx := flat.MaxDim(4, false)
	out = record("MaxPool2DWithIndicesBackward0", out, []*Tensor{x4}, []*Tensor{idx}, func(g *Tensor) []*Tensor {
		mask := oneHot(idx.Unsqueeze(4), 4, kk)
		gwin := Where(mask, g.Unsqueeze(4), zeroLike(g)).View(n, c, oh, ow, kernel[0], kernel[1])
		return []*Tensor{win.scatter(x.dev, x.dtype, padding, h, wd, func(i, j int) *Tensor {
			return gwin.Select(4, i).Select(4, j)
		})}
	})
	return undo(out)
}

// AvgPool2d is torch.nn.functional.avg_pool2d over [N, C, H, W] (or
// [C, H, W]); a zero stride means the kernel size. countIncludePad divides
// by the whole window, else by its part inside the input. It records
// AvgPool2DBackward0.
func AvgPool2d(x *Tensor, kernel, stride, padding [2]int, countIncludePad bool) *Tensor {
	const name = "avg_pool2d"
	x4, undo := batched4d(name, x)
	stride = poolArgs(name, kernel, stride, padding)
	n, c, h, wd := x4.shape[0], x4.shape[1], x4.shape[2], x4.shape[3]
	oh := outSize(name, h, kernel[0], stride[0], padding[0], 1)
	ow := outSize(name, wd, kernel[1], stride[1], padding[1], 1)
	xd := x4.Detach()
	if !xd.dtype.IsFloat() {
		panic(&DTypeError{Op: name, DTypes: []DType{xd.dtype}, Msg: "avg_pool2d needs a floating dtype"})
	}
	if pl, ok := x.be().(backend.Pooler); ok && nativeKernels {
		p := backend.Pool2dParams{Kernel: kernel, Stride: stride, Padding: padding}
		out := empty(Shape{n, c, oh, ow}, x.dtype, x.dev)
		pl.AvgPool2d(out.view(), xd.view(), p, countIncludePad)
		return undo(record("AvgPool2DBackward0", out, []*Tensor{x4}, nil, func(g *Tensor) []*Tensor {
			gx := empty(x4.shape, x4.dtype, x4.dev)
			pl.AvgPool2dBackward(gx.view(), g.view(), p, countIncludePad)
			return []*Tensor{gx}
		}))
	}
	xp := pad2d(xd, padding[0], padding[1], 0)
	win := window{n: n, c: c, hp: xp.shape[2], wp: xp.shape[3], kh: kernel[0], kw: kernel[1], oh: oh, ow: ow, stride: stride, dil: [2]int{1, 1}}
	sum := win.view(xp).Sum(Dims(4, 5))
	var div *Tensor
	if countIncludePad {
		div = Full(Shape{}, float64(kernel[0]*kernel[1]), On(x.dev), Dtype(x.dtype))
	} else {
		ones := pad2d(Ones(Shape{1, 1, h, wd}, On(x.dev), Dtype(x.dtype)), padding[0], padding[1], 0)
		w1 := win
		w1.n, w1.c = 1, 1
		div = w1.view(ones).Sum(Dims(4, 5))
	}
	out := sum.Div(div)
	out = record("AvgPool2DBackward0", out, []*Tensor{x4}, []*Tensor{div}, func(g *Tensor) []*Tensor {
		gd := g.Div(div)
		return []*Tensor{win.scatter(x.dev, x.dtype, padding, h, wd, func(i, j int) *Tensor { return gd })}
	})
	return undo(out)
}

// poolMatrix is the [out, in] matrix of adaptive average pooling along one
// dim: row i averages in[floor(i*in/out) : ceil((i+1)*in/out)].
func poolMatrix(in, out int, dt DType, dev Device) *Tensor {
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
	ph := poolMatrix(x4.shape[2], outH, x.dtype, x.dev)
	pw := poolMatrix(x4.shape[3], outW, x.dtype, x.dev)
	out := ph.MatMul(x4.Detach().MatMul(pw.T()))
	out = record("AdaptiveAvgPool2DBackward0", out, []*Tensor{x4}, nil, func(g *Tensor) []*Tensor {
		return []*Tensor{ph.T().MatMul(g.MatMul(pw))}
	})
	return undo(out)
}

// BatchNorm is torch.nn.functional.batch_norm over [N, C, ...]. In training
// it normalises with the batch's mean and biased variance and, when the
// running statistics are given, updates them in place:
// running = (1-momentum)*running + momentum*batch, with the unbiased
// variance. Otherwise it uses the running statistics. weight and bias ([C])
// may be nil. It records NativeBatchNormBackward0.
func BatchNorm(x, runningMean, runningVar, weight, bias *Tensor, training bool, momentum, eps float64) *Tensor {
	const name = "batch_norm"
	x.live(name)
	if x.Dim() < 2 {
		shapeErr(name, "expected an input of at least 2 dims", x.shape)
	}
	if !x.dtype.IsFloat() {
		panic(&DTypeError{Op: name, DTypes: []DType{x.dtype}, Msg: "batch_norm needs a floating dtype"})
	}
	c := x.shape[1]
	bshape := make([]int, x.Dim())
	dims := []int{0}
	for i := range bshape {
		bshape[i] = 1
		if i >= 2 {
			dims = append(dims, i)
		}
	}
	bshape[1] = c
	for _, t := range []*Tensor{runningMean, runningVar, weight, bias} {
		if t != nil {
			sameDevice(name, x, t)
			if t.NumElements() != c {
				shapeErr(name, fmt.Sprintf("running stats, weight and bias must have %d elements", c), x.shape, t.shape)
			}
		}
	}
	cnt := x.NumElements() / c
	if training && cnt <= 1 {
		panic(&ShapeError{Op: name, Shapes: []Shape{x.shape}, Msg: fmt.Sprintf("Expected more than 1 value per channel when training, got input size %v", x.shape)})
	}
	if !training && (runningMean == nil || runningVar == nil) {
		panic(&ShapeError{Op: name, Msg: "running_mean and running_var must be defined in evaluation mode"})
	}
	if bn, ok := x.be().(backend.BatchNormer); ok && nativeKernels {
		return batchNormNative(bn, x, runningMean, runningVar, weight, bias, training, momentum, eps)
	}
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
	return record("NativeBatchNormBackward0", out, []*Tensor{x, weight, bias}, []*Tensor{xhat, invstd, wd}, func(g *Tensor) []*Tensor {
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
}

// updateRunning moves the running statistics (either may be nil) towards a
// batch's mean and biased variance v over cnt values per channel:
// running = (1−momentum)·running + momentum·batch, the variance unbiased.
func updateRunning(runningMean, runningVar, mean, v *Tensor, cnt int, momentum float64) {
	if runningMean != nil {
		runningMean.MulScalarInPlace(1-momentum).AddScaledInPlace(mean.Reshape(runningMean.shape...), momentum)
	}
	if runningVar != nil {
		unbiased := v.MulScalar(float64(cnt) / float64(cnt-1))
		runningVar.MulScalarInPlace(1-momentum).AddScaledInPlace(unbiased.Reshape(runningVar.shape...), momentum)
	}
}

// batchNormNative is BatchNorm on the backend's per-channel kernels: the
// statistics in one pass, the normalisation in one more; backward reads
// the saved input again (no normalised copy is kept).
func batchNormNative(bn backend.BatchNormer, x, runningMean, runningVar, weight, bias *Tensor, training bool, momentum, eps float64) *Tensor {
	c := x.shape[1]
	xc := x.Detach().Contiguous()
	perC := func(t *Tensor) *Tensor { return t.Detach().Cast(x.dtype).Reshape(c) }
	var mean, invstd *Tensor
	if training {
		mean = empty(Shape{c}, x.dtype, x.dev)
		v := empty(Shape{c}, x.dtype, x.dev)
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
	return record("NativeBatchNormBackward0", out, []*Tensor{x, weight, bias}, []*Tensor{x, weight}, func(g *Tensor) []*Tensor {
		gc := g.Contiguous()
		sumG := empty(Shape{c}, x.dtype, x.dev)
		sumGX := empty(Shape{c}, x.dtype, x.dev)
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
			gw = gradIf(weight, func() *Tensor { return sumGX.Mul(invstd).Reshape(weight.shape...) })
		}
		if bias != nil {
			gb = gradIf(bias, func() *Tensor { return sumG.Reshape(bias.shape...) })
		}
		return []*Tensor{gx, gw, gb}
	})
}

// LayerNorm is torch.nn.functional.layer_norm: x is normalised over its
// trailing dims normalizedShape (biased variance), then scaled by weight
// and shifted by bias (both of normalizedShape, or nil). It records
// NativeLayerNormBackward0.
func LayerNorm(x *Tensor, normalizedShape []int, weight, bias *Tensor, eps float64) *Tensor {
	const name = "layer_norm"
	x.live(name)
	k := len(normalizedShape)
	if k == 0 || k > x.Dim() || !Shape(x.shape[x.Dim()-k:]).Equal(Shape(normalizedShape)) {
		shapeErr(name, fmt.Sprintf("Given normalized_shape=%v, expected input with shape [*, %v]", Shape(normalizedShape), Shape(normalizedShape)), x.shape)
	}
	if !x.dtype.IsFloat() {
		panic(&DTypeError{Op: name, DTypes: []DType{x.dtype}, Msg: "layer_norm needs a floating dtype"})
	}
	for _, t := range []*Tensor{weight, bias} {
		if t != nil {
			sameDevice(name, x, t)
			if !t.shape.Equal(Shape(normalizedShape)) {
				shapeErr(name, "weight and bias must have normalized_shape", t.shape)
			}
		}
	}
	dims := make([]int, k)
	for i := range dims {
		dims[i] = x.Dim() - k + i
	}
	xd := x.Detach()
	mean := xd.Mean(Dims(dims...), KeepDim())
	dev := xd.Sub(mean)
	invstd := dev.Mul(dev).Mean(Dims(dims...), KeepDim()).AddScalar(eps).Rsqrt()
	xhat := dev.Mul(invstd)
	out := xhat
	var wd *Tensor
	if weight != nil {
		wd = weight.Detach()
		out = out.Mul(wd)
	}
	if bias != nil {
		out = out.Add(bias.Detach())
	}
	return record("NativeLayerNormBackward0", out, []*Tensor{x, weight, bias}, []*Tensor{xhat, invstd, wd}, func(g *Tensor) []*Tensor {
		gx := gradIf(x, func() *Tensor {
			gh := g
			if wd != nil {
				gh = g.Mul(wd)
			}
			m1 := gh.Mean(Dims(dims...), KeepDim())
			m2 := gh.Mul(xhat).Mean(Dims(dims...), KeepDim())
			return gh.Sub(m1).Sub(xhat.Mul(m2)).Mul(invstd)
		})
		// the engine sums these over the leading dims to normalizedShape
		return []*Tensor{gx, g.Mul(xhat), g}
	})
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
