package ember_test

import (
	"fmt"

	"github.com/emberml/ember"
)

// Movedim moves dims to new places, the others keeping their order, as
// torch.movedim: channels-last to channels-first without naming every dim.
func ExampleTensor_Movedim() {
	img := ember.Zeros(ember.Shape{8, 32, 24, 3}) // N, H, W, C
	fmt.Println(img.Movedim([]int{-1}, []int{1}).Shape())
	fmt.Println(img.Movedim([]int{0, 3}, []int{3, 0}).Shape())
	// Output:
	// [8, 3, 32, 24]
	// [3, 32, 24, 8]
}

// Tensordot contracts the last n dims of a with the first n of b, or the
// listed pairs of dims, as torch.tensordot.
func ExampleTensordot() {
	a := ember.Arange(0, 6, 1, ember.Dtype(ember.Float32)).Reshape(2, 3)
	b := ember.Arange(0, 6, 1, ember.Dtype(ember.Float32)).Reshape(3, 2)
	fmt.Println(ember.Tensordot(a, b, 1))                            // a @ b
	fmt.Println(ember.TensordotDims(a, b, []int{0, 1}, []int{1, 0})) // trace of a @ b
	fmt.Println(ember.Tensordot(a.Select(0, 0), b.Select(1, 0), 0).Shape())
	// Output:
	// tensor([[10., 13.],
	//         [28., 40.]])
	// tensor(50.)
	// [3, 3]
}
