package ember

import (
	"math"
	"testing"
)

// TestMatMulFloat16CPU: a float16 CPU MatMul runs the float32 GEMM on
// operands widened while packing, so it is bit for bit the float32 product
// of the widened operands rounded once to float16 (the path it replaced),
// and near a float64 product of the same values; odd sizes, transposed
// and strided operands, batches, 1-D operands, and its gradients.
func TestMatMulFloat16CPU(t *testing.T) {
	ManualSeed(5)
	h := func(s ...int) *Tensor { return Randn(Shape(s)).Cast(Float16) }
	widened := func(a, b *Tensor) *Tensor {
		return a.Cast(Float32).MatMul(b.Cast(Float32)).Cast(Float16)
	}
	cases := []struct {
		name string
		a, b *Tensor
	}{
		{"1x1", h(1, 1), h(1, 1)},
		{"odd", h(7, 13), h(13, 29)},
		{"tile edges", h(15, 33), h(33, 65)},
		{"long k", h(3, 1031), h(1031, 5)},
		{"big", h(150, 300), h(300, 170)},
		{"row (gemv)", h(1, 256), h(256, 200)},
		{"a transposed", h(40, 19).T(), h(40, 23)},
		{"b transposed", h(19, 40), h(23, 40).T()},
		{"both transposed", h(300, 21).T(), h(37, 300).T()},
		{"strided", h(9, 34).Slice(1, 0, 34, 2), h(17, 11)},
		{"batch broadcast", h(3, 1, 5, 17), h(4, 17, 9)},
		{"vector·matrix", h(33), h(33, 18)},
		{"matrix·vector", h(18, 33), h(33)},
	}
	for _, c := range cases {
		got := c.a.MatMul(c.b)
		if got.DType() != Float16 {
			t.Fatalf("%s: dtype %v", c.name, got.DType())
		}
		want := widened(c.a, c.b)
		if !equalShape(got.Shape(), want.Shape()) {
			t.Fatalf("%s: shape %v, want %v", c.name, got.Shape(), want.Shape())
		}
		g, w := got.Bits(), want.Bits()
		for i := range w {
			if g[i] != w[i] {
				t.Fatalf("%s: [%d] = %#04x, widened path %#04x", c.name, i, g[i], w[i])
			}
		}
		// float64 product of the same float16 values: within the float32
		// accumulation error plus one float16 rounding
		ref := c.a.Cast(Float64).MatMul(c.b.Cast(Float64)).Float64s()
		abs := c.a.Cast(Float64).Abs().MatMul(c.b.Cast(Float64).Abs()).Float64s()
		k := c.a.Shape()[c.a.Dim()-1]
		for i, v := range got.Cast(Float64).Float64s() {
			tol := 0x1p-11*math.Abs(ref[i]) + 2*float64(k)*0x1p-24*abs[i] + 0x1p-24
			if math.Abs(v-ref[i]) > tol {
				t.Fatalf("%s: [%d] = %v, float64 %v (±%g)", c.name, i, v, ref[i], tol)
			}
		}
	}
	// gradients: float16 products too, the same bits as the widened path's
	a, b := h(6, 11).SetRequiresGrad(true), h(11, 5).SetRequiresGrad(true)
	a.MatMul(b).Sum().Backward()
	g := FromSlice(make([]float32, 30), Shape{6, 5}).AddScalar(1).Cast(Float16)
	for _, p := range []struct {
		name      string
		got, want *Tensor
	}{
		{"grad a", a.Grad(), widened(g, b.Detach().T())},
		{"grad b", b.Grad(), widened(a.Detach().T(), g)},
	} {
		if p.got.DType() != Float16 {
			t.Fatalf("%s: dtype %v", p.name, p.got.DType())
		}
		gb, wb := p.got.Bits(), p.want.Bits()
		for i := range wb {
			if gb[i] != wb[i] {
				t.Fatalf("%s: [%d] = %#04x, widened path %#04x", p.name, i, gb[i], wb[i])
			}
		}
	}
}
