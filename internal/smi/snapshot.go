// Package smi gathers what nvidia-smi shows (driver and CUDA versions, each
// GPU's state, the compute processes) into a Snapshot from a Source, and
// renders it: nvidia-smi's default table, JSON, and --query-gpu CSV with
// nvidia-smi's field names and units. The real Source is NVML
// (internal/cuda/nvml); Fake is a canned two-GPU machine for tests and demos.
//
// A field a card does not support is nil in the Snapshot, printed N/A in the
// table, [N/A] in CSV (as nvidia-smi does) and null in JSON.
package smi

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Source produces Snapshots of a machine's GPUs.
type Source interface {
	// Snapshot reads the current state of every GPU.
	Snapshot() (*Snapshot, error)
	// Close releases the source (nvmlShutdown for NVML).
	Close() error
}

// Snapshot is the state of a machine's NVIDIA GPUs at one moment.
type Snapshot struct {
	Time          time.Time `json:"timestamp"`
	DriverVersion string    `json:"driver_version"` // "" when unknown
	CUDAVersion   string    `json:"cuda_version"`   // "12.2"; "" when unknown
	GPUs          []GPU     `json:"gpus"`
	Processes     []Process `json:"processes"`
}

// ComputeMode is a GPU's compute mode, named as nvidia-smi's CSV names it.
type ComputeMode string

// Compute modes.
const (
	ComputeDefault          ComputeMode = "Default"
	ComputeExclusiveThread  ComputeMode = "Exclusive_Thread"
	ComputeProhibited       ComputeMode = "Prohibited"
	ComputeExclusiveProcess ComputeMode = "Exclusive_Process"
)

// short is the name nvidia-smi's table uses.
func (m ComputeMode) short() string {
	switch m {
	case ComputeExclusiveThread:
		return "E. Thread"
	case ComputeExclusiveProcess:
		return "E. Process"
	}
	return string(m)
}

// GPU is one device. Pointer fields are nil where the card does not report them.
type GPU struct {
	Index            int          `json:"index"`
	Name             string       `json:"name"`
	UUID             string       `json:"uuid,omitempty"`
	BusID            string       `json:"pci_bus_id,omitempty"` // "00000000:18:00.0"
	Persistence      *bool        `json:"persistence_mode"`
	DisplayActive    *bool        `json:"display_active"`
	ECCEnabled       *bool        `json:"ecc_enabled"`
	ECCUncorrected   *uint64      `json:"ecc_errors_uncorrected_volatile"`
	FanPercent       *uint32      `json:"fan_speed_percent"`
	TemperatureC     *uint32      `json:"temperature_c"`
	PerfState        *int         `json:"pstate"` // 0 for P0
	PowerDrawMilliW  *uint32      `json:"power_draw_mw"`
	PowerLimitMilliW *uint32      `json:"power_limit_mw"`
	MemoryTotal      *uint64      `json:"memory_total_bytes"`
	MemoryUsed       *uint64      `json:"memory_used_bytes"`
	MemoryFree       *uint64      `json:"memory_free_bytes"`
	UtilGPU          *uint32      `json:"utilization_gpu_percent"`
	UtilMemory       *uint32      `json:"utilization_memory_percent"`
	ComputeMode      *ComputeMode `json:"compute_mode"`
	MIGEnabled       *bool        `json:"mig_mode_current"`
}

// Process is one process with a compute context on a GPU.
type Process struct {
	GPU               int     `json:"gpu"` // the GPU's index
	GPUInstanceID     *uint32 `json:"gpu_instance_id"`
	ComputeInstanceID *uint32 `json:"compute_instance_id"`
	PID               uint32  `json:"pid"`
	Type              string  `json:"type"` // "C" for compute
	Name              string  `json:"name"`
	UsedMemory        *uint64 `json:"used_memory_bytes"`
}

// IndexError is a GPU index that the machine does not have.
type IndexError struct {
	Index int
	Count int // GPUs on the machine
}

func (e *IndexError) Error() string {
	switch e.Count {
	case 0:
		return fmt.Sprintf("GPU index %d is out of range: no GPUs were found", e.Index)
	case 1:
		return fmt.Sprintf("GPU index %d is out of range: this machine has 1 GPU (index 0)", e.Index)
	}
	return fmt.Sprintf("GPU index %d is out of range: this machine has %d GPUs (indices 0-%d)", e.Index, e.Count, e.Count-1)
}

// ParseIndices parses nvidia-smi's -i argument: a comma-separated list of
// GPU indices ("0", "0,2"). Duplicates are dropped; the order is ascending.
func ParseIndices(s string) ([]int, error) {
	seen := map[int]bool{}
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("invalid GPU index %q in %q: want a comma-separated list of indices such as 0,1", part, s)
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out, nil
}

// Select returns a copy of s holding only the GPUs with the given indices
// and their processes. An index the machine lacks is an *IndexError. No
// indices means all GPUs.
func (s *Snapshot) Select(indices []int) (*Snapshot, error) {
	if len(indices) == 0 {
		return s, nil
	}
	byIndex := map[int]GPU{}
	for _, g := range s.GPUs {
		byIndex[g.Index] = g
	}
	out := *s
	out.GPUs, out.Processes = nil, nil
	want := map[int]bool{}
	for _, i := range indices {
		g, ok := byIndex[i]
		if !ok {
			return nil, &IndexError{Index: i, Count: len(s.GPUs)}
		}
		want[i] = true
		out.GPUs = append(out.GPUs, g)
	}
	for _, p := range s.Processes {
		if want[p.GPU] {
			out.Processes = append(out.Processes, p)
		}
	}
	return &out, nil
}

// FormatCUDAVersion turns NVML's 1000*major+10*minor (12020) into "12.2".
func FormatCUDAVersion(v int) string {
	return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
}

const mib = 1 << 20
