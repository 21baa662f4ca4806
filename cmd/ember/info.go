package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/emberml/ember/backend/cpu"
	"github.com/emberml/ember/internal/cuda/driver"
	"github.com/emberml/ember/internal/cuda/libpath"
	"github.com/emberml/ember/internal/sysinfo"
	"github.com/emberml/ember/internal/version"
)

var infoFlags struct {
	json    bool
	verbose bool
}

var infoCmd = &cobra.Command{
	Use:   "info",
	Short: "Describe this machine as ember sees it: CPU, SIMD, CUDA driver and devices",
	Long: `ember info reports ember's version, the host CPU and its SIMD features, and
what the CUDA driver library says: where libcuda was found, the driver API
version, cuInit's result and each device. When CUDA is unusable it says why in
one line. --json prints the same report as JSON; --verbose adds the library
search order and the files found in it.`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		r := collectInfo(infoFlags.verbose)
		if infoFlags.json {
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(r)
		}
		r.writeText(cmd.OutOrStdout(), infoFlags.verbose)
		return nil
	},
}

func init() {
	infoCmd.Flags().BoolVar(&infoFlags.json, "json", false, "print the report as JSON")
	infoCmd.Flags().BoolVarP(&infoFlags.verbose, "verbose", "v", false, "add the library search order and the files found")
	rootCmd.AddCommand(infoCmd)
}

// infoReport is the whole `ember info` report. Every section is a field that
// marshals to JSON and renders itself as text: to add one (NVRTC, cuBLAS,
// NVML...), add a field of a type implementing infoSection and list it in
// sections.
type infoReport struct {
	Ember  emberInfo `json:"ember"`
	Host   hostInfo  `json:"host"`
	CUDA   cudaInfo  `json:"cuda"`
	Libs   libsInfo  `json:"cuda_libraries"`
	Device string    `json:"device"` // what ember will use by default: "cpu" or "cuda:0"
}

// infoSection is one titled block of the text report.
type infoSection interface {
	title() string
	// lines returns the block's lines: a key and a value, or a free line
	// when the key is empty.
	lines(verbose bool) []infoLine
}

type infoLine struct{ key, value string }

func (r *infoReport) sections() []infoSection {
	return []infoSection{&r.Host, &r.CUDA, &r.Libs}
}

func collectInfo(verbose bool) *infoReport {
	r := &infoReport{
		Ember: emberInfo{Version: version.Version, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH},
		Host:  hostInfo{CPU: sysinfo.HostCPU()},
		CUDA:  newCUDAInfo(driver.Probe(), verbose),
		Libs:  collectLibs(),
	}
	r.Device = "cpu"
	if r.CUDA.Available {
		r.Device = "cuda:0"
	}
	return r
}

func (r *infoReport) writeText(w io.Writer, verbose bool) {
	fmt.Fprintf(w, "ember %s (%s, %s/%s)\n", r.Ember.Version, r.Ember.Go, r.Ember.OS, r.Ember.Arch)
	for _, s := range r.sections() {
		fmt.Fprintf(w, "\n%s\n", s.title())
		for _, l := range s.lines(verbose) {
			if l.key == "" {
				fmt.Fprintf(w, "  %s\n", l.value)
			} else {
				fmt.Fprintf(w, "  %-15s %s\n", l.key+":", l.value)
			}
		}
	}
	fmt.Fprintf(w, "\nember will use: %s\n", r.Device)
}

// emberInfo is the build: printed as the report's first line.
type emberInfo struct {
	Version string `json:"version"`
	Go      string `json:"go"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
}

// hostInfo is the CPU section.
type hostInfo struct {
	CPU sysinfo.CPU `json:"cpu"`
}

func (h *hostInfo) title() string { return "Host" }

func (h *hostInfo) lines(bool) []infoLine {
	simd := strings.Join(h.CPU.Features, " ")
	if simd == "" {
		simd = "none detected"
	}
	lines := []infoLine{
		{"CPU", h.CPU.Model},
		{"logical cores", fmt.Sprint(h.CPU.LogicalCores)},
		{"SIMD", simd},
		{"half matmul", halfMatmulPath()},
	}
	if s := cpu.AMXStatus(); s != "" {
		lines = append(lines, infoLine{"AMX", s})
	}
	return lines
}

// halfMatmulPath says how the CPU runs bfloat16 and float16 matrix
// products: bfloat16 on the CPU backend's bf16 GEMM (VDPBF16PS where the
// CPU has AVX512_BF16), float16 on the float32 GEMM kernels with the
// operands converted (F16C) while packing; both accumulate in float32 and
// round once.
func halfMatmulPath() string {
	return "bf16: " + cpu.BF16MatMulPath() + "; fp16: " + cpu.F16MatMulPath() + "; one rounding"
}

// cudaInfo is the CUDA driver section.
type cudaInfo struct {
	Available     bool         `json:"available"`
	Reason        string       `json:"reason,omitempty"` // why not, in one line
	Library       cudaLibrary  `json:"library"`
	DriverVersion int          `json:"driver_version"`       // e.g. 12020
	DriverAPI     string       `json:"driver_api,omitempty"` // e.g. "12.2"
	VersionError  string       `json:"version_error,omitempty"`
	Init          cudaInit     `json:"init"`
	DeviceCount   int          `json:"device_count"`
	Devices       []cudaDevice `json:"devices"`
	Search        []searchDir  `json:"search,omitempty"` // --verbose only
}

type cudaLibrary struct {
	Found           bool     `json:"found"`
	Path            string   `json:"path,omitempty"`
	RealPath        string   `json:"real_path,omitempty"`
	Source          string   `json:"source,omitempty"`
	Error           string   `json:"error,omitempty"`
	Searched        []string `json:"searched,omitempty"`
	SymbolsResolved int      `json:"symbols_resolved"`
	SymbolsTotal    int      `json:"symbols_total"`
	SymbolsMissing  []string `json:"symbols_missing,omitempty"`
}

type cudaInit struct {
	OK    bool   `json:"ok"`
	Code  int    `json:"code"`           // the CUresult, 0 on success
	Name  string `json:"name,omitempty"` // e.g. "CUDA_ERROR_NO_DEVICE"
	Desc  string `json:"desc,omitempty"`
	Error string `json:"error,omitempty"`
}

type cudaDevice struct {
	Ordinal            int    `json:"ordinal"`
	Name               string `json:"name"`
	ComputeCapability  string `json:"compute_capability"`
	TotalMem           uint64 `json:"total_mem"`
	Multiprocessors    int    `json:"multiprocessors"`
	MaxThreadsPerBlock int    `json:"max_threads_per_block"`
	WarpSize           int    `json:"warp_size"`
	SharedMemPerBlock  int    `json:"shared_mem_per_block"`
	PCIBusID           string `json:"pci_bus_id"`
	UUID               string `json:"uuid,omitempty"`
	Error              string `json:"error,omitempty"`
}

// searchDir is one folder of libpath's search order and the libcuda files in it.
type searchDir struct {
	Dir    string       `json:"dir"`
	Real   string       `json:"real,omitempty"` // the folder behind Dir's symlinks, when different
	Source string       `json:"source"`
	Files  []searchFile `json:"files,omitempty"`
}

type searchFile struct {
	Name   string `json:"name"`
	Opened bool   `json:"opened,omitempty"`
}

func newCUDAInfo(p driver.Report, verbose bool) cudaInfo {
	c := cudaInfo{
		Available:     p.Usable(),
		Reason:        p.Reason(),
		DriverVersion: p.DriverVersion,
		DriverAPI:     p.Version,
		DeviceCount:   p.DeviceCount,
		Devices:       []cudaDevice{},
		Library: cudaLibrary{
			Found: p.Found, Path: p.Path, RealPath: p.RealPath, Source: p.Source,
			SymbolsResolved: p.Resolved, SymbolsTotal: p.Symbols,
		},
	}
	if p.LoadErr != nil {
		c.Library.Error = p.LoadErr.Error()
		var nf *libpath.NotFoundError
		if errors.As(p.LoadErr, &nf) {
			c.Library.Searched = nf.Searched
		}
	}
	var ms *driver.MissingSymbolsError
	if errors.As(p.Missing, &ms) {
		c.Library.SymbolsMissing = ms.Symbols
	}
	if p.VersionErr != nil {
		c.VersionError = p.VersionErr.Error()
	}
	switch {
	case p.InitErr != nil:
		c.Init = cudaInit{Code: int(p.InitErr.Code), Name: p.InitErr.Name, Desc: p.InitErr.Desc, Error: p.InitErr.Error()}
	case p.InitOtherErr != nil:
		c.Init = cudaInit{Error: p.InitOtherErr.Error()}
	case p.Found:
		c.Init = cudaInit{OK: true, Name: "CUDA_SUCCESS"}
	}
	for _, d := range p.Devices {
		cd := cudaDevice{
			Ordinal: d.Ordinal, Name: d.Name, ComputeCapability: d.ComputeCapability(), TotalMem: d.TotalMem,
			Multiprocessors: d.MultiprocessorCount, MaxThreadsPerBlock: d.MaxThreadsPerBlock, WarpSize: d.WarpSize,
			SharedMemPerBlock: d.SharedMemPerBlock, PCIBusID: d.PCIBusID, UUID: d.UUID,
		}
		if d.Err != nil {
			cd.Error = d.Err.Error()
		}
		c.Devices = append(c.Devices, cd)
	}
	if verbose {
		c.Search = searchOrder(p.Path)
	}
	return c
}

// searchOrder lists libpath's folders and the libcuda files in each, marking
// the first whose folder resolves to the opened file's as the one opened.
func searchOrder(opened string) []searchDir {
	out := []searchDir{}
	marked := false
	for _, d := range libpath.Dirs() {
		sd := searchDir{Dir: d.Path, Source: d.Source}
		files, _ := filepath.Glob(filepath.Join(d.Path, "libcuda.so*"))
		sort.Strings(files)
		real, err := filepath.EvalSymlinks(d.Path)
		if err != nil {
			real = d.Path
		}
		if real != d.Path {
			sd.Real = real
		}
		for _, f := range files {
			sf := searchFile{Name: filepath.Base(f)}
			if !marked && opened != "" && filepath.Join(real, sf.Name) == opened {
				sf.Opened, marked = true, true
			}
			sd.Files = append(sd.Files, sf)
		}
		out = append(out, sd)
	}
	return out
}

func (c *cudaInfo) title() string { return "CUDA" }

func (c *cudaInfo) lines(verbose bool) []infoLine {
	var ls []infoLine
	if c.Available {
		ls = append(ls, infoLine{"", fmt.Sprintf("CUDA: available — %d device(s)", c.DeviceCount)})
	} else if c.Library.Found && !c.Init.OK && c.Init.Name != "" && strings.HasPrefix(c.Reason, "cuInit failed") {
		// the cuInit line below gives the code and description: say it once
		ls = append(ls, infoLine{"", "CUDA: not available — cuInit failed (see cuInit below)"})
	} else if c.Library.Found {
		ls = append(ls, infoLine{"", "CUDA: not available — " + c.Reason})
	} else {
		ls = append(ls, infoLine{"", "CUDA: not available — " + compactNotFound(c)})
	}
	if c.Library.Found {
		lib := fmt.Sprintf("%s (found via %s)", c.Library.Path, c.Library.Source)
		ls = append(ls, infoLine{"libcuda", lib})
		if verbose && c.Library.RealPath != "" {
			ls = append(ls, infoLine{"file", c.Library.RealPath})
		}
		sym := fmt.Sprintf("%d of %d entry points resolved", c.Library.SymbolsResolved, c.Library.SymbolsTotal)
		if len(c.Library.SymbolsMissing) > 0 {
			sym += "; missing: " + strings.Join(c.Library.SymbolsMissing, ", ")
		}
		ls = append(ls, infoLine{"symbols", sym})
		if c.DriverAPI != "" {
			ls = append(ls, infoLine{"driver API", fmt.Sprintf("%s (%d)", c.DriverAPI, c.DriverVersion)})
		} else {
			ls = append(ls, infoLine{"driver API", "unknown: " + c.VersionError})
		}
		switch {
		case c.Init.OK:
			ls = append(ls, infoLine{"cuInit", "CUDA_SUCCESS (0)"})
		case c.Init.Name != "":
			v := fmt.Sprintf("%s (%d)", c.Init.Name, c.Init.Code)
			if c.Init.Desc != "" {
				v += ": " + c.Init.Desc
			}
			ls = append(ls, infoLine{"cuInit", v})
		default:
			ls = append(ls, infoLine{"cuInit", "not called: " + c.Init.Error})
		}
		ls = append(ls, infoLine{"devices", fmt.Sprint(c.DeviceCount)})
	}
	for _, d := range c.Devices {
		v := fmt.Sprintf("%s, compute %s, %s, %d SMs, PCI %s", d.Name, d.ComputeCapability, formatBytes(d.TotalMem), d.Multiprocessors, d.PCIBusID)
		if d.Error != "" {
			v += " (incomplete: " + d.Error + ")"
		}
		ls = append(ls, infoLine{fmt.Sprintf("cuda:%d", d.Ordinal), v})
	}
	if verbose {
		ls = append(ls, infoLine{"", "library search order (libcuda.so.1, libcuda.so):"})
		for i, d := range c.Search {
			files := "-"
			if len(d.Files) > 0 {
				var fs []string
				for _, f := range d.Files {
					if f.Opened {
						fs = append(fs, f.Name+" [opened]")
					} else {
						fs = append(fs, f.Name)
					}
				}
				files = strings.Join(fs, ", ")
			}
			dir := d.Dir
			if d.Real != "" {
				dir += " -> " + d.Real
			}
			ls = append(ls, infoLine{"", fmt.Sprintf("  %2d. %s (%s): %s", i+1, dir, d.Source, files)})
		}
		ls = append(ls, infoLine{"", "  last: the bare names, through the dynamic linker's cache"})
	}
	return ls
}

// compactNotFound is the one-line reason when libcuda is missing:
// "libcuda.so.1 not found (searched: a, b, c)".
func compactNotFound(c *cudaInfo) string {
	if c.Library.Searched == nil {
		return c.Reason
	}
	return fmt.Sprintf("libcuda.so.1 not found (searched: %s)", strings.Join(c.Library.Searched, ", "))
}

// formatBytes prints a size in GiB or MiB, e.g. "79.6 GiB".
func formatBytes(n uint64) string {
	const gib, mib = 1 << 30, 1 << 20
	if n >= gib {
		return fmt.Sprintf("%.1f GiB", float64(n)/gib)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/mib)
}
