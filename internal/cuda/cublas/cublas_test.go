package cublas

import (
	"errors"
	"strings"
	"testing"

	"github.com/emberml/ember/internal/testenv"
)

const debPkg = "libcublas11"

func TestSymbolsResolve(t *testing.T) {
	got, err := Resolved()
	testenv.NeedLib(t, debPkg, err)
	path, _ := Library()
	t.Logf("%s: %d of %d bound symbols resolve", path, len(got), len(Symbols))
	major, _, _, err := LibraryVersion()
	if err != nil {
		t.Fatal(err)
	}
	// cuBLAS 11.11 exports every symbol, the optional ones included
	// (checked with nm -D on Debian's libcublas.so.11.11.3.6).
	if major == 11 && len(got) != len(Symbols) {
		t.Errorf("resolved %v, want all of %v", got, Symbols)
	}
}

func TestLibraryVersion(t *testing.T) {
	major, minor, patch, err := LibraryVersion()
	testenv.NeedLib(t, debPkg, err)
	path, _ := Library()
	t.Logf("cuBLAS %d.%d.%d from %s", major, minor, patch, path)
	// Debian's libcublas11 ships libcublas.so.11.11.3.6.
	if strings.HasSuffix(path, "libcublas.so.11.11.3.6") && (major != 11 || minor != 11 || patch != 3) {
		t.Errorf("LibraryVersion() = %d.%d.%d, want 11.11.3", major, minor, patch)
	}
}

func TestStatusNamesMatchLibrary(t *testing.T) {
	_, err := Resolved()
	testenv.NeedLib(t, debPkg, err)
	a, _ := load()
	if a.fn.Named("cublasGetStatusName") == 0 {
		t.Skip("this cuBLAS lacks cublasGetStatusName")
	}
	for s, name := range statusNames {
		lib, err := StatusName(s)
		if err != nil {
			t.Fatal(err)
		}
		if lib != name {
			t.Errorf("status %d: Go table says %s, cuBLAS says %s", s, name, lib)
		}
	}
}

func TestCreateWithoutGPU(t *testing.T) {
	_, err := Resolved()
	testenv.NeedLib(t, debPkg, err)
	h, err := Create()
	if err == nil {
		// A machine with a GPU: the handle works.
		defer h.Destroy()
		v, err := h.Version()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("cublasCreate_v2 succeeded (a GPU is present); cublasGetVersion_v2 = %d", v)
		return
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %T %v, want *Error", err, err)
	}
	if e.Call != "cublasCreate_v2" || e.Code != StatusNotInitialized || e.Name != "CUBLAS_STATUS_NOT_INITIALIZED" {
		t.Errorf("err = %+v, want cublasCreate_v2 status 1 CUBLAS_STATUS_NOT_INITIALIZED", e)
	}
	msg := err.Error()
	for _, want := range []string{"cublasCreate_v2", "CUBLAS_STATUS_NOT_INITIALIZED", "(1)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	t.Logf("message: %v", err)
}

func TestNilHandle(t *testing.T) {
	var h *Handle
	if err := h.SetStream(0); err == nil {
		t.Error("SetStream on a nil handle: want an error")
	}
	if err := h.Destroy(); err != nil {
		t.Errorf("Destroy on a nil handle = %v, want nil", err)
	}
	if err := SgemmRowMajor(h, false, false, 2, 2, 2, 1, 0, 2, 0, 2, 0, 0, 2); err == nil {
		t.Error("SgemmRowMajor on a nil handle: want an error")
	}
}
