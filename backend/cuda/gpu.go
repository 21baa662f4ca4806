package cuda

import (
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/kernels"
)

// GPU is what the backend needs from one device. The real implementation
// talks to libcuda, NVRTC and cuBLAS; tests plug in an emulated device that
// runs the same kernels on the CPU, so everything above this line is
// exercised without a GPU.
type GPU interface {
	// Name and Props describe the device.
	Name() string
	Props() kernels.DeviceProps
	// Memory.
	Malloc(size uint64) (uint64, error)
	Free(ptr uint64) error
	MemInfo() (free, total uint64, err error)
	// Copies between host memory and the device. DtoH waits for queued work.
	HtoD(dst uint64, src unsafe.Pointer, n uint64) error
	DtoH(dst unsafe.Pointer, src uint64, n uint64) error
	// Run queues one kernel launch on stream (0: the legacy default stream).
	Run(l kernels.Launch, stream uintptr) error
	// Gemm queues on stream a row-major strided-batched product
	// C = op(A)·op(B) with leading dimensions and batch strides in elements
	// (float32 or float64).
	Gemm(stream uintptr, dt backend.DType, transA, transB bool, m, n, k int, a uint64, lda int, strideA int64, b uint64, ldb int, strideB int64, c uint64, ldc int, strideC int64, batch int) error
	// Synchronize waits for everything queued.
	Synchronize() error
	// Streams: created blocking (they order with the legacy default stream,
	// so the synchronous copies to the host still see their work).
	StreamCreate() (uintptr, error)
	StreamDestroy(s uintptr) error
	StreamSynchronize(s uintptr) error
	// StreamWaitEvent makes work queued later on s wait for ev (an event
	// of this device or another); StreamQuery reports whether s is idle.
	StreamWaitEvent(s, ev uintptr) error
	StreamQuery(s uintptr) (bool, error)
	// Page-locked host memory.
	AllocHost(n uint64) (unsafe.Pointer, error)
	FreeHost(p unsafe.Pointer) error
	// Events for the allocator's cross-stream reuse and for timing. A
	// RecordEvent or RecordTimingEvent that fails leaves no event behind.
	RecordEvent(stream uintptr) (uintptr, error)
	EventDone(ev uintptr) (bool, error)
	DestroyEvent(ev uintptr) error
	// Timing events: recorded with timing enabled, waited on, compared.
	RecordTimingEvent(stream uintptr) (uintptr, error)
	EventSynchronize(ev uintptr) error
	EventElapsedMs(start, end uintptr) (float64, error)
}

// Opener opens device i and reports how many devices exist.
type Opener interface {
	Count() (int, error)
	Open(i int) (GPU, error)
}
