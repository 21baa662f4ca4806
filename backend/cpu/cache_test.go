package cpu

import (
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/emberml/ember/backend"
)

func TestSizeClass(t *testing.T) {
	for b := cacheMinBytes; b < 1<<30; b = b*9/8 + 13 {
		c := sizeClass(b)
		if c < b || float64(c) > 1.125*float64(b) || c%8 != 0 || sizeClass(c) != c {
			t.Fatalf("sizeClass(%d) = %d", b, c)
		}
	}
}

func alloc(t *testing.T, dt backend.DType, n int) *Storage {
	t.Helper()
	s, err := Backend{}.Alloc(backend.Device{Type: backend.CPUType}, dt, n)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*Storage)
}

func stats(t *testing.T) backend.MemStats {
	s, err := Backend{}.MemoryStats(backend.Device{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCacheReuse: a released large buffer serves the next allocation of its
// size class (any dtype), is counted as reserved while cached, and
// EmptyCache drops it.
func TestCacheReuse(t *testing.T) {
	defer recycleCollected.Store(true)
	recycleCollected.Store(false) // only this test's buffers in the cache
	defer SetCacheLimit(SetCacheLimit(64 << 20))
	Backend{}.EmptyCache(backend.Device{})
	const n = 100_000 // 400 kB of float32
	a := alloc(t, backend.Float32, n)
	pa := dataPointer(a.data)
	before := stats(t)
	a.Release()
	after := stats(t)
	if after.Allocated != before.Allocated-4*n || after.Reserved != before.Reserved {
		t.Fatalf("after release: allocated %d→%d, reserved %d→%d; want allocated -%d, reserved unchanged",
			before.Allocated, after.Allocated, before.Reserved, after.Reserved, 4*n)
	}
	b := alloc(t, backend.Int32, n) // same bytes, another dtype
	if dataPointer(b.data) != pa {
		t.Fatal("the released buffer was not reused")
	}
	c := alloc(t, backend.Float32, n)
	if dataPointer(c.data) == pa {
		t.Fatal("a buffer in use was handed out twice")
	}
	b.Release()
	c.Release()
	if got := stats(t).Reserved - stats(t).Allocated; got < 8*n {
		t.Fatalf("reserved - allocated = %d with two buffers cached, want >= %d", got, 8*n)
	}
	Backend{}.EmptyCache(backend.Device{})
	if cb, cn, _, _, _, _ := cache.stats(); cb != 0 || cn != 0 {
		t.Fatalf("after EmptyCache: %d bytes in %d buffers cached", cb, cn)
	}
	d := alloc(t, backend.Float32, n)
	if dataPointer(d.data) == pa {
		t.Fatal("EmptyCache kept a buffer")
	}
	d.Release()
}

// TestCacheBound: the cache holds at most its limit, dropping the oldest
// buffers first; small buffers and limit 0 bypass it.
func TestCacheBound(t *testing.T) {
	defer recycleCollected.Store(true)
	recycleCollected.Store(false)
	defer SetCacheLimit(SetCacheLimit(1 << 20)) // 1 MiB
	Backend{}.EmptyCache(backend.Device{})
	const n = 300 << 10 / 4 // 300 KiB buffers: three fit
	var ss []*Storage
	var ps []unsafe.Pointer
	for range 4 {
		s := alloc(t, backend.Float32, n)
		ss, ps = append(ss, s), append(ps, dataPointer(s.data))
	}
	for _, s := range ss {
		s.Release()
	}
	cb, cn, _, _, _, _ := cache.stats()
	if cn != 3 || cb > 1<<20 {
		t.Fatalf("cache holds %d buffers, %d bytes; want 3 within 1 MiB", cn, cb)
	}
	got := map[unsafe.Pointer]bool{}
	for range 3 {
		s := alloc(t, backend.Float32, n)
		got[dataPointer(s.data)] = true
		defer s.Release()
	}
	if got[ps[0]] || !got[ps[1]] || !got[ps[2]] || !got[ps[3]] {
		t.Fatal("the oldest buffer should have been evicted, the three newest reused")
	}

	small := alloc(t, backend.Float32, 100)
	small.Release()
	if _, cn, _, _, _, _ := cache.stats(); cn != 0 {
		t.Fatalf("a small buffer was cached")
	}
	SetCacheLimit(0)
	big := alloc(t, backend.Float32, n)
	big.Release()
	if _, cn, _, _, _, _ := cache.stats(); cn != 0 {
		t.Fatalf("limit 0 still caches")
	}
}

// TestReleasedStoragePanics: a kernel given a released storage panics
// rather than touch a buffer that may already serve another tensor.
func TestReleasedStoragePanics(t *testing.T) {
	s := alloc(t, backend.Float32, 1<<16)
	s.Release()
	s.Release() // twice is harmless
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	Backend{}.Fill(backend.View{S: s, Shape: []int{1 << 16}, Strides: []int{1}}, 1)
}

// TestPinnedNotCached: driver memory goes back to its owner, never the cache.
func TestPinnedNotCached(t *testing.T) {
	defer recycleCollected.Store(true)
	recycleCollected.Store(false)
	Backend{}.EmptyCache(backend.Device{})
	buf := make([]float32, 1<<16)
	freed := 0
	s := NewPinned(backend.Float32, len(buf), unsafe.Pointer(&buf[0]), func() { freed++ })
	s.Release()
	if _, cn, _, _, _, _ := cache.stats(); cn != 0 || freed != 1 {
		t.Fatalf("pinned release: %d cached, freed %d times", cn, freed)
	}
}

// TestCacheRecyclesCollected: a storage dropped without Release gives its
// buffer back once the collector finds the buffer unreachable, and not
// while a slice of it is still held.
func TestCacheRecyclesCollected(t *testing.T) {
	Backend{}.EmptyCache(backend.Device{})
	const n = 1<<17 + 5
	s := alloc(t, backend.Float32, n)
	held := s.data.([]float32)[7:9]   // a slice outliving the storage, as a kernel's would
	p := uintptr(dataPointer(s.data)) // not a pointer: it must not keep the buffer
	s = nil
	reused := func() bool {
		_, _, _, _, _, rec := cache.stats()
		return rec > 0 && cache.has(p)
	}
	for i := 0; i < 5; i++ {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	if reused() {
		t.Fatal("a buffer still referenced by a slice was recycled")
	}
	runtime.KeepAlive(held)
	held = nil
	deadline := time.Now().Add(10 * time.Second)
	for !reused() && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	if !reused() {
		t.Fatal("the collected storage's buffer was not recycled")
	}
	b := alloc(t, backend.Int32, n) // same class
	if uintptr(dataPointer(b.data)) != p {
		t.Fatal("the recycled buffer did not serve the next allocation of its class")
	}
	b.Release()
	Backend{}.EmptyCache(backend.Device{})
}

// TestPaceStartsCollections: storages dropped without Release start a
// collection once their bytes have grown by gcGrowth, so their buffers come
// back to the cache; storages released at once never start one.
func TestPaceStartsCollections(t *testing.T) {
	defer gcGrowth.Store(gcGrowth.Swap(8 << 20))
	for gcRunning.Load() {
		time.Sleep(time.Millisecond)
	}
	gcBase.Store(liveBytes.Load())
	started := gcStarted.Load()
	for range 64 { // 64 MiB, each buffer released
		alloc(t, backend.Float32, 1<<18).Release()
	}
	if n := gcStarted.Load() - started; n != 0 {
		t.Fatalf("released storages started %d collections, want none", n)
	}
	var keep []*Storage
	for range 20 { // 20 MiB kept alive: more than twice gcGrowth
		keep = append(keep, alloc(t, backend.Float32, 1<<18))
		for gcRunning.Load() { // let each collection finish before the next can start
			time.Sleep(time.Millisecond)
		}
	}
	if n := gcStarted.Load() - started; n < 2 {
		t.Fatalf("20 MiB of new storages started %d collections, want at least 2 (every 8 MiB)", n)
	}
	for _, s := range keep {
		s.Release()
	}
}

// TestPaceOnOneP: with one P a collection pace starts runs at once in the
// allocating goroutine, and the finalizers it queues get to run before the
// allocation returns: dropped storages are back in the cache by the next
// allocation. A background collection would wait for the goroutine's
// preemption, and the loop would run on fresh memory meanwhile.
func TestPaceOnOneP(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	defer gcGrowth.Store(gcGrowth.Swap(4 << 20))
	for gcRunning.Load() {
		time.Sleep(time.Millisecond)
	}
	Backend{}.EmptyCache(backend.Device{})
	runtime.GC()
	gcBase.Store(liveBytes.Load())
	started := gcStarted.Load()
	_, _, _, _, _, rec0 := cache.stats()
	for i := 0; gcStarted.Load() == started; i++ {
		if i == 64 {
			t.Fatal("64 MiB of dropped storages started no collection")
		}
		alloc(t, backend.Float32, 1<<18) // 1 MiB, dropped
	}
	// the allocation that started the collection has returned
	if gcRunning.Load() {
		t.Error("the collection is still running after the allocation that started it")
	}
	if _, _, _, _, _, rec := cache.stats(); rec == rec0 {
		t.Error("no dropped storage was recycled by the time the allocation returned")
	}
	Backend{}.EmptyCache(backend.Device{})
}
