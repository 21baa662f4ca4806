package emu

import (
	"encoding/binary"
	"math"
	"sync"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/kernels"
)

// TestConcurrentRuns runs reductions (which use shared memory and barriers)
// from several goroutines at once: each sums 0..n-1 with its own n.
func TestConcurrentRuns(t *testing.T) {
	l := lib(t)
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 2000 + 97*g
			src, dst := l.Malloc(8*n), l.Malloc(8)
			defer l.Free(src)
			defer l.Free(dst)
			s := kernels.Operand{Ptr: src, DType: backend.Float64, Shape: []int{n}, Strides: []int{1}}
			d := kernels.Operand{Ptr: dst, DType: backend.Float64, Shape: []int{1}, Strides: []int{1}}
			for rep := 0; rep < 5; rep++ {
				ls := append(kernels.Arange(props, s, 0, 1), kernels.Reduce(props, backend.Sum, d, s)...)
				if err := l.RunAll(ls); err != nil {
					t.Error(err)
					return
				}
				out := make([]byte, 8)
				l.CopyOut(out, dst)
				got := math.Float64frombits(binary.LittleEndian.Uint64(out))
				if want := float64(n*(n-1)) / 2; got != want {
					t.Errorf("n=%d: sum = %v, want %v", n, got, want)
				}
			}
		}()
	}
	wg.Wait()
}
