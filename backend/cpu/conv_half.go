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
// (gemm.ConvGradInputBF16) and the weight gradient where the float32 one
// would be a GEMM (gemm.ConvGradWeightBF16: 16 or more channels per group, 128 or more
// weights per output channel).
// The other gradients widen their operands to float32, run the float32
// kernels and round once: what ember computes for a bfloat16 convolution
// on a backend without bfloat16 kernels (float32 on the rounded inputs).

func conv2dBF16(cv gemm.Conv, out, x, w, bias backend.View) {
	gemm.ConvForwardBF16(cv, halfBits(data[backend.BF16](x)), strides4(x), halfBits(data[backend.BF16](w)),
		halfBits(vector[backend.BF16](bias)), halfBits(data[backend.BF16](out)))
}

func conv2dGradInputBF16(cv gemm.Conv, gx, gout, w backend.View) {
	gemm.ConvGradInputBF16(cv, halfBits(data[backend.BF16](gout)), halfBits(data[backend.BF16](w)), halfBits(data[backend.BF16](gx)))
}

func conv2dGradWeightBF16(cv gemm.Conv, gw, x, gout backend.View) {
	nw := cv.O * cv.C / cv.G * cv.KH * cv.KW
	fs := newStorage(backend.Float32, nw)
	defer fs.Release()
	f := slice[float32](fs)
	gb := halfBits(data[backend.BF16](gout)[:cv.N*cv.O*cv.OH*cv.OW])
	if !gemm.ConvGradWeightBF16(cv, halfBits(data[backend.BF16](x)), strides4(x), gb, f) {
		// x and gout widened into float32 copies (Copy's conversion loops)
		xs := newStorage(backend.Float32, cv.N*cv.C*cv.H*cv.W)
		defer xs.Release()
		copyTo[float32](backend.View{S: xs, Shape: x.Shape, Strides: backend.ContiguousStrides(x.Shape)}, x)
		gs := newStorage(backend.Float32, len(gb))
		defer gs.Release()
		g := slice[float32](gs)
		vec.F32FromBF16(g, data[backend.BF16](gout)[:len(g)])
		gemm.ConvGradWeight(cv, slice[float32](xs), [4]int{cv.C * cv.H * cv.W, cv.H * cv.W, cv.W, 1}, g, f)
	}
	gemm.RoundBF16(halfBits(data[backend.BF16](gw)), f)
}
