package ember

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/emberml/ember/backend"
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

// TestMaxPoolBF16AsTorch pools bfloat16 tensors (values in few levels,
// with infinities) as torch.nn.functional.max_pool2d does
// (testdata/fixtures/half/maxpool_bf16.json,
// testdata/gen_pool_bf16_fixtures.py), bit for bit: without gradient (the
// CPU's order-key kernel) and with it (the kernels with indices, checked
// through the input's gradient of the sum), contiguous and channels-last,
// native and generic kernels.
func TestMaxPoolBF16AsTorch(t *testing.T) {
	raw, err := os.ReadFile("testdata/fixtures/half/maxpool_bf16.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Cases []struct {
			Shape, Kernel, Stride, Padding, Oshape []int
			X, Out, Grad, Gy, Gx                   []uint16
		}
	}
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	for i, c := range fx.Cases {
		k, s, p := [2]int{c.Kernel[0], c.Kernel[1]}, [2]int{c.Stride[0], c.Stride[1]}, [2]int{c.Padding[0], c.Padding[1]}
		for _, kern := range []Kernels{NativeKernels, GenericKernels} {
			for _, grad := range []bool{false, true} {
				for _, channelsLast := range []bool{false, true} {
					x := FromBits(c.X, BFloat16, Shape(c.Shape))
					if channelsLast {
						x = x.Permute(0, 2, 3, 1).Contiguous().Permute(0, 3, 1, 2)
					}
					var y *Tensor
					if grad {
						y = kern.MaxPool2d(x.SetRequiresGrad(true), k, s, p)
					} else {
						NoGrad(func() { y = kern.MaxPool2d(x, k, s, p) })
					}
					what := fmt.Sprintf("case %d %v grad %v channels-last %v", i, kern, grad, channelsLast)
					if y.DType() != BFloat16 || !y.Shape().Equal(Shape(c.Oshape)) {
						t.Fatalf("%s: %v %v, want bfloat16 %v", what, y.DType(), y.Shape(), c.Oshape)
					}
					for j, b := range y.Contiguous().Bits() {
						if b != c.Out[j] {
							t.Fatalf("%s: out[%d] = %#04x, torch %#04x", what, j, b, c.Out[j])
						}
					}
					if grad { // the indices, through the gradient of the sum
						y.Sum().Backward()
						for j, b := range x.Grad().Contiguous().Bits() {
							if b != c.Grad[j] {
								t.Fatalf("%s: grad[%d] = %#04x, torch %#04x", what, j, b, c.Grad[j])
							}
						}
						// and of an output gradient with -0s
						x.SetGrad(nil)
						y = kern.MaxPool2d(x, k, s, p)
						y.BackwardWith(FromBits(c.Gy, BFloat16, Shape(c.Oshape)))
						for j, b := range x.Grad().Contiguous().Bits() {
							if b != c.Gx[j] {
								t.Fatalf("%s: gx[%d] = %#04x, torch %#04x", what, j, b, c.Gx[j])
							}
						}
					}
				}
			}
		}
	}
}

// TestMaxPoolBF16NaN: without gradient, a bfloat16 window with a NaN of
// either sign pools to NaN (0xFFFF, the bits of a rounded float32 NaN;
// torch writes 0x7FC0), and ±0 ties give +0, as the float32 pool; the
// other windows their maximum.
func TestMaxPoolBF16NaN(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	x := make([]uint16, 2*3*21*40)
	for i := range x {
		switch u := r.IntN(50); {
		case u == 0:
			x[i] = 0x7FC1
		case u == 1:
			x[i] = 0xFF90
		case u < 6:
			x[i] = 0x8000
		default:
			x[i] = uint16(backend.ToBF16(float32(r.NormFloat64() * 2)))
		}
	}
	xt := FromBits(x, BFloat16, Shape{2, 3, 21, 40})
	var y *Tensor
	NoGrad(func() { y = MaxPool2d(xt, [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}) })
	got := y.Bits()
	oh, ow := y.Shape()[2], y.Shape()[3]
	for pl := range 6 {
		for oy := range oh {
			for ox := range ow {
				m := math.Inf(-1)
				for i := max(2*oy-1, 0); i < min(2*oy+2, 21); i++ {
					for j := max(2*ox-1, 0); j < min(2*ox+2, 40); j++ {
						v := float64(backend.BF16(x[pl*21*40+i*40+j]).Float32())
						if v != v || m != m {
							m = math.NaN()
						} else if v > m || v == m && !math.Signbit(v) {
							m = v
						}
					}
				}
				want := uint16(backend.ToBF16(float32(m)))
				if g := got[(pl*oh+oy)*ow+ox]; g != want {
					t.Fatalf("plane %d (%d, %d): %#04x, want %#04x", pl, oy, ox, g, want)
				}
			}
		}
	}
}

// TestHalfAdaptiveAvgPool2d: pooling to sizes other than 1×1 in float32,
// rounded once, forward (torch's bf16 kernel) and backward (the float32
// gradient rounded once; torch 1.13's bf16 backward rounds per window).
func TestHalfAdaptiveAvgPool2d(t *testing.T) {
	halfOpsCases(t, func(t *testing.T, c halfOpCase) {
		x := c.Inputs[0].tensor(halfOpsDev).SetRequiresGrad(true)
		sz := c.ints("size")
		y := AdaptiveAvgPool2d(x, sz[0], sz[1])
		checkHalfOut(t, "adaptive_avg_pool2d", y, c.Out, 1)
		y.BackwardWith(c.Inputs[1].tensor(halfOpsDev))
		checkHalfOut(t, "adaptive_avg_pool2d grad", x.Grad(), c.Grads[0], 1)
	}, "adaptive_avg_pool2d")
	// the reviewer's case, exactly: the last window of (0..80)/7 is rows
	// 4..8, columns 6..8: the mean of 15 bf16 values rounds to 8.6875
	x := Arange(0, 81, 1, Dtype(BFloat16)).DivScalar(7).Reshape(1, 1, 9, 9)
	if got := AdaptiveAvgPool2d(x, 2, 3).Float32s()[5]; got != 8.6875 {
		t.Errorf("last element %v, torch 8.6875", got)
	}
}
