package optim_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// L-BFGS with the strong-Wolfe line search, as torch.optim.LBFGS([x],
// line_search_fn="strong_wolfe"): Step takes a closure that clears the
// gradients, re-evaluates the loss and back-propagates it, and returns
// the loss at the start of the step.
func ExampleLBFGSWith() {
	x := ember.Zeros(ember.Shape{2}, ember.Dtype(ember.Float64), ember.WithGrad())
	target := ember.FromSlice([]float64{1, -2}, ember.Shape{2})
	opt := optim.LBFGSWith(optim.Tensors(x), optim.LineSearch("strong_wolfe"))
	closure := func() *ember.Tensor {
		opt.ZeroGrad()
		loss := x.Sub(target).Square().Sum()
		loss.Backward()
		return loss
	}
	for range 2 {
		fmt.Printf("loss %.4f\n", opt.Step(closure).Item())
	}
	fmt.Printf("x %.4f\n", x.Detach().Float64s())
	// Output:
	// loss 5.0000
	// loss 0.0000
	// x [1.0000 -2.0000]
}

// Stochastic weight averaging, as torch.optim.swa_utils: the
// AveragedModel keeps the running average of the model's parameters over
// its UpdateParameters calls, and its state dict has torch's keys.
func ExampleNewAveragedModel() {
	lin := nn.NewLinear(1, 1, false)
	swa := optim.NewAveragedModel(lin, nil)
	for _, w := range []float64{1, 2, 6} {
		lin.Weight.Detach().FillInPlace(w) // a training step would change it
		swa.UpdateParameters(lin)
	}
	sd := swa.StateDict()
	fmt.Println(sd["module.weight"].Float64s(), sd["n_averaged"].Item())
	// Output:
	// [3] 3
}
