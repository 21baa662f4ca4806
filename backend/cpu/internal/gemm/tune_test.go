package gemm

import (
	"fmt"
	"testing"
)

func BenchmarkTune(b *testing.B) {
	base := kernels[0].s
	for _, kc := range []int{256, 384, 512} {
		for _, nc := range []int{512, 1024} {
			for _, th := range []int{1, 2} {
				b.Run(fmt.Sprintf("kc%d/nc%d/t%d", kc, nc, th), func(b *testing.B) {
					kr := &kernel[float32]{name: base.name, mr: base.mr, nr: base.nr, mc: base.mc, kc: kc, nc: nc, fn: base.fn}
					SetThreads(th)
					defer SetThreads(0)
					n := 1024
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
