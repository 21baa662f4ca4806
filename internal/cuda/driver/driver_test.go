package driver

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"github.com/emberml/ember/internal/cuda/libpath"
	"github.com/emberml/ember/internal/testenv"
)

func TestErrorFormat(t *testing.T) {
	cases := []struct {
		e    *Error
		want string
	}{
		{&Error{Call: "cuInit", Code: 100, Name: "CUDA_ERROR_NO_DEVICE", Desc: "no CUDA-capable device is detected"},
			"cuInit: CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected"},
		{&Error{Call: "cuMemAlloc_v2", Code: 2, Name: "CUDA_ERROR_OUT_OF_MEMORY"},
			"cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2)"},
	}
	for _, c := range cases {
		if got := c.e.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
	if got := (&Error{Code: 3, Name: "CUDA_ERROR_NOT_INITIALIZED"}).CodeString(); got != "CUDA_ERROR_NOT_INITIALIZED (3)" {
		t.Errorf("CodeString = %q", got)
	}
	wrapped := errors.Join(errors.New("x"), &Error{Call: "cuInit", Code: ErrNoDevice})
	if !IsCode(wrapped, 100) || IsCode(wrapped, ErrOutOfMemory) || IsCode(errors.New("x"), 100) {
		t.Error("IsCode")
	}
	if fallbackName(100) != "CUDA_ERROR_NO_DEVICE" || fallbackName(12345) != "CUDA_ERROR_12345" {
		t.Error("fallbackName")
	}
}

func TestVersionString(t *testing.T) {
	for v, want := range map[int]string{12020: "12.2", 11080: "11.8", 12000: "12.0", 10010: "10.1"} {
		if got := VersionString(v); got != want {
			t.Errorf("VersionString(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestUUIDString(t *testing.T) {
	u := UUID{0x5f, 0x0a, 0xc3, 0x12, 0x8e, 0x01, 0x47, 0x7b, 0x9a, 0x2c, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60}
	if got, want := u.String(), "GPU-5f0ac312-8e01-477b-9a2c-102030405060"; got != want {
		t.Fatalf("got %s want %s", got, want)
	}
}

func TestTableIsConsistent(t *testing.T) {
	seen := map[string]bool{}
	for p := procID(0); p < numProcs; p++ {
		if procTable[p].Name == "" {
			t.Fatalf("proc %d has no name", p)
		}
		n := procTable[p].Name
		if seen[n] {
			t.Fatalf("%s twice", n)
		}
		seen[n] = true
	}
	if len(SymbolNames()) != int(numProcs) {
		t.Fatal("SymbolNames length")
	}
}

func TestNotFound(t *testing.T) {
	t.Setenv("EMBER_CUDA_LIB_DIR", t.TempDir())
	_, err := open([]string{"libember-no-such-cuda.so.1"})
	var nf *libpath.NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("want *libpath.NotFoundError, got %T %v", err, err)
	}
	r := probe(func() (*Driver, error) { return open([]string{"libember-no-such-cuda.so.1"}) })
	if r.Found || r.Usable() || !errors.As(r.LoadErr, &nf) {
		t.Fatalf("probe of a missing library: %+v", r)
	}
	if !strings.HasPrefix(r.Reason(), "libember-no-such-cuda.so.1 not found") || !strings.Contains(r.Reason(), "searched:") {
		t.Fatalf("reason %q", r.Reason())
	}
}

func realDriver(t *testing.T) *Driver {
	t.Helper()
	d, err := Load()
	testenv.NeedLib(t, "libcuda1", err)
	return d
}

func TestRealResolveAll(t *testing.T) {
	d := realDriver(t)
	if err := d.ResolveAll(); err != nil {
		t.Fatal(err)
	}
	n, total := d.Resolved()
	t.Logf("%s (%s): %d of %d entry points resolved", d.Path, d.Source, n, total)
	if n != total || total != 50 {
		t.Fatalf("resolved %d of %d, want 50 of 50", n, total)
	}
}

func TestRealErrorNames(t *testing.T) {
	d := realDriver(t)
	for code, name := range codeNames {
		e := d.ErrorFor("cuTest", code)
		if e.Name != name {
			t.Errorf("code %d: libcuda says %s, table says %s", code, e.Name, name)
		}
	}
	e := d.ErrorFor("cuMemAlloc_v2", 2)
	if got, want := e.Error(), "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"; got != want {
		t.Errorf("got %q want %q", got, want)
	}
	// An unknown code: cuGetErrorName fails, the fallback names it.
	if e := d.ErrorFor("cuTest", 4242); e.Name != "CUDA_ERROR_4242" {
		t.Errorf("unknown code named %q", e.Name)
	}
}

func TestRealInitNoDevice(t *testing.T) {
	d := realDriver(t)
	v, err := d.DriverGetVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v != 12020 {
		t.Fatalf("driver version %d, want 12020", v)
	}
	err = d.Init()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("cuInit: want *Error, got %v", err)
	}
	if ce.Call != "cuInit" || ce.Code != 100 || ce.Name != "CUDA_ERROR_NO_DEVICE" || ce.Desc != "no CUDA-capable device is detected" {
		t.Fatalf("cuInit error %#v", ce)
	}
	if got, want := err.Error(), "cuInit: CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	// Calls that need cuInit report that it did not succeed.
	_, err = d.DeviceGetCount()
	if !errors.As(err, &ce) || ce.Call != "cuDeviceGetCount" || ce.Code != ErrNotInitialized || ce.Name != "CUDA_ERROR_NOT_INITIALIZED" {
		t.Fatalf("cuDeviceGetCount without init: %v", err)
	}
	if _, err := d.PrimaryContext(0); !IsCode(err, ErrNoDevice) {
		t.Fatalf("PrimaryContext: %v", err)
	}
}

func TestRealProbe(t *testing.T) {
	realDriver(t)
	r := Probe()
	if !r.Found || r.Path != "/usr/lib/x86_64-linux-gnu/libcuda.so.1" || r.Source != "system" {
		t.Fatalf("library %q from %q", r.Path, r.Source)
	}
	if r.DriverVersion != 12020 || r.Version != "12.2" {
		t.Fatalf("version %d %q", r.DriverVersion, r.Version)
	}
	if r.InitErr == nil || r.InitErr.Code != 100 || r.InitErr.Name != "CUDA_ERROR_NO_DEVICE" {
		t.Fatalf("init %v", r.InitErr)
	}
	if r.DeviceCount != 0 || len(r.Devices) != 0 || r.Usable() || r.Missing != nil || r.Resolved != 50 {
		t.Fatalf("report %+v", r)
	}
	if got, want := r.Reason(), "cuInit failed: CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected"; got != want {
		t.Fatalf("reason %q want %q", got, want)
	}
}

// TestContextThread checks the worker: every Do runs on the one OS thread
// where setCurrent ran, whatever goroutine calls it.
func TestContextThread(t *testing.T) {
	c := &Context{Ordinal: 3}
	var tid int
	if err := c.start(func() error { tid = syscall.Gettid(); return nil }); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []int
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				_ = c.Do(func() error {
					if got := syscall.Gettid(); got != tid {
						mu.Lock()
						bad = append(bad, got)
						mu.Unlock()
					}
					runtime.Gosched()
					return nil
				})
			}
		}()
	}
	wg.Wait()
	if len(bad) > 0 {
		t.Fatalf("%d jobs ran off the context thread %d", len(bad), tid)
	}
	want := errors.New("boom")
	if err := c.Do(func() error { return want }); err != want {
		t.Fatalf("error not passed back: %v", err)
	}
	func() {
		defer func() {
			if pv := recover(); pv != "kaput" {
				t.Fatalf("panic not re-raised: %v", pv)
			}
		}()
		_ = c.Do(func() error { panic("kaput") })
	}()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(func() error { return nil }); err != errClosed {
		t.Fatalf("Do after Close: %v", err)
	}
	// A failing setCurrent is returned by start.
	c2 := &Context{}
	if err := c2.start(func() error { return want }); err != want {
		t.Fatalf("start: %v", err)
	}
}

// TestRealCallsWithoutInit calls every wrapper on the real libcuda after
// cuInit failed: each must reach the library (arguments marshaled, Go memory
// pinned) and come back as a *Error naming its C entry point and
// CUDA_ERROR_NOT_INITIALIZED (cuLaunchKernel: CUDA_ERROR_INVALID_HANDLE).
func TestRealCallsWithoutInit(t *testing.T) {
	d := realDriver(t)
	if !IsCode(d.Init(), ErrNoDevice) {
		t.Skip("cuInit did not fail with CUDA_ERROR_NO_DEVICE here")
	}
	host := make([]byte, 64)
	hp := unsafe.Pointer(&host[0])
	n := int32(7)
	var dp DevicePtr
	calls := map[string]func() error{
		"cuDeviceGet":                  func() error { _, err := d.DeviceGet(0); return err },
		"cuDeviceGetName":              func() error { _, err := d.DeviceGetName(0); return err },
		"cuDeviceTotalMem_v2":          func() error { _, err := d.DeviceTotalMem(0); return err },
		"cuDeviceGetAttribute":         func() error { _, err := d.DeviceGetAttribute(AttrWarpSize, 0); return err },
		"cuDeviceGetUuid_v2":           func() error { _, err := d.DeviceGetUUID(0); return err },
		"cuDeviceGetPCIBusId":          func() error { _, err := d.DeviceGetPCIBusID(0); return err },
		"cuDevicePrimaryCtxRetain":     func() error { _, err := d.DevicePrimaryCtxRetain(0); return err },
		"cuDevicePrimaryCtxRelease_v2": func() error { return d.DevicePrimaryCtxRelease(0) },
		"cuCtxSetCurrent":              func() error { return d.CtxSetCurrent(0) },
		"cuCtxGetCurrent":              func() error { _, err := d.CtxGetCurrent(); return err },
		"cuCtxSynchronize":             d.CtxSynchronize,
		"cuMemAlloc_v2":                func() error { _, err := d.MemAlloc(1 << 20); return err },
		"cuMemFree_v2":                 func() error { return d.MemFree(dp) },
		"cuMemGetInfo_v2":              func() error { _, _, err := d.MemGetInfo(); return err },
		"cuMemAllocHost_v2":            func() error { _, err := d.MemAllocHost(4096); return err },
		"cuMemcpyHtoD_v2":              func() error { return d.MemcpyHtoD(dp, hp, 64) },
		"cuMemcpyDtoH_v2":              func() error { return d.MemcpyDtoH(hp, dp, 64) },
		"cuMemcpyDtoD_v2":              func() error { return d.MemcpyDtoD(dp, dp, 64) },
		"cuMemcpyHtoDAsync_v2":         func() error { return d.MemcpyHtoDAsync(dp, hp, 64, 0) },
		"cuMemcpyDtoHAsync_v2":         func() error { return d.MemcpyDtoHAsync(hp, dp, 64, 0) },
		"cuMemcpyDtoDAsync_v2":         func() error { return d.MemcpyDtoDAsync(dp, dp, 64, 0) },
		"cuMemsetD8_v2":                func() error { return d.MemsetD8(dp, 1, 64) },
		"cuMemsetD32_v2":               func() error { return d.MemsetD32(dp, 1, 16) },
		"cuMemsetD8Async":              func() error { return d.MemsetD8Async(dp, 1, 64, 0) },
		"cuMemsetD32Async":             func() error { return d.MemsetD32Async(dp, 1, 16, 0) },
		"cuStreamCreate":               func() error { _, err := d.StreamCreate(StreamNonBlocking); return err },
		"cuStreamSynchronize":          func() error { return d.StreamSynchronize(0) },
		"cuStreamQuery":                func() error { _, err := d.StreamQuery(0); return err },
		"cuEventCreate":                func() error { _, err := d.EventCreate(EventDisableTiming); return err },
		"cuModuleLoadData":             func() error { _, err := d.ModuleLoadData([]byte(".version 7.0\n")); return err },
		"cuModuleLoadDataEx":           func() error { _, _, err := d.LoadModule([]byte(".version 7.0\n")); return err },
		"cuLaunchKernel": func() error {
			return d.LaunchKernel(0, [3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}, 0, 0, []unsafe.Pointer{unsafe.Pointer(&dp), unsafe.Pointer(&n)})
		},
		"cuOccupancyMaxPotentialBlockSize": func() error { _, _, err := d.OccupancyMaxPotentialBlockSize(0, 0, 0); return err },
	}
	// cuLaunchKernel checks its function handle first: a nil one is
	// CUDA_ERROR_INVALID_HANDLE (400) even before initialization.
	want := map[string]string{"cuLaunchKernel": "CUDA_ERROR_INVALID_HANDLE"}
	for name, f := range calls {
		err := f()
		var ce *Error
		wantName := "CUDA_ERROR_NOT_INITIALIZED"
		if w, ok := want[name]; ok {
			wantName = w
		}
		if !errors.As(err, &ce) || ce.Call != name || ce.Name != wantName || ce.Code != map[string]Result{"CUDA_ERROR_NOT_INITIALIZED": 3, "CUDA_ERROR_INVALID_HANDLE": 400}[wantName] {
			t.Errorf("%s: got %v", name, err)
		}
	}
	t.Logf("%d wrappers reached libcuda and reported the expected CUresult", len(calls))
}
