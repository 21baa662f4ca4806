package smi

import (
	"fmt"
	"time"

	"github.com/emberml/ember/internal/cuda/nvml"
)

// NVML is the real Source: it reads the machine through libnvidia-ml.so.1.
type NVML struct {
	lib *nvml.Lib
	// Now stamps snapshots; time.Now when nil.
	Now func() time.Time
}

// OpenNVML loads NVML and initializes it. A missing library is a
// *libpath.NotFoundError; a machine without a loaded driver gives an
// *nvml.Error with code NVML_ERROR_DRIVER_NOT_LOADED. Diagnose turns either
// into nvidia-smi's message and exit status.
func OpenNVML() (*NVML, error) {
	lib, err := nvml.Open()
	if err != nil {
		return nil, err
	}
	if err := lib.Init(); err != nil {
		return nil, err
	}
	return &NVML{lib: lib}, nil
}

// Close is nvmlShutdown.
func (n *NVML) Close() error { return n.lib.Shutdown() }

// opt keeps a value NVML returned, or nil when the call failed (most often
// NVML_ERROR_NOT_SUPPORTED: the card does not report it).
func opt[T any](v T, err error) *T {
	if err != nil {
		return nil
	}
	return &v
}

// Snapshot reads every GPU and its compute processes.
func (n *NVML) Snapshot() (*Snapshot, error) {
	now := time.Now
	if n.Now != nil {
		now = n.Now
	}
	s := &Snapshot{Time: now(), GPUs: []GPU{}, Processes: []Process{}}
	s.DriverVersion, _ = n.lib.DriverVersion()
	if v, err := n.lib.CUDADriverVersion(); err == nil {
		s.CUDAVersion = FormatCUDAVersion(v)
	}
	count, err := n.lib.DeviceCount()
	if err != nil {
		return nil, err
	}
	for i := 0; i < count; i++ {
		d, err := n.lib.DeviceByIndex(i)
		if err != nil {
			return nil, fmt.Errorf("GPU %d: %w", i, err)
		}
		g := GPU{Index: i}
		g.Name, _ = d.Name()
		g.UUID, _ = d.UUID()
		if pci, err := d.PciInfo(); err == nil {
			g.BusID = pci.BusID
		}
		g.Persistence = opt(d.PersistenceMode())
		g.DisplayActive = opt(d.DisplayActive())
		if cur, _, err := d.EccMode(); err == nil {
			g.ECCEnabled = &cur
			if cur {
				g.ECCUncorrected = opt(d.VolatileUncorrectedECCErrors())
			}
		}
		g.FanPercent = opt(d.FanSpeed())
		g.TemperatureC = opt(d.Temperature())
		if p, err := d.PerformanceState(); err == nil && p >= 0 && p <= 15 {
			g.PerfState = &p
		}
		g.PowerDrawMilliW = opt(d.PowerUsage())
		g.PowerLimitMilliW = opt(d.EnforcedPowerLimit())
		if g.PowerLimitMilliW == nil {
			g.PowerLimitMilliW = opt(d.PowerManagementLimit())
		}
		if m, err := d.MemoryInfo(); err == nil {
			g.MemoryTotal, g.MemoryUsed, g.MemoryFree = &m.Total, &m.Used, &m.Free
		}
		if u, err := d.UtilizationRates(); err == nil {
			g.UtilGPU, g.UtilMemory = &u.GPU, &u.Memory
		}
		if m, err := d.ComputeMode(); err == nil {
			cm := map[nvml.ComputeMode]ComputeMode{
				nvml.ComputeModeDefault: ComputeDefault, nvml.ComputeModeExclusiveThread: ComputeExclusiveThread,
				nvml.ComputeModeProhibited: ComputeProhibited, nvml.ComputeModeExclusiveProcess: ComputeExclusiveProcess,
			}[m]
			if cm != "" {
				g.ComputeMode = &cm
			}
		}
		if cur, _, err := d.MigMode(); err == nil {
			g.MIGEnabled = &cur
		}
		s.GPUs = append(s.GPUs, g)

		procs, _ := d.ComputeRunningProcesses()
		for _, p := range procs {
			sp := Process{GPU: i, PID: p.PID, Type: "C"}
			sp.Name, _ = n.lib.ProcessName(p.PID)
			if sp.Name == "" {
				sp.Name = na
			}
			if p.UsedGPUMemory != nvml.ValueNotAvailable {
				sp.UsedMemory = &p.UsedGPUMemory
			}
			if p.GPUInstanceID != nvml.NoInstanceID {
				sp.GPUInstanceID = &p.GPUInstanceID
			}
			if p.ComputeInstanceID != nvml.NoInstanceID {
				sp.ComputeInstanceID = &p.ComputeInstanceID
			}
			s.Processes = append(s.Processes, sp)
		}
	}
	return s, nil
}
