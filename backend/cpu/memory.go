package cpu

import (
	"fmt"
	"runtime"

	"github.com/emberml/ember/backend"
)

// MemoryStats reports host memory of the CPU backend: Allocated counts the
// bytes of live storages; Reserved adds the slack of their size classes and
// the released buffers kept for reuse (see SetCacheLimit). Storages dropped
// without Release count until the GC takes them.
func (Backend) MemoryStats(backend.Device) (backend.MemStats, error) {
	a := liveBytes.Load()
	p := peakBytes.Load()
	r := reservedBytes.Load() + cache.bytes.Load()
	return backend.MemStats{Allocated: a, MaxAllocated: p, Reserved: r, MaxReserved: max(peakReserved.Load(), r), NumAllocs: numLive.Load()}, nil
}

// ResetPeakMemoryStats sets the peaks to the current usage.
func (Backend) ResetPeakMemoryStats(backend.Device) error {
	peakBytes.Store(liveBytes.Load())
	peakReserved.Store(reservedBytes.Load() + cache.bytes.Load())
	return nil
}

// EmptyCache drops the cached buffers and runs the garbage collector,
// which is what frees host memory; until the next CPU allocation, buffers
// the collector finds unreachable are freed rather than cached.
func (Backend) EmptyCache(backend.Device) error {
	cache.drop()
	runtime.GC()
	return nil
}

// MemorySummary is a short table of the counters.
func (b Backend) MemorySummary(dev backend.Device) (string, error) {
	s, _ := b.MemoryStats(dev)
	cb, cn, hits, misses, evicted, recycled := cache.stats()
	return fmt.Sprintf("cpu memory: %d live storages, %d bytes allocated (peak %d), %d bytes reserved (peak %d)\n"+
		"cpu buffer cache: %d buffers, %d bytes (limit %d); %d allocations served from it, %d not; %d buffers recycled from collected storages, %d evicted\n",
		s.NumAllocs, s.Allocated, s.MaxAllocated, s.Reserved, s.MaxReserved, cn, cb, cacheLimit(), hits, misses, recycled, evicted), nil
}
