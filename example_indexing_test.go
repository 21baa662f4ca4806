package ember_test

import (
	"fmt"

	"github.com/emberml/ember"
)

// x[x > 0], x[idx], flip and tolist, as in PyTorch.
func ExampleTensor_IndexWith() {
	x := ember.FromSlice([]int{3, -1, 0, 5, -2, 7}, ember.Shape{2, 3})
	fmt.Println(x.IndexWith(x.GtScalar(0)))                                                         // x[x > 0]
	fmt.Println(x.IndexWith(ember.FromSlice([]int{1, 1, 0}, nil)))                                  // x[[1, 1, 0]]
	fmt.Println(x.IndexWith(ember.FromSlice([]int{0, 1}, nil), ember.FromSlice([]int{2, -1}, nil))) // x[[0, 1], [2, -1]]
	fmt.Println(x.Flip(1).ToList())
	// Output:
	// tensor([3, 5, 7])
	// tensor([[ 5, -2,  7],
	//         [ 5, -2,  7],
	//         [ 3, -1,  0]])
	// tensor([0, 7])
	// [[0 -1 3] [7 -2 5]]
}
