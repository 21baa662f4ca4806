package ember

import "testing"

// IndexSelect and its gradient (an index-add) on contiguous tensors, the
// CPU's row-copy fast path, along every dim of a [3, 4, 5] tensor with a
// repeated index, against plain loops; the transposed input takes the
// strided path and must agree.
func TestIndexSelectRowsAgainstLoops(t *testing.T) {
	shape := []int{3, 4, 5}
	sel := []int64{2, 0, 2, 1, 2}
	at := func(s []int, i, j, k int) int { return (i*s[1]+j)*s[2] + k }
	for d := 0; d < 3; d++ {
		for _, transposed := range []bool{false, true} {
			xs := make([]float64, 60)
			for i := range xs {
				xs[i] = float64(i) - 17.5
			}
			x := FromSlice(xs, Shape(shape))
			if transposed { // the same values, in a strided view
				x = FromSlice(xs, Shape(shape)).Transpose(0, 2).Contiguous().Transpose(0, 2)
			}
			x = x.Detach().SetRequiresGrad(true)
			os := append([]int{}, shape...)
			os[d] = len(sel)
			y := x.IndexSelect(d, FromSlice(sel, Shape{len(sel)}))
			gs := make([]float64, os[0]*os[1]*os[2])
			for i := range gs {
				gs[i] = float64(i*i%23) + 0.25
			}
			y.Mul(FromSlice(gs, Shape(os))).Sum().Backward()
			got, dx := y.Float64s(), x.Grad().Float64s()
			want, wdx := make([]float64, len(gs)), make([]float64, 60)
			for i := 0; i < os[0]; i++ {
				for j := 0; j < os[1]; j++ {
					for k := 0; k < os[2]; k++ {
						src := [3]int{i, j, k}
						src[d] = int(sel[src[d]])
						want[at(os, i, j, k)] = xs[at(shape, src[0], src[1], src[2])]
						wdx[at(shape, src[0], src[1], src[2])] += gs[at(os, i, j, k)]
					}
				}
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("dim %d transposed %v: y[%d] = %v, want %v", d, transposed, i, got[i], want[i])
				}
			}
			for i := range wdx {
				if dx[i] != wdx[i] {
					t.Fatalf("dim %d transposed %v: grad[%d] = %v, want %v", d, transposed, i, dx[i], wdx[i])
				}
			}
		}
	}
}
