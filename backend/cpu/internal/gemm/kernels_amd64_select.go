//go:build amd64 && !purego

package gemm

import "golang.org/x/sys/cpu"

// archKernels lists the assembly kernels this CPU can run, best first.
func archKernels() []*kernelSet {
	var ks []*kernelSet
	if cpu.X86.HasAVX512F {
		ks = append(ks, &kernelSet{
			name: "avx512",
			s: &kernel[float32]{name: "avx512", mr: 14, nr: 32, mc: 14 * 24, kc: 384, nc: 768, fn: sgemmAVX512, simdPack: true,
				dot: sdotAVX512, dmr: 4, dnr: 6, dvw: 16},
			d: &kernel[float64]{name: "avx512", mr: 14, nr: 16, mc: 14 * 24, kc: 256, nc: 512, fn: dgemmAVX512, simdPack: true,
				dot: ddotAVX512, dmr: 4, dnr: 6, dvw: 8},
		})
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, &kernelSet{
			name: "avx2",
			s: &kernel[float32]{name: "avx2", mr: 6, nr: 16, mc: 6 * 40, kc: 256, nc: 512, fn: sgemmAVX2,
				dot: sdotAVX2, dmr: 2, dnr: 6, dvw: 8},
			d: &kernel[float64]{name: "avx2", mr: 6, nr: 8, mc: 6 * 40, kc: 256, nc: 256, fn: dgemmAVX2,
				dot: ddotAVX2, dmr: 2, dnr: 6, dvw: 4},
		})
	}
	return ks
}
