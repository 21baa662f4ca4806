package ember

import (
	"time"

	"github.com/emberml/ember/backend"
)

// Event marks a point in a device's queue of work, as torch.cuda.Event:
// record two around some GPU work, synchronize the second, and read the
// time between them. On the CPU, whose work is synchronous, an event is the
// wall clock at Record.
type Event struct {
	dev Device
	ev  backend.Event
	at  time.Time
}

// NewEvent returns an unrecorded event for dev.
func NewEvent(dev Device) *Event { return &Event{dev: dev} }

// Record places the event after the work queued so far on its device.
func (e *Event) Record() error {
	if e == nil {
		return &ValueError{Op: "event.record", Msg: "nil event"}
	}
	if err := CheckDevice(e.dev); err != nil {
		return err
	}
	b, _ := backend.Get(e.dev.Type)
	if r, ok := b.(backend.EventRecorder); ok {
		if e.ev != nil {
			e.ev.Release()
		}
		ev, err := r.RecordEvent(e.dev)
		e.ev = ev
		return err
	}
	e.at = time.Now()
	return nil
}

// recorded reports whether Record has succeeded on e.
func (e *Event) recorded() bool { return e.ev != nil || !e.at.IsZero() }

// Synchronize waits for the work queued before the event. As in PyTorch, an
// event never recorded has nothing to wait for: Synchronize returns nil.
func (e *Event) Synchronize() error {
	if e == nil {
		return &ValueError{Op: "event.synchronize", Msg: "nil event"}
	}
	if e.ev != nil {
		return e.ev.Synchronize()
	}
	return nil
}

// Query reports whether the work queued before the event is done, without
// waiting (torch's Event.query). An event never recorded, or one on the CPU,
// is done.
func (e *Event) Query() (bool, error) {
	if e == nil {
		return false, &ValueError{Op: "event.query", Msg: "nil event"}
	}
	if e.ev != nil {
		return e.ev.Done()
	}
	return true, nil
}

// ElapsedTime returns the milliseconds between start and e; both must be
// recorded on the same device and e synchronized (torch's elapsed_time).
func (e *Event) ElapsedTime(start *Event) (float64, error) {
	if e == nil || start == nil {
		return 0, &ValueError{Op: "elapsed_time", Msg: "nil event"}
	}
	if start.dev != e.dev {
		return 0, &DeviceMismatchError{Op: "elapsed_time", Devices: []Device{start.dev, e.dev}}
	}
	if !e.recorded() || !start.recorded() {
		return 0, &ValueError{Op: "elapsed_time", Msg: "Both events must be recorded before calculating elapsed time."}
	}
	if e.ev != nil && start.ev != nil {
		return e.ev.ElapsedMs(start.ev)
	}
	return float64(e.at.Sub(start.at).Nanoseconds()) / 1e6, nil
}

// Release frees the device's event object now; one dropped without Release
// is freed once the garbage collector finds it. A nil event does nothing.
func (e *Event) Release() {
	if e != nil && e.ev != nil {
		e.ev.Release()
		e.ev = nil
	}
}
