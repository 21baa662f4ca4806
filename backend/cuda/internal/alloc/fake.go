package alloc

import (
	"fmt"
	"slices"
	"sync"
)

// FakeDevice is an in-memory Device for tests. Its memory is an address
// range of a fixed capacity handed out first-fit in 512-byte units, so it
// fragments like a real heap; nothing is backed by real memory. Events
// complete only when the test says so (CompleteEvents, CompleteEvent,
// CompleteStream) or on SynchronizeDevice. It is safe for concurrent use.
type FakeDevice struct {
	mu       sync.Mutex
	capacity uint64
	holes    []span            // free address ranges, sorted, coalesced
	live     map[uint64]uint64 // ptr -> size of each live allocation
	used     uint64

	mallocCalls, freeCalls, syncCalls int
	nextEvent                         uintptr
	events                            map[uintptr]*fakeEvent
	recorded                          int

	mallocErr func(size uint64) error
	eventErr  error
}

type span struct{ start, end uint64 }

type fakeEvent struct {
	stream uintptr
	done   bool
}

// FakeBase is the first address FakeDevice hands out.
const FakeBase = 0x7f00_0000_0000

// fakeAlign is the granularity of FakeDevice's allocations.
const fakeAlign = 512

// NewFakeDevice returns a fake device with capacity bytes of memory.
func NewFakeDevice(capacity uint64) *FakeDevice {
	capacity = capacity / fakeAlign * fakeAlign
	d := &FakeDevice{
		capacity: capacity,
		live:     make(map[uint64]uint64),
		events:   make(map[uintptr]*fakeEvent),
	}
	if capacity > 0 {
		d.holes = []span{{FakeBase, FakeBase + capacity}}
	}
	return d
}

// Malloc hands out the lowest free range of size bytes (rounded up to
// 512). It fails with an error wrapping ErrOutOfMemory when no free range
// is large enough, and with the injected error when SetMallocError's
// function returns one.
func (d *FakeDevice) Malloc(size uint64) (uint64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mallocCalls++
	if d.mallocErr != nil {
		if err := d.mallocErr(size); err != nil {
			return 0, err
		}
	}
	if size == 0 || size > d.capacity {
		if size == 0 {
			return 0, fmt.Errorf("fake cuMemAlloc(0): CUDA_ERROR_INVALID_VALUE")
		}
		return 0, fmt.Errorf("fake cuMemAlloc(%d): %w", size, ErrOutOfMemory)
	}
	n := (size + fakeAlign - 1) / fakeAlign * fakeAlign
	for i, h := range d.holes {
		if h.end-h.start < n {
			continue
		}
		ptr := h.start
		if h.end-h.start == n {
			d.holes = slices.Delete(d.holes, i, i+1)
		} else {
			d.holes[i].start += n
		}
		d.live[ptr] = n
		d.used += n
		return ptr, nil
	}
	return 0, fmt.Errorf("fake cuMemAlloc(%d): %w", size, ErrOutOfMemory)
}

// Free returns an allocation; an address not handed out by Malloc is an
// error.
func (d *FakeDevice) Free(ptr uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.freeCalls++
	n, ok := d.live[ptr]
	if !ok {
		return fmt.Errorf("fake cuMemFree(%#x): CUDA_ERROR_INVALID_VALUE", ptr)
	}
	delete(d.live, ptr)
	d.used -= n
	s := span{ptr, ptr + n}
	i, _ := slices.BinarySearchFunc(d.holes, ptr, func(h span, p uint64) int {
		switch {
		case h.start < p:
			return -1
		case h.start > p:
			return 1
		}
		return 0
	})
	d.holes = slices.Insert(d.holes, i, s)
	if i+1 < len(d.holes) && d.holes[i].end == d.holes[i+1].start {
		d.holes[i].end = d.holes[i+1].end
		d.holes = slices.Delete(d.holes, i+1, i+2)
	}
	if i > 0 && d.holes[i-1].end == d.holes[i].start {
		d.holes[i-1].end = d.holes[i].end
		d.holes = slices.Delete(d.holes, i, i+1)
	}
	return nil
}

// MemInfo reports the bytes not handed out and the capacity.
func (d *FakeDevice) MemInfo() (free, total uint64, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.capacity - d.used, d.capacity, nil
}

// RecordEvent makes a pending event on stream, or fails with the error set
// by SetRecordEventError.
func (d *FakeDevice) RecordEvent(stream uintptr) (uintptr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.eventErr != nil {
		return 0, d.eventErr
	}
	d.nextEvent++
	d.recorded++
	d.events[d.nextEvent] = &fakeEvent{stream: stream}
	return d.nextEvent, nil
}

// EventDone reports whether the event has been completed.
func (d *FakeDevice) EventDone(event uintptr) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.events[event]
	if !ok {
		return false, fmt.Errorf("fake cuEventQuery(%#x): CUDA_ERROR_INVALID_HANDLE", event)
	}
	return e.done, nil
}

// DestroyEvent forgets the event.
func (d *FakeDevice) DestroyEvent(event uintptr) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.events[event]; !ok {
		return fmt.Errorf("fake cuEventDestroy(%#x): CUDA_ERROR_INVALID_HANDLE", event)
	}
	delete(d.events, event)
	return nil
}

// SynchronizeDevice completes every event.
func (d *FakeDevice) SynchronizeDevice() error {
	d.mu.Lock()
	d.syncCalls++
	d.mu.Unlock()
	d.CompleteEvents()
	return nil
}

// CompleteEvents marks every recorded event complete.
func (d *FakeDevice) CompleteEvents() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, e := range d.events {
		e.done = true
	}
}

// CompleteEvent marks one event complete.
func (d *FakeDevice) CompleteEvent(event uintptr) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if e, ok := d.events[event]; ok {
		e.done = true
	}
}

// CompleteStream marks every event recorded on stream complete.
func (d *FakeDevice) CompleteStream(stream uintptr) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, e := range d.events {
		if e.stream == stream {
			e.done = true
		}
	}
}

// SetMallocError installs fn, called with the size at the start of each
// Malloc; a non-nil result is returned as Malloc's error. nil removes it.
func (d *FakeDevice) SetMallocError(fn func(size uint64) error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mallocErr = fn
}

// SetRecordEventError makes RecordEvent fail with err (nil: succeed).
func (d *FakeDevice) SetRecordEventError(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.eventErr = err
}

// FakeCounters are FakeDevice's call counts and usage.
type FakeCounters struct {
	MallocCalls, FreeCalls, SyncCalls int
	Used                              uint64 // bytes handed out
	Live                              int    // live allocations
	EventsRecorded                    int
	EventsLive                        int // recorded and not destroyed
}

// Counters returns the device's counts.
func (d *FakeDevice) Counters() FakeCounters {
	d.mu.Lock()
	defer d.mu.Unlock()
	return FakeCounters{
		MallocCalls: d.mallocCalls, FreeCalls: d.freeCalls, SyncCalls: d.syncCalls,
		Used: d.used, Live: len(d.live),
		EventsRecorded: d.recorded, EventsLive: len(d.events),
	}
}

// Events returns the ids of the live events, oldest first.
func (d *FakeDevice) Events() []uintptr {
	d.mu.Lock()
	defer d.mu.Unlock()
	ids := make([]uintptr, 0, len(d.events))
	for id := range d.events {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
