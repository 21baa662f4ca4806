package ember_test

import (
	"fmt"

	"github.com/emberml/ember"
)

// SplitSizes is torch.split with a list of sizes. In a graph the pieces
// are one op's outputs: backward runs once for all of them, with zeros
// for the piece the loss does not use.
func ExampleTensor_SplitSizes() {
	x := ember.FromSlice([]float32{0, 1, 2, 3, 4, 5}, ember.Shape{6}).SetRequiresGrad(true)
	p := x.SplitSizes([]int{1, 3, 2}, 0)
	fmt.Println(p[1], p[1].GradFn())
	p[0].MulScalar(2).Sum().Add(p[1].Sum()).Backward()
	fmt.Println(x.Grad())
	// Output:
	// tensor([1., 2., 3.], grad_fn=<SplitWithSizesBackward0>) SplitWithSizesBackward0
	// tensor([2., 1., 1., 1., 0., 0.])
}
