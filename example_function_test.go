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
