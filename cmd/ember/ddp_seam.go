package main

import (
	"errors"

	"github.com/emberml/ember/dist"
	"github.com/emberml/ember/nn"
)

// SEAM (issue 8): nn.DistributedDataParallel is written on branch ddp. When
// it is on main, replace wrapDDP's body with
//
//	return nn.NewDistributedDataParallel(m, nn.WithProcessGroup(g))
//
// and set ddpReady to true (TestTrainDDP then runs instead of skipping).
const ddpReady = false

// wrapDDP wraps m, already on its rank's device, in DistributedDataParallel
// over g: rank 0's parameters broadcast to all, gradients averaged over
// the ranks during Backward.
func wrapDDP(m nn.Module, g *dist.ProcessGroup) (nn.Module, error) {
	return nil, errors.New("--ddp: nn.DistributedDataParallel is not in this build yet (see cmd/ember/ddp_seam.go)")
}
