//go:build amd64 && !purego

package gemm

import "golang.org/x/sys/cpu"

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
