package libpath

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/emberml/ember/internal/testenv"
)

func TestSearchOrder(t *testing.T) {
	root := t.TempDir()
	mk := func(p string) string {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	override := mk("override")
	cudaLib64 := mk("cuda/lib64")
	cudaTargets := mk("cuda/targets/x86_64-linux/lib")
	ld := mk("ld")
	t.Setenv("EMBER_CUDA_LIB_DIR", override)
	t.Setenv("CUDA_PATH", filepath.Join(root, "cuda"))
	t.Setenv("CUDA_HOME", "")
	t.Setenv("LD_LIBRARY_PATH", ld+":"+filepath.Join(root, "missing"))
	var got []string
	for _, d := range Dirs() {
		if strings.HasPrefix(d.Path, root) {
			got = append(got, d.Source+"="+strings.TrimPrefix(d.Path, root))
		}
	}
	want := []string{
		"EMBER_CUDA_LIB_DIR=" + strings.TrimPrefix(override, root),
		"CUDA_PATH=" + strings.TrimPrefix(cudaLib64, root),
		"CUDA_PATH=" + strings.TrimPrefix(cudaTargets, root),
		"LD_LIBRARY_PATH=" + strings.TrimPrefix(ld, root),
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("search order:\n got %q\nwant %q", got, want)
	}
}

func TestSoVersionOrder(t *testing.T) {
	c := []candidate{
		{path: "a/libnvrtc.so.11.2", version: soVersion("a/libnvrtc.so.11.2")},
		{path: "b/libnvrtc.so.12.4.99", version: soVersion("b/libnvrtc.so.12.4.99")},
		{path: "c/libnvrtc.so.12", version: soVersion("c/libnvrtc.so.12")},
	}
	sortByVersion(c)
	if c[0].path != "b/libnvrtc.so.12.4.99" || c[1].path != "c/libnvrtc.so.12" || c[2].path != "a/libnvrtc.so.11.2" {
		t.Fatalf("order %v", c)
	}
}

func TestNotFoundListsPlaces(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("EMBER_CUDA_LIB_DIR", dir)
	_, err := Open("libember-does-not-exist.so.7")
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("want *NotFoundError, got %v", err)
	}
	if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "libember-does-not-exist.so.7 not found") {
		t.Fatalf("message does not list the search: %v", err)
	}
}

func TestBrokenFileIsReported(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "libbogus.so.1"), []byte("not an ELF"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("EMBER_CUDA_LIB_DIR", dir)
	_, err := Open("libbogus.so.1")
	if err == nil || !strings.Contains(err.Error(), "could not load") {
		t.Fatalf("want a load failure naming the file, got %v", err)
	}
}

func TestRealLibcudaSymbol(t *testing.T) {
	lib, err := Open("libcuda.so.1", "libcuda.so")
	testenv.NeedLib(t, "libcuda1", err)
	if _, err := lib.Sym("cuInit"); err != nil {
		t.Fatal(err)
	}
	_, err = lib.Sym("cuNoSuchFunction")
	var se *SymbolError
	if !errors.As(err, &se) || se.Symbol != "cuNoSuchFunction" {
		t.Fatalf("want *SymbolError, got %v", err)
	}
}
