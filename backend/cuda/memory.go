package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/alloc"
	"github.com/emberml/ember/backend/cuda/internal/kcache"
)

// opened returns device i when it has been opened. A valid device not yet
// opened is (nil, nil): its allocator has done nothing, and, as
// torch.cuda.memory_stats before CUDA is initialised, reporting that must
// not create a context (hundreds of MiB on the GPU, a process listed on
// it). An index the backend cannot serve is an error.
func (b *Backend) opened(i int) (*device, error) {
	b.mu.Lock()
	d, ok := b.devs[i]
	err, bad := b.errs[i]
	b.mu.Unlock()
	if ok {
		return d, nil
	}
	if bad {
		return nil, err
	}
	n, err := b.opener.Count()
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= n {
		return nil, fmt.Errorf("invalid device ordinal %d: %d CUDA device(s) present", i, n)
	}
	return nil, nil
}

// stats are device i's allocator counters; those of a fresh allocator when
// the device has not been opened.
func (b *Backend) stats(i int) (alloc.Stats, error) {
	d, err := b.opened(i)
	if err != nil || d == nil {
		s := alloc.Stats{MaxSplitSize: -1}
		return s, err
	}
	return d.pool.Stats(), nil
}

// MemoryStats reports the caching allocator's counters (all pools).
func (b *Backend) MemoryStats(dev backend.Device) (backend.MemStats, error) {
	s, err := b.stats(dev.Index)
	if err != nil {
		return backend.MemStats{}, err
	}
	a, r, n := s.AllocatedBytes[alloc.StatAll], s.ReservedBytes[alloc.StatAll], s.Allocation[alloc.StatAll]
	return backend.MemStats{
		Allocated: a.Current, MaxAllocated: a.Peak,
		Reserved: r.Current, MaxReserved: r.Peak,
		NumAllocs: n.Current, NumAllocRetries: s.NumAllocRetries, NumOOMs: s.NumOOMs,
		Counters: s.Map(),
	}, nil
}

// ResetAccumulatedMemoryStats zeroes the running totals and the retry and
// OOM counts.
func (b *Backend) ResetAccumulatedMemoryStats(dev backend.Device) error {
	d, err := b.opened(dev.Index)
	if d != nil {
		d.pool.ResetAccumulatedStats()
	}
	return err
}

// ResetPeakMemoryStats restarts the peaks.
func (b *Backend) ResetPeakMemoryStats(dev backend.Device) error {
	d, err := b.opened(dev.Index)
	if d != nil {
		d.pool.ResetPeakStats()
	}
	return err
}

// EmptyCache returns every fully free segment to the device.
func (b *Backend) EmptyCache(dev backend.Device) error {
	d, err := b.opened(dev.Index)
	if d == nil {
		return err
	}
	return d.pool.EmptyCache()
}

// MemorySummary is torch.cuda.memory_summary's table.
func (b *Backend) MemorySummary(dev backend.Device) (string, error) {
	s, err := b.stats(dev.Index)
	if err != nil {
		return "", err
	}
	return s.Summary(dev.Index), nil
}

// KernelCacheDir is where compiled kernels are kept (EMBER_CACHE_DIR or the
// user cache directory).
func KernelCacheDir() (string, error) { return kcache.DefaultDir() }

// event is a timing event on a device's stream. One dropped without
// Release is destroyed by a GC cleanup, as torch.cuda.Event's destructor
// destroys its CUDA event.
type event struct {
	d  *device
	ev uintptr
	// released is shared with the cleanup, so it is allocated apart from
	// the event (see Storage.released).
	released *atomic.Bool
}

func newEvent(d *device, ev uintptr) *event {
	e := &event{d: d, ev: ev, released: new(atomic.Bool)}
	runtime.AddCleanup(e, func(r eventReleaser) { r.release() }, e.releaser())
	return e
}

type eventReleaser struct {
	g        GPU
	ev       uintptr
	released *atomic.Bool
}

func (r eventReleaser) release() {
	if r.released.CompareAndSwap(false, true) {
		_ = r.g.DestroyEvent(r.ev)
	}
}

func (e *event) releaser() eventReleaser { return eventReleaser{e.d.gpu, e.ev, e.released} }

var errReleasedEvent = errors.New("cuda: use of a released event")

// The methods keep e reachable until the driver call returns: its cleanup
// would destroy the event under it.

func (e *event) Synchronize() error {
	if e.released.Load() {
		return errReleasedEvent
	}
	err := e.d.gpu.EventSynchronize(e.ev)
	runtime.KeepAlive(e)
	return err
}

func (e *event) Done() (bool, error) {
	if e.released.Load() {
		return false, errReleasedEvent
	}
	done, err := e.d.gpu.EventDone(e.ev)
	runtime.KeepAlive(e)
	return done, err
}

func (e *event) ElapsedMs(start backend.Event) (float64, error) {
	s, ok := start.(*event)
	if !ok || s.d != e.d {
		return 0, fmt.Errorf("cuda: events from different devices")
	}
	if e.released.Load() || s.released.Load() {
		return 0, errReleasedEvent
	}
	ms, err := e.d.gpu.EventElapsedMs(s.ev, e.ev)
	runtime.KeepAlive(s)
	runtime.KeepAlive(e)
	return ms, err
}

// Release destroys the event now; later calls do nothing.
func (e *event) Release() { e.releaser().release() }

// RecordEvent queues a timing event after the work queued so far.
func (b *Backend) RecordEvent(dev backend.Device) (backend.Event, error) {
	d, err := b.device(dev.Index)
	if err != nil {
		return nil, err
	}
	ev, err := d.gpu.RecordTimingEvent(d.current())
	if err != nil {
		return nil, err
	}
	return newEvent(d, ev), nil
}

// RecordEventOn queues a timing event after the work queued so far on s.
func (b *Backend) RecordEventOn(dev backend.Device, s uintptr) (backend.Event, error) {
	d, err := b.device(dev.Index)
	if err != nil {
		return nil, err
	}
	ev, err := d.gpu.RecordTimingEvent(s)
	if err != nil {
		return nil, err
	}
	return newEvent(d, ev), nil
}

// WaitEvent makes later work on stream s of dev wait for ev, which may be
// an event of another CUDA device (cuStreamWaitEvent accepts it).
func (b *Backend) WaitEvent(dev backend.Device, s uintptr, ev backend.Event) error {
	d, err := b.device(dev.Index)
	if err != nil {
		return err
	}
	e, ok := ev.(*event)
	if !ok {
		return fmt.Errorf("cuda: WaitEvent of an event that is not a recorded CUDA event")
	}
	if e.released.Load() {
		return errReleasedEvent
	}
	err = d.gpu.StreamWaitEvent(s, e.ev)
	runtime.KeepAlive(e)
	return err
}

// QueryStream reports whether the work queued on s is done.
func (b *Backend) QueryStream(dev backend.Device, s uintptr) (bool, error) {
	d, err := b.device(dev.Index)
	if err != nil {
		return false, err
	}
	return d.gpu.StreamQuery(s)
}

// NewStream creates a stream on dev.
func (b *Backend) NewStream(dev backend.Device) (uintptr, error) {
	d, err := b.device(dev.Index)
	if err != nil {
		return 0, err
	}
	return d.gpu.StreamCreate()
}

// DestroyStream waits for the work queued on a stream made by NewStream and
// destroys it. Its memory in the caching allocator goes to the default
// stream (alloc's ReleaseStream): a pool keyed by a dead handle would keep
// it from every stream, or hand it to a new stream that got the handle.
func (b *Backend) DestroyStream(dev backend.Device, s uintptr) error {
	d, err := b.device(dev.Index)
	if err != nil {
		return err
	}
	if s == 0 {
		return fmt.Errorf("cuda: the default stream cannot be destroyed")
	}
	if err := d.gpu.StreamSynchronize(s); err != nil {
		return err
	}
	err = d.pool.ReleaseStream(s)
	return errors.Join(err, d.gpu.StreamDestroy(s))
}

// SynchronizeStream waits for the work queued on s.
func (b *Backend) SynchronizeStream(dev backend.Device, s uintptr) error {
	d, err := b.device(dev.Index)
	if err != nil {
		return err
	}
	return d.gpu.StreamSynchronize(s)
}

// current is the stream dev's work goes to: the calling goroutine's choice
// (backend.CallerStream), else the one SetStream made current.
func (d *device) current() uintptr {
	if f := backend.CallerStream; f != nil {
		if s, ok := f(backend.Device{Type: backend.CUDAType, Index: d.index}); ok {
			return s
		}
	}
	return d.stream.Load()
}

// SetStream makes s the stream dev's work and allocations go to and
// returns the previous one.
func (b *Backend) SetStream(dev backend.Device, s uintptr) uintptr {
	return b.mustDevice(dev.Index).stream.Swap(s)
}

// RecordStream marks a storage as used on s, so its memory is reused only
// after the work queued on s by then is done (torch's record_stream).
func (b *Backend) RecordStream(st backend.Storage, s uintptr) {
	cs := storageOf(st)
	if cs.blk != nil {
		cs.dev.pool.RecordStream(cs.blk, s)
	}
}

// AllocPinned returns page-locked host memory through device 0's context.
func (b *Backend) AllocPinned(bytes int) (unsafe.Pointer, func(), error) {
	d, err := b.device(0)
	if err != nil {
		return nil, nil, err
	}
	p, err := d.gpu.AllocHost(uint64(max(bytes, 1)))
	if err != nil {
		return nil, nil, err
	}
	return p, func() { _ = d.gpu.FreeHost(p) }, nil
}
