//go:build amd64 && !purego

package gemm

import (
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// archTestSets: on an AVX-512 CPU, the AVX-512 set with the AVX-512
// dot-product kernels (opt-in, see avx512Dot) unless that is the default.
func archTestSets() []*kernelSet {
	if !cpu.X86.HasAVX512F || avx512Dot {
		return nil
	}
	ks := avx512Set(true)
	ks.name = "avx512+dot512"
	return []*kernelSet{ks}
}

func archNote() string {
	if cpu.X86.HasAVX512F {
		return "AVX-512 CPU: its GEMM, packing and dot-product assembly ran"
	}
	return "no AVX-512 on this CPU: that assembly did not run"
}

// TestEdgeKernels runs each AVX-512 edge kernel (the first r rows of a
// 14×32 tile) against goEdge, overwriting and accumulating, and checks it
// writes no row past r.
func TestEdgeKernels(t *testing.T) {
	if !cpu.X86.HasAVX512F {
		t.Skip("no AVX-512")
	}
	ks := avx512Set(false)
	kr := ks.s
	mr, nr := kr.mr, kr.nr
	r := rand.New(rand.NewPCG(3, 4))
	for rows := 1; rows < mr; rows++ {
		for _, kc := range []int{1, 3, 4, 17, 256} {
			a := randSlice[float32](r, mr*kc)
			b := randSlice[float32](r, nr*kc)
			const ldc = 40
			for accum := range 2 {
				got := randSlice[float32](r, mr*ldc)
				want := append([]float32(nil), got...)
				kr.edge[rows](kc, &a[0], &b[0], &got[0], ldc, accum)
				goEdge[float32](rows, mr, nr)(kc, &a[0], &b[0], &want[0], ldc, accum)
				for i := range got {
					if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*float64(kc) {
						t.Fatalf("rows %d kc %d accum %d: c[%d] = %v, want %v", rows, kc, accum, i, got[i], want[i])
					}
				}
			}
		}
	}
}
