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
