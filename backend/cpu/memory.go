package cpu

import (
	"fmt"
	"runtime"

	"github.com/emberml/ember/backend"
)

// MemoryStats reports host bytes held by live CPU storages. The CPU backend
// has no cache of its own (Go's heap is the cache), so reserved equals
// allocated; storages dropped without Release count until the GC takes them.
func (Backend) MemoryStats(backend.Device) (backend.MemStats, error) {
	a := liveBytes.Load()
	p := peakBytes.Load()
	return backend.MemStats{Allocated: a, MaxAllocated: p, Reserved: a, MaxReserved: p, NumAllocs: numLive.Load()}, nil
}

// ResetPeakMemoryStats sets the peak to the current usage.
func (Backend) ResetPeakMemoryStats(backend.Device) error {
	peakBytes.Store(liveBytes.Load())
	return nil
}

// EmptyCache runs the garbage collector, which is what frees host memory.
func (Backend) EmptyCache(backend.Device) error {
	runtime.GC()
	return nil
}

// MemorySummary is a short table of the counters.
func (b Backend) MemorySummary(dev backend.Device) (string, error) {
	s, _ := b.MemoryStats(dev)
	return fmt.Sprintf("cpu memory: %d live storages, %d bytes allocated (peak %d)\n", s.NumAllocs, s.Allocated, s.MaxAllocated), nil
}
