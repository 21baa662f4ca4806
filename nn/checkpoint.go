package nn

import (
	"fmt"

	"github.com/emberml/ember"
)

// CheckpointSequential runs layers on x in segments, each but the last
// under ember.Checkpoint, as torch.utils.checkpoint.checkpoint_sequential:
// the layers are split into segments runs of len(layers)/segments layers
// (the last run takes the rest and is not checkpointed), so the forward
// keeps only the runs' inputs and the backward recomputes each run once.
// For a *Sequential pass its Layers. Dropout inside draws the same mask
// at the recomputation; a BatchNorm in training mode updates its running
// statistics twice, as in PyTorch. The input should require grad, or the
// checkpointed layers' parameters get no gradient (ember.Checkpoint).
//
// A nil layer is a *ModuleError; segments below 1 or above len(layers)
// is an *ember.ValueError.
func CheckpointSequential(layers []Module, segments int, x *ember.Tensor) *ember.Tensor {
	noNil("nn.CheckpointSequential", "CheckpointSequential", "layer", layers)
	if segments < 1 || segments > len(layers) {
		panic(&ember.ValueError{Op: "checkpoint_sequential", Msg: fmt.Sprintf("segments must be between 1 and the number of layers (%d), got %d", len(layers), segments)})
	}
	run := func(ms []Module) func(in ...*ember.Tensor) *ember.Tensor {
		return func(in ...*ember.Tensor) *ember.Tensor {
			h := in[0]
			for _, m := range ms {
				h = m.Forward(h)
			}
			return h
		}
	}
	size := len(layers) / segments
	start := 0
	for ; start < size*(segments-1); start += size {
		x = ember.Checkpoint(run(layers[start:start+size]), x)
	}
	return run(layers[start:])(x)
}
