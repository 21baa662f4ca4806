package cpu

import (
	"math"
	"math/bits"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/emberml/ember/backend"
)

// The CPU backend keeps a bounded cache of large host buffers, as PyTorch's
// caching allocators do, so that a loop does not make Go allocate, and
// zero, tens of MiB per step. Buffers enter it two ways:
//
//   - Storage.Release puts the buffer on the free list of its size class at
//     once; every view of the storage panics on use afterwards.
//   - A buffer whose storage was dropped without Release comes back when the
//     garbage collector finds the buffer itself unreachable: a finalizer on
//     the buffer's memory (not on the Storage) recycles it. Only then can no
//     view, no slice and no running kernel still reach it, whatever the
//     code holding them.
//
// Alloc serves a request from the free list of its class (uninitialised),
// else with fresh memory. Buffers are raw, pointer-free memory reinterpreted
// as the storage's dtype, so one buffer serves any dtype of its class. A
// buffer that leaves the cache (evicted past the bound, or by EmptyCache)
// loses its finalizer and goes back to the garbage collector.

// cacheMinBytes is the smallest buffer the cache keeps; smaller ones come
// from Go's allocator, which serves them quickly and zeroes them cheaply.
const cacheMinBytes = 64 << 10

// defaultCacheLimit bounds the bytes the cache holds (EMBER_CPU_CACHE_MB
// overrides it at start-up; SetCacheLimit at run time).
const defaultCacheLimit = 256 << 20

// sizeClass rounds a request of b bytes (>= cacheMinBytes) up to one of
// eight classes per power of two, so at most 12.5% of a buffer is slack.
func sizeClass(b int) int {
	step := 1 << max(bits.Len(uint(b-1))-4, 0)
	return (b + step - 1) &^ (step - 1)
}

type cachedBuf struct {
	p   unsafe.Pointer
	seq uint64
}

type bufCache struct {
	mu       sync.Mutex
	draining bool // after EmptyCache, until the next allocation: collected buffers are freed, not cached
	recycled int64
	free     map[int][]cachedBuf // size class (bytes) → buffers, most recent last
	bytes    atomic.Int64        // bytes held in free (written under mu)
	count    int64
	seq      uint64
	limit    int64
	hits     int64
	misses   int64
	evicted  int64
}

var cache = bufCache{free: map[int][]cachedBuf{}, limit: cacheLimitFromEnv()}

func cacheLimitFromEnv() int64 {
	if v := os.Getenv("EMBER_CPU_CACHE_MB"); v != "" {
		if mb, err := strconv.ParseInt(v, 10, 64); err == nil && mb >= 0 {
			return mb << 20
		}
	}
	return defaultCacheLimit
}

// SetCacheLimit bounds the bytes of released buffers the CPU backend keeps
// for reuse (0 turns the cache off) and returns the previous bound. Buffers
// beyond the new bound are dropped at once.
func SetCacheLimit(bytes int64) int64 {
	cache.mu.Lock()
	defer cache.mu.Unlock()
	prev := cache.limit
	cache.limit = max(bytes, 0)
	cache.evictLocked(0)
	return prev
}

// get returns a cached buffer of class cls, or nil.
func (c *bufCache) get(cls int) unsafe.Pointer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.draining = false
	l := c.free[cls]
	if len(l) == 0 {
		c.misses++
		return nil
	}
	b := l[len(l)-1]
	l[len(l)-1] = cachedBuf{}
	c.free[cls] = l[:len(l)-1]
	c.bytes.Add(-int64(cls))
	c.count--
	c.hits++
	return b.p
}

// put keeps a released buffer of class cls, evicting the oldest buffers
// when the cache would exceed its bound.
func (c *bufCache) put(p unsafe.Pointer, cls int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if int64(cls) > c.limit {
		disarm(p)
		return
	}
	c.putLocked(p, cls)
}

// collected is the finalizer of a buffer nothing references any more: it
// is cached (its finalizer armed again) unless the cache is off, full of
// newer buffers, or draining.
func (c *bufCache) collected(p unsafe.Pointer, cls int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if int64(cls) > c.limit || c.draining || !recycleCollected.Load() {
		return // the finalizer has run: the garbage collector frees it
	}
	arm(p, cls)
	c.recycled++
	c.putLocked(p, cls)
}

func (c *bufCache) putLocked(p unsafe.Pointer, cls int) {
	c.evictLocked(int64(cls))
	c.seq++
	c.free[cls] = append(c.free[cls], cachedBuf{p: p, seq: c.seq})
	c.bytes.Add(int64(cls))
	c.count++
}

// evictLocked drops the oldest buffers until room more bytes fit.
func (c *bufCache) evictLocked(room int64) {
	for c.bytes.Load()+room > c.limit && c.count > 0 {
		oldest, at := uint64(1<<64-1), 0
		for cls, l := range c.free {
			if len(l) > 0 && l[0].seq < oldest {
				oldest, at = l[0].seq, cls
			}
		}
		l := c.free[at]
		disarm(l[0].p)
		copy(l, l[1:])
		l[len(l)-1] = cachedBuf{}
		if len(l) == 1 {
			delete(c.free, at)
		} else {
			c.free[at] = l[:len(l)-1]
		}
		c.bytes.Add(-int64(at))
		c.count--
		c.evicted++
	}
}

// drop empties the cache (EmptyCache).
func (c *bufCache) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range c.free {
		for _, b := range l {
			disarm(b.p)
		}
	}
	c.free = map[int][]cachedBuf{}
	c.bytes.Store(0)
	c.count = 0
	c.draining = true
}

func (c *bufCache) stats() (bytes, count, hits, misses, evicted, recycled int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes.Load(), c.count, c.hits, c.misses, c.evicted, c.recycled
}

// has reports whether the buffer at address p is in the cache (tests).
func (c *bufCache) has(p uintptr) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range c.free {
		for _, b := range l {
			if uintptr(b.p) == p {
				return true
			}
		}
	}
	return false
}

// recycleCollected turns the recycling of collected buffers on (tests that
// count buffers turn it off).
var recycleCollected atomic.Bool

func init() { recycleCollected.Store(true) }

// arm sets the finalizer that recycles a buffer once unreachable; disarm
// removes it, for a buffer the cache lets go.
func arm(p unsafe.Pointer, cls int) {
	runtime.SetFinalizer((*uint64)(p), func(q *uint64) { cache.collected(unsafe.Pointer(q), cls) })
}

func disarm(p unsafe.Pointer) { runtime.SetFinalizer((*uint64)(p), nil) }

// newBuffer returns n elements of dt, uninitialised when served from the
// cache, and the size class of the buffer (0 when it is not cacheable).
func newBuffer(dt backend.DType, n int) (data any, cls int) {
	b := n * dt.Size()
	if b < cacheMinBytes {
		data = makeSlice(dt, n)
	} else {
		cls = sizeClass(b)
		p := cache.get(cls)
		if p == nil {
			words := make([]uint64, cls/8)
			p = unsafe.Pointer(unsafe.SliceData(words))
			adviseHuge(p, cls)
			if int64(cls) <= cacheLimit() { // larger ones could never be cached
				arm(p, cls)
			}
		}
		data = typedSlice(dt, p, n)
	}
	if poison {
		poisonSlice(data)
	}
	return data, cls
}

// poison (EMBER_CPU_POISON=1, for tests) fills every new buffer with NaN,
// -7 or true, so that code reading memory it did not write shows itself.
var poison = os.Getenv("EMBER_CPU_POISON") == "1"

func poisonSlice(data any) {
	switch d := data.(type) {
	case []float32:
		fillSlice(d, float32(math.NaN()))
	case []float64:
		fillSlice(d, math.NaN())
	case []int64:
		fillSlice(d, -7)
	case []int32:
		fillSlice(d, -7)
	case []bool:
		fillSlice(d, true)
	case []backend.BF16:
		fillSlice(d, 0x7FC0)
	case []backend.F16:
		fillSlice(d, 0x7E00)
	}
}

func fillSlice[T any](d []T, v T) {
	for i := range d {
		d[i] = v
	}
}

func makeSlice(dt backend.DType, n int) any {
	switch dt {
	case backend.Float32:
		return make([]float32, n)
	case backend.Float64:
		return make([]float64, n)
	case backend.Int64:
		return make([]int64, n)
	case backend.Int32:
		return make([]int32, n)
	case backend.Bool:
		return make([]bool, n)
	case backend.BFloat16:
		return make([]backend.BF16, n)
	case backend.Float16:
		return make([]backend.F16, n)
	}
	panic("cpu: unknown dtype " + dt.String())
}

func typedSlice(dt backend.DType, p unsafe.Pointer, n int) any {
	switch dt {
	case backend.Float32:
		return unsafe.Slice((*float32)(p), n)
	case backend.Float64:
		return unsafe.Slice((*float64)(p), n)
	case backend.Int64:
		return unsafe.Slice((*int64)(p), n)
	case backend.Int32:
		return unsafe.Slice((*int32)(p), n)
	case backend.Bool:
		return unsafe.Slice((*bool)(p), n)
	case backend.BFloat16:
		return unsafe.Slice((*backend.BF16)(p), n)
	case backend.Float16:
		return unsafe.Slice((*backend.F16)(p), n)
	}
	panic("cpu: unknown dtype " + dt.String())
}

// dataPointer is the first element's address of a storage's slice.
func dataPointer(data any) unsafe.Pointer {
	switch d := data.(type) {
	case []float32:
		return unsafe.Pointer(unsafe.SliceData(d))
	case []float64:
		return unsafe.Pointer(unsafe.SliceData(d))
	case []int64:
		return unsafe.Pointer(unsafe.SliceData(d))
	case []int32:
		return unsafe.Pointer(unsafe.SliceData(d))
	case []bool:
		return unsafe.Pointer(unsafe.SliceData(d))
	case []backend.BF16:
		return unsafe.Pointer(unsafe.SliceData(d))
	case []backend.F16:
		return unsafe.Pointer(unsafe.SliceData(d))
	}
	return nil
}

// reservedBytes counts the bytes of live storages' buffers (whole size
// classes for cacheable ones); peakReserved is the peak of it plus the cache.
var (
	reservedBytes atomic.Int64
	peakReserved  atomic.Int64
)

func accountReserved(delta int64) {
	v := reservedBytes.Add(delta) + cache.bytes.Load()
	for {
		p := peakReserved.Load()
		if v <= p || peakReserved.CompareAndSwap(p, v) {
			return
		}
	}
}

func cacheLimit() int64 {
	cache.mu.Lock()
	defer cache.mu.Unlock()
	return cache.limit
}
