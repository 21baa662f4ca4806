// Package nccltest builds a stand-in for libnccl.so.2 (testdata/fakenccl.c: NCCL's C
// ABI, host memory for device buffers, the ranks as threads of one process)
// so that the NCCL binding and the dist package's nccl backend are tested
// without NCCL or a GPU.
package nccltest

import (
	_ "embed"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/emberml/ember/internal/testenv"
)

//go:embed testdata/fakenccl.c
var source []byte

// Build compiles the stand-in into a temporary folder as libnccl.so.2 and
// points EMBER_CUDA_LIB_DIR there for the rest of the test. It skips (or
// fails under EMBER_REQUIRE_LIBS=1) without gcc.
func Build(t testing.TB) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	testenv.NeedLib(t, "gcc", err)
	dir := t.TempDir()
	src := filepath.Join(dir, "fakenccl.c")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(gcc, "-O1", "-shared", "-fPIC", "-o", filepath.Join(dir, "libnccl.so.2"), src, "-lpthread").CombinedOutput()
	if err != nil {
		t.Fatalf("building the NCCL stand-in: %v\n%s", err, out)
	}
	t.Setenv("EMBER_CUDA_LIB_DIR", dir)
	return dir
}
