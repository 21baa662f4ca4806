package nvml

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/emberml/ember/internal/cuda/libpath"
	"github.com/emberml/ember/internal/testenv"
)

// The C layouts from nvml.h, counted by hand: nvmlPciInfo_t is 16 + 5*4 + 32
// bytes; nvmlProcessInfo_t (v3) is pid(4) + pad(4) + 8 + 4 + 4.
func TestStructLayouts(t *testing.T) {
	if got := unsafe.Sizeof(cPciInfo{}); got != 68 {
		t.Errorf("sizeof nvmlPciInfo_t = %d, want 68", got)
	}
	if got := unsafe.Offsetof(cPciInfo{}.busID); got != 36 {
		t.Errorf("offsetof busId = %d, want 36", got)
	}
	if got := unsafe.Sizeof(cProcessInfo{}); got != 24 {
		t.Errorf("sizeof nvmlProcessInfo_t = %d, want 24", got)
	}
	if got := unsafe.Offsetof(cProcessInfo{}.usedGpuMemory); got != 8 {
		t.Errorf("offsetof usedGpuMemory = %d, want 8", got)
	}
	if got := unsafe.Offsetof(cProcessInfo{}.computeInstanceID); got != 20 {
		t.Errorf("offsetof computeInstanceId = %d, want 20", got)
	}
	if got := unsafe.Sizeof(cMemory{}); got != 24 {
		t.Errorf("sizeof nvmlMemory_t = %d, want 24", got)
	}
}

func TestReturnNames(t *testing.T) {
	for code, want := range map[Return]string{
		1: "NVML_ERROR_UNINITIALIZED", 2: "NVML_ERROR_INVALID_ARGUMENT", 3: "NVML_ERROR_NOT_SUPPORTED",
		4: "NVML_ERROR_NO_PERMISSION", 9: "NVML_ERROR_DRIVER_NOT_LOADED", 15: "NVML_ERROR_GPU_IS_LOST",
		18: "NVML_ERROR_LIB_RM_VERSION_MISMATCH", 999: "NVML_ERROR_UNKNOWN", 12345: "NVML_ERROR_12345",
	} {
		if got := code.Name(); got != want {
			t.Errorf("Return(%d).Name() = %q, want %q", code, got, want)
		}
	}
	e := &Error{Call: "nvmlInit_v2", Code: 9, Name: "NVML_ERROR_DRIVER_NOT_LOADED", Desc: "Driver Not Loaded"}
	if got, want := e.Error(), "nvml: nvmlInit_v2: NVML_ERROR_DRIVER_NOT_LOADED (9): Driver Not Loaded"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !IsCode(fmt.Errorf("wrapped: %w", e), ErrorDriverNotLoaded) || IsCode(e, ErrorNotSupported) || IsCode(errors.New("x"), 9) {
		t.Error("IsCode is wrong")
	}
}

func TestSymbolTableMatchesIndexes(t *testing.T) {
	names := Symbols()
	if len(names) != int(numSyms) {
		t.Fatalf("%d names, %d indexes", len(names), numSyms)
	}
	seen := map[string]bool{}
	for i, n := range names {
		if n == "" || !strings.HasPrefix(n, "nvml") || seen[n] {
			t.Errorf("symbol %d: bad or duplicate name %q", i, n)
		}
		seen[n] = true
	}
}

func openReal(t *testing.T) *Lib {
	t.Helper()
	l, err := Open()
	testenv.NeedLib(t, "libnvidia-ml1", err)
	return l
}

// Every function in the table resolves in the real library.
func TestRealSymbolsResolve(t *testing.T) {
	l := openReal(t)
	for i, s := range symbols {
		if _, err := l.fn.Lib().Sym(s.Name); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
		if l.fn.Ptr(i) == 0 {
			t.Errorf("%s: not bound", s.Name)
		}
	}
}

// Without a kernel driver (this machine, and CI), nvmlInit_v2 returns 9.
func TestRealInitWithoutDriver(t *testing.T) {
	l := openReal(t)
	err := l.Init()
	if err == nil {
		defer l.Shutdown()
		n, _ := l.DeviceCount()
		t.Skipf("a driver is loaded here (%d devices); the no-driver test does not apply", n)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Init error %T %v, want *Error", err, err)
	}
	if e.Code != 9 || e.Name != "NVML_ERROR_DRIVER_NOT_LOADED" || e.Call != "nvmlInit_v2" {
		t.Errorf("Init = %+v, want nvmlInit_v2 code 9 NVML_ERROR_DRIVER_NOT_LOADED", e)
	}
	// nvmlErrorString(9) in libnvidia-ml 535 is "Driver Not Loaded".
	if e.Desc != "Driver Not Loaded" {
		t.Errorf("message = %q, want %q", e.Desc, "Driver Not Loaded")
	}
	// Before a successful Init, device calls say so.
	if _, err := l.DeviceCount(); !IsCode(err, ErrorUninitialized) {
		t.Errorf("DeviceCount before Init = %v, want NVML_ERROR_UNINITIALIZED", err)
	}
}

func TestRealErrorString(t *testing.T) {
	l := openReal(t)
	for code, want := range map[Return]string{0: "Success", 3: "Not Supported", 999: "Unknown Error"} {
		if got := l.ErrorString(code); got != want {
			t.Errorf("nvmlErrorString(%d) = %q, want %q", code, got, want)
		}
	}
}

func TestOpenNotFound(t *testing.T) {
	t.Setenv("EMBER_CUDA_LIB_DIR", t.TempDir())
	_, err := libpath.Open("libnvidia-ml-does-not-exist.so.1")
	var nf *libpath.NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("err = %v, want *libpath.NotFoundError", err)
	}
}

func TestZeroDevice(t *testing.T) {
	if _, err := (Device{}).Name(); err == nil {
		t.Error("zero Device Name: no error")
	}
}
