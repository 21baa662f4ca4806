package main

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/emberml/ember/internal/cuda/driver"
	"github.com/emberml/ember/internal/cuda/libpath"
	"github.com/emberml/ember/internal/testenv"
)

// runEmber runs the root command in-process and returns its output.
func runEmber(t *testing.T, args ...string) string {
	t.Helper()
	infoFlags.json, infoFlags.verbose = false, false
	var out bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&out)
	rootCmd.SetArgs(args)
	defer rootCmd.SetArgs(nil)
	if err := rootCmd.Execute(); err != nil {
		t.Fatalf("ember %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

func needCUDALib(t *testing.T) {
	t.Helper()
	_, err := driver.Load()
	testenv.NeedLib(t, "libcuda1", err)
}

func TestInfoJSONRealLibcuda(t *testing.T) {
	needCUDALib(t)
	var r struct {
		Ember struct {
			Version, Go, OS, Arch string
		}
		Host struct {
			CPU struct {
				Model        string   `json:"model"`
				LogicalCores int      `json:"logical_cores"`
				SIMD         []string `json:"simd"`
			} `json:"cpu"`
		}
		CUDA struct {
			Available bool   `json:"available"`
			Reason    string `json:"reason"`
			Library   struct {
				Found           bool   `json:"found"`
				Path            string `json:"path"`
				Source          string `json:"source"`
				SymbolsResolved int    `json:"symbols_resolved"`
				SymbolsTotal    int    `json:"symbols_total"`
			} `json:"library"`
			DriverVersion int    `json:"driver_version"`
			DriverAPI     string `json:"driver_api"`
			Init          struct {
				OK   bool   `json:"ok"`
				Code int    `json:"code"`
				Name string `json:"name"`
				Desc string `json:"desc"`
			} `json:"init"`
			DeviceCount int               `json:"device_count"`
			Devices     []json.RawMessage `json:"devices"`
			Search      []json.RawMessage `json:"search"`
		}
		Device string `json:"device"`
	}
	out := runEmber(t, "info", "--json")
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r.Ember.Version != "0.1.0-dev" || r.Ember.Go != runtime.Version() || r.Ember.OS != runtime.GOOS || r.Ember.Arch != runtime.GOARCH {
		t.Errorf("ember section %+v", r.Ember)
	}
	if r.Host.CPU.LogicalCores != runtime.NumCPU() || r.Host.CPU.Model == "" {
		t.Errorf("host section %+v", r.Host)
	}
	c := r.CUDA
	if !c.Library.Found || c.Library.Path != "/usr/lib/x86_64-linux-gnu/libcuda.so.1" || c.Library.Source != "system" {
		t.Errorf("library %+v", c.Library)
	}
	if c.Library.SymbolsResolved != 50 || c.Library.SymbolsTotal != 50 {
		t.Errorf("symbols %d of %d, want 50 of 50", c.Library.SymbolsResolved, c.Library.SymbolsTotal)
	}
	if c.DriverVersion != 12020 || c.DriverAPI != "12.2" {
		t.Errorf("driver %d %q", c.DriverVersion, c.DriverAPI)
	}
	if c.Init.OK || c.Init.Code != 100 || c.Init.Name != "CUDA_ERROR_NO_DEVICE" || c.Init.Desc != "no CUDA-capable device is detected" {
		t.Errorf("init %+v", c.Init)
	}
	if c.Available || c.DeviceCount != 0 || c.Devices == nil || len(c.Devices) != 0 || c.Search != nil {
		t.Errorf("devices: available=%v count=%d devices=%v search=%d", c.Available, c.DeviceCount, c.Devices, len(c.Search))
	}
	if c.Reason != "cuInit failed: CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected" {
		t.Errorf("reason %q", c.Reason)
	}
	if r.Device != "cpu" {
		t.Errorf("device %q", r.Device)
	}
}

func TestInfoTextRealLibcuda(t *testing.T) {
	needCUDALib(t)
	out := runEmber(t, "info")
	for _, want := range []string{
		"ember 0.1.0-dev (" + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n",
		"\n  CUDA: not available — cuInit failed (see cuInit below)\n",
		"\n  libcuda:        /usr/lib/x86_64-linux-gnu/libcuda.so.1 (found via system)\n",
		"\n  driver API:     12.2 (12020)\n",
		"\n  cuInit:         CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected\n",
		"\n  devices:        0\n",
		"\nember will use: cpu\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "no CUDA-capable device is detected"); n != 1 {
		t.Errorf("the cuInit reason is printed %d times, want once", n)
	}
	if strings.Contains(out, "search order") {
		t.Errorf("search order without --verbose")
	}
}

func TestInfoVerboseRealLibcuda(t *testing.T) {
	needCUDALib(t)
	out := runEmber(t, "info", "--verbose", "--json")
	var r struct {
		CUDA struct {
			Search []searchDir `json:"search"`
		} `json:"cuda"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	opened := 0
	var openedIn string
	for _, d := range r.CUDA.Search {
		for _, f := range d.Files {
			if f.Opened {
				opened++
				openedIn = d.Dir
				if d.Real != "" {
					openedIn = d.Real
				}
				if f.Name != "libcuda.so.1" {
					t.Errorf("opened %s", f.Name)
				}
			}
		}
	}
	if opened != 1 || openedIn != "/usr/lib/x86_64-linux-gnu" {
		t.Fatalf("%d files marked opened (in %q): %+v", opened, openedIn, r.CUDA.Search)
	}
	text := runEmber(t, "info", "-v")
	if !strings.Contains(text, "library search order") || !strings.Contains(text, "libcuda.so.1 [opened]") {
		t.Fatalf("verbose text:\n%s", text)
	}
}

func TestInfoNotFoundLine(t *testing.T) {
	nf := &libpath.NotFoundError{Names: []string{"libcuda.so.1", "libcuda.so"}, Searched: []string{"/opt/a", "/usr/lib/x86_64-linux-gnu"}}
	c := newCUDAInfo(driver.Report{LoadErr: nf, Symbols: 50}, false)
	ls := c.lines(false)
	if want := "CUDA: not available — libcuda.so.1 not found (searched: /opt/a, /usr/lib/x86_64-linux-gnu)"; ls[0].value != want {
		t.Fatalf("got %q\nwant %q", ls[0].value, want)
	}
	if len(ls) != 1 || c.Available || c.Library.Found || len(c.Library.Searched) != 2 {
		t.Fatalf("lines %q, info %+v", ls, c)
	}
	var r infoReport
	r.CUDA = c
	r.Device = "cpu"
	b, err := json.Marshal(&r)
	if err != nil || !strings.Contains(string(b), `"searched":["/opt/a","/usr/lib/x86_64-linux-gnu"]`) {
		t.Fatalf("json %s %v", b, err)
	}
}

func TestInfoDeviceLine(t *testing.T) {
	p := driver.Report{Found: true, Path: "/x/libcuda.so.1", Source: "EMBER_CUDA_LIB_DIR", Resolved: 50, Symbols: 50,
		DriverVersion: 12040, Version: "12.4", DeviceCount: 1,
		Devices: []driver.DeviceInfo{{Ordinal: 0, Name: "NVIDIA H200", ComputeMajor: 9, ComputeMinor: 0,
			TotalMem: 150_121_234_432, MultiprocessorCount: 132, PCIBusID: "0000:19:00.0"}}}
	c := newCUDAInfo(p, false)
	ls := c.lines(false)
	if ls[0].value != "CUDA: available — 1 device(s)" {
		t.Errorf("first line %q", ls[0].value)
	}
	last := ls[len(ls)-1]
	// 150121234432 / 2^30 = 139.81 GiB
	if last.key != "cuda:0" || last.value != "NVIDIA H200, compute 9.0, 139.8 GiB, 132 SMs, PCI 0000:19:00.0" {
		t.Errorf("device line %q: %q", last.key, last.value)
	}
	if c.Init.Name != "CUDA_SUCCESS" || !c.Available {
		t.Errorf("%+v", c)
	}
}

// TestBenchFlagValidation: a negative --threads is a one-line error, not
// all cores.
func TestBenchFlagValidation(t *testing.T) {
	resetFlags(t, benchCmd)
	defer resetFlags(t, benchCmd)
	var out bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&out)
	rootCmd.SetArgs([]string{"bench", "--threads", "-1", "--cases", "sum_16M"})
	defer rootCmd.SetArgs(nil)
	if err := rootCmd.Execute(); err == nil || !strings.Contains(err.Error(), "--threads -1") {
		t.Fatalf("bench --threads -1: %v\n%s", err, out.String())
	}
}
