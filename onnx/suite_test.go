package onnx

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/emberml/ember"
)

const suiteDir = "/usr/share/libonnx-testdata/data"

func runFolder(t *testing.T, dir string, dev ember.Device) []CaseResult {
	cases := TestCases(dir)
	res := make([]CaseResult, len(cases))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, c := range cases {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			res[i] = RunTestCase(c, dev, DefaultRTol, DefaultATol)
		}()
	}
	wg.Wait()
	return res
}

func TestBackendSuiteDump(t *testing.T) {
	if os.Getenv("ONNX_DUMP") == "" {
		t.Skip()
	}
	for _, f := range []string{"node", "pytorch-converted", "pytorch-operator", "simple"} {
		rs := runFolder(t, filepath.Join(suiteDir, f), ember.CPU)
		for _, r := range rs {
			if r.Status != Pass {
				t.Log(r)
			}
		}
		t.Logf("%s: %s", f, Summary(rs))
	}
}
