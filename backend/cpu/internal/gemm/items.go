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
	next     atomic.Int64
	total    int64
	fn       func(w, it int)
	finished atomic.Int64 // parts done (of t-1 offered)
	tickets  []ticket
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

func (j *itemsJob) done() { j.finished.Add(1) }

// workers is how many goroutines a job of total items with about cost
// multiply-adds each should use.
func workers(total int, cost float64) int {
	t := min(numThreads(), total)
	if float64(total)*cost < parallelFlops {
		t = 1
	}
	return max(t, 1)
}

// runItems runs fn over items 0..total-1 on up to t goroutines (the caller
// and t-1 workers of the pool shared with the GEMM, as many as are free).
// fn may start other parallel jobs.
func runItems(total, t int, fn func(w, it int)) {
	t = min(t, total)
	if t <= 1 {
		for it := 0; it < total; it++ {
			fn(0, it)
		}
		return
	}
	j := &itemsJob{total: int64(total), fn: fn}
	offer(j, t, &j.tickets)
	j.runPart(0)
	withdraw(j.tickets)
	waitFor(&j.finished, int64(t-1))
}

// RunItems is runItems for the CPU backend's own loops, so that they share
// the GEMM's workers: a worker that has just finished a product polls for
// more work before it parks (parallel.go), and a goroutine started afresh
// would wait behind it (the poller keeps its P) or for a parked thread to
// wake, and the caller would run every item alone.
func RunItems(total, t int, fn func(w, it int)) { runItems(total, t, fn) }

// homeJob is itemsJob with each worker's share kept in one place: the
// items are cut into t contiguous home ranges, and worker w takes the
// items of its own range from the front, then those left in the others'
// ranges from their back ends. So a pass over the same tensor as the last
// one gives each worker the part it read then, still in its core's caches
// (on the 2-core Zen 5 VM, two threads pinned to the cores summed the
// halves of a 64 MB tensor at 58-63 GB/s when each kept its half, 51-54
// when they swapped halves every pass), while a worker that starts late
// still costs only the items it does not take.
type homeJob struct {
	ranges   []atomic.Uint64 // per worker: next<<32 | end
	fn       func(w, it int)
	finished atomic.Int64
	tickets  []ticket
}

// take takes an item of range r: its first (front) or its last.
func (j *homeJob) take(r int, front bool) (int, bool) {
	for {
		v := j.ranges[r].Load()
		next, end := v>>32, v&0xFFFFFFFF
		if next >= end {
			return 0, false
		}
		nv, it := (next+1)<<32|end, next
		if !front {
			nv, it = next<<32|(end-1), end-1
		}
		if j.ranges[r].CompareAndSwap(v, nv) {
			return int(it), true
		}
	}
}

func (j *homeJob) runPart(w int) {
	t := len(j.ranges)
	for k := 0; k < t; k++ {
		r := (w + k) % t
		for {
			it, ok := j.take(r, k == 0)
			if !ok {
				break
			}
			j.fn(w, it)
		}
	}
}

func (j *homeJob) done() { j.finished.Add(1) }

// RunHome is RunItems with home ranges (see homeJob): for passes over
// memory, where which worker reads which part matters. total < 2³².
func RunHome(total, t int, fn func(w, it int)) {
	t = min(t, total)
	if t <= 1 {
		runItems(total, 1, fn) // in order, on the caller
		return
	}
	j := &homeJob{ranges: make([]atomic.Uint64, t), fn: fn}
	for w := range t {
		j.ranges[w].Store(uint64(total*w/t)<<32 | uint64(total*(w+1)/t))
	}
	offer(j, t, &j.tickets)
	j.runPart(0)
	withdraw(j.tickets)
	waitFor(&j.finished, int64(t-1))
}

// Scratch buffers (the convolutions' rearranged inputs, packed weights),
// cached by power-of-two capacity so that layers of different sizes reuse
// each other's memory. Unlike a sync.Pool the cache survives garbage
// collections (frequent in training, and a fresh buffer costs a zeroing
// pass); it holds at most scratchLimit bytes, the rest goes to the GC.
const scratchLimit = 128 << 20

type scratchCache[T float] struct {
	mu    sync.Mutex
	free  [48][][]T
	bytes int
}

var (
	scratchS scratchCache[float32]
	scratchD scratchCache[float64]
)

func scratchOf[T float]() *scratchCache[T] {
	var z T
	if unsafe.Sizeof(z) == 4 {
		return any(&scratchS).(*scratchCache[T])
	}
	return any(&scratchD).(*scratchCache[T])
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
	sc := scratchOf[T]()
	sc.mu.Lock()
	if l := len(sc.free[c]); l > 0 {
		b := sc.free[c][l-1]
		sc.free[c] = sc.free[c][:l-1]
		sc.bytes -= cap(b) * int(unsafe.Sizeof(b[0]))
		sc.mu.Unlock()
		return b[:n]
	}
	sc.mu.Unlock()
	return make([]T, n, 1<<c)
}

// putScratch returns a buffer from getScratch.
func putScratch[T float](b []T) {
	c := sizeClass(cap(b))
	if 1<<c != cap(b) {
		return
	}
	b = b[:cap(b)]
	size := cap(b) * int(unsafe.Sizeof(b[0]))
	sc := scratchOf[T]()
	sc.mu.Lock()
	if sc.bytes+size <= scratchLimit {
		sc.free[c] = append(sc.free[c], b)
		sc.bytes += size
	}
	sc.mu.Unlock()
}

// freeList keeps released values (packing buffers, jobs) for reuse. Unlike
// a sync.Pool it is not emptied by garbage collections; it keeps at most
// 64, more than goroutines ever hold them at once.
type freeList[X any] struct {
	mu    sync.Mutex
	items []X
}

func (f *freeList[X]) get() (x X, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.items); n > 0 {
		x, ok = f.items[n-1], true
		f.items = f.items[:n-1]
	}
	return
}

func (f *freeList[X]) put(x X) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.items) < 64 {
		f.items = append(f.items, x)
	}
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
