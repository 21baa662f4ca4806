package driver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/emberml/ember/internal/cuda/libpath"
)

// Report is what Probe found out about CUDA on this machine. It never holds a
// half-read device: a device whose queries fail carries the first error.
type Report struct {
	// Library
	Found    bool   `json:"found"`               // libcuda was opened
	Path     string `json:"path,omitempty"`      // the file opened
	RealPath string `json:"real_path,omitempty"` // the file behind Path's symlinks
	Source   string `json:"source,omitempty"`    // which part of the search order found it
	LoadErr  error  `json:"-"`                   // why it was not opened; often a *libpath.NotFoundError
	Resolved int    `json:"symbols_resolved"`    // entry points of the binding found in the library
	Symbols  int    `json:"symbols_total"`       // size of the binding table
	Missing  error  `json:"-"`                   // a *MissingSymbolsError, if any required one is missing

	// Driver
	DriverVersion int          `json:"driver_version"`        // e.g. 12020
	Version       string       `json:"driver_version_string"` // e.g. "12.2"
	VersionErr    error        `json:"-"`                     // cuDriverGetVersion's failure, if any
	InitErr       *Error       `json:"init_error,omitempty"`  // cuInit's CUresult when not CUDA_SUCCESS
	InitOtherErr  error        `json:"-"`                     // cuInit could not be called at all
	DeviceCount   int          `json:"device_count"`          // cuDeviceGetCount, 0 when cuInit failed
	CountErr      error        `json:"-"`                     // cuDeviceGetCount's failure, if any
	Devices       []DeviceInfo `json:"devices"`
}

// DeviceInfo describes one device.
type DeviceInfo struct {
	Ordinal             int    `json:"ordinal"`
	Name                string `json:"name"`
	ComputeMajor        int    `json:"compute_major"`
	ComputeMinor        int    `json:"compute_minor"`
	TotalMem            uint64 `json:"total_mem"` // bytes
	MultiprocessorCount int    `json:"multiprocessors"`
	MaxThreadsPerBlock  int    `json:"max_threads_per_block"`
	WarpSize            int    `json:"warp_size"`
	SharedMemPerBlock   int    `json:"shared_mem_per_block"` // bytes, without opt-in
	PCIBusID            string `json:"pci_bus_id"`
	UUID                string `json:"uuid,omitempty"`
	Err                 error  `json:"-"` // the first query that failed, if any
}

// ComputeCapability formats the compute capability, e.g. "9.0".
func (di DeviceInfo) ComputeCapability() string {
	return fmt.Sprintf("%d.%d", di.ComputeMajor, di.ComputeMinor)
}

// Usable reports whether CUDA can run work: the library loaded, cuInit
// succeeded and there is at least one device.
func (r *Report) Usable() bool {
	return r.Found && r.InitErr == nil && r.InitOtherErr == nil && r.CountErr == nil && r.DeviceCount > 0
}

// Reason says in one line why CUDA is not usable, e.g. "cuInit failed:
// CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected"; it is
// empty when Usable.
func (r *Report) Reason() string {
	switch {
	case !r.Found:
		var nf *libpath.NotFoundError
		if errors.As(r.LoadErr, &nf) {
			return nf.Error()
		}
		if r.LoadErr != nil {
			return "libcuda could not be loaded: " + r.LoadErr.Error()
		}
		return "libcuda could not be loaded"
	case r.InitErr != nil:
		return "cuInit failed: " + strings.TrimPrefix(r.InitErr.Error(), r.InitErr.Call+": ")
	case r.InitOtherErr != nil:
		return "cuInit could not be called: " + r.InitOtherErr.Error()
	case r.CountErr != nil:
		return "cuDeviceGetCount failed: " + r.CountErr.Error()
	case r.DeviceCount == 0:
		return "no CUDA devices"
	}
	return ""
}

// Probe loads libcuda, initializes it and describes every device, for
// `ember info`. It does not panic and does not create contexts.
func Probe() Report { return probe(Load) }

func probe(load func() (*Driver, error)) (r Report) {
	defer func() {
		if pv := recover(); pv != nil {
			r.InitOtherErr = fmt.Errorf("cuda driver: probe panicked: %v", pv)
		}
	}()
	r.Symbols = int(numProcs)
	d, err := load()
	if err != nil {
		r.LoadErr = err
		return r
	}
	r.Found, r.Path, r.RealPath, r.Source = true, d.Path, d.RealPath, d.Source
	r.Missing = d.ResolveAll()
	r.Resolved, _ = d.Resolved()
	if v, err := d.DriverGetVersion(); err != nil {
		r.VersionErr = err
	} else {
		r.DriverVersion, r.Version = v, VersionString(v)
	}
	if err := d.Init(); err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			r.InitErr = ce
		} else {
			r.InitOtherErr = err
		}
		return r
	}
	n, err := d.DeviceGetCount()
	if err != nil {
		r.CountErr = err
		return r
	}
	r.DeviceCount = n
	r.Devices = make([]DeviceInfo, 0, n)
	for i := 0; i < n; i++ {
		r.Devices = append(r.Devices, d.describe(i))
	}
	return r
}

// describe fills a DeviceInfo, stopping at the first failed query.
func (d *Driver) describe(ordinal int) DeviceInfo {
	di := DeviceInfo{Ordinal: ordinal}
	dev, err := d.DeviceGet(ordinal)
	if err != nil {
		di.Err = err
		return di
	}
	steps := []func() error{
		func() (err error) { di.Name, err = d.DeviceGetName(dev); return },
		func() (err error) { di.ComputeMajor, di.ComputeMinor, err = d.DeviceComputeCapability(dev); return },
		func() (err error) { di.TotalMem, err = d.DeviceTotalMem(dev); return },
		func() (err error) {
			di.MultiprocessorCount, err = d.DeviceGetAttribute(AttrMultiprocessorCount, dev)
			return
		},
		func() (err error) {
			di.MaxThreadsPerBlock, err = d.DeviceGetAttribute(AttrMaxThreadsPerBlock, dev)
			return
		},
		func() (err error) { di.WarpSize, err = d.DeviceGetAttribute(AttrWarpSize, dev); return },
		func() (err error) {
			di.SharedMemPerBlock, err = d.DeviceGetAttribute(AttrMaxSharedMemoryPerBlock, dev)
			return
		},
		func() (err error) { di.PCIBusID, err = d.DeviceGetPCIBusID(dev); return },
		func() error {
			u, err := d.DeviceGetUUID(dev)
			if err == nil {
				di.UUID = u.String()
			}
			return err
		},
	}
	for _, s := range steps {
		if err := s(); err != nil {
			di.Err = err
			break
		}
	}
	return di
}
