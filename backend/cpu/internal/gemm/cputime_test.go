package gemm

import "testing"

// BenchmarkBgemmCPU times Bgemm and Sgemm at 1024 on one thread in CPU
// seconds (GFLOP/cpu-s), which a loaded machine disturbs less than wall
// time: the ratio of the two is the bfloat16 kernel's gain.
func BenchmarkBgemmCPU(b *testing.B) {
	defer SetThreads(0)
	SetThreads(1)
	n := 1024
	x, y, z := benchData(n)
	bx, by := make([]uint16, n*n), make([]uint16, n*n)
	for i := range bx {
		bx[i], by[i] = 0x3F80, 0x3F00
	}
	for _, name := range []string{"sgemm", "bgemm"} {
		b.Run(name, func(b *testing.B) {
			run := func() {
				if name == "sgemm" {
					Sgemm(false, false, n, n, n, 1, x, n, y, n, 0, z, n)
				} else {
					Bgemm(false, false, n, n, n, bx, n, by, n, z, n)
				}
			}
			run()
			b.ResetTimer()
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				run()
			}
			b.ReportMetric(2*float64(n*n*n)*float64(b.N)/(cpuTime()-c0).Seconds()/1e9, "GFLOP/cpu-s")
		})
	}
}
