package ember_test

import (
	"fmt"

	"github.com/emberml/ember"
)

// AffineGrid and GridSample are a spatial transformer: theta translates
// by one pixel to the right (with align_corners, the 3 pixels of a row
// are 1 apart in [-1, 1]), and the grid reads zeros past the border.
// Gradients reach theta through the grid (the same values as PyTorch's).
func ExampleGridSample() {
	x := ember.Arange(0, 6, 1, ember.Dtype(ember.Float32)).Reshape(1, 1, 2, 3)
	theta := ember.FromSlice([]float32{1, 0, 1, 0, 1, 0}, ember.Shape{1, 2, 3}).SetRequiresGrad(true)
	grid := ember.AffineGrid(theta, []int{1, 1, 2, 3}, true)
	y := ember.GridSample(x, grid, ember.GridSampleOptions{AlignCorners: true})
	fmt.Println(y)
	y.Sum().Backward()
	fmt.Println(theta.Grad())
	// Output:
	// tensor([[[[1., 2., 0.],
	//           [4., 5., 0.]]]], grad_fn=<GridSampler2DBackward0>)
	// tensor([[[-2.0000, -3.0000, -5.0000],
	//          [ 0.5000, -7.5000, -1.5000]]])
}

// Checkpoint recomputes fn at the backward instead of keeping its
// intermediate results: the gradient is the same.
func ExampleCheckpoint() {
	x := ember.FromSlice([]float32{1, 2, 3}, ember.Shape{3}).SetRequiresGrad(true)
	y := ember.Checkpoint(func(in ...*ember.Tensor) *ember.Tensor {
		return in[0].Mul(in[0]).Sum()
	}, x)
	y.Backward()
	fmt.Println(y.Item(), x.Grad())
	// Output:
	// 14 tensor([2., 4., 6.])
}
