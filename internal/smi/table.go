package smi

import (
	"fmt"
	"io"
	"strings"
)

// The default view is laid out as nvidia-smi 535 lays it out: 89 columns,
// three boxes per GPU (41, 22 and 22 columns wide between the bars).
const (
	tableWidth = 89
	box1       = 41
	box2       = 22
	box3       = 22
	na         = "N/A"
)

var (
	ruleTop    = "+" + strings.Repeat("-", tableWidth-2) + "+"
	ruleHeader = "|" + strings.Repeat("-", box1) + "+" + strings.Repeat("-", box2) + "+" + strings.Repeat("-", box3) + "+"
	ruleDouble = "|" + strings.Repeat("=", box1) + "+" + strings.Repeat("=", box2) + "+" + strings.Repeat("=", box3) + "|"
	ruleGPU    = "+" + strings.Repeat("-", box1) + "+" + strings.Repeat("-", box2) + "+" + strings.Repeat("-", box3) + "+"
	ruleProcs  = "|" + strings.Repeat("=", tableWidth-2) + "|"
)

// padRight pads s with spaces to w columns (longer strings are left whole).
func padRight(s string, w int) string {
	if len(s) >= w {
		return s
	}
	return s + strings.Repeat(" ", w-len(s))
}

// padLeft right-aligns s in w columns.
func padLeft(s string, w int) string {
	if len(s) >= w {
		return s
	}
	return strings.Repeat(" ", w-len(s)) + s
}

// wide is one full-width row: "| " + s padded + "|".
func wide(s string) string { return "|" + padRight(s, tableWidth-2) + "|" }

func row(a, b, c string) string {
	return "|" + padRight(a, box1) + "|" + padRight(b, box2) + "|" + padRight(c, box3) + "|"
}

func onOff(b *bool) string {
	switch {
	case b == nil:
		return na
	case *b:
		return "On"
	}
	return "Off"
}

func enabled(b *bool) string {
	switch {
	case b == nil:
		return na
	case *b:
		return "Enabled"
	}
	return "Disabled"
}

func u32(v *uint32, unit string) string {
	if v == nil {
		return na
	}
	return fmt.Sprintf("%d%s", *v, unit)
}

func watts(mw *uint32) string {
	if mw == nil {
		return na
	}
	return fmt.Sprintf("%dW", *mw/1000)
}

func mibs(b *uint64) string {
	if b == nil {
		return na
	}
	return fmt.Sprintf("%dMiB", *b/mib)
}

// truncName shortens a GPU name to nvidia-smi's 27 columns
// ("NVIDIA RTX 4000 SFF Ada Generation" → "NVIDIA RTX 4000 SFF Ada ...").
func truncName(s string) string {
	if len(s) > 27 {
		return s[:24] + "..."
	}
	return s
}

// truncProcess keeps the end of a process path in 38 columns, as nvidia-smi does.
func truncProcess(s string) string {
	if len(s) > 38 {
		return "..." + s[len(s)-35:]
	}
	return s
}

// DateFormat is the layout of the date line above the table (nvidia-smi's
// ctime-style "Fri Mar  7 09:05:03 2025").
const DateFormat = "Mon Jan _2 15:04:05 2006"

// WriteTable renders s as nvidia-smi's default view. The date line comes from
// s.Time, in its own location.
func WriteTable(w io.Writer, s *Snapshot) error {
	var b strings.Builder
	line := func(l string) { b.WriteString(l); b.WriteByte('\n') }

	// nvidia-smi pads the date line with seven spaces.
	line(s.Time.Format(DateFormat) + "       ")
	line(ruleTop)
	driver, cuda := s.DriverVersion, s.CUDAVersion
	if driver == "" {
		driver = na
	}
	if cuda == "" {
		cuda = na
	}
	line(fmt.Sprintf("| NVIDIA-SMI %-23sDriver Version: %-13sCUDA Version: %-9s|", driver+" ", driver+" ", cuda+" "))
	if len(s.GPUs) == 0 {
		line(ruleTop)
		line("No devices were found")
		_, err := io.WriteString(w, b.String())
		return err
	}
	line(ruleHeader)
	line("| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |")
	line("| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |")
	line("|                                         |                      |               MIG M. |")
	line(ruleDouble)
	for _, g := range s.GPUs {
		ecc := na
		if g.ECCEnabled != nil && !*g.ECCEnabled {
			ecc = "Off"
		} else if g.ECCEnabled != nil && g.ECCUncorrected != nil {
			ecc = fmt.Sprint(*g.ECCUncorrected)
		}
		bus := g.BusID
		if bus == "" {
			bus = na
		}
		line(row(
			fmt.Sprintf(" %3d  %-31s%-3s ", g.Index, truncName(g.Name), onOff(g.Persistence)),
			fmt.Sprintf(" %-16s %3s ", bus, onOff(g.DisplayActive)),
			fmt.Sprintf(" %20s ", ecc)))

		perf := na
		if g.PerfState != nil {
			perf = fmt.Sprintf("P%d", *g.PerfState)
		}
		power := fmt.Sprintf("%s / %4s", watts(g.PowerDrawMilliW), watts(g.PowerLimitMilliW))
		mem := fmt.Sprintf("%s / %s", na, na)
		if g.MemoryUsed != nil && g.MemoryTotal != nil {
			mem = fmt.Sprintf("%5dMiB / %5dMiB", *g.MemoryUsed/mib, *g.MemoryTotal/mib)
		}
		compute := na
		if g.ComputeMode != nil {
			compute = g.ComputeMode.short()
		}
		line(row(
			fmt.Sprintf(" %3s   %3s    %-4s%22s ", u32(g.FanPercent, "%"), u32(g.TemperatureC, "C"), perf, power),
			padLeft(mem, box2-1)+" ",
			fmt.Sprintf("%8s %12s ", u32(g.UtilGPU, "%"), compute)))

		line(row("", "", fmt.Sprintf(" %20s ", enabled(g.MIGEnabled))))
		line(ruleGPU)
	}
	line(strings.Repeat(" ", tableWidth))
	line(ruleTop)
	line(wide(" Processes:"))
	line("|  GPU   GI   CI        PID   Type   Process name                            GPU Memory |")
	line("|        ID   ID                                                             Usage      |")
	line(ruleProcs)
	if len(s.Processes) == 0 {
		line(wide("  No running processes found"))
	}
	for _, p := range s.Processes {
		line(fmt.Sprintf("|%5d%6s%5s%10d%7s   %-38s%12s |",
			p.GPU, u32(p.GPUInstanceID, ""), u32(p.ComputeInstanceID, ""), p.PID, p.Type,
			truncProcess(p.Name), mibs(p.UsedMemory)))
	}
	line(ruleTop)
	_, err := io.WriteString(w, b.String())
	return err
}
