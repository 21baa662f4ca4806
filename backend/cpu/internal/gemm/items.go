package gemm

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// itemsJob hands out items 0..total-1 through an atomic counter to the
// calling goroutine and t-1 pool workers; fn runs item it on worker w
// (0 ≤ w < t), so per-worker state can live in a slice indexed by w.
type itemsJob struct {
	next  atomic.Int64
	total int64
	fn    func(w, it int)
	wg    sync.WaitGroup
}

func (j *itemsJob) runPart(w int) {
	for {
		it := j.next.Add(1) - 1
		if it >= j.total {
			return
		}
		j.fn(w, int(it))
	}
}

func (j *itemsJob) done() { j.wg.Done() }

// workers is how many goroutines a job of total items with about cost
// multiply-adds each should use.
func workers(total int, cost float64) int {
	t := min(numThreads(), total)
	if float64(total)*cost < parallelFlops {
		t = 1
	}
	return max(t, 1)
}

// runItems runs fn over items 0..total-1 on t goroutines (the caller and
// t-1 workers of the pool shared with the GEMM). fn must not start another
// parallel job.
func runItems(total, t int, fn func(w, it int)) {
	t = min(t, total)
	if t <= 1 {
		for it := 0; it < total; it++ {
			fn(0, it)
		}
		return
	}
	j := &itemsJob{total: int64(total), fn: fn}
	startWorkers(t - 1)
	j.wg.Add(t - 1)
	for i := 1; i < t; i++ {
		workCh <- work{p: j, i: i}
	}
	j.runPart(0)
	j.wg.Wait()
}

// Scratch buffers, pooled by power-of-two capacity so that layers of
// different sizes reuse each other's memory.
var (
	scratchS [40]sync.Pool
	scratchD [40]sync.Pool
)

func scratchPools[T float]() *[40]sync.Pool {
	var z T
	if unsafe.Sizeof(z) == 4 {
		return &scratchS
	}
	return &scratchD
}

func sizeClass(n int) int {
	c := 0
	for 1<<c < n {
		c++
	}
	return c
}

// getScratch returns a buffer of n elements with undefined contents.
func getScratch[T float](n int) []T {
	c := sizeClass(max(n, 64))
	if v := scratchPools[T]()[c].Get(); v != nil {
		return (*v.(*[]T))[:n]
	}
	return make([]T, n, 1<<c)
}

// putScratch returns a buffer from getScratch.
func putScratch[T float](b []T) {
	c := sizeClass(cap(b))
	if 1<<c != cap(b) {
		return
	}
	b = b[:cap(b)]
	scratchPools[T]()[c].Put(&b)
}

// kernelOf returns the micro-kernel in use for T.
func kernelOf[T float]() *kernel[T] {
	ks := current.Load()
	var z T
	if unsafe.Sizeof(z) == 4 {
		return any(ks.s).(*kernel[T])
	}
	return any(ks.d).(*kernel[T])
}
