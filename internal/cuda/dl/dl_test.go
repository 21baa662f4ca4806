package dl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/emberml/ember/internal/cuda/libpath"
	"github.com/emberml/ember/internal/testenv"
)

// Debian's libcuda1 (535) is the library these tests open: it loads
// without a GPU, its cuDriverGetVersion says 12020 (CUDA 12.2) and its
// cuInit says CUDA_ERROR_NO_DEVICE (100) on a machine without one.
const debPkg = "libcuda1"

func openCUDA(t *testing.T) *libpath.Lib {
	t.Helper()
	lib, err := libpath.Open("libcuda.so.1")
	testenv.NeedLib(t, debPkg, err)
	return lib
}

func TestLoadOnce(t *testing.T) {
	binds := 0
	l := &Library[*libpath.Lib]{
		Names: []string{"libcuda.so.1", "libcuda.so"},
		Bind:  func(lib *libpath.Lib) (*libpath.Lib, error) { binds++; return lib, nil },
	}
	a, err := l.Load()
	testenv.NeedLib(t, debPkg, err)
	b, err := l.Load()
	if err != nil || a != b || binds != 1 {
		t.Fatalf("second Load: %p %p %v, Bind ran %d times, want the same library and 1", a, b, err, binds)
	}
	if filepath.Base(a.Path) != "libcuda.so.1" || a.Name != "libcuda.so.1" {
		t.Errorf("opened %q (%q), want libcuda.so.1", a.Path, a.Name)
	}
	l.Reset()
	if _, err := l.Load(); err != nil || binds != 2 {
		t.Errorf("Load after Reset: %v, Bind ran %d times, want 2", err, binds)
	}
}

// A library that is not found is a *libpath.NotFoundError naming it and the
// folders searched; Load remembers the failure unless Retry is set, and then
// finds the library once it is there.
func TestNotFound(t *testing.T) {
	real := openCUDA(t)
	const name = "libember-dl-test.so.1"
	for _, retry := range []bool{false, true} {
		t.Run(fmt.Sprintf("retry=%v", retry), func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("EMBER_CUDA_LIB_DIR", dir)
			binds := 0
			l := &Library[string]{Names: []string{name}, Retry: retry,
				Bind: func(lib *libpath.Lib) (string, error) { binds++; return lib.Path, nil }}
			_, err := l.Load()
			var nf *libpath.NotFoundError
			if !errors.As(err, &nf) {
				t.Fatalf("Load() = %v, want a *libpath.NotFoundError", err)
			}
			if len(nf.Names) != 1 || nf.Names[0] != name || len(nf.Searched) == 0 || nf.Searched[0] != dir {
				t.Fatalf("names %q, searched %q; want %s, first %s", nf.Names, nf.Searched, name, dir)
			}
			if binds != 0 {
				t.Fatal("Bind ran without a library")
			}
			// The library appears in the first folder of the search order.
			if err := os.Symlink(real.Path, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
			path, err := l.Load()
			if !retry {
				if !errors.As(err, &nf) || path != "" {
					t.Fatalf("second Load without Retry = %q, %v; want the first failure", path, err)
				}
				return
			}
			if err != nil || path != filepath.Join(dir, name) || binds != 1 {
				t.Fatalf("Load with Retry = %q, %v (Bind ran %d times); want %s", path, err, binds, filepath.Join(dir, name))
			}
		})
	}
}

func TestBindError(t *testing.T) {
	openCUDA(t)
	want := errors.New("no")
	l := &Library[int]{Names: []string{"libcuda.so.1"}, Bind: func(*libpath.Lib) (int, error) { return 0, want }}
	if _, err := l.Load(); err != want {
		t.Fatalf("Load() = %v, want Bind's error", err)
	}
}

func TestTable(t *testing.T) {
	lib := openCUDA(t)
	var getVersion func(v *int32) int32
	funcs := []Func{
		{Name: "cuDriverGetVersion"},
		{Name: "cuEmberNoSuchFunction"},
		{Name: "cuEmberNoSuchOptional", Optional: true},
		{Name: "cuEmberOldName", Alts: []string{"cuEmberAlsoMissing", "cuInit"}},
		{Name: "cuDriverGetVersion_ember", Alts: []string{"cuDriverGetVersion"}, Fn: &getVersion},
	}
	tab := NewTable(lib, funcs)
	if n, total := tab.Resolved(); n != 0 || total != 5 {
		t.Fatalf("before use: %d of %d resolved, want 0 of 5", n, total)
	}
	// Lazily, one function.
	a, err := tab.Addr(0)
	if err != nil || a == 0 {
		t.Fatalf("cuDriverGetVersion: %#x %v", a, err)
	}
	want, _ := lib.Sym("cuDriverGetVersion")
	if a != want || tab.Ptr(0) != a || tab.Named("cuDriverGetVersion") != a {
		t.Fatalf("address %#x, Ptr %#x, Named %#x; dlsym says %#x", a, tab.Ptr(0), tab.Named("cuDriverGetVersion"), want)
	}
	var v int32
	if r, _, _ := purego.SyscallN(a, uintptr(unsafe.Pointer(&v))); r != 0 || v != 12020 {
		t.Fatalf("cuDriverGetVersion through the table: %d, version %d; want 0 and 12020", r, v)
	}
	if n, _ := tab.Resolved(); n != 1 {
		t.Fatalf("after one call %d resolved, want 1", n)
	}
	// A missing symbol is an error naming it, not a panic.
	_, err = tab.Addr(1)
	var se *libpath.SymbolError
	if !errors.As(err, &se) || se.Symbol != "cuEmberNoSuchFunction" || se.Path != lib.Path {
		t.Fatalf("missing symbol: %v", err)
	}
	if tab.Ptr(1) != 0 || tab.Named("cuEmberNoSuchFunction") != 0 || tab.Named("not in the table") != 0 {
		t.Fatal("a missing function has an address")
	}
	// All at once: only the required missing one is reported.
	missing, first := tab.Resolve()
	if len(missing) != 1 || missing[0] != "cuEmberNoSuchFunction" || !errors.As(first, &se) || se.Symbol != "cuEmberNoSuchFunction" {
		t.Fatalf("Resolve() = %q, %v", missing, first)
	}
	if n, total := tab.Resolved(); n != 3 || total != 5 {
		t.Fatalf("after Resolve %d of %d resolved, want 3 of 5", n, total)
	}
	// An alternative name resolves to its own address.
	if init, _ := lib.Sym("cuInit"); tab.Ptr(3) != init || tab.Name(3) != "cuEmberOldName" {
		t.Fatalf("cuEmberOldName: %#x, want cuInit's %#x", tab.Ptr(3), init)
	}
	// Fn is bound with RegisterFunc.
	v = 0
	if getVersion == nil {
		t.Fatal("Fn not bound")
	}
	if r := getVersion(&v); r != 0 || v != 12020 {
		t.Fatalf("bound cuDriverGetVersion: %d, version %d; want 0 and 12020", r, v)
	}
	me := NewMissingError("test", lib.Path, []string{"cuB", "cuA"})
	if me.Symbols[0] != "cuA" || me.Error() != "test: "+lib.Path+" lacks 2 entry point(s): cuA, cuB" {
		t.Fatalf("MissingError %q", me.Error())
	}
	if NewMissingError("test", lib.Path, nil) != nil {
		t.Fatal("MissingError without missing symbols")
	}
}

func TestFuncs(t *testing.T) {
	fs := Funcs([]string{"a", "b", "c"}, 2)
	if len(fs) != 3 || fs[0].Name != "a" || fs[0].Optional || fs[1].Optional || !fs[2].Optional || fs[2].Name != "c" {
		t.Fatalf("Funcs = %+v", fs)
	}
}

// Two code types, as two bindings would have them.
type cuResult int

var cuCodes = Codes[cuResult]{
	Names:       map[cuResult]string{0: "CUDA_SUCCESS", 2: "CUDA_ERROR_OUT_OF_MEMORY", 100: "CUDA_ERROR_NO_DEVICE"},
	Unknown:     "CUDA_ERROR_%d",
	OutOfMemory: []cuResult{2},
}

func (cuResult) Codes() *Codes[cuResult] { return &cuCodes }

type blasStatus int32

var blasCodes = Codes[blasStatus]{
	Lib: "cublas", Failed: true,
	Names:   map[blasStatus]string{1: "CUBLAS_STATUS_NOT_INITIALIZED"},
	Unknown: "CUBLAS_STATUS_%d",
	Hint: func(call string, s blasStatus) string {
		if s == 1 && call == "cublasCreate_v2" {
			return " (no GPU)"
		}
		return ""
	},
}

func (blasStatus) Codes() *Codes[blasStatus] { return &blasCodes }

// TestErrorFromRealCall builds the error of a real failed call: cuInit
// without a GPU, named by libcuda's cuGetErrorName and cuGetErrorString.
func TestErrorFromRealCall(t *testing.T) {
	lib := openCUDA(t)
	tab := NewTable(lib, []Func{{Name: "cuInit"}, {Name: "cuGetErrorName"}, {Name: "cuGetErrorString"}})
	if missing, err := tab.Resolve(); err != nil {
		t.Fatal(missing, err)
	}
	r, _, _ := purego.SyscallN(tab.Ptr(0), 0)
	code := cuResult(int32(r))
	if code == 0 {
		t.Skip("cuInit succeeded: a GPU is present")
	}
	var name, desc uintptr
	purego.SyscallN(tab.Ptr(1), uintptr(code), uintptr(unsafe.Pointer(&name)))
	purego.SyscallN(tab.Ptr(2), uintptr(code), uintptr(unsafe.Pointer(&desc)))
	e := &Error[cuResult]{Call: "cuInit", Code: code, Name: libpath.GoString(name), Desc: libpath.GoString(desc)}
	if e.Code != 100 || e.Name != "CUDA_ERROR_NO_DEVICE" || e.Name != cuCodes.Name(e.Code) {
		t.Fatalf("cuInit: %d %q, want 100 CUDA_ERROR_NO_DEVICE", e.Code, e.Name)
	}
	if got, want := e.Error(), "cuInit: CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestErrorFormat(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&Error[cuResult]{Call: "cuMemAlloc_v2", Code: 2, Name: "CUDA_ERROR_OUT_OF_MEMORY"}, "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2)"},
		{&Error[cuResult]{Call: "cuX", Code: 4242}, "cuX: CUDA_ERROR_4242 (4242)"},
		{&Error[blasStatus]{Call: "cublasCreate_v2", Code: 1, Name: "CUBLAS_STATUS_NOT_INITIALIZED", Desc: "the library was not initialized"},
			"cublas: cublasCreate_v2 failed: CUBLAS_STATUS_NOT_INITIALIZED (1): the library was not initialized (no GPU)"},
		{&Error[blasStatus]{Call: "cublasSgemm_v2", Code: 1, Detail: "more"}, "cublas: cublasSgemm_v2 failed: CUBLAS_STATUS_NOT_INITIALIZED (1): more"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
	if n := blasCodes.Name(77); n != "CUBLAS_STATUS_77" {
		t.Errorf("unknown status named %q", n)
	}
	oom := &Error[cuResult]{Code: 2}
	if !oom.OutOfMemory() || (&Error[cuResult]{Code: 100}).OutOfMemory() || (&Error[blasStatus]{Code: 2}).OutOfMemory() {
		t.Error("OutOfMemory")
	}
	wrapped := fmt.Errorf("x: %w", errors.Join(errors.New("y"), &Error[cuResult]{Call: "cuInit", Code: 100}))
	if !IsCode(wrapped, cuResult(100)) || IsCode(wrapped, cuResult(2)) || IsCode(wrapped, blasStatus(100)) || IsCode(errors.New("x"), cuResult(100)) {
		t.Error("IsCode")
	}
}
