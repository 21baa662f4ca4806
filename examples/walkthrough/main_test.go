package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/emberml/ember"
)

// TestWalkthrough runs every step small and checks the key lines: the ones
// every machine prints, and then either the GPU lines or one SKIP per
// GPU-dependent step.
func TestWalkthrough(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, config{size: 96, reps: 2, image: 32}); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	t.Log(got)
	want := []string{
		"== 1. environment check",
		"\nCUDA version", // the driver's, or why it is unknown
		"current device: none implicit; TryGPU(0) = ",
		"== 2. device descriptors",
		"devices: cpu cuda:0 cuda:1 meta",
		`ParseDevice("gpu:0"): invalid device string`,
		"== 3. TryGPU / TryAllGPUs",
		"TryGPU(10) = cpu",
		"== 4. tensors on a device",
		"X = tensor([1, 2, 3]), X.Device() = cpu",
		"on meta (shape and dtype, no data): tensor(..., device='meta', size=(2, 3))",
		"== 5. moving tensors",
		"X.To(cpu) == X: true; X.CPU() == X: true",
		"X.To(meta) is a new tensor: true, on meta",
		"== 6. the cross-device error",
		"meta * cpu: Expected all tensors to be on the same device, but found at least two devices, meta and cpu! (op: mul)",
		"== 7. CPU vs GPU: x*x on a 96×96 float32 tensor",
		"x on cpu, 36.00 KiB", // 96·96·4 bytes
		"CPU x*x: best ",
		"== 8. memory statistics on ",
		"t := Zeros(96, 96) on ",
		// Zeros(96, 96) is 96·96·4 = 36864 bytes (a multiple of the CUDA
		// allocator's 512-byte rounding).
		"allocated grew by 36.00 KiB with t and fell by 36.00 KiB at t.Release()",
		"using t after Release: add: tensor used after Release",
		"== 9. a network on ",
		"grad_fn=<AddmmBackward0>",
		"equal to net(X): true",
		"ResNet-18 forward of [1, 3, 32, 32]: output on ",
		"shape [1, 1000]",
		"walkthrough done: 9 steps on ",
	}
	if err := ember.CheckDevice(ember.CUDA(0)); err == nil {
		want = append(want,
			"CUDA available: true",
			"cuda:0: ",
			"TryGPU(0) = cuda:0",
			"Z.CUDA(0) == Z (no copy when already there): true",
			"cuda:0 + cpu: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (op: add)",
			"AllClose(CPU result, GPU result.CPU()): true",
			"net[0].weight.Device() = cuda:0",
			"net(X on cpu): Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (op: linear)",
			"DataParallel over [cuda:0",
			"output on cuda:0, shape [1, 1000]",
		)
		if n := strings.Count(got, "SKIP "); n != 0 {
			t.Errorf("%d SKIP lines with a GPU present", n)
		}
	} else {
		want = append(want,
			"CUDA available: false",
			"device count: 0",
			"TryGPU(0) = cpu",
			"TryAllGPUs() = [cpu]",
			"SKIP device names and total memory: ",
			"SKIP X.CUDA(0), Z.CUDA(0) == Z and Y+Z on cuda:0: ",
			"SKIP cuda:0 + cpu: ",
			"SKIP the GPU timing and AllClose(CPU, GPU): ",
			"SKIP the cuda:0 allocator's statistics",
			"SKIP running the network on cuda:0",
			"net[0].weight.Device() = cpu",
			"net(X on meta): Expected all tensors to be on the same device, but found at least two devices, meta and cpu! (op: linear)",
			"DataParallel over [cpu]: dp(X) on cpu, equal to net(X): true",
		)
		// One SKIP per step that needs a GPU: 1, 5, 6, 7, 8, 9.
		if n := strings.Count(got, "SKIP "); n != 6 {
			t.Errorf("got %d SKIP lines, want 6 (one per GPU step)", n)
		}
		if n := strings.Count(got, err.Error()); n < 6 {
			t.Errorf("the reason %q appears %d times, want every SKIP to give it", err, n)
		}
	}
	for _, s := range want {
		if !strings.Contains(got, s) {
			t.Errorf("output lacks %q", s)
		}
	}
}

// TestBadFlags checks that a non-positive size is refused.
func TestBadFlags(t *testing.T) {
	if err := run(&bytes.Buffer{}, config{size: 0, reps: 1}); err == nil {
		t.Fatal("size 0 accepted")
	}
}

// TestTooLargeIsAnError: an input past the memory (a 2²⁰×2²⁰ image for
// the ResNet, 12 TiB) ends the run with the typed out-of-memory error; it
// was a panic's stack trace.
func TestTooLargeIsAnError(t *testing.T) {
	err := run(&bytes.Buffer{}, config{size: 8, reps: 1, image: 1 << 20})
	var oom *ember.OutOfMemoryError
	if !errors.As(err, &oom) || !strings.HasPrefix(err.Error(), "step 9: out of memory") {
		t.Fatalf("run: %v, want step 9's *ember.OutOfMemoryError", err)
	}
}

// TestBench runs the benchmark small on the CPU and checks its line format.
func TestBench(t *testing.T) {
	var out bytes.Buffer
	if err := bench(&out, ember.CPU, 32, 64, 2); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "BENCH ember matmul 32 cpu best_ms=") ||
		!strings.Contains(lines[0], " reps=2 tflops=") ||
		!strings.HasPrefix(lines[1], "BENCH ember mul 64 cpu best_ms=") || !strings.Contains(lines[1], " reps=2 gbps=") {
		t.Fatalf("bench output:\n%s", out.String())
	}
	if err := bench(&out, ember.CUDA(99), 8, 8, 1); err == nil {
		t.Error("bench on cuda:99 did not fail")
	}
	if err := bench(&out, ember.Meta, 8, 8, 1); err == nil || !strings.Contains(err.Error(), "--device meta: meta tensors have no data") {
		t.Errorf("bench on meta: %v, want a refusal (it printed timings of no work)", err)
	}
}

// TestStrayArgument: "walkthrough 512" (meaning --size 512) is an error,
// exit status 2; it ran the full 10000×10000 walkthrough.
func TestStrayArgument(t *testing.T) {
	if os.Getenv("WALKTHROUGH_MAIN") == "1" {
		os.Args = append([]string{"walkthrough"}, strings.Fields(os.Getenv("WALKTHROUGH_ARGS"))...)
		main()
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStrayArgument$")
	cmd.Env = append(os.Environ(), "WALKTHROUGH_MAIN=1", "WALKTHROUGH_ARGS=512")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || stdout.Len() != 0 ||
		!strings.Contains(stderr.String(), `walkthrough: unexpected argument "512": the settings are flags`) {
		t.Fatalf("walkthrough 512: %v\nstdout %q\nstderr %q", err, stdout.String(), stderr.String())
	}
}
