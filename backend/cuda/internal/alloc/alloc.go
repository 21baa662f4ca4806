// Package alloc is the caching device-memory allocator of ember's CUDA
// backend, modelled on PyTorch's c10/cuda/CUDACachingAllocator.cpp.
//
// Memory is requested from the device in segments and carved into blocks.
// Freed blocks stay cached in one of two pools (small: blocks of at most
// 1 MiB, carved from 2 MiB segments; large: everything else) and are
// reused by later requests on the same stream through a best-fit search.
// Blocks are split when the remainder is worth keeping and merged with their
// free neighbours when freed. A block used on streams other than its own
// (RecordStream) is reused only after an event recorded on each of those
// streams at free time has completed. A stream about to be destroyed hands
// its memory to the default stream (ReleaseStream).
//
// The allocator talks to the GPU only through the Device interface, so the
// driver binding plugs in from outside and tests run on FakeDevice.
package alloc

import (
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Size classes, named and valued as in PyTorch's CUDACachingAllocator.
const (
	MinBlockSize  = 512      // kMinBlockSize: every size is rounded up to a multiple of this
	SmallSize     = 1 << 20  // kSmallSize: largest request served by the small pool
	SmallBuffer   = 2 << 20  // kSmallBuffer: segment size of the small pool
	LargeBuffer   = 20 << 20 // kLargeBuffer: segment size for large requests below MinLargeAlloc
	MinLargeAlloc = 10 << 20 // kMinLargeAlloc: from here on, segments fit the request
	RoundLarge    = 2 << 20  // kRoundLarge: granularity of those fitted segments
)

// MaxRequest is the largest size Malloc accepts; it keeps the rounding
// arithmetic free of overflow and is far beyond any device's memory.
const MaxRequest = 1 << 60

// Device is what the allocator needs from a GPU. The CUDA driver binding
// implements it (cuMemAlloc, cuMemFree, cuMemGetInfo, cuEventRecord,
// cuEventQuery, cuEventDestroy, cuCtxSynchronize), and so does FakeDevice.
type Device interface {
	// Malloc reserves size bytes of device memory. Running out of memory
	// must be reported with an error for which IsOOM is true.
	Malloc(size uint64) (ptr uint64, err error)
	// Free returns memory obtained from Malloc.
	Free(ptr uint64) error
	// MemInfo reports the device's free and total memory in bytes.
	MemInfo() (free, total uint64, err error)
	// RecordEvent creates an event and records it on stream.
	RecordEvent(stream uintptr) (event uintptr, err error)
	// EventDone reports whether all work captured by event has completed.
	EventDone(event uintptr) (bool, error)
	// DestroyEvent releases an event made by RecordEvent.
	DestroyEvent(event uintptr) error
	// SynchronizeDevice waits for all work on the device to complete.
	SynchronizeDevice() error
}

// ErrOutOfMemory is the device's out-of-memory condition. A Device may
// return it (wrapped or not), or any error with an OutOfMemory() bool method
// that reports true; either way IsOOM recognises it.
var ErrOutOfMemory = errors.New("CUDA_ERROR_OUT_OF_MEMORY")

// IsOOM reports whether err is, or wraps, an out-of-memory error: ErrOutOfMemory,
// an *OOMError, or an error whose OutOfMemory method returns true.
func IsOOM(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrOutOfMemory) {
		return true
	}
	var o interface{ OutOfMemory() bool }
	return errors.As(err, &o) && o.OutOfMemory()
}

// Block is a piece of device memory handed out by Malloc. Its fields are
// owned by the allocator; read them through the methods. After Free the
// allocator recycles the struct for other blocks, so a *Block must not be
// used once freed (Free reports a second Free only while the struct is
// still unused).
type Block struct {
	ptr        uint64
	size       uint64 // rounded size of the block
	requested  uint64 // size asked of Malloc
	stream     uintptr
	life       *streamLife // nil on stream 0; see ReleaseStream
	pool       *blockPool
	prev, next *Block // neighbours within the segment
	allocated  bool
	leaked     bool // a failed free left it unusable; never reused
	eventCount int  // outstanding stream-use events
	streamUses []streamUse
}

// streamUse is a stream b is used on (RecordStream), with the stream's
// lifetime then: a use on a stream released since needs no event.
type streamUse struct {
	stream uintptr
	life   *streamLife
}

// Ptr is the block's device address (0 for a nil block).
func (b *Block) Ptr() uint64 {
	if b == nil {
		return 0
	}
	return b.ptr
}

// Size is the block's size in bytes: the request rounded up to 512 bytes.
func (b *Block) Size() uint64 {
	if b == nil {
		return 0
	}
	return b.size
}

// Requested is the size that was asked of Malloc.
func (b *Block) Requested() uint64 {
	if b == nil {
		return 0
	}
	return b.requested
}

// Stream is the stream the block was allocated on.
func (b *Block) Stream() uintptr {
	if b == nil {
		return 0
	}
	return b.stream
}

func (b *Block) isSplit() bool { return b.prev != nil || b.next != nil }

// Options configure an Allocator.
type Options struct {
	// Device is the GPU's index, used in messages and the summary.
	Device int
	// BeforeRetry, when set, runs after a device allocation failed and the
	// cache was emptied, before the one retry. It runs without the
	// allocator's lock held, so it may free blocks (the backend runs Go's
	// garbage collector there so finalizers release unreachable tensors).
	BeforeRetry func()
}

// Allocator is a caching allocator for one device. It is safe for
// concurrent use; one mutex guards all of its state.
type Allocator struct {
	mu          sync.Mutex
	dev         Device
	index       int
	beforeRetry func()
	small       blockPool
	large       blockPool
	events      []streamEvents // per stream, events of freed blocks still in use
	streams     map[uintptr]*streamLife
	numPending  int
	stats       Stats
	spare       []*Block // structs of merged-away blocks, for reuse by splits
}

// maxSpare bounds the recycled Block structs kept per allocator.
const maxSpare = 64

// streamLife is one stream's lifetime, shared by the blocks of the segments
// reserved for it. ReleaseStream ends it: the handle may then be reused by
// a new stream, which gets a new streamLife, so blocks of the old stream
// are told apart from the new one's by this pointer, not by the handle.
type streamLife struct{ released bool }

type pendingEvent struct {
	event uintptr
	block *Block
}

// streamEvents queues the events recorded on one stream, oldest first;
// events on one stream complete in order, as in PyTorch's process_events.
type streamEvents struct {
	stream uintptr
	buf    []pendingEvent
	head   int
}

// New returns an allocator drawing memory from dev.
func New(dev Device, opts Options) *Allocator {
	a := &Allocator{dev: dev, index: opts.Device, beforeRetry: opts.BeforeRetry}
	a.small = blockPool{owner: a, small: true}
	a.large = blockPool{owner: a}
	a.stats.MaxSplitSize = -1
	return a
}

// SetBeforeRetry replaces the hook run before the retry of an allocation
// that ran out of device memory (see Options.BeforeRetry).
func (a *Allocator) SetBeforeRetry(fn func()) {
	a.mu.Lock()
	a.beforeRetry = fn
	a.mu.Unlock()
}

// RoundSize rounds a request up to a multiple of MinBlockSize (at least
// MinBlockSize), as PyTorch's round_size.
func RoundSize(size uint64) uint64 {
	if size < MinBlockSize {
		return MinBlockSize
	}
	return (size + MinBlockSize - 1) / MinBlockSize * MinBlockSize
}

// SegmentSize is the size of the segment reserved from the device for a
// rounded request that no cached block can serve, as PyTorch's
// get_allocation_size: 2 MiB for the small pool, 20 MiB below 10 MiB,
// and the request rounded up to 2 MiB from there on.
func SegmentSize(size uint64) uint64 {
	switch {
	case size <= SmallSize:
		return SmallBuffer
	case size < MinLargeAlloc:
		return LargeBuffer
	}
	return (size + RoundLarge - 1) / RoundLarge * RoundLarge
}

func (a *Allocator) poolFor(size uint64) *blockPool {
	if size <= SmallSize {
		return &a.small
	}
	return &a.large
}

// Malloc returns a block of at least size bytes for use on stream. A size of
// 0 returns a nil block and no error, as PyTorch returns a null pointer.
// When the device is out of memory even after emptying the cache and
// retrying, the error is an *OOMError.
func (a *Allocator) Malloc(size uint64, stream uintptr) (*Block, error) {
	if size == 0 {
		return nil, nil
	}
	if size > MaxRequest {
		return nil, fmt.Errorf("alloc: request of %d bytes exceeds the maximum of %d", size, uint64(MaxRequest))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.processEvents(); err != nil {
		return nil, err
	}
	rsize := RoundSize(size)
	pool := a.poolFor(rsize)
	segSize := SegmentSize(rsize)
	b := pool.take(stream, rsize)
	if b == nil {
		var err error
		b, err = a.allocSegment(pool, stream, segSize)
		if err != nil && !IsOOM(err) {
			return nil, err
		}
		if b == nil {
			// Out of device memory: return every cached segment, let the
			// hook release what it can, and retry once.
			a.stats.NumAllocRetries++
			if rerr := a.releaseCached(); rerr != nil {
				return nil, rerr
			}
			if hook := a.beforeRetry; hook != nil {
				a.mu.Unlock()
				hook()
				a.mu.Lock()
				if perr := a.processEvents(); perr != nil {
					return nil, perr
				}
				if b = pool.take(stream, rsize); b == nil {
					if rerr := a.releaseCached(); rerr != nil {
						return nil, rerr
					}
				}
			}
			if b == nil {
				b, err = a.allocSegment(pool, stream, segSize)
				if err != nil && !IsOOM(err) {
					return nil, err
				}
			}
			if b == nil {
				return nil, a.oomError(size, segSize, err)
			}
		}
	}
	return a.carve(b, pool, rsize, size), nil
}

// carve hands out the front rsize bytes of the free block b, putting the
// rest back into the pool when it is worth keeping (PyTorch's malloc tail),
// and returns the allocated block.
func (a *Allocator) carve(b *Block, pool *blockPool, rsize, requested uint64) *Block {
	alreadySplit := b.isSplit()
	if shouldSplit(b, pool, rsize) {
		rest := b
		b = a.newBlock()
		b.ptr, b.size, b.stream, b.life, b.pool = rest.ptr, rsize, rest.stream, rest.life, pool
		b.prev = rest.prev
		if b.prev != nil {
			b.prev.next = b
		}
		b.next = rest
		rest.prev = b
		rest.ptr += rsize
		rest.size -= rsize
		pool.insert(rest)
		if alreadySplit {
			// An already split inactive block shrinks by rsize bytes.
			a.update(&a.stats.InactiveSplitBytes, pool, -int64(rsize))
		} else {
			// A previously whole block leaves an inactive remainder.
			a.update(&a.stats.InactiveSplitBytes, pool, int64(rest.size))
			a.update(&a.stats.InactiveSplit, pool, 1)
		}
	} else if alreadySplit {
		// An already split block becomes active whole.
		a.update(&a.stats.InactiveSplitBytes, pool, -int64(b.size))
		a.update(&a.stats.InactiveSplit, pool, -1)
	}
	b.allocated = true
	b.requested = requested
	a.update(&a.stats.Allocation, pool, 1)
	a.update(&a.stats.AllocatedBytes, pool, int64(b.size))
	a.update(&a.stats.Active, pool, 1)
	a.update(&a.stats.ActiveBytes, pool, int64(b.size))
	a.update(&a.stats.RequestedBytes, pool, int64(requested))
	return b
}

// shouldSplit is PyTorch's should_split: keep a remainder of at least
// 512 bytes in the small pool, of more than 1 MiB in the large pool.
func shouldSplit(b *Block, pool *blockPool, size uint64) bool {
	rest := b.size - size
	if pool.small {
		return rest >= MinBlockSize
	}
	return rest > SmallSize
}

// allocSegment reserves a new segment from the device (PyTorch's
// alloc_block) and returns it as one free block not yet in any pool.
func (a *Allocator) allocSegment(pool *blockPool, stream uintptr, size uint64) (*Block, error) {
	ptr, err := a.dev.Malloc(size)
	if err != nil {
		return nil, err
	}
	a.update(&a.stats.Segment, pool, 1)
	a.update(&a.stats.ReservedBytes, pool, int64(size))
	return &Block{ptr: ptr, size: size, stream: stream, life: a.lifeOf(stream), pool: pool}, nil
}

// lifeOf is the current lifetime of stream (nil for the default stream).
func (a *Allocator) lifeOf(stream uintptr) *streamLife {
	if stream == 0 {
		return nil
	}
	l := a.streams[stream]
	if l == nil {
		if a.streams == nil {
			a.streams = make(map[uintptr]*streamLife)
		}
		l = new(streamLife)
		a.streams[stream] = l
	}
	return l
}

// oomError counts the failure and describes it, with the device's view of
// its memory.
func (a *Allocator) oomError(requested, segSize uint64, cause error) *OOMError {
	a.stats.NumOOMs++
	e := &OOMError{
		Requested: requested,
		AllocSize: segSize,
		Device:    a.index,
		Allocated: uint64(a.stats.AllocatedBytes[StatAll].Current),
		Reserved:  uint64(a.stats.ReservedBytes[StatAll].Current),
		Err:       cause,
	}
	free, total, err := a.dev.MemInfo()
	if err == nil {
		e.Free, e.Total = free, total
	} else {
		e.MemInfoErr = err
	}
	return e
}

// Free returns b to the cache. A nil block is ignored. A block used on other
// streams (RecordStream) becomes reusable once events recorded on those
// streams now have completed. Freeing a block twice, or one from another
// allocator, is an error.
func (a *Allocator) Free(b *Block) error {
	if b == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if b.pool == nil || b.pool.owner != a {
		return fmt.Errorf("alloc: Free of a block (ptr %#x) not from this allocator", b.ptr)
	}
	if !b.allocated {
		return fmt.Errorf("alloc: Free of a block (ptr %#x) that is not allocated", b.ptr)
	}
	b.allocated = false
	a.update(&a.stats.Allocation, b.pool, -1)
	a.update(&a.stats.AllocatedBytes, b.pool, -int64(b.size))
	if len(b.streamUses) > 0 {
		return a.insertEvents(b)
	}
	a.freeBlock(b)
	return nil
}

// insertEvents records an event on each stream b was used on; b is freed
// once they have all completed. If an event cannot be recorded the device is
// synchronised instead; if that fails too, b is never reused.
func (a *Allocator) insertEvents(b *Block) error {
	var errs []error
	for _, u := range b.streamUses {
		if u.life != nil && u.life.released {
			continue // waited for by ReleaseStream's caller, and destroyed
		}
		s := u.stream
		ev, err := a.dev.RecordEvent(s)
		if err != nil {
			if serr := a.dev.SynchronizeDevice(); serr != nil {
				errs = append(errs, err, serr)
				b.leaked = true
			}
			continue
		}
		a.pushEvent(s, ev, b)
		b.eventCount++
	}
	b.streamUses = b.streamUses[:0]
	if b.eventCount == 0 && !b.leaked {
		a.freeBlock(b)
	}
	return errors.Join(errs...)
}

func (a *Allocator) pushEvent(stream uintptr, ev uintptr, b *Block) {
	a.numPending++
	for i := range a.events {
		if q := &a.events[i]; q.stream == stream {
			q.buf = append(q.buf, pendingEvent{ev, b})
			return
		}
	}
	a.events = append(a.events, streamEvents{stream: stream, buf: []pendingEvent{{ev, b}}})
}

// eventDone accounts for one completed event of b.
func (a *Allocator) eventDone(b *Block) {
	a.numPending--
	b.eventCount--
	if b.eventCount == 0 && !b.leaked {
		a.freeBlock(b)
	}
}

// processEvents frees the blocks whose events have all completed, checking
// each stream's events oldest first (PyTorch's process_events).
func (a *Allocator) processEvents() error {
	if a.numPending == 0 {
		return nil
	}
	var errs []error
	for i := range a.events {
		q := &a.events[i]
		for q.head < len(q.buf) {
			e := q.buf[q.head]
			done, err := a.dev.EventDone(e.event)
			if err != nil {
				errs = append(errs, err)
				break
			}
			if !done {
				break
			}
			if err := a.dev.DestroyEvent(e.event); err != nil {
				errs = append(errs, err)
			}
			q.buf[q.head] = pendingEvent{}
			q.head++
			a.eventDone(e.block)
		}
		if q.head == len(q.buf) {
			q.buf, q.head = q.buf[:0], 0
		}
	}
	return errors.Join(errs...)
}

// syncEvents waits for the device and frees every block waiting on events
// (PyTorch's synchronize_and_free_events).
func (a *Allocator) syncEvents() error {
	if a.numPending == 0 {
		return nil
	}
	if err := a.dev.SynchronizeDevice(); err != nil {
		return err
	}
	var errs []error
	for i := range a.events {
		q := &a.events[i]
		for ; q.head < len(q.buf); q.head++ {
			e := q.buf[q.head]
			if err := a.dev.DestroyEvent(e.event); err != nil {
				errs = append(errs, err)
			}
			q.buf[q.head] = pendingEvent{}
			a.eventDone(e.block)
		}
		q.buf, q.head = q.buf[:0], 0
	}
	return errors.Join(errs...)
}

// freeBlock puts an unused block back into its pool, merged with its free
// neighbours (PyTorch's free_block).
func (a *Allocator) freeBlock(b *Block) {
	if b.life != nil && b.life.released {
		// Its stream is gone: its free neighbours moved to the default
		// stream's pool in ReleaseStream, and so does it.
		b.stream, b.life = 0, nil
	}
	pool := b.pool
	origSize := b.size
	var netSplits, netSplitBytes int64
	for _, c := range [2]*Block{b.prev, b.next} {
		if n := a.merge(b, c); n > 0 {
			netSplits--
			netSplitBytes -= int64(n)
		}
	}
	pool.insert(b)
	if b.isSplit() {
		netSplits++
		netSplitBytes += int64(b.size)
	}
	a.update(&a.stats.InactiveSplit, pool, netSplits)
	a.update(&a.stats.InactiveSplitBytes, pool, netSplitBytes)
	a.update(&a.stats.Active, pool, -1)
	a.update(&a.stats.ActiveBytes, pool, -int64(origSize))
	a.update(&a.stats.RequestedBytes, pool, -int64(b.requested))
	b.requested = 0
}

// merge folds the free neighbour src into dst and returns the bytes it
// subsumed, or 0 when src is absent, in use or waiting on events.
func (a *Allocator) merge(dst, src *Block) uint64 {
	if src == nil || src.allocated || src.eventCount > 0 || len(src.streamUses) > 0 || src.leaked {
		return 0
	}
	dst.pool.remove(src)
	if dst.prev == src { // [src dst]
		dst.ptr = src.ptr
		dst.prev = src.prev
		if dst.prev != nil {
			dst.prev.next = dst
		}
	} else { // [dst src]
		dst.next = src.next
		if dst.next != nil {
			dst.next.prev = dst
		}
	}
	n := src.size
	dst.size += n
	a.recycle(src)
	return n
}

// newBlock returns a zeroed Block, recycled when one is spare: the split of
// a cached block then costs no Go allocation in steady state.
func (a *Allocator) newBlock() *Block {
	if n := len(a.spare); n > 0 {
		b := a.spare[n-1]
		a.spare[n-1] = nil
		a.spare = a.spare[:n-1]
		return b
	}
	return new(Block)
}

// recycle keeps the struct of a block that no longer exists. A stale
// pointer to it fails Free's allocated check until it is handed out again.
func (a *Allocator) recycle(b *Block) {
	uses := b.streamUses[:0]
	*b = Block{pool: b.pool, streamUses: uses}
	if len(a.spare) < maxSpare {
		a.spare = append(a.spare, b)
	}
}

// RecordStream marks b as used on stream, so that once freed it is reused
// only after the work queued on stream by then has completed (PyTorch's
// recordStream). Uses on b's own stream need no marking and are ignored, as
// are nil, freed and foreign blocks. Streams are told apart by lifetime, not
// only by handle: once b's stream is released, a new stream given its handle
// is another stream.
func (a *Allocator) RecordStream(b *Block, stream uintptr) {
	if b == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if b.pool == nil || b.pool.owner != a || !b.allocated {
		return
	}
	u := streamUse{stream, a.lifeOf(stream)}
	if u == (streamUse{b.stream, b.life}) || slices.Contains(b.streamUses, u) {
		return
	}
	b.streamUses = append(b.streamUses, u)
}

// ReleaseStream hands the memory of stream s to the default stream (0)
// before s is destroyed; the caller must have waited for the work queued on
// s. A destroyed stream's pool could serve no one (PyTorch never destroys
// the streams its allocator knows): its cached blocks move to the default
// stream's pool at once, and its blocks still allocated, or waiting on
// events of other streams, go there when freed; uses of other streams' blocks
// on s (RecordStream) are over and need no event. A stream later created with
// the same handle starts with an empty cache and is another stream. Statistics do not change: the
// memory stays reserved, and cached, as before. Releasing stream 0 does
// nothing.
func (a *Allocator) ReleaseStream(s uintptr) error {
	if s == 0 {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if l := a.streams[s]; l != nil {
		l.released = true
		delete(a.streams, s)
	}
	a.small.restream(s, 0)
	a.large.restream(s, 0)
	// s's work is done, so its events are too: process them and drop its
	// queue, which a new stream with the handle would otherwise inherit.
	err := a.processEvents()
	for i := range a.events {
		if q := &a.events[i]; q.stream == s && q.head == len(q.buf) {
			a.events = slices.Delete(a.events, i, i+1)
			break
		}
	}
	return err
}

// EmptyCache waits for blocks held back by stream-use events, then returns
// every cached segment that is wholly free to the device (PyTorch's
// emptyCache). Segments holding a live block stay.
func (a *Allocator) EmptyCache() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.releaseCached()
}

// releaseCached is PyTorch's release_cached_blocks.
func (a *Allocator) releaseCached() error {
	err := a.syncEvents()
	return errors.Join(err, a.releasePool(&a.large), a.releasePool(&a.small))
}

// releasePool frees the pool's whole (unsplit) blocks to the device.
func (a *Allocator) releasePool(p *blockPool) error {
	var errs []error
	keep := p.blocks[:0]
	for _, b := range p.blocks {
		if !b.isSplit() {
			if err := a.dev.Free(b.ptr); err == nil {
				a.update(&a.stats.Segment, p, -1)
				a.update(&a.stats.ReservedBytes, p, -int64(b.size))
				b.size = 0
				continue
			} else {
				errs = append(errs, err)
			}
		}
		keep = append(keep, b)
	}
	clear(p.blocks[len(keep):])
	p.blocks = keep
	return errors.Join(errs...)
}

// Stats returns a copy of the allocator's counters.
func (a *Allocator) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats
}

// ResetPeakStats sets every peak to its current value (PyTorch's
// resetPeakStats).
func (a *Allocator) ResetPeakStats() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stats.forEach(func(s *Stat) { s.Peak = s.Current })
}

// ResetAccumulatedStats zeroes the Allocated and Freed totals and the retry
// and OOM counts (PyTorch's resetAccumulatedStats).
func (a *Allocator) ResetAccumulatedStats() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stats.forEach(func(s *Stat) { s.Allocated, s.Freed = 0, 0 })
	a.stats.NumAllocRetries, a.stats.NumOOMs = 0, 0
}

// Summary is a readable table of the counters, laid out as
// torch.cuda.memory_summary.
func (a *Allocator) Summary() string {
	return a.Stats().Summary(a.index)
}

// update applies amount to the aggregate and the pool's entry of s.
func (a *Allocator) update(s *StatArray, p *blockPool, amount int64) {
	s[StatAll].add(amount)
	if p.small {
		s[StatSmallPool].add(amount)
	} else {
		s[StatLargePool].add(amount)
	}
}
