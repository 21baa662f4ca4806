package driver

import "github.com/emberml/ember/internal/cuda/dl"

// Result is a CUresult, the status every driver call returns.
type Result int

// Codes returns the driver's table of CUresult names; it makes Result a
// dl.Code.
func (Result) Codes() *dl.Codes[Result] { return &codes }

// codes names CUresults when cuGetErrorName cannot, and says how the
// driver's errors read ("cuInit: CUDA_ERROR_NO_DEVICE (100): …").
var codes = dl.Codes[Result]{
	Names:       codeNames,
	Unknown:     "CUDA_ERROR_%d",
	OutOfMemory: []Result{ErrOutOfMemory},
}

// CUresult codes (cuda.h, enum cudaError_enum) that ember looks at by number.
const (
	Success                 = 0
	ErrInvalidValue         = 1
	ErrOutOfMemory          = 2
	ErrNotInitialized       = 3
	ErrDeinitialized        = 4
	ErrStubLibrary          = 34
	ErrDeviceUnavailable    = 46
	ErrNoDevice             = 100
	ErrInvalidDevice        = 101
	ErrInvalidImage         = 200
	ErrInvalidContext       = 201
	ErrNoBinaryForGPU       = 209
	ErrInvalidPTX           = 218
	ErrUnsupportedPTX       = 222
	ErrInvalidHandle        = 400
	ErrNotFound             = 500
	ErrNotReady             = 600
	ErrIllegalAddress       = 700
	ErrLaunchOutOfResources = 701
	ErrLaunchFailed         = 719
	ErrNotSupported         = 801
	ErrSystemDriverMismatch = 803
	ErrUnknown              = 999
)

// codeNames is the fallback for cuGetErrorName: the names of cuda.h (CUDA
// 12.2). A test checks every entry against the real libcuda.
var codeNames = map[Result]string{
	0:   "CUDA_SUCCESS",
	1:   "CUDA_ERROR_INVALID_VALUE",
	2:   "CUDA_ERROR_OUT_OF_MEMORY",
	3:   "CUDA_ERROR_NOT_INITIALIZED",
	4:   "CUDA_ERROR_DEINITIALIZED",
	5:   "CUDA_ERROR_PROFILER_DISABLED",
	6:   "CUDA_ERROR_PROFILER_NOT_INITIALIZED",
	7:   "CUDA_ERROR_PROFILER_ALREADY_STARTED",
	8:   "CUDA_ERROR_PROFILER_ALREADY_STOPPED",
	34:  "CUDA_ERROR_STUB_LIBRARY",
	46:  "CUDA_ERROR_DEVICE_UNAVAILABLE",
	100: "CUDA_ERROR_NO_DEVICE",
	101: "CUDA_ERROR_INVALID_DEVICE",
	102: "CUDA_ERROR_DEVICE_NOT_LICENSED",
	200: "CUDA_ERROR_INVALID_IMAGE",
	201: "CUDA_ERROR_INVALID_CONTEXT",
	202: "CUDA_ERROR_CONTEXT_ALREADY_CURRENT",
	205: "CUDA_ERROR_MAP_FAILED",
	206: "CUDA_ERROR_UNMAP_FAILED",
	207: "CUDA_ERROR_ARRAY_IS_MAPPED",
	208: "CUDA_ERROR_ALREADY_MAPPED",
	209: "CUDA_ERROR_NO_BINARY_FOR_GPU",
	210: "CUDA_ERROR_ALREADY_ACQUIRED",
	211: "CUDA_ERROR_NOT_MAPPED",
	212: "CUDA_ERROR_NOT_MAPPED_AS_ARRAY",
	213: "CUDA_ERROR_NOT_MAPPED_AS_POINTER",
	214: "CUDA_ERROR_ECC_UNCORRECTABLE",
	215: "CUDA_ERROR_UNSUPPORTED_LIMIT",
	216: "CUDA_ERROR_CONTEXT_ALREADY_IN_USE",
	217: "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
	218: "CUDA_ERROR_INVALID_PTX",
	219: "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT",
	220: "CUDA_ERROR_NVLINK_UNCORRECTABLE",
	221: "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
	222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	223: "CUDA_ERROR_JIT_COMPILATION_DISABLED",
	224: "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY",
	300: "CUDA_ERROR_INVALID_SOURCE",
	301: "CUDA_ERROR_FILE_NOT_FOUND",
	302: "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND",
	303: "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",
	304: "CUDA_ERROR_OPERATING_SYSTEM",
	400: "CUDA_ERROR_INVALID_HANDLE",
	401: "CUDA_ERROR_ILLEGAL_STATE",
	500: "CUDA_ERROR_NOT_FOUND",
	600: "CUDA_ERROR_NOT_READY",
	700: "CUDA_ERROR_ILLEGAL_ADDRESS",
	701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	702: "CUDA_ERROR_LAUNCH_TIMEOUT",
	703: "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING",
	704: "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
	705: "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED",
	708: "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE",
	709: "CUDA_ERROR_CONTEXT_IS_DESTROYED",
	710: "CUDA_ERROR_ASSERT",
	711: "CUDA_ERROR_TOO_MANY_PEERS",
	712: "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
	713: "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
	714: "CUDA_ERROR_HARDWARE_STACK_ERROR",
	715: "CUDA_ERROR_ILLEGAL_INSTRUCTION",
	716: "CUDA_ERROR_MISALIGNED_ADDRESS",
	717: "CUDA_ERROR_INVALID_ADDRESS_SPACE",
	718: "CUDA_ERROR_INVALID_PC",
	719: "CUDA_ERROR_LAUNCH_FAILED",
	720: "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
	800: "CUDA_ERROR_NOT_PERMITTED",
	801: "CUDA_ERROR_NOT_SUPPORTED",
	802: "CUDA_ERROR_SYSTEM_NOT_READY",
	803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
	804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
	999: "CUDA_ERROR_UNKNOWN",
}

// Error is a CUDA driver call that returned a CUresult other than
// CUDA_SUCCESS: Call (the C entry point, e.g. "cuInit" or "cuMemAlloc_v2"),
// Code, Name (e.g. "CUDA_ERROR_NO_DEVICE") and Desc (e.g. "no CUDA-capable
// device is detected"; may be empty). Name and Desc come from cuGetErrorName
// and cuGetErrorString when the library answers, else from a static table of
// names. It formats as "cuInit: CUDA_ERROR_NO_DEVICE (100): no CUDA-capable
// device is detected"; CodeString is the name and number alone, and
// OutOfMemory reports CUDA_ERROR_OUT_OF_MEMORY, which the caching allocator
// answers by freeing its cache and retrying.
type Error = dl.Error[Result]

// IsCode reports whether err is, or wraps, a driver *Error with the given CUresult.
func IsCode(err error, code Result) bool { return dl.IsCode(err, code) }

// fallbackName names a CUresult from the static table.
func fallbackName(code Result) string { return codes.Name(code) }
