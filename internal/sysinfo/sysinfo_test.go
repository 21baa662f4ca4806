package sysinfo

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

func TestParseModel(t *testing.T) {
	x86 := "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel\t\t: 85\nmodel name\t: Intel(R) Xeon(R)  Gold 6148 CPU @ 2.40GHz\n\nprocessor\t: 1\nmodel name\t: other\n"
	if got := ParseModel(strings.NewReader(x86)); got != "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz" {
		t.Errorf("x86: %q", got)
	}
	arm := "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\nCPU part\t: 0xd0c\n\nHardware\t: BCM2835\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n"
	if got := ParseModel(strings.NewReader(arm)); got != "Raspberry Pi 4 Model B Rev 1.4" {
		t.Errorf("arm: %q", got)
	}
	if got := ParseModel(strings.NewReader("processor: 0\n")); got != "" {
		t.Errorf("none: %q", got)
	}
}

func TestHostCPU(t *testing.T) {
	c := HostCPU()
	if c.LogicalCores != runtime.NumCPU() || c.Model == "" {
		t.Fatalf("%+v", c)
	}
	if runtime.GOARCH == "arm64" && (len(c.Features) == 0 || c.Features[0] != "ASIMD") {
		t.Fatalf("arm64 without ASIMD: %v", c.Features)
	}
	t.Logf("%+v", c)
}

// TestFeaturesMatchKernelFlags compares the x86 features with the flags the
// Linux kernel prints in /proc/cpuinfo (the kernel also hides what the OS
// does not enable, as Go's detection does).
func TestFeaturesMatchKernelFlags(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("x86 only")
	}
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skip(err)
	}
	flags := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			for _, f := range strings.Fields(v) {
				flags[f] = true
			}
			break
		}
	}
	kernel := map[string]string{
		"SSE4.1": "sse4_1", "SSE4.2": "sse4_2", "AVX": "avx", "AVX2": "avx2", "FMA": "fma", "F16C": "f16c",
		"AVX512F": "avx512f", "AVX512BW": "avx512bw", "AVX512VL": "avx512vl", "AVX512DQ": "avx512dq",
		"AVX512VNNI": "avx512_vnni", "AVX512BF16": "avx512_bf16", "AMX-TILE": "amx_tile", "AMX-BF16": "amx_bf16",
	}
	have := map[string]bool{}
	for _, f := range Features() {
		have[f] = true
	}
	for name, flag := range kernel {
		if have[name] != flags[flag] {
			t.Errorf("%s: ember says %v, /proc/cpuinfo flag %s says %v", name, have[name], flag, flags[flag])
		}
	}
}
