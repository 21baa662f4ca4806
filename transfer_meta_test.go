package ember

import (
	"errors"
	"testing"
)

// TestToFromMeta: as PyTorch's "Cannot copy out of meta tensor; no data!",
// moving a meta tensor to a device with memory fails with ErrNoData instead
// of making a tensor of whatever the new memory held; to meta keeps shape
// and dtype.
func TestToFromMeta(t *testing.T) {
	m := Ones(Shape{2, 3}, On(Meta), Dtype(Int32))
	if err := Try(func() { m.To(CPU) }); !errors.Is(err, ErrNoData) {
		t.Fatalf("meta To cpu: %v, want ErrNoData", err)
	}
	if err := Try(func() { m.CPU() }); !errors.Is(err, ErrNoData) {
		t.Fatalf("meta CPU(): %v, want ErrNoData", err)
	}
	back := Ones(Shape{2, 3}).To(Meta)
	if back.Device() != Meta || !back.Shape().Equal(Shape{2, 3}) || back.DType() != Float32 {
		t.Fatalf("cpu To meta: %v %v %v", back.Device(), back.Shape(), back.DType())
	}
	t.Run("cuda", func(t *testing.T) {
		onEmulatedCUDA(t)
		if err := Try(func() { m.To(CUDA(0)) }); !errors.Is(err, ErrNoData) {
			t.Fatalf("meta To cuda:0: %v, want ErrNoData", err)
		}
	})
}
