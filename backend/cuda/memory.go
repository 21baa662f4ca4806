package cuda

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/alloc"
	"github.com/emberml/ember/backend/cuda/internal/kcache"
)

// MemoryStats reports the caching allocator's counters (all pools).
func (b *Backend) MemoryStats(dev backend.Device) (backend.MemStats, error) {
	d, err := b.device(dev.Index)
	if err != nil {
		return backend.MemStats{}, err
	}
	s := d.pool.Stats()
	a, r, n := s.AllocatedBytes[alloc.StatAll], s.ReservedBytes[alloc.StatAll], s.Allocation[alloc.StatAll]
	return backend.MemStats{
		Allocated: a.Current, MaxAllocated: a.Peak,
		Reserved: r.Current, MaxReserved: r.Peak,
		NumAllocs: n.Current, NumAllocRetries: s.NumAllocRetries, NumOOMs: s.NumOOMs,
	}, nil
}

// ResetPeakMemoryStats restarts the peaks.
func (b *Backend) ResetPeakMemoryStats(dev backend.Device) error {
	d, err := b.device(dev.Index)
	if err != nil {
		return err
	}
	d.pool.ResetPeakStats()
	return nil
}

// EmptyCache returns every fully free segment to the device.
func (b *Backend) EmptyCache(dev backend.Device) error {
	d, err := b.device(dev.Index)
	if err != nil {
		return err
	}
	return d.pool.EmptyCache()
}

// MemorySummary is torch.cuda.memory_summary's table.
func (b *Backend) MemorySummary(dev backend.Device) (string, error) {
	d, err := b.device(dev.Index)
	if err != nil {
		return "", err
	}
	return d.pool.Stats().Summary(d.index), nil
}

// KernelCacheDir is where compiled kernels are kept (EMBER_CACHE_DIR or the
// user cache directory).
func KernelCacheDir() (string, error) { return kcache.DefaultDir() }
