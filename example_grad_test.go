package ember_test

import (
	"fmt"

	"github.com/emberml/ember"
)

// Grad with CreateGraph gives gradients that can be differentiated again:
// here d/dx of x³ is 3x², whose own gradient is 6x; the gradient penalty
// of a WGAN-GP critic is built the same way.
func ExampleGrad() {
	x := ember.FromSlice([]float64{1, 2}, ember.Shape{2}).SetRequiresGrad(true)
	y := x.PowScalar(3).Sum()
	dx := ember.Grad([]*ember.Tensor{y}, []*ember.Tensor{x}, ember.CreateGraph(true))[0]
	fmt.Println(dx.Float64s())
	d2x := ember.Grad([]*ember.Tensor{dx.Sum()}, []*ember.Tensor{x})[0]
	fmt.Println(d2x.Float64s())
	fmt.Println(x.Grad() == nil) // Grad accumulates nothing
	// Output:
	// [3 12]
	// [6 12]
	// true
}
