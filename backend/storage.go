package backend

import (
	"errors"
	"unsafe"
)

// ErrNoData is returned (or panicked) when reading a meta tensor's data.
// The root package's ember.ErrNoData is this value.
var ErrNoData = errors.New("meta tensors have no data")

// The optional storage interfaces below let code outside a backend (dist's
// collectives) reach a storage's memory in place, without knowing the
// backend's concrete types. Reach a tensor's storage with ember.UnsafeView.

// HostStorage is implemented by storages in host memory (the CPU
// backend's). The memory must not be used after Release: it may then serve
// another storage.
type HostStorage interface {
	Storage
	// Data returns the elements as a Go slice of Len elements: []float32,
	// []float64, []int64, []int32 or []bool, by DType.
	Data() any
	// Pointer is the address of element 0 (nil when Len is 0); the
	// storage's memory is Len()*DType().Size() bytes from there.
	Pointer() unsafe.Pointer
	// Pinned reports whether the memory is page-locked (see HostPinner).
	Pinned() bool
}

// HostBytes returns the bytes of elements [off, off+n) of s, aliasing its
// memory (nil when n is 0).
func HostBytes(s HostStorage, off, n int) []byte {
	if n == 0 {
		return nil
	}
	if off < 0 || n < 0 || off+n > s.Len() {
		panic("backend: HostBytes out of range")
	}
	sz := s.DType().Size()
	return unsafe.Slice((*byte)(unsafe.Add(s.Pointer(), off*sz)), n*sz)
}

// DeviceStorage is implemented by storages in device memory (the CUDA
// backend's), for libraries that take device addresses (NCCL). Work on the
// storage is queued on its device's streams: see DeviceQueue.
type DeviceStorage interface {
	Storage
	// Ptr is the device address of element 0.
	Ptr() uint64
}

// DeviceQueue is implemented by asynchronous backends (CUDA) for libraries
// that queue device work of their own (NCCL): queued on the current stream,
// that work is ordered after the kernels that produced its inputs and
// before those that read its results.
type DeviceQueue interface {
	// CurrentStream is the stream dev's work now goes to (0: the default).
	CurrentStream(dev Device) (uintptr, error)
	// Do runs f where dev's context is current (on the device's context
	// thread, where libraries find their device). f must not call back into
	// the backend for the same device.
	Do(dev Device, f func() error) error
}

// PinnedWrapper is implemented by the CPU backend: it wraps n elements of
// page-locked memory from a HostPinner as host storage, which calls free
// on Release (or when it is collected).
type PinnedWrapper interface {
	WrapPinned(dt DType, n int, mem unsafe.Pointer, free func()) HostStorage
}
