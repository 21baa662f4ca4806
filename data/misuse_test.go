package data

import (
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/testenv"
)

// shrinking is a dataset whose Len can be changed after the loader is made.
type shrinking struct{ n int }

func (s *shrinking) Len() int { return s.n }
func (s *shrinking) Get(i int) (*ember.Tensor, *ember.Tensor) {
	return ember.Scalar(float64(i)), ember.Scalar(float64(i))
}

type negSampler struct{}

func (negSampler) Indices(int) []int { return nil }
func (negSampler) Len() int          { return -1 }

// As torch's DataLoader(num_workers=-1) ("num_workers option should be
// non-negative") and len() of a dataset whose __len__ is negative
// ("__len__() should return >= 0"): typed errors, not makeslice.
func TestLoaderRefusesNegatives(t *testing.T) {
	e := testenv.Raises[*ember.ValueError](t, "Workers(-1)", func() { NewLoader(ramp(4), Workers(-1)) })
	if e.Op != "data.NewLoader" || !strings.HasPrefix(e.Msg, "num_workers option should be non-negative") {
		t.Error(e)
	}
	testenv.Raises[*ember.ValueError](t, "Prefetch(-1)", func() { NewLoader(ramp(4), Workers(1), Prefetch(-1)) })
	e = testenv.Raises[*ember.ValueError](t, "Len -3", func() { NewLoader(ramp(-3)) })
	if e.Msg != "the dataset's Len() returned -3; it should return >= 0" {
		t.Error(e)
	}
	ds := &shrinking{3}
	l := NewLoader(ds, BatchSize(2), Shuffle(1))
	ds.n = -2
	testenv.Raises[*ember.ValueError](t, "Len", func() { l.Len() })
	testenv.Raises[*ember.ValueError](t, "Order", func() { l.Order(0) })
	testenv.Raises[*ember.ValueError](t, "Epoch", func() {
		for range l.Epoch(0) {
		}
	})
	testenv.Raises[*ember.ValueError](t, "sampler Len -1", func() { NewLoader(ramp(4), WithSampler(negSampler{})).Len() })

	// a nil loader (a field never set) and a nil dataset
	var nl *DataLoader
	testenv.Raises[*ember.ValueError](t, "nil loader Len", func() { nl.Len() })
	testenv.Raises[*ember.ValueError](t, "nil loader Epoch", func() { nl.Epoch(0) })
	testenv.Raises[*ember.ValueError](t, "nil loader BatchSize", func() { nl.BatchSize() })
	testenv.Raises[*ember.ValueError](t, "Take(nil)", func() { Take(nil, 2) })

	// Subset indexes its own indices
	sub := &Subset{DS: ramp(10), Indices: []int{7, 3}}
	ie := testenv.Raises[*ember.IndexError](t, "Subset.Get(2)", func() { sub.Get(2) })
	if ie.Index != 2 || ie.Size != 2 {
		t.Error(ie)
	}
	if _, y := sub.Get(1); y.Int64s()[0] != 3 {
		t.Errorf("Subset.Get(1) = %v, want 3", y)
	}
	testenv.Raises[*ember.ValueError](t, "Subset{nil}.Get", func() { (&Subset{Indices: []int{0}}).Get(0) })

	// what torch takes still works: 0 workers, an empty dataset
	if got := collect(NewLoader(ramp(0), Workers(0)), 0); len(got) != 0 {
		t.Errorf("empty dataset: %v", got)
	}
}
