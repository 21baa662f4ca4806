package ember

import (
	"errors"
	"strings"
	"testing"
)

func TestStreamOnCPU(t *testing.T) {
	s, err := NewStream(CPU)
	if err != nil {
		t.Fatal(err)
	}
	var y *Tensor
	WithStream(s, func() { y = Ones(Shape{3}).MulScalar(2).Sum() })
	if err := s.Synchronize(); err != nil || y.Item() != 6 {
		t.Fatalf("got %v, %v", y.Item(), err)
	}
	if err := s.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := NewStream(CUDA(7)); err == nil && DeviceCount() < 8 {
		t.Fatal("NewStream on an absent device must fail")
	}
}

func TestPinMemoryNeedsCUDA(t *testing.T) {
	if CUDAAvailable() {
		t.Skip("a GPU is present")
	}
	if _, err := Ones(Shape{2}).PinMemory(); err == nil {
		t.Fatal("pinning without a CUDA device must fail, as in PyTorch")
	}
}

// TestEventUnrecorded follows torch.cuda.Event: an event never recorded is
// done (query() is True), synchronize() returns at once, and elapsed_time
// needs both events recorded.
func TestEventUnrecorded(t *testing.T) {
	for _, dev := range []Device{CPU} {
		e, start := NewEvent(dev), NewEvent(dev)
		if done, err := e.Query(); !done || err != nil {
			t.Errorf("%v: Query of an unrecorded event = %v, %v; want true, nil", dev, done, err)
		}
		if err := e.Synchronize(); err != nil {
			t.Errorf("%v: Synchronize of an unrecorded event: %v", dev, err)
		}
		var ve *ValueError
		if _, err := e.ElapsedTime(start); !errors.As(err, &ve) || !strings.Contains(err.Error(), "Both events must be recorded") {
			t.Errorf("%v: ElapsedTime of unrecorded events: %v", dev, err)
		}
		if err := start.Record(); err != nil {
			t.Fatal(err)
		}
		if _, err := e.ElapsedTime(start); !errors.As(err, &ve) {
			t.Errorf("%v: ElapsedTime to an unrecorded end: %v", dev, err)
		}
		if err := e.Record(); err != nil {
			t.Fatal(err)
		}
		if done, err := e.Query(); !done || err != nil {
			t.Errorf("%v: Query of a recorded event = %v, %v", dev, done, err)
		}
		if ms, err := e.ElapsedTime(start); err != nil || ms < 0 {
			t.Errorf("%v: ElapsedTime = %v, %v", dev, ms, err)
		}
	}
}
