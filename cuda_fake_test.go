package ember

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda"
	"github.com/emberml/ember/backend/cuda/kernels"
	"github.com/emberml/ember/internal/testenv"
)

// brokenOpener counts one device that cannot be opened, as a GPU whose
// context cannot be created (exclusive mode, a driver fault).
type brokenOpener struct{}

func (brokenOpener) Count() (int, error) { return 1, nil }
func (brokenOpener) Open(int) (cuda.GPU, error) {
	return nil, errors.New("CUDA_ERROR_DEVICE_UNAVAILABLE")
}

// TestTryGPUUnopenable: a device that is counted but cannot be used is not
// handed out by TryGPU, which falls back to the CPU as for a missing one.
func TestTryGPUUnopenable(t *testing.T) {
	prev, _ := backend.Get(backend.CUDAType)
	backend.Register(cuda.New(brokenOpener{}))
	defer backend.Register(prev)
	if DeviceCount() != 1 {
		t.Fatalf("DeviceCount = %d, want the 1 counted", DeviceCount())
	}
	if got := TryGPU(0); got != CPU {
		t.Fatalf("TryGPU(0) = %v for a device that cannot be opened, want cpu", got)
	}
	var de *DeviceError
	if err := CheckDevice(CUDA(0)); !errors.As(err, &de) {
		t.Fatalf("CheckDevice: %v", err)
	}
}

// faultyGPU is a device whose Malloc fails with err; it does nothing else.
type faultyGPU struct {
	cuda.GPU
	err error
}

func (g faultyGPU) Malloc(uint64) (uint64, error)    { return 0, g.err }
func (g faultyGPU) MemInfo() (uint64, uint64, error) { return 0, 1 << 30, nil }

type faultyOpener struct{ g faultyGPU }

func (faultyOpener) Count() (int, error)          { return 1, nil }
func (o faultyOpener) Open(int) (cuda.GPU, error) { return o.g, nil }

// deviceErr is an error that says whether it is an out-of-memory one, as
// the CUDA driver's errors do.
type deviceErr struct{ oom bool }

func (e deviceErr) Error() string {
	if e.oom {
		return "CUDA_ERROR_OUT_OF_MEMORY (2)"
	}
	return "CUDA_ERROR_ILLEGAL_ADDRESS (700)"
}
func (e deviceErr) OutOfMemory() bool { return e.oom }

// TestAllocFailureNotOOM: a device allocation that fails for a reason other
// than memory (a sticky fault from an earlier kernel) is a *DeviceError that
// names it, not an *OutOfMemoryError; a real out-of-memory one stays one,
// with the allocator's torch-style report.
func TestAllocFailureNotOOM(t *testing.T) {
	prev, _ := backend.Get(backend.CUDAType)
	defer backend.Register(prev)

	backend.Register(cuda.New(faultyOpener{faultyGPU{err: deviceErr{oom: false}}}))
	de := testenv.Raises[*DeviceError](t, "Zeros on a faulted device", func() { Zeros(Shape{4}, On(CUDA(0))) })
	if de.Device != CUDA(0) || !strings.Contains(de.Error(), "CUDA_ERROR_ILLEGAL_ADDRESS") || strings.Contains(de.Error(), "out of memory") {
		t.Fatalf("got %v", de)
	}
	testenv.Raises[*DeviceError](t, "To a faulted device", func() { Ones(Shape{4}).To(CUDA(0)) })

	backend.Register(cuda.New(faultyOpener{faultyGPU{err: deviceErr{oom: true}}}))
	oom := testenv.Raises[*OutOfMemoryError](t, "Zeros on a full device", func() { Zeros(Shape{4}, On(CUDA(0))) })
	if !strings.Contains(oom.Error(), "CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 1024.00 MiB total capacity") {
		t.Fatalf("got %v", oom)
	}
}

// logGPU is a device that only logs its stream and event calls.
type logGPU struct {
	cuda.GPU
	id  int
	log *[]string
	n   *uintptr
}

func (g logGPU) add(f string, a ...any) {
	*g.log = append(*g.log, fmt.Sprintf("gpu%d "+f, append([]any{g.id}, a...)...))
}
func (g logGPU) next() uintptr { *g.n++; return *g.n }
func (g logGPU) StreamCreate() (uintptr, error) {
	s := g.next()
	g.add("create %d", s)
	return s, nil
}
func (g logGPU) StreamDestroy(uintptr) error     { return nil }
func (g logGPU) StreamSynchronize(uintptr) error { return nil }
func (g logGPU) RecordTimingEvent(s uintptr) (uintptr, error) {
	ev := 100 + g.next()
	g.add("record %d on %d", ev, s)
	return ev, nil
}
func (g logGPU) EventSynchronize(ev uintptr) error { g.add("host waits %d", ev); return nil }
func (g logGPU) DestroyEvent(ev uintptr) error     { g.add("destroy %d", ev); return nil }
func (g logGPU) StreamWaitEvent(s, ev uintptr) error {
	g.add("stream %d waits %d", s, ev)
	return nil
}
func (g logGPU) StreamQuery(s uintptr) (bool, error) { g.add("query %d", s); return false, nil }

type logOpener struct {
	log *[]string
	n   *uintptr
}

func (logOpener) Count() (int, error) { return 2, nil }
func (o logOpener) Open(i int) (cuda.GPU, error) {
	*o.log = append(*o.log, fmt.Sprintf("open gpu%d", i))
	return logGPU{id: i, log: o.log, n: o.n}, nil
}

// TestStreamWaits: Stream.WaitEvent, WaitStream and Query reach the driver
// as torch's wait_event, wait_stream and query do: a device-side wait of the
// waiting stream on an event recorded on the other one (of another device
// too), never a host wait; an unrecorded event is nothing to wait for.
func TestStreamWaits(t *testing.T) {
	prev, _ := backend.Get(backend.CUDAType)
	defer backend.Register(prev)
	var log []string
	var n uintptr
	backend.Register(cuda.New(logOpener{&log, &n}))
	dev0, dev1 := CUDA(0), CUDA(1)
	s1, _ := NewStream(dev0) // 1
	s2, _ := NewStream(dev0) // 2
	e := NewEvent(dev0)
	if err := s2.WaitEvent(e); err != nil {
		t.Fatal(err)
	}
	WithStream(s1, func() { e.Record() })         // event 103 on stream 1
	mustOK(t, s2.WaitEvent(e))                    // stream 2 waits 103
	mustOK(t, s2.WaitStream(s1))                  // event 104 on stream 1, stream 2 waits 104, 104 destroyed
	mustOK(t, DefaultStream(dev0).WaitStream(s1)) // event 105 on 1, default stream 0 waits 105
	other := NewEvent(dev1)
	mustOK(t, other.Record())      // event 106 on gpu1's stream 0
	mustOK(t, s1.WaitEvent(other)) // gpu0's stream 1 waits gpu1's 106
	cpuStream, _ := NewStream(CPU)
	mustOK(t, cpuStream.WaitEvent(e))   // the host waits 103
	mustOK(t, s1.WaitStream(cpuStream)) // CPU work is done: nothing
	if done, err := s2.Query(); done || err != nil {
		t.Fatalf("Query = %v, %v; want the driver's false", done, err)
	}
	if done, err := cpuStream.Query(); !done || err != nil {
		t.Fatalf("CPU stream Query = %v, %v", done, err)
	}
	want := []string{
		"open gpu0", "gpu0 create 1", "gpu0 create 2",
		"gpu0 record 103 on 1", "gpu0 stream 2 waits 103",
		"gpu0 record 104 on 1", "gpu0 stream 2 waits 104", "gpu0 destroy 104",
		"gpu0 record 105 on 1", "gpu0 stream 0 waits 105", "gpu0 destroy 105",
		"open gpu1", "gpu1 record 106 on 0", "gpu0 stream 1 waits 106",
		"gpu0 host waits 103",
		"gpu0 query 2",
	}
	if fmt.Sprint(log) != fmt.Sprint(want) {
		t.Fatalf("driver calls:\n%q\nwant\n%q", log, want)
	}
	e.Release() // not left to cleanups, which would log from their goroutine
	other.Release()
	var ve *ValueError
	if err := s1.WaitEvent(nil); !errors.As(err, &ve) {
		t.Fatalf("WaitEvent(nil) = %v, want a *ValueError", err)
	}
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestMemoryStatsDoNotOpenDevices: as torch.cuda.memory_allocated and
// friends before CUDA is initialised, asking about a device not yet used
// reports an idle allocator and opens nothing (no context is created on
// it); an index past the device count is a *DeviceError.
func TestMemoryStatsDoNotOpenDevices(t *testing.T) {
	prev, _ := backend.Get(backend.CUDAType)
	defer backend.Register(prev)
	var log []string
	var n uintptr
	backend.Register(cuda.New(logOpener{&log, &n}))
	for _, dev := range []Device{CUDA(0), CUDA(1)} {
		if MemoryAllocated(dev) != 0 || MemoryReserved(dev) != 0 || MaxMemoryAllocated(dev) != 0 {
			t.Fatalf("%v: an unused device reports memory", dev)
		}
		s, err := MemoryStats(dev)
		if err != nil || s.Counters["allocated_bytes.all.current"] != 0 || s.Counters["max_split_size"] != -1 {
			t.Fatalf("%v: %+v, %v", dev, s, err)
		}
		mustOK(t, ResetPeakMemoryStats(dev))
		mustOK(t, ResetAccumulatedMemoryStats(dev))
		mustOK(t, EmptyCache(dev))
		if sum := MemorySummary(dev); !strings.Contains(sum, "memory summary, device ID "+fmt.Sprint(dev.Index)) {
			t.Fatalf("%v: summary %q", dev, sum)
		}
	}
	if len(log) != 0 {
		t.Fatalf("memory statistics opened devices: %q", log)
	}
	var de *DeviceError
	for _, dev := range []Device{CUDA(2), CUDA(-1)} {
		if _, err := MemoryStats(dev); !errors.As(err, &de) || de.Device != dev {
			t.Fatalf("%v: %v, want a *DeviceError", dev, err)
		}
		if err := EmptyCache(dev); !errors.As(err, &de) {
			t.Fatalf("EmptyCache(%v): %v, want a *DeviceError", dev, err)
		}
	}
}

// memGPU is a device with memory accounting and streams whose handles are
// reused once destroyed, as the driver may; kernels and events do nothing.
type memGPU struct {
	cuda.GPU
	mu      sync.Mutex
	next    uint64
	mallocs int
	live    map[uint64]uint64
	streams []uintptr // destroyed handles, reused first
	nextS   uintptr
	synced  []uintptr

	events      map[uintptr]bool // live timing events
	nextEv      uintptr
	badDestroys int // of events or streams not live
	destroys    int // streams
	deadRecords int // events recorded on streams not live

	syncGate chan struct{} // when set, StreamSynchronize waits for it to close
}

func newMemGPU() *memGPU { return &memGPU{next: 1 << 40, live: map[uint64]uint64{}} }

func (g *memGPU) Malloc(n uint64) (uint64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.next
	g.next += n
	g.live[p] = n
	g.mallocs++
	return p, nil
}
func (g *memGPU) Free(p uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.live, p)
	return nil
}
func (g *memGPU) MemInfo() (uint64, uint64, error)  { return 1 << 30, 1 << 30, nil }
func (g *memGPU) Run(kernels.Launch, uintptr) error { return nil }
func (g *memGPU) Synchronize() error                { return nil }
func (g *memGPU) StreamCreate() (uintptr, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := len(g.streams); n > 0 {
		s := g.streams[n-1]
		g.streams = g.streams[:n-1]
		return s, nil
	}
	g.nextS++
	return g.nextS, nil
}
func (g *memGPU) StreamDestroy(s uintptr) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s == 0 || s > g.nextS || slices.Contains(g.streams, s) {
		g.badDestroys++
		return fmt.Errorf("cuStreamDestroy(%d): CUDA_ERROR_INVALID_HANDLE", s)
	}
	g.streams = append(g.streams, s)
	g.destroys++
	return nil
}
func (g *memGPU) streamCounts() (destroys, bad int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.destroys, g.badDestroys
}
func (g *memGPU) StreamSynchronize(s uintptr) error {
	if g.syncGate != nil {
		<-g.syncGate
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.synced = append(g.synced, s)
	return nil
}
func (g *memGPU) RecordEvent(s uintptr) (uintptr, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s > g.nextS || slices.Contains(g.streams, s) {
		g.deadRecords++
		return 0, fmt.Errorf("cuEventRecord on stream %d: CUDA_ERROR_INVALID_HANDLE", s)
	}
	return 1, nil
}
func (g *memGPU) EventDone(uintptr) (bool, error) { return true, nil }

// Timing events are numbered from 1000 and tracked; the allocator's are 1.
func (g *memGPU) RecordTimingEvent(uintptr) (uintptr, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.events == nil {
		g.events = map[uintptr]bool{}
	}
	g.nextEv++
	ev := 1000 + g.nextEv
	g.events[ev] = true
	return ev, nil
}
func (g *memGPU) DestroyEvent(ev uintptr) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ev < 1000 {
		return nil
	}
	if !g.events[ev] {
		g.badDestroys++
		return fmt.Errorf("cuEventDestroy(%d): CUDA_ERROR_INVALID_HANDLE", ev)
	}
	delete(g.events, ev)
	return nil
}
func (g *memGPU) EventSynchronize(uintptr) error         { return nil }
func (g *memGPU) StreamWaitEvent(uintptr, uintptr) error { return nil }
func (g *memGPU) liveEvents() (live, badDestroys int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.events), g.badDestroys
}
func (g *memGPU) counts() (mallocs, live int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mallocs, len(g.live)
}

type memOpener struct{ g *memGPU }

func (memOpener) Count() (int, error)          { return 1, nil }
func (o memOpener) Open(int) (cuda.GPU, error) { return o.g, nil }

// TestStreamReleaseKeepsMemory: the memory of tensors made on a stream
// that is then released, whether freed before the release or dropped after
// it and collected, is reused by the default stream without reserving more
// from the device, as PyTorch's allocator, whose streams are never
// destroyed, reuses it; a new stream that gets the released handle does not
// inherit it. Before, it sat in a pool keyed by the dead handle.
func TestStreamReleaseKeepsMemory(t *testing.T) {
	prev, _ := backend.Get(backend.CUDAType)
	defer backend.Register(prev)
	g := newMemGPU()
	backend.Register(cuda.New(memOpener{g}))
	dev := CUDA(0)
	s, err := NewStream(dev)
	mustOK(t, err)
	h := s.h
	const n = 3 << 20 // 12 MiB of float32: a segment of its own each
	var kept *Tensor
	WithStream(s, func() {
		freed := Empty(Shape{n}, On(dev))
		kept = Empty(Shape{n}, On(dev)) // dropped after the release
		freed.Release()
	})
	if m, _ := g.counts(); m != 2 || MemoryReserved(dev) != 24<<20 {
		t.Fatalf("%d device mallocs, %d reserved; want 2 and 24 MiB", m, MemoryReserved(dev))
	}
	mustOK(t, s.Release())
	if len(g.synced) == 0 || g.synced[len(g.synced)-1] != h {
		t.Fatalf("stream %d destroyed without waiting for it (synchronized %v)", h, g.synced)
	}
	runtime.KeepAlive(kept) // dropped from here on
	for i := 0; i < 50 && MemoryAllocated(dev) != 0; i++ {
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
	}
	if a := MemoryAllocated(dev); a != 0 {
		t.Fatalf("the dropped tensor was not collected: %d bytes allocated", a)
	}
	// A new stream gets the old handle; its first tensor needs a segment.
	s2, err := NewStream(dev)
	mustOK(t, err)
	if s2.h != h {
		t.Fatalf("the fake driver gave handle %d, want the reused %d", s2.h, h)
	}
	var onS2 *Tensor
	WithStream(s2, func() { onS2 = Empty(Shape{n}, On(dev)) })
	if m, _ := g.counts(); m != 3 {
		t.Fatalf("the new stream reused the released stream's memory (%d device mallocs, want 3)", m)
	}
	onS2.Release()
	x, y := Empty(Shape{n}, On(dev)), Empty(Shape{n}, On(dev))
	if m, _ := g.counts(); m != 3 || MemoryReserved(dev) != 36<<20 || MemoryAllocated(dev) != 24<<20 {
		t.Fatalf("default stream: %d device mallocs, %d reserved, %d allocated; want 3, 36 MiB, 24 MiB",
			m, MemoryReserved(dev), MemoryAllocated(dev))
	}
	x.Release()
	y.Release()
	mustOK(t, s2.Release())
	mustOK(t, EmptyCache(dev))
	if _, live := g.counts(); live != 0 || MemoryReserved(dev) != 0 {
		t.Fatalf("after EmptyCache: %d segments live on the device, %d reserved", live, MemoryReserved(dev))
	}
}

// someBrokenOpener counts three devices of which cuda:1 cannot be opened,
// or, with all set, none can.
type someBrokenOpener struct{ all bool }

func (someBrokenOpener) Count() (int, error) { return 3, nil }
func (o someBrokenOpener) Open(i int) (cuda.GPU, error) {
	if i == 1 || o.all {
		return nil, fmt.Errorf("CUDA_ERROR_DEVICE_UNAVAILABLE on %d", i)
	}
	return newMemGPU(), nil
}

// TestTryAllGPUsUnopenable: TryAllGPUs, as TryGPU, hands out only devices
// that open, falls back to [cpu] when none does, and says once which it
// left out and why.
func TestTryAllGPUsUnopenable(t *testing.T) {
	prev, _ := backend.Get(backend.CUDAType)
	defer backend.Register(prev)
	var buf bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	skipOnce, fallbackOnce = sync.Once{}, sync.Once{}

	backend.Register(cuda.New(someBrokenOpener{}))
	for range 2 {
		if got := TryAllGPUs(); fmt.Sprint(got) != "[cuda:0 cuda:2]" {
			t.Fatalf("TryAllGPUs() = %v, want [cuda:0 cuda:2]", got)
		}
	}
	if log := buf.String(); strings.Count(log, "level=WARN") != 1 ||
		!strings.Contains(log, "device cuda:1 is not available: CUDA_ERROR_DEVICE_UNAVAILABLE on 1") || strings.Contains(log, "on 0") {
		t.Fatalf("log: %q", log)
	}

	buf.Reset()
	backend.Register(cuda.New(someBrokenOpener{all: true}))
	for range 2 {
		if got := TryAllGPUs(); fmt.Sprint(got) != "[cpu]" {
			t.Fatalf("TryAllGPUs() = %v with no device that opens, want [cpu]", got)
		}
	}
	if log := buf.String(); strings.Count(log, "falling back to the CPU") != 1 || !strings.Contains(log, "CUDA_ERROR_DEVICE_UNAVAILABLE on 2") {
		t.Fatalf("log: %q", log)
	}
}

// TestDroppedEventsDestroyed: events dropped without Release are destroyed
// once collected, as torch.cuda.Event's destructor destroys its event; a
// released one is not destroyed twice, and a kept one not at all.
func TestDroppedEventsDestroyed(t *testing.T) {
	prev, _ := backend.Get(backend.CUDAType)
	defer backend.Register(prev)
	g := newMemGPU()
	backend.Register(cuda.New(memOpener{g}))
	dev := CUDA(0)
	kept := NewEvent(dev)
	mustOK(t, kept.Record())
	released := NewEvent(dev)
	mustOK(t, released.Record())
	released.Release()
	s, err := NewStream(dev)
	mustOK(t, err)
	for range 10 {
		e := NewEvent(dev)
		mustOK(t, e.Record())
		mustOK(t, e.Record()) // the first recording's event is destroyed now
		mustOK(t, DefaultStream(dev).WaitStream(s))
	}
	for i := 0; i < 50; i++ {
		if live, _ := g.liveEvents(); live == 1 {
			break
		}
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
	}
	if live, bad := g.liveEvents(); live != 1 || bad != 0 {
		t.Fatalf("%d events live, want the 1 kept; %d destroyed twice", live, bad)
	}
	mustOK(t, kept.Synchronize())
	kept.Release()
	if live, bad := g.liveEvents(); live != 0 || bad != 0 {
		t.Fatalf("after Release: %d events live, %d destroyed twice", live, bad)
	}
	mustOK(t, s.Release())
}

// TestDroppedStreamsDestroyed: streams dropped without Release are
// destroyed once collected (each NewStream made a CUDA stream that was
// never destroyed), but not while WithStream runs work on one that nothing
// else references, and a released one is not destroyed twice.
func TestDroppedStreamsDestroyed(t *testing.T) {
	prev, _ := backend.Get(backend.CUDAType)
	defer backend.Register(prev)
	g := newMemGPU()
	backend.Register(cuda.New(memOpener{g}))
	dev := CUDA(0)
	newStream := func() *Stream {
		s, err := NewStream(dev)
		mustOK(t, err)
		return s
	}
	collect := func(want int) {
		for i := 0; i < 50; i++ {
			if n, _ := g.streamCounts(); n >= want {
				break
			}
			runtime.GC()
			time.Sleep(2 * time.Millisecond)
		}
	}
	WithStream(newStream(), func() {
		for range 3 {
			runtime.GC()
			time.Sleep(2 * time.Millisecond)
		}
		if n, _ := g.streamCounts(); n != 0 {
			t.Errorf("the stream of a running WithStream was destroyed")
		}
		Empty(Shape{4}, On(dev)).Release()
	})
	released := newStream()
	mustOK(t, released.Release())
	for range 5 {
		WithStream(newStream(), func() { Empty(Shape{4}, On(dev)).Release() })
	}
	collect(7)
	if n, bad := g.streamCounts(); n != 7 || bad != 0 {
		t.Fatalf("%d streams destroyed, want 7 (1 released, 6 dropped); %d destroyed twice", n, bad)
	}
	if live, bad := g.liveEvents(); live != 0 || bad != 0 {
		t.Fatalf("%d events live, %d bad destroys", live, bad)
	}
	runtime.KeepAlive(released)
}

// TestRecordStreamOnDroppedStream: a tensor used on a stream
// (RecordStream) that is then dropped and destroyed by its cleanup is freed
// without an event on the destroyed stream: the stream's work was waited for
// when it was destroyed. Before, the free recorded an event on the dead
// handle, an invalid driver call, and the block stayed cached only after a
// device-wide synchronize.
func TestRecordStreamOnDroppedStream(t *testing.T) {
	prev, _ := backend.Get(backend.CUDAType)
	defer backend.Register(prev)
	g := newMemGPU()
	backend.Register(cuda.New(memOpener{g}))
	dev := CUDA(0)
	x := Empty(Shape{4}, On(dev))
	func() {
		s, err := NewStream(dev)
		mustOK(t, err)
		x.RecordStream(s)
	}()
	for i := 0; i < 50; i++ {
		if n, _ := g.streamCounts(); n == 1 {
			break
		}
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
	}
	if n, bad := g.streamCounts(); n != 1 || bad != 0 {
		t.Fatalf("%d streams destroyed, want the dropped 1; %d bad destroys", n, bad)
	}
	x.Release()
	g.mu.Lock()
	dead := g.deadRecords
	g.mu.Unlock()
	if dead != 0 {
		t.Fatalf("%d events recorded on the destroyed stream", dead)
	}
}

// TestStreamCleanupDoesNotBlock: the cleanup of a dropped stream, which
// waits for the stream's work, does not hold up the cleanups of other
// dropped objects (the runtime runs a batch of cleanups on one goroutine,
// and asks long ones to start their own): here the events dropped with it
// are destroyed while its work is still running.
func TestStreamCleanupDoesNotBlock(t *testing.T) {
	prev, _ := backend.Get(backend.CUDAType)
	defer backend.Register(prev)
	g := newMemGPU()
	gate := make(chan struct{})
	g.syncGate = gate
	backend.Register(cuda.New(memOpener{g}))
	dev := CUDA(0)
	func() {
		for range 20 {
			s, err := NewStream(dev)
			mustOK(t, err)
			e := NewEvent(dev)
			WithStream(s, func() { mustOK(t, e.Record()) })
		}
	}()
	deadline := time.Now().Add(3 * time.Second)
	for live, _ := g.liveEvents(); live != 0 && time.Now().Before(deadline); live, _ = g.liveEvents() {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	live, _ := g.liveEvents()
	close(gate) // the streams' work is done
	if live != 0 {
		t.Errorf("%d of 20 dropped events still live while the dropped streams' work runs", live)
	}
	for i := 0; i < 100; i++ {
		if n, _ := g.streamCounts(); n == 20 {
			break
		}
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	if n, bad := g.streamCounts(); n != 20 || bad != 0 {
		t.Fatalf("%d of 20 dropped streams destroyed, %d bad destroys", n, bad)
	}
}
