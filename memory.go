package ember

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/emberml/ember/backend"
)

// MemStats are a device's allocator counters (torch.cuda.memory_stats).
type MemStats = backend.MemStats

// MemoryStats returns dev's allocator counters. On CUDA, Counters holds all
// of torch.cuda.memory_stats' keys ("allocated_bytes.all.allocated",
// "inactive_split.all.current", "num_alloc_retries", ...).
func MemoryStats(dev Device) (MemStats, error) {
	r, err := reporter(dev)
	if err != nil {
		return MemStats{}, err
	}
	return r.MemoryStats(dev)
}

// reporter is dev's backend as a MemoryReporter. A CUDA device is not
// opened here: the backend reports one not yet in use as idle, as
// torch.cuda's statistics do before CUDA is initialised, rather than
// create a context on it.
func reporter(dev Device) (backend.MemoryReporter, error) {
	b, ok := backend.Get(dev.Type)
	if dev.Type != backend.CUDAType || !ok {
		if err := CheckDevice(dev); err != nil {
			return nil, err
		}
	} else if n, err := b.Count(); err != nil {
		return nil, &DeviceError{Device: dev, Reason: err}
	} else if dev.Index < 0 || dev.Index >= n {
		return nil, &DeviceError{Device: dev, Reason: fmt.Errorf("invalid device ordinal %d: %d CUDA device(s) present", dev.Index, n)}
	}
	r, ok := b.(backend.MemoryReporter)
	if !ok {
		return nil, fmt.Errorf("%v keeps no memory statistics", dev)
	}
	return r, nil
}

func stat(dev Device, f func(MemStats) int64) int64 {
	s, err := MemoryStats(dev)
	if err != nil {
		return 0
	}
	return f(s)
}

// MemoryAllocated is the number of bytes held by live tensors on dev
// (torch.cuda.memory_allocated); 0 for a device that cannot be used.
func MemoryAllocated(dev Device) int64 {
	return stat(dev, func(s MemStats) int64 { return s.Allocated })
}

// MaxMemoryAllocated is the peak of MemoryAllocated since the start or the
// last ResetPeakMemoryStats.
func MaxMemoryAllocated(dev Device) int64 {
	return stat(dev, func(s MemStats) int64 { return s.MaxAllocated })
}

// MemoryReserved is the number of bytes the allocator holds from dev,
// cached blocks included (torch.cuda.memory_reserved).
func MemoryReserved(dev Device) int64 {
	return stat(dev, func(s MemStats) int64 { return s.Reserved })
}

// MaxMemoryReserved is the peak of MemoryReserved.
func MaxMemoryReserved(dev Device) int64 {
	return stat(dev, func(s MemStats) int64 { return s.MaxReserved })
}

// ResetPeakMemoryStats restarts the peaks from the current values.
func ResetPeakMemoryStats(dev Device) error {
	r, err := reporter(dev)
	if err != nil {
		return err
	}
	return r.ResetPeakMemoryStats(dev)
}

// ResetAccumulatedMemoryStats zeroes the running totals of MemoryStats'
// Counters (the ".allocated" and ".freed" keys) and the retry and
// out-of-memory counts (torch.cuda.reset_accumulated_memory_stats). A device
// that keeps no such totals (the CPU) has nothing to reset.
func ResetAccumulatedMemoryStats(dev Device) error {
	r, err := reporter(dev)
	if err != nil {
		return err
	}
	if a, ok := r.(backend.AccumulatedStatsResetter); ok {
		return a.ResetAccumulatedMemoryStats(dev)
	}
	return nil
}

// EmptyCache returns cached, unused memory of dev to the device
// (torch.cuda.empty_cache). Live tensors keep theirs.
func EmptyCache(dev Device) error {
	r, err := reporter(dev)
	if err != nil {
		return err
	}
	return r.EmptyCache(dev)
}

// MemorySummary is a readable table of dev's allocator state
// (torch.cuda.memory_summary), or the reason there is none.
func MemorySummary(dev Device) string {
	r, err := reporter(dev)
	if err != nil {
		return err.Error()
	}
	s, err := r.MemorySummary(dev)
	if err != nil {
		return err.Error()
	}
	return s
}

// --- the live-tensor registry ---

// TensorInfo describes one live storage (a tensor and its views).
type TensorInfo struct {
	ID     uint64
	Device Device
	Shape  Shape
	DType  DType
	Bytes  int64
	Site   string // file:line of the creating call outside ember, when EMBER_TRACE_ALLOC=1
}

// SiteTotal sums the live storages created at one site.
type SiteTotal struct {
	Site  string
	Count int
	Bytes int64
}

// Snapshot lists the live storages of a device, largest first.
type Snapshot struct {
	Device  Device
	Tensors []TensorInfo
	Bytes   int64       // the sum of Tensors' bytes
	BySite  []SiteTotal // largest first
}

var (
	regMu    sync.Mutex
	registry = map[uint64]*TensorInfo{}
	nextID   atomic.Uint64
	trace    = os.Getenv("EMBER_TRACE_ALLOC") == "1"
)

func newStorage(s backend.Storage, b backend.Backend, shape Shape) *storage {
	st := &storage{s: s, b: b, id: nextID.Add(1)}
	info := &TensorInfo{ID: st.id, Device: s.Device(), Shape: shape.clone(), DType: s.DType(), Bytes: int64(s.Len() * s.DType().Size())}
	if trace {
		info.Site = callSite()
	}
	regMu.Lock()
	registry[st.id] = info
	regMu.Unlock()
	runtime.AddCleanup(st, untrack, st.id)
	inScope(st)
	return st
}

func untrack(id uint64) {
	regMu.Lock()
	delete(registry, id)
	regMu.Unlock()
}

// callSite is the first caller outside the ember root package.
func callSite() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		fn := f.Function
		inEmber := strings.HasPrefix(fn, "github.com/emberml/ember.") && !strings.HasSuffix(f.File, "_test.go")
		if !inEmber {
			return fmt.Sprintf("%s:%d", f.File, f.Line)
		}
		if !more {
			return "unknown"
		}
	}
}

// MemorySnapshot lists the live tensors' storages on dev, grouped by
// creation site (recorded when EMBER_TRACE_ALLOC=1). Storages dropped
// without Release stay listed until the garbage collector takes them.
func MemorySnapshot(dev Device) Snapshot {
	snap := Snapshot{Device: dev}
	regMu.Lock()
	for _, ti := range registry {
		if ti.Device == dev {
			snap.Tensors = append(snap.Tensors, *ti)
			snap.Bytes += ti.Bytes
		}
	}
	regMu.Unlock()
	slices.SortFunc(snap.Tensors, func(a, b TensorInfo) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(a.ID, b.ID))
	})
	sites := map[string]*SiteTotal{}
	for _, ti := range snap.Tensors {
		s := ti.Site
		if s == "" {
			s = "(set EMBER_TRACE_ALLOC=1 to record sites)"
		}
		if sites[s] == nil {
			sites[s] = &SiteTotal{Site: s}
		}
		sites[s].Count++
		sites[s].Bytes += ti.Bytes
	}
	for _, st := range sites {
		snap.BySite = append(snap.BySite, *st)
	}
	slices.SortFunc(snap.BySite, func(a, b SiteTotal) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), strings.Compare(a.Site, b.Site))
	})
	return snap
}

// devicesInUse lists the devices that hold live tensors, in order.
func devicesInUse() []Device {
	seen := map[Device]bool{}
	regMu.Lock()
	for _, ti := range registry {
		seen[ti.Device] = true
	}
	regMu.Unlock()
	var ds []Device
	for d := range seen {
		ds = append(ds, d)
	}
	slices.SortFunc(ds, func(a, b Device) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Index, b.Index))
	})
	return ds
}

// WriteMemoryReport prints, for each device holding tensors, the allocator
// counters and the live tensors by site with the largest ones.
func WriteMemoryReport(w io.Writer) error {
	for _, dev := range devicesInUse() {
		snap := MemorySnapshot(dev)
		fmt.Fprintf(w, "== %v: %d live tensors, %s in tensors; allocated %s, reserved %s, peak %s\n",
			dev, len(snap.Tensors), FormatBytes(snap.Bytes), FormatBytes(MemoryAllocated(dev)), FormatBytes(MemoryReserved(dev)), FormatBytes(MaxMemoryAllocated(dev)))
		fmt.Fprintf(w, "%12s  %6s  %s\n", "bytes", "count", "site")
		for _, s := range snap.BySite {
			fmt.Fprintf(w, "%12s  %6d  %s\n", FormatBytes(s.Bytes), s.Count, s.Site)
		}
		fmt.Fprintf(w, "largest:\n")
		for i, ti := range snap.Tensors {
			if i == 5 {
				break
			}
			fmt.Fprintf(w, "%12s  %-8v %-16v %s\n", FormatBytes(ti.Bytes), ti.DType, ti.Shape, ti.Site)
		}
	}
	return nil
}

// FormatBytes prints a byte count with binary units: 512 B, 1.50 KiB, 2.00 GiB.
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		f /= unit
		if f < unit && f > -unit || u == "TiB" {
			return fmt.Sprintf("%.2f %s", f, u)
		}
	}
	return ""
}
