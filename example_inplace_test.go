package ember_test

import (
	"fmt"

	"github.com/emberml/ember"
)

// Filling a buffer row by row with results of a graph (PyTorch's
// out[t] = h): each write through a view is recorded on the buffer
// (CopySlices), and the gradient reaches what was written.
func ExampleTensor_CopyFrom() {
	x := ember.FromSlice([]float32{1, 2, 3}, nil).SetRequiresGrad(true)
	out := ember.Zeros(ember.Shape{2, 3})
	out.Select(0, 0).CopyFrom(x.MulScalar(2))
	out.Select(0, 1).CopyFrom(x.Mul(x))
	out.Sum().Backward()
	fmt.Println(out.GradFn(), x.Grad().Float32s()) // d/dx (2x + x²) = 2 + 2x
	// Output: CopySlices [4 6 8]
}
