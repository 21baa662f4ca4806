package ember

import (
	"sync"
	"testing"
)

// TestConcurrentBackwardSharedLeaf: backward passes in several goroutines
// that reach one leaf each add their whole gradient to it, as PyTorch's
// AccumulateGrad does under its mutex; unsynchronised, concurrent
// read-add-writes of the leaf's grad lost updates (one run gave 12 of 24).
// Run with -race.
func TestConcurrentBackwardSharedLeaf(t *testing.T) {
	const goroutines, steps = 4, 50
	w := FromSlice([]float64{1, -2, 3}, nil).SetRequiresGrad(true)
	x := FromSlice([]float64{0.5, 2, -1}, nil)
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range steps {
				w.Mul(x).Sum().Backward()                      // adds x, through the engine's owned-gradient path
				w.BackwardWith(Ones(Shape{3}, Dtype(Float64))) // a leaf's own pass adds 1 (accumulate)
				_ = w.Grad()
			}
		}()
	}
	wg.Wait()
	want := []float64{0.5, 2, -1}
	got := f64(w.Grad())
	for i := range want {
		if e := float64(goroutines*steps) * (want[i] + 1); got[i] != e {
			t.Fatalf("grad %v, want %d·(x+1) = %v at %d", got, goroutines*steps, e, i)
		}
	}
}
