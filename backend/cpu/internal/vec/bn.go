package vec

import (
	"math"

	"github.com/emberml/ember/backend"
)

// Batch norm's loops on bfloat16 data, each element widened in its
// register: the statistics and gradient sums in float32 lanes over blocks
// of 2048 elements whose lanes are added in float64 (the body, a multiple
// of the lanes, on the AVX2 loops; the remainder as one more block in Go),
// the gradient's affine map in float32 steps rounded once to bfloat16. The
// Go loops are the assembly's twins: the same lanes, blocks and roundings,
// so the same bits.

// bnBlock is how many elements each block's float32 lanes take.
const bnBlock = 2048

func bf(h backend.BF16) float32 { return math.Float32frombits(uint32(h) << 16) }

// Lanes holds float64 partial sums that the *Lanes functions add to;
// Sum adds them up (pairwise).
type Lanes [32]float64

// Sum adds the partial sums l[lo:hi] pairwise (it overwrites them).
func (l *Lanes) Sum(lo, hi int) float64 { return addLanes(l[lo:hi]) }

// SumBF16Lanes adds the bfloat16 x into l (its 32 lanes; SumBF16's
// blocks, the remainder one more block).
func SumBF16Lanes(l *Lanes, x []backend.BF16) {
	body := len(x) &^ 31
	if useAsm && body > 0 {
		sumBF16(p16(x), body, (*[32]float64)(l))
	} else {
		sumBF16Go(x[:body], l)
	}
	sumBF16Go(x[body:], l)
}

// sumBF16Go is sumBF16's twin (any n).
func sumBF16Go(x []backend.BF16, acc *Lanes) {
	if len(x) < 32 { // one partial block: each lane gets at most one value
		for i, h := range x {
			acc[i] += float64(bf(h))
		}
		return
	}
	for len(x) > 0 {
		k := min(len(x), bnBlock)
		var l [32]float32
		for i, h := range x[:k] {
			l[i%32] += bf(h)
		}
		for j, v := range l {
			acc[j] += float64(v)
		}
		x = x[k:]
	}
}

// SqDevBF16Lanes adds (x[i]−m)² into l (32 lanes), each square rounded to
// float32 (no FMA).
func SqDevBF16Lanes(l *Lanes, x []backend.BF16, m float32) {
	body := len(x) &^ 31
	if useAsm && body > 0 {
		sqDevBF16(p16(x), body, m, (*[32]float64)(l))
	} else {
		sqDevBF16Go(x[:body], m, l)
	}
	sqDevBF16Go(x[body:], m, l)
}

// sqDevBF16Go is sqDevBF16's twin (any n).
func sqDevBF16Go(x []backend.BF16, m float32, acc *Lanes) {
	if len(x) < 32 {
		for i, h := range x {
			d := bf(h) - m
			acc[i] += float64(float32(d * d))
		}
		return
	}
	for len(x) > 0 {
		k := min(len(x), bnBlock)
		var l [32]float32
		for i, h := range x[:k] {
			d := bf(h) - m
			l[i%32] += float32(d * d)
		}
		for j, v := range l {
			acc[j] += float64(v)
		}
		x = x[k:]
	}
}

// GradSumsBF16Lanes adds g[i] into l[0:16] and g[i]·(x[i]−m) into
// l[16:32] (float32 steps, no FMA).
func GradSumsBF16Lanes(l *Lanes, g, x []backend.BF16, m float32) {
	x = x[:len(g)]
	body := len(g) &^ 15
	if useAsm && body > 0 {
		gradSumsBF16(p16(g), p16(x), body, m, (*[32]float64)(l))
	} else {
		gradSumsBF16Go(g[:body], x[:body], m, l)
	}
	gradSumsBF16Go(g[body:], x[body:], m, l)
}

// gradSumsBF16Go is gradSumsBF16's twin (any n).
func gradSumsBF16Go(g, x []backend.BF16, m float32, acc *Lanes) {
	if len(g) < 16 {
		for i, h := range g {
			gv := bf(h)
			acc[i] += float64(gv)
			acc[16+i] += float64(float32(gv * (bf(x[i]) - m)))
		}
		return
	}
	for len(g) > 0 {
		k := min(len(g), bnBlock)
		var l0, l1 [16]float32
		for i, h := range g[:k] {
			gv := bf(h)
			l0[i%16] += gv
			l1[i%16] += float32(gv * (bf(x[i]) - m))
		}
		for j := range l0 {
			acc[j] += float64(l0[j])
			acc[16+j] += float64(l1[j])
		}
		g, x = g[k:], x[k:]
	}
}

// Affine2BF16 sets d[i] = bfloat16(((g[i]·a) + (x[i]·b)) + c), each step
// rounded to float32 (no FMA), then once to bfloat16 (NaN 0xFFFF).
func Affine2BF16(d, g, x []backend.BF16, a, b, c float32) {
	g, x = g[:len(d)], x[:len(d)]
	if n := len(d) &^ 15; useAsm && n > 0 {
		affine2BF16(p16(d), p16(g), p16(x), n, a, b, c)
		d, g, x = d[n:], g[n:], x[n:]
	}
	for i, h := range g {
		v := float32(float32(bf(h)*a)+float32(bf(x[i])*b)) + c
		d[i] = toBF16(v)
	}
}

// toBF16 is backend.ToBF16 as BF16FromF32's loop has it.
func toBF16(f float32) backend.BF16 {
	u := math.Float32bits(f)
	h := (u + 0x7FFF + (u>>16)&1) >> 16
	if u&0x7FFFFFFF > 0x7F800000 {
		h = 0xFFFF
	}
	return backend.BF16(h)
}

// AffineBF16 sets d[i] = bfloat16(x[i]·a + b), x[i]·a + b rounded once to
// float32 (a fused multiply-add, as Affine's assembly and PyTorch's
// vectorised batch norm), then to bfloat16 (NaN 0xFFFF).
func AffineBF16(d, x []backend.BF16, a, b float32) {
	x = x[:len(d)]
	if n := len(d) &^ 15; useAsm && hasFMA && n > 0 {
		affineBF16(p16(d), p16(x), n, a, b)
		d, x = d[n:], x[n:]
	}
	for i, h := range x {
		d[i] = toBF16(fma32(bf(h), a, b))
	}
}

// fma32 is x·a + b rounded once to float32. The product of two float32 is
// exact in float64, and math.FMA rounds its sum once to float64; rounding
// that to float32 is the correctly rounded result unless it lands exactly
// halfway between two float32 without being the exact sum, which the
// error of the float64 sum (TwoSum) tells, and which way to go.
func fma32(x, a, b float32) float32 {
	p := float64(x) * float64(a)
	r := p + float64(b)
	f := float32(r)
	if math.IsInf(r, 0) || math.IsNaN(r) || float64(f) == r {
		return f
	}
	bb := r - p
	e := (p - (r - bb)) + (float64(b) - bb) // p + b = r + e exactly
	if e == 0 {
		return f
	}
	// the float32 on the other side of r from f (an overflow to infinity
	// stands for 2¹²⁸ there)
	ff := float64(f)
	if math.IsInf(ff, 0) {
		ff = math.Copysign(0x1p128, ff)
	}
	o := math.Nextafter32(f, float32(math.Copysign(math.Inf(1), r-ff)))
	if ff+float64(o) != 2*r { // not halfway: f is right
		return f
	}
	if (e > 0) == (float64(o) > ff) {
		return o
	}
	return f
}

// The float32 batch norm loops: the bfloat16 ones' lanes, blocks and
// roundings on float32 data (SumLanes is Sum's).

// SumLanes adds x into l (Sum's 32 lanes over blocks of 2048; the
// remainder one more block).
func SumLanes(l *Lanes, x []float32) {
	body := len(x) &^ 31
	if useAsm && body > 0 {
		sumS(p32(x), body, (*[32]float64)(l))
	} else {
		sumLanesGo(x[:body], l)
	}
	sumLanesGo(x[body:], l)
}

// sumLanesGo is sumS's twin (any n).
func sumLanesGo(x []float32, acc *Lanes) {
	if len(x) < 32 { // one partial block: each lane gets at most one value
		for i, v := range x {
			acc[i] += float64(v)
		}
		return
	}
	for len(x) > 0 {
		k := min(len(x), bnBlock)
		var l [32]float32
		for i, v := range x[:k] {
			l[i%32] += v
		}
		for j, v := range l {
			acc[j] += float64(v)
		}
		x = x[k:]
	}
}

// SqDevLanes adds (x[i]−m)² into l (32 lanes), each square rounded to
// float32 (no FMA).
func SqDevLanes(l *Lanes, x []float32, m float32) {
	body := len(x) &^ 31
	if useAsm && body > 0 {
		sqDevS(p32(x), body, m, (*[32]float64)(l))
	} else {
		sqDevGo(x[:body], m, l)
	}
	sqDevGo(x[body:], m, l)
}

// sqDevGo is sqDevS's twin (any n).
func sqDevGo(x []float32, m float32, acc *Lanes) {
	if len(x) < 32 {
		for i, v := range x {
			d := v - m
			acc[i] += float64(float32(d * d))
		}
		return
	}
	for len(x) > 0 {
		k := min(len(x), bnBlock)
		var l [32]float32
		for i, v := range x[:k] {
			d := v - m
			l[i%32] += float32(d * d)
		}
		for j, v := range l {
			acc[j] += float64(v)
		}
		x = x[k:]
	}
}

// GradSumsLanes adds g[i] into l[0:16] and g[i]·(x[i]−m) into l[16:32]
// (float32 steps, no FMA).
func GradSumsLanes(l *Lanes, g, x []float32, m float32) {
	x = x[:len(g)]
	body := len(g) &^ 15
	if useAsm && body > 0 {
		gradSumsS(p32(g), p32(x), body, m, (*[32]float64)(l))
	} else {
		gradSumsGo(g[:body], x[:body], m, l)
	}
	gradSumsGo(g[body:], x[body:], m, l)
}

// gradSumsGo is gradSumsS's twin (any n).
func gradSumsGo(g, x []float32, m float32, acc *Lanes) {
	if len(g) < 16 {
		for i, gv := range g {
			acc[i] += float64(gv)
			acc[16+i] += float64(float32(gv * (x[i] - m)))
		}
		return
	}
	for len(g) > 0 {
		k := min(len(g), bnBlock)
		var l0, l1 [16]float32
		for i, gv := range g[:k] {
			l0[i%16] += gv
			l1[i%16] += float32(gv * (x[i] - m))
		}
		for j := range l0 {
			acc[j] += float64(l0[j])
			acc[16+j] += float64(l1[j])
		}
		g, x = g[k:], x[k:]
	}
}

// Affine2 sets d[i] = ((g[i]·a) + (x[i]·b)) + c, each step rounded to
// float32 (no FMA).
func Affine2(d, g, x []float32, a, b, c float32) {
	g, x = g[:len(d)], x[:len(d)]
	if n := len(d) &^ 15; useAsm && n > 0 {
		affine2S(p32(d), p32(g), p32(x), n, a, b, c)
		d, g, x = d[n:], g[n:], x[n:]
	}
	for i, gv := range g {
		d[i] = float32(float32(gv*a)+float32(x[i]*b)) + c
	}
}
