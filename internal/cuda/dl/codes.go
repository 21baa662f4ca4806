package dl

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// Codes is a library's table of status codes and how its errors read.
type Codes[C ~int | ~int32] struct {
	// Lib starts every message, e.g. "nvml" gives "nvml: nvmlInit_v2: …";
	// empty for none (the driver's "cuInit: CUDA_ERROR_NO_DEVICE (100)").
	Lib string
	// Failed makes messages read "CALL failed: NAME (n)" rather than
	// "CALL: NAME (n)".
	Failed bool
	// Names are the codes' C names, e.g. 100 → "CUDA_ERROR_NO_DEVICE".
	Names map[C]string
	// Unknown formats the name of a code not in Names from its number,
	// e.g. "CUDA_ERROR_%d".
	Unknown string
	// OutOfMemory are the codes that mean the device ran out of memory:
	// Error.OutOfMemory reports them (the caching allocator frees its
	// cache and retries).
	OutOfMemory []C
	// Hint, when set, returns words appended to a message after the
	// description, separator included (e.g. " (no usable CUDA device or
	// driver)"), or "": what a code usually means from a given call.
	Hint func(call string, code C) string
}

// Name returns the C name of code, from Names or, for a code not there,
// from Unknown.
func (c *Codes[C]) Name(code C) string {
	if n, ok := c.Names[code]; ok {
		return n
	}
	return fmt.Sprintf(c.Unknown, int64(code))
}

// Code is a library's status-code type (a CUresult, an nvmlReturn_t, …):
// an integer type whose Codes method returns the library's table.
type Code[C ~int | ~int32] interface {
	~int | ~int32
	Codes() *Codes[C]
}

// Error is a failed call of a library whose status codes are C. Each
// binding names it (type Error = dl.Error[Return]), so that errors.As finds
// one library's errors and not another's.
type Error[C Code[C]] struct {
	Call   string `json:"call"`             // the C function, e.g. "cuInit" or "nvmlInit_v2"
	Code   C      `json:"code"`             // the status it returned
	Name   string `json:"name"`             // the code's name, e.g. "CUDA_ERROR_NO_DEVICE"; empty: the table's
	Desc   string `json:"desc"`             // the library's description of the code, e.g. "no CUDA-capable device is detected"; may be empty
	Detail string `json:"detail,omitempty"` // more from the library about this failure (NCCL's last error); may be empty
}

// Error formats the error in the library's way, e.g. "cuInit:
// CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected" or
// "nvml: nvmlInit_v2: NVML_ERROR_DRIVER_NOT_LOADED (9): Driver Not Loaded".
func (e *Error[C]) Error() string {
	c := e.Code.Codes()
	s := e.Call
	if c.Lib != "" {
		s = c.Lib + ": " + s
	}
	if c.Failed {
		s += " failed"
	}
	s += ": " + e.CodeString()
	if e.Desc != "" {
		s += ": " + e.Desc
	}
	if c.Hint != nil {
		s += c.Hint(e.Call, e.Code)
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// CodeString is the code's name and number without the call, e.g.
// "CUDA_ERROR_NO_DEVICE (100)".
func (e *Error[C]) CodeString() string {
	name := e.Name
	if name == "" {
		name = e.Code.Codes().Name(e.Code)
	}
	return name + " (" + strconv.FormatInt(int64(e.Code), 10) + ")"
}

// OutOfMemory reports whether the code is one of the library's
// out-of-memory codes (Codes.OutOfMemory).
func (e *Error[C]) OutOfMemory() bool {
	return slices.Contains(e.Code.Codes().OutOfMemory, e.Code)
}

// IsCode reports whether err is, or wraps, an *Error[C] with the given code.
func IsCode[C Code[C]](err error, code C) bool {
	var e *Error[C]
	return errors.As(err, &e) && e.Code == code
}
