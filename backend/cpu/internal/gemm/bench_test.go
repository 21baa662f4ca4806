package gemm

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

var benchSizes = []int{256, 512, 1024, 2048}

func benchData(n int) (a, b, c []float32) {
	a = make([]float32, n*n)
	b = make([]float32, n*n)
	c = make([]float32, n*n)
	for i := range a {
		a[i] = float32(i%7) * 0.25
		b[i] = float32(i%5) * 0.5
	}
	return a, b, c
}

func reportGFLOPS(b *testing.B, n int) {
	flops := 2 * float64(n) * float64(n) * float64(n) * float64(b.N)
	b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkSgemm(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			x, y, z := benchData(n)
			Sgemm(false, false, n, n, n, 1, x, n, y, n, 0, z, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				Sgemm(false, false, n, n, n, 1, x, n, y, n, 0, z, n)
			}
			reportGFLOPS(b, n)
		})
	}
}

func BenchmarkDgemm(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			x := make([]float64, n*n)
			y := make([]float64, n*n)
			z := make([]float64, n*n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				Dgemm(false, false, n, n, n, 1, x, n, y, n, 0, z, n)
			}
			reportGFLOPS(b, n)
		})
	}
}

// BenchmarkGonumSgemm is the reference: gonum's pure-Go BLAS.
func BenchmarkGonumSgemm(b *testing.B) {
	var impl gonum.Implementation
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			x, y, z := benchData(n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				impl.Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, x, n, y, n, 0, z, n)
			}
			reportGFLOPS(b, n)
		})
	}
}

func BenchmarkBgemm(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			x, y, z := benchData(n)
			bx, by := make([]uint16, n*n), make([]uint16, n*n)
			for i := range x {
				bx[i] = uint16(math.Float32bits(x[i]) >> 16)
				by[i] = uint16(math.Float32bits(y[i]) >> 16)
			}
			Bgemm(false, false, n, n, n, bx, n, by, n, z, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				Bgemm(false, false, n, n, n, bx, n, by, n, z, n)
			}
			reportGFLOPS(b, n)
		})
	}
}

// BenchmarkHgemm times HgemmF16 (float16 in and out, widened while
// packing) against what it replaced: both operands widened whole, Sgemm,
// the result rounded.
func BenchmarkHgemm(b *testing.B) {
	for _, n := range benchSizes {
		x, y, _ := benchData(n)
		hx, hy := make([]uint16, n*n), make([]uint16, n*n)
		RoundF16(hx, x)
		RoundF16(hy, y)
		out, scratch := make([]uint16, n*n), make([]float32, n*n)
		b.Run(fmt.Sprintf("packed/%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				HgemmF16(false, false, n, n, n, hx, n, hy, n, out, n, scratch)
			}
			reportGFLOPS(b, n)
		})
		b.Run(fmt.Sprintf("widened/%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				wx, wy := widenMatrix(hx, n, n, n, widenRun), widenMatrix(hy, n, n, n, widenRun)
				Sgemm(false, false, n, n, n, 1, wx, n, wy, n, 0, scratch, n)
				RoundF16(out, scratch)
			}
			reportGFLOPS(b, n)
		})
	}
}

// BenchmarkSgemmBlocking times Sgemm with other KC×NC blockings of the
// float32 kernel in use: the sweep that chose its shape.
func BenchmarkSgemmBlocking(b *testing.B) {
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
