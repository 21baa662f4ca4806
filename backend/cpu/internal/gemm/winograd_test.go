package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestWinoWeights checks Winograd's weight transform (winoWeightsAVX2 where
// the CPU has AVX2) against U = G·g·Gᵀ worked element by element, for
// kernels stored as they are (the forward) and rotated by 180° (the input
// gradient), with groups, partial panels and K blocks.
func TestWinoWeights(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	G := [4][3]float64{{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}}
	for _, simd := range []bool{false, true} {
		prev := hasWinoWeights
		hasWinoWeights = hasWinoWeights && simd
		for _, tc := range []struct{ groups, rows, chans, mr, kcb int }{
			{1, 20, 9, 14, 9}, {2, 30, 17, 14, 5}, {1, 6, 3, 6, 2}, {3, 13, 8, 6, 8}, {1, 64, 40, 14, 16},
		} {
			kk := 9
			w := randSlice[float32](r, tc.groups*tc.rows*tc.chans*kk)
			for _, flip := range []bool{false, true} {
				wl := wlayout{gs: tc.rows * tc.chans * kk, rs: tc.chans * kk, cs: kk, ks: 3, ls: 1}
				if flip { // the input gradient's: w [chans][rows][3][3] rotated (conv_grad.go)
					wl = wlayout{base: kk - 1, gs: tc.rows * tc.chans * kk, rs: kk, cs: tc.rows * kk, ks: -3, ls: -1}
				}
				mpad := (tc.rows + tc.mr - 1) / tc.mr * tc.mr
				per := mpad * tc.chans
				dst := make([]float32, 16*tc.groups*per)
				for i := range dst {
					dst[i] = float32(math.NaN())
				}
				winoWeights(dst, w, wl, tc.groups, tc.rows, tc.chans, tc.mr, tc.kcb)
				for g := 0; g < tc.groups; g++ {
					for row := 0; row < mpad; row++ {
						ir, i := row/tc.mr*tc.mr, row%tc.mr
						for c := 0; c < tc.chans; c++ {
							pc := c / tc.kcb * tc.kcb
							kc := min(tc.kcb, tc.chans-pc)
							off := pc*mpad + ir*kc + (c-pc)*tc.mr + i
							for a := 0; a < 4; a++ {
								for b := 0; b < 4; b++ {
									var want float64
									for p := 0; p < 3 && row < tc.rows; p++ {
										for q := 0; q < 3; q++ {
											k := w[wl.base+g*wl.gs+row*wl.rs+c*wl.cs+p*wl.ks+q*wl.ls]
											want += G[a][p] * float64(k) * G[b][q]
										}
									}
									got := dst[((4*a+b)*tc.groups+g)*per+off]
									if math.Abs(float64(got)-want) > 1e-6 {
										t.Fatalf("simd %v %+v flip %v: U[%d][%d] of row %d channel %d = %v, want %v", simd, tc, flip, a, b, row, c, got, want)
									}
								}
							}
						}
					}
				}
			}
		}
		hasWinoWeights = prev
	}
}
