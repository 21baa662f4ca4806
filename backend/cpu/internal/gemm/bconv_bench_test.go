package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkConvBF16 times ConvForwardBF16 against the float32 ConvForward
// on ResNet-18's layers at batch 16 and SimpleCNN's at batch 64 (sub-
// benchmarks bf16/NAME and f32/NAME).
func BenchmarkConvBF16(b *testing.B) {
	for _, s := range []struct {
		name                 string
		n, c, h, o, k, st, p int
	}{
		{"r18_conv1", 16, 3, 224, 64, 7, 2, 3},
		{"r18_l1", 16, 64, 56, 64, 3, 1, 1},
		{"r18_l2a", 16, 64, 56, 128, 3, 2, 1},
		{"r18_l2", 16, 128, 28, 128, 3, 1, 1},
		{"r18_l2ds", 16, 64, 56, 128, 1, 2, 0},
		{"r18_l3", 16, 256, 14, 256, 3, 1, 1},
		{"r18_l4", 16, 512, 7, 512, 3, 1, 1},
		{"cnn_conv1", 64, 1, 28, 32, 3, 1, 1},
		{"cnn_conv2", 64, 32, 14, 64, 3, 1, 1},
	} {
		cv := Conv{N: s.n, C: s.c, H: s.h, W: s.h, O: s.o, KH: s.k, KW: s.k, G: 1, SH: s.st, SW: s.st, PH: s.p, PW: s.p, DH: 1, DW: 1}
		cv.OH = OutSize(cv.H, cv.KH, cv.SH, cv.PH, cv.DH)
		cv.OW = cv.OH
		r := rand.New(rand.NewPCG(1, 2))
		x := randBF(r, cv.N*cv.C*cv.H*cv.W)
		w := randBF(r, cv.O*cv.C*cv.KH*cv.KW)
		bias := randBF(r, cv.O)
		xs := [4]int{cv.C * cv.H * cv.W, cv.H * cv.W, cv.W, 1}
		flops := 2 * float64(cv.N*cv.O*cv.OH*cv.OW) * float64(cv.C*cv.KH*cv.KW)
		out := make([]uint16, cv.N*cv.O*cv.OH*cv.OW)
		b.Run("bf16/"+s.name, func(b *testing.B) {
			c0 := cpuTime()
			for b.Loop() {
				ConvForwardBF16(cv, x, xs, w, bias, out)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
		})
		f := func(s []uint16) []float32 {
			d := make([]float32, len(s))
			for i, v := range s {
				d[i] = math.Float32frombits(uint32(v) << 16)
			}
			return d
		}
		xf, wf, bf := f(x), f(w), f(bias)
		of := make([]float32, len(out))
		b.Run("f32/"+s.name, func(b *testing.B) {
			for b.Loop() {
				ConvForward(cv, xf, xs, wf, bf, of)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkPackPairWeights packs ResNet-18's layer-4 3×3 weight (512→512)
// as its bfloat16 convolution does, on one goroutine.
func BenchmarkPackPairWeights(b *testing.B) {
	defer SetThreads(0)
	SetThreads(1)
	cv := Conv{N: 1, C: 512, H: 7, W: 7, O: 512, KH: 3, KW: 3, G: 1, SH: 1, SW: 1, DH: 1, DW: 1}
	r := rand.New(rand.NewPCG(1, 2))
	w, bias := randBF(r, 512*512*9), randBF(r, 512)
	dst := make([]uint32, 518*(256*9+1))
	for b.Loop() {
		packPairWeights(dst, cv, 256, w, bias, 14, 14, 768, current.Load().b != nil && current.Load().b.simdPack)
	}
}
