package data

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/mt19937"
)

// Random samplers as torch.utils.data's RandomSampler, SubsetRandomSampler
// and WeightedRandomSampler. Each epoch draws from a fresh MT19937
// generator seeded with Seed+epoch, the generator torch's CPU
// torch.Generator is, and draws as torch 1.13 does (randperm, randint,
// multinomial with and without replacement), so Indices(e) is the list
// torch's sampler yields with generator=torch.Generator().manual_seed(Seed+e).

// maxSamples bounds the indices a sampler returns per epoch: Indices
// builds them in one Go slice (8 bytes each), and a slice the host cannot
// hold is a fatal error in Go, not a panic.
const maxSamples = 1 << 31

// torchRNG is torch's CPU generator: 32-bit draws (random()) and 64-bit
// ones made of two (random64()).
type torchRNG struct{ s *mt19937.Source }

func newTorchRNG(seed uint64) torchRNG { return torchRNG{mt19937.New(seed)} }

func (r torchRNG) random64() uint64 {
	hi := uint64(r.s.Uint32())
	return hi<<32 | uint64(r.s.Uint32())
}

// below is torch's randint draw in [0, n): random() % n, or random64() % n
// for n ≥ 2³².
func (r torchRNG) below(n int) int {
	if uint64(n) >= 1<<32 {
		return int(r.random64() % uint64(n))
	}
	return int(r.s.Uint32() % uint32(n))
}

// uniform is torch's uniform double in [0, 1): 53 bits of random64().
func (r torchRNG) uniform() float64 {
	return float64(r.random64()&(1<<53-1)) * 0x1p-53
}

// perm is torch.randperm(n, generator) continuing the generator's stream.
func (r torchRNG) perm(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := 0; i < n-1; i++ {
		z := i + r.below(n-i)
		p[i], p[z] = p[z], p[i]
	}
	return p
}

func checkNumSamples(op string, n int) {
	if n <= 0 {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("num_samples should be a positive integer value, but got num_samples=%d", n)})
	}
	if n > maxSamples {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("num_samples=%d: more indices than a sampler returns at once (%d)", n, maxSamples)})
	}
}

// RandomOptions configures a RandomSampler. The zero value is torch's
// default: each sample once per epoch, in a random order, seed 0.
type RandomOptions struct {
	// Seed seeds epoch e's generator with Seed+e.
	Seed uint64
	// Replacement draws each index independently and uniformly (torch's
	// replacement=True); without it the epoch is a permutation (or, for
	// NumSamples > n, permutations one after another, the last cut).
	Replacement bool
	// NumSamples is the indices per epoch; 0 means the dataset's size.
	NumSamples int
}

// RandomSampler visits a dataset of n samples in a random order each
// epoch, as torch.utils.data.RandomSampler.
type RandomSampler struct {
	n, num int
	opts   RandomOptions
}

// NewRandomSampler returns a random sampler over n samples. As torch, it
// panics with an *ember.ValueError when the epoch would have no indices
// (n = 0 and no NumSamples) or NumSamples is negative; also when n = 0
// with NumSamples (torch divides by zero) and when an epoch would need
// more than 2³¹ indices (or, without replacement, permute more than 2³¹).
func NewRandomSampler(n int, opts RandomOptions) *RandomSampler {
	const op = "data.NewRandomSampler"
	if n < 0 {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("a dataset of %d samples", n)})
	}
	num := opts.NumSamples
	if num == 0 {
		num = n
	}
	checkNumSamples(op, num)
	if n == 0 {
		panic(&ember.ValueError{Op: op, Msg: "cannot sample from an empty dataset"})
	}
	if !opts.Replacement && n > maxSamples { // each epoch permutes all n
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("a permutation of %d samples: more indices than a sampler returns at once (%d)", n, maxSamples)})
	}
	return &RandomSampler{n: n, num: num, opts: opts}
}

// Len is the number of indices per epoch.
func (s *RandomSampler) Len() int { return s.num }

// Indices returns epoch's indices.
func (s *RandomSampler) Indices(epoch int) []int {
	r := newTorchRNG(s.opts.Seed + uint64(epoch))
	out := make([]int, 0, s.num)
	if s.opts.Replacement { // torch.randint(n, (32,)) chunks: one draw each
		for len(out) < s.num {
			out = append(out, r.below(s.n))
		}
		return out
	}
	for len(out) < s.num {
		p := r.perm(s.n)
		out = append(out, p[:min(len(p), s.num-len(out))]...)
	}
	return out
}

// SubsetRandomSampler visits the given dataset indices in a random order
// each epoch, as torch.utils.data.SubsetRandomSampler (indices[p] for a
// permutation p of their positions).
type SubsetRandomSampler struct {
	indices []int
	seed    uint64
}

// NewSubsetRandomSampler returns a sampler over a copy of indices, its
// epoch e shuffled by a generator seeded with seed+e.
func NewSubsetRandomSampler(indices []int, seed uint64) *SubsetRandomSampler {
	if len(indices) > maxSamples {
		panic(&ember.ValueError{Op: "data.NewSubsetRandomSampler", Msg: fmt.Sprintf("%d indices: more than a sampler returns at once (%d)", len(indices), maxSamples)})
	}
	return &SubsetRandomSampler{indices: slices.Clone(indices), seed: seed}
}

// Len is the number of indices.
func (s *SubsetRandomSampler) Len() int { return len(s.indices) }

// Indices returns epoch's order of the indices.
func (s *SubsetRandomSampler) Indices(epoch int) []int {
	p := newTorchRNG(s.seed + uint64(epoch)).perm(len(s.indices))
	out := make([]int, len(p))
	for i, j := range p {
		out[i] = s.indices[j]
	}
	return out
}

// WeightedRandomSampler draws numSamples indices in [0, len(weights)) each
// epoch, index i with probability proportional to weights[i], as
// torch.utils.data.WeightedRandomSampler (torch.multinomial on the
// weights as doubles): with replacement each draw is independent; without
// it no index repeats, each next one drawn among the rest in proportion to
// their weights.
type WeightedRandomSampler struct {
	weights     []float64
	cum         []float64 // normalised cumulative weights (with replacement)
	num         int
	replacement bool
	seed        uint64
}

// NewWeightedRandomSampler returns a weighted sampler; epoch e draws from
// a generator seeded with seed+e. It panics with an *ember.ValueError,
// with torch's wording, for a num_samples ≤ 0, no weights, a weight that
// is negative, infinite or NaN, weights summing to 0, or, without
// replacement, more samples than weights. (Without replacement, the
// zero-weight indices come last, in index order where torch's topk leaves
// their order unspecified.)
func NewWeightedRandomSampler(weights []float64, numSamples int, replacement bool, seed uint64) *WeightedRandomSampler {
	const op = "data.NewWeightedRandomSampler"
	checkNumSamples(op, numSamples)
	if len(weights) == 0 {
		panic(&ember.ValueError{Op: op, Msg: "invalid multinomial distribution (sum of probabilities <= 0)"})
	}
	for _, w := range weights { // (torch's two kernels word it differently)
		bad := w < 0 || math.IsInf(w, 0) || math.IsNaN(w)
		switch {
		case bad && !replacement:
			panic(&ember.ValueError{Op: op, Msg: "probability tensor contains either `inf`, `nan` or element < 0"})
		case math.IsInf(w, 1):
			panic(&ember.ValueError{Op: op, Msg: "invalid multinomial distribution (encountering probability entry = infinity or NaN)"})
		case bad:
			panic(&ember.ValueError{Op: op, Msg: "invalid multinomial distribution (encountering probability entry < 0)"})
		}
	}
	if !replacement && numSamples > len(weights) {
		panic(&ember.ValueError{Op: op, Msg: "cannot sample n_sample > prob_dist.size(-1) samples without replacement"})
	}
	if slices.Max(weights) == 0 {
		panic(&ember.ValueError{Op: op, Msg: "invalid multinomial distribution (sum of probabilities <= 0)"})
	}
	s := &WeightedRandomSampler{weights: slices.Clone(weights), num: numSamples, replacement: replacement, seed: seed}
	if replacement { // as torch's multinomial_with_replacement kernel
		s.cum = make([]float64, len(weights))
		sum := 0.0
		for i, w := range weights {
			sum += w
			s.cum[i] = sum
		}
		if sum > 0 {
			for i := range s.cum {
				s.cum[i] /= sum
			}
		}
		s.cum[len(s.cum)-1] = 1
	}
	return s
}

// Len is the number of indices per epoch.
func (s *WeightedRandomSampler) Len() int { return s.num }

// Indices returns epoch's draws.
func (s *WeightedRandomSampler) Indices(epoch int) []int {
	r := newTorchRNG(s.seed + uint64(epoch))
	out := make([]int, s.num)
	if s.replacement {
		for i := range out {
			u := r.uniform()
			out[i] = sort.Search(len(s.cum), func(j int) bool { return s.cum[j] >= u })
		}
		return out
	}
	// torch: the top num of w / q for q ~ Exp(1) (the Gumbel-max trick),
	// q = -log(1 - u) in category order
	keys := make([]float64, len(s.weights))
	order := make([]int, len(s.weights))
	for i, w := range s.weights {
		keys[i] = w / -math.Log(1-r.uniform())
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return keys[order[a]] > keys[order[b]] })
	copy(out, order)
	return out
}
