package ember

import (
	"math"
	"testing"

	"github.com/emberml/ember/backend"
)

// TestHalfRand is worked by hand from the float32 stream: ember's uniform
// draws for a two-byte float keep the top digits of each lane (8 for
// bfloat16, 11 for float16), k·2^-digits (PyTorch's digits rule for these
// types), so with one seed they are the float32 draws rounded down to
// multiples of 2^-digits, never 1; normal draws are the float32 ones
// rounded once (PyTorch's CPU normal_ for them goes double → float →
// half, as ember's float32 normals are double → float).
func TestHalfRand(t *testing.T) {
	const n = 4099 // several Philox blocks, workers and a tail
	for _, c := range []struct {
		dt     DType
		digits int
	}{{BFloat16, 8}, {Float16, 11}} {
		ManualSeed(11)
		want := Rand(Shape{n}).Float32s()
		ManualSeed(11)
		u := Rand(Shape{n}, Dtype(c.dt))
		if u.DType() != c.dt {
			t.Fatalf("Rand dtype %v", u.DType())
		}
		scale := math.Ldexp(1, c.digits)
		var mean float64
		for i, v := range u.Float32s() {
			w := math.Floor(float64(want[i])*scale) / scale
			if float64(v) != w || v >= 1 || v < 0 {
				t.Fatalf("%v Rand[%d] = %v, want %v (float32 draw %v)", c.dt, i, v, w, want[i])
			}
			mean += float64(v) / n
		}
		// the mean of k/2^digits for uniform k is 1/2 - 2^-(digits+1)
		if d := mean - (0.5 - 0.5/scale); math.Abs(d) > 0.02 {
			t.Errorf("%v Rand mean %v", c.dt, mean)
		}
		ManualSeed(12)
		wn := Randn(Shape{n}).Float32s()
		ManualSeed(12)
		z := Randn(Shape{n}, Dtype(c.dt))
		for i, v := range z.Float32s() {
			var w float32
			if c.dt == BFloat16 {
				w = backend.ToBF16(wn[i]).Float32()
			} else {
				w = backend.ToF16(wn[i]).Float32()
			}
			if v != w {
				t.Fatalf("%v Randn[%d] = %v, want %v (float32 draw %v)", c.dt, i, v, w, wn[i])
			}
		}
		// the next draw continues the stream, as for float32
		ManualSeed(13)
		Rand(Shape{7}, Dtype(c.dt))
		a := Rand(Shape{5}).Float32s()
		ManualSeed(13)
		Rand(Shape{7})
		if b := Rand(Shape{5}).Float32s(); a[0] != b[0] || a[4] != b[4] {
			t.Errorf("%v draws advance the stream differently from float32: %v, %v", c.dt, a, b)
		}
	}
}

// TestHalfDropout: Dropout on bfloat16 (and float16) works (it needed a
// bfloat16 Rand): the mask is drawn from float32 uniforms, so it keeps
// exactly the elements where the float32 draw of the same seed is below
// 1-p, and the kept values are x times the scale rounded to the two-byte
// type, rounded once (torch: noise.bernoulli_(1-p).div_(1-p), input*noise).
func TestHalfDropout(t *testing.T) {
	const n, p = 1000, 0.1
	for _, dt := range []DType{BFloat16, Float16} {
		xs := make([]float32, n)
		for i := range xs {
			xs[i] = float32(i%17) - 8.3
		}
		ManualSeed(5)
		u := Rand(Shape{n}).Float32s()
		ManualSeed(5)
		x := FromSlice(xs, nil, Dtype(dt)).SetRequiresGrad(true)
		y := Dropout(x, p, true)
		if y.DType() != dt {
			t.Fatalf("dropout dtype %v", y.DType())
		}
		scale := FromSlice([]float64{1 / (1 - p)}, nil, Dtype(dt)).Float32s()[0] // 1.109375 in bf16
		xv := x.Float32s()
		got := y.Float32s()
		kept := 0
		for i, v := range got {
			want := float32(0)
			if u[i] < float32(1-p) {
				kept++
				want = FromSlice([]float32{xv[i] * scale}, nil, Dtype(dt)).Float32s()[0]
			}
			if v != want {
				t.Fatalf("%v dropout[%d] = %v, want %v", dt, i, v, want)
			}
		}
		if kept < 860 || kept > 940 {
			t.Errorf("%v kept %d of %d at p=%v", dt, kept, n, p)
		}
		y.Sum().Backward()
		for i, g := range x.Grad().Float32s() {
			if (got[i] != 0 || u[i] < float32(1-p)) != (g == scale) || g != 0 && g != scale {
				t.Fatalf("%v dropout grad[%d] = %v", dt, i, g)
			}
		}
	}
	// under autocast: a float32 input stays float32, a bfloat16 one works
	Autocast(CPU, BFloat16, func() {
		if y := Dropout(Ones(Shape{64}, Dtype(BFloat16)), 0.5, true); y.DType() != BFloat16 {
			t.Errorf("dropout under autocast: %v", y.DType())
		}
	})
}

// TestHalfRandOnEmulatedCUDA: the CUDA kernel draws the CPU's two-byte
// uniforms bit for bit from the same stream, and its normals within one
// unit (the device's log and sincos).
func TestHalfRandOnEmulatedCUDA(t *testing.T) {
	onEmulatedCUDA(t)
	for _, dt := range []DType{BFloat16, Float16} {
		for _, normal := range []bool{false, true} {
			draw := func(dev Device) []uint16 {
				ManualSeed(21)
				if normal {
					return Randn(Shape{1027}, Dtype(dt), On(dev)).Bits()
				}
				return Rand(Shape{1027}, Dtype(dt), On(dev)).Bits()
			}
			want, got := draw(CPU), draw(CUDA(0))
			for i := range want {
				if got[i] != want[i] && (!normal || ulps(got[i], want[i]) > 1 || (got[i]^want[i])&0x8000 != 0) {
					t.Fatalf("%v normal=%v [%d]: cuda %#04x, cpu %#04x", dt, normal, i, got[i], want[i])
				}
			}
		}
	}
}
