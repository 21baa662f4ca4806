package data

import (
	"fmt"
	"math"
	"sort"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/mt19937"
)

// RandomSplit splits ds into non-overlapping subsets of the given lengths,
// as torch.utils.data.random_split(ds, lengths,
// generator=torch.Generator().manual_seed(seed)), with the same indices:
// the permutation is torch.randperm's for that seed (see
// DistributedSampler).
//
// lengths are either sample counts summing to ds.Len(), or fractions
// summing to 1 (as torch: each split gets floor(frac·Len) samples, and the
// remainder is dealt one by one to the splits in order):
//
//	train, val := parts[0], parts[1] // parts := data.RandomSplit(ds, 42, 0.8, 0.2)
//
// Lengths that are neither (a negative or fractional count, counts not
// summing to Len) panic with an *ember.ValueError, with torch's wording.
func RandomSplit(ds Dataset, seed uint64, lengths ...float64) []*Subset {
	const op = "data.RandomSplit"
	if isNil(ds) {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("nil dataset (%T)", ds)})
	}
	n := ds.Len()
	counts := splitLengths(op, n, lengths)
	perm := mt19937.Randperm(n, seed)
	out := make([]*Subset, len(counts))
	off := 0
	for i, c := range counts {
		out[i] = &Subset{DS: ds, Indices: perm[off : off+c : off+c]}
		off += c
	}
	return out
}

// splitLengths turns RandomSplit's lengths into counts summing to n.
func splitLengths(op string, n int, lengths []float64) []int {
	if len(lengths) == 0 {
		panic(&ember.ValueError{Op: op, Msg: "no lengths given"})
	}
	var sum float64
	for _, l := range lengths {
		sum += l
	}
	counts := make([]int, len(lengths))
	if math.Abs(sum-1) <= 1e-9 && sum <= 1 { // math.isclose(sum, 1) and sum <= 1
		total := 0
		for i, f := range lengths {
			if !(f >= 0 && f <= 1) {
				panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("Fraction at index %d is not between 0 and 1", i)})
			}
			counts[i] = int(math.Floor(float64(n) * f))
			total += counts[i]
		}
		for i := range n - total {
			counts[i%len(counts)]++
		}
		return counts
	}
	total := 0
	for i, l := range lengths {
		if !(l >= 0 && l == math.Trunc(l) && l <= float64(n)) {
			panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("length %v at index %d is not a count of samples between 0 and %d, and the lengths are not fractions summing to 1", l, i, n)})
		}
		counts[i] = int(l)
		total += counts[i]
	}
	if total != n {
		panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("Sum of input lengths does not equal the length of the input dataset! (%d ≠ %d)", total, n)})
	}
	return counts
}

// ConcatDataset is its datasets one after another
// (torch.utils.data.ConcatDataset). The lengths are read once, by Concat.
type ConcatDataset struct {
	Datasets []Dataset
	ends     []int // the cumulative lengths (torch's cumulative_sizes)
}

// Concat returns the concatenation of dss; none may be nil, and there must
// be at least one (an *ember.ValueError otherwise).
func Concat(dss ...Dataset) *ConcatDataset {
	const op = "data.Concat"
	if len(dss) == 0 {
		panic(&ember.ValueError{Op: op, Msg: "datasets should not be an empty iterable"})
	}
	c := &ConcatDataset{Datasets: dss, ends: make([]int, len(dss))}
	total := 0
	for i, ds := range dss {
		if isNil(ds) {
			panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("dataset %d is nil (%T)", i, ds)})
		}
		n := ds.Len()
		if n < 0 || total > math.MaxInt-n {
			panic(&ember.ValueError{Op: op, Msg: fmt.Sprintf("dataset %d has length %d", i, n)})
		}
		total += n
		c.ends[i] = total
	}
	return c
}

// Len is the sum of the datasets' lengths.
func (c *ConcatDataset) Len() int { return c.ends[len(c.ends)-1] }

// Get returns sample i of the concatenation; a negative i counts from the
// end, and an i outside it panics with an *ember.IndexError.
func (c *ConcatDataset) Get(i int) (*ember.Tensor, *ember.Tensor) {
	i = sampleIndex("data.ConcatDataset.Get", i, c.Len())
	d := sort.Search(len(c.ends), func(k int) bool { return c.ends[k] > i }) // bisect_right
	if d > 0 {
		i -= c.ends[d-1]
	}
	return c.Datasets[d].Get(i)
}

// SetEpoch forwards to every dataset that takes it.
func (c *ConcatDataset) SetEpoch(e int) {
	for _, ds := range c.Datasets {
		if es, ok := ds.(EpochSetter); ok {
			es.SetEpoch(e)
		}
	}
}
