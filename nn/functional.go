package nn

import (
	"fmt"
	"math"

	"github.com/emberml/ember"
)

// The functional forms below are built from ember's tensor ops (views,
// Stack, MatMul, reductions), so they run on any device and differentiate
// through whatever those ops record.

// pad2d zero-pads (or fills with v) the last two dims of x by p on each side.
func pad2d(x *ember.Tensor, p int, v float64) *ember.Tensor {
	if p == 0 {
		return x
	}
	s := x.Shape()
	n, c, h, w := s[0], s[1], s[2], s[3]
	opts := []ember.Option{ember.On(x.Device()), ember.Dtype(x.DType())}
	side := ember.Full(ember.Shape{n, c, h, p}, v, opts...)
	x = ember.Cat([]*ember.Tensor{side, x, side}, 3)
	top := ember.Full(ember.Shape{n, c, p, w + 2*p}, v, opts...)
	return ember.Cat([]*ember.Tensor{top, x, top}, 2)
}

func outSize(in, k, stride, pad, dil int, op string) int {
	o := (in+2*pad-dil*(k-1)-1)/stride + 1
	if o <= 0 {
		panic(fmt.Sprintf("nn.%s: input size %d too small for kernel %d (padding %d, dilation %d)", op, in, k, pad, dil))
	}
	return o
}

// windows returns the k×k strided windows of a padded [N, C, H, W] tensor,
// each [N, C, OH, OW], in row-major kernel order.
func windows(x *ember.Tensor, k, stride, dil, oh, ow int) []*ember.Tensor {
	var out []*ember.Tensor
	for i := 0; i < k; i++ {
		rows := x.Slice(2, i*dil, i*dil+stride*(oh-1)+1, stride)
		for j := 0; j < k; j++ {
			out = append(out, rows.Slice(3, j*dil, j*dil+stride*(ow-1)+1, stride))
		}
	}
	return out
}

func need4(op string, x *ember.Tensor) {
	if x.Dim() != 4 {
		panic(&ember.ShapeError{Op: op, Shapes: []ember.Shape{x.Shape()}, Msg: "expected a 4-D [N, C, H, W] input"})
	}
}

// conv2d is torch.nn.functional.conv2d with square kernels and groups=1.
func conv2d(x, w, b *ember.Tensor, stride, pad, dil int) *ember.Tensor {
	need4("conv2d", x)
	ws := w.Shape()
	o, c, k := ws[0], ws[1], ws[2]
	if x.Size(1) != c {
		panic(&ember.ShapeError{Op: "conv2d", Shapes: []ember.Shape{x.Shape(), ws}, Msg: fmt.Sprintf("expected input with %d channels, got %d", c, x.Size(1))})
	}
	n := x.Size(0)
	oh := outSize(x.Size(2), k, stride, pad, dil, "Conv2d")
	ow := outSize(x.Size(3), k, stride, pad, dil, "Conv2d")
	xp := pad2d(x, pad, 0)
	var cols *ember.Tensor
	if k == 1 {
		cols = windows(xp, 1, stride, dil, oh, ow)[0].Reshape(n, c, oh*ow)
	} else {
		cols = ember.Stack(windows(xp, k, stride, dil, oh, ow), 2).Reshape(n, c*k*k, oh*ow)
	}
	y := w.Reshape(o, c*k*k).MatMul(cols).Reshape(n, o, oh, ow)
	if b != nil {
		y = y.Add(b.Reshape(1, o, 1, 1))
	}
	return y
}

func maxPool2d(x *ember.Tensor, k, stride, pad int) *ember.Tensor {
	need4("max_pool2d", x)
	oh := outSize(x.Size(2), k, stride, pad, 1, "MaxPool2d")
	ow := outSize(x.Size(3), k, stride, pad, 1, "MaxPool2d")
	ws := windows(pad2d(x, pad, math.Inf(-1)), k, stride, 1, oh, ow)
	y := ws[0]
	for _, v := range ws[1:] {
		y = y.Maximum(v)
	}
	return y
}

func avgPool2d(x *ember.Tensor, k, stride, pad int) *ember.Tensor {
	need4("avg_pool2d", x)
	oh := outSize(x.Size(2), k, stride, pad, 1, "AvgPool2d")
	ow := outSize(x.Size(3), k, stride, pad, 1, "AvgPool2d")
	ws := windows(pad2d(x, pad, 0), k, stride, 1, oh, ow)
	y := ws[0]
	for _, v := range ws[1:] {
		y = y.Add(v)
	}
	return y.DivScalar(float64(k * k)) // count_include_pad=True, as PyTorch's default
}

func adaptiveAvgPool2d(x *ember.Tensor, oh, ow int) *ember.Tensor {
	need4("adaptive_avg_pool2d", x)
	h, w := x.Size(2), x.Size(3)
	if oh == 1 && ow == 1 {
		return x.Mean(ember.Dims(2, 3), ember.KeepDim())
	}
	rows := make([]*ember.Tensor, oh)
	for i := 0; i < oh; i++ {
		r0, r1 := i*h/oh, ((i+1)*h+oh-1)/oh
		cols := make([]*ember.Tensor, ow)
		for j := 0; j < ow; j++ {
			c0, c1 := j*w/ow, ((j+1)*w+ow-1)/ow
			cols[j] = x.Narrow(2, r0, r1-r0).Narrow(3, c0, c1-c0).Mean(ember.Dims(2, 3), ember.KeepDim())
		}
		rows[i] = ember.Cat(cols, 3)
	}
	return ember.Cat(rows, 2)
}

// batchNorm normalises over every dim but 1. In training it uses the batch
// statistics and updates the running ones in place of the buffers.
func batchNorm(x *ember.Tensor, rm, rv **ember.Tensor, w, b *ember.Tensor, training bool, momentum, eps float64) *ember.Tensor {
	dims := []int{0}
	for d := 2; d < x.Dim(); d++ {
		dims = append(dims, d)
	}
	shape := make([]int, x.Dim())
	for i := range shape {
		shape[i] = 1
	}
	shape[1] = x.Size(1)
	var mean, inv *ember.Tensor
	if training || rm == nil || *rm == nil {
		mean = x.Mean(ember.Dims(dims...), ember.KeepDim())
		v := x.Var(ember.Dims(dims...), ember.KeepDim(), ember.Correction(0))
		inv = v.AddScalar(eps).Rsqrt()
		if rm != nil && *rm != nil {
			n := float64(x.NumElements() / x.Size(1))
			unb := v.Reshape(-1).MulScalar(n / math.Max(n-1, 1))
			*rm = detach(*rm).MulScalar(1 - momentum).Add(detach(mean.Reshape(-1)).MulScalar(momentum))
			*rv = detach(*rv).MulScalar(1 - momentum).Add(detach(unb).MulScalar(momentum))
		}
	} else {
		mean = (*rm).Reshape(shape...)
		inv = (*rv).Reshape(shape...).AddScalar(eps).Rsqrt()
	}
	y := x.Sub(mean).Mul(inv)
	if w != nil {
		y = y.Mul(w.Reshape(shape...))
	}
	if b != nil {
		y = y.Add(b.Reshape(shape...))
	}
	return y
}

// detach returns t's values without gradient history.
func detach(t *ember.Tensor) *ember.Tensor {
	if !t.RequiresGrad() {
		return t
	}
	return t.Clone().SetRequiresGrad(false)
}

func layerNorm(x *ember.Tensor, nd int, w, b *ember.Tensor, eps float64) *ember.Tensor {
	dims := make([]int, nd)
	for i := range dims {
		dims[i] = x.Dim() - nd + i
	}
	mean := x.Mean(ember.Dims(dims...), ember.KeepDim())
	v := x.Var(ember.Dims(dims...), ember.KeepDim(), ember.Correction(0))
	y := x.Sub(mean).Mul(v.AddScalar(eps).Rsqrt())
	if w != nil {
		y = y.Mul(w)
	}
	if b != nil {
		y = y.Add(b)
	}
	return y
}

// oneHot returns a float tensor of target's shape plus a last dim of n.
func oneHot(target *ember.Tensor, n int, dt ember.DType) *ember.Tensor {
	cls := ember.Arange(0, float64(n), 1, ember.On(target.Device()), ember.Dtype(target.DType()))
	return target.Unsqueeze(-1).Eq(cls).Cast(dt)
}
