package cuda

import (
	"runtime"

	"github.com/emberml/ember/backend"
)

// CurrentStream is the stream dev's work goes to now (0: the legacy
// default stream), for libraries that queue work of their own on it (NCCL).
func (b *Backend) CurrentStream(dev backend.Device) (uintptr, error) {
	d, err := b.device(dev.Index)
	if err != nil {
		return 0, err
	}
	return d.current(), nil
}

// Do runs f where dev's context is current (the real device's context
// thread), for calls into other CUDA libraries (NCCL) that use the current
// device. f must not call back into the backend for the same device.
func (b *Backend) Do(dev backend.Device, f func() error) error {
	d, err := b.device(dev.Index)
	if err != nil {
		return err
	}
	if r, ok := d.gpu.(interface{ Do(func() error) error }); ok {
		return r.Do(f)
	}
	// Still one thread for all of f: libraries keep per-thread state
	// (NCCL's group calls).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return f()
}

// Do runs f on the context's thread.
func (g *realGPU) Do(f func() error) error { return g.ctx.Do(f) }
