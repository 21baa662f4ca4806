// Package sysinfo describes the host CPU for `ember info` and for choosing
// CPU kernels: model name, logical cores and the SIMD features Go detects.
package sysinfo

import (
	"bufio"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/cpu"
)

// CPU describes the host processor.
type CPU struct {
	Model        string   `json:"model"`         // e.g. "AMD EPYC 7B13", or "unknown"
	LogicalCores int      `json:"logical_cores"` // runtime.NumCPU: the cores this process may use
	Features     []string `json:"simd"`          // SIMD features present, e.g. ["AVX2", "FMA", "AVX512F"]
}

// HostCPU reads /proc/cpuinfo (when there is one) and the feature bits of
// golang.org/x/sys/cpu.
func HostCPU() CPU {
	c := CPU{Model: "unknown", LogicalCores: runtime.NumCPU(), Features: Features()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		if m := ParseModel(f); m != "" {
			c.Model = m
		}
	}
	return c
}

// ParseModel returns the CPU model from /proc/cpuinfo text: the "model name"
// line on x86, else "Model" or "Hardware" (arm64 boards), else "".
func ParseModel(r interface{ Read([]byte) (int, error) }) string {
	found := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if v != "" && found[k] == "" {
			found[k] = v
		}
	}
	for _, k := range []string{"model name", "Model", "Hardware", "cpu model"} {
		if v := found[k]; v != "" {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return ""
}

// Features lists the SIMD extensions of this CPU that matter to ember's
// kernels, in a fixed order.
func Features() []string {
	var out []string
	add := func(name string, has bool) {
		if has {
			out = append(out, name)
		}
	}
	switch runtime.GOARCH {
	case "amd64", "386":
		x := cpu.X86
		add("SSE4.1", x.HasSSE41)
		add("SSE4.2", x.HasSSE42)
		add("AVX", x.HasAVX)
		add("AVX2", x.HasAVX2)
		add("FMA", x.HasFMA)
		add("F16C", x.HasF16C)
		add("AVX512F", x.HasAVX512F)
		add("AVX512BW", x.HasAVX512BW)
		add("AVX512VL", x.HasAVX512VL)
		add("AVX512DQ", x.HasAVX512DQ)
		add("AVX512VNNI", x.HasAVX512VNNI)
		add("AVX512BF16", x.HasAVX512BF16)
		add("AMX-TILE", x.HasAMXTile)
		add("AMX-BF16", x.HasAMXBF16)
	case "arm64":
		a := cpu.ARM64
		add("ASIMD", a.HasASIMD)
		add("FPHP", a.HasFPHP)
		add("ASIMDHP", a.HasASIMDHP)
		add("ASIMDDP", a.HasASIMDDP)
		add("SVE", a.HasSVE)
		add("SVE2", a.HasSVE2)
	}
	return out
}
