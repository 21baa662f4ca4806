package ember_test

import (
	"fmt"
	"math"

	"github.com/emberml/ember"
)

// The activations and special-value ops of the op table behave as
// PyTorch's functions of the same names.
func ExampleTensor_SiLU() {
	x := ember.FromSlice([]float32{-2, 0, 2}, ember.Shape{3})
	fmt.Println(x.SiLU())
	fmt.Println(x.Softplus(1, 20))
	fmt.Println(x.Hardswish())
	// Output:
	// tensor([-0.2384,  0.0000,  1.7616])
	// tensor([0.1269, 0.6931, 2.1269])
	// tensor([-0.3333,  0.0000,  1.6667])
}

// NanToNum's infinite bounds stand for the dtype's extremes, as
// torch.nan_to_num's defaults.
func ExampleTensor_NanToNum() {
	x := ember.FromSlice([]float32{float32(math.NaN()), float32(math.Inf(1)), -1}, ember.Shape{3})
	fmt.Println(x.IsNaN())
	fmt.Println(x.NanToNum(0, math.Inf(1), math.Inf(-1)))
	fmt.Println(x.NanToNum(-9, 100, -100))
	// Output:
	// tensor([ True, False, False])
	// tensor([ 0.0000e+00,  3.4028e+38, -1.0000e+00])
	// tensor([ -9., 100.,  -1.])
}
