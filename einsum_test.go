package ember

import (
	"math"
	"testing"

	"github.com/emberml/ember/internal/testenv"
)

// TestEinsumAsTorch: ellipses, size-1 broadcasting and diagonals with
// Inf off the diagonal, against torch.einsum 1.13 on the same inputs
// (arange-filled float64 operands; the values are small enough to check
// by hand).
func TestEinsumAsTorch(t *testing.T) {
	ar := func(s ...int) *Tensor {
		return Arange(0, float64(Shape(s).NumElements()), 1, Dtype(Float64)).Reshape(s...)
	}
	inf := math.Inf(1)
	d := FromSlice([]float64{1, inf, 2, 3}, Shape{2, 2})
	for _, c := range []struct {
		eq    string
		ops   []*Tensor
		shape Shape
		want  []float64
	}{
		// the diagonal is read, not multiplied by an identity (Inf·0 = NaN)
		{"ii->i", []*Tensor{d}, Shape{2}, []float64{1, 3}},
		{"ii", []*Tensor{d}, Shape{}, []float64{4}},
		{"iij->ij", []*Tensor{ar(2, 2, 3)}, Shape{2, 3}, []float64{0, 1, 2, 9, 10, 11}},
		{"ij,ij->i", []*Tensor{ar(2, 3), ar(1, 3)}, Shape{2}, []float64{5, 14}},
		{"...ij,...jk->...ik", []*Tensor{ar(2, 2, 3), ar(2, 3, 1)}, Shape{2, 2, 1}, []float64{5, 14, 86, 122}},
		{"...ij,jk->...ik", []*Tensor{ar(2, 2, 3), ar(3, 1)}, Shape{2, 2, 1}, []float64{5, 14, 23, 32}},
		{"i...->...", []*Tensor{ar(2, 3)}, Shape{3}, []float64{3, 5, 7}},
		{"...->", []*Tensor{ar(2, 3)}, Shape{}, []float64{15}},
		{"b...i,b...i->b...", []*Tensor{ar(2, 1, 2), ar(2, 3, 2)}, Shape{2, 3}, []float64{1, 3, 5, 33, 43, 53}},
	} {
		got := Einsum(c.eq, c.ops...)
		if !got.Shape().Equal(c.shape) {
			t.Fatalf("%s: shape %v, want %v", c.eq, got.Shape(), c.shape)
		}
		if g := got.Float64s(); !AllClose(got, FromSlice(c.want, c.shape), 0, 0) {
			t.Fatalf("%s = %v, PyTorch %v", c.eq, g, c.want)
		}
	}
	for what, f := range map[string]func(){
		"repeated sizes":  func() { Einsum("ii->i", ar(2, 3)) },
		"no broadcast":    func() { Einsum("ij,ij->i", ar(2, 3), ar(2, 2)) },
		"two ellipses":    func() { Einsum("......->", ar(2, 3)) },
		"stray dot":       func() { Einsum("i.j->", ar(2, 3)) },
		"ellipsis too":    func() { Einsum("ijk...->", ar(2, 3)) },
		"output ellipsis": func() { Einsum("ij->..", ar(2, 3)) },
	} {
		testenv.Raises[*ShapeError](t, what, f)
	}
}
