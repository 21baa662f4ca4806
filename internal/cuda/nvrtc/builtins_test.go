package nvrtc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuiltinsPreloadedFromNVRTCFolder opens NVRTC from a private folder
// (symlinks to the installed files, found first through EMBER_CUDA_LIB_DIR)
// in a child process, and checks that the builtins were preloaded from that
// same folder by full path and that a compile works.
func TestBuiltinsPreloadedFromNVRTCFolder(t *testing.T) {
	if dir := os.Getenv("EMBER_TEST_NVRTC_CHILD"); dir != "" {
		path, builtins, err := Library()
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(path) != dir || filepath.Dir(builtins) != dir {
			t.Fatalf("NVRTC %s, builtins %q: want both from %s", path, builtins, dir)
		}
		if _, err := Compile(axpySrc, "axpy.cu", Options{Arch: "sm_80"}); err != nil {
			t.Fatal(err)
		}
		return
	}
	need(t)
	path, _, _ := Library()
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	builtins, _ := filepath.Glob(filepath.Join(filepath.Dir(real), "libnvrtc-builtins.so.*"))
	if len(builtins) == 0 {
		t.Skipf("no libnvrtc-builtins next to %s", real)
	}
	dir := t.TempDir()
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	// A version above anything installed, so that OpenNewest prefers it.
	link(real, "libnvrtc.so.99")
	for _, b := range builtins {
		link(b, filepath.Base(b))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBuiltinsPreloadedFromNVRTCFolder$", "-test.v")
	cmd.Env = append(os.Environ(), "EMBER_TEST_NVRTC_CHILD="+dir, "EMBER_CUDA_LIB_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
