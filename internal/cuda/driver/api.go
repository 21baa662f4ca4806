package driver

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Device is a CUdevice, the handle cuDeviceGet returns for an ordinal.
type Device int32

// DevicePtr is a CUdeviceptr, an address in a device's memory.
type DevicePtr uint64

// CtxHandle is a CUcontext.
type CtxHandle uintptr

// Stream is a CUstream; 0 is the legacy default stream.
type Stream uintptr

// Event is a CUevent.
type Event uintptr

// Module is a CUmodule.
type Module uintptr

// Function is a CUfunction, a kernel of a loaded module.
type Function uintptr

// UUID is a device's CUuuid.
type UUID [16]byte

// String formats u like nvidia-smi: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
func (u UUID) String() string {
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// DeviceAttribute is a CUdevice_attribute.
type DeviceAttribute int32

// Device attributes (cuda.h, CUdevice_attribute_enum).
const (
	AttrMaxThreadsPerBlock           DeviceAttribute = 1
	AttrMaxBlockDimX                 DeviceAttribute = 2
	AttrMaxBlockDimY                 DeviceAttribute = 3
	AttrMaxBlockDimZ                 DeviceAttribute = 4
	AttrMaxGridDimX                  DeviceAttribute = 5
	AttrMaxGridDimY                  DeviceAttribute = 6
	AttrMaxGridDimZ                  DeviceAttribute = 7
	AttrMaxSharedMemoryPerBlock      DeviceAttribute = 8
	AttrTotalConstantMemory          DeviceAttribute = 9
	AttrWarpSize                     DeviceAttribute = 10
	AttrMaxRegistersPerBlock         DeviceAttribute = 12
	AttrClockRate                    DeviceAttribute = 13 // kHz
	AttrMultiprocessorCount          DeviceAttribute = 16
	AttrIntegrated                   DeviceAttribute = 18
	AttrComputeMode                  DeviceAttribute = 20
	AttrConcurrentKernels            DeviceAttribute = 31
	AttrECCEnabled                   DeviceAttribute = 32
	AttrPCIBusID                     DeviceAttribute = 33
	AttrPCIDeviceID                  DeviceAttribute = 34
	AttrMemoryClockRate              DeviceAttribute = 36 // kHz
	AttrGlobalMemoryBusWidth         DeviceAttribute = 37 // bits
	AttrL2CacheSize                  DeviceAttribute = 38 // bytes
	AttrMaxThreadsPerMultiprocessor  DeviceAttribute = 39
	AttrAsyncEngineCount             DeviceAttribute = 40
	AttrUnifiedAddressing            DeviceAttribute = 41
	AttrPCIDomainID                  DeviceAttribute = 50
	AttrComputeCapabilityMajor       DeviceAttribute = 75
	AttrComputeCapabilityMinor       DeviceAttribute = 76
	AttrMaxSharedMemoryPerSM         DeviceAttribute = 81
	AttrMaxRegistersPerSM            DeviceAttribute = 82
	AttrManagedMemory                DeviceAttribute = 83
	AttrMaxSharedMemoryPerBlockOptin DeviceAttribute = 97
)

// FuncAttribute is a CUfunction_attribute.
type FuncAttribute int32

// Function attributes (cuda.h, CUfunction_attribute_enum).
const (
	FuncAttrMaxThreadsPerBlock         FuncAttribute = 0
	FuncAttrSharedSizeBytes            FuncAttribute = 1
	FuncAttrConstSizeBytes             FuncAttribute = 2
	FuncAttrLocalSizeBytes             FuncAttribute = 3
	FuncAttrNumRegs                    FuncAttribute = 4
	FuncAttrPTXVersion                 FuncAttribute = 5
	FuncAttrBinaryVersion              FuncAttribute = 6
	FuncAttrCacheModeCA                FuncAttribute = 7
	FuncAttrMaxDynamicSharedSizeBytes  FuncAttribute = 8
	FuncAttrPreferredSharedMemCarveout FuncAttribute = 9
)

// Stream and event flags (cuda.h).
const (
	StreamDefault     = 0x0 // CU_STREAM_DEFAULT
	StreamNonBlocking = 0x1 // CU_STREAM_NON_BLOCKING

	EventDefault       = 0x0 // CU_EVENT_DEFAULT
	EventBlockingSync  = 0x1 // CU_EVENT_BLOCKING_SYNC
	EventDisableTiming = 0x2 // CU_EVENT_DISABLE_TIMING
)

// JIT options of cuModuleLoadDataEx (cuda.h, CUjit_option) used by LoadModule.
const (
	jitInfoLogBuffer          = 3
	jitInfoLogBufferSizeBytes = 4
	jitErrorLogBuffer         = 5
	jitErrorLogBufferSize     = 6
)

// --- devices ---

// DeviceGetCount returns the number of CUDA devices (cuDeviceGetCount).
func (d *Driver) DeviceGetCount() (int, error) {
	var n int32
	if err := d.call(pDeviceGetCount, uintptr(unsafe.Pointer(&n))); err != nil {
		return 0, err
	}
	return int(n), nil
}

// DeviceGet returns the handle of the device with the given ordinal.
func (d *Driver) DeviceGet(ordinal int) (Device, error) {
	var dev int32
	if err := d.call(pDeviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(int32(ordinal))); err != nil {
		return 0, err
	}
	return Device(dev), nil
}

// DeviceGetName returns the device's marketing name, e.g. "NVIDIA H100 80GB HBM3".
func (d *Driver) DeviceGetName(dev Device) (string, error) {
	var buf [256]byte
	if err := d.call(pDeviceGetName, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(dev)); err != nil {
		return "", err
	}
	for i, c := range buf {
		if c == 0 {
			return string(buf[:i]), nil
		}
	}
	return string(buf[:]), nil
}

// DeviceTotalMem returns the device's memory in bytes (cuDeviceTotalMem_v2).
func (d *Driver) DeviceTotalMem(dev Device) (uint64, error) {
	var n uint64
	if err := d.call(pDeviceTotalMem, uintptr(unsafe.Pointer(&n)), uintptr(dev)); err != nil {
		return 0, err
	}
	return n, nil
}

// DeviceGetAttribute returns one attribute of a device.
func (d *Driver) DeviceGetAttribute(attr DeviceAttribute, dev Device) (int, error) {
	var v int32
	if err := d.call(pDeviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(attr), uintptr(dev)); err != nil {
		return 0, err
	}
	return int(v), nil
}

// DeviceComputeCapability returns the device's compute capability (major, minor).
func (d *Driver) DeviceComputeCapability(dev Device) (major, minor int, err error) {
	if major, err = d.DeviceGetAttribute(AttrComputeCapabilityMajor, dev); err != nil {
		return 0, 0, err
	}
	if minor, err = d.DeviceGetAttribute(AttrComputeCapabilityMinor, dev); err != nil {
		return 0, 0, err
	}
	return major, minor, nil
}

// DeviceGetUUID returns the device's UUID (cuDeviceGetUuid_v2, else cuDeviceGetUuid).
func (d *Driver) DeviceGetUUID(dev Device) (UUID, error) {
	var u UUID
	err := d.call(pDeviceGetUUID, uintptr(unsafe.Pointer(&u[0])), uintptr(dev))
	return u, err
}

// DeviceGetPCIBusID returns the device's PCI address, e.g. "0000:3B:00.0".
func (d *Driver) DeviceGetPCIBusID(dev Device) (string, error) {
	var buf [64]byte
	if err := d.call(pDeviceGetPCIBusID, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(dev)); err != nil {
		return "", err
	}
	for i, c := range buf {
		if c == 0 {
			return string(buf[:i]), nil
		}
	}
	return string(buf[:]), nil
}

// --- contexts ---

// DevicePrimaryCtxRetain retains the device's primary context, creating it
// if need be. Most code wants PrimaryContext instead.
func (d *Driver) DevicePrimaryCtxRetain(dev Device) (CtxHandle, error) {
	var c uintptr
	if err := d.call(pDevicePrimaryCtxRetain, uintptr(unsafe.Pointer(&c)), uintptr(dev)); err != nil {
		return 0, err
	}
	return CtxHandle(c), nil
}

// DevicePrimaryCtxRelease releases one retain of the device's primary context.
func (d *Driver) DevicePrimaryCtxRelease(dev Device) error {
	return d.call(pDevicePrimaryCtxRelease, uintptr(dev))
}

// CtxSetCurrent binds ctx to the calling OS thread. The goroutine must stay
// on that thread (runtime.LockOSThread) for the setting to mean anything.
func (d *Driver) CtxSetCurrent(ctx CtxHandle) error {
	return d.call(pCtxSetCurrent, uintptr(ctx))
}

// CtxGetCurrent returns the context bound to the calling OS thread, or 0.
func (d *Driver) CtxGetCurrent() (CtxHandle, error) {
	var c uintptr
	if err := d.call(pCtxGetCurrent, uintptr(unsafe.Pointer(&c))); err != nil {
		return 0, err
	}
	return CtxHandle(c), nil
}

// CtxSynchronize waits for all work of the current context.
func (d *Driver) CtxSynchronize() error { return d.call(pCtxSynchronize) }

// --- memory ---

// MemAlloc allocates device memory in the current context.
func (d *Driver) MemAlloc(size uint64) (DevicePtr, error) {
	var p uint64
	if err := d.call(pMemAlloc, uintptr(unsafe.Pointer(&p)), uintptr(size)); err != nil {
		return 0, err
	}
	return DevicePtr(p), nil
}

// MemFree frees device memory from MemAlloc.
func (d *Driver) MemFree(p DevicePtr) error { return d.call(pMemFree, uintptr(p)) }

// MemGetInfo returns the free and total memory of the current context's device.
func (d *Driver) MemGetInfo() (free, total uint64, err error) {
	err = d.call(pMemGetInfo, uintptr(unsafe.Pointer(&free)), uintptr(unsafe.Pointer(&total)))
	return free, total, err
}

// MemAllocHost allocates page-locked host memory, which the device can reach
// by DMA and async copies can use without staging. The memory belongs to C:
// free it with MemFreeHost.
func (d *Driver) MemAllocHost(size uint64) (unsafe.Pointer, error) {
	var p uintptr
	if err := d.call(pMemAllocHost, uintptr(unsafe.Pointer(&p)), uintptr(size)); err != nil {
		return nil, err
	}
	return unsafe.Add(unsafe.Pointer(nil), p), nil
}

// MemFreeHost frees memory from MemAllocHost.
func (d *Driver) MemFreeHost(p unsafe.Pointer) error {
	return d.call(pMemFreeHost, uintptr(p))
}

// MemcpyHtoD copies size bytes from host memory to the device. Go memory
// passed as src is kept alive and in place for the call.
func (d *Driver) MemcpyHtoD(dst DevicePtr, src unsafe.Pointer, size uint64) error {
	return d.call(pMemcpyHtoD, uintptr(dst), uintptr(src), uintptr(size))
}

// MemcpyDtoH copies size bytes from the device to host memory.
func (d *Driver) MemcpyDtoH(dst unsafe.Pointer, src DevicePtr, size uint64) error {
	return d.call(pMemcpyDtoH, uintptr(dst), uintptr(src), uintptr(size))
}

// MemcpyDtoD copies size bytes between device buffers.
func (d *Driver) MemcpyDtoD(dst, src DevicePtr, size uint64) error {
	return d.call(pMemcpyDtoD, uintptr(dst), uintptr(src), uintptr(size))
}

// MemcpyHtoDAsync enqueues a host-to-device copy on stream. From pageable
// (Go) memory the driver stages the data before returning; src must be
// page-locked (MemAllocHost) for the copy to overlap with the host.
func (d *Driver) MemcpyHtoDAsync(dst DevicePtr, src unsafe.Pointer, size uint64, stream Stream) error {
	return d.call(pMemcpyHtoDAsync, uintptr(dst), uintptr(src), uintptr(size), uintptr(stream))
}

// MemcpyDtoHAsync enqueues a device-to-host copy on stream. dst must stay
// valid until the stream reaches the copy: pass page-locked memory
// (MemAllocHost), never Go memory, unless the stream is synchronized before
// the Go memory may move or be freed.
func (d *Driver) MemcpyDtoHAsync(dst unsafe.Pointer, src DevicePtr, size uint64, stream Stream) error {
	return d.call(pMemcpyDtoHAsync, uintptr(dst), uintptr(src), uintptr(size), uintptr(stream))
}

// MemcpyDtoDAsync enqueues a device-to-device copy on stream.
func (d *Driver) MemcpyDtoDAsync(dst, src DevicePtr, size uint64, stream Stream) error {
	return d.call(pMemcpyDtoDAsync, uintptr(dst), uintptr(src), uintptr(size), uintptr(stream))
}

// MemsetD8 sets n bytes at dst to v.
func (d *Driver) MemsetD8(dst DevicePtr, v uint8, n uint64) error {
	return d.call(pMemsetD8, uintptr(dst), uintptr(v), uintptr(n))
}

// MemsetD32 sets n 32-bit words at dst (4-byte aligned) to v.
func (d *Driver) MemsetD32(dst DevicePtr, v uint32, n uint64) error {
	return d.call(pMemsetD32, uintptr(dst), uintptr(v), uintptr(n))
}

// MemsetD8Async enqueues MemsetD8 on stream.
func (d *Driver) MemsetD8Async(dst DevicePtr, v uint8, n uint64, stream Stream) error {
	return d.call(pMemsetD8Async, uintptr(dst), uintptr(v), uintptr(n), uintptr(stream))
}

// MemsetD32Async enqueues MemsetD32 on stream.
func (d *Driver) MemsetD32Async(dst DevicePtr, v uint32, n uint64, stream Stream) error {
	return d.call(pMemsetD32Async, uintptr(dst), uintptr(v), uintptr(n), uintptr(stream))
}

// --- streams and events ---

// StreamCreate creates a stream (flags: StreamDefault or StreamNonBlocking).
func (d *Driver) StreamCreate(flags uint32) (Stream, error) {
	var s uintptr
	if err := d.call(pStreamCreate, uintptr(unsafe.Pointer(&s)), uintptr(flags)); err != nil {
		return 0, err
	}
	return Stream(s), nil
}

// StreamDestroy destroys a stream once its work is done.
func (d *Driver) StreamDestroy(s Stream) error { return d.call(pStreamDestroy, uintptr(s)) }

// StreamSynchronize waits for all work queued on s.
func (d *Driver) StreamSynchronize(s Stream) error { return d.call(pStreamSynchronize, uintptr(s)) }

// StreamWaitEvent makes future work on s wait for ev.
func (d *Driver) StreamWaitEvent(s Stream, ev Event) error {
	return d.call(pStreamWaitEvent, uintptr(s), uintptr(ev), 0)
}

// StreamQuery reports whether all work on s is done. Not done is (false, nil),
// not an error.
func (d *Driver) StreamQuery(s Stream) (bool, error) {
	return doneOrNotReady(d.call(pStreamQuery, uintptr(s)))
}

// EventCreate creates an event (flags: EventDefault, EventDisableTiming, ...).
func (d *Driver) EventCreate(flags uint32) (Event, error) {
	var e uintptr
	if err := d.call(pEventCreate, uintptr(unsafe.Pointer(&e)), uintptr(flags)); err != nil {
		return 0, err
	}
	return Event(e), nil
}

// EventDestroy destroys an event.
func (d *Driver) EventDestroy(ev Event) error { return d.call(pEventDestroy, uintptr(ev)) }

// EventRecord records ev at the current end of stream s.
func (d *Driver) EventRecord(ev Event, s Stream) error {
	return d.call(pEventRecord, uintptr(ev), uintptr(s))
}

// EventSynchronize waits until ev has been reached.
func (d *Driver) EventSynchronize(ev Event) error { return d.call(pEventSynchronize, uintptr(ev)) }

// EventQuery reports whether ev has been reached; not yet is (false, nil).
func (d *Driver) EventQuery(ev Event) (bool, error) {
	return doneOrNotReady(d.call(pEventQuery, uintptr(ev)))
}

// EventElapsedTime returns the milliseconds between two recorded events.
func (d *Driver) EventElapsedTime(start, end Event) (float32, error) {
	var ms float32
	if err := d.call(pEventElapsedTime, uintptr(unsafe.Pointer(&ms)), uintptr(start), uintptr(end)); err != nil {
		return 0, err
	}
	return ms, nil
}

func doneOrNotReady(err error) (bool, error) {
	if err == nil {
		return true, nil
	}
	if IsCode(err, ErrNotReady) {
		return false, nil
	}
	return false, err
}

// --- modules and kernels ---

// cImage copies a module image and NUL-terminates it, as PTX text must be.
func cImage(image []byte) []byte {
	b := make([]byte, len(image)+1)
	copy(b, image)
	return b
}

// ModuleLoadData loads a CUBIN, fatbin or PTX image into the current context.
func (d *Driver) ModuleLoadData(image []byte) (Module, error) {
	img := cImage(image)
	var m uintptr
	if err := d.call(pModuleLoadData, uintptr(unsafe.Pointer(&m)), uintptr(unsafe.Pointer(&img[0]))); err != nil {
		return 0, err
	}
	return Module(m), nil
}

// ModuleLoadDataEx is cuModuleLoadDataEx with raw JIT options: values[i] is
// the option's value as a pointer-sized word (an integer, or the address of a
// buffer the caller keeps alive and pinned for the call).
func (d *Driver) ModuleLoadDataEx(image []byte, options []int32, values []uintptr) (Module, error) {
	if len(options) != len(values) {
		return 0, fmt.Errorf("cuda driver: ModuleLoadDataEx: %d options but %d values", len(options), len(values))
	}
	img := cImage(image)
	var optp, valp uintptr
	var pin runtime.Pinner
	defer pin.Unpin()
	if len(options) > 0 {
		pin.Pin(&options[0])
		pin.Pin(&values[0])
		optp, valp = uintptr(unsafe.Pointer(&options[0])), uintptr(unsafe.Pointer(&values[0]))
	}
	var m uintptr
	if err := d.call(pModuleLoadDataEx, uintptr(unsafe.Pointer(&m)), uintptr(unsafe.Pointer(&img[0])),
		uintptr(len(options)), optp, valp); err != nil {
		return 0, err
	}
	return Module(m), nil
}

// LoadModule loads image like ModuleLoadData but collects the JIT linker's
// logs; on failure the returned error is a *ModuleLoadError with them.
func (d *Driver) LoadModule(image []byte) (Module, string, error) {
	const logSize = 16 << 10
	info := make([]byte, logSize)
	errlog := make([]byte, logSize)
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&info[0])
	pin.Pin(&errlog[0])
	opts := []int32{jitInfoLogBuffer, jitInfoLogBufferSizeBytes, jitErrorLogBuffer, jitErrorLogBufferSize}
	vals := []uintptr{uintptr(unsafe.Pointer(&info[0])), logSize, uintptr(unsafe.Pointer(&errlog[0])), logSize}
	m, err := d.ModuleLoadDataEx(image, opts, vals)
	runtime.KeepAlive(info)
	runtime.KeepAlive(errlog)
	if err != nil {
		return 0, cStr(info), &ModuleLoadError{Err: err, Log: cStr(errlog)}
	}
	return m, cStr(info), nil
}

// ModuleLoadError is a failed LoadModule with the JIT's error log.
type ModuleLoadError struct {
	Err error  // the *Error of cuModuleLoadDataEx
	Log string // the JIT error log, possibly empty
}

func (e *ModuleLoadError) Error() string {
	if e.Log == "" {
		return e.Err.Error()
	}
	return e.Err.Error() + ":\n" + e.Log
}

// Unwrap returns the driver *Error.
func (e *ModuleLoadError) Unwrap() error { return e.Err }

func cStr(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// ModuleUnload unloads a module.
func (d *Driver) ModuleUnload(m Module) error { return d.call(pModuleUnload, uintptr(m)) }

// ModuleGetFunction looks up a kernel by its (mangled or extern "C") name.
func (d *Driver) ModuleGetFunction(m Module, name string) (Function, error) {
	cname := append([]byte(name), 0)
	var f uintptr
	if err := d.call(pModuleGetFunction, uintptr(unsafe.Pointer(&f)), uintptr(m), uintptr(unsafe.Pointer(&cname[0]))); err != nil {
		return 0, err
	}
	return Function(f), nil
}

// LaunchKernel enqueues fn on stream with the given grid and block sizes and
// dynamic shared memory. params[i] points to the value of the kernel's i-th
// parameter (e.g. unsafe.Pointer(&n) for an int n, unsafe.Pointer(&ptr) for
// a DevicePtr ptr); the driver copies the values before LaunchKernel returns.
// The params array and every value it points to are pinned for the call.
func (d *Driver) LaunchKernel(fn Function, grid, block [3]uint32, sharedMem uint32, stream Stream, params []unsafe.Pointer) error {
	var pin runtime.Pinner
	defer pin.Unpin()
	var pp uintptr
	if len(params) > 0 {
		for _, p := range params {
			if p != nil {
				pin.Pin(p)
			}
		}
		pin.Pin(&params[0])
		pp = uintptr(unsafe.Pointer(&params[0]))
	}
	return d.call(pLaunchKernel, uintptr(fn),
		uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
		uintptr(block[0]), uintptr(block[1]), uintptr(block[2]),
		uintptr(sharedMem), uintptr(stream), pp, 0)
}

// FuncGetAttribute returns an attribute of a kernel.
func (d *Driver) FuncGetAttribute(attr FuncAttribute, fn Function) (int, error) {
	var v int32
	if err := d.call(pFuncGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(attr), uintptr(fn)); err != nil {
		return 0, err
	}
	return int(v), nil
}

// FuncSetAttribute sets an attribute of a kernel, e.g.
// FuncAttrMaxDynamicSharedSizeBytes to opt in to more than 48 KiB of shared memory.
func (d *Driver) FuncSetAttribute(fn Function, attr FuncAttribute, value int) error {
	return d.call(pFuncSetAttribute, uintptr(fn), uintptr(attr), uintptr(int32(value)))
}

// OccupancyMaxPotentialBlockSize returns the block size that maximizes
// occupancy for fn with a fixed dynamic shared memory size, and the minimum
// grid size that reaches it; blockSizeLimit 0 means no limit.
func (d *Driver) OccupancyMaxPotentialBlockSize(fn Function, dynamicSMem uint64, blockSizeLimit int) (minGrid, block int, err error) {
	var g, b int32
	err = d.call(pOccupancyMaxPotentialBlockSize, uintptr(unsafe.Pointer(&g)), uintptr(unsafe.Pointer(&b)),
		uintptr(fn), 0, uintptr(dynamicSMem), uintptr(int32(blockSizeLimit)))
	return int(g), int(b), err
}
