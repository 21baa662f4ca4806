package cpu

import (
	"math"
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
			if !(Backend{}).ReLUGrad(dst, g, y) {
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
	if (Backend{}).ReLUGrad(v, tv, v) {
		t.Fatal("took a transposed view")
	}
}

// TestReLUGradFloat: float32 and float64 through the backend (vec's loop,
// split over the threads): 0 where y is +0 or -0, g elsewhere (a NaN y
// passes g, an infinite y too), NaN and -0 of g kept.
func TestReLUGradFloat(t *testing.T) {
	defer func(g int) { grain = g }(grain)
	grain = 1 << 10 // several chunks
	nan := math.NaN()
	ys := []float64{0, math.Copysign(0, -1), 1.5, math.Inf(1), nan, 1e-310, 7}
	gs := []float64{-1, nan, -2, math.Copysign(0, -1), 3, 4, nan}
	for _, dt := range []backend.DType{backend.Float32, backend.Float64} {
		n := 5000
		dst, g, y := benchView(dt, n), benchView(dt, n), benchView(dt, n)
		set := func(v backend.View, i int, x float64) {
			if dt == backend.Float32 {
				data[float32](v)[i] = float32(x)
			} else {
				data[float64](v)[i] = x
			}
		}
		get := func(v backend.View, i int) float64 {
			if dt == backend.Float32 {
				return float64(data[float32](v)[i])
			}
			return data[float64](v)[i]
		}
		for i := 0; i < n; i++ {
			set(y, i, ys[i%len(ys)])
			set(g, i, gs[i*3%len(gs)])
		}
		if !(Backend{}).ReLUGrad(dst, g, y) {
			t.Fatalf("%v: declined a contiguous run", dt)
		}
		for i := 0; i < n; i++ {
			yv, gv, d := get(y, i), get(g, i), get(dst, i)
			if yv == 0 {
				if d != 0 || math.Signbit(d) {
					t.Fatalf("%v: y=%v g=%v: got %v, want +0", dt, yv, gv, d)
				}
				continue
			}
			if !(d == gv && math.Signbit(d) == math.Signbit(gv) || d != d && gv != gv) {
				t.Fatalf("%v: y=%v g=%v: got %v, want g", dt, yv, gv, d)
			}
		}
	}
}

// TestChannelAffineFloat checks ChannelAffine (out = x·scale[c] + shift[c])
// element by element against x·scale + shift worked in float64, float32
// and float64,
// for planes below smallPlane (whole images with spread coefficients) and
// above, split over the threads in chunks that start mid-image.
func TestChannelAffineFloat(t *testing.T) {
	defer func(g int) { grain = g }(grain)
	grain = 16
	defer SetThreads(Threads())
	SetThreads(3)
	for _, dt := range []backend.DType{backend.Float32, backend.Float64} {
		for _, sh := range [][]int{{5, 7, 2, 2}, {3, 11, 3, 3}, {2, 3, 1}, {4, 6, 40}, {9, 5}} {
			x, out := benchView(dt, sh...), benchView(dt, sh...)
			sc, sf := benchView(dt, sh[1]), benchView(dt, sh[1])
			at := func(v backend.View, i int) float64 {
				if dt == backend.Float32 {
					return float64(data[float32](v)[i])
				}
				return data[float64](v)[i]
			}
			set := func(v backend.View, i int, f float64) {
				if dt == backend.Float32 {
					data[float32](v)[i] = float32(f)
				} else {
					data[float64](v)[i] = f
				}
			}
			n := 1
			for _, d := range sh {
				n *= d
			}
			for i := range n {
				set(x, i, math.Sin(float64(i)*0.7)*3)
			}
			for c := range sh[1] {
				set(sc, c, 0.5+float64(c)*0.37)
				set(sf, c, float64(c)*0.1-0.3)
			}
			Backend{}.ChannelAffine(out, x, sc, sf)
			s := 1
			for _, d := range sh[2:] {
				s *= d
			}
			for i := range n {
				c := i / s % sh[1]
				// rounded once (FMA), or, without FMA (purego), the
				// product then the sum
				a, b, d := at(x, i), at(sc, c), at(sf, c)
				once, twice := math.FMA(a, b, d), a*b+d
				if dt == backend.Float32 {
					once, twice = float64(float32(once)), float64(float32(a)*float32(b)+float32(d))
				}
				if got := at(out, i); got != once && got != twice {
					t.Fatalf("%v %v: out[%d] = %v, want %v (fused) or %v", dt, sh, i, got, once, twice)
				}
			}
		}
	}
}
