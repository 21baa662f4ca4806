package gemm

import (
	"testing"
	"unsafe"
)

func packAUnsafe[T float](dst, a []T, lda int, i0, mc, p0, kc, mr int, alpha T) {
	sz := unsafe.Sizeof(alpha)
	for ir := 0; ir < mc; ir += mr {
		rows := min(mr, mc-ir)
		d := dst[ir*kc : ir*kc+mr*kc]
		for i := 0; i < rows; i++ {
			src := a[(i0+ir+i)*lda+p0:][:kc]
			dp := unsafe.Pointer(&d[i])
			for _, v := range src {
				*(*T)(dp) = alpha * v
				dp = unsafe.Add(dp, uintptr(mr)*sz)
			}
		}
		if rows < mr {
			for p := 0; p < kc; p++ {
				clear(d[p*mr+rows : p*mr+mr])
			}
		}
	}
}

func packAPOuter[T float](dst, a []T, lda int, i0, mc, p0, kc, mr int, alpha T) {
	for ir := 0; ir < mc; ir += mr {
		rows := min(mr, mc-ir)
		d := dst[ir*kc : ir*kc+mr*kc]
		base := unsafe.Pointer(&a[(i0+ir)*lda+p0])
		_ = a[(i0+ir+rows-1)*lda+p0+kc-1]
		sz := unsafe.Sizeof(alpha)
		for p := 0; p < kc; p++ {
			dp := d[p*mr : p*mr+rows]
			ap := unsafe.Add(base, uintptr(p)*sz)
			for i := range dp {
				dp[i] = alpha * *(*T)(unsafe.Add(ap, uintptr(i*lda)*sz))
			}
		}
		if rows < mr {
			for p := 0; p < kc; p++ {
				clear(d[p*mr+rows : p*mr+mr])
			}
		}
	}
}

func BenchmarkPackA(b *testing.B) {
	n, kc, mc, mr := 1024, 384, 336, 14
	a := make([]float32, n*n)
	d := make([]float32, mc*kc)
	b.Run("cur", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			packA(d, a, n, false, 0, mc, 0, kc, mr, 1, false)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*mc*kc), "ns/elem")
	})
	b.Run("unsafe", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			packAUnsafe(d, a, n, 0, mc, 0, kc, mr, 1)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*mc*kc), "ns/elem")
	})
	b.Run("pouter", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			packAPOuter(d, a, n, 0, mc, 0, kc, mr, 1)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*mc*kc), "ns/elem")
	})
	b.Run("simd", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			packA(d, a, n, false, 0, mc, 0, kc, mr, 1, true)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*mc*kc), "ns/elem")
	})
	b.Run("simdtrans", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			packA(d, a, n, true, 0, mc, 0, kc, mr, 1, true)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*mc*kc), "ns/elem")
	})
	bd := make([]float32, 1024*kc)
	b.Run("simdBtrans", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			packB(bd, a, n, true, 0, kc, 0, 1024, 32, true)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1024*kc), "ns/elem")
	})
	b.Run("trans", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			packA(d, a, n, true, 0, mc, 0, kc, mr, 1, false)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*mc*kc), "ns/elem")
	})

	b.Run("B", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			packB(bd, a, n, false, 0, kc, 0, 1024, 32, false)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1024*kc), "ns/elem")
	})
	b.Run("Btrans", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			packB(bd, a, n, true, 0, kc, 0, 1024, 32, false)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1024*kc), "ns/elem")
	})
}
