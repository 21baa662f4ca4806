package cpu_test

import (
	"fmt"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu"
)

// The CPU backend is a backend.Convolver: ember's Conv2d calls it for CPU
// tensors. Here a 2×2 kernel of ones sums each 2×2 window of a 3×3 image.
func ExampleBackend_Conv2d() {
	var be cpu.Backend
	view := func(data []float32, shape ...int) backend.View {
		s, _ := be.FromHost(backend.Device{Type: backend.CPUType}, data)
		return backend.View{S: s, Shape: shape, Strides: backend.ContiguousStrides(shape)}
	}
	x := view([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9}, 1, 1, 3, 3)
	w := view([]float32{1, 1, 1, 1}, 1, 1, 2, 2)
	out := view(make([]float32, 4), 1, 1, 2, 2)
	var cv backend.Convolver = be
	cv.Conv2d(out, x, w, backend.View{}, backend.Conv2dParams{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1})
	res := make([]float32, 4)
	be.ToHost(out.S, res)
	fmt.Println(res)
	// Output: [12 16 24 28]
}
