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

// A correlated 2-D Gaussian from its covariance: log density, entropy,
// Cholesky factor and the KL divergence to the standard normal.
func ExampleMultivariateNormal() {
	loc := ember.FromSlice([]float32{1, -1}, ember.Shape{2})
	cov := ember.FromSlice([]float32{2, 0.3, 0.3, 1}, ember.Shape{2, 2})
	m := distributions.NewMultivariateNormal(loc, cov)
	fmt.Println(m.BatchShape(), m.EventShape(), m.Sample(5).Shape())
	fmt.Printf("log p = %.4f, H = %.4f\n", m.LogProb(ember.FromSlice([]float32{0.5, 0}, ember.Shape{2})).Item(), m.Entropy().Item())
	fmt.Printf("L[1][0] = %.4f\n", m.ScaleTril().Float32s()[2])
	std := distributions.NewMultivariateNormal(ember.Zeros(ember.Shape{2}), ember.Eye(2))
	// torch.distributions gives -2.8290, 3.1614, 0.2121 and 1.1764 too.
	fmt.Printf("KL = %.4f\n", distributions.KLDivergence(m, std).Item())
	// Output:
	// [] [2] [5, 2]
	// log p = -2.8290, H = 3.1614
	// L[1][0] = 0.2121
	// KL = 1.1764
}
