package nvrtc

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emberml/ember/internal/testenv"
)

const debPkg = "libnvrtc11.2"

// axpySrc is a templated kernel; line 4 matters for the syntax-error test.
const axpySrc = `template <typename T>
__global__ void axpy(T a, const T* x, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
template __global__ void axpy<float>(float, const float*, float*, int);
`

// badSrc lacks a ';' on line 4, before the closing brace.
const badSrc = `extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i] }
`

func need(t *testing.T) {
	t.Helper()
	_, _, err := Version()
	testenv.NeedLib(t, debPkg, err)
}

func TestVersion(t *testing.T) {
	major, minor, err := Version()
	testenv.NeedLib(t, debPkg, err)
	path, builtins, _ := Library()
	t.Logf("NVRTC %d.%d from %s (builtins preloaded: %q)", major, minor, path, builtins)
	// Debian bookworm's libnvrtc11.2 package is CUDA 11.8's NVRTC; a newer
	// NVRTC on the search order (CUDA 12 pip wheels) legitimately wins.
	if major == 11 && minor != 8 {
		t.Errorf("Version() = %d.%d, want 11.8 (Debian libnvrtc11.2)", major, minor)
	}
	if major < 11 {
		t.Errorf("Version() = %d.%d, want >= 11", major, minor)
	}
}

func TestSupportedArchs(t *testing.T) {
	need(t)
	archs, err := SupportedArchs()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("supported archs: %v", archs)
	has := map[int]bool{}
	for _, a := range archs {
		has[a] = true
	}
	for _, want := range []int{80, 90} {
		if !has[want] {
			t.Errorf("SupportedArchs() = %v lacks %d", archs, want)
		}
	}
}

func TestCompileCubin(t *testing.T) {
	need(t)
	for i, arch := range []string{"sm_80", "sm_90"} {
		start := time.Now()
		res, err := Compile(axpySrc, "axpy.cu", Options{
			Arch:            arch,
			Flags:           []string{"-default-device", "-std=c++17"},
			NameExpressions: []string{"axpy<float>"},
		})
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		t.Logf("%s: compiled in %v (call %d of the test), cubin %d bytes, ptx %d bytes", arch, time.Since(start), i+1, len(res.CUBIN), len(res.PTX))
		if !bytes.HasPrefix(res.CUBIN, []byte("\x7fELF")) {
			n := min(len(res.CUBIN), 8)
			t.Errorf("%s: CUBIN starts %q, want the ELF magic \\x7fELF", arch, res.CUBIN[:n])
		}
		// The mangled name of axpy<float>(float, const float*, float*, int),
		// worked out by hand from the Itanium C++ ABI.
		const want = "_Z4axpyIfEvT_PKS0_PS0_i"
		if got := res.LoweredNames["axpy<float>"]; got != want {
			t.Errorf("%s: lowered name of axpy<float> = %q, want %q", arch, got, want)
		}
		if len(res.PTX) > 0 && !bytes.Contains(res.PTX, []byte(".entry "+want)) {
			t.Errorf("%s: PTX lacks the entry %s", arch, want)
		}
	}
}

func TestCompilePTXOnly(t *testing.T) {
	need(t)
	major, minor, _ := Version()
	res, err := Compile(axpySrc, "axpy.cu", Options{Arch: "compute_90", NameExpressions: []string{"axpy<float>"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.CUBIN != nil {
		t.Errorf("compute_90: CUBIN = %d bytes, want nil (virtual arch)", len(res.CUBIN))
	}
	if bytes.HasSuffix(res.PTX, []byte{0}) {
		t.Error("PTX keeps its trailing NUL")
	}
	if major == 11 && minor == 8 {
		// CUDA 11.8 emits PTX ISA 7.8.
		if !bytes.Contains(res.PTX, []byte(".version 7.8")) {
			t.Errorf("PTX lacks .version 7.8:\n%.300s", res.PTX)
		}
	}
	if !bytes.Contains(res.PTX, []byte(".target sm_90")) {
		t.Errorf("PTX lacks .target sm_90:\n%.300s", res.PTX)
	}
	if !bytes.Contains(res.PTX, []byte(".entry _Z4axpyIfEvT_PKS0_PS0_i(")) {
		t.Errorf("PTX lacks the axpy<float> entry:\n%.600s", res.PTX)
	}
}

func TestCompileError(t *testing.T) {
	need(t)
	_, err := Compile(badSrc, "axpy.cu", Options{Arch: "sm_80"})
	var ce *CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %T %v, want *CompileError", err, err)
	}
	if ce.Name != "axpy.cu" {
		t.Errorf("Name = %q", ce.Name)
	}
	const line = `axpy.cu(4): error: expected a ";"`
	if !strings.Contains(ce.Log, line) || !strings.Contains(err.Error(), line) {
		t.Errorf("log/message lacks %q:\nlog: %s\nmsg: %v", line, ce.Log, err)
	}
	t.Logf("message: %v", err)
}

func TestInvalidOption(t *testing.T) {
	need(t)
	_, err := Compile(axpySrc, "axpy.cu", Options{Arch: "sm_80", Flags: []string{"--no-such-flag"}})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %T %v, want *Error", err, err)
	}
	if e.Call != "nvrtcCompileProgram" || e.Code != 5 || e.Name != "NVRTC_ERROR_INVALID_OPTION" {
		t.Errorf("err = %+v, want nvrtcCompileProgram 5 NVRTC_ERROR_INVALID_OPTION", e)
	}
	t.Logf("message: %v", err)
}

func TestBadNameExpression(t *testing.T) {
	need(t)
	_, err := Compile(axpySrc, "axpy.cu", Options{Arch: "compute_80", NameExpressions: []string{"nosuch<float>"}})
	if err == nil {
		t.Fatal("want an error for an unknown name expression")
	}
	t.Logf("message: %v", err)
}

func TestConcurrentCompile(t *testing.T) {
	need(t)
	// Warm up so that the timing below is of compiles, not of loading.
	if _, err := Compile(axpySrc, "warm.cu", Options{Arch: "sm_80"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := Compile(axpySrc, "one.cu", Options{Arch: "sm_80"}); err != nil {
		t.Fatal(err)
	}
	serial := time.Since(start)

	const workers, per = 2, 3
	var wg sync.WaitGroup
	errs := make(chan error, workers*per)
	start = time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			arch := []string{"sm_80", "sm_90"}[w%2]
			for range per {
				res, err := Compile(axpySrc, "axpy.cu", Options{Arch: arch, NameExpressions: []string{"axpy<float>"}})
				if err != nil {
					errs <- err
					return
				}
				if !bytes.HasPrefix(res.CUBIN, []byte("\x7fELF")) || res.LoweredNames["axpy<float>"] != "_Z4axpyIfEvT_PKS0_PS0_i" {
					errs <- errors.New("bad result from a concurrent compile")
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("one compile: %v; %d compiles on %d goroutines: %v (%v each)", serial, workers*per, workers, time.Since(start), time.Since(start)/(workers*per))
}
