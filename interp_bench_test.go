package ember

import (
	"syscall"
	"testing"
)

// cpuTime is the process's user and system time in seconds.
func cpuTime() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// Benchmarks of the common upsampling cases (1×64×128×128, 2×), forward
// and forward+backward.
func benchInterp(b *testing.B, mode string, backward bool) {
	x := Randn(Shape{1, 64, 128, 128})
	if backward {
		x.SetRequiresGrad(true)
	}
	o := InterpolateOptions{ScaleFactor: []float64{2}, Mode: mode}
	b.ResetTimer()
	c0 := cpuTime()
	defer func() { b.ReportMetric((cpuTime()-c0)*1e3/float64(b.N), "cpu-ms/op") }()
	for i := 0; i < b.N; i++ {
		y := Interpolate(x, o)
		if backward {
			y.Sum().Backward()
			x.ZeroGrad()
		}
	}
}

func BenchmarkInterpNearest(b *testing.B)      { benchInterp(b, "nearest", false) }
func BenchmarkInterpBilinear(b *testing.B)     { benchInterp(b, "bilinear", false) }
func BenchmarkInterpBicubic(b *testing.B)      { benchInterp(b, "bicubic", false) }
func BenchmarkInterpNearestBack(b *testing.B)  { benchInterp(b, "nearest", true) }
func BenchmarkInterpBilinearBack(b *testing.B) { benchInterp(b, "bilinear", true) }
