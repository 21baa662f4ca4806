package backend

import (
	"fmt"
	"strconv"
	"strings"
)

// DeviceType is the kind of a device.
type DeviceType uint8

const (
	CPUType  DeviceType = iota // the host
	CUDAType                   // an NVIDIA GPU
	MetaType                   // shapes and dtypes only, no data
)

func (t DeviceType) String() string {
	switch t {
	case CPUType:
		return "cpu"
	case CUDAType:
		return "cuda"
	case MetaType:
		return "meta"
	}
	return fmt.Sprintf("DeviceType(%d)", uint8(t))
}

// Device names a device: a type and, for CUDA, an index. It is a small value,
// cheap to copy and compare; describing a device never touches a driver.
type Device struct {
	Type  DeviceType
	Index int
}

// String prints the device as PyTorch does: "cpu", "cuda:0", "meta".
func (d Device) String() string {
	if d.Type == CUDAType {
		return "cuda:" + strconv.Itoa(d.Index)
	}
	return d.Type.String()
}

// ParseError says why a device string could not be parsed.
type ParseError struct{ Input string }

func (e *ParseError) Error() string {
	return fmt.Sprintf("invalid device string %q: expected one of cpu, cuda, cuda:N (N from 0 to %d, no leading zeros), meta", e.Input, MaxDeviceIndex)
}

// MaxDeviceIndex is the largest index ParseDevice accepts, that of PyTorch's
// 16-bit DeviceIndex.
const MaxDeviceIndex = 1<<15 - 1

// ParseDevice reads "cpu", "cuda" (cuda:0), "cuda:N" or "meta". Case and
// surrounding spaces are ignored. As in PyTorch, "cpu:0" and "meta:0" name
// the cpu and meta devices, and an index is written without a sign or
// leading zeros ("cuda:01" is an error).
func ParseDevice(s string) (Device, error) {
	in := strings.ToLower(strings.TrimSpace(s))
	name, rest, hasIndex := strings.Cut(in, ":")
	var d Device
	switch name {
	case "cpu":
		d.Type = CPUType
	case "meta":
		d.Type = MetaType
	case "cuda":
		d.Type = CUDAType
	default:
		return Device{}, &ParseError{Input: s}
	}
	if !hasIndex {
		return d, nil
	}
	n, ok := parseIndex(rest)
	if !ok || (d.Type != CUDAType && n != 0) {
		return Device{}, &ParseError{Input: s}
	}
	d.Index = n
	return d, nil
}

// parseIndex reads a device index as PyTorch does: decimal digits, no sign,
// no leading zero, at most MaxDeviceIndex.
func parseIndex(s string) (int, bool) {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
		if n > MaxDeviceIndex {
			return 0, false
		}
	}
	return n, true
}
