package ember

import (
	"errors"
	"strings"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda"
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
