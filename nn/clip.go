package nn

import (
	"math"

	"github.com/emberml/ember"
)

// ClipGradNorm scales the gradients of params in place so that their
// total normType-norm (the norm of all gradients concatenated; math.Inf(1)
// for the largest absolute value) is at most maxNorm, and returns that
// total norm before clipping as a zero-dim tensor, as
// torch.nn.utils.clip_grad_norm_: every gradient is multiplied by
// min(1, maxNorm/(total+1e-6)). Parameters without a gradient are skipped;
// with none it returns 0. The gradients must share a device. The work stays
// on the device (nothing is read back), and records no graph.
func ClipGradNorm(params []*ember.Tensor, maxNorm, normType float64) *ember.Tensor {
	var grads []*ember.Tensor
	for _, p := range params {
		if g := p.Grad(); g != nil {
			grads = append(grads, g.Detach())
		}
	}
	if len(grads) == 0 {
		return ember.Scalar(0)
	}
	norms := make([]*ember.Tensor, len(grads))
	var total *ember.Tensor
	if math.IsInf(normType, 1) {
		for i, g := range grads {
			norms[i] = g.Abs().Max().Cast(ember.Float64).Reshape(1)
		}
		total = ember.Cat(norms, 0).Max()
	} else {
		for i, g := range grads {
			norms[i] = g.Abs().PowScalar(normType).Sum().Cast(ember.Float64).PowScalar(1 / normType).Reshape(1)
		}
		total = ember.Cat(norms, 0).PowScalar(normType).Sum().PowScalar(1 / normType)
	}
	coef := total.AddScalar(1e-6).Reciprocal().MulScalar(maxNorm).Clamp(math.Inf(-1), 1)
	for _, g := range grads {
		g.MulInPlace(coef.Cast(g.DType()))
	}
	if dt := grads[0].DType(); total.DType() != dt {
		total = total.Cast(dt)
	}
	return total
}

// ClipGradValue clamps every gradient of params to [-clip, clip] in place,
// as torch.nn.utils.clip_grad_value_.
func ClipGradValue(params []*ember.Tensor, clip float64) {
	for _, p := range params {
		if g := p.Grad(); g != nil {
			g.Detach().CopyFrom(g.Detach().Clamp(-clip, clip))
		}
	}
}
