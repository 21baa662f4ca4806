// Package nvml binds NVIDIA's Management Library (libnvidia-ml.so.1) at run
// time with purego, through the shared search order of internal/cuda/libpath.
// No cgo. It binds only what ember smi needs: driver and CUDA versions, the
// device list, and each device's name, PCI bus, fan, temperature, P-state,
// power, memory, utilization, compute and MIG modes, persistence, display,
// UUID, ECC and running compute processes.
//
// Every function is resolved with dlsym (internal/cuda/dl) before use. A function
// that this copy of the library lacks does not stop Open (unless it is one
// nothing works without); calling it returns an *Error with code
// NVML_ERROR_FUNCTION_NOT_FOUND instead.
package nvml

import (
	"errors"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/emberml/ember/internal/cuda/dl"
	"github.com/emberml/ember/internal/cuda/libpath"
)

// LibName is the file name NVML is loaded by.
const LibName = "libnvidia-ml.so.1"

// Buffer sizes from nvml.h.
const (
	driverVersionBufferSize = 80 // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
	nameBufferSize          = 96 // NVML_DEVICE_NAME_V2_BUFFER_SIZE
	uuidBufferSize          = 96 // NVML_DEVICE_UUID_V2_BUFFER_SIZE
	processNameBufferSize   = 1024
)

// symbol indexes into symbols.
const (
	symInit = iota
	symShutdown
	symErrorString
	symSystemGetDriverVersion
	symSystemGetCudaDriverVersion
	symSystemGetCudaDriverVersionV2
	symDeviceGetCount
	symDeviceGetHandleByIndex
	symDeviceGetName
	symDeviceGetPciInfo
	symDeviceGetFanSpeed
	symDeviceGetTemperature
	symDeviceGetPerformanceState
	symDeviceGetPowerUsage
	symDeviceGetEnforcedPowerLimit
	symDeviceGetPowerManagementLimit
	symDeviceGetMemoryInfo
	symDeviceGetUtilizationRates
	symDeviceGetComputeMode
	symDeviceGetMigMode
	symDeviceGetComputeRunningProcesses
	symSystemGetProcessName
	symDeviceGetPersistenceMode
	symDeviceGetDisplayActive
	symDeviceGetUUID
	symDeviceGetEccMode
	symDeviceGetTotalEccErrors
	numSyms
)

// symbols is the one table of every NVML function this package calls; Open
// fails without the ones that are not Optional.
var symbols = [numSyms]dl.Func{
	symInit:                             {Name: "nvmlInit_v2"},
	symShutdown:                         {Name: "nvmlShutdown"},
	symErrorString:                      {Name: "nvmlErrorString"},
	symSystemGetDriverVersion:           {Name: "nvmlSystemGetDriverVersion", Optional: true},
	symSystemGetCudaDriverVersion:       {Name: "nvmlSystemGetCudaDriverVersion", Optional: true},
	symSystemGetCudaDriverVersionV2:     {Name: "nvmlSystemGetCudaDriverVersion_v2", Optional: true},
	symDeviceGetCount:                   {Name: "nvmlDeviceGetCount_v2"},
	symDeviceGetHandleByIndex:           {Name: "nvmlDeviceGetHandleByIndex_v2"},
	symDeviceGetName:                    {Name: "nvmlDeviceGetName", Optional: true},
	symDeviceGetPciInfo:                 {Name: "nvmlDeviceGetPciInfo_v3", Optional: true},
	symDeviceGetFanSpeed:                {Name: "nvmlDeviceGetFanSpeed", Optional: true},
	symDeviceGetTemperature:             {Name: "nvmlDeviceGetTemperature", Optional: true},
	symDeviceGetPerformanceState:        {Name: "nvmlDeviceGetPerformanceState", Optional: true},
	symDeviceGetPowerUsage:              {Name: "nvmlDeviceGetPowerUsage", Optional: true},
	symDeviceGetEnforcedPowerLimit:      {Name: "nvmlDeviceGetEnforcedPowerLimit", Optional: true},
	symDeviceGetPowerManagementLimit:    {Name: "nvmlDeviceGetPowerManagementLimit", Optional: true},
	symDeviceGetMemoryInfo:              {Name: "nvmlDeviceGetMemoryInfo", Optional: true},
	symDeviceGetUtilizationRates:        {Name: "nvmlDeviceGetUtilizationRates", Optional: true},
	symDeviceGetComputeMode:             {Name: "nvmlDeviceGetComputeMode", Optional: true},
	symDeviceGetMigMode:                 {Name: "nvmlDeviceGetMigMode", Optional: true},
	symDeviceGetComputeRunningProcesses: {Name: "nvmlDeviceGetComputeRunningProcesses_v3", Optional: true},
	symSystemGetProcessName:             {Name: "nvmlSystemGetProcessName", Optional: true},
	symDeviceGetPersistenceMode:         {Name: "nvmlDeviceGetPersistenceMode", Optional: true},
	symDeviceGetDisplayActive:           {Name: "nvmlDeviceGetDisplayActive", Optional: true},
	symDeviceGetUUID:                    {Name: "nvmlDeviceGetUUID", Optional: true},
	symDeviceGetEccMode:                 {Name: "nvmlDeviceGetEccMode", Optional: true},
	symDeviceGetTotalEccErrors:          {Name: "nvmlDeviceGetTotalEccErrors", Optional: true},
}

// Symbols returns the names of every NVML function this package binds, in
// the order of its table.
func Symbols() []string {
	out := make([]string, len(symbols))
	for i, s := range symbols {
		out[i] = s.Name
	}
	return out
}

// Lib is an opened NVML. Open it, then Init before any other call, and
// Shutdown when done (NVML counts Init and Shutdown calls).
type Lib struct {
	fn *dl.Table // symbols, resolved at Open
}

// lib is what Open opens.
var lib = dl.Library[*Lib]{Names: []string{LibName}, Bind: bind}

// Open loads libnvidia-ml.so.1 and resolves its functions, searching again on
// every call. A missing library is a *libpath.NotFoundError; a missing
// required function a *libpath.SymbolError.
func Open() (*Lib, error) { return lib.Open() }

func bind(lib *libpath.Lib) (*Lib, error) {
	l := &Lib{fn: dl.NewTable(lib, symbols[:])}
	if _, err := l.fn.Resolve(); err != nil {
		return nil, err
	}
	return l, nil
}

// Path is the file the library was loaded from.
func (l *Lib) Path() string { return l.fn.Lib().Path }

// call runs the bound function i with args and turns its status into an
// error. A function missing from the library is NVML_ERROR_FUNCTION_NOT_FOUND.
func (l *Lib) call(i int, args ...uintptr) error {
	p := l.fn.Ptr(i)
	if p == 0 {
		return l.err(symbols[i].Name, ErrorFunctionNotFound)
	}
	r1, _, _ := purego.SyscallN(p, args...)
	if r := Return(int32(uint32(r1))); r != Success {
		return l.err(symbols[i].Name, r)
	}
	return nil
}

func (l *Lib) err(call string, r Return) *Error {
	return &Error{Call: call, Code: r, Name: r.Name(), Desc: l.ErrorString(r)}
}

// ErrorString is nvmlErrorString: NVML's description of r. It works before Init.
func (l *Lib) ErrorString(r Return) string {
	p := l.fn.Ptr(symErrorString)
	if p == 0 {
		return ""
	}
	s, _, _ := purego.SyscallN(p, uintptr(uint32(int32(r))))
	return libpath.GoString(s)
}

// cString returns the bytes of buf up to the first NUL.
func cString(buf []byte) string {
	for i, c := range buf {
		if c == 0 {
			return string(buf[:i])
		}
	}
	return string(buf)
}

// pinned pins each pointer for the duration of one C call; unpin with Unpin.
func pinned(ptrs ...any) *runtime.Pinner {
	p := new(runtime.Pinner)
	for _, x := range ptrs {
		p.Pin(x)
	}
	return p
}

// Init is nvmlInit_v2. Without a loaded kernel driver it returns an *Error
// with code NVML_ERROR_DRIVER_NOT_LOADED (9).
func (l *Lib) Init() error { return l.call(symInit) }

// Shutdown is nvmlShutdown.
func (l *Lib) Shutdown() error { return l.call(symShutdown) }

// DriverVersion is nvmlSystemGetDriverVersion, e.g. "535.154.05".
func (l *Lib) DriverVersion() (string, error) {
	buf := make([]byte, driverVersionBufferSize)
	pin := pinned(&buf[0])
	defer pin.Unpin()
	if err := l.call(symSystemGetDriverVersion, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))); err != nil {
		return "", err
	}
	return cString(buf), nil
}

// CUDADriverVersion is nvmlSystemGetCudaDriverVersion_v2 (or the plain
// function on an older library): the CUDA version the driver supports,
// encoded as 1000*major + 10*minor (12020 is CUDA 12.2).
func (l *Lib) CUDADriverVersion() (int, error) {
	v := new(int32)
	pin := pinned(v)
	defer pin.Unpin()
	i := symSystemGetCudaDriverVersionV2
	if l.fn.Ptr(i) == 0 {
		i = symSystemGetCudaDriverVersion
	}
	if err := l.call(i, uintptr(unsafe.Pointer(v))); err != nil {
		return 0, err
	}
	return int(*v), nil
}

// DeviceCount is nvmlDeviceGetCount_v2.
func (l *Lib) DeviceCount() (int, error) {
	n := new(uint32)
	pin := pinned(n)
	defer pin.Unpin()
	if err := l.call(symDeviceGetCount, uintptr(unsafe.Pointer(n))); err != nil {
		return 0, err
	}
	return int(*n), nil
}

// DeviceByIndex is nvmlDeviceGetHandleByIndex_v2.
func (l *Lib) DeviceByIndex(index int) (Device, error) {
	h := new(uintptr)
	pin := pinned(h)
	defer pin.Unpin()
	if index < 0 {
		return Device{}, l.err(symbols[symDeviceGetHandleByIndex].Name, ErrorInvalidArgument)
	}
	if err := l.call(symDeviceGetHandleByIndex, uintptr(uint32(index)), uintptr(unsafe.Pointer(h))); err != nil {
		return Device{}, err
	}
	return Device{lib: l, handle: *h}, nil
}

// ProcessName is nvmlSystemGetProcessName: the executable of a process.
func (l *Lib) ProcessName(pid uint32) (string, error) {
	buf := make([]byte, processNameBufferSize)
	pin := pinned(&buf[0])
	defer pin.Unpin()
	if err := l.call(symSystemGetProcessName, uintptr(pid), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))); err != nil {
		return "", err
	}
	return cString(buf), nil
}

// errNoDevice is returned by Device methods called on the zero Device.
var errNoDevice = errors.New("nvml: zero Device (use Lib.DeviceByIndex)")
