// Package cpu is ember's CPU backend: storage is Go slices, kernels are
// concrete loops per (op, dtype) split across cores above a size threshold.
package cpu

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/gemm"
)

// Storage holds one of []float32, []float64, []int64, []int32, []bool,
// []backend.BF16, []backend.F16.
type Storage struct {
	dt   backend.DType
	data any
	n    int
	cls  int    // size class of a cacheable buffer (see cache.go); 0: not cached
	acct *acct  // what the storage counts in the statistics
	free func() // for page-locked memory owned by a driver; nil for Go memory
}

// acct is a storage's share of the memory statistics: live bytes (n times
// the element size, -1 once released) and reserved bytes (its buffer).
type acct struct {
	live     atomic.Int64
	reserved int64
}

// Device is always cpu.
func (s *Storage) Device() backend.Device { return backend.Device{Type: backend.CPUType} }

// DType is the element type.
func (s *Storage) DType() backend.DType { return s.dt }

// Len is the number of elements.
func (s *Storage) Len() int { return s.n }

// Release gives the buffer back now: to the CPU backend's cache of
// released buffers when it is large (see SetCacheLimit), else to the
// garbage collector. The storage must not be used afterwards; kernels
// given it panic.
func (s *Storage) Release() {
	if b := s.acct.live.Swap(-1); b >= 0 {
		account(-b)
		numLive.Add(-1)
		if s.free != nil {
			s.free()
		} else if s.cls > 0 && s.data != nil {
			cache.put(dataPointer(s.data), s.cls)
		}
		accountReserved(-s.acct.reserved)
	}
	s.data = nil
}

// Pinned reports whether the storage is page-locked memory (see NewPinned).
func (s *Storage) Pinned() bool { return s.free != nil }

// NewPinned wraps n elements of page-locked host memory at mem (from a GPU
// driver) as CPU storage; free returns the memory, on Release or, as a
// safety net, when the storage is collected.
func NewPinned(dt backend.DType, n int, mem unsafe.Pointer, free func()) *Storage {
	var data any
	switch dt {
	case backend.Float32:
		data = unsafe.Slice((*float32)(mem), n)
	case backend.Float64:
		data = unsafe.Slice((*float64)(mem), n)
	case backend.Int64:
		data = unsafe.Slice((*int64)(mem), n)
	case backend.Int32:
		data = unsafe.Slice((*int32)(mem), n)
	case backend.Bool:
		data = unsafe.Slice((*bool)(mem), n)
	case backend.BFloat16:
		data = unsafe.Slice((*backend.BF16)(mem), n)
	case backend.Float16:
		data = unsafe.Slice((*backend.F16)(mem), n)
	}
	return track(&Storage{dt: dt, data: data, n: n, free: free})
}

// Data returns the underlying slice (for the CPU backend's own use and
// tests). It must not be used after Release: the buffer may then serve
// another storage.
func (s *Storage) Data() any { return s.data }

// Pointer is the address of element 0 (nil when Len is 0 or after
// Release), for backend.HostStorage.
func (s *Storage) Pointer() unsafe.Pointer {
	if s.n == 0 {
		return nil
	}
	return dataPointer(s.data)
}

var _ backend.HostStorage = (*Storage)(nil)

// WrapPinned is NewPinned, for backend.PinnedWrapper.
func (Backend) WrapPinned(dt backend.DType, n int, mem unsafe.Pointer, free func()) backend.HostStorage {
	return NewPinned(dt, n, mem, free)
}

var (
	liveBytes atomic.Int64
	peakBytes atomic.Int64
	numLive   atomic.Int64
)

func account(delta int64) {
	v := liveBytes.Add(delta)
	pace(v, delta)
	for {
		p := peakBytes.Load()
		if v <= p || peakBytes.CompareAndSwap(p, v) {
			return
		}
	}
}

// Go's garbage collector paces itself by the whole Go heap, in which the
// buffers of live tensors and the buffer cache count as live: with GOGC's
// default a program may allocate as much again as all of them before the
// next collection finds its dropped tensors. Until then every allocation
// misses the cache and takes fresh memory that Go must zero and the kernel
// must fault in, so a training loop's memory and time grow for tens of
// steps before it settles (on a VM whose page faults are slow, a step ran
// 2–5× slower while it grew). So the backend paces collections by its own
// storages too: once the bytes of unreleased storages have grown by
// gcGrowth since the lowest they have been since the last collection it
// started (a quarter of that, when larger), it starts one in the
// background (with one P, in the allocating goroutine: see pace), whose
// finalizers return the dropped tensors' buffers to the cache.
// Collections are cheap here: tensor buffers hold no pointers and
// are not scanned. EMBER_CPU_GC_MB sets gcGrowth in MiB (0: leave pacing to
// Go alone).
var (
	gcGrowth  atomic.Int64 // EMBER_CPU_GC_MB MiB (set in init; tests change it)
	gcBase    atomic.Int64 // the lowest liveBytes since the last collection started
	gcRunning atomic.Bool
	gcStarted atomic.Int64 // collections started by pace (tests)
)

func envMB(k string, d int) int {
	if v, err := strconv.Atoi(os.Getenv(k)); err == nil && v >= 0 {
		return v
	}
	return d
}

func init() { gcGrowth.Store(int64(envMB("EMBER_CPU_GC_MB", 64)) << 20) }

func pace(v, delta int64) {
	growth := gcGrowth.Load()
	if growth == 0 {
		return
	}
	if delta < 0 {
		for {
			b := gcBase.Load()
			if v >= b || gcBase.CompareAndSwap(b, v) {
				return
			}
		}
	}
	b := gcBase.Load()
	if v-b < max(growth, b/4) || !gcRunning.CompareAndSwap(false, true) {
		return
	}
	gcBase.Store(v)
	gcStarted.Add(1)
	collect := func() {
		runtime.GC()
		gcRunning.Store(false)
	}
	if runtime.GOMAXPROCS(0) == 1 {
		// One P: a background collection, and the finalizers that return
		// the buffers to the cache, would run only when the allocating
		// goroutine is preempted (every ~10 ms), so the buffers came back
		// steps late and the loop ran on fresh, faulting memory (the CNN
		// step on one thread: ~1700 page faults and ~43 ms a step, rather
		// than ~60 and ~24). Collect here, then let the finalizer
		// goroutine run.
		collect()
		runtime.Gosched()
		return
	}
	go collect()
}

// LiveBytes is the number of bytes held by storages not yet released
// (released ones and those collected by the GC are not counted once freed).
func LiveBytes() int64 { return liveBytes.Load() }

// newStorage returns storage for n elements: uninitialised when its buffer
// comes from the cache of released buffers, zeroed otherwise.
func newStorage(dt backend.DType, n int) *Storage {
	data, cls := newBuffer(dt, n)
	return track(&Storage{dt: dt, data: data, n: n, cls: cls})
}

// track counts a new storage in the memory statistics until it is released
// or collected.
func track(s *Storage) *Storage {
	a := &acct{reserved: int64(s.n * s.dt.Size())}
	if s.cls > 0 {
		a.reserved = int64(s.cls)
	}
	a.live.Store(int64(s.n * s.dt.Size()))
	account(a.live.Load())
	accountReserved(a.reserved)
	numLive.Add(1)
	s.acct = a
	free := s.free
	runtime.AddCleanup(s, func(a *acct) {
		if b := a.live.Swap(-1); b >= 0 {
			account(-b)
			accountReserved(-a.reserved)
			numLive.Add(-1)
			if free != nil {
				free()
			}
		}
	}, a)
	return s
}

func slice[T any](s backend.Storage) []T {
	cs, ok := s.(*Storage)
	if !ok {
		panic(fmt.Sprintf("cpu: storage from another backend (%T)", s))
	}
	if cs.data == nil {
		panic("cpu: use of released storage")
	}
	return cs.data.([]T)
}

// --- parallel iteration over strided operands ---

// grain is the work (elements × cost) a worker must have at least: below
// 2×grain an op stays on the calling goroutine. Waking a helper costs tens
// of µs on a busy machine, as long as a vectorised add of 100K float32 in
// cache. Tests lower it to reach the parallel paths with small tensors.
var grain = 1 << 17

var threads atomic.Int32

func init() { threads.Store(int32(runtime.GOMAXPROCS(0))) }

// SetThreads sets how many goroutines large kernels use.
func SetThreads(n int) {
	if n < 1 {
		n = 1
	}
	threads.Store(int32(n))
	gemm.SetThreads(n)
}

// Threads returns the number of goroutines large kernels use.
func Threads() int { return int(threads.Load()) }

// parallelFor splits [0, total) into contiguous ranges run by up to
// Threads() goroutines when the work (total × cost per element) is large
// enough: the caller runs ranges too, and the ranges (four per worker) are
// taken in turn, so a helper that starts late (waking a parked thread can
// take tens of µs) costs nothing but its share. Each goroutine takes its
// own quarter of the ranges first (gemm.RunHome), so that consecutive
// passes over a tensor read each part on the core that read it last
// (sum_16M on the 2-core Zen 5 VM: ~914 → ~852 µs, medians of six
// alternating runs). The helpers are the GEMM's pool workers, which poll
// for work a while after each job: between two convolutions the next
// elementwise op gets its second thread at once. Which goroutine runs a
// range never changes a result.
func parallelFor(total, cost int, fn func(lo, hi int)) {
	w := Threads()
	if work := total * cost; work/grain < w {
		w = work / grain
	}
	if w > total {
		w = total
	}
	if w <= 1 {
		fn(0, total)
		return
	}
	chunks := min(total, 4*w)
	gemm.RunHome(chunks, w, func(_, c int) { fn(total*c/chunks, total*(c+1)/chunks) })
}

// layout is backend.Layout, the coalesced iteration space, with the CPU's
// ways to walk it (walk, each).
type layout backend.Layout

// coalesce is backend.CoalesceViews, keeping each view's offset as its base.
func coalesce(shape []int, views ...backend.View) layout {
	return layout(backend.CoalesceViews(shape, views...))
}

func (l layout) total() int { return backend.Layout(l).Total() }

// inner returns the last dim's stride of operand k.
func (l layout) inner(k int) int { return backend.Layout(l).Inner(k) }

// outer returns the second-to-last dim's stride of operand k (0 for 1-D).
func (l layout) outer(k int) int { return backend.Layout(l).Outer(k) }

// walk calls blk for the 2-D blocks that cover the linear range [lo, hi):
// n0 rows of the second-to-last dim (strides outer(k)) of n1 elements of
// the last (strides inner(k)), with the operands' offsets at the block's
// start. Kernels loop over a block without calls, so that short rows (a
// pooling window, a broadcast inner dim) cost no call each.
func (l layout) walk(lo, hi int, blk func(off []int, n0, n1 int)) {
	if lo >= hi {
		return
	}
	nd, nk := len(l.Shape), len(l.Base)
	off := make([]int, nk)
	if nd == 1 {
		for k := range off {
			off[k] = l.Base[k] + lo*l.Strides[k][0]
		}
		blk(off, 1, hi-lo)
		return
	}
	idx := make([]int, nd)
	rem := lo
	for i := nd - 1; i >= 0; i-- {
		idx[i] = rem % l.Shape[i]
		rem /= l.Shape[i]
	}
	for k := range off {
		o := l.Base[k]
		for i, st := range l.Strides[k] {
			o += idx[i] * st
		}
		off[k] = o
	}
	// step moves dim i's index by n, and the offsets with it.
	step := func(i, n int) {
		idx[i] += n
		for k := range off {
			off[k] += n * l.Strides[k][i]
		}
	}
	last, rows := l.Shape[nd-1], l.Shape[nd-2]
	for cur := lo; cur < hi; {
		if j := idx[nd-1]; j != 0 || hi-cur < last { // part of a row
			n1 := min(last-j, hi-cur)
			blk(off, 1, n1)
			cur += n1
			step(nd-1, n1)
			if idx[nd-1] < last {
				continue
			}
			step(nd-1, -last)
			step(nd-2, 1)
		} else {
			n0 := min(rows-idx[nd-2], (hi-cur)/last)
			blk(off, n0, last)
			cur += n0 * last
			step(nd-2, n0)
		}
		for i := nd - 2; i > 0 && idx[i] == l.Shape[i]; i-- {
			step(i, -l.Shape[i])
			step(i-1, 1)
		}
	}
}

// each runs blk over the whole layout, split across workers when large;
// cost is the work per element. Workers get whole rows when there are
// enough of them.
func (l layout) each(cost int, blk func(off []int, n0, n1 int)) {
	total := l.total()
	if total == 0 {
		return
	}
	if last := l.Shape[len(l.Shape)-1]; len(l.Shape) > 1 && total/last >= 2*Threads() {
		parallelFor(total/last, cost*last, func(lo, hi int) { l.walk(lo*last, hi*last, blk) })
		return
	}
	parallelFor(total, cost, func(lo, hi int) { l.walk(lo, hi, blk) })
}
