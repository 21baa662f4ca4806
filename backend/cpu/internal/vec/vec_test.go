package vec

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// sizes covers the register, unrolled and scalar stages and their edges.
var sizes = []int{0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 1000, 2047, 2048, 2049, 4099, 70001}

func randSlice[T Float](r *rand.Rand, n int) []T {
	s := make([]T, n+1) // +1: the views below start one element in, unaligned
	for i := range s {
		s[i] = T(r.NormFloat64() * 10)
	}
	return s[1:]
}

// withGo runs f with the pure-Go loops.
func withGo(f func()) {
	defer func(u bool) { useAsm = u }(useAsm)
	useAsm = false
	f()
}

func same[T Float](x, y T) bool {
	return x == y && math.Signbit(float64(x)) == math.Signbit(float64(y)) || x != x && y != y
}

func TestAccelerated(t *testing.T) {
	t.Logf("assembly loops in use: %v", Accelerated())
}

// TestElementwise checks every loop against the plain Go expression,
// bit for bit (IEEE arithmetic is exactly rounded either way).
func TestElementwise(t *testing.T) {
	testElementwise[float32](t)
	testElementwise[float64](t)
}

func testElementwise[T Float](t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ops := []struct {
		op Op
		f  func(x, y T) T
	}{
		{Add, func(x, y T) T { return x + y }},
		{Sub, func(x, y T) T { return x - y }},
		{Mul, func(x, y T) T { return x * y }},
		{Div, func(x, y T) T { return x / y }},
	}
	for _, n := range sizes {
		a, b := randSlice[T](r, n), randSlice[T](r, n)
		if n > 3 {
			a[1], a[2], b[3] = T(math.NaN()), T(math.Inf(-1)), 0
		}
		s := T(r.NormFloat64())
		for _, o := range ops {
			for _, useGo := range []bool{false, true} {
				d1, d2, d3 := make([]T, n), make([]T, n), make([]T, n)
				run := func() {
					Binary(o.op, d1, a, b)
					BinaryScalar(o.op, d2, a, s)
					ScalarBinary(o.op, d3, s, b)
				}
				if useGo {
					withGo(run)
				} else {
					run()
				}
				for i := 0; i < n; i++ {
					if w := o.f(a[i], b[i]); !same(d1[i], w) {
						t.Fatalf("%T n=%d op %d go=%v: vv[%d] = %v, want %v", a[0], n, o.op, useGo, i, d1[i], w)
					}
					if w := o.f(a[i], s); !same(d2[i], w) {
						t.Fatalf("%T n=%d op %d go=%v: vs[%d] = %v, want %v", a[0], n, o.op, useGo, i, d2[i], w)
					}
					if w := o.f(s, b[i]); !same(d3[i], w) {
						t.Fatalf("%T n=%d op %d go=%v: sv[%d] = %v, want %v", a[0], n, o.op, useGo, i, d3[i], w)
					}
				}
			}
		}
		// In place (d is a), as ember's in-place ops do.
		c := append([]T(nil), a...)
		Binary(Add, c, c, b)
		for i := range c {
			if !same(c[i], a[i]+b[i]) {
				t.Fatalf("in place add [%d] = %v, want %v", i, c[i], a[i]+b[i])
			}
		}
	}
}

func TestReLUFill(t *testing.T) {
	testReLUFill[float32](t)
	testReLUFill[float64](t)
}

func testReLUFill[T Float](t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	negZero := T(math.Copysign(0, -1))
	for _, n := range sizes {
		a := randSlice[T](r, n)
		for i := 0; i < n; i += 5 {
			a[i] = []T{T(math.NaN()), negZero, 0, T(math.Inf(-1)), T(math.Inf(1))}[i/5%5]
		}
		for _, useGo := range []bool{false, true} {
			d, f := make([]T, n), make([]T, n+2)
			run := func() {
				ReLU(d, a)
				Fill(f[1:n+1], -2.5)
			}
			if useGo {
				withGo(run)
			} else {
				run()
			}
			for i, x := range a {
				want := T(0)
				if x > 0 || x != x {
					want = x
				}
				if !same(d[i], want) {
					t.Fatalf("%T n=%d go=%v: relu(%v) = %v, want %v", x, n, useGo, x, d[i], want)
				}
			}
			if f[0] != 0 || f[n+1] != 0 {
				t.Fatalf("fill wrote outside its slice")
			}
			for i, v := range f[1 : n+1] {
				if v != -2.5 {
					t.Fatalf("%T n=%d go=%v: fill[%d] = %v", v, n, useGo, i, v)
				}
			}
		}
	}
}

// TestSum checks both the assembly and the Go sums against a float64
// reference: float32 data of 4M elements must stay within a few ulps of
// float64 accumulation (plain float32 accumulation is off by ~1e-4).
func TestSum(t *testing.T) {
	testSum[float32](t, 1e-6)
	testSum[float64](t, 1e-13)
}

func testSum[T Float](t *testing.T, tol float64) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range append(sizes, 1<<22+3) {
		x := make([]T, n)
		var want, abs float64
		for i := range x {
			x[i] = T(r.Float64() + 0.5) // all positive: a long sum drifts the most
			want += float64(x[i])
			abs += math.Abs(float64(x[i]))
		}
		for _, useGo := range []bool{false, true} {
			var got float64
			if useGo {
				withGo(func() { got = Sum(x) })
			} else {
				got = Sum(x)
			}
			if math.Abs(got-want) > tol*abs+1e-12 {
				t.Errorf("%T n=%d go=%v: sum %v, want %v (rel err %.2g)", x, n, useGo, got, want, math.Abs(got-want)/abs)
			}
		}
	}
}

func TestMaxMin(t *testing.T) {
	testMaxMin[float32](t)
	testMaxMin[float64](t)
}

func testMaxMin[T Float](t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range sizes[1:] {
		for trial := 0; trial < 4; trial++ {
			x := randSlice[T](r, n)
			switch trial {
			case 1:
				x[r.IntN(n)] = T(math.NaN())
			case 2:
				x[n-1] = T(math.Inf(1))
				x[0] = T(math.Inf(-1))
			case 3:
				x[r.IntN(n)] = 1e30
				x[r.IntN(n)] = -1e30
			}
			wmax, wmin := x[0], x[0]
			hasNaN := false
			for _, v := range x {
				hasNaN = hasNaN || v != v
				wmax, wmin = max(wmax, v), min(wmin, v)
			}
			for _, useGo := range []bool{false, true} {
				var gmax, gmin T
				run := func() { gmax, gmin = Max(x), Min(x) }
				if useGo {
					withGo(run)
				} else {
					run()
				}
				name := fmt.Sprintf("%T n=%d trial %d go=%v", x[0], n, trial, useGo)
				if hasNaN {
					if gmax == gmax || gmin == gmin {
						t.Fatalf("%s: max %v min %v, want NaN", name, gmax, gmin)
					}
				} else if gmax != wmax || gmin != wmin {
					t.Fatalf("%s: max %v min %v, want %v %v", name, gmax, gmin, wmax, wmin)
				}
			}
		}
	}
}

func BenchmarkSum32(b *testing.B) {
	x := make([]float32, 1<<22)
	b.SetBytes(4 << 22)
	for b.Loop() {
		Sum(x)
	}
}

func BenchmarkAddScalar32(b *testing.B) {
	x := make([]float32, 1<<22)
	d := make([]float32, 1<<22)
	b.SetBytes(8 << 22)
	for b.Loop() {
		BinaryScalar(Add, d, x, 1)
	}
}

func TestWhere(t *testing.T) {
	testWhere(t, func(r *rand.Rand) float32 { return float32(r.NormFloat64()) })
	testWhere(t, func(r *rand.Rand) float64 { return r.NormFloat64() })
	testWhere(t, func(r *rand.Rand) int32 { return int32(r.Uint32()) })
	testWhere(t, func(r *rand.Rand) int64 { return int64(r.Uint64()) })
	testWhere(t, func(r *rand.Rand) bool { return r.IntN(2) == 0 })
	testWhere(t, func(r *rand.Rand) uint16 { return uint16(r.Uint32()) })
}

func testWhere[T comparable](t *testing.T, gen func(*rand.Rand) T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range sizes {
		a, b := make([]T, n+1)[1:], make([]T, n+1)[1:] // unaligned
		cb := make([]bool, n+1)[1:]
		for i := range cb {
			a[i], b[i], cb[i] = gen(r), gen(r), r.IntN(2) == 0
		}
		s := gen(r)
		for _, useGo := range []bool{false, true} {
			d1, d2, d3 := make([]T, n), make([]T, n), make([]T, n)
			run := func() {
				Where(d1, cb, a, b)
				WhereScalarB(d2, cb, a, s)
				WhereScalarA(d3, cb, s, b)
			}
			if useGo {
				withGo(run)
			} else {
				run()
			}
			for i, c := range cb {
				w1, w2, w3 := b[i], s, b[i]
				if c {
					w1, w2, w3 = a[i], a[i], s
				}
				if d1[i] != w1 || d2[i] != w2 || d3[i] != w3 {
					t.Fatalf("%T n=%d go=%v [%d] c=%v: %v %v %v, want %v %v %v", s, n, useGo, i, c, d1[i], d2[i], d3[i], w1, w2, w3)
				}
			}
		}
	}
}

func TestTranspose(t *testing.T) {
	testTranspose[float32](t)
	testTranspose[float64](t)
}

func testTranspose[T Float](t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, rows := range []int{1, 3, 4, 7, 8, 9, 16, 17, 64, 70} {
		for _, cols := range []int{1, 5, 8, 12, 63, 64, 65, 130} {
			lds, ldd := rows+r.IntN(3), cols+r.IntN(3)
			s := randSlice[T](r, (cols-1)*lds+rows)
			for _, useGo := range []bool{false, true} {
				d := make([]T, (rows-1)*ldd+cols+5)
				for i := range d {
					d[i] = -1
				}
				run := func() { Transpose(d, ldd, s, lds, rows, cols) }
				if useGo {
					withGo(run)
				} else {
					run()
				}
				for i := range d {
					rr, c := i/ldd, i%ldd
					want := T(-1)
					if rr < rows && c < cols {
						want = s[c*lds+rr]
					}
					if d[i] != want {
						t.Fatalf("%T %d×%d (ldd %d lds %d) go=%v: d[%d] = %v, want %v", want, rows, cols, ldd, lds, useGo, i, d[i], want)
					}
				}
			}
		}
	}
}

// TestAffine checks d = a·s + b against float64 arithmetic: within an ulp
// of the result (the assembly rounds once, the Go loop may round twice).
func TestAffine(t *testing.T) {
	testAffine[float32](t, 0x1p-23)
	testAffine[float64](t, 0x1p-52)
}

func testAffine[T Float](t *testing.T, ulp float64) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range sizes {
		a := randSlice[T](r, n)
		s, b := T(-1.75+r.Float64()), T(r.NormFloat64())
		for _, useGo := range []bool{false, true} {
			d := make([]T, n+1)
			run := func() { Affine(d[:n], a, s, b) }
			if useGo {
				withGo(run)
			} else {
				run()
			}
			for i, x := range a {
				want := math.FMA(float64(x), float64(s), float64(b))
				tol := 2 * ulp * (math.Abs(float64(x)*float64(s)) + math.Abs(float64(b)))
				if math.Abs(float64(d[i])-want) > tol {
					t.Fatalf("%T n=%d go=%v: %v·%v + %v = %v, want %v", x, n, useGo, x, s, b, d[i], want)
				}
			}
			if d[n] != 0 {
				t.Fatalf("affine wrote past n")
			}
			// in place: the same values
			in := append([]T(nil), a...)
			run = func() { Affine(in, in, s, b) }
			if useGo {
				withGo(run)
			} else {
				run()
			}
			for i := range in {
				if in[i] != d[i] {
					t.Fatalf("%T n=%d go=%v: in place [%d] = %v, want %v", in[i], n, useGo, i, in[i], d[i])
				}
			}
		}
	}
	// one rounding: (1 + 2⁻²³)·(1 − 2⁻²³) − 1 = −2⁻⁴⁶ exactly, which two
	// roundings in float32 lose (the product rounds to 1)
	if useAsm && hasFMA {
		var d [1]float32
		Affine(d[:], []float32{1 + 0x1p-23}, 1-0x1p-23, -1)
		if d[0] != -0x1p-46 {
			t.Fatalf("affineS rounds twice: got %g, want -2⁻⁴⁶", d[0])
		}
	}
}

// TestSumWiden: SumWiden over chunks gives Sum's bits on the whole slice,
// at every length around its blocks and lanes, with 1- and 2-block buffers.
func TestSumWiden(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	x := make([]float32, 70001)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * 1e3)
	}
	for _, bl := range []int{SumBlock, 2 * SumBlock} {
		buf := make([]float32, bl)
		for _, n := range []int{0, 1, 7, 8, 31, 32, 33, 1023, 1024, 2047, 2048, 2049, 4096, 4127, 5000, 70001} {
			got := SumWiden(n, buf, func(d []float32, off int) { copy(d, x[off:off+len(d)]) })
			if want := Sum(x[:n]); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("buffer %d, n %d: SumWiden = %v, Sum = %v", bl, n, got, want)
			}
		}
	}
}

// TestReLUGrad checks ReLU's gradient from its output, asm and Go, against
// the definition: 0 where y <= 0 (either zero, negatives), g elsewhere, a
// NaN y passing g, NaNs and signed zeros of g kept bit for bit.
func TestReLUGrad(t *testing.T) {
	testReLUGrad[float32](t)
	testReLUGrad[float64](t)
}

func testReLUGrad[T Float](t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	negZero := T(math.Copysign(0, -1))
	specials := []T{T(math.NaN()), negZero, 0, T(math.Inf(-1)), T(math.Inf(1)), -1e-40}
	for _, n := range sizes {
		y, g := randSlice[T](r, n), randSlice[T](r, n)
		for i := 0; i < n; i += 3 {
			y[i] = specials[i/3%len(specials)]
		}
		for i := 1; i < n; i += 7 {
			g[i] = specials[i/7%len(specials)]
		}
		for _, useGo := range []bool{false, true} {
			d := make([]T, n+1)
			run := func() { ReLUGrad(d[:n], g, y) }
			if useGo {
				withGo(run)
			} else {
				run()
			}
			for i, v := range y {
				want := g[i]
				if v <= 0 {
					want = 0
				}
				if !same(d[i], want) {
					t.Fatalf("%T n=%d go=%v: y=%v g=%v: got %v, want %v", v, n, useGo, v, g[i], d[i], want)
				}
			}
			if d[n] != 0 {
				t.Fatalf("%T n=%d go=%v: wrote past the end", y, n, useGo)
			}
		}
	}
}

// TestFMA checks FMA against a·s + b worked exactly (big.Float) and rounded
// once, for every length through the four-register, one-register and
// scalar stages, float32 and float64.
func TestFMA(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	exact := func(a, s, b float64) *big.Float {
		p := new(big.Float).SetPrec(300).Mul(big.NewFloat(a).SetPrec(300), big.NewFloat(s).SetPrec(300))
		return p.Add(p, big.NewFloat(b).SetPrec(300))
	}
	for n := 0; n <= 70; n++ {
		a32, s32, b32, d32 := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n+1)
		a64, s64, b64, d64 := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n+1)
		for i := range n {
			a32[i], s32[i], b32[i] = float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64()*1e-3)
			a64[i], s64[i], b64[i] = r.NormFloat64(), r.NormFloat64(), r.NormFloat64()*1e-3
		}
		d32[n], d64[n] = 7, 7
		FMA(d32[:n], a32, s32, b32)
		FMA(d64[:n], a64, s64, b64)
		for i := range n {
			w32, _ := exact(float64(a32[i]), float64(s32[i]), float64(b32[i])).Float32()
			w64, _ := exact(a64[i], s64[i], b64[i]).Float64()
			// without FMA (no assembly) the product is rounded first
			if tol := float32(0); !(useAsm && hasFMA) {
				tol = 1e-6 * (float32(math.Abs(float64(w32))) + 1e-3)
				if d := d32[i] - w32; d > tol || d < -tol {
					t.Fatalf("n=%d: float32 FMA[%d] = %v, want %v", n, i, d32[i], w32)
				}
				continue
			}
			if d32[i] != w32 || d64[i] != w64 {
				t.Fatalf("n=%d: FMA[%d] = %v, %v, want %v, %v (rounded once)", n, i, d32[i], d64[i], w32, w64)
			}
		}
		if d32[n] != 7 || d64[n] != 7 {
			t.Fatalf("n=%d: FMA wrote past its length", n)
		}
	}
}
