package smi

import (
	"fmt"
	"io"
	"strings"
)

// Field is one --query-gpu property, named as nvidia-smi names it.
type Field struct {
	Name    string   // canonical name, printed in the header: "memory.used"
	Aliases []string // other names nvidia-smi accepts: "gpu_name" for "name"
	Unit    string   // header unit ("MiB" prints "memory.used [MiB]"); "" for none
	Help    string
	// value returns the field's text without its unit, or ok=false for [N/A].
	value func(s *Snapshot, g *GPU) (v string, ok bool)
}

func str(v string) (string, bool)     { return v, v != "" }
func optU32(v *uint32) (string, bool) { return optFmt(v, "%d") }
func optMiB(v *uint64) (string, bool) {
	return optVal(v, func(b uint64) string { return fmt.Sprint(b / mib) })
}
func optWatts(v *uint32) (string, bool) {
	return optVal(v, func(mw uint32) string { return fmt.Sprintf("%.2f", float64(mw)/1000) })
}
func optEnabled(v *bool) (string, bool) { return optVal(v, func(b bool) string { return enabled(&b) }) }
func optFmt[T any](v *T, f string) (string, bool) {
	return optVal(v, func(x T) string { return fmt.Sprintf(f, x) })
}
func optVal[T any](v *T, f func(T) string) (string, bool) {
	if v == nil {
		return "", false
	}
	return f(*v), true
}

// Fields are the --query-gpu properties ember smi knows, in nvidia-smi's
// names, units and value formats.
var Fields = []Field{
	{Name: "timestamp", Help: "time of the query, YYYY/MM/DD HH:MM:SS.msec",
		value: func(s *Snapshot, _ *GPU) (string, bool) { return s.Time.Format("2006/01/02 15:04:05.000"), true }},
	{Name: "driver_version", Help: "installed NVIDIA display driver version",
		value: func(s *Snapshot, _ *GPU) (string, bool) { return str(s.DriverVersion) }},
	{Name: "count", Help: "number of NVIDIA GPUs in the system",
		value: func(s *Snapshot, _ *GPU) (string, bool) { return fmt.Sprint(len(s.GPUs)), true }},
	{Name: "index", Help: "zero-based index of the GPU",
		value: func(_ *Snapshot, g *GPU) (string, bool) { return fmt.Sprint(g.Index), true }},
	{Name: "name", Aliases: []string{"gpu_name"}, Help: "product name of the GPU",
		value: func(_ *Snapshot, g *GPU) (string, bool) { return str(g.Name) }},
	{Name: "uuid", Aliases: []string{"gpu_uuid"}, Help: "globally unique immutable identifier of the GPU",
		value: func(_ *Snapshot, g *GPU) (string, bool) { return str(g.UUID) }},
	{Name: "pci.bus_id", Aliases: []string{"gpu_bus_id"}, Help: "PCI bus id as domain:bus:device.function, in hex",
		value: func(_ *Snapshot, g *GPU) (string, bool) { return str(g.BusID) }},
	{Name: "persistence_mode", Help: "whether persistence mode is enabled",
		value: func(_ *Snapshot, g *GPU) (string, bool) { return optEnabled(g.Persistence) }},
	{Name: "display_active", Help: "whether a display is initialized on the GPU",
		value: func(_ *Snapshot, g *GPU) (string, bool) { return optEnabled(g.DisplayActive) }},
	{Name: "fan.speed", Unit: "%", Help: "intended fan speed, percent of maximum",
		value: func(_ *Snapshot, g *GPU) (string, bool) { return optU32(g.FanPercent) }},
	{Name: "pstate", Help: "performance state, P0 (maximum) to P12 (minimum)",
		value: func(_ *Snapshot, g *GPU) (string, bool) { return optFmt(g.PerfState, "P%d") }},
	{Name: "memory.total", Unit: "MiB", Help: "total installed GPU memory",
		value: func(_ *Snapshot, g *GPU) (string, bool) { return optMiB(g.MemoryTotal) }},
	{Name: "memory.used", Unit: "MiB", Help: "total memory allocated by active contexts",
		value: func(_ *Snapshot, g *GPU) (string, bool) { return optMiB(g.MemoryUsed) }},
	{Name: "memory.free", Unit: "MiB", Help: "total free memory",
		value: func(_ *Snapshot, g *GPU) (string, bool) { return optMiB(g.MemoryFree) }},
	{Name: "compute_mode", Help: "Default, Exclusive_Thread, Prohibited or Exclusive_Process",
		value: func(_ *Snapshot, g *GPU) (string, bool) {
			return optVal(g.ComputeMode, func(m ComputeMode) string { return string(m) })
		}},
	{Name: "utilization.gpu", Unit: "%", Help: "percent of time a kernel was running over the last sample period",
		value: func(_ *Snapshot, g *GPU) (string, bool) { return optU32(g.UtilGPU) }},
	{Name: "utilization.memory", Unit: "%", Help: "percent of time device memory was read or written over the last sample period",
		value: func(_ *Snapshot, g *GPU) (string, bool) { return optU32(g.UtilMemory) }},
	{Name: "ecc.mode.current", Help: "whether ECC is enabled",
		value: func(_ *Snapshot, g *GPU) (string, bool) { return optEnabled(g.ECCEnabled) }},
	{Name: "ecc.errors.uncorrected.volatile.total", Help: "uncorrected ECC errors since the driver loaded",
		value: func(_ *Snapshot, g *GPU) (string, bool) { return optFmt(g.ECCUncorrected, "%d") }},
	{Name: "temperature.gpu", Help: "core GPU temperature, degrees C",
		value: func(_ *Snapshot, g *GPU) (string, bool) { return optU32(g.TemperatureC) }},
	{Name: "power.draw", Unit: "W", Help: "power draw of the board, watts",
		value: func(_ *Snapshot, g *GPU) (string, bool) { return optWatts(g.PowerDrawMilliW) }},
	{Name: "power.limit", Unit: "W", Help: "enforced power limit, watts",
		value: func(_ *Snapshot, g *GPU) (string, bool) { return optWatts(g.PowerLimitMilliW) }},
	{Name: "mig.mode.current", Help: "MIG mode the GPU is in: Enabled or Disabled",
		value: func(_ *Snapshot, g *GPU) (string, bool) { return optEnabled(g.MIGEnabled) }},
}

// FieldError is an unknown --query-gpu field.
type FieldError struct {
	Field string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("unknown --query-gpu field %q; valid fields: %s", e.Field, strings.Join(FieldNames(), ", "))
}

// FieldNames lists every valid field name, aliases included.
func FieldNames() []string {
	var out []string
	for _, f := range Fields {
		out = append(out, f.Name)
		out = append(out, f.Aliases...)
	}
	return out
}

// ParseQuery parses a --query-gpu list ("name,memory.used"). Names are
// matched case-insensitively; an unknown one is a *FieldError.
func ParseQuery(q string) ([]Field, error) {
	var out []Field
	for _, name := range strings.Split(q, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		f, ok := lookupField(name)
		if !ok {
			return nil, &FieldError{Field: name}
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--query-gpu needs at least one field; valid fields: %s", strings.Join(FieldNames(), ", "))
	}
	return out, nil
}

func lookupField(name string) (Field, bool) {
	for _, f := range Fields {
		if strings.EqualFold(f.Name, name) {
			return f, true
		}
		for _, a := range f.Aliases {
			if strings.EqualFold(a, name) {
				return f, true
			}
		}
	}
	return Field{}, false
}

// CSVFormat is a parsed --format: csv with optional noheader and nounits.
type CSVFormat struct {
	NoHeader bool
	NoUnits  bool
}

// ParseFormat parses --format=csv[,noheader][,nounits].
func ParseFormat(s string) (CSVFormat, error) {
	var f CSVFormat
	sawCSV := false
	for _, part := range strings.Split(s, ",") {
		switch strings.ToLower(strings.TrimSpace(part)) {
		case "csv":
			sawCSV = true
		case "noheader":
			f.NoHeader = true
		case "nounits":
			f.NoUnits = true
		default:
			return f, fmt.Errorf("invalid --format %q: want csv, optionally with noheader and nounits (csv,noheader,nounits)", s)
		}
	}
	if !sawCSV {
		return f, fmt.Errorf("invalid --format %q: csv is the only format (csv,noheader,nounits)", s)
	}
	return f, nil
}

// WriteCSV writes one line per GPU of s with the fields asked for, as
// nvidia-smi --query-gpu --format=csv does: ", " between values, a header
// naming each field with its unit in brackets ("memory.used [MiB]"), values
// with their unit after a space ("1024 MiB") unless NoUnits, and [N/A] for
// what the card does not report. NoUnits drops the units from the values
// only; the header keeps them, as nvidia-smi's does.
func WriteCSV(w io.Writer, s *Snapshot, fields []Field, f CSVFormat) error {
	var b strings.Builder
	if !f.NoHeader {
		for i, fl := range fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(fl.Name)
			if fl.Unit != "" {
				b.WriteString(" [" + fl.Unit + "]")
			}
		}
		b.WriteByte('\n')
	}
	for gi := range s.GPUs {
		g := &s.GPUs[gi]
		for i, fl := range fields {
			if i > 0 {
				b.WriteString(", ")
			}
			v, ok := fl.value(s, g)
			switch {
			case !ok:
				b.WriteString("[N/A]")
			case fl.Unit != "" && !f.NoUnits:
				b.WriteString(v + " " + fl.Unit)
			default:
				b.WriteString(v)
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
