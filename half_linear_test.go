package ember

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLinearBF16 is worked by hand: x = [[256, 1], [1, 2]], w = [[1, 1],
// [1, 0]], b = [1, 0.25] in bfloat16. out[0][0] = 256+1+1 = 258, a
// bfloat16 (spacing 2 above 256), where rounding the product 257 first
// would give 256 (a tie, to even) and then 256 again: the product and bias
// are rounded once. With an output gradient of ones, x's gradient is
// g·w = [[2, 1], [2, 1]], w's gᵀ·x = [[257, 3], [257, 3]] rounded to
// [[256, 3], [256, 3]] (257 a tie, to even) and b's [2, 2]; w and b's land
// in float32 leaves. out[0][1] = 256.25 rounds to 256.
func TestLinearBF16(t *testing.T) {
	x := FromSlice([]float32{256, 1, 1, 2}, Shape{2, 2}).Cast(BFloat16).SetRequiresGrad(true)
	w := FromSlice([]float32{1, 1, 1, 0}, Shape{2, 2}).SetRequiresGrad(true)
	b := FromSlice([]float32{1, 0.25}, Shape{2}).SetRequiresGrad(true)
	out := Linear(x, w.Cast(BFloat16), b.Cast(BFloat16))
	check := func(name string, got *Tensor, dt DType, want []float64) {
		t.Helper()
		if got.DType() != dt {
			t.Fatalf("%s dtype %v, want %v", name, got.DType(), dt)
		}
		g := got.Cast(Float64).Float64s()
		for i := range want {
			if g[i] != want[i] {
				t.Fatalf("%s = %v, want %v", name, g, want)
			}
		}
	}
	check("out", out, BFloat16, []float64{258, 256, 4, 1.25})
	out.Sum().Backward()
	check("x grad", x.Grad(), BFloat16, []float64{2, 1, 2, 1})
	check("w grad", w.Grad(), Float32, []float64{256, 3, 256, 3})
	check("b grad", b.Grad(), Float32, []float64{2, 2})
}

// TestLinearBF16Random checks bfloat16 Linear's forward (on the CPU, the
// bfloat16 GEMM into float32, the bias added there, rounded once) against
// the float64 sum of the exact products and the bias: within one bfloat16
// rounding of it plus the float32 accumulation's error, for x contiguous
// and transposed in memory.
func TestLinearBF16Random(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	n, in, o := 37, 300, 45
	rnd := func(k int, s float64) []float32 {
		v := make([]float32, k)
		for i := range v {
			v[i] = float32(r.NormFloat64() * s)
		}
		return v
	}
	xs, ws, bs := rnd(n*in, 1), rnd(o*in, 0.1), rnd(o, 1)
	for _, trans := range []bool{false, true} {
		x := FromSlice(xs, Shape{n, in}).Cast(BFloat16)
		if trans {
			x = FromSlice(xs, Shape{n, in}).Cast(BFloat16).T().Contiguous().T()
		}
		w, b := FromSlice(ws, Shape{o, in}).Cast(BFloat16), FromSlice(bs, Shape{o}).Cast(BFloat16)
		out := Linear(x, w, b)
		if out.DType() != BFloat16 {
			t.Fatalf("dtype %v", out.DType())
		}
		got := out.Cast(Float64).Float64s()
		xv, wv, bv := x.Cast(Float64).Float64s(), w.Cast(Float64).Float64s(), b.Cast(Float64).Float64s()
		for i := range n {
			for j := range o {
				want, mag := bv[j], math.Abs(bv[j])
				for k := range in {
					p := xv[i*in+k] * wv[j*in+k]
					want += p
					mag += math.Abs(p)
				}
				tol := math.Abs(want)/256 + float64(in)*0x1p-23*mag
				if d := math.Abs(got[i*o+j] - want); d > tol {
					t.Fatalf("trans %v: out[%d][%d] = %v, want %v (±%g)", trans, i, j, got[i*o+j], want, tol)
				}
			}
		}
	}
}
