package ember

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestNativeBatchNormHalf checks the CPU backend's batch norm on bfloat16
// and float16 x (float32 statistics, weight and bias, planes widened in the
// kernels) against the generic kernels on a float32 copy: the output and
// the input's gradient to a rounding of the two-byte type, the float32
// weight, bias and running statistics closely.
func TestNativeBatchNormHalf(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for i := range 24 {
		dt := []DType{BFloat16, Float16}[i%2]
		shape := Shape{2 + r.IntN(3), 1 + r.IntN(5), 1 + r.IntN(7), 2 + r.IntN(7)}
		if i%4 == 3 {
			shape = Shape{3 + r.IntN(5), 1 + r.IntN(6)}
		}
		c := shape[1]
		x0 := Randn(shape).MulScalar(3).AddScalar(1).Cast(dt)
		if !NativeKernels.batchNormsHalf(x0) {
			t.Fatalf("the CPU backend does not batch-norm %v", dt)
		}
		w0 := Rand(Shape{c}).AddScalar(0.5)
		b0 := Randn(Shape{c})
		training := i%3 != 2
		rm0, rv0 := Randn(Shape{c}), Rand(Shape{c}).AddScalar(0.5)
		var gw *Tensor
		type res struct{ out, gx, gw, gb, rm, rv *Tensor }
		run := func(k Kernels) res {
			x, w, b := x0.Clone().SetRequiresGrad(true), w0.Clone().SetRequiresGrad(true), b0.Clone().SetRequiresGrad(true)
			rm, rv := rm0.Clone(), rv0.Clone()
			out := k.BatchNorm(x, rm, rv, w, b, training, 0.1, 1e-5)
			if gw == nil {
				gw = Randn(out.Shape()).Cast(dt)
			}
			out.Mul(gw).Sum().Backward()
			return res{out.Detach(), x.Grad(), w.Grad(), b.Grad(), rm, rv}
		}
		nat, gen := run(NativeKernels), run(GenericKernels)
		what := fmt.Sprintf("batch_norm x%v %v training=%v", shape, dt, training)
		if nat.out.DType() != dt || nat.gx.DType() != dt || nat.gw.DType() != Float32 {
			t.Fatalf("%s: out %v, x grad %v, weight grad %v", what, nat.out.DType(), nat.gx.DType(), nat.gw.DType())
		}
		half := map[DType]float64{BFloat16: 1.0 / 128, Float16: 1.0 / 1024}[dt]
		for _, p := range []struct {
			name string
			a, b *Tensor
			tol  float64
		}{{"out", nat.out, gen.out, half}, {"x grad", nat.gx, gen.gx, half}, {"weight grad", nat.gw, gen.gw, 1e-4}, {"bias grad", nat.gb, gen.gb, 1e-4}, {"running mean", nat.rm, gen.rm, 1e-5}, {"running var", nat.rv, gen.rv, 1e-5}} {
			as, bs := p.a.Cast(Float64).Float64s(), p.b.Cast(Float64).Float64s()
			scale := 0.0
			for _, v := range bs {
				scale = math.Max(scale, math.Abs(v))
			}
			for j := range as {
				if math.Abs(as[j]-bs[j]) > p.tol*(1+scale) {
					t.Fatalf("%s: %s[%d] = %g, generic %g", what, p.name, j, as[j], bs[j])
				}
			}
		}
	}
}

// TestBatchNormBF16Values is worked by hand: one channel of 1, 2, 3, 4
// has mean 2.5 and biased variance 1.25, so the normalised values are
// ±0.4472136 and ±1.3416408 (eps 1e-5 changes the fifth digit), which
// bfloat16 rounds to ±0.447265625 and ±1.34375; with an output gradient of
// 1, 0, 0, 0 the input's is (1 − 1/4 − x̂₀·x̂₀/4)/σ = 0.3/1.1180 = 0.26833
// (bfloat16 0.26757812), −(1/4 + x̂₀x̂ᵢ/4)/σ for the others.
func TestBatchNormBF16Values(t *testing.T) {
	x := FromSlice([]float32{1, 2, 3, 4}, Shape{1, 1, 2, 2}).Cast(BFloat16).SetRequiresGrad(true)
	out := BatchNorm(x, nil, nil, nil, nil, true, 0.1, 1e-5)
	want := []float64{-1.34375, -0.447265625, 0.447265625, 1.34375}
	got := out.Cast(Float64).Float64s()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("batch_norm bf16 = %v, want %v", got, want)
		}
	}
	out.Mul(FromSlice([]float32{1, 0, 0, 0}, Shape{1, 1, 2, 2}).Cast(BFloat16)).Sum().Backward()
	sigma := math.Sqrt(1.25 + 1e-5)
	xh := []float64{-1.5 / sigma, -0.5 / sigma, 0.5 / sigma, 1.5 / sigma}
	g := x.Grad().Cast(Float64).Float64s()
	for i := range xh {
		w := -(0.25 + xh[0]*xh[i]/4) / sigma
		if i == 0 {
			w += 1 / sigma
		}
		if math.Abs(g[i]-w) > math.Abs(w)/128 {
			t.Fatalf("batch_norm bf16 x grad = %v, want %.5f at %d", g, w, i)
		}
	}
}
