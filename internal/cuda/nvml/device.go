package nvml

import (
	"unsafe"
)

// Device is an NVML device handle (nvmlDevice_t) from Lib.DeviceByIndex.
type Device struct {
	lib    *Lib
	handle uintptr
}

// PciInfo is nvmlPciInfo_t as filled by nvmlDeviceGetPciInfo_v3.
type PciInfo struct {
	BusIDLegacy    string // "0000:18:00.0"
	Domain         uint32
	Bus            uint32
	Device         uint32
	PciDeviceID    uint32 // device ID << 16 | vendor ID
	PciSubSystemID uint32
	BusID          string // "00000000:18:00.0", as nvidia-smi prints it
}

// cPciInfo mirrors nvmlPciInfo_t (nvml.h):
//
//	char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE]; // 16
//	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
//	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];          // 32
//
// 68 bytes, 4-byte aligned.
type cPciInfo struct {
	busIDLegacy    [16]byte
	domain         uint32
	bus            uint32
	device         uint32
	pciDeviceID    uint32
	pciSubSystemID uint32
	busID          [32]byte
}

// cMemory mirrors nvmlMemory_t: total, free, used, in bytes.
type cMemory struct {
	total, free, used uint64
}

// cUtilization mirrors nvmlUtilization_t: percentages over the last sample period.
type cUtilization struct {
	gpu, memory uint32
}

// cProcessInfo mirrors nvmlProcessInfo_t as nvmlDeviceGetComputeRunningProcesses_v3
// fills it (24 bytes: the pid is padded to 8):
//
//	unsigned int pid; unsigned long long usedGpuMemory;
//	unsigned int gpuInstanceId; unsigned int computeInstanceId;
type cProcessInfo struct {
	pid               uint32
	usedGpuMemory     uint64
	gpuInstanceID     uint32
	computeInstanceID uint32
}

// ValueNotAvailable is NVML_VALUE_NOT_AVAILABLE: what NVML reports as a
// process's memory when it cannot tell (under WDDM, or without permission).
const ValueNotAvailable = ^uint64(0)

// NoInstanceID is what NVML puts in a process's GPU and compute instance IDs
// when MIG is off.
const NoInstanceID = ^uint32(0)

// Memory is a device's frame-buffer memory, in bytes.
type Memory struct {
	Total, Free, Used uint64
}

// Utilization is a device's GPU and memory-controller busy percentages.
type Utilization struct {
	GPU, Memory uint32
}

// ProcessInfo is one process with a compute context on a device.
type ProcessInfo struct {
	PID               uint32
	UsedGPUMemory     uint64 // bytes; ValueNotAvailable when NVML cannot tell
	GPUInstanceID     uint32 // NoInstanceID without MIG
	ComputeInstanceID uint32 // NoInstanceID without MIG
}

// ComputeMode is nvmlComputeMode_t.
type ComputeMode int32

// Compute modes.
const (
	ComputeModeDefault          ComputeMode = 0
	ComputeModeExclusiveThread  ComputeMode = 1 // deprecated by NVIDIA
	ComputeModeProhibited       ComputeMode = 2
	ComputeModeExclusiveProcess ComputeMode = 3
)

// TemperatureGPU is NVML_TEMPERATURE_GPU, the GPU die sensor.
const TemperatureGPU = 0

const (
	memoryErrorTypeUncorrected = 1 // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
	volatileECC                = 0 // NVML_VOLATILE_ECC
)

func (d Device) check() error {
	if d.lib == nil || d.handle == 0 {
		return errNoDevice
	}
	return nil
}

func (d Device) str(sym, size int) (string, error) {
	if err := d.check(); err != nil {
		return "", err
	}
	buf := make([]byte, size)
	pin := pinned(&buf[0])
	defer pin.Unpin()
	if err := d.lib.call(sym, d.handle, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))); err != nil {
		return "", err
	}
	return cString(buf), nil
}

func (d Device) u32(sym int, pre ...uintptr) (uint32, error) {
	if err := d.check(); err != nil {
		return 0, err
	}
	v := new(uint32)
	pin := pinned(v)
	defer pin.Unpin()
	args := append(append([]uintptr{d.handle}, pre...), uintptr(unsafe.Pointer(v)))
	if err := d.lib.call(sym, args...); err != nil {
		return 0, err
	}
	return *v, nil
}

func (d Device) pair(sym int) (current, pending uint32, err error) {
	if err := d.check(); err != nil {
		return 0, 0, err
	}
	c, p := new(uint32), new(uint32)
	pin := pinned(c, p)
	defer pin.Unpin()
	if err := d.lib.call(sym, d.handle, uintptr(unsafe.Pointer(c)), uintptr(unsafe.Pointer(p))); err != nil {
		return 0, 0, err
	}
	return *c, *p, nil
}

// Name is nvmlDeviceGetName, e.g. "NVIDIA H100 80GB HBM3".
func (d Device) Name() (string, error) { return d.str(symDeviceGetName, nameBufferSize) }

// UUID is nvmlDeviceGetUUID, e.g. "GPU-5d7a8c3e-...".
func (d Device) UUID() (string, error) { return d.str(symDeviceGetUUID, uuidBufferSize) }

// PciInfo is nvmlDeviceGetPciInfo_v3.
func (d Device) PciInfo() (PciInfo, error) {
	if err := d.check(); err != nil {
		return PciInfo{}, err
	}
	c := new(cPciInfo)
	pin := pinned(c)
	defer pin.Unpin()
	if err := d.lib.call(symDeviceGetPciInfo, d.handle, uintptr(unsafe.Pointer(c))); err != nil {
		return PciInfo{}, err
	}
	return PciInfo{
		BusIDLegacy: cString(c.busIDLegacy[:]), Domain: c.domain, Bus: c.bus, Device: c.device,
		PciDeviceID: c.pciDeviceID, PciSubSystemID: c.pciSubSystemID, BusID: cString(c.busID[:]),
	}, nil
}

// FanSpeed is nvmlDeviceGetFanSpeed: the intended fan speed in percent.
// Passively cooled boards return NVML_ERROR_NOT_SUPPORTED.
func (d Device) FanSpeed() (uint32, error) { return d.u32(symDeviceGetFanSpeed) }

// Temperature is nvmlDeviceGetTemperature(NVML_TEMPERATURE_GPU) in °C.
func (d Device) Temperature() (uint32, error) {
	return d.u32(symDeviceGetTemperature, TemperatureGPU)
}

// PerformanceState is nvmlDeviceGetPerformanceState: 0 (P0, most
// performance) to 15, or 32 for unknown.
func (d Device) PerformanceState() (int, error) {
	v, err := d.u32(symDeviceGetPerformanceState)
	return int(int32(v)), err
}

// PowerUsage is nvmlDeviceGetPowerUsage, in milliwatts.
func (d Device) PowerUsage() (uint32, error) { return d.u32(symDeviceGetPowerUsage) }

// EnforcedPowerLimit is nvmlDeviceGetEnforcedPowerLimit, in milliwatts.
func (d Device) EnforcedPowerLimit() (uint32, error) {
	return d.u32(symDeviceGetEnforcedPowerLimit)
}

// PowerManagementLimit is nvmlDeviceGetPowerManagementLimit, in milliwatts.
func (d Device) PowerManagementLimit() (uint32, error) {
	return d.u32(symDeviceGetPowerManagementLimit)
}

// MemoryInfo is nvmlDeviceGetMemoryInfo.
func (d Device) MemoryInfo() (Memory, error) {
	if err := d.check(); err != nil {
		return Memory{}, err
	}
	c := new(cMemory)
	pin := pinned(c)
	defer pin.Unpin()
	if err := d.lib.call(symDeviceGetMemoryInfo, d.handle, uintptr(unsafe.Pointer(c))); err != nil {
		return Memory{}, err
	}
	return Memory{Total: c.total, Free: c.free, Used: c.used}, nil
}

// UtilizationRates is nvmlDeviceGetUtilizationRates.
func (d Device) UtilizationRates() (Utilization, error) {
	if err := d.check(); err != nil {
		return Utilization{}, err
	}
	c := new(cUtilization)
	pin := pinned(c)
	defer pin.Unpin()
	if err := d.lib.call(symDeviceGetUtilizationRates, d.handle, uintptr(unsafe.Pointer(c))); err != nil {
		return Utilization{}, err
	}
	return Utilization{GPU: c.gpu, Memory: c.memory}, nil
}

// ComputeMode is nvmlDeviceGetComputeMode.
func (d Device) ComputeMode() (ComputeMode, error) {
	v, err := d.u32(symDeviceGetComputeMode)
	return ComputeMode(int32(v)), err
}

// MigMode is nvmlDeviceGetMigMode: the current and pending MIG modes
// (true is NVML_DEVICE_MIG_ENABLE).
func (d Device) MigMode() (current, pending bool, err error) {
	c, p, err := d.pair(symDeviceGetMigMode)
	return c == 1, p == 1, err
}

// EccMode is nvmlDeviceGetEccMode: the current and pending ECC modes.
func (d Device) EccMode() (current, pending bool, err error) {
	c, p, err := d.pair(symDeviceGetEccMode)
	return c == 1, p == 1, err
}

// VolatileUncorrectedECCErrors is nvmlDeviceGetTotalEccErrors for
// uncorrected errors since the last driver load (nvidia-smi's "Volatile
// Uncorr. ECC").
func (d Device) VolatileUncorrectedECCErrors() (uint64, error) {
	if err := d.check(); err != nil {
		return 0, err
	}
	v := new(uint64)
	pin := pinned(v)
	defer pin.Unpin()
	if err := d.lib.call(symDeviceGetTotalEccErrors, d.handle, memoryErrorTypeUncorrected, volatileECC, uintptr(unsafe.Pointer(v))); err != nil {
		return 0, err
	}
	return *v, nil
}

// PersistenceMode is nvmlDeviceGetPersistenceMode.
func (d Device) PersistenceMode() (bool, error) {
	v, err := d.u32(symDeviceGetPersistenceMode)
	return v == 1, err
}

// DisplayActive is nvmlDeviceGetDisplayActive: whether a display is
// initialized on the device (nvidia-smi's "Disp.A").
func (d Device) DisplayActive() (bool, error) {
	v, err := d.u32(symDeviceGetDisplayActive)
	return v == 1, err
}

// ComputeRunningProcesses is nvmlDeviceGetComputeRunningProcesses_v3.
func (d Device) ComputeRunningProcesses() ([]ProcessInfo, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	n := new(uint32)
	for attempt := 0; ; attempt++ {
		var infos []cProcessInfo
		var ptr uintptr
		pin := pinned(n)
		if *n > 0 {
			infos = make([]cProcessInfo, *n)
			pin.Pin(&infos[0])
			ptr = uintptr(unsafe.Pointer(&infos[0]))
		}
		err := d.lib.call(symDeviceGetComputeRunningProcesses, d.handle, uintptr(unsafe.Pointer(n)), ptr)
		pin.Unpin()
		if IsCode(err, ErrorInsufficientSize) && attempt < 8 {
			*n += 8 // processes may start between the calls
			continue
		}
		if err != nil {
			return nil, err
		}
		out := make([]ProcessInfo, 0, *n)
		for _, c := range infos[:min(int(*n), len(infos))] {
			out = append(out, ProcessInfo{PID: c.pid, UsedGPUMemory: c.usedGpuMemory,
				GPUInstanceID: c.gpuInstanceID, ComputeInstanceID: c.computeInstanceID})
		}
		return out, nil
	}
}
