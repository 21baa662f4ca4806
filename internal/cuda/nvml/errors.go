package nvml

import "github.com/emberml/ember/internal/cuda/dl"

// Return is an nvmlReturn_t, the status every NVML call returns.
type Return int32

// NVML status codes (nvml.h, nvmlReturn_t).
const (
	Success                    Return = 0
	ErrorUninitialized         Return = 1
	ErrorInvalidArgument       Return = 2
	ErrorNotSupported          Return = 3
	ErrorNoPermission          Return = 4
	ErrorAlreadyInitialized    Return = 5
	ErrorNotFound              Return = 6
	ErrorInsufficientSize      Return = 7
	ErrorInsufficientPower     Return = 8
	ErrorDriverNotLoaded       Return = 9
	ErrorTimeout               Return = 10
	ErrorIRQIssue              Return = 11
	ErrorLibraryNotFound       Return = 12
	ErrorFunctionNotFound      Return = 13
	ErrorCorruptedInforom      Return = 14
	ErrorGPUIsLost             Return = 15
	ErrorResetRequired         Return = 16
	ErrorOperatingSystem       Return = 17
	ErrorLibRMVersionMismatch  Return = 18
	ErrorInUse                 Return = 19
	ErrorMemory                Return = 20
	ErrorNoData                Return = 21
	ErrorVGPUECCNotSupported   Return = 22
	ErrorInsufficientResources Return = 23
	ErrorFreqNotSupported      Return = 24
	ErrorArgumentVersion       Return = 25
	ErrorDeprecated            Return = 26
	ErrorNotReady              Return = 27
	ErrorGPUNotFound           Return = 28
	ErrorInvalidState          Return = 29
	ErrorUnknown               Return = 999
)

// Codes returns NVML's table of status names; it makes Return a dl.Code.
func (Return) Codes() *dl.Codes[Return] { return &returns }

// returns names NVML's statuses and says how its errors read ("nvml:
// nvmlInit_v2: NVML_ERROR_DRIVER_NOT_LOADED (9): Driver Not Loaded").
var returns = dl.Codes[Return]{Lib: "nvml", Names: returnNames, Unknown: "NVML_ERROR_%d"}

var returnNames = map[Return]string{
	Success:                    "NVML_SUCCESS",
	ErrorUninitialized:         "NVML_ERROR_UNINITIALIZED",
	ErrorInvalidArgument:       "NVML_ERROR_INVALID_ARGUMENT",
	ErrorNotSupported:          "NVML_ERROR_NOT_SUPPORTED",
	ErrorNoPermission:          "NVML_ERROR_NO_PERMISSION",
	ErrorAlreadyInitialized:    "NVML_ERROR_ALREADY_INITIALIZED",
	ErrorNotFound:              "NVML_ERROR_NOT_FOUND",
	ErrorInsufficientSize:      "NVML_ERROR_INSUFFICIENT_SIZE",
	ErrorInsufficientPower:     "NVML_ERROR_INSUFFICIENT_POWER",
	ErrorDriverNotLoaded:       "NVML_ERROR_DRIVER_NOT_LOADED",
	ErrorTimeout:               "NVML_ERROR_TIMEOUT",
	ErrorIRQIssue:              "NVML_ERROR_IRQ_ISSUE",
	ErrorLibraryNotFound:       "NVML_ERROR_LIBRARY_NOT_FOUND",
	ErrorFunctionNotFound:      "NVML_ERROR_FUNCTION_NOT_FOUND",
	ErrorCorruptedInforom:      "NVML_ERROR_CORRUPTED_INFOROM",
	ErrorGPUIsLost:             "NVML_ERROR_GPU_IS_LOST",
	ErrorResetRequired:         "NVML_ERROR_RESET_REQUIRED",
	ErrorOperatingSystem:       "NVML_ERROR_OPERATING_SYSTEM",
	ErrorLibRMVersionMismatch:  "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
	ErrorInUse:                 "NVML_ERROR_IN_USE",
	ErrorMemory:                "NVML_ERROR_MEMORY",
	ErrorNoData:                "NVML_ERROR_NO_DATA",
	ErrorVGPUECCNotSupported:   "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED",
	ErrorInsufficientResources: "NVML_ERROR_INSUFFICIENT_RESOURCES",
	ErrorFreqNotSupported:      "NVML_ERROR_FREQ_NOT_SUPPORTED",
	ErrorArgumentVersion:       "NVML_ERROR_ARGUMENT_VERSION_MISMATCH",
	ErrorDeprecated:            "NVML_ERROR_DEPRECATED",
	ErrorNotReady:              "NVML_ERROR_NOT_READY",
	ErrorGPUNotFound:           "NVML_ERROR_GPU_NOT_FOUND",
	ErrorInvalidState:          "NVML_ERROR_INVALID_STATE",
	ErrorUnknown:               "NVML_ERROR_UNKNOWN",
}

// Name returns the nvml.h name of r ("NVML_ERROR_DRIVER_NOT_LOADED"), or
// "NVML_ERROR_<n>" for a code this table does not know.
func (r Return) Name() string { return returns.Name(r) }

// String is Name.
func (r Return) String() string { return r.Name() }

// Error is a failed NVML call: Call (the NVML function, e.g. "nvmlInit_v2"),
// Code (the nvmlReturn_t), Name (its nvml.h name, e.g.
// "NVML_ERROR_DRIVER_NOT_LOADED") and Desc (NVML's own description,
// nvmlErrorString(Code), e.g. "Driver Not Loaded"; empty when unavailable).
// It formats as "nvml: nvmlInit_v2: NVML_ERROR_DRIVER_NOT_LOADED (9): Driver
// Not Loaded".
type Error = dl.Error[Return]

// IsCode reports whether err is, or wraps, an *Error carrying code.
func IsCode(err error, code Return) bool { return dl.IsCode(err, code) }
