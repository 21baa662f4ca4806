package alloc

import "fmt"

// OOMError reports an allocation the device could not satisfy even after
// the cache was emptied and the allocation retried.
type OOMError struct {
	Requested uint64 // bytes asked of Malloc
	AllocSize uint64 // bytes of the segment the allocator tried to reserve
	Device    int    // device index
	Allocated uint64 // bytes allocated by this allocator when it failed
	Reserved  uint64 // bytes reserved by this allocator, cache included
	Free      uint64 // the device's free memory, from MemInfo
	Total     uint64 // the device's total memory, from MemInfo
	// Detail, when not empty, is appended to the message after a space;
	// the backend lists the largest live tensors there.
	Detail string
	// Err is the device's error from the last failed allocation.
	Err error
	// MemInfoErr is set when the device could not report Free and Total.
	MemInfoErr error
}

// Error reads like PyTorch's message. As in PyTorch, the size it tried to
// allocate is that of the segment (AllocSize), which for a request served
// by a new segment is at least the rounded request.
func (e *OOMError) Error() string {
	s := fmt.Sprintf("CUDA out of memory. Tried to allocate %s (GPU %d; %s total capacity; %s already allocated; %s free; %s reserved in total by ember)",
		FormatSize(e.AllocSize), e.Device, FormatSize(e.Total), FormatSize(e.Allocated),
		FormatSize(e.Free), FormatSize(e.Reserved))
	if e.Detail != "" {
		s += " " + e.Detail
	}
	return s
}

// Unwrap returns the device's error.
func (e *OOMError) Unwrap() error { return e.Err }

// OutOfMemory reports true, so IsOOM recognises the error.
func (e *OOMError) OutOfMemory() bool { return true }

// FormatSize writes a byte count as PyTorch's format_size: bytes up to
// 1 KiB, then KiB, MiB and GiB with two decimals.
func FormatSize(n uint64) string {
	switch {
	case n <= 1024:
		return fmt.Sprintf("%d bytes", n)
	case n <= 1<<20:
		return fmt.Sprintf("%.2f KiB", float64(n)/(1<<10))
	case n <= 1<<30:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
}
