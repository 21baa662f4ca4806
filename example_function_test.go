package ember_test

import (
	"fmt"

	"github.com/emberml/ember"
)

// expFn is e^x as an ember.Function (PyTorch's torch.autograd.Function
// example): Forward saves its result, which is also its derivative.
type expFn struct{}

func (expFn) Name() string { return "ExpBackward" }

func (expFn) Forward(ctx *ember.FunctionCtx, in []*ember.Tensor) *ember.Tensor {
	y := in[0].Exp()
	ctx.SaveForBackward(y)
	return y
}

func (expFn) Backward(ctx *ember.FunctionCtx, grad *ember.Tensor) []*ember.Tensor {
	return []*ember.Tensor{grad.Mul(ctx.Saved()[0])}
}

// A Function defines a differentiable op outside ember: Apply runs its
// Forward and records one node whose backward is the Function's Backward.
func ExampleApply() {
	x := ember.FromSlice([]float64{0, 1, 2}, nil).SetRequiresGrad(true)
	y := ember.Apply(expFn{}, x)
	fmt.Println(y.GradFn())
	y.MulScalar(2).Sum().Backward()
	fmt.Printf("%.4f\n", x.Grad().Float64s())
	ember.NoGrad(func() { fmt.Println(ember.Apply(expFn{}, x).RequiresGrad()) })
	// Output:
	// ExpBackward
	// [2.0000 5.4366 14.7781]
	// false
}

// A Function whose Backward is written with ember ops can be
// differentiated twice: with CreateGraph, Backward runs with grad on and
// ctx.Saved() gives the output with its graph. (Mark a Function whose
// Backward reads raw data ember.OnceDifferentiable: its second derivative
// then panics instead of coming out wrong.)
func ExampleApply_secondDerivative() {
	x := ember.FromSlice([]float64{0, 1}, nil).SetRequiresGrad(true)
	y := ember.Apply(expFn{}, x.MulScalar(2)).Sum() // e^{2x}
	g := ember.Grad([]*ember.Tensor{y}, []*ember.Tensor{x}, ember.CreateGraph(true))[0]
	h := ember.Grad([]*ember.Tensor{g.Sum()}, []*ember.Tensor{x})[0]
	fmt.Printf("%.4f\n%.4f\n", g.Float64s(), h.Float64s())
	// Output:
	// [2.0000 14.7781]
	// [4.0000 29.5562]
}
