package vec

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
)

// Every one of the 65536 bit patterns widens to the bits of Float32.
func TestHalfWidenExhaustive(t *testing.T) {
	bf := make([]backend.BF16, 1<<16)
	hf := make([]backend.F16, 1<<16)
	for i := range bf {
		bf[i], hf[i] = backend.BF16(i), backend.F16(i)
	}
	got := make([]float32, 1<<16)
	F32FromBF16(got, bf)
	for i, h := range bf {
		if g, w := math.Float32bits(got[i]), math.Float32bits(h.Float32()); g != w {
			t.Fatalf("F32FromBF16(%#04x) = %#08x, want %#08x", i, g, w)
		}
	}
	F32FromF16(got, hf)
	for i, h := range hf {
		if g, w := math.Float32bits(got[i]), math.Float32bits(h.Float32()); g != w {
			t.Fatalf("F32FromF16(%#04x) = %#08x, want %#08x", i, g, w)
		}
	}
}

// halfEdges is float32 bit patterns where rounding to bfloat16 or binary16
// changes behaviour: around every half value and halfway point (both
// formats' ties, overflow to infinity, the subnormal ranges), zeros,
// infinities, NaNs of both signs and several payloads, float32
// subnormals.
func halfEdges() []uint32 {
	var us []uint32
	add := func(c uint32) {
		for d := uint32(0); d <= 2; d++ {
			us = append(us, c+d, c-d)
		}
	}
	for h := uint32(0); h < 1<<16; h++ {
		add(h << 16)        // bfloat16 values
		add(h<<16 | 0x8000) // bfloat16 ties
		f := math.Float32bits(backend.F16(h).Float32())
		add(f)
		// binary16 ties: halfway to the next value up in magnitude.
		if h&0x7FFF < 0x7C00 {
			next := math.Float32bits(backend.F16(h + 1).Float32())
			if h&0x7FFF == 0x7BFF {
				next = f + 0x2000 // 65520's neighbour: 65536
			}
			add(f + (next-f)/2)
		}
	}
	for _, u := range []uint32{0, 1, 2, 0x7FFFFF, 0x400000, 0x7F800000, 0x7F800001, 0x7FC00000, 0x7FFFFFFF, 0x7FBFFFFF,
		math.Float32bits(65504), math.Float32bits(65519.99), math.Float32bits(65520), math.Float32bits(65536),
		math.Float32bits(0x1p-24), math.Float32bits(0x1p-25), math.Float32bits(0x1p-26), math.Float32bits(0x1.8p-25),
		math.Float32bits(0x1p-14), math.Float32bits(math.MaxFloat32)} {
		us = append(us, u, u|0x80000000)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 20 {
		us = append(us, r.Uint32())
	}
	return us
}

// Narrowing matches ToBF16 and ToF16 on the edges and on random bits.
func TestHalfNarrow(t *testing.T) {
	us := halfEdges()
	src := make([]float32, len(us))
	for i, u := range us {
		src[i] = math.Float32frombits(u)
	}
	bf := make([]backend.BF16, len(src))
	BF16FromF32(bf, src)
	hf := make([]backend.F16, len(src))
	F16FromF32(hf, src)
	for i, f := range src {
		if w := backend.ToBF16(f); bf[i] != w {
			t.Fatalf("BF16FromF32(%#08x) = %#04x, want %#04x", us[i], bf[i], w)
		}
		if w := backend.ToF16(f); hf[i] != w {
			t.Fatalf("F16FromF32(%#08x) = %#04x, want %#04x", us[i], hf[i], w)
		}
	}
}

// Every length and an unaligned start: the vector loops' blocks and the
// Go remainder, with the Go loops alone too.
func TestHalfSizes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	check := func(n int) {
		src := make([]float32, n+1)[1:]
		hs := make([]backend.BF16, n+1)[1:]
		for i := range src {
			src[i] = math.Float32frombits(r.Uint32())
			hs[i] = backend.BF16(r.Uint32())
		}
		fullH, fullF := make([]backend.BF16, n+2), make([]float32, n+2)
		gotH, gotF := fullH[1:n+1], fullF[1:n+1]
		BF16FromF32(gotH, src)
		F32FromBF16(gotF, hs)
		if fullH[0] != 0 || fullH[n+1] != 0 || fullF[0] != 0 || fullF[n+1] != 0 {
			t.Fatalf("n %d: wrote outside dst", n)
		}
		fs := make([]backend.F16, n+1)[1:]
		for i := range fs {
			fs[i] = backend.F16(hs[i])
		}
		fullG, fullE := make([]backend.F16, n+2), make([]float32, n+2)
		gotG, gotE := fullG[1:n+1], fullE[1:n+1]
		F16FromF32(gotG, src)
		F32FromF16(gotE, fs)
		if fullG[0] != 0 || fullG[n+1] != 0 || fullE[0] != 0 || fullE[n+1] != 0 {
			t.Fatalf("n %d: wrote outside dst", n)
		}
		for i := range src {
			if w := backend.ToF16(src[i]); gotG[i] != w {
				t.Fatalf("n %d: F16FromF32(%#08x) at %d = %#04x, want %#04x", n, math.Float32bits(src[i]), i, gotG[i], w)
			}
			if g, w := math.Float32bits(gotE[i]), math.Float32bits(fs[i].Float32()); g != w {
				t.Fatalf("n %d: F32FromF16(%#04x) at %d = %#08x, want %#08x", n, fs[i], i, g, w)
			}
		}
		for i := range src {
			if w := backend.ToBF16(src[i]); gotH[i] != w {
				t.Fatalf("n %d: BF16FromF32(%#08x) at %d = %#04x, want %#04x", n, math.Float32bits(src[i]), i, gotH[i], w)
			}
			if g, w := math.Float32bits(gotF[i]), math.Float32bits(hs[i].Float32()); g != w {
				t.Fatalf("n %d: F32FromBF16(%#04x) at %d = %#08x, want %#08x", n, hs[i], i, g, w)
			}
		}
	}
	for n := 0; n <= 100; n++ {
		check(n)
		withGo(func() { check(n) })
	}
	for _, n := range sizes {
		check(n)
	}
}

// ReLUBF16 on all 65536 patterns (at every length's end too) against
// rounding the float32 ReLU.
func TestHalfReLU(t *testing.T) {
	a := make([]backend.BF16, 1<<16)
	for i := range a {
		a[i] = backend.BF16(i)
	}
	want := func(h backend.BF16) backend.BF16 {
		x := h.Float32()
		if x > 0 || x != x {
			return backend.ToBF16(x)
		}
		return 0
	}
	for _, n := range []int{1 << 16, 1<<16 - 1, 1<<16 - 17, 33, 31, 16, 15, 1} {
		check := func() {
			d := make([]backend.BF16, n)
			src := a[len(a)-n:]
			ReLUBF16(d, src)
			for i, h := range src {
				if w := want(h); d[i] != w {
					t.Fatalf("n %d: ReLUBF16(%#04x) = %#04x, want %#04x", n, h, d[i], w)
				}
			}
		}
		check()
		withGo(check)
	}
}

// Worked by hand: ties to even, overflow, NaN, subnormals.
func TestHalfNarrowByHand(t *testing.T) {
	src := []float32{1, 1 + 0x1p-8, 1 + 3*0x1p-8, 65504, 65520, float32(math.Inf(-1)), float32(math.NaN()), 0x1p-24, 0x1p-25, -0x1.8p-25}
	bf := make([]backend.BF16, len(src))
	hf := make([]backend.F16, len(src))
	BF16FromF32(bf, src)
	F16FromF32(hf, src)
	wantB := []backend.BF16{0x3F80, 0x3F80, 0x3F82, 0x4780, 0x4780, 0xFF80, 0xFFFF, 0x3380, 0x3300, 0xB340}
	wantH := []backend.F16{0x3C00, 0x3C04, 0x3C0C, 0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x0001, 0x0000, 0x8001}
	for i := range src {
		if bf[i] != wantB[i] || hf[i] != wantH[i] {
			t.Errorf("%g: bf16 %#04x fp16 %#04x, want %#04x %#04x", src[i], bf[i], hf[i], wantB[i], wantH[i])
		}
	}
}

func BenchmarkHalf(b *testing.B) {
	const n = 4096
	f := make([]float32, n)
	bf := make([]backend.BF16, n)
	hf := make([]backend.F16, n)
	for i := range f {
		f[i] = float32(i) * 0.37
	}
	b.Run("BF16FromF32", func(b *testing.B) {
		for b.Loop() {
			BF16FromF32(bf, f)
		}
	})
	b.Run("F32FromBF16", func(b *testing.B) {
		for b.Loop() {
			F32FromBF16(f, bf)
		}
	})
	b.Run("F16FromF32", func(b *testing.B) {
		for b.Loop() {
			F16FromF32(hf, f)
		}
	})
	b.Run("F32FromF16", func(b *testing.B) {
		for b.Loop() {
			F32FromF16(f, hf)
		}
	})
}

// TestSumBF16 checks SumBF16 against Sum on the widened copy: the same
// bits with the AVX2 loops, and within float32 accumulation error of a
// float64 sum by hand without them.
func TestSumBF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 14))
	for _, n := range []int{0, 1, 31, 32, 33, 100, 2047, 2048, 2049, 4096 + 65, 70001} {
		x := make([]backend.BF16, n)
		var want, mag float64
		for i := range x {
			x[i] = backend.ToBF16(float32(rng.NormFloat64() * 10))
			want += float64(x[i].Float32())
			mag += math.Abs(float64(x[i].Float32()))
		}
		f := make([]float32, n)
		F32FromBF16(f, x)
		if got, ref := SumBF16(x), Sum(f); useAsm && got != ref {
			t.Errorf("n=%d: SumBF16 = %v, Sum of the float32 copy = %v", n, got, ref)
		}
		if got := SumBF16(x); math.Abs(got-want) > 1e-6*mag {
			t.Errorf("n=%d: SumBF16 = %v, want %v", n, got, want)
		}
		func() {
			defer func(u bool) { useAsm = u }(useAsm)
			useAsm = false
			if got := SumBF16(x); math.Abs(got-want) > 1e-6*mag {
				t.Errorf("n=%d, Go loops: SumBF16 = %v, want %v", n, got, want)
			}
		}()
	}
	x := []backend.BF16{backend.ToBF16(1), 0xFFFF, backend.ToBF16(2)}
	x = append(x, make([]backend.BF16, 64)...)
	x[40] = backend.ToBF16(float32(math.Inf(1)))
	if got := SumBF16(x); !math.IsNaN(got) {
		t.Errorf("a NaN in the sum: got %v", got)
	}
}

// The order keys round-trip every bit pattern (NaNs to 0xFFFF) and order
// the values as float64 does, -0 below +0; MaxKeysBF16's loops give the
// Go function's keys on all 65536 patterns, first and accumulated.
func TestKeysBF16(t *testing.T) {
	all := make([]backend.BF16, 1<<16)
	for i := range all {
		all[i] = backend.BF16(i)
	}
	less := func(a, b backend.BF16) bool { // float64's order, -0 < +0, NaN above all
		fa, fb := float64(a.Float32()), float64(b.Float32())
		switch {
		case fb != fb:
			return fa == fa
		case fa != fa:
			return false
		case fa == fb:
			return math.Signbit(fa) && !math.Signbit(fb)
		}
		return fa < fb
	}
	for _, h := range all {
		want := h
		if h.Float32() != h.Float32() {
			want = 0xFFFF
		}
		if got := BF16OfKey(KeyBF16(h)); got != want {
			t.Fatalf("BF16OfKey(KeyBF16(%#04x)) = %#04x, want %#04x", h, got, want)
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 200000 {
		a, b := all[r.IntN(1<<16)], all[r.IntN(1<<16)]
		if r.IntN(8) == 0 {
			b = a ^ 0x8000
		}
		nan := a.Float32() != a.Float32() && b.Float32() != b.Float32()
		if got, want := KeyBF16(a) < KeyBF16(b), less(a, b); got != want && !nan {
			t.Fatalf("key(%#04x) < key(%#04x) = %v, want %v", a, b, got, want)
		}
	}
	for _, acc := range []bool{false, true} {
		shuf := append([]backend.BF16(nil), all...)
		r.Shuffle(len(shuf), func(i, j int) { shuf[i], shuf[j] = shuf[j], shuf[i] })
		for _, n := range []int{1 << 16, 1<<16 - 5, 37, 3} {
			k := make([]int16, n)
			for i := range k {
				k[i] = int16(r.Uint32())
			}
			want := append([]int16(nil), k...)
			for i := range want {
				want[i] = KeyBF16(shuf[i])
				if acc {
					want[i] = max(want[i], k[i])
				}
			}
			got := append([]int16(nil), k...)
			MaxKeysBF16(got, shuf, acc)
			gogot := append([]int16(nil), k...)
			withGo(func() { MaxKeysBF16(gogot, shuf, acc) })
			for i := range want {
				if got[i] != want[i] || gogot[i] != want[i] {
					t.Fatalf("acc %v n %d: MaxKeysBF16[%d] = %#04x (Go loop %#04x), want %#04x", acc, n, i, got[i], gogot[i], want[i])
				}
			}
		}
	}
}

// WindowMaxBF16 at strides 1 to 3 and windows 1 to 4, assembly and Go,
// against window maxima in float64 rounded back: values in few levels
// (ties), ±0, infinities and NaNs of both signs.
func TestWindowMaxBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 2.5, -3, float32(math.Inf(1)), float32(math.Inf(-1))}
	for it := range 400 {
		sw, kw := 1+it%3, 1+(it/3)%4
		no := r.IntN(70)
		if no == 0 {
			no = 1
		}
		nk := sw*(no-1) + kw + r.IntN(3)
		x := make([]backend.BF16, nk)
		for i := range x {
			switch u := r.IntN(40); {
			case u == 0:
				x[i] = 0x7FC1
			case u == 1:
				x[i] = 0xFF81
			case u < 12:
				x[i] = backend.ToBF16(vals[r.IntN(len(vals))])
			default:
				x[i] = backend.ToBF16(float32(r.NormFloat64()))
			}
		}
		want := make([]backend.BF16, no)
		for j := range want {
			m := math.Inf(-1)
			for _, h := range x[sw*j:][:kw] {
				f := float64(h.Float32())
				switch {
				case f != f || m != m:
					m = math.NaN()
				case f > m || f == m && !math.Signbit(f):
					m = f
				}
			}
			want[j] = backend.ToBF16(float32(m))
		}
		k := make([]int16, nk)
		MaxKeysBF16(k, x, false)
		got, gogot := make([]backend.BF16, no), make([]backend.BF16, no)
		WindowMaxBF16(got, k, kw, sw)
		withGo(func() { WindowMaxBF16(gogot, k, kw, sw) })
		for j := range want {
			if got[j] != want[j] || gogot[j] != want[j] {
				t.Fatalf("sw %d kw %d, %d outputs: o[%d] = %#04x (Go loop %#04x), want %#04x", sw, kw, no, j, got[j], gogot[j], want[j])
			}
		}
	}
}

// TestMaxPool2x2BF16 checks MaxPool2x2BF16, its AVX-512 loop and its Go
// twin, against a float32 2×2 max pool of the widened plane (Go's max,
// the first window element equal to the maximum, the last NaN of a window
// with one) rounded back: planes of ties, ±0, infinities and NaNs, rows
// of every length around the 16-output groups, odd widths.
func TestMaxPool2x2BF16(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	special := []backend.BF16{0, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F81, 0x3F80, 0xBF80, 0x0001, 0x8001}
	for rep := range 16 {
		ow := []int{1, 2, 3, 7, 8, 14, 15, 16, 17, 31, 32, 33, 56}[rep%13]
		for _, odd := range []int{0, 1} {
			oh, w := 1+r.IntN(5), 2*ow+odd
			x := make([]backend.BF16, (2*oh+odd)*w)
			for i := range x {
				switch r.IntN(4) {
				case 0:
					x[i] = special[r.IntN(len(special))]
				case 1:
					x[i] = backend.BF16(0x3F80 + r.IntN(3)) // ties
				default:
					x[i] = backend.ToBF16(float32(r.NormFloat64()))
				}
			}
			wo, wi := make([]backend.BF16, oh*ow), make([]int64, oh*ow)
			for oy := range oh {
				for ox := range ow {
					at := [4]int{2*oy*w + 2*ox, 2*oy*w + 2*ox + 1, (2*oy+1)*w + 2*ox, (2*oy+1)*w + 2*ox + 1}
					var v [4]float32
					for k, a := range at {
						v[k] = x[a].Float32()
					}
					m := max(max(v[0], v[1]), max(v[2], v[3]))
					k := 3
					if m != m {
						for k = 3; k > 0 && v[k] == v[k]; k-- {
						}
					} else {
						for k = 0; v[k] != m; k++ {
						}
					}
					var h [1]backend.BF16
					BF16FromF32(h[:], []float32{m})
					wo[oy*ow+ox], wi[oy*ow+ox] = h[0], int64(at[k])
				}
			}
			checkPool2x2(t, MaxPool2x2BF16, x, oh, ow, w, wo, wi, func(v backend.BF16) uint32 { return uint32(v) })
		}
	}
	t.Logf("AVX-512 loop: %v", useAsm && hasAVX512BW)
}

// TestMaxPool2x2S checks MaxPool2x2S, its AVX-512 loop and its Go twin,
// against a 2×2 max pool worked window by window (Go's max, the first
// window element equal to it, or the last NaN with its own bits): planes
// of ties, ±0, infinities and NaNs of several payloads, rows of every
// length around the 16-output groups, odd widths.
func TestMaxPool2x2S(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	nan := func(bits uint32) float32 { return math.Float32frombits(bits) }
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		nan(0x7FC00000), nan(0xFFC00001), nan(0x7F800001), 1, -1, nan(0x00000001), nan(0x80000001)}
	special[9], special[10] = math.Float32frombits(1), math.Float32frombits(0x80000001) // denormals
	for rep := range 16 {
		ow := []int{1, 2, 3, 7, 8, 14, 15, 16, 17, 31, 32, 33, 56}[rep%13]
		for _, odd := range []int{0, 1} {
			oh, w := 1+r.IntN(5), 2*ow+odd
			x := make([]float32, (2*oh+odd)*w)
			for i := range x {
				switch r.IntN(4) {
				case 0:
					x[i] = special[r.IntN(len(special))]
				case 1:
					x[i] = float32(1 + r.IntN(3)) // ties
				default:
					x[i] = float32(r.NormFloat64())
				}
			}
			wo, wi := make([]float32, oh*ow), make([]int64, oh*ow)
			for oy := range oh {
				for ox := range ow {
					at := [4]int{2*oy*w + 2*ox, 2*oy*w + 2*ox + 1, (2*oy+1)*w + 2*ox, (2*oy+1)*w + 2*ox + 1}
					var v [4]float32
					for k, a := range at {
						v[k] = x[a]
					}
					m := max(max(v[0], v[1]), max(v[2], v[3]))
					k := 3
					if m != m {
						for k = 3; v[k] == v[k]; k-- {
						}
						m = v[k]
					} else {
						for k = 0; v[k] != m; k++ {
						}
					}
					wo[oy*ow+ox], wi[oy*ow+ox] = m, int64(at[k])
				}
			}
			checkPool2x2(t, MaxPool2x2S, x, oh, ow, w, wo, wi, math.Float32bits)
		}
	}
	t.Logf("AVX-512 loop: %v", useAsm && hasAVX512BW)
}

// checkPool2x2 runs pool (its assembly and its Go twin) on the oh×ow
// outputs of x (rows w wide) and checks them, bits and indices, against
// wo and wi, and that nothing past them was written.
func checkPool2x2[T comparable](t *testing.T, pool func(o []T, ix []int64, x []T, oh, ow, w int), x []T, oh, ow, w int, wo []T, wi []int64, bits func(T) uint32) {
	t.Helper()
	var zero T
	for _, useGo := range []bool{false, true} {
		o, ix := make([]T, oh*ow+1), make([]int64, oh*ow+1)
		run := func() { pool(o[:oh*ow], ix[:oh*ow], x, oh, ow, w) }
		if useGo {
			withGo(run)
		} else {
			run()
		}
		if o[oh*ow] != zero || ix[oh*ow] != 0 {
			t.Fatalf("ow=%d go=%v: wrote past the outputs", ow, useGo)
		}
		for i := range wo {
			if bits(o[i]) != bits(wo[i]) || ix[i] != wi[i] {
				t.Fatalf("ow=%d w=%d go=%v: output %d = %#x at %d, want %#x at %d", ow, w, useGo, i, bits(o[i]), ix[i], bits(wo[i]), wi[i])
			}
		}
	}
}

// TestMax2 checks Max2 against Go's max bit for bit (±0 ties give +0,
// infinities) on every length through the vector and scalar stages, and
// its NaN report: a NaN anywhere in a or b is reported, and the lanes
// without one still hold max's value.
func TestMax2(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	special := []float32{0, float32(math.Copysign(0, -1)), 1, -1, float32(math.Inf(1)), float32(math.Inf(-1)), 3.5}
	for _, asm := range []bool{true, false} {
		useAsm = asm && hasAsm
		for n := 0; n <= 75; n++ {
			for _, withNaN := range []bool{false, true} {
				a, b, d := make([]float32, n), make([]float32, n), make([]float32, n+1)
				for i := range n {
					a[i], b[i] = special[r.IntN(len(special))], special[r.IntN(len(special))]
					if r.IntN(3) == 0 {
						a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
					}
				}
				nanAt := -1
				if withNaN && n > 0 {
					nanAt = r.IntN(n)
					if r.IntN(2) == 0 {
						a[nanAt] = float32(math.NaN())
					} else {
						b[nanAt] = float32(math.NaN())
					}
				}
				d[n] = 42
				got := Max2(d[:n], a, b)
				if got != (nanAt >= 0) {
					t.Fatalf("asm %v, n=%d: NaN report %v, NaN at %d", useAsm, n, got, nanAt)
				}
				for i := range n {
					if i == nanAt {
						continue
					}
					if w := max(a[i], b[i]); math.Float32bits(d[i]) != math.Float32bits(w) {
						t.Fatalf("asm %v, n=%d: max(%v, %v) = %v, want %v", useAsm, n, a[i], b[i], d[i], w)
					}
				}
				if d[n] != 42 {
					t.Fatalf("asm %v, n=%d: wrote past d", useAsm, n)
				}
			}
		}
	}
	useAsm = hasAsm
}

// TestMaxPool3S2 checks MaxPool3S2 against Go's max over each window of
// three at stride 2, bit for bit, with ±0 ties and infinities, for every
// output length through the 8-output groups and the Go tail.
func TestMaxPool3S2(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	special := []float32{0, float32(math.Copysign(0, -1)), 2, -2, float32(math.Inf(1)), float32(math.Inf(-1))}
	for _, asm := range []bool{true, false} {
		useAsm = asm && hasAsm
		for n := 0; n <= 40; n++ {
			v := make([]float32, 2*n+1)
			for i := range v {
				v[i] = special[r.IntN(len(special))]
				if r.IntN(3) == 0 {
					v[i] = float32(r.NormFloat64())
				}
			}
			o := make([]float32, n+1)
			o[n] = 42
			MaxPool3S2(o[:n], v)
			for k := range n {
				if w := max(v[2*k], v[2*k+1], v[2*k+2]); math.Float32bits(o[k]) != math.Float32bits(w) {
					t.Fatalf("asm %v, n=%d: o[%d] = %v, want %v (window %v)", useAsm, n, k, o[k], w, v[2*k:2*k+3])
				}
			}
			if o[n] != 42 {
				t.Fatalf("asm %v, n=%d: wrote past o", useAsm, n)
			}
		}
	}
	useAsm = hasAsm
}
