package ember

import (
	"math"
	"testing"
)

// Expected values worked by hand from torch.allclose's definition.
func TestAllCloseEdges(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	f := func(v ...float64) *Tensor { return FromSlice(v, nil) }
	for _, c := range []struct {
		a, b *Tensor
		want bool
	}{
		{f(1, 2), f(1, 2+1e-9), true},
		{f(1), f(1.1), false},
		{f(inf, -inf), f(inf, -inf), true},
		{f(inf), f(-inf), false},
		{f(nan), f(nan), false},
		{f(1, 1, 1).Reshape(3, 1), f(1), true},                           // broadcast
		{FromSlice([]int64{3}, nil), FromSlice([]float32{3}, nil), true}, // promotion
		{FromSlice([]bool{true}, nil), FromSlice([]bool{true}, nil), true},
	} {
		if got := AllClose(c.a, c.b, 1e-5, 1e-8); got != c.want {
			t.Errorf("AllClose(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	if Equal(f(nan), f(nan)) || !Equal(f(1, 2), f(1, 2)) || Equal(f(1, 2), f(1, 3)) || Equal(f(1), f(1, 1)) {
		t.Error("Equal")
	}
}
