package nn

import (
	"github.com/emberml/ember"
)

// The layers call ember's differentiable functional ops (ember.Conv2d,
// ember.BatchNorm, ...), so a forward pass records a graph and
// loss.Backward() fills every parameter's Grad.

func pair(v int) [2]int { return [2]int{v, v} }

// oneHot returns a float tensor of target's shape plus a last dim of n.
func oneHot(target *ember.Tensor, n int, dt ember.DType) *ember.Tensor {
	cls := ember.Arange(0, float64(n), 1, ember.On(target.Device()), ember.Dtype(target.DType()))
	return target.Unsqueeze(-1).Eq(cls).Cast(dt)
}
