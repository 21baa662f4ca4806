package cuda

import (
	"errors"
	"fmt"
	"testing"

	"github.com/emberml/ember/internal/cuda/driver"
)

// fakeEvents is the driver's event API over a table of live events.
type fakeEvents struct {
	next      driver.Event
	live      map[driver.Event]bool
	recordErr error
}

func (f *fakeEvents) EventCreate(uint32) (driver.Event, error) {
	f.next++
	f.live[f.next] = true
	return f.next, nil
}

func (f *fakeEvents) EventRecord(driver.Event, driver.Stream) error { return f.recordErr }

func (f *fakeEvents) EventDestroy(ev driver.Event) error {
	if !f.live[ev] {
		return fmt.Errorf("cuEventDestroy(%d): CUDA_ERROR_INVALID_HANDLE", ev)
	}
	delete(f.live, ev)
	return nil
}

// TestRecordNewEventFailure: an event created but not recorded (the stream
// is invalid, or the context faulted) is destroyed, not leaked; the error
// is the record's.
func TestRecordNewEventFailure(t *testing.T) {
	recErr := errors.New("cuEventRecord: CUDA_ERROR_INVALID_HANDLE")
	f := &fakeEvents{live: map[driver.Event]bool{}}
	ev, err := recordNewEvent(f, driver.EventDefault, 7)
	if err != nil || !f.live[driver.Event(ev)] {
		t.Fatalf("recorded event %d, %v; live %v", ev, err, f.live)
	}
	f.recordErr = recErr
	for range 3 {
		if ev, err := recordNewEvent(f, driver.EventDisableTiming, 7); ev != 0 || !errors.Is(err, recErr) {
			t.Fatalf("failed record gave %d, %v", ev, err)
		}
	}
	if len(f.live) != 1 {
		t.Fatalf("%d events live after 3 failed records, want the 1 recorded", len(f.live))
	}
}
