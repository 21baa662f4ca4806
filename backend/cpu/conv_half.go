package cpu

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/gemm"
	"github.com/emberml/ember/backend/cpu/internal/vec"
)

// bfloat16 convolutions. The forward runs on the bfloat16 GEMM kernels
// (gemm.ConvForwardBF16: VDPBF16PS where the CPU has AVX512_BF16), each
// output a float32 sum of exact products and the bias, rounded once; so
// does the input gradient of a stride-1 convolution
// (gemm.ConvGradInputBF16). The other gradients widen their operands to
// float32, run the float32 kernels and round once: what ember computes for
// a bfloat16 convolution on a backend without bfloat16 kernels (float32
// on the rounded inputs).

func conv2dBF16(cv gemm.Conv, out, x, w, bias backend.View) {
	gemm.ConvForwardBF16(cv, halfBits(data[backend.BF16](x)), strides4(x), halfBits(data[backend.BF16](w)),
		halfBits(vector[backend.BF16](bias)), halfBits(data[backend.BF16](out)))
}

func conv2dGradInputBF16(cv gemm.Conv, gx, gout, w backend.View) {
	gemm.ConvGradInputBF16(cv, halfBits(data[backend.BF16](gout)), halfBits(data[backend.BF16](w)), halfBits(data[backend.BF16](gx)))
}

func conv2dGradWeightBF16(cv gemm.Conv, gw, x, gout backend.View) {
	// x widened into a contiguous float32 copy (Copy's conversion loops)
	xs := newStorage(backend.Float32, cv.N*cv.C*cv.H*cv.W)
	defer xs.Release()
	copyTo[float32](backend.View{S: xs, Shape: x.Shape, Strides: backend.ContiguousStrides(x.Shape)}, x)
	xf := slice[float32](xs)
	g := widenBF16(data[backend.BF16](gout)[:cv.N*cv.O*cv.OH*cv.OW])
	f := make([]float32, cv.O*cv.C/cv.G*cv.KH*cv.KW)
	gemm.ConvGradWeight(cv, xf, [4]int{cv.C * cv.H * cv.W, cv.H * cv.W, cv.W, 1}, g, f)
	gemm.RoundBF16(halfBits(data[backend.BF16](gw)), f)
}

// widenBF16 returns s as float32 (exact).
func widenBF16(s []backend.BF16) []float32 {
	f := make([]float32, len(s))
	vec.F32FromBF16(f, s)
	return f
}
