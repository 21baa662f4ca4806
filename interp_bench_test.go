package ember

import "testing"

// Benchmarks of the common upsampling cases (1×64×128×128, 2×), forward
// and forward+backward.
func benchInterp(b *testing.B, mode string, backward bool) {
	x := Randn(Shape{1, 64, 128, 128})
	if backward {
		x.SetRequiresGrad(true)
	}
	o := InterpolateOptions{ScaleFactor: []float64{2}, Mode: mode}
	b.ResetTimer()
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
