package cpu

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/gemm"
)

// The CPU backend's convolutions are implicit GEMMs on the assembly GEMM's
// micro-kernels (see package gemm): no im2col buffer.

var _ backend.Convolver = Backend{}

func convOf(x, w []int, p backend.Conv2dParams) gemm.Conv {
	cv := gemm.Conv{N: x[0], C: x[1], H: x[2], W: x[3], O: w[0], KH: w[2], KW: w[3], G: p.Groups,
		SH: p.Stride[0], SW: p.Stride[1], PH: p.Padding[0], PW: p.Padding[1], DH: p.Dilation[0], DW: p.Dilation[1]}
	cv.OH = gemm.OutSize(cv.H, cv.KH, cv.SH, cv.PH, cv.DH)
	cv.OW = gemm.OutSize(cv.W, cv.KW, cv.SW, cv.PW, cv.DW)
	return cv
}

// data returns the view's storage from its offset on.
func data[T any](v backend.View) []T { return slice[T](v.S)[v.Offset:] }

func strides4(v backend.View) [4]int { return [4]int(v.Strides) }

// Conv2d is the convolution's forward pass.
func (Backend) Conv2d(out, x, w, bias backend.View, p backend.Conv2dParams) {
	cv := convOf(x.Shape, w.Shape, p)
	switch x.S.DType() {
	case backend.Float32:
		gemm.ConvForward(cv, data[float32](x), strides4(x), data[float32](w), vector[float32](bias), data[float32](out))
	case backend.Float64:
		gemm.ConvForward(cv, data[float64](x), strides4(x), data[float64](w), vector[float64](bias), data[float64](out))
	default:
		notImpl("conv2d", x.S.DType())
	}
}

// Conv2dGradInput is the gradient of the convolution's input.
func (Backend) Conv2dGradInput(gx, gout, w backend.View, p backend.Conv2dParams) {
	cv := convOf(gx.Shape, w.Shape, p)
	switch gx.S.DType() {
	case backend.Float32:
		gemm.ConvGradInput(cv, data[float32](gout), data[float32](w), data[float32](gx))
	case backend.Float64:
		gemm.ConvGradInput(cv, data[float64](gout), data[float64](w), data[float64](gx))
	default:
		notImpl("conv2d backward", gx.S.DType())
	}
}

// Conv2dGradWeight is the gradient of the convolution's weight.
func (Backend) Conv2dGradWeight(gw, x, gout backend.View, p backend.Conv2dParams) {
	cv := convOf(x.Shape, gw.Shape, p)
	switch x.S.DType() {
	case backend.Float32:
		gemm.ConvGradWeight(cv, data[float32](x), strides4(x), data[float32](gout), data[float32](gw))
	case backend.Float64:
		gemm.ConvGradWeight(cv, data[float64](x), strides4(x), data[float64](gout), data[float64](gw))
	default:
		notImpl("conv2d backward", x.S.DType())
	}
}

// vector returns a 1-D view's elements as a slice (a copy when strided),
// or nil for a view without storage.
func vector[T any](v backend.View) []T {
	if v.S == nil {
		return nil
	}
	d := data[T](v)
	if v.Shape[0] <= 1 || v.Strides[0] == 1 {
		return d[:v.Shape[0]]
	}
	out := make([]T, v.Shape[0])
	for i := range out {
		out[i] = d[i*v.Strides[0]]
	}
	return out
}
