package data

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
)

// TestRandomSplitMatchesTorch: the subsets' indices are those
// torch.utils.data.random_split gives with a generator seeded alike
// (testdata/gen_split_fixtures.py prints these lines), counts and fractions.
func TestRandomSplitMatchesTorch(t *testing.T) {
	for _, c := range []struct {
		n       int
		seed    uint64
		lengths []float64
		want    [][]int
	}{
		{10, 42, []float64{3, 7}, [][]int{{2, 6, 1}, {8, 4, 5, 0, 9, 3, 7}}},
		{30, 42, []float64{0.3, 0.3, 0.4}, [][]int{{12, 0, 6, 25, 8, 15, 10, 18, 16}, {23, 28, 26, 20, 7, 21, 22, 29, 13}, {14, 2, 4, 1, 9, 11, 17, 19, 27, 5, 24, 3}}},
		{11, 0, []float64{0.5, 0.5}, [][]int{{10, 0, 4, 3, 5, 8}, {2, 1, 9, 7, 6}}},
		{7, 123, []float64{0.2, 0.2, 0.6}, [][]int{{2, 0}, {4}, {5, 3, 1, 6}}},
		{5, 7, []float64{5}, [][]int{{0, 1, 3, 2, 4}}},
		{6, 1, []float64{0, 6}, [][]int{{}, {1, 5, 2, 0, 3, 4}}},
	} {
		parts := RandomSplit(ramp(c.n), c.seed, c.lengths...)
		if len(parts) != len(c.want) {
			t.Fatalf("n=%d %v: %d parts, want %d", c.n, c.lengths, len(parts), len(c.want))
		}
		for i, p := range parts {
			if !slices.Equal(p.Indices, c.want[i]) {
				t.Errorf("n=%d %v seed %d: part %d is %v, want %v", c.n, c.lengths, c.seed, i, p.Indices, c.want[i])
			}
		}
		// appending to one part must not write into the next
		if len(parts) > 1 && len(parts[0].Indices) > 0 {
			next := parts[1].Indices[0]
			_ = append(parts[0].Indices, -1)
			if parts[1].Indices[0] != next {
				t.Errorf("n=%d: appending to part 0 changed part 1", c.n)
			}
		}
	}
	// the samples are the dataset's
	parts := RandomSplit(ramp(10), 42, 3, 7)
	if _, tgt := parts[0].Get(0); tgt.Int64s()[0] != 2 {
		t.Errorf("part 0 sample 0 is %v, want ramp's sample 2", tgt.Int64s())
	}
}

func TestRandomSplitMisuse(t *testing.T) {
	for name, c := range map[string]struct {
		ds      Dataset
		lengths []float64
		msg     string
	}{
		"sum short":      {ramp(10), []float64{3, 6}, "Sum of input lengths does not equal"},
		"sum long":       {ramp(10), []float64{5, 6}, "Sum of input lengths does not equal"},
		"negative count": {ramp(10), []float64{-1, 11}, "not a count"},
		"half count":     {ramp(5), []float64{2.5, 2.5}, "not a count"},
		"no lengths":     {ramp(5), nil, "no lengths"},
		"nil dataset":    {nil, []float64{1}, "nil dataset"},
		// isclose(sum, 1), but one fraction is out of [0, 1]
		"bad fraction": {ramp(10), []float64{1.5, -0.5}, "Fraction at index 0 is not between 0 and 1"},
	} {
		err := ember.Try(func() { RandomSplit(c.ds, 0, c.lengths...) })
		var ve *ember.ValueError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want an *ember.ValueError with %q", name, err, c.msg)
		}
	}
}

// TestConcatDataset: samples in order across the parts, Python's negative
// indices, an IndexError past either end, empty parts skipped, as
// torch.utils.data.ConcatDataset.
func TestConcatDataset(t *testing.T) {
	c := Concat(ramp(2), ramp(0), ramp(3))
	if c.Len() != 5 {
		t.Fatalf("Len %d, want 5", c.Len())
	}
	want := []int64{0, 1, 0, 1, 2}
	for i := -5; i < 5; i++ {
		_, tgt := c.Get(i)
		if got := tgt.Int64s()[0]; got != want[(i+5)%5] {
			t.Errorf("Get(%d) = %d, want %d", i, got, want[(i+5)%5])
		}
	}
	for _, i := range []int{5, -6} {
		var ie *ember.IndexError
		if err := ember.Try(func() { c.Get(i) }); !errors.As(err, &ie) {
			t.Errorf("Get(%d): %v, want an *ember.IndexError", i, err)
		}
	}
	var got [][]int64
	for b := range NewLoader(c, BatchSize(2)).Epoch(0) {
		got = append(got, b.Target.Int64s())
	}
	if len(got) != 3 || !slices.Equal(got[1], []int64{0, 1}) {
		t.Errorf("batches %v, want [[0 1] [0 1] [2]]", got)
	}
	for name, f := range map[string]func(){
		"none":     func() { Concat() },
		"nil part": func() { Concat(ramp(1), nil) },
	} {
		var ve *ember.ValueError
		if err := ember.Try(f); !errors.As(err, &ve) {
			t.Errorf("%s: %v, want an *ember.ValueError", name, err)
		}
	}
}
