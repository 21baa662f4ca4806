package cuda_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda"
	"github.com/emberml/ember/backend/cuda/cudatest"
	"github.com/emberml/ember/embertest"
)

// TestConformanceEmulated runs the whole ember conformance suite on cuda:0
// backed by the emulator: the CUDA backend's glue, allocator and every
// kernel plan, compared with PyTorch's fixtures.
func TestConformanceEmulated(t *testing.T) {
	cudatest.Use(t)
	if !ember.CUDAAvailable() {
		t.Fatal("the emulated device is not visible")
	}
	embertest.Run(t, ember.CUDA(0))
}

func TestEmulatedMemoryStats(t *testing.T) {
	cudatest.Use(t)
	dev := ember.CUDA(0)
	ember.EmptyCache(dev)
	base := ember.MemoryAllocated(dev)
	x := ember.Ones(ember.Shape{1000}, ember.On(dev)) // 4000 B → one 4096 B block of a 2 MiB segment
	if got := ember.MemoryAllocated(dev) - base; got != 4096 {
		t.Fatalf("allocated grew by %d, want 4096 (512-byte rounding)", got)
	}
	if ember.MemoryReserved(dev) < 2<<20 {
		t.Fatalf("reserved %d, want at least one 2 MiB small-pool segment", ember.MemoryReserved(dev))
	}
	x.Release()
	if got := ember.MemoryAllocated(dev) - base; got != 0 {
		t.Fatalf("after Release allocated differs by %d", got)
	}
	if err := ember.EmptyCache(dev); err != nil {
		t.Fatal(err)
	}
	if ember.MemoryReserved(dev) != 0 && base == 0 {
		t.Fatalf("EmptyCache left %d reserved", ember.MemoryReserved(dev))
	}
	if s := ember.MemorySummary(dev); len(s) == 0 {
		t.Fatal("empty summary")
	}
}

// TestEmulatedMemoryStatsCounters checks torch.cuda.memory_stats' keys,
// worked by hand from CUDACachingAllocator's rules: 4000 B rounds to a 4096 B
// block split from a 2 MiB small-pool segment; 3 MiB is a large request
// served from a new 20 MiB segment, split because the 17 MiB left is over
// 1 MiB; freeing both merges each segment back whole.
func TestEmulatedMemoryStatsCounters(t *testing.T) {
	cudatest.Use(t)
	dev := ember.CUDA(0)
	x := ember.Zeros(ember.Shape{1000}, ember.On(dev))
	y := ember.Zeros(ember.Shape{3 << 20 / 4}, ember.On(dev))
	y.Release()
	x.Release()
	s, err := ember.MemoryStats(dev)
	if err != nil {
		t.Fatal(err)
	}
	const small, large = 2 << 20, 20 << 20
	const xb, yb = 4096, 3 << 20
	for k, want := range map[string]int64{
		"allocated_bytes.all.current":          0,
		"allocated_bytes.all.peak":             xb + yb,
		"allocated_bytes.all.allocated":        xb + yb,
		"allocated_bytes.all.freed":            xb + yb,
		"allocated_bytes.small_pool.allocated": xb,
		"allocated_bytes.large_pool.freed":     yb,
		"allocation.all.allocated":             2,
		"allocation.all.freed":                 2,
		"segment.all.current":                  2,
		"reserved_bytes.all.current":           small + large,
		"reserved_bytes.large_pool.current":    large,
		"inactive_split.all.current":           0,
		"inactive_split.all.peak":              2,
		"inactive_split.all.allocated":         2,
		"inactive_split.all.freed":             2,
		"inactive_split_bytes.all.peak":        (small - xb) + (large - yb),
		"inactive_split_bytes.small_pool.peak": small - xb,
		"active_bytes.all.current":             0,
		"active.all.allocated":                 2,
		"num_alloc_retries":                    0,
		"num_ooms":                             0,
	} {
		if got, ok := s.Counters[k]; !ok || got != want {
			t.Errorf("memory_stats[%q] = %d (present: %v), want %d", k, got, ok, want)
		}
	}
	// A request the device cannot hold: one flush and retry, then one OOM.
	if err := ember.Try(func() { ember.Zeros(ember.Shape{1 << 29}, ember.On(dev)) }); err == nil {
		t.Fatal("2 GiB on a 1 GiB device succeeded")
	}
	s, _ = ember.MemoryStats(dev)
	if s.Counters["num_ooms"] != 1 || s.Counters["num_alloc_retries"] != 1 || s.NumOOMs != 1 {
		t.Fatalf("after an OOM: num_ooms %d, num_alloc_retries %d", s.Counters["num_ooms"], s.Counters["num_alloc_retries"])
	}
	// The retry emptied the cache: both segments went back to the device.
	if s.Counters["reserved_bytes.all.current"] != 0 || s.Counters["reserved_bytes.all.freed"] != small+large {
		t.Fatalf("after the flush: reserved %d, freed %d", s.Counters["reserved_bytes.all.current"], s.Counters["reserved_bytes.all.freed"])
	}
	// reset_accumulated_memory_stats zeroes the totals, keeps current and peak.
	if err := ember.ResetAccumulatedMemoryStats(dev); err != nil {
		t.Fatal(err)
	}
	s, _ = ember.MemoryStats(dev)
	for k, want := range map[string]int64{
		"allocated_bytes.all.allocated": 0, "allocated_bytes.all.freed": 0, "num_ooms": 0, "num_alloc_retries": 0,
		"allocated_bytes.all.peak": xb + yb, "reserved_bytes.all.peak": small + large,
	} {
		if got := s.Counters[k]; got != want {
			t.Errorf("after reset_accumulated_memory_stats: %q = %d, want %d", k, got, want)
		}
	}
	if err := ember.ResetAccumulatedMemoryStats(ember.CPU); err != nil {
		t.Fatalf("the CPU has nothing to reset: %v", err)
	}
}

func TestEmulatedOutOfMemory(t *testing.T) {
	cudatest.Use(t)
	dev := ember.CUDA(0)
	err := ember.Try(func() { ember.Zeros(ember.Shape{1 << 29}, ember.On(dev)) }) // 2 GiB on a 1 GiB device
	var oom *ember.OutOfMemoryError
	if !errors.As(err, &oom) {
		t.Fatalf("want *ember.OutOfMemoryError, got %v", err)
	}
	if oom.Device != dev {
		t.Fatalf("OOM names %v", oom.Device)
	}
}

// TestEmulatedDroppedTensorsReclaimed: a tensor dropped without Release is
// given back by the garbage collector, which an allocation that runs out of
// device memory starts before its one retry. Each 600 MiB tensor here fits
// the 1 GiB device only once the previous one is collected. (The storage's
// cleanup argument used to point into the storage, which kept every CUDA
// storage reachable: dropped tensors were never freed.)
func TestEmulatedDroppedTensorsReclaimed(t *testing.T) {
	cudatest.Use(t)
	dev := ember.CUDA(0)
	for i := 0; i < 4; i++ {
		if err := ember.Try(func() { ember.Empty(ember.Shape{600 << 20 / 4}, ember.On(dev)) }); err != nil {
			t.Fatalf("allocation %d: %v", i, err)
		}
	}
	s, err := ember.MemoryStats(dev)
	if err != nil {
		t.Fatal(err)
	}
	if s.NumOOMs != 0 || s.NumAllocRetries != 3 {
		t.Fatalf("num_ooms %d, num_alloc_retries %d; want 0 and 3 (one flush and GC per reuse)", s.NumOOMs, s.NumAllocRetries)
	}
}

// TestEmulatedScratchOutOfMemory: an op's own scratch (here the contiguous
// copy matmul makes of an expanded operand cuBLAS cannot take) that does
// not fit is an *ember.OutOfMemoryError like any tensor's, not the
// allocator's internal error: 512 MiB of x and 256 MiB of product leave no
// room on the 1 GiB device for the 512 MiB copy of y.
func TestEmulatedScratchOutOfMemory(t *testing.T) {
	cudatest.Use(t)
	dev := ember.CUDA(0)
	x := ember.Empty(ember.Shape{8192, 16384}, ember.On(dev))
	y := ember.Ones(ember.Shape{1, 1}, ember.On(dev)).Expand(16384, 8192)
	err := ember.Try(func() { x.MatMul(y) })
	var oom *ember.OutOfMemoryError
	if !errors.As(err, &oom) || oom.Device != dev || oom.Bytes != 512<<20 {
		t.Fatalf("got %T %v; want an *ember.OutOfMemoryError for 512 MiB on cuda:0", err, err)
	}
	if !strings.Contains(err.Error(), "CUDA out of memory. Tried to allocate 512.00 MiB") {
		t.Fatalf("message: %v", err)
	}
}

func TestRealCUDAReportsWhy(t *testing.T) {
	b := cuda.New(cuda.RealOpener())
	n, err := b.Count()
	if n == 0 && err == nil {
		t.Fatal("no devices and no reason")
	}
	if n == 0 {
		if cerr := b.Check(backend.Device{Type: backend.CUDAType}); cerr == nil {
			t.Fatal("Check accepted an absent device")
		}
	}
}

func TestEmulatedEvents(t *testing.T) {
	cudatest.Use(t)
	dev := ember.CUDA(0)
	start, end := ember.NewEvent(dev), ember.NewEvent(dev)
	if err := start.Record(); err != nil {
		t.Fatal(err)
	}
	x := ember.Ones(ember.Shape{256, 256}, ember.On(dev))
	y := x.Mul(x)
	if err := end.Record(); err != nil {
		t.Fatal(err)
	}
	if err := end.Synchronize(); err != nil {
		t.Fatal(err)
	}
	ms, err := end.ElapsedTime(start)
	if err != nil || ms < 0 {
		t.Fatalf("elapsed %v, %v", ms, err)
	}
	if y.Sum().Item() != 65536 {
		t.Fatal("x*x sum wrong")
	}
}

// TestEmulatedEventUnrecorded: as torch.cuda.Event, an unrecorded event is
// done and synchronizes at once; elapsed_time needs both recorded.
func TestEmulatedEventUnrecorded(t *testing.T) {
	cudatest.Use(t)
	dev := ember.CUDA(0)
	e, start := ember.NewEvent(dev), ember.NewEvent(dev)
	if done, err := e.Query(); !done || err != nil {
		t.Fatalf("Query of an unrecorded event = %v, %v; want true, nil", done, err)
	}
	if err := e.Synchronize(); err != nil {
		t.Fatalf("Synchronize of an unrecorded event: %v", err)
	}
	if err := start.Record(); err != nil {
		t.Fatal(err)
	}
	var ve *ember.ValueError
	if _, err := e.ElapsedTime(start); !errors.As(err, &ve) {
		t.Fatalf("ElapsedTime to an unrecorded end: %v", err)
	}
	if _, err := start.ElapsedTime(e); !errors.As(err, &ve) {
		t.Fatalf("ElapsedTime from an unrecorded start: %v", err)
	}
	if err := e.Record(); err != nil {
		t.Fatal(err)
	}
	if done, err := e.Query(); !done || err != nil {
		t.Fatalf("Query of a recorded event on the (synchronous) emulator = %v, %v", done, err)
	}
	e.Release()
	if _, err := e.ElapsedTime(start); !errors.As(err, &ve) {
		t.Fatalf("ElapsedTime of a released event: %v", err)
	}
}

func TestEmulatedStreams(t *testing.T) {
	cudatest.Use(t)
	dev := ember.CUDA(0)
	s, err := ember.NewStream(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	var y *ember.Tensor
	x := ember.Arange(0, 6, 1, ember.On(dev), ember.Dtype(ember.Float32))
	x.RecordStream(s)
	ember.WithStream(s, func() { y = x.Mul(x).Sum() }) // 0+1+4+9+16+25
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if got := y.Item(); got != 55 {
		t.Fatalf("sum of squares on a stream = %v, want 55", got)
	}
}

func TestEmulatedPinMemory(t *testing.T) {
	cudatest.Use(t)
	x := ember.FromSlice([]float32{1, 2, 3, 4}, ember.Shape{2, 2}).T()
	p, err := x.PinMemory()
	if err != nil {
		t.Fatal(err)
	}
	if !p.IsPinned() || x.IsPinned() || p.Device() != ember.CPU {
		t.Fatal("pinned flags")
	}
	if got := p.Float32s(); got[0] != 1 || got[1] != 3 || got[2] != 2 || got[3] != 4 {
		t.Fatalf("pinned copy %v, want the transpose [1 3 2 4]", got)
	}
	g := p.CUDA(0)
	if got := g.Sum().Item(); got != 10 {
		t.Fatalf("copied to the device and summed: %v", got)
	}
	p.Release()
}
