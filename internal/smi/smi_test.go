package smi

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emberml/ember/internal/cuda/libpath"
	"github.com/emberml/ember/internal/cuda/nvml"
	"github.com/emberml/ember/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

func fakeSnapshot(t *testing.T) *Snapshot {
	t.Helper()
	s, err := Fake{}.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/smi -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestGolden(t *testing.T) {
	csv := func(q string, f CSVFormat) func(*Snapshot, *bytes.Buffer) error {
		return func(s *Snapshot, b *bytes.Buffer) error {
			fields, err := ParseQuery(q)
			if err != nil {
				return err
			}
			return WriteCSV(b, s, fields, f)
		}
	}
	table := func(s *Snapshot, b *bytes.Buffer) error { return WriteTable(b, s) }
	const common = "index,name,uuid,pci.bus_id,driver_version,fan.speed,temperature.gpu,pstate,power.draw,power.limit," +
		"memory.used,memory.total,memory.free,utilization.gpu,utilization.memory,compute_mode,mig.mode.current"
	for _, c := range []struct {
		name    string
		indices []int
		render  func(*Snapshot, *bytes.Buffer) error
	}{
		{"table", nil, table},
		{"table_i1", []int{1}, table},
		{"json", nil, func(s *Snapshot, b *bytes.Buffer) error { return WriteJSON(b, s) }},
		{"csv", nil, csv("name,memory.used,memory.total,utilization.gpu", CSVFormat{})},
		{"csv_noheader", nil, csv("name,memory.used,memory.total,utilization.gpu", CSVFormat{NoHeader: true})},
		{"csv_nounits", nil, csv("name,memory.used,memory.total,utilization.gpu", CSVFormat{NoUnits: true})},
		{"csv_noheader_nounits", nil, csv("name,memory.used,memory.total,utilization.gpu", CSVFormat{NoHeader: true, NoUnits: true})},
		{"csv_all", nil, csv(common, CSVFormat{})},
		{"csv_na", nil, csv("index,fan.speed,mig.mode.current,ecc.errors.uncorrected.volatile.total", CSVFormat{})},
		{"csv_i1", []int{1}, csv("index,name,fan.speed", CSVFormat{})},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := fakeSnapshot(t).Select(c.indices)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := c.render(s, &b); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, b.Bytes())
		})
	}
}

// The table against what nvidia-smi 535.54.03 really printed on an
// 8×A100 machine (github.com/NVIDIA/DCGM issue thread), a GTX 1050 + RTX
// 4000 SFF Ada machine (535.288.01) and a Triton server (535), with the same
// values fed in.
func TestTableMatchesRealNvidiaSmi(t *testing.T) {
	loc := time.FixedZone("", 0)
	s := &Snapshot{
		Time:          time.Date(2023, time.October, 25, 17, 10, 27, 0, loc),
		DriverVersion: "535.54.03", CUDAVersion: "12.2",
		GPUs: []GPU{{
			Index: 0, Name: "NVIDIA A100-SXM4-80GB", BusID: "00000000:10:1C.0",
			Persistence: ptr(true), DisplayActive: ptr(false), ECCEnabled: ptr(true), ECCUncorrected: ptr(uint64(0)),
			TemperatureC: ptr(uint32(64)), PerfState: ptr(0),
			PowerDrawMilliW: ptr(uint32(358_400)), PowerLimitMilliW: ptr(uint32(400_000)),
			MemoryUsed: ptr(uint64(54906 * mib)), MemoryTotal: ptr(uint64(81920 * mib)),
			UtilGPU: ptr(uint32(100)), ComputeMode: ptr(ComputeDefault), MIGEnabled: ptr(false),
		}, {
			Index: 1, Name: "NVIDIA GeForce GTX 1050", BusID: "00000000:3B:00.0",
			Persistence: ptr(true), DisplayActive: ptr(true), FanPercent: ptr(uint32(20)),
			TemperatureC: ptr(uint32(39)), PerfState: ptr(8), PowerLimitMilliW: ptr(uint32(75_000)),
			MemoryUsed: ptr(uint64(204 * mib)), MemoryTotal: ptr(uint64(2048 * mib)),
			UtilGPU: ptr(uint32(0)), ComputeMode: ptr(ComputeDefault),
		}, {
			Index: 2, Name: "NVIDIA RTX 4000 SFF Ada Generation", BusID: "00000000:AF:00.0",
			Persistence: ptr(true), DisplayActive: ptr(false), ECCEnabled: ptr(false), FanPercent: ptr(uint32(30)),
			TemperatureC: ptr(uint32(38)), PerfState: ptr(8),
			PowerDrawMilliW: ptr(uint32(5_000)), PowerLimitMilliW: ptr(uint32(70_000)),
			MemoryUsed: ptr(uint64(171 * mib)), MemoryTotal: ptr(uint64(20475 * mib)),
			UtilGPU: ptr(uint32(0)), ComputeMode: ptr(ComputeDefault),
		}},
		Processes: []Process{
			{GPU: 0, PID: 3518784, Type: "C", Name: "python3", UsedMemory: ptr(uint64(452 * mib))},
			{GPU: 0, PID: 23160, Type: "C", Name: "/opt/tritonserver/backends/python/triton_python_backend_stub",
				UsedMemory: ptr(uint64(9304 * mib))},
			{GPU: 0, PID: 95412, Type: "C", Name: "python", UsedMemory: ptr(uint64(10764 * mib))},
		},
	}
	var b bytes.Buffer
	if err := WriteTable(&b, s); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"Wed Oct 25 17:10:27 2023       \n",
		"+---------------------------------------------------------------------------------------+\n",
		"| NVIDIA-SMI 535.54.03              Driver Version: 535.54.03    CUDA Version: 12.2     |\n",
		"|-----------------------------------------+----------------------+----------------------+\n",
		"| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |\n",
		"| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |\n",
		"|                                         |                      |               MIG M. |\n",
		"|=========================================+======================+======================|\n",
		"|   0  NVIDIA A100-SXM4-80GB          On  | 00000000:10:1C.0 Off |                    0 |\n",
		"| N/A   64C    P0             358W / 400W |  54906MiB / 81920MiB |    100%      Default |\n",
		"|                                         |                      |             Disabled |\n",
		"+-----------------------------------------+----------------------+----------------------+\n",
		"|   1  NVIDIA GeForce GTX 1050        On  | 00000000:3B:00.0  On |                  N/A |\n",
		"| 20%   39C    P8              N/A /  75W |    204MiB /  2048MiB |      0%      Default |\n",
		"|                                         |                      |                  N/A |\n",
		"|   2  NVIDIA RTX 4000 SFF Ada ...    On  | 00000000:AF:00.0 Off |                  Off |\n",
		"| 30%   38C    P8               5W /  70W |    171MiB / 20475MiB |      0%      Default |\n",
		"\n                                                                                         \n",
		"| Processes:                                                                            |\n",
		"|  GPU   GI   CI        PID   Type   Process name                            GPU Memory |\n",
		"|        ID   ID                                                             Usage      |\n",
		"|=======================================================================================|\n",
		"|    0   N/A  N/A   3518784      C   python3                                     452MiB |\n",
		"|    0   N/A  N/A     23160      C   ...s/python/triton_python_backend_stub     9304MiB |\n",
		"|    0   N/A  N/A     95412      C   python                                    10764MiB |\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks nvidia-smi's line\n%q\ngot:\n%s", want, got)
		}
	}
	if !strings.HasSuffix(got, "|\n+---------------------------------------------------------------------------------------+\n") {
		t.Errorf("table does not end with the closing rule:\n%s", got)
	}
}

func TestTableNoProcesses(t *testing.T) {
	s := fakeSnapshot(t)
	s.Processes = nil
	var b bytes.Buffer
	if err := WriteTable(&b, s); err != nil {
		t.Fatal(err)
	}
	// nvidia-smi 535's line, from a Tesla T4 notebook output.
	want := "|  No running processes found                                                           |\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("missing %q in\n%s", want, b.String())
	}
	for i, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")[1:] {
		if len(l) != 89 {
			t.Errorf("line %d is %d columns, want 89: %q", i+2, len(l), l)
		}
	}
}

func TestCSVExample(t *testing.T) {
	fields, err := ParseQuery("name,memory.used,memory.total,utilization.gpu")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteCSV(&b, fakeSnapshot(t), fields, CSVFormat{}); err != nil {
		t.Fatal(err)
	}
	want := "name, memory.used [MiB], memory.total [MiB], utilization.gpu [%]\n" +
		"NVIDIA H100 80GB HBM3, 1024 MiB, 81559 MiB, 37 %\n" +
		"NVIDIA GeForce RTX 4090, 20993 MiB, 24564 MiB, 98 %\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestParseQueryErrors(t *testing.T) {
	_, err := ParseQuery("name,memory.usedd")
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "memory.usedd" {
		t.Fatalf("err = %v, want *FieldError for memory.usedd", err)
	}
	for _, f := range []string{"memory.used", "utilization.gpu", "mig.mode.current", "pci.bus_id"} {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error does not list %s: %v", f, err)
		}
	}
	if f, err := ParseQuery("GPU_NAME"); err != nil || f[0].Name != "name" {
		t.Errorf("alias gpu_name: %v %v", f, err)
	}
	if _, err := ParseQuery(" , "); err == nil {
		t.Error("empty query: no error")
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]CSVFormat{
		"csv": {}, "csv,noheader": {NoHeader: true}, "csv,nounits": {NoUnits: true},
		"csv,noheader,nounits": {NoHeader: true, NoUnits: true}, "nounits,csv": {NoUnits: true},
	} {
		got, err := ParseFormat(in)
		if err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"json", "noheader", "csv,xml"} {
		if _, err := ParseFormat(in); err == nil {
			t.Errorf("ParseFormat(%q): no error", in)
		}
	}
}

func TestSelect(t *testing.T) {
	s := fakeSnapshot(t)
	got, err := s.Select([]int{1})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.GPUs) != 1 || got.GPUs[0].Index != 1 || len(got.Processes) != 2 {
		t.Errorf("Select(1) = %d GPUs, %d processes; want GPU 1 and its 2 processes", len(got.GPUs), len(got.Processes))
	}
	_, err = s.Select([]int{0, 2})
	var ie *IndexError
	if !errors.As(err, &ie) || ie.Index != 2 || ie.Count != 2 {
		t.Fatalf("Select(0,2) err = %v", err)
	}
	if want := "GPU index 2 is out of range: this machine has 2 GPUs (indices 0-1)"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if idx, err := ParseIndices("1, 0,1"); err != nil || len(idx) != 2 || idx[0] != 0 || idx[1] != 1 {
		t.Errorf("ParseIndices = %v, %v", idx, err)
	}
	for _, bad := range []string{"", "a", "-1", "0,,1"} {
		if _, err := ParseIndices(bad); err == nil {
			t.Errorf("ParseIndices(%q): no error", bad)
		}
	}
}

func TestFormatCUDAVersion(t *testing.T) {
	for v, want := range map[int]string{12020: "12.2", 11080: "11.8", 12040: "12.4", 13000: "13.0"} {
		if got := FormatCUDAVersion(v); got != want {
			t.Errorf("FormatCUDAVersion(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestWatch(t *testing.T) {
	for _, tty := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		var out bytes.Buffer
		err := Watch(ctx, &out, time.Millisecond, tty, func(w io.Writer) error {
			n++
			if n == 3 {
				cancel()
			}
			_, err := io.WriteString(w, "frame\nline\n")
			return err
		})
		cancel()
		if err != nil || n != 3 {
			t.Fatalf("tty=%v: Watch = %v after %d frames", tty, err, n)
		}
		want := strings.Repeat("frame\nline\n", 3)
		if tty {
			want = "\x1b[2J" + strings.Repeat("\x1b[Hframe\x1b[K\nline\x1b[K\n\x1b[J", 3)
		}
		if out.String() != want {
			t.Errorf("tty=%v: output %q, want %q", tty, out.String(), want)
		}
	}
	boom := errors.New("boom")
	if err := Watch(context.Background(), io.Discard, time.Millisecond, false, func(io.Writer) error { return boom }); err != boom {
		t.Errorf("frame error: got %v", err)
	}
}

func TestDiagnose(t *testing.T) {
	msg, code := Diagnose(&nvml.Error{Call: "nvmlInit_v2", Code: 9, Name: "NVML_ERROR_DRIVER_NOT_LOADED", Desc: "Driver Not Loaded"})
	if code != 9 || !strings.HasPrefix(msg, NoDriverMessage+"\n") || !strings.Contains(msg, "NVML_ERROR_DRIVER_NOT_LOADED (9)") {
		t.Errorf("driver not loaded: %d %q", code, msg)
	}
	msg, code = Diagnose(&nvml.Error{Call: "nvmlInit_v2", Code: 18, Name: "NVML_ERROR_LIB_RM_VERSION_MISMATCH"})
	if code != 18 || !strings.HasPrefix(msg, "Failed to initialize NVML: Driver/library version mismatch") {
		t.Errorf("mismatch: %d %q", code, msg)
	}
	msg, code = Diagnose(&libpath.NotFoundError{Names: []string{"libnvidia-ml.so.1"}, Searched: []string{"/a", "/b"}})
	if code != 12 || !strings.HasPrefix(msg, "libnvidia-ml.so.1 not found") || !strings.Contains(msg, "\n  /a\n  /b\n") {
		t.Errorf("not found: %d %q", code, msg)
	}
	if _, code := Diagnose(&nvml.Error{Call: "x", Code: 999, Name: "NVML_ERROR_UNKNOWN"}); code != 255 {
		t.Errorf("code 999 → exit %d, want 255", code)
	}
	if _, code := Diagnose(errors.New("other")); code != 1 {
		t.Errorf("plain error → exit %d, want 1", code)
	}
}

// Through the real library on a machine without a driver, OpenNVML fails
// with nvmlInit_v2's NVML_ERROR_DRIVER_NOT_LOADED and Diagnose says what
// nvidia-smi says.
func TestRealNVMLNoDriver(t *testing.T) {
	_, err := nvml.Open()
	testenv.NeedLib(t, "libnvidia-ml1", err)
	src, err := OpenNVML()
	if err == nil {
		defer src.Close()
		s, err := src.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		t.Skipf("a driver is loaded here (%d GPUs, driver %s); the no-driver test does not apply", len(s.GPUs), s.DriverVersion)
	}
	if !nvml.IsCode(err, nvml.ErrorDriverNotLoaded) {
		t.Fatalf("OpenNVML: %v, want NVML_ERROR_DRIVER_NOT_LOADED", err)
	}
	msg, code := Diagnose(err)
	if code != 9 {
		t.Errorf("exit %d, want 9", code)
	}
	want := NoDriverMessage + "\nnvmlInit_v2 returned NVML_ERROR_DRIVER_NOT_LOADED (9): Driver Not Loaded"
	if msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}
}

func TestRealNVMLNotFound(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("EMBER_CUDA_LIB_DIR", dir)
	if _, err := libpath.Open("libnvidia-ml.so.1"); err == nil {
		t.Skip("libnvidia-ml.so.1 is on the linker's path; cannot hide it")
	}
	_, err := OpenNVML()
	msg, code := Diagnose(err)
	if code != 12 || !strings.Contains(msg, "libnvidia-ml.so.1 not found") || !strings.Contains(msg, dir) {
		t.Errorf("%d %q", code, msg)
	}
}

func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if IsTerminal(w) || IsTerminal(&bytes.Buffer{}) {
		t.Error("a pipe or a buffer is not a terminal")
	}
}
