package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
)

// TestMaxPool3S2Float32 checks float32 max pooling without indices with
// 3-wide windows at stride 2 (vec.Max2 and vec.MaxPool3S2 on the output
// columns whose windows lie inside the row, Go on the edges) against the
// maxima worked window by window with Go's max: every width through the
// 8-output groups, paddings 0 and 1, window heights 1–3, ±0 ties,
// infinities, NaNs planted in some planes (NaN there, whichever bits), and
// inputs strided along W (their rows gathered).
func TestMaxPool3S2Float32(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	special := []float32{0, float32(math.Copysign(0, -1)), 1, float32(math.Inf(1)), float32(math.Inf(-1))}
	for trial := 0; trial < 200; trial++ {
		kh, sh := 1+r.IntN(3), 1+r.IntN(2)
		pw, ph := r.IntN(2), r.IntN(kh/2+1)
		h, w := kh+r.IntN(6), 3+r.IntN(40)
		n, c := 1+r.IntN(2), 1+r.IntN(3)
		oh, ow := (h+2*ph-kh)/sh+1, (w+2*pw-3)/2+1
		// every third trial strided along W (rows gathered into the
		// row slots), the rest contiguous
		sw := 1
		if trial%3 == 0 {
			sw = 2
		}
		x, out := benchView(backend.Float32, n, c, h, sw*w), benchView(backend.Float32, n, c, oh, ow)
		x.Shape, x.Strides = []int{n, c, h, w}, []int{c * h * sw * w, h * sw * w, sw * w, sw}
		xd, od := data[float32](x), data[float32](out)
		for i := range xd {
			xd[i] = float32(r.NormFloat64())
			if r.IntN(4) == 0 {
				xd[i] = special[r.IntN(len(special))]
			}
		}
		if trial%5 == 0 {
			xd[r.IntN(len(xd))] = float32(math.NaN())
		}
		Backend{}.MaxPool2d(out, backend.View{}, x, backend.Pool2dParams{Kernel: [2]int{kh, 3}, Stride: [2]int{sh, 2}, Padding: [2]int{ph, pw}})
		what := fmt.Sprintf("x[%d %d %d %d] (W stride %d) kernel %d×3 stride %d×2 pad %d,%d", n, c, h, w, sw, kh, sh, ph, pw)
		for pl := 0; pl < n*c; pl++ {
			for oy := 0; oy < oh; oy++ {
				for ox := 0; ox < ow; ox++ {
					want := float32(math.Inf(-1))
					for i := max(oy*sh-ph, 0); i < min(oy*sh-ph+kh, h); i++ {
						for j := max(2*ox-pw, 0); j < min(2*ox-pw+3, w); j++ {
							want = max(want, xd[((pl*h+i)*w+j)*sw])
						}
					}
					got := od[(pl*oh+oy)*ow+ox]
					if want != want && got != got {
						continue
					}
					if math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("%s: plane %d out[%d][%d] = %v, want %v", what, pl, oy, ox, got, want)
					}
				}
			}
		}
	}
}
