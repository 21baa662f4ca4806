package autograd_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/autograd"
)

// The Hessian of x₀²·x₁ and its product with a vector.
func ExampleHessian() {
	f := func(xs []*ember.Tensor) *ember.Tensor {
		x := xs[0]
		return x.Select(0, 0).Square().Mul(x.Select(0, 1))
	}
	x := ember.FromSlice([]float64{1, 3}, ember.Shape{2})
	h := autograd.Hessian(f, []*ember.Tensor{x})
	fmt.Println(h[0][0].Shape(), h[0][0].Float64s())
	_, hv := autograd.HVP(f, []*ember.Tensor{x}, []*ember.Tensor{ember.FromSlice([]float64{1, 0}, ember.Shape{2})})
	fmt.Println(hv[0].Float64s())
	// Output:
	// [2, 2] [6 2 2 0]
	// [6 2]
}
