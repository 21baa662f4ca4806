//go:build amd64 && !purego

package gemm

import (
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/cpu"
)

// avx512Dot enables the AVX-512 dot-product kernels (EMBER_GEMM_AVX512_DOT=1).
// The tests run them wherever the CPU has AVX-512 and they pass on an AMD
// Zen 4 (EPYC, family 0x19); they stay off by default because there the
// conv weight gradients they serve were no faster than with the AVX2 ones
// (1 thread: within ±10% either way, case by case), and they have not
// been timed on Intel. An AVX-512 CPU runs the AVX2 ones.
var avx512Dot = os.Getenv("EMBER_GEMM_AVX512_DOT") == "1"

// archKernels lists the assembly kernels this CPU can run, best first.
func archKernels() []*kernelSet {
	var ks []*kernelSet
	if cpu.X86.HasAVX512F {
		ks = append(ks, avx512Set(avx512Dot))
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, &kernelSet{
			name: "avx2",
			s:    newKernel("avx2", avx2S, sgemmAVX2, sdotAVX2, false),
			d:    newKernel("avx2", avx2D, dgemmAVX2, ddotAVX2, false),
		})
	}
	return ks
}

// avx512Set is the AVX-512 kernel set; dot512 chooses its dot-product
// kernels: AVX-512 or AVX2 (every AVX-512 CPU has AVX2 and FMA).
func avx512Set(dot512 bool) *kernelSet {
	s, d := avx512S.withDot(avx2S), avx512D.withDot(avx2D)
	sdot, ddot := sdotAVX2, ddotAVX2
	if dot512 {
		s, d = avx512S, avx512D
		sdot, ddot = sdotAVX512, ddotAVX512
	}
	ks := &kernelSet{
		name: "avx512",
		s:    newKernel("avx512", s, sgemmAVX512, sdot, true),
		d:    newKernel("avx512", d, dgemmAVX512, ddot, true),
	}
	ks.s.edge = []kernelFunc[float32]{nil, sgemmAVX512r1, sgemmAVX512r2, sgemmAVX512r3, sgemmAVX512r4,
		sgemmAVX512r5, sgemmAVX512r6, sgemmAVX512r7, sgemmAVX512r8, sgemmAVX512r9, sgemmAVX512r10,
		sgemmAVX512r11, sgemmAVX512r12, sgemmAVX512r13}
	if cpu.X86.HasAVX512BF16 && cpu.X86.HasAVX512BW { // the packers use 32-bit masks (BW)
		ks.b = newKernel("avx512", avx512B, bgemmAVX512, nil, true)
		ks.b.edge = []kernelFunc[float32]{nil, bgemmAVX512r1, bgemmAVX512r2, bgemmAVX512r3, bgemmAVX512r4,
			bgemmAVX512r5, bgemmAVX512r6, bgemmAVX512r7, bgemmAVX512r8, bgemmAVX512r9, bgemmAVX512r10,
			bgemmAVX512r11, bgemmAVX512r12, bgemmAVX512r13}
		if amxOptIn {
			if err := requestAMX(); err != nil {
				amxErr = err
				amxSaid.Do(func() {
					fmt.Fprintln(os.Stderr, "ember: EMBER_GEMM_AMX=1 ignored, bf16 products run on VDPBF16PS:", err)
				})
			} else {
				ks.amx = newKernel("amx", amxB, bgemmAMX, nil, true)
			}
		}
	}
	return ks
}

// amxOptIn enables the AMX-BF16 kernel (EMBER_GEMM_AMX=1) where the CPU
// has it and Linux grants the tile state; amxErr says why it did not.
var (
	amxOptIn = os.Getenv("EMBER_GEMM_AMX") == "1"
	amxErr   error
	amxSaid  sync.Once
)

// AMXStatus says whether Bgemm runs the AMX-BF16 kernel: "" on a CPU
// without AMX-BF16 where nobody asked for it.
func AMXStatus() string {
	switch {
	case current.Load().amx != nil:
		return "on (EMBER_GEMM_AMX=1): bf16 products on AMX tiles"
	case amxErr != nil:
		return "off: " + amxErr.Error()
	case cpu.X86.HasAMXBF16:
		return "off by default until the kernel is proven on an AMX CPU; EMBER_GEMM_AMX=1 enables it"
	}
	return ""
}
