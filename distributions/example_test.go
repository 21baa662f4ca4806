package distributions_test

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/distributions"
)

// A REINFORCE policy-gradient step: sample actions from a categorical
// policy, weight their log-probabilities by the returns, and
// differentiate the loss w.r.t. the policy's logits.
func ExampleCategorical() {
	ember.ManualSeed(0)
	logits := ember.FromSlice([]float32{0, 0, 0, 1, 2, 3}, ember.Shape{2, 3}).SetRequiresGrad(true) // 2 states, 3 actions
	policy := distributions.NewCategoricalLogits(logits)
	actions := policy.Sample() // Int64 [2]
	returns := ember.FromSlice([]float32{1, -1}, ember.Shape{2})
	loss := policy.LogProb(actions).Mul(returns).Mean().Neg()
	loss.Backward()
	fmt.Println(actions.Shape(), actions.DType(), logits.Grad().Shape())
	// The entropy of the uniform first state is log 3.
	fmt.Printf("%.4f\n", policy.Entropy().Float32s()[0])
	// Output:
	// [2] int64 [2, 3]
	// 1.0986
}

// A Gaussian's reparameterised sample is differentiable in its parameters.
func ExampleNormal_RSample() {
	loc := ember.Scalar(1, ember.WithGrad())
	scale := ember.Scalar(2, ember.WithGrad())
	n := distributions.NewNormal(loc, scale)
	x := n.RSample(1000) // loc + ε·scale
	x.Mean().Backward()
	fmt.Println(x.Shape(), loc.Grad().Item())
	// torch.distributions.kl_divergence gives 1.3069 too.
	fmt.Printf("KL(N(1,2²) || N(0,1)) = %.4f\n", distributions.KLDivergence(n, distributions.NewNormal(ember.Scalar(0), ember.Scalar(1))).Item())
	// Output:
	// [1000] 1
	// KL(N(1,2²) || N(0,1)) = 1.3069
}
