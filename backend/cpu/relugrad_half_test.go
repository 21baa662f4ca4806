package cpu

import (
	"testing"

	"github.com/emberml/ember/backend"
)

// TestReLUGradHalf checks the fused ReLU gradient by hand on every kind of
// ReLU output (+0, -0, positive, +inf, NaN of both signs, subnormal) at
// every lane of the four-element loop and in the tail: g passes where y's
// magnitude is not zero, +0 (not g's -0 or NaN) goes where it is.
func TestReLUGradHalf(t *testing.T) {
	ys := []uint16{0x0000, 0x8000, 0x3F80, 0x7F80, 0x7FC0, 0xFFC0, 0x0001, 0x4000, 0x0000}
	gs := []uint16{0xBF80, 0x7FC0, 0xC000, 0x8000, 0x4040, 0x3F80, 0x1234, 0xFFFF, 0x8000}
	want := []uint16{0, 0, 0xC000, 0x8000, 0x4040, 0x3F80, 0x1234, 0xFFFF, 0}
	for _, dt := range []backend.DType{backend.BFloat16, backend.Float16} {
		for shift := range 4 { // each value at each lane
			n := len(ys) + shift
			mk := func(vals []uint16) backend.View {
				v := benchView(dt, n)
				d := bits16(v)
				for i := range d {
					d[i] = 0x3F80
				}
				copy(d[shift:], vals)
				return v
			}
			dst, g, y := benchView(dt, n), mk(gs), mk(ys)
			if !(Backend{}).ReLUGradHalf(dst, g, y) {
				t.Fatalf("%v: declined a contiguous run", dt)
			}
			got := bits16(dst)
			for i, w := range want {
				if got[shift+i] != w {
					t.Fatalf("%v shift %d: dst[%d] = %#04x (y %#04x, g %#04x), want %#04x", dt, shift, shift+i, got[shift+i], ys[i], gs[i], w)
				}
			}
		}
	}
	// not contiguous: left to the caller
	v := benchView(backend.BFloat16, 4, 4)
	tv := backend.View{S: v.S, Shape: []int{4, 4}, Strides: []int{1, 4}}
	if (Backend{}).ReLUGradHalf(v, tv, v) {
		t.Fatal("took a transposed view")
	}
}
