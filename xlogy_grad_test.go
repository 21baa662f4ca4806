package ember

import (
	"math"
	"testing"
)

// testXlogyGrad checks xlogy's gradients where x = 0 against PyTorch
// 1.13's formulas: d/dx = xlogy(1, y), masked to 0 where x = 0 and y ≤ 0
// (log y at x = 0 when y > 0), d/dy = x/y.
func testXlogyGrad(t *testing.T, dev Device) {
	a := FromSlice([]float64{0, 0, 0, 1, 2}, Shape{5}).To(dev).SetRequiresGrad(true)
	b := FromSlice([]float64{2, 0, -1, 0, 3}, Shape{5}).To(dev).SetRequiresGrad(true)
	a.Xlogy(b).Sum().Backward()
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		name string
		got  *Tensor
		want []float64
	}{
		{"d/dx", a.Grad(), []float64{math.Log(2), 0, 0, -inf, math.Log(3)}},
		{"d/dy", b.Grad(), []float64{0, nan, 0, inf, 2.0 / 3}},
	} {
		g := c.got.CPU().Float64s()
		for i, w := range c.want {
			if !(g[i] == w || math.IsNaN(g[i]) && math.IsNaN(w) || math.Abs(g[i]-w) < 1e-12) {
				t.Errorf("%v xlogy %s[%d] = %v, want %v", dev, c.name, i, g[i], w)
			}
		}
	}
}

func TestXlogyGradAtZero(t *testing.T) {
	for _, dev := range testDevices() {
		testXlogyGrad(t, dev)
	}
}

func TestXlogyGradAtZeroOnEmulatedCUDA(t *testing.T) {
	onEmulatedCUDA(t)
	testXlogyGrad(t, CUDA(0))
}
