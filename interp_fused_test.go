package ember

import (
	"fmt"
	"math"
	"testing"
)

// TestInterpolateFusedSameBits: the linear modes on a backend's fused
// Resampler give the composed ops' values and gradients bit for bit (the
// fixtures check the composed ops against PyTorch; other devices run them).
func TestInterpolateFusedSameBits(t *testing.T) {
	cases := []struct {
		mode  string
		shape Shape
		size  []int
		scale []float64
	}{
		{"linear", Shape{2, 3, 7}, []int{13}, nil},
		{"linear", Shape{2, 3, 7}, nil, []float64{0.6}},
		{"bilinear", Shape{2, 3, 16, 16}, nil, []float64{2}},
		{"bilinear", Shape{1, 2, 5, 9}, []int{11, 4}, nil},
		{"bilinear", Shape{1, 2, 5, 9}, []int{5, 9}, nil},
		{"bicubic", Shape{2, 2, 6, 7}, nil, []float64{2.5, 1.5}},
		{"bicubic", Shape{1, 3, 9, 8}, []int{4, 5}, nil},
		{"trilinear", Shape{1, 2, 3, 4, 5}, []int{5, 7, 3}, nil},
	}
	for _, c := range cases {
		for _, align := range []bool{false, true} {
			for _, dt := range []DType{Float32, Float64, BFloat16} {
				for _, grad := range []bool{false, true} {
					name := fmt.Sprintf("%s %v %v/%v align %v %v grad %v", c.mode, c.shape, c.size, c.scale, align, dt, grad)
					o := InterpolateOptions{Size: c.size, ScaleFactor: c.scale, Mode: c.mode, AlignCorners: align}
					base := Randn(c.shape, Dtype(dt))
					var ys, gs [2][]float64
					for p, fused := range []bool{true, false} {
						x := base.Detach().SetRequiresGrad(grad)
						y := interpolate(x, o, fused)
						ys[p] = y.Float64s()
						if grad {
							g := Arange(0, float64(y.NumElements()), 1).Reshape(y.Shape()...).MulScalar(0.37).Sin().Cast(dt)
							y.BackwardWith(g)
							gs[p] = x.Grad().Float64s()
						}
					}
					{
						for i := range ys[0] {
							if math.Float64bits(ys[0][i]) != math.Float64bits(ys[1][i]) {
								t.Fatalf("%s: y[%d] fused %v, composed %v", name, i, ys[0][i], ys[1][i])
							}
						}
						for i := range gs[0] {
							if math.Float64bits(gs[0][i]) != math.Float64bits(gs[1][i]) {
								t.Fatalf("%s: grad[%d] fused %v, composed %v", name, i, gs[0][i], gs[1][i])
							}
						}
					}
				}
			}
		}
	}
}
