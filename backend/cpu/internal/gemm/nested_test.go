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
