package ember

import (
	"errors"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda"
)

// brokenOpener counts one device that cannot be opened, as a GPU whose
// context cannot be created (exclusive mode, a driver fault).
type brokenOpener struct{}

func (brokenOpener) Count() (int, error)        { return 1, nil }
func (brokenOpener) Open(int) (cuda.GPU, error) { return nil, errors.New("CUDA_ERROR_DEVICE_UNAVAILABLE") }

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
