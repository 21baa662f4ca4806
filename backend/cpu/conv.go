package cpu

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/gemm"
)

// The CPU backend's convolutions are implicit GEMMs on the assembly GEMM's
// micro-kernels (see package gemm): no im2col buffer. float32 and float64,
// and bfloat16 (conv_half.go).

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

// ConvsHalf reports that the convolutions take bfloat16 (conv_half.go);
// float16 is left to the caller's float32 copies.
func (Backend) ConvsHalf(dt backend.DType) bool { return dt == backend.BFloat16 }

// Conv2d is the convolution's forward pass.
func (Backend) Conv2d(out, x, w, bias backend.View, p backend.Conv2dParams) {
	cv := convOf(x.Shape, w.Shape, p)
	if x.S.DType() == backend.BFloat16 {
		conv2dBF16(cv, out, x, w, bias)
		return
	}
	floatKernel("conv2d", x.S.DType(), func() { convForward[float32](cv, out, x, w, bias) }, func() { convForward[float64](cv, out, x, w, bias) })
}

// Conv2dGradInput is the gradient of the convolution's input.
func (Backend) Conv2dGradInput(gx, gout, w backend.View, p backend.Conv2dParams) {
	cv := convOf(gx.Shape, w.Shape, p)
	if gx.S.DType() == backend.BFloat16 {
		conv2dGradInputBF16(cv, gx, gout, w)
		return
	}
	floatKernel("conv2d backward", gx.S.DType(),
		func() { gemm.ConvGradInput(cv, data[float32](gout), data[float32](w), data[float32](gx)) },
		func() { gemm.ConvGradInput(cv, data[float64](gout), data[float64](w), data[float64](gx)) })
}

// Conv2dGradWeight is the gradient of the convolution's weight.
func (Backend) Conv2dGradWeight(gw, x, gout backend.View, p backend.Conv2dParams) {
	cv := convOf(x.Shape, gw.Shape, p)
	if x.S.DType() == backend.BFloat16 {
		conv2dGradWeightBF16(cv, gw, x, gout)
		return
	}
	floatKernel("conv2d backward", x.S.DType(),
		func() { gemm.ConvGradWeight(cv, data[float32](x), strides4(x), data[float32](gout), data[float32](gw)) },
		func() { gemm.ConvGradWeight(cv, data[float64](x), strides4(x), data[float64](gout), data[float64](gw)) })
}

func convForward[T float32 | float64](cv gemm.Conv, out, x, w, bias backend.View) {
	gemm.ConvForward(cv, data[T](x), strides4(x), data[T](w), vector[T](bias), data[T](out))
}

// floatKernel runs f32 or f64 by dtype; other dtypes are not implemented.
func floatKernel(op string, dt backend.DType, f32, f64 func()) {
	switch dt {
	case backend.Float32:
		f32()
	case backend.Float64:
		f64()
	default:
		notImpl(op, dt)
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
