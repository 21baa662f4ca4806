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
	return fmt.Sprintf("invalid device string %q: expected one of cpu, cuda, cuda:N (N ≥ 0), meta", e.Input)
}

// ParseDevice reads "cpu", "cuda" (cuda:0), "cuda:N" or "meta". Case and
// surrounding spaces are ignored.
func ParseDevice(s string) (Device, error) {
	in := strings.ToLower(strings.TrimSpace(s))
	switch in {
	case "cpu":
		return Device{Type: CPUType}, nil
	case "meta":
		return Device{Type: MetaType}, nil
	case "cuda":
		return Device{Type: CUDAType}, nil
	}
	if rest, ok := strings.CutPrefix(in, "cuda:"); ok && rest != "" {
		n, err := strconv.Atoi(rest)
		if err == nil && n >= 0 && !strings.HasPrefix(rest, "+") {
			return Device{Type: CUDAType, Index: n}, nil
		}
	}
	return Device{}, &ParseError{Input: s}
}
