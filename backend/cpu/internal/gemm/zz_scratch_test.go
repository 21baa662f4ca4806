package gemm

import (
	"fmt"
	"testing"
)

func BenchmarkScratchNC(b *testing.B) {
	ks := current.Load()
	orig := ks.s.shape
	defer func() { ks.s.shape = orig }()
	for _, cfg := range [][2]int{{384, 768}, {384, 512}, {256, 768}, {256, 512}, {512, 512}, {384, 384}} {
		for _, n := range []int{512, 1024, 2048} {
			b.Run(fmt.Sprintf("kc%d_nc%d/%d", cfg[0], cfg[1], n), func(b *testing.B) {
				ks.s.shape.kc, ks.s.shape.nc = cfg[0], cfg[1]
				x, y, z := benchData(n)
				for i := 0; i < b.N; i++ {
					Sgemm(false, false, n, n, n, 1, x, n, y, n, 0, z, n)
				}
				reportGFLOPS(b, n)
			})
		}
	}
}
