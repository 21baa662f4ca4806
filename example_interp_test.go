package ember_test

import (
	"fmt"

	"github.com/emberml/ember"
)

// Interpolate is torch.nn.functional.interpolate: here a bilinear 2×
// upsample (align_corners=False), and align_corners=True to a 3×3 size.
func ExampleInterpolate() {
	x := ember.FromSlice([]float32{1, 2, 3, 4}, ember.Shape{1, 1, 2, 2})
	fmt.Println(ember.Interpolate(x, ember.InterpolateOptions{ScaleFactor: []float64{2}, Mode: "bilinear"}))
	fmt.Println(ember.Interpolate(x, ember.InterpolateOptions{Size: []int{3, 3}, Mode: "bilinear", AlignCorners: true}))
	// Output:
	// tensor([[[[1.0000, 1.2500, 1.7500, 2.0000],
	//           [1.5000, 1.7500, 2.2500, 2.5000],
	//           [2.5000, 2.7500, 3.2500, 3.5000],
	//           [3.0000, 3.2500, 3.7500, 4.0000]]]])
	// tensor([[[[1.0000, 1.5000, 2.0000],
	//           [2.0000, 2.5000, 3.0000],
	//           [3.0000, 3.5000, 4.0000]]]])
}

// Unfold (im2col) lays each 2×2 block of a 3×3 plane out as a column;
// PixelShuffle moves channels into space.
func ExampleUnfold() {
	x := ember.Arange(0, 9, 1, ember.Dtype(ember.Float32)).Reshape(1, 1, 3, 3)
	fmt.Println(ember.Unfold(x, [2]int{2, 2}, [2]int{1, 1}, [2]int{0, 0}, [2]int{1, 1}))
	fmt.Println(ember.PixelShuffle(ember.Arange(0, 8, 1, ember.Dtype(ember.Float32)).Reshape(1, 4, 1, 2), 2))
	// Output:
	// tensor([[[0., 1., 3., 4.],
	//          [1., 2., 4., 5.],
	//          [3., 4., 6., 7.],
	//          [4., 5., 7., 8.]]])
	// tensor([[[[0., 2., 1., 3.],
	//           [4., 6., 5., 7.]]]])
}
