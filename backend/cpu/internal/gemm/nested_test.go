package gemm

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestNestedJobs: parallel jobs started from inside the items of another
// (RunItems in RunItems, a parallel Sgemm in each item, as the CPU
// backend's attention does) finish with the right results, although the
// pool's one worker is busy with the outer job: a job runs alone what no
// free worker takes.
func TestNestedJobs(t *testing.T) {
	defer SetThreads(0)
	SetThreads(2)
	tc := gemmCase{m: 160, n: 160, k: 160, alpha: 1} // 4M multiply-adds: parallel
	d := refFor[float32](tc)
	defer clearRefs()
	done := make(chan struct{})
	var bad, inner atomic.Int64
	go func() {
		defer close(done)
		RunItems(6, 2, func(_, _ int) {
			RunItems(4, 2, func(_, _ int) { inner.Add(1) })
			c := make([]float32, len(d.c))
			Sgemm(false, false, tc.m, tc.n, tc.k, 1, d.a, d.lda, d.b, d.ldb, 0, c, d.ldc)
			for i, v := range c {
				if diff := float64(v - d.want[i]); diff > 1e-3 || diff < -1e-3 {
					bad.Add(1)
					return
				}
			}
		})
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("nested parallel jobs did not finish (deadlock)")
	}
	if bad.Load() != 0 || inner.Load() != 24 {
		t.Fatalf("%d wrong products, %d inner items (want 0, 24)", bad.Load(), inner.Load())
	}
}

// TestRunHome: every item runs exactly once, on a worker below t, for
// item counts below, at and above the worker count, alone and nested in
// another job's items; a worker runs its own home range from its front.
func TestRunHome(t *testing.T) {
	defer SetThreads(0)
	SetThreads(3)
	for _, workers := range []int{1, 2, 3, 5} {
		for _, total := range []int{1, 2, 3, 7, 64, 1000} {
			counts := make([]atomic.Int32, total)
			var bad atomic.Int32
			RunHome(total, workers, func(w, it int) {
				if w < 0 || w >= min(workers, total) {
					bad.Add(1)
				}
				counts[it].Add(1)
			})
			for it := range counts {
				if n := counts[it].Load(); n != 1 {
					t.Fatalf("t %d total %d: item %d ran %d times", workers, total, it, n)
				}
			}
			if bad.Load() != 0 {
				t.Fatalf("t %d total %d: %d items on a worker ≥ t", workers, total, bad.Load())
			}
		}
	}
	// the caller (worker 0), alone, runs its own range first, in order
	var order []int
	RunHome(8, 1, func(_, it int) { order = append(order, it) })
	for i, it := range order {
		if it != i {
			t.Fatalf("one worker's order %v", order)
		}
	}
	done := make(chan struct{})
	var inner atomic.Int64
	go func() {
		defer close(done)
		RunHome(6, 2, func(_, _ int) {
			RunHome(4, 2, func(_, _ int) { inner.Add(1) })
			RunItems(4, 2, func(_, _ int) { inner.Add(1) })
		})
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("nested jobs did not finish (deadlock)")
	}
	if inner.Load() != 48 {
		t.Fatalf("%d inner items, want 48", inner.Load())
	}
}
