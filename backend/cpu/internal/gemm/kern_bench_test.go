package gemm

import (
	"fmt"
	"testing"
)

// BenchmarkKernel measures the micro-kernel alone on L1-resident panels.
func BenchmarkKernel(b *testing.B) {
	kr := current.Load().s
	kc := 256
	a := make([]float32, kr.mr*kc)
	bb := make([]float32, kr.nr*kc)
	c := make([]float32, kr.mr*kr.nr)
	for i := 0; i < b.N; i++ {
		kr.fn(kc, &a[0], &bb[0], &c[0], kr.nr, 1)
	}
	b.ReportMetric(2*float64(kr.mr*kr.nr*kc)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkSgemm1T(b *testing.B) {
	defer SetThreads(0)
	SetThreads(1)
	n := 1024
	x, y, z := benchData(n)
	for i := 0; i < b.N; i++ {
		Sgemm(false, false, n, n, n, 1, x, n, y, n, 0, z, n)
	}
	reportGFLOPS(b, n)
}

// BenchmarkKernelStream runs the kernel as the driver does: one A panel
// against a KC×NC block of B micro-panels, C rows ldc apart.
func BenchmarkKernelStream(b *testing.B) {
	kr := current.Load().s
	for _, kc := range []int{256, 384} {
		for _, ldc := range []int{1024, 1040} {
			nc := 1024
			b.Run(fmt.Sprintf("kc%d/ldc%d", kc, ldc), func(b *testing.B) {
				a := make([]float32, kr.mr*kc)
				bb := make([]float32, nc*kc)
				c := make([]float32, kr.mr*ldc)
				for i := 0; i < b.N; i++ {
					for jr := 0; jr < nc; jr += kr.nr {
						kr.fn(kc, &a[0], &bb[jr*kc], &c[jr], ldc, 1)
					}
				}
				b.ReportMetric(2*float64(kr.mr*nc*kc)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkKernelBF16 measures the bfloat16 micro-kernel alone on
// L1-resident panels (kc pairs: 2 flops per multiply-add, two per pair).
func BenchmarkKernelBF16(b *testing.B) {
	kr := current.Load().b
	if kr == nil {
		b.Skip("no bfloat16 kernel in this set")
	}
	kc := 256
	a := make([]float32, kr.mr*kc)
	bb := make([]float32, kr.nr*kc)
	c := make([]float32, kr.mr*kr.nr)
	for i := 0; i < b.N; i++ {
		kr.fn(kc, &a[0], &bb[0], &c[0], kr.nr, 1)
	}
	b.ReportMetric(4*float64(kr.mr*kr.nr*kc)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
