package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emberml/ember/internal/cuda/nvml"
	"github.com/emberml/ember/internal/smi"
	"github.com/emberml/ember/internal/testenv"
)

// runSmi runs a fresh `ember smi` with args and returns its stdout and error.
func runSmi(t *testing.T, ctx context.Context, args ...string) (string, error) {
	t.Helper()
	cmd := newSmiCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	return out.String(), err
}

func readGolden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "smi", "testdata", name+".golden"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSmiFakeOutputs(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		args   []string
		golden string
	}{
		{[]string{"--fake"}, "table"},
		{[]string{"--fake", "-i", "1"}, "table_i1"},
		{[]string{"--fake", "--id=1"}, "table_i1"},
		{[]string{"--fake", "--json"}, "json"},
		{[]string{"--fake", "--query-gpu=name,memory.used,memory.total,utilization.gpu"}, "csv"},
		{[]string{"--fake", "--query-gpu=name,memory.used,memory.total,utilization.gpu", "--format=csv,noheader"}, "csv_noheader"},
		{[]string{"--fake", "--query-gpu=name,memory.used,memory.total,utilization.gpu", "--format=csv,nounits"}, "csv_nounits"},
		{[]string{"--fake", "--query-gpu=index,name,fan.speed", "--format=csv", "-i", "1"}, "csv_i1"},
	} {
		got, err := runSmi(t, ctx, c.args...)
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		if want := readGolden(t, c.golden); got != want {
			t.Errorf("%v:\n%s\nwant (%s.golden):\n%s", c.args, got, c.golden, want)
		}
	}
	out, err := runSmi(t, ctx, "--fake", "--json", "-i", "0")
	if err != nil {
		t.Fatal(err)
	}
	var s smi.Snapshot
	if err := json.Unmarshal([]byte(out), &s); err != nil || len(s.GPUs) != 1 || s.GPUs[0].Name != "NVIDIA H100 80GB HBM3" || len(s.Processes) != 1 {
		t.Errorf("--json -i 0: %v %+v", err, s)
	}
}

func TestSmiBadArguments(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--fake", "-i", "2"}, "GPU index 2 is out of range: this machine has 2 GPUs (indices 0-1)"},
		{[]string{"--fake", "-i", "x"}, `invalid GPU index "x"`},
		{[]string{"--fake", "--query-gpu=name,memory.usedd"}, `unknown --query-gpu field "memory.usedd"; valid fields: timestamp,`},
		{[]string{"--fake", "--query-gpu=name", "--format=xml"}, `invalid --format "xml"`},
		{[]string{"--fake", "--format=csv"}, "--format applies only with --query-gpu"},
		{[]string{"--fake", "--json", "--query-gpu=name"}, "cannot be used together"},
		{[]string{"--fake", "--watch=1s", "-l", "1"}, "not both"},
	} {
		_, err := runSmi(t, ctx, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want it to contain %q", c.args, err, c.want)
		}
	}
}

// Off a terminal, --watch prints whole frames one after another and stops
// when the context ends.
func TestSmiWatchNotTTY(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	out, err := runSmi(t, ctx, "--fake", "--watch=50ms", "--query-gpu=index", "--format=csv,noheader")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("escape codes off a terminal: %q", out)
	}
	frames := strings.Count(out, "0\n1\n")
	if frames < 2 || out != strings.Repeat("0\n1\n", frames) {
		t.Errorf("want at least 2 whole frames, got %q", out)
	}
}

func needNVML(t *testing.T) {
	t.Helper()
	_, err := nvml.Open()
	testenv.NeedLib(t, "libnvidia-ml1", err)
	if src, err := smi.OpenNVML(); err == nil {
		src.Close()
		t.Skip("an NVIDIA driver is loaded here; the no-driver test does not apply")
	}
}

// Through the real libnvidia-ml on a machine without a driver.
func TestSmiRealNoDriver(t *testing.T) {
	needNVML(t)
	out, err := runSmi(t, context.Background())
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 9 {
		t.Fatalf("err = %#v, want exit status 9", err)
	}
	want := "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. " +
		"Make sure that the latest NVIDIA driver is installed and running.\n" +
		"nvmlInit_v2 returned NVML_ERROR_DRIVER_NOT_LOADED (9): Driver Not Loaded\n"
	if out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
}

// TestSmiHelperMain is not a test: TestSmiRealNoDriverExitStatus runs the
// test binary again with EMBER_SMI_HELPER=1 to call main() as `ember smi`.
func TestSmiHelperMain(t *testing.T) {
	if os.Getenv("EMBER_SMI_HELPER") != "1" {
		t.Skip("helper process only")
	}
	os.Args = []string{"ember", "smi"}
	main()
	os.Exit(0)
}

// The whole program, main's os.Exit included, exits 9 like nvidia-smi.
func TestSmiRealNoDriverExitStatus(t *testing.T) {
	needNVML(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestSmiHelperMain$")
	cmd.Env = append(os.Environ(), "EMBER_SMI_HELPER=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var xe *exec.ExitError
	if !errors.As(err, &xe) || xe.ExitCode() != 9 {
		t.Fatalf("exit: %v (stderr %q), want status 9", err, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), smi.NoDriverMessage+"\n") ||
		!strings.Contains(stdout.String(), "NVML_ERROR_DRIVER_NOT_LOADED (9)") {
		t.Errorf("stdout %q", stdout.String())
	}
}

// --json without a driver prints a JSON error object, still exiting 9.
func TestSmiJSONNoDriver(t *testing.T) {
	needNVML(t)
	out, err := runSmi(t, context.Background(), "--json")
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 9 {
		t.Fatalf("err = %#v, want exit status 9", err)
	}
	var v struct {
		Error    string `json:"error"`
		ExitCode int    `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.ExitCode != 9 || !strings.Contains(v.Error, "NVML_ERROR_DRIVER_NOT_LOADED") {
		t.Fatalf("stdout %q (%v), want a JSON error object", out, err)
	}
}

func TestSmiListAndHelpQuery(t *testing.T) {
	out, err := runSmi(t, context.Background(), "--fake", "-L")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "GPU 0: ") || !strings.HasPrefix(lines[1], "GPU 1: ") || !strings.Contains(lines[0], "(UUID: GPU-") {
		t.Fatalf("-L:\n%s", out)
	}
	out, err = runSmi(t, context.Background(), "--help-query-gpu")
	if err != nil || !strings.Contains(out, "\"memory.used\"\n") || !strings.Contains(out, "\"name\" or \"gpu_name\"") {
		t.Fatalf("--help-query-gpu: %v\n%s", err, out)
	}
}
