package nn

import "github.com/emberml/ember"

// CosineSimilarity is torch.nn.CosineSimilarity: Forward(x1, x2) is
// ember.CosineSimilarity(x1, x2, Dim, Eps). It takes two inputs, so it is
// not a Module (as the losses). NewCosineSimilarity gives PyTorch's
// defaults, dim 1 and eps 1e-8.
type CosineSimilarity struct {
	Dim int
	Eps float64
}

// NewCosineSimilarity returns a CosineSimilarity with dim 1 and eps 1e-8.
func NewCosineSimilarity() *CosineSimilarity { return &CosineSimilarity{Dim: 1, Eps: 1e-8} }

// Forward returns the cosine similarity of x1 and x2 along c.Dim.
func (c *CosineSimilarity) Forward(x1, x2 *ember.Tensor) *ember.Tensor {
	return ember.CosineSimilarity(x1, x2, c.Dim, c.Eps)
}

// PairwiseDistance is torch.nn.PairwiseDistance: Forward(x1, x2) is
// ember.PairwiseDistance(x1, x2, P, Eps, KeepDim), the p-norm of
// x1 - x2 + eps over the last dim. NewPairwiseDistance gives PyTorch's
// defaults, p 2, eps 1e-6 and keepdim false.
type PairwiseDistance struct {
	P       float64
	Eps     float64
	KeepDim bool
}

// NewPairwiseDistance returns a PairwiseDistance with p 2 and eps 1e-6.
func NewPairwiseDistance() *PairwiseDistance { return &PairwiseDistance{P: 2, Eps: 1e-6} }

// Forward returns the distances between the rows of x1 and x2.
func (d *PairwiseDistance) Forward(x1, x2 *ember.Tensor) *ember.Tensor {
	return ember.PairwiseDistance(x1, x2, d.P, d.Eps, d.KeepDim)
}
