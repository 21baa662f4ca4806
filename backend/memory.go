package backend

import "unsafe"

// MemStats are a device allocator's counters, named and defined as in
// torch.cuda.memory_stats: bytes held by live storages (allocated), bytes the
// allocator holds from the device including its cache (reserved), and peaks.
type MemStats struct {
	Allocated       int64
	MaxAllocated    int64
	Reserved        int64
	MaxReserved     int64
	NumAllocs       int64 // storages currently allocated
	NumAllocRetries int64 // allocations that succeeded only after freeing the cache
	NumOOMs         int64 // allocations that failed
	// Counters holds every counter under torch.cuda.memory_stats' keys, such
	// as "allocated_bytes.all.freed", "inactive_split_bytes.large_pool.peak"
	// or "num_ooms", where the backend keeps them (CUDA); nil otherwise.
	Counters map[string]int64
}

// AccumulatedStatsResetter is implemented by backends whose counters keep
// running totals (torch.cuda.reset_accumulated_memory_stats).
type AccumulatedStatsResetter interface {
	// ResetAccumulatedMemoryStats zeroes the "allocated" and "freed" totals
	// and the retry and out-of-memory counts.
	ResetAccumulatedMemoryStats(dev Device) error
}

// MemoryReporter is implemented by backends that account for their memory.
type MemoryReporter interface {
	MemoryStats(dev Device) (MemStats, error)
	ResetPeakMemoryStats(dev Device) error
	// EmptyCache returns cached, unused memory to the device.
	EmptyCache(dev Device) error
	// MemorySummary is a readable table like torch.cuda.memory_summary.
	MemorySummary(dev Device) (string, error)
}

// GemmOperand finds how a [rows, cols] matrix view with strides (sr, sc)
// can be handed to a row-major GEMM without a copy: as is (inner stride 1),
// or transposed (row stride 1), with its leading dimension.
func GemmOperand(rows, cols, sr, sc int) (trans bool, ld int, ok bool) {
	switch {
	case sc == 1 && (sr >= cols || rows == 1):
		return false, max(sr, cols, 1), true
	case sr == 1 && (sc >= rows || cols == 1):
		return true, max(sc, rows, 1), true
	}
	return false, 0, false
}

// Event is a marker in a device's queue of work, for timing and waiting.
type Event interface {
	// Synchronize waits until the work queued before the event is done.
	Synchronize() error
	// ElapsedMs is the time in milliseconds from start to this event; both
	// must have completed.
	ElapsedMs(start Event) (float64, error)
	// Done reports, without waiting, whether the work queued before the
	// event has completed.
	Done() (bool, error)
	Release()
}

// EventRecorder is implemented by asynchronous backends: RecordEvent queues
// an event after the work queued so far on dev.
type EventRecorder interface {
	RecordEvent(dev Device) (Event, error)
}

// StreamBackend is implemented by backends with several queues of work per
// device (CUDA streams). Stream 0 is the default stream.
type StreamBackend interface {
	NewStream(dev Device) (uintptr, error)
	DestroyStream(dev Device, s uintptr) error
	SynchronizeStream(dev Device, s uintptr) error
	// SetStream makes s the stream dev's work and allocations go to and
	// returns the previous one.
	SetStream(dev Device, s uintptr) uintptr
	// RecordStream marks storage as used on s (torch's record_stream).
	RecordStream(st Storage, s uintptr)
}

// StreamEvents is implemented by backends whose streams can be ordered
// with events (torch's Stream.wait_event, wait_stream and query).
type StreamEvents interface {
	// RecordEventOn records an event after the work queued so far on stream
	// s of dev (0: the default stream).
	RecordEventOn(dev Device, s uintptr) (Event, error)
	// WaitEvent makes the work queued from now on on stream s of dev wait
	// for ev, which may have been recorded on another device.
	WaitEvent(dev Device, s uintptr, ev Event) error
	// QueryStream reports, without waiting, whether all work queued on
	// stream s of dev is done.
	QueryStream(dev Device, s uintptr) (bool, error)
}

// AllocFailed, when set (package ember sets it), turns the failure of an
// allocation a backend makes for its own scratch inside an op into the
// value to panic with, so that it reaches the user as a failed tensor
// allocation does (*ember.OutOfMemoryError).
var AllocFailed func(dev Device, bytes int64, err error) error

// AllocPanic panics with AllocFailed's error for a scratch allocation of
// bytes on dev that failed with err (with err itself when AllocFailed is
// unset).
func AllocPanic(dev Device, bytes int64, err error) {
	if AllocFailed != nil {
		panic(AllocFailed(dev, bytes, err))
	}
	panic(err)
}

// CallerStream, when set (package ember sets it), returns the stream the
// calling goroutine chose for dev (ember.WithStream), or ok false when it
// chose none. Backends with streams consult it before the stream SetStream
// made current, so a stream chosen on one goroutine does not capture the
// work of the others.
var CallerStream func(dev Device) (s uintptr, ok bool)

// HostPinner is implemented by backends that can give page-locked host
// memory, which devices reach by DMA (faster copies, and copies that can
// overlap with work).
type HostPinner interface {
	AllocPinned(bytes int) (mem unsafe.Pointer, free func(), err error)
}
