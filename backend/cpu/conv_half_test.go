package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
)

// TestConvGradWeightBF16Chunks checks the widened bfloat16 weight gradient
// (one input channel: the dot products) a chunk of images at a time
// against the float64 definition on the same bfloat16 operands, whole
// batch and one image a chunk: within a bfloat16 rounding and the float32
// sums' error.
func TestConvGradWeightBF16Chunks(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	n, c, h, o := 5, 1, 9, 4
	v := func(s *Storage, sh ...int) backend.View {
		return backend.View{S: s, Shape: sh, Strides: backend.ContiguousStrides(sh)}
	}
	x, g := newStorage(backend.BFloat16, n*c*h*h), newStorage(backend.BFloat16, n*o*h*h)
	for _, s := range []*Storage{x, g} {
		d := slice[backend.BF16](s)
		for i := range d {
			d[i] = backend.ToBF16(float32(r.NormFloat64()))
		}
	}
	xd, gd := slice[backend.BF16](x), slice[backend.BF16](g)
	p := backend.Conv2dParams{Stride: [2]int{1, 1}, Padding: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1}
	for _, chunk := range []int{1 << 20, 1} {
		old := gradChunkBytes
		gradChunkBytes = chunk
		gw := newStorage(backend.BFloat16, o*c*9)
		Backend{}.Conv2dGradWeight(v(gw, o, c, 3, 3), v(x, n, c, h, h), v(g, n, o, h, h), p)
		gradChunkBytes = old
		got := slice[backend.BF16](gw)
		for oc := range o {
			for ki := range 3 {
				for kj := range 3 {
					var want, mag float64
					for b := range n {
						for y := range h {
							for z := range h {
								iy, iz := y+ki-1, z+kj-1
								if iy < 0 || iy >= h || iz < 0 || iz >= h {
									continue
								}
								pr := float64(gd[((b*o+oc)*h+y)*h+z].Float32()) * float64(xd[(b*h+iy)*h+iz].Float32())
								want += pr
								mag += math.Abs(pr)
							}
						}
					}
					gv := float64(got[oc*9+ki*3+kj].Float32())
					if tol := math.Abs(want)/256 + 1e-6*mag; math.Abs(gv-want) > tol {
						t.Fatalf("chunk %d: gw[%d][%d][%d] = %v, want %v (±%g)", chunk, oc, ki, kj, gv, want, tol)
					}
				}
			}
		}
	}
}
