package cpu

import (
	"syscall"
	"testing"
	"time"

	"github.com/emberml/ember/backend"
)

// benchView allocates a contiguous view.
func benchView(dt backend.DType, shape ...int) backend.View {
	n := 1
	for _, d := range shape {
		n *= d
	}
	s, _ := Backend{}.Alloc(backend.Device{}, dt, n)
	return backend.View{S: s, Shape: shape, Strides: backend.ContiguousStrides(shape)}
}

// benchHalf allocates a contiguous bfloat16 view of random values
// (Random's normal float32 values, seed 1, rounded).
func benchHalf(shape ...int) backend.View {
	var be Backend
	x32 := benchView(backend.Float32, shape...)
	be.Random(x32, 1, 0, true)
	x := benchView(backend.BFloat16, shape...)
	be.Copy(x, x32)
	return x
}

// cpuLoop runs f b.N times and reports the CPU time per run (cpu-ms/op),
// which says more than wall time on a loaded machine.
func cpuLoop(b *testing.B, f func()) {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	c0 := cpu()
	for b.Loop() {
		f()
	}
	b.ReportMetric(float64((cpu()-c0).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
}

// BenchmarkMaxPool is ResNet-18's max pool at batch 16: 3×3, stride 2,
// padding 1, on 64×112×112 planes; and SimpleCNN's first (2×2 on 32×28×28
// planes, batch 64).
func BenchmarkMaxPool(b *testing.B) {
	var be Backend
	mk := benchView
	x := mk(backend.Float32, 16, 64, 112, 112)
	be.Random(x, 1, 0, true)
	out := mk(backend.Float32, 16, 64, 56, 56)
	idx := mk(backend.Int64, 16, 64, 56, 56)
	p := backend.Pool2dParams{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}
	b.Run("indices", func(b *testing.B) {
		cpuLoop(b, func() { be.MaxPool2d(out, idx, x, p) })
	})
	b.Run("values", func(b *testing.B) {
		cpuLoop(b, func() { be.MaxPool2d(out, backend.View{}, x, p) })
	})
	x2 := mk(backend.Float32, 64, 32, 28, 28)
	be.Random(x2, 1, 0, true)
	out2, idx2 := mk(backend.Float32, 64, 32, 14, 14), mk(backend.Int64, 64, 32, 14, 14)
	p2 := backend.Pool2dParams{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}}
	b.Run("cnn", func(b *testing.B) {
		cpuLoop(b, func() { be.MaxPool2d(out2, idx2, x2, p2) })
	})
}

// BenchmarkChannelAffine is ResNet-18's first batch norm in eval mode at
// batch 16 (64×112×112 planes).
func BenchmarkChannelAffine(b *testing.B) {
	var be Backend
	mk := func(shape ...int) backend.View { return benchView(backend.Float32, shape...) }
	x, out := mk(16, 64, 112, 112), mk(16, 64, 112, 112)
	be.Random(x, 1, 0, true)
	sc, sh := mk(64), mk(64)
	be.Random(sc, 2, 0, false)
	be.Random(sh, 3, 0, false)
	cpuLoop(b, func() { be.ChannelAffine(out, x, sc, sh) })
}

// BenchmarkBatchNormTrain is SimpleCNN's first batch norm at batch 64
// (32×28×28 planes): statistics, normalisation, gradient sums and the
// input gradient.
func BenchmarkBatchNormTrain(b *testing.B) {
	var be Backend
	mk := func(shape ...int) backend.View { return benchView(backend.Float32, shape...) }
	x, g, out := mk(64, 32, 28, 28), mk(64, 32, 28, 28), mk(64, 32, 28, 28)
	be.Random(x, 1, 0, true)
	be.Random(g, 2, 0, true)
	m, v, s1, s2 := mk(32), mk(32), mk(32), mk(32)
	cpuLoop(b, func() {
		be.ChannelStats(m, v, x)
		be.ChannelAffine(out, x, m, v)
		be.ChannelGradSums(s1, s2, g, x, m)
		be.ChannelAffine2(out, g, x, m, v, s1)
	})
}

// BenchmarkMaxPoolHalf is SimpleCNN's first pool on bfloat16, forward
// with indices and backward.
func BenchmarkMaxPoolHalf(b *testing.B) {
	var be Backend
	x := benchHalf(64, 32, 28, 28)
	out, idx := benchView(backend.BFloat16, 64, 32, 14, 14), benchView(backend.Int64, 64, 32, 14, 14)
	p := backend.Pool2dParams{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}}
	b.Run("forward", func(b *testing.B) {
		cpuLoop(b, func() { be.MaxPool2d(out, idx, x, p) })
	})
	be.MaxPool2d(out, idx, x, p)
	gx := benchView(backend.BFloat16, 64, 32, 28, 28)
	b.Run("backward", func(b *testing.B) {
		cpuLoop(b, func() { be.MaxPool2dBackward(gx, out, idx) })
	})
}

// BenchmarkMaxPoolResNetHalf is ResNet-18's max pool at batch 16 on
// bfloat16 (3×3, stride 2, padding 1, 64×112×112 planes), values only as
// in inference.
func BenchmarkMaxPoolResNetHalf(b *testing.B) {
	var be Backend
	x := benchHalf(16, 64, 112, 112)
	out, idx := benchView(backend.BFloat16, 16, 64, 56, 56), benchView(backend.Int64, 16, 64, 56, 56)
	p := backend.Pool2dParams{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}
	b.Run("values", func(b *testing.B) {
		cpuLoop(b, func() { be.MaxPool2d(out, backend.View{}, x, p) })
	})
	b.Run("indices", func(b *testing.B) {
		cpuLoop(b, func() { be.MaxPool2d(out, idx, x, p) })
	})
}
