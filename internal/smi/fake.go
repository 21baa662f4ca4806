package smi

import "time"

// FakeTime is the moment the Fake machine's snapshots are stamped with.
var FakeTime = time.Date(2025, time.March, 7, 9, 5, 3, 0, time.UTC)

// Fake is a canned two-GPU machine: GPU 0 an NVIDIA H100 80GB HBM3 with MIG
// on and no fan (its fan reads N/A), GPU 1 an NVIDIA GeForce RTX 4090 with a
// fan and no ECC; three compute processes. Its snapshots are stamped FakeTime.
type Fake struct {
	// Time, when not zero, replaces FakeTime.
	Time time.Time
}

// Close does nothing.
func (Fake) Close() error { return nil }

func ptr[T any](v T) *T { return &v }

// Snapshot returns the canned machine; each call returns a fresh copy.
func (f Fake) Snapshot() (*Snapshot, error) {
	t := f.Time
	if t.IsZero() {
		t = FakeTime
	}
	return &Snapshot{
		Time:          t,
		DriverVersion: "535.154.05",
		CUDAVersion:   "12.2",
		GPUs: []GPU{{
			Index:            0,
			Name:             "NVIDIA H100 80GB HBM3",
			UUID:             "GPU-5d7a8c3e-1f2b-4c6d-9e0f-a1b2c3d4e5f6",
			BusID:            "00000000:18:00.0",
			Persistence:      ptr(true),
			DisplayActive:    ptr(false),
			ECCEnabled:       ptr(true),
			ECCUncorrected:   ptr(uint64(0)),
			FanPercent:       nil, // passively cooled: NVML_ERROR_NOT_SUPPORTED
			TemperatureC:     ptr(uint32(33)),
			PerfState:        ptr(0),
			PowerDrawMilliW:  ptr(uint32(71234)),
			PowerLimitMilliW: ptr(uint32(700000)),
			MemoryTotal:      ptr(uint64(81559 * mib)),
			MemoryUsed:       ptr(uint64(1024 * mib)),
			MemoryFree:       ptr(uint64(80535 * mib)),
			UtilGPU:          ptr(uint32(37)),
			UtilMemory:       ptr(uint32(5)),
			ComputeMode:      ptr(ComputeDefault),
			MIGEnabled:       ptr(true),
		}, {
			Index:            1,
			Name:             "NVIDIA GeForce RTX 4090",
			UUID:             "GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9",
			BusID:            "00000000:3B:00.0",
			Persistence:      ptr(false),
			DisplayActive:    ptr(false),
			ECCEnabled:       ptr(false),
			ECCUncorrected:   nil,
			FanPercent:       ptr(uint32(30)),
			TemperatureC:     ptr(uint32(61)),
			PerfState:        ptr(2),
			PowerDrawMilliW:  ptr(uint32(287500)),
			PowerLimitMilliW: ptr(uint32(450000)),
			MemoryTotal:      ptr(uint64(24564 * mib)),
			MemoryUsed:       ptr(uint64(20993 * mib)),
			MemoryFree:       ptr(uint64(3571 * mib)),
			UtilGPU:          ptr(uint32(98)),
			UtilMemory:       ptr(uint32(41)),
			ComputeMode:      ptr(ComputeDefault),
			MIGEnabled:       nil, // GeForce cards have no MIG
		}},
		Processes: []Process{
			{GPU: 0, GPUInstanceID: ptr(uint32(1)), ComputeInstanceID: ptr(uint32(0)), PID: 41233, Type: "C",
				Name: "/usr/bin/python3", UsedMemory: ptr(uint64(1010 * mib))},
			{GPU: 1, PID: 5120, Type: "C",
				Name: "/home/alice/miniconda3/envs/ember/bin/python3.11", UsedMemory: ptr(uint64(18432 * mib))},
			{GPU: 1, PID: 7781, Type: "C", Name: "ember", UsedMemory: ptr(uint64(2048 * mib))},
		},
	}, nil
}
