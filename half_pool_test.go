package ember

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestNativeMaxPoolHalf checks the CPU backend's bfloat16 and float16 max
// pooling (rows widened in the kernel) against the generic kernels on a
// float32 copy: the maxima and the indices exactly, and the gradient
// summed in float32 and rounded once. Values come in few levels, so that
// windows have ties; 2×2 at stride 2 is the kernel's own loop.
func TestNativeMaxPoolHalf(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	type geom struct{ kernel, stride, pad [2]int }
	geoms := []geom{{[2]int{2, 2}, [2]int{}, [2]int{}}, {[2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}}, {[2]int{2, 3}, [2]int{1, 2}, [2]int{1, 0}}}
	for i := range 30 {
		dt := []DType{BFloat16, Float16}[i%2]
		g := geoms[i%len(geoms)]
		shape := Shape{1 + r.IntN(3), 1 + r.IntN(4), 2 + r.IntN(9), 2 + r.IntN(9)}
		x0 := Randn(shape).MulScalar(2).Round().Cast(dt)
		if !NativeKernels.poolsHalf(x0) {
			t.Fatalf("the CPU backend does not pool %v", dt)
		}
		channelsLast := i%3 == 2
		var w *Tensor
		run := func(k Kernels) nativeRun {
			leaf := x0.Clone().SetRequiresGrad(true)
			x := leaf
			if channelsLast {
				x = x.Permute(0, 2, 3, 1).Contiguous().Permute(0, 3, 1, 2)
			}
			out := k.MaxPool2d(x, g.kernel, g.stride, g.pad)
			if w == nil {
				w = Randn(out.Shape()).Cast(dt)
			}
			out.Mul(w).Sum().Backward()
			return nativeRun{out: out.Detach(), grads: []*Tensor{leaf.Grad()}}
		}
		what := fmt.Sprintf("max_pool2d x%v(channels-last %v) %v kernel%v stride%v pad%v", shape, channelsLast, dt, g.kernel, g.stride, g.pad)
		nat, gen := run(NativeKernels), run(GenericKernels)
		if nat.out.DType() != dt || nat.grads[0].DType() != dt {
			t.Fatalf("%s: out %v, grad %v", what, nat.out.DType(), nat.grads[0].DType())
		}
		compareRuns(t, what, nat, gen, 0)
	}
}

// TestNativeMaxPoolHalfIndices is TestNativeMaxPoolIndices on 2×2 windows
// of bfloat16: the last NaN of a window wins, ties go to the first
// maximum in row-major order, and a window of -inf points at its first
// element (torch 1.13).
func TestNativeMaxPoolHalfIndices(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(-1)
	for _, c := range []struct {
		in   []float64
		want int
	}{{[]float64{1, nan, 3, nan}, 3}, {[]float64{nan, 2, 3, 1}, 0}, {[]float64{1, 2, nan, 1}, 2}, {[]float64{2, 5, 5, 1}, 1}, {[]float64{1, 2, 5, 5}, 2}, {[]float64{inf, inf, inf, inf}, 0}} {
		for _, dt := range []DType{BFloat16, Float32} {
			x := FromSlice(c.in, Shape{1, 1, 2, 2}).Cast(dt).SetRequiresGrad(true)
			out := MaxPool2d(x, [2]int{2, 2}, [2]int{}, [2]int{})
			out.Sum().Backward()
			if o := out.Cast(Float64).Float64s()[0]; !(o == c.in[c.want] || math.IsNaN(o) && math.IsNaN(c.in[c.want])) {
				t.Fatalf("max_pool2d %v %v = %v", c.in, dt, o)
			}
			g := x.Grad().Cast(Float64).Float64s()
			for i, v := range g {
				if want := map[bool]float64{true: 1}[i == c.want]; v != want {
					t.Fatalf("max_pool2d %v %v: gradient %v, want 1 at %d", c.in, dt, g, c.want)
				}
			}
		}
	}
}
