package data

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
)

// TestSamplersMatchTorch compares each sampler's indices with those
// torch.utils.data's samplers yield for the same seed
// (testdata/gen_samplers.py); epoch e of a sampler seeded s draws as
// torch's seeded with s+e.
func TestSamplersMatchTorch(t *testing.T) {
	b, err := os.ReadFile("testdata/samplers.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Kind        string
		N           int
		Seed        uint64
		Replacement bool
		NumSamples  int `json:"num_samples"`
		Subset      []int
		Weights     []float64
		Indices     []int
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 20 {
		t.Fatalf("%d cases in the fixture", len(cases))
	}
	for i, c := range cases {
		var s func(seed uint64) Sampler
		switch c.Kind {
		case "random":
			s = func(seed uint64) Sampler {
				return NewRandomSampler(c.N, RandomOptions{Seed: seed, Replacement: c.Replacement, NumSamples: c.NumSamples})
			}
		case "subset":
			s = func(seed uint64) Sampler { return NewSubsetRandomSampler(c.Subset, seed) }
		case "weighted":
			s = func(seed uint64) Sampler {
				return NewWeightedRandomSampler(c.Weights, c.NumSamples, c.Replacement, seed)
			}
		}
		want := c.Indices
		if want == nil {
			want = []int{}
		}
		if got := s(c.Seed).Indices(0); !slices.Equal(got, want) {
			t.Errorf("case %d (%s seed %d): %v, torch %v", i, c.Kind, c.Seed, got, want)
		}
		if c.Seed >= 2 {
			if got := s(c.Seed - 2).Indices(2); !slices.Equal(got, want) {
				t.Errorf("case %d (%s) epoch 2 of seed %d: %v, torch %v", i, c.Kind, c.Seed-2, got, want)
			}
		}
		if l := s(c.Seed).Len(); l != len(want) {
			t.Errorf("case %d (%s): Len %d, want %d", i, c.Kind, l, len(want))
		}
	}
}

// TestRandomSamplerProperties: without replacement an epoch is a
// permutation (NumSamples > n: whole permutations, then part of one); with
// replacement the indices are uniform (counts within 5 standard
// deviations) and repeat; epochs differ and each is reproducible.
func TestRandomSamplerProperties(t *testing.T) {
	for _, n := range []int{1, 2, 17, 1000} {
		s := NewRandomSampler(n, RandomOptions{Seed: 4})
		e0 := s.Indices(0)
		if !slices.Equal(slices.Sorted(slices.Values(e0)), seq(n)) {
			t.Fatalf("n=%d: not a permutation: %v", n, e0)
		}
		if !slices.Equal(e0, s.Indices(0)) {
			t.Fatalf("n=%d: not reproducible", n)
		}
		if n > 10 && slices.Equal(e0, s.Indices(1)) {
			t.Fatalf("n=%d: epochs 0 and 1 visit the same order", n)
		}
	}
	long := NewRandomSampler(17, RandomOptions{Seed: 1, NumSamples: 40}).Indices(0)
	for k := 0; k < 2; k++ {
		if !slices.Equal(slices.Sorted(slices.Values(long[17*k:17*(k+1)])), seq(17)) {
			t.Fatalf("NumSamples 40: block %d is not a permutation", k)
		}
	}
	if len(long) != 40 || len(slices.Compact(slices.Sorted(slices.Values(long[34:])))) != 6 {
		t.Fatalf("NumSamples 40: tail %v", long[34:])
	}
	const n, draws = 10, 200000
	counts := make([]float64, n)
	for _, i := range NewRandomSampler(n, RandomOptions{Seed: 8, Replacement: true, NumSamples: draws}).Indices(0) {
		counts[i]++
	}
	checkFrequencies(t, "replacement", counts, uniform(n), draws)
}

// TestWeightedRandomSamplerFrequencies: with replacement index i comes up
// in proportion to weights[i] (zero weights never); without replacement no
// index repeats, and the first draw follows the weights.
func TestWeightedRandomSamplerFrequencies(t *testing.T) {
	w := []float64{1, 0, 3, 0.5, 5.5}
	const draws = 200000
	counts := make([]float64, len(w))
	for _, i := range NewWeightedRandomSampler(w, draws, true, 3).Indices(0) {
		counts[i]++
	}
	checkFrequencies(t, "weighted", counts, []float64{0.1, 0, 0.3, 0.05, 0.55}, draws)
	first := make([]float64, len(w))
	s := NewWeightedRandomSampler(w, 4, false, 0)
	const epochs = 40000
	for e := 0; e < epochs; e++ {
		idx := s.Indices(e)
		if len(slices.Compact(slices.Sorted(slices.Values(idx)))) != 4 {
			t.Fatalf("epoch %d: an index repeats without replacement: %v", e, idx)
		}
		if slices.Contains(idx, 1) {
			t.Fatalf("epoch %d: the zero weight drawn before a positive one: %v", e, idx)
		}
		first[idx[0]]++
	}
	checkFrequencies(t, "first draw without replacement", first, []float64{0.1, 0, 0.3, 0.05, 0.55}, epochs)
}

func TestSubsetRandomSamplerIsPermutation(t *testing.T) {
	idx := []int{9, 3, 3, 100, -1}
	s := NewSubsetRandomSampler(idx, 5)
	idx[0] = 0 // the sampler keeps its own copy
	got := s.Indices(0)
	if !slices.Equal(slices.Sorted(slices.Values(got)), []int{-1, 3, 3, 9, 100}) {
		t.Fatalf("not a permutation of the indices: %v", got)
	}
	if s.Len() != 5 || len(NewSubsetRandomSampler(nil, 0).Indices(3)) != 0 {
		t.Fatal("lengths")
	}
}

// TestSamplersWithLoader: a sampler drives the DataLoader's order and
// batches.
func TestSamplersWithLoader(t *testing.T) {
	x := ember.Arange(0, 6, 1, ember.Dtype(ember.Float32)).Reshape(6, 1)
	ds, err := NewTensorDataset(x, x)
	if err != nil {
		t.Fatal(err)
	}
	s := NewWeightedRandomSampler([]float64{0, 0, 1, 0, 0, 1}, 7, true, 1)
	l := NewLoader(ds, WithSampler(s), BatchSize(3))
	if l.Len() != 3 {
		t.Fatalf("Len %d", l.Len())
	}
	n := 0
	for b := range l.Epoch(0) {
		for _, v := range b.Input.Float32s() {
			if v != 2 && v != 5 {
				t.Fatalf("sample %v has weight 0", v)
			}
			n++
		}
	}
	if n != 7 {
		t.Fatalf("%d samples", n)
	}
}

func TestSamplerErrors(t *testing.T) {
	for _, c := range []struct {
		what, msg string
		f         func()
	}{
		{"random empty", "num_samples should be a positive integer value, but got num_samples=0", func() { NewRandomSampler(0, RandomOptions{}) }},
		{"random negative", "num_samples should be a positive integer value, but got num_samples=-1", func() { NewRandomSampler(3, RandomOptions{NumSamples: -1}) }},
		{"random empty with samples", "empty dataset", func() { NewRandomSampler(0, RandomOptions{NumSamples: 3}) }},
		{"random huge", "more indices than a sampler returns at once", func() { NewRandomSampler(3, RandomOptions{NumSamples: 1 << 50, Replacement: true}) }},
		{"random huge permutation", "a permutation of", func() { NewRandomSampler(1<<40, RandomOptions{NumSamples: 3}) }},
		{"weighted 0", "num_samples should be a positive integer value, but got num_samples=0", func() { NewWeightedRandomSampler([]float64{1}, 0, true, 0) }},
		{"weighted empty", "invalid multinomial distribution (sum of probabilities <= 0)", func() { NewWeightedRandomSampler(nil, 2, true, 0) }},
		{"weighted zeros", "invalid multinomial distribution (sum of probabilities <= 0)", func() { NewWeightedRandomSampler([]float64{0, 0}, 2, true, 0) }},
		{"weighted negative", "invalid multinomial distribution (encountering probability entry < 0)", func() { NewWeightedRandomSampler([]float64{1, -1}, 2, true, 0) }},
		{"weighted nan", "invalid multinomial distribution (encountering probability entry < 0)", func() { NewWeightedRandomSampler([]float64{1, math.NaN()}, 2, true, 0) }},
		{"weighted inf", "invalid multinomial distribution (encountering probability entry = infinity or NaN)", func() { NewWeightedRandomSampler([]float64{1, math.Inf(1)}, 2, true, 0) }},
		{"weighted inf no replacement", "probability tensor contains either `inf`, `nan` or element < 0", func() { NewWeightedRandomSampler([]float64{1, math.Inf(1)}, 1, false, 0) }},
		{"weighted too many", "cannot sample n_sample > prob_dist.size(-1) samples without replacement", func() { NewWeightedRandomSampler([]float64{1, 1}, 3, false, 0) }},
	} {
		err := ember.Try(c.f)
		var ve *ember.ValueError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want a *ember.ValueError saying %q", c.what, err, c.msg)
		}
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func uniform(n int) []float64 {
	p := make([]float64, n)
	for i := range p {
		p[i] = 1 / float64(n)
	}
	return p
}

// checkFrequencies: each count is within 5 binomial standard deviations
// of draws·p (a zero p must count zero).
func checkFrequencies(t *testing.T, what string, counts, p []float64, draws int) {
	t.Helper()
	for i, c := range counts {
		mean := float64(draws) * p[i]
		sd := math.Sqrt(float64(draws) * p[i] * (1 - p[i]))
		if math.Abs(c-mean) > 5*sd || p[i] == 0 && c != 0 {
			t.Errorf("%s: index %d drawn %v times, expected %v ± %v", what, i, c, mean, sd)
		}
	}
}
