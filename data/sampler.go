package data

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/mt19937"
)

// Sampler chooses the dataset indices a DataLoader visits in an epoch, in
// order, like torch.utils.data.Sampler. The epoch is passed in, so there is
// no set_epoch to forget.
type Sampler interface {
	// Indices returns the dataset indices of an epoch in visiting order.
	Indices(epoch int) []int
	// Len is len(Indices(e)), the same for every epoch.
	Len() int
}

// WithSampler makes the DataLoader visit s.Indices(epoch) each epoch; Len,
// Order and Epoch follow the sampler. It excludes Shuffle (NewLoader panics
// when given both, as torch's DataLoader refuses sampler with shuffle=True):
// the sampler decides the order.
func WithSampler(s Sampler) LoaderOption { return func(l *DataLoader) { l.sampler = s } }

// SamplerOptions configures a DistributedSampler. The zero value is
// torch's default: shuffled with seed 0, padded.
type SamplerOptions struct {
	// Seed seeds the per-epoch permutation (seed+epoch); it must be the
	// same on every rank.
	Seed uint64
	// NoShuffle visits 0..n-1 in order (torch's shuffle=False).
	NoShuffle bool
	// DropLast drops the tail so that every rank gets n/world samples,
	// instead of padding with repeated indices (torch's drop_last=True).
	DropLast bool
}

// DistributedSampler gives each rank of a data-parallel job its own share
// of a dataset's indices, as torch.utils.data.DistributedSampler does, with
// the same indices for the same arguments: each epoch draws the
// permutation torch.randperm(n) from a generator seeded with Seed+epoch
// (identical on every rank; see internal/mt19937), pads it to a multiple of
// world by repeating indices from its start (or, with DropLast, cuts it to
// one), and hands rank r the indices r, r+world, r+2·world, ... Every rank
// thus gets Len() indices, and together the ranks cover the dataset.
type DistributedSampler struct {
	n, rank, world int
	numSamples     int
	opts           SamplerOptions
}

// NewDistributedSampler returns rank's sampler over a dataset of n samples
// split among world ranks. It panics unless 0 ≤ rank < world and n ≥ 0.
func NewDistributedSampler(n, rank, world int, opts SamplerOptions) *DistributedSampler {
	if world < 1 || rank < 0 || rank >= world || n < 0 {
		panic(&ember.ValueError{Op: "data.NewDistributedSampler", Msg: fmt.Sprintf("rank %d of world %d over %d samples (want 0 ≤ rank < world, n ≥ 0)", rank, world, n)})
	}
	s := &DistributedSampler{n: n, rank: rank, world: world, opts: opts}
	if opts.DropLast {
		s.numSamples = n / world
	} else {
		s.numSamples = (n + world - 1) / world
	}
	return s
}

// Len is the number of indices each rank gets per epoch.
func (s *DistributedSampler) Len() int { return s.numSamples }

// Indices returns this rank's indices for epoch.
func (s *DistributedSampler) Indices(epoch int) []int {
	var all []int
	if s.opts.NoShuffle {
		all = make([]int, s.n)
		for i := range all {
			all[i] = i
		}
	} else {
		all = mt19937.Randperm(s.n, s.opts.Seed+uint64(epoch))
	}
	total := s.numSamples * s.world
	out := make([]int, 0, s.numSamples)
	for i := s.rank; i < total; i += s.world {
		out = append(out, all[i%len(all)]) // i ≥ n: the padding, from the start again
	}
	return out
}
