package cpu

import (
	"testing"

	"github.com/emberml/ember/backend"
)

// BenchmarkMaxPool is ResNet-18's max pool at batch 16: 3×3, stride 2,
// padding 1, on 64×112×112 planes.
func BenchmarkMaxPool(b *testing.B) {
	var be Backend
	mk := func(dt backend.DType, shape ...int) backend.View {
		n := 1
		for _, d := range shape {
			n *= d
		}
		s, _ := be.Alloc(backend.Device{}, dt, n)
		return backend.View{S: s, Shape: shape, Strides: backend.ContiguousStrides(shape)}
	}
	x := mk(backend.Float32, 16, 64, 112, 112)
	be.Random(x, 1, 0, true)
	out := mk(backend.Float32, 16, 64, 56, 56)
	idx := mk(backend.Int64, 16, 64, 56, 56)
	p := backend.Pool2dParams{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}
	b.Run("indices", func(b *testing.B) {
		for b.Loop() {
			be.MaxPool2d(out, idx, x, p)
		}
	})
	b.Run("values", func(b *testing.B) {
		for b.Loop() {
			be.MaxPool2d(out, backend.View{}, x, p)
		}
	})
}
