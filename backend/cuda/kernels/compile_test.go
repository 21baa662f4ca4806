package kernels

import (
	"bytes"
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emberml/ember/internal/cuda/nvrtc"
	"github.com/emberml/ember/internal/testenv"
)

// Flags are the NVRTC options the kernels are written for.
var testFlags = []string{"-std=c++17", "-default-device"}

// TestCompileAll compiles every module with every name expression for
// sm_80 and sm_90 (CUBIN) and compute_90 (PTX) with the real NVRTC.
func TestCompileAll(t *testing.T) {
	_, _, err := nvrtc.Version()
	testenv.NeedLib(t, "libnvrtc11.2", err)
	mods := Modules()
	names := make([]string, 0, len(mods))
	for m := range mods {
		names = append(names, m)
	}
	sort.Strings(names)
	total := 0
	for _, m := range names {
		total += len(NameExpressions(m))
	}
	start := time.Now()
	// Every kernel for every target; -short compiles them for sm_80 only
	// (each target takes ~10 s of NVRTC on two cores).
	archs := []string{"sm_80", "sm_90", "compute_90"}
	if testing.Short() {
		archs = archs[:1]
	}
	var wg sync.WaitGroup
	for _, arch := range archs {
		for _, m := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t0 := time.Now()
				exprs := NameExpressions(m)
				res, err := nvrtc.Compile(mods[m], m+".cu", nvrtc.Options{Arch: arch, Flags: testFlags, NameExpressions: exprs})
				if err != nil {
					var ce *nvrtc.CompileError
					if errors.As(err, &ce) {
						t.Errorf("%s for %s: compile error, NVRTC log:\n%s", m, arch, ce.Log)
					} else {
						t.Errorf("%s for %s: %v", m, arch, err)
					}
					return
				}
				if strings.HasPrefix(arch, "sm_") {
					if !bytes.HasPrefix(res.CUBIN, []byte("\x7fELF")) {
						t.Errorf("%s for %s: CUBIN lacks the ELF magic (%d bytes)", m, arch, len(res.CUBIN))
					}
				} else if !bytes.Contains(res.PTX, []byte(".target sm_90")) {
					t.Errorf("%s for %s: PTX lacks .target sm_90", m, arch)
				}
				for _, e := range exprs {
					ln := res.LoweredNames[e]
					if !strings.HasPrefix(ln, "_Z") {
						t.Errorf("%s: lowered name of %q = %q", m, e, ln)
					} else if len(res.PTX) > 0 && !bytes.Contains(res.PTX, []byte(".entry "+ln)) {
						t.Errorf("%s: PTX has no entry %s for %q", m, ln, e)
					}
				}
				t.Logf("%s %s: %d kernels, CUBIN %d bytes, PTX %d bytes, %v", m, arch, len(exprs), len(res.CUBIN), len(res.PTX), time.Since(t0).Round(time.Millisecond))
			}()
		}
	}
	wg.Wait()
	t.Logf("%d kernel instantiations in %d modules, compiled for %v in %v", total, len(names), archs, time.Since(start).Round(time.Millisecond))
}
