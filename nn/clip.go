package nn

import (
	"fmt"
	"math"

	"github.com/emberml/ember"
)

// ClipGradNorm scales the gradients of params in place so that their
// total normType-norm (the norm of the gradients' norms; math.Inf(1) for
// the largest absolute value, math.Inf(-1) the smallest, 0 the count of
// non-zeros, as torch.norm) is at most maxNorm, and returns that
// total norm before clipping as a zero-dim tensor, as
// torch.nn.utils.clip_grad_norm_: every gradient is multiplied by
// min(1, maxNorm/(total+1e-6)). Parameters without a gradient are skipped;
// with none it returns 0. The gradients must share a device. The work stays
// on the device (nothing is read back), and records no graph.
func ClipGradNorm(params []*ember.Tensor, maxNorm, normType float64) *ember.Tensor {
	grads := gradsOf(params)
	if len(grads) == 0 {
		return ember.Scalar(0)
	}
	total := totalNorm(grads, normType)
	return scaleGrads(grads, total, maxNorm)
}

// ClipGradNormFinite is ClipGradNorm with torch's error_if_nonfinite=True:
// when the total norm is infinite or NaN it returns an error and leaves
// the gradients as they are. It reads the norm back from the device.
func ClipGradNormFinite(params []*ember.Tensor, maxNorm, normType float64) (*ember.Tensor, error) {
	grads := gradsOf(params)
	if len(grads) == 0 {
		return ember.Scalar(0), nil
	}
	total := totalNorm(grads, normType)
	if v := total.Item(); math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("nn: the total norm of order %v for gradients from `parameters` is non-finite, so it cannot be clipped (use ClipGradNorm to scale the gradients by the non-finite norm anyway)", normType)
	}
	return scaleGrads(grads, total, maxNorm), nil
}

func gradsOf(params []*ember.Tensor) []*ember.Tensor {
	var grads []*ember.Tensor
	for _, p := range params {
		if g := p.Grad(); g != nil {
			grads = append(grads, g.Detach())
		}
	}
	return grads
}

// totalNorm is the normType-norm of the gradients' norms, in float64.
func totalNorm(grads []*ember.Tensor, normType float64) *ember.Tensor {
	norms := make([]*ember.Tensor, len(grads))
	for i, g := range grads {
		// torch.norm(g, normType): the largest |g| for +Inf, the smallest
		// for -Inf, the count of non-zeros for 0
		norms[i] = g.Norm(normType).Cast(ember.Float64).Reshape(1)
	}
	return ember.Cat(norms, 0).Norm(normType)
}

// scaleGrads multiplies the gradients by min(1, maxNorm/(total+1e-6)) and
// returns total in the first gradient's dtype.
func scaleGrads(grads []*ember.Tensor, total *ember.Tensor, maxNorm float64) *ember.Tensor {
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
