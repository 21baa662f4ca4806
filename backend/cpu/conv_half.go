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
		convGradWeightWidened(cv, f, x, data[backend.BF16](gout))
	}
	gemm.RoundBF16(halfBits(data[backend.BF16](gw)), f)
}

// convGradWeightWidened is the float32 weight gradient of widened copies
// of x and gout (Copy's conversion loops), a chunk of images at a time
// (about gradChunkBytes of float32 gout), so that the copies stay in the
// caches; the chunks' gradients are added in float32 (SimpleCNN's first
// layer, 64 images of 1 channel: ~1.6 → ~1.25 ms on one or two cores).
func convGradWeightWidened(cv gemm.Conv, f []float32, x backend.View, gout []backend.BF16) {
	l, xi := cv.O*cv.OH*cv.OW, cv.C*cv.H*cv.W
	per := max(1, min(cv.N, gradChunkBytes/(4*l)))
	xs := newStorage(backend.Float32, per*xi)
	defer xs.Release()
	gs := newStorage(backend.Float32, per*l)
	defer gs.Release()
	var part []float32
	if per < cv.N {
		ps := newStorage(backend.Float32, len(f))
		defer ps.Release()
		part = slice[float32](ps)
	}
	for n0 := 0; n0 < cv.N; n0 += per {
		cc := cv
		cc.N = min(per, cv.N-n0)
		xv := x
		xv.Offset += n0 * x.Strides[0]
		xv.Shape = []int{cc.N, cv.C, cv.H, cv.W}
		copyTo[float32](backend.View{S: xs, Shape: xv.Shape, Strides: backend.ContiguousStrides(xv.Shape)}, xv)
		g := slice[float32](gs)[:cc.N*l]
		vec.F32FromBF16(g, gout[n0*l:][:len(g)])
		dst := f
		if n0 > 0 {
			dst = part
		}
		gemm.ConvGradWeight(cc, slice[float32](xs), [4]int{xi, cv.H * cv.W, cv.W, 1}, g, dst)
		if n0 > 0 {
			vec.Binary(vec.Add, f, f, part)
		}
	}
}

// gradChunkBytes bounds the float32 output gradient that
// convGradWeightWidened widens at a time (at least one image).
var gradChunkBytes = 256 << 10
