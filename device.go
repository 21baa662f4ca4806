// Package ember is a deep-learning library for Go with PyTorch's device
// model: tensors live on a Device (cpu, cuda:N, or meta), creation takes a
// device, To/CPU/CUDA copy between devices, and ops check that all their
// operands share one device.
//
// Write device-agnostic code once:
//
//	dev := ember.TryGPU(0) // cuda:0 if there is one, else cpu (logged once)
//	x := ember.Ones(ember.Shape{2, 3}, ember.On(dev))
//	y := x.MulScalar(2).AddScalar(1)
//	fmt.Println(y)
//
// Misuse inside tensor math (shapes, dtypes, devices) panics with a typed
// error, as PyTorch raises; Try turns such a panic back into an error.
package ember

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/emberml/ember/backend"
	_ "github.com/emberml/ember/backend/cpu" // registers the cpu backend
	_ "github.com/emberml/ember/backend/cuda"
	_ "github.com/emberml/ember/backend/meta"
)

// Device names a device: cpu, cuda:N or meta. It is a small comparable value.
// Describing a device never touches a driver; using an absent one fails.
type Device = backend.Device

// DeviceType is the kind of a device.
type DeviceType = backend.DeviceType

// The device types.
const (
	CPUType  = backend.CPUType
	CUDAType = backend.CUDAType
	MetaType = backend.MetaType
)

var (
	// CPU is the host.
	CPU = Device{Type: backend.CPUType}
	// Meta is the device of tensors that have a shape and dtype but no data.
	Meta = Device{Type: backend.MetaType}
)

// CUDA returns the device cuda:i. It need not exist until it is used.
func CUDA(i int) Device { return Device{Type: backend.CUDAType, Index: i} }

// ParseDevice reads "cpu", "cuda", "cuda:N" or "meta" (any case, spaces
// around ignored; "cpu:0" and "meta:0" too, as torch.device); anything else,
// such as "cuda:01" or "cuda:-1", is a *DeviceParseError.
func ParseDevice(s string) (Device, error) { return backend.ParseDevice(s) }

// DeviceParseError is ParseDevice's error: the string it could not read.
type DeviceParseError = backend.ParseError

// MustDevice is ParseDevice that panics on a malformed string.
func MustDevice(s string) Device {
	d, err := ParseDevice(s)
	if err != nil {
		panic(err)
	}
	return d
}

// DeviceError says that a device cannot be used, and why.
type DeviceError struct {
	Device Device
	Reason error
}

func (e *DeviceError) Error() string {
	return fmt.Sprintf("device %v is not available: %v", e.Device, e.Reason)
}

func (e *DeviceError) Unwrap() error { return e.Reason }

// errNoCUDABackend is the reason given when no CUDA backend is registered.
var errNoCUDABackend = fmt.Errorf("this build of ember has no CUDA backend")

// CheckDevice returns nil when dev can be used, else a *DeviceError saying
// why not (no driver, only N devices, ...).
func CheckDevice(dev Device) error {
	b, ok := backend.Get(dev.Type)
	if !ok {
		reason := fmt.Errorf("no backend for %v", dev.Type)
		if dev.Type == backend.CUDAType {
			reason = errNoCUDABackend
		}
		return &DeviceError{Device: dev, Reason: reason}
	}
	if dev.Type != backend.CUDAType && dev.Index != 0 {
		return &DeviceError{Device: dev, Reason: fmt.Errorf("%v has only index 0", dev.Type)}
	}
	if err := b.Check(dev); err != nil {
		return &DeviceError{Device: dev, Reason: err}
	}
	return nil
}

func backendOf(dev Device) backend.Backend {
	if err := CheckDevice(dev); err != nil {
		panic(err)
	}
	b, _ := backend.Get(dev.Type)
	return b
}

// DeviceCount returns the number of CUDA devices (0 when CUDA is unusable).
func DeviceCount() int {
	n, _ := cudaCount()
	return n
}

func cudaCount() (int, error) {
	b, ok := backend.Get(backend.CUDAType)
	if !ok {
		return 0, errNoCUDABackend
	}
	return b.Count()
}

// CUDAAvailable reports whether at least one CUDA device can be used.
func CUDAAvailable() bool { return DeviceCount() > 0 }

var fallbackOnce sync.Once

func logFallback(wanted string, reason error) {
	fallbackOnce.Do(func() {
		slog.Info("ember: falling back to the CPU", "wanted", wanted, "reason", reason.Error())
	})
}

// TryGPU returns cuda:i if that device exists and can be opened (CheckDevice),
// else cpu. The first fallback is logged (log/slog, level info: a CPU run is
// not a problem) with the reason.
func TryGPU(i int) Device {
	n, err := cudaCount()
	if i >= 0 && i < n {
		if err = CheckDevice(CUDA(i)); err == nil {
			return CUDA(i)
		}
	}
	if err == nil {
		err = fmt.Errorf("only %d CUDA device(s)", n)
	}
	logFallback(CUDA(i).String(), err)
	return CPU
}

// TryAllGPUs returns the CUDA devices that can be opened (CheckDevice), in
// order, or [cpu] when none can. The first fallback is logged as TryGPU's
// is; the first time counted devices are left out because they cannot be
// opened (a GPU in exclusive mode, a faulted one), that is logged too, at
// level warn, with each one's reason.
func TryAllGPUs() []Device {
	n, err := cudaCount()
	var ds []Device
	var failed []error
	for i := 0; i < n; i++ {
		if cerr := CheckDevice(CUDA(i)); cerr != nil {
			failed = append(failed, cerr)
			continue
		}
		ds = append(ds, CUDA(i))
	}
	if len(ds) == 0 {
		switch {
		case len(failed) > 0:
			err = errors.Join(failed...)
		case err == nil:
			err = fmt.Errorf("no CUDA device")
		}
		logFallback("all GPUs", err)
		return []Device{CPU}
	}
	if len(failed) > 0 {
		skipOnce.Do(func() {
			slog.Warn("ember: leaving out CUDA devices that cannot be used", "using", fmt.Sprint(ds), "reason", errors.Join(failed...).Error())
		})
	}
	return ds
}

var skipOnce sync.Once

// Synchronize waits for all work queued on dev (a no-op on the CPU).
func Synchronize(dev Device) error {
	if err := CheckDevice(dev); err != nil {
		return err
	}
	b, _ := backend.Get(dev.Type)
	if err := b.Synchronize(dev); err != nil {
		return err
	}
	return flushChecks(dev)
}
