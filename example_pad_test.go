package ember_test

import (
	"fmt"

	"github.com/emberml/ember"
)

// PadMode is torch.nn.functional.pad's modes: mirror about the edge, repeat
// it, or wrap around, here two before and one after the last dim.
func ExamplePadMode() {
	x := ember.FromSlice([]float32{1, 2, 3, 4}, ember.Shape{1, 1, 4})
	for _, mode := range []string{"reflect", "replicate", "circular"} {
		fmt.Println(ember.PadMode(x, []int{2, 1}, mode))
	}
	// Output:
	// tensor([[[3., 2., 1., 2., 3., 4., 3.]]])
	// tensor([[[1., 1., 1., 2., 3., 4., 4.]]])
	// tensor([[[3., 4., 1., 2., 3., 4., 1.]]])
}

// MaxPool2dWithIndices is return_indices=True: each maximum's place in
// its plane (h·W + w), which MaxUnpool2d writes the maxima back to.
// PoolDilation spreads a window's elements apart.
func ExampleMaxPool2dWithIndices() {
	x := ember.FromSlice([]float32{1, 5, 2, 0, 4, 3, 9, 1, 0, 7, 6, 8, 2, 1, 3, 4}, ember.Shape{1, 1, 4, 4})
	k := [2]int{2, 2}
	y, idx := ember.MaxPool2dWithIndices(x, k, k, [2]int{})
	fmt.Println(y)
	fmt.Println(idx)
	fmt.Println(ember.MaxUnpool2d(y, idx, k, k, [2]int{}))
	fmt.Println(ember.MaxPool2d(x, k, [2]int{1, 1}, [2]int{}, ember.PoolDilation(2)))
	// Output:
	// tensor([[[[5., 9.],
	//           [7., 8.]]]])
	// tensor([[[[ 1,  6],
	//           [ 9, 11]]]])
	// tensor([[[[0., 5., 0., 0.],
	//           [0., 0., 9., 0.],
	//           [0., 7., 0., 8.],
	//           [0., 0., 0., 0.]]]])
	// tensor([[[[6., 8.],
	//           [9., 4.]]]])
}
