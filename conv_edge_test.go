package ember

import (
	"runtime"
	"testing"

	"github.com/emberml/ember/internal/testenv"
)

// TestConv1d checks torch.nn.functional.conv1d's arithmetic worked by
// hand: stride and padding, then groups and dilation with a bias, and the
// weight's gradient.
func TestConv1d(t *testing.T) {
	for _, dev := range testDevices() {
		// [1 2 3 4 5] padded to [0 1 2 3 4 5 0], windows at 0, 2, 4 of
		// [1 0 -1]: 0-2, 2-4, 4-0
		x := FromSlice([]float64{1, 2, 3, 4, 5}, Shape{1, 1, 5}, On(dev))
		w := FromSlice([]float64{1, 0, -1}, Shape{1, 1, 3}, On(dev), WithGrad())
		y := Conv1d(x, w, nil, 2, 1, 1, 1)
		wantGrad(t, "conv1d", y, []float64{-2, -2, 4})
		if !y.Shape().Equal(Shape{1, 1, 3}) || y.GradFn() != "ConvolutionBackward0" {
			t.Fatalf("conv1d: shape %v, grad_fn %q", y.Shape(), y.GradFn())
		}
		y.Sum().Backward()
		// each tap summed over the windows: 0+2+4, 1+3+5, 2+4+0
		wantGrad(t, "conv1d weight", w.Grad(), []float64{6, 9, 6})

		// unbatched, two groups, dilation 2, bias: channel 0 [1 2 3 4]
		// with [1 1] at i, i+2 → [4 6]; channel 1 [1 1 1 1] with [2 -1]
		// → [1 1]; plus 10 and 20
		x = FromSlice([]float64{1, 2, 3, 4, 1, 1, 1, 1}, Shape{2, 4}, On(dev))
		w = FromSlice([]float64{1, 1, 2, -1}, Shape{2, 1, 2}, On(dev))
		b := FromSlice([]float64{10, 20}, Shape{2}, On(dev))
		y = Conv1d(x, w, b, 1, 0, 2, 2)
		if !y.Shape().Equal(Shape{2, 2}) {
			t.Fatalf("unbatched conv1d: shape %v", y.Shape())
		}
		wantGrad(t, "conv1d groups", y, []float64{14, 16, 21, 21})
	}
	testenv.Raises[*ShapeError](t, "4-D input", func() { Conv1d(Ones(Shape{1, 1, 1, 3}), Ones(Shape{1, 1, 1}), nil, 1, 0, 1, 1) })
	testenv.Raises[*ShapeError](t, "2-D weight", func() { Conv1d(Ones(Shape{1, 1, 3}), Ones(Shape{1, 1}), nil, 1, 0, 1, 1) })
	testenv.Raises[*ShapeError](t, "channels", func() { Conv1d(Ones(Shape{1, 2, 3}), Ones(Shape{1, 1, 1}), nil, 1, 0, 1, 1) })
}

// TestConv2dHugeStrideMemory: the CPU convolution's phase table was sized
// by the stride (a map of 2^22 entries, gigabytes at 2^31); a huge stride
// now costs what a small one does.
func TestConv2dHugeStrideMemory(t *testing.T) {
	x := Ones(Shape{1, 2, 4, 4})
	w := Ones(Shape{2, 2, 1, 1})
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	y := Conv2d(x, w, nil, [2]int{1 << 22, 1 << 22}, [2]int{}, [2]int{1, 1}, 1)
	runtime.ReadMemStats(&m1)
	wantGrad(t, "conv2d huge stride", y, []float64{2, 2})
	if a := m1.TotalAlloc - m0.TotalAlloc; a > 8<<20 {
		t.Fatalf("a 1×1 convolution with stride 2^22 allocated %d MiB", a>>20)
	}
}
