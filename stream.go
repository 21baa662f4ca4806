package ember

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/emberml/ember/backend"
)

// Stream is a queue of work on a device, as torch.cuda.Stream. Work on one
// stream runs in order; work on different streams may overlap. CUDA devices
// have real streams; on the CPU, whose work is synchronous, a Stream is a
// formality so the same code runs everywhere.
type Stream struct {
	dev Device
	h   uintptr // 0: the default stream
	sb  backend.StreamBackend
	// destroyed is shared with the GC cleanup of a stream made by
	// NewStream, so it is allocated apart from the Stream.
	destroyed *atomic.Bool
}

func streamBackend(dev Device) backend.StreamBackend {
	b, _ := backend.Get(dev.Type)
	sb, _ := b.(backend.StreamBackend)
	return sb
}

// NewStream creates a stream on dev. A stream dropped without Release is
// released once the garbage collector finds it (PyTorch draws its streams
// from a fixed pool per device, so dropping one there costs nothing either).
func NewStream(dev Device) (*Stream, error) {
	if err := CheckDevice(dev); err != nil {
		return nil, err
	}
	s := &Stream{dev: dev, sb: streamBackend(dev)}
	if s.sb != nil {
		h, err := s.sb.NewStream(dev)
		if err != nil {
			return nil, err
		}
		s.h = h
		s.destroyed = new(atomic.Bool)
		// destroy waits for the stream's work: on a goroutine of its own, not
		// the one running a batch of cleanups (tensors' among them).
		runtime.AddCleanup(s, func(d streamDestroyer) { go d.destroy() }, s.destroyer())
	}
	return s, nil
}

// streamDestroyer destroys a stream made by NewStream once.
type streamDestroyer struct {
	sb        backend.StreamBackend
	dev       Device
	h         uintptr
	destroyed *atomic.Bool
}

func (s *Stream) destroyer() streamDestroyer {
	return streamDestroyer{s.sb, s.dev, s.h, s.destroyed}
}

// destroy waits for the stream's work and destroys it (the backend's
// DestroyStream does both).
func (d streamDestroyer) destroy() error {
	if d.destroyed == nil || !d.destroyed.CompareAndSwap(false, true) {
		return nil
	}
	return d.sb.DestroyStream(d.dev, d.h)
}

// DefaultStream is dev's default stream.
func DefaultStream(dev Device) *Stream { return &Stream{dev: dev, sb: streamBackend(dev)} }

// Device returns the stream's device.
func (s *Stream) Device() Device {
	if s == nil {
		panic(&ValueError{Op: "stream.device", Msg: "nil stream"})
	}
	return s.dev
}

// Synchronize waits for the work queued on s.
func (s *Stream) Synchronize() error {
	if s == nil {
		return &ValueError{Op: "stream.synchronize", Msg: "nil stream"}
	}
	if s.sb == nil {
		return nil
	}
	if s.h == 0 {
		return Synchronize(s.dev)
	}
	defer runtime.KeepAlive(s) // not destroyed by its cleanup meanwhile
	return s.sb.SynchronizeStream(s.dev, s.h)
}

// WaitEvent makes the work queued on s from now on wait until the work
// queued before e is done, without blocking the host (torch's
// Stream.wait_event and Event.wait). e may come from another CUDA device,
// as in PyTorch. An event never recorded has nothing to wait for; where s
// or e cannot be ordered on a device (a CPU stream, whose work is
// synchronous, or a CPU event), the host waits for e instead.
func (s *Stream) WaitEvent(e *Event) error {
	if s == nil || e == nil {
		return &ValueError{Op: "stream.wait_event", Msg: "nil stream or event"}
	}
	if e.ev == nil {
		return nil // unrecorded, or a CPU event: its work is done
	}
	se, ok := s.sb.(backend.StreamEvents)
	if !ok || s.dev.Type != e.dev.Type {
		return e.Synchronize()
	}
	defer runtime.KeepAlive(s)
	return se.WaitEvent(s.dev, s.h, e.ev)
}

// WaitStream makes the work queued on s from now on wait for the work
// queued on other so far (torch's Stream.wait_stream): the way to hand
// tensors made on one stream to work on another.
func (s *Stream) WaitStream(other *Stream) error {
	if s == nil || other == nil {
		return &ValueError{Op: "stream.wait_stream", Msg: "nil stream"}
	}
	oe, ok := other.sb.(backend.StreamEvents)
	if !ok {
		return nil // a CPU stream: its work is done
	}
	defer runtime.KeepAlive(other)
	ev, err := oe.RecordEventOn(other.dev, other.h)
	if err != nil {
		return err
	}
	defer ev.Release()
	return s.WaitEvent(&Event{dev: other.dev, ev: ev})
}

// Query reports, without waiting, whether all the work queued on s is done
// (torch's Stream.query); always true on the CPU.
func (s *Stream) Query() (bool, error) {
	if s == nil {
		return false, &ValueError{Op: "stream.query", Msg: "nil stream"}
	}
	se, ok := s.sb.(backend.StreamEvents)
	if !ok {
		return true, nil
	}
	defer runtime.KeepAlive(s)
	return se.QueryStream(s.dev, s.h)
}

// Release destroys a stream made by NewStream (after waiting for it); a
// nil stream does nothing. The memory the allocator cached for the stream,
// and that of its tensors still alive, goes to the default stream's cache
// (when they are released); PyTorch, which never destroys the streams its
// allocator knows, has no such step.
func (s *Stream) Release() error {
	if s == nil || s.sb == nil || s.h == 0 {
		return nil
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	err := s.destroyer().destroy()
	s.h = 0
	return err
}

// WithStream runs f with s as its device's current stream: ops on that
// device inside f, and the memory they allocate, go to s (torch.cuda.stream).
// Like NoGrad, the choice belongs to the calling goroutine: work other
// goroutines queue meanwhile goes to their own current stream. A nil s
// leaves the current streams as they are (torch.cuda.stream(None)).
func WithStream(s *Stream, f func()) {
	mustFunc("stream", f)
	if s == nil || s.sb == nil {
		f()
		return
	}
	cur, _ := streams.get()
	next := make(map[Device]uintptr, len(cur)+1)
	for d, h := range cur {
		next[d] = h
	}
	next[s.dev] = s.h
	streams.with("stream", next, f)
	runtime.KeepAlive(s) // f's work goes to s: its cleanup must not destroy it
}

// streams holds each goroutine's WithStream choices by device.
var streams local[map[Device]uintptr]

func init() {
	backend.CallerStream = func(dev Device) (uintptr, bool) {
		cur, ok := streams.get()
		if !ok {
			return 0, false
		}
		h, ok := cur[dev]
		return h, ok
	}
}

// RecordStream marks t's memory as in use on s, so that once t is released
// the memory is not reused before s's work queued so far is done (needed
// when a tensor made on one stream is used on another; torch's record_stream).
func (t *Tensor) RecordStream(s *Stream) {
	t.live("record_stream")
	if s == nil {
		panic(&ValueError{Op: "record_stream", Msg: "the stream is nil"})
	}
	if s.sb != nil && s.dev == t.dev {
		s.sb.RecordStream(t.st.s, s.h)
		runtime.KeepAlive(s) // not released by its cleanup before the use is recorded
	}
}

// PinMemory returns a copy of a CPU tensor in page-locked memory, which
// CUDA copies reach by DMA (torch's pin_memory; a DataLoader's pin hook can
// call it). It needs a usable CUDA device, as in PyTorch; a pinned tensor
// returns itself.
func (t *Tensor) PinMemory() (*Tensor, error) {
	t.live("pin_memory")
	if t.dev != CPU {
		return nil, &DeviceError{Device: t.dev, Reason: errors.New("only CPU tensors can be pinned")}
	}
	if t.IsPinned() {
		return t, nil
	}
	if err := CheckDevice(CUDA(0)); err != nil {
		return nil, fmt.Errorf("pin_memory needs a CUDA device: %w", err)
	}
	b, _ := backend.Get(backend.CUDAType)
	hp, ok := b.(backend.HostPinner)
	if !ok {
		return nil, errors.New("pin_memory: the CUDA backend cannot pin memory")
	}
	pw, ok := cpuBackend().(backend.PinnedWrapper)
	if !ok {
		return nil, errors.New("pin_memory: the CPU backend cannot wrap pinned memory")
	}
	n := t.NumElements()
	mem, free, err := hp.AllocPinned(n * t.dtype.Size())
	if err != nil {
		return nil, err
	}
	st := pw.WrapPinned(t.dtype, n, mem, free)
	out := &Tensor{st: newStorage(st, cpuBackend(), t.shape), shape: t.shape.clone(), strides: backend.ContiguousStrides(t.shape), dtype: t.dtype, dev: CPU}
	out.be().Copy(out.view(), t.view())
	return out, nil
}

// IsPinned reports whether t is in page-locked host memory.
func (t *Tensor) IsPinned() bool {
	t.nonNil("is_pinned")
	s, ok := t.st.s.(backend.HostStorage)
	return ok && s.Pinned()
}

func cpuBackend() backend.Backend {
	b, _ := backend.Get(backend.CPUType)
	return b
}
