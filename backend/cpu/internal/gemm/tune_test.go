package gemm

import (
	"fmt"
	"testing"
)

func BenchmarkTune(b *testing.B) {
	base := kernels[0].s
	n := 1024
	for _, kc := range []int{256, 342, 512} {
		for _, nc := range []int{512, 1024} {
			for _, mc := range []int{14 * 8, 14 * 24} {
				b.Run(fmt.Sprintf("kc%d/nc%d/mc%d", kc, nc, mc), func(b *testing.B) {
					kr := &kernel[float32]{name: base.name, mr: base.mr, nr: base.nr, mc: mc, kc: kc, nc: nc, fn: base.fn, simdPack: true}
					SetThreads(1)
					defer SetThreads(0)
					x, y, z := benchData(n)
					gemm(kr, false, false, n, n, n, 1, x, n, y, n, 0, z, n)
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						gemm(kr, false, false, n, n, n, 1, x, n, y, n, 0, z, n)
					}
					reportGFLOPS(b, n)
				})
			}
		}
	}
}
