// Package vec holds the CPU backend's vectorised loops over contiguous
// slices: for float32 and float64 elementwise arithmetic (slice op slice,
// slice op scalar, scalar op slice), ReLU, Fill, Sum/Max/Min and Transpose;
// Where for any element type. On amd64 with AVX2 they run the assembly
// loops generated in asm/; elsewhere (other CPUs, other architectures, the
// purego tag) the pure-Go loops here, which give the same results (Sum
// differs only in rounding order).
package vec

import (
	"math"
	"unsafe"
)

// Float is the element types served.
type Float interface{ float32 | float64 }

// Op is an arithmetic operation.
type Op uint8

const (
	Add Op = iota
	Sub
	Mul
	Div
)

// useAsm selects the assembly loops (tests turn it off to check the Go ones).
var useAsm = hasAsm

// Accelerated reports whether the assembly loops are in use.
func Accelerated() bool { return useAsm }

func is32[T Float]() bool { var z T; return unsafe.Sizeof(z) == 4 }

// p32 and p64 are the first element's address as the assembly wants it
// (for 4- and 8-byte elements).
func p32[T any](s []T) *float32 { return (*float32)(unsafe.Pointer(unsafe.SliceData(s))) }
func p64[T any](s []T) *float64 { return (*float64)(unsafe.Pointer(unsafe.SliceData(s))) }

// Binary sets d[i] = a[i] op b[i]; a and b are at least as long as d.
func Binary[T Float](op Op, d, a, b []T) {
	n := len(d)
	if n == 0 {
		return
	}
	a, b = a[:n], b[:n]
	if useAsm {
		if is32[T]() {
			vvS[op](p32(d), p32(a), p32(b), n)
		} else {
			vvD[op](p64(d), p64(a), p64(b), n)
		}
		return
	}
	switch op {
	case Add:
		for i, x := range a {
			d[i] = x + b[i]
		}
	case Sub:
		for i, x := range a {
			d[i] = x - b[i]
		}
	case Mul:
		for i, x := range a {
			d[i] = x * b[i]
		}
	case Div:
		for i, x := range a {
			d[i] = x / b[i]
		}
	}
}

// BinaryScalar sets d[i] = a[i] op s.
func BinaryScalar[T Float](op Op, d, a []T, s T) {
	n := len(d)
	if n == 0 {
		return
	}
	a = a[:n]
	if useAsm {
		if is32[T]() {
			vsS[op](p32(d), p32(a), float32(s), n)
		} else {
			vsD[op](p64(d), p64(a), float64(s), n)
		}
		return
	}
	switch op {
	case Add:
		for i, x := range a {
			d[i] = x + s
		}
	case Sub:
		for i, x := range a {
			d[i] = x - s
		}
	case Mul:
		for i, x := range a {
			d[i] = x * s
		}
	case Div:
		for i, x := range a {
			d[i] = x / s
		}
	}
}

// ScalarBinary sets d[i] = s op b[i].
func ScalarBinary[T Float](op Op, d []T, s T, b []T) {
	n := len(d)
	if n == 0 {
		return
	}
	b = b[:n]
	if useAsm {
		if is32[T]() {
			svS(op, p32(d), float32(s), p32(b), n)
		} else {
			svD(op, p64(d), float64(s), p64(b), n)
		}
		return
	}
	switch op {
	case Add:
		for i, y := range b {
			d[i] = s + y
		}
	case Sub:
		for i, y := range b {
			d[i] = s - y
		}
	case Mul:
		for i, y := range b {
			d[i] = s * y
		}
	case Div:
		for i, y := range b {
			d[i] = s / y
		}
	}
}

// Affine sets d[i] = a[i]·s + b (d may be a): with the assembly, rounded
// once (FMA), as PyTorch's vectorised batch norm does.
func Affine[T Float](d, a []T, s, b T) {
	n := len(d)
	if n == 0 {
		return
	}
	a = a[:n]
	if useAsm && hasFMA {
		if is32[T]() {
			affineS(p32(d), p32(a), float32(s), float32(b), n)
		} else {
			affineD(p64(d), p64(a), float64(s), float64(b), n)
		}
		return
	}
	for i, x := range a {
		d[i] = x*s + b
	}
}

// FMA sets d[i] = a[i]·s[i] + b[i], rounded once where the CPU has FMA
// (as Affine: its per-element twin).
func FMA[T Float](d, a, s, b []T) {
	n := len(d)
	if n == 0 {
		return
	}
	a, s, b = a[:n], s[:n], b[:n]
	if useAsm && hasFMA {
		if is32[T]() {
			fmavS(p32(d), p32(a), p32(s), p32(b), n)
		} else {
			fmavD(p64(d), p64(a), p64(s), p64(b), n)
		}
		return
	}
	for i, x := range a {
		d[i] = x*s[i] + b[i]
	}
}

// ReLU sets d[i] = max(a[i], 0): NaN stays NaN, -0 becomes +0.
func ReLU[T Float](d, a []T) {
	n := len(d)
	if n == 0 {
		return
	}
	a = a[:n]
	if useAsm {
		if is32[T]() {
			reluS(p32(d), p32(a), n)
		} else {
			reluD(p64(d), p64(a), n)
		}
		return
	}
	for i, x := range a {
		if x > 0 || x != x {
			d[i] = x
		} else {
			d[i] = 0
		}
	}
}

// ReLUGrad sets d[i] = 0 where y[i] <= 0 and g[i] elsewhere (a NaN y
// passes g): ReLU's gradient from its output y, as PyTorch's
// threshold_backward, in one pass.
func ReLUGrad[T Float](d, g, y []T) {
	n := len(d)
	if n == 0 {
		return
	}
	g, y = g[:n], y[:n]
	if useAsm {
		if is32[T]() {
			reluGradS(p32(d), p32(g), p32(y), n)
		} else {
			reluGradD(p64(d), p64(g), p64(y), n)
		}
		return
	}
	for i, v := range y {
		if v <= 0 {
			d[i] = 0
		} else {
			d[i] = g[i]
		}
	}
}

// Where sets d[i] = a[i] if c[i] else b[i]. Elements of 4 and 8 bytes
// (floats or integers: the blend moves bits) take the assembly loop, those
// of 2 bytes (bfloat16, float16) a branch-free Go loop.
func Where[T any](d []T, c []bool, a, b []T) {
	n := len(d)
	if n == 0 {
		return
	}
	c, a, b = c[:n], a[:n], b[:n]
	switch size(d) {
	case 4:
		if useAsm {
			wherevvS(p32(d), unsafe.SliceData(c), p32(a), p32(b), n)
			return
		}
	case 8:
		if useAsm {
			wherevvD(p64(d), unsafe.SliceData(c), p64(a), p64(b), n)
			return
		}
	case 2:
		where16(u16(d), c, u16(a), u16(b))
		return
	}
	for i, t := range c {
		if t {
			d[i] = a[i]
		} else {
			d[i] = b[i]
		}
	}
}

// WhereScalarB sets d[i] = a[i] if c[i] else s.
func WhereScalarB[T any](d []T, c []bool, a []T, s T) {
	n := len(d)
	if n == 0 {
		return
	}
	c, a = c[:n], a[:n]
	switch size(d) {
	case 4:
		if useAsm {
			wherevsS(p32(d), unsafe.SliceData(c), p32(a), *(*float32)(unsafe.Pointer(&s)), n)
			return
		}
	case 8:
		if useAsm {
			wherevsD(p64(d), unsafe.SliceData(c), p64(a), *(*float64)(unsafe.Pointer(&s)), n)
			return
		}
	case 2:
		where16s(u16(d), c, u16(a), *(*uint16)(unsafe.Pointer(&s)), true)
		return
	}
	for i, t := range c {
		if t {
			d[i] = a[i]
		} else {
			d[i] = s
		}
	}
}

// WhereScalarA sets d[i] = s if c[i] else b[i].
func WhereScalarA[T any](d []T, c []bool, s T, b []T) {
	n := len(d)
	if n == 0 {
		return
	}
	c, b = c[:n], b[:n]
	switch size(d) {
	case 4:
		if useAsm {
			wheresvS(p32(d), unsafe.SliceData(c), *(*float32)(unsafe.Pointer(&s)), p32(b), n)
			return
		}
	case 8:
		if useAsm {
			wheresvD(p64(d), unsafe.SliceData(c), *(*float64)(unsafe.Pointer(&s)), p64(b), n)
			return
		}
	case 2:
		where16s(u16(d), c, u16(b), *(*uint16)(unsafe.Pointer(&s)), false)
		return
	}
	for i, t := range c {
		if t {
			d[i] = s
		} else {
			d[i] = b[i]
		}
	}
}

// size is the byte size of s's elements.
func size[T any](s []T) uintptr {
	var z T
	return unsafe.Sizeof(z)
}

// Transpose sets d[r*ldd + c] = s[c*lds + r] for r < rows, c < cols: the
// rows of d are the columns of s. The assembly moves 8×8 (float32) or 4×4
// (float64) blocks through registers, 64 columns at a time so that the
// source lines stay in cache between blocks.
func Transpose[T Float](d []T, ldd int, s []T, lds int, rows, cols int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	_ = d[(rows-1)*ldd+cols-1]
	_ = s[(cols-1)*lds+rows-1]
	const chunk = 64
	b := 8
	if !is32[T]() {
		b = 4
	}
	for c0 := 0; c0 < cols; c0 += chunk {
		c1 := min(c0+chunk, cols)
		r0 := 0
		if useAsm {
			if nb := (c1 - c0) / b; nb > 0 {
				for ; r0+b <= rows; r0 += b {
					if is32[T]() {
						transS(p32(d[r0*ldd+c0:]), ldd, p32(s[c0*lds+r0:]), lds, nb)
					} else {
						transD(p64(d[r0*ldd+c0:]), ldd, p64(s[c0*lds+r0:]), lds, nb)
					}
				}
				// the columns past the last whole block, for the rows done
				transposeGo(d, ldd, s, lds, 0, r0, c0+nb*b, c1)
			}
		}
		transposeGo(d, ldd, s, lds, r0, rows, c0, c1)
	}
}

// transposeGo is Transpose of rows [r0, r1) and columns [c0, c1) in 16×16
// tiles.
func transposeGo[T Float](d []T, ldd int, s []T, lds int, r0, r1, c0, c1 int) {
	const tile = 16
	for rt := r0; rt < r1; rt += tile {
		re := min(rt+tile, r1)
		for ct := c0; ct < c1; ct += tile {
			ce := min(ct+tile, c1)
			for r := rt; r < re; r++ {
				dd := d[r*ldd+ct : r*ldd+ce]
				for i := range dd {
					dd[i] = s[(ct+i)*lds+r]
				}
			}
		}
	}
}

// Fill sets every element of d to v.
func Fill[T Float](d []T, v T) {
	n := len(d)
	switch {
	case n == 0:
	case v == 0 && !math.Signbit(float64(v)):
		clear(d)
	case useAsm && is32[T]():
		fillS(p32(d), float32(v), n)
	case useAsm:
		fillD(p64(d), float64(v), n)
	default:
		for i := range d {
			d[i] = v
		}
	}
}

// Sum adds x in float64 at the end: float32 elements are added in many
// float32 lanes over short blocks (at most 64 elements per lane and block
// with the assembly, 128 without), and the blocks' lanes in float64.
func Sum[T Float](x []T) float64 {
	var total float64
	if useAsm {
		if is32[T]() {
			if m := len(x) &^ 31; m > 0 {
				var acc [32]float64
				sumS(p32(x), m, &acc)
				total = addLanes(acc[:])
				x = x[m:]
			}
		} else if m := len(x) &^ 15; m > 0 {
			var acc [16]float64
			sumD(p64(x), m, &acc)
			total = addLanes(acc[:])
			x = x[m:]
		}
	}
	return total + sumGo(x)
}

// addLanes adds partial sums pairwise.
func addLanes(a []float64) float64 {
	for len(a) > 1 {
		h := len(a) / 2
		for i := 0; i < h; i++ {
			a[i] += a[i+h]
		}
		a = a[:h]
	}
	return a[0]
}

func sumGo[T Float](x []T) float64 { return sumGoFrom(0, x) }

// SumBlock is the chunk length SumWiden needs: a whole number of sumS's
// blocks (2048) and of sumGo's (1024), so that chunks meet where blocks do.
const SumBlock = 2048

// SumWiden is Sum of the n float32 values that widen writes a chunk at a
// time into buf (its length a multiple of SumBlock): widen(dst, off) fills
// dst with values off..off+len(dst). The chunks are added in Sum's blocks,
// lanes and order, so the result is Sum's on the whole widened slice, bit
// for bit, without that slice.
func SumWiden(n int, buf []float32, widen func(dst []float32, off int)) float64 {
	if len(buf) == 0 || len(buf)%SumBlock != 0 {
		panic("vec: SumWiden's buffer is not a multiple of SumBlock")
	}
	var acc [32]float64
	var total float64
	lanes := false
	for off := 0; off < n; off += len(buf) {
		b := buf[:min(len(buf), n-off)]
		widen(b, off)
		if useAsm {
			if m := len(b) &^ 31; m > 0 {
				sumS(p32(b), m, &acc)
				lanes = true
				b = b[m:]
			}
			if len(b) == 0 {
				continue
			}
		}
		total = sumGoFrom(total, b) // the asm's tail (last chunk) or all
	}
	if lanes { // Sum: the lanes' total first, then the tail's
		var tail float64
		tail, total = total, addLanes(acc[:])
		return total + tail
	}
	return total
}

// sumGoFrom is sumGo adding into total: 8 lanes of T over blocks of 1024,
// each block's total added in order, then a last few alone.
func sumGoFrom[T Float](total float64, x []T) float64 {
	for len(x) >= 8 {
		blk := x[:min(len(x), 1024)&^7]
		x = x[len(blk):]
		var a [8]T
		for i := 0; i < len(blk); i += 8 {
			v := blk[i : i+8 : i+8]
			a[0] += v[0]
			a[1] += v[1]
			a[2] += v[2]
			a[3] += v[3]
			a[4] += v[4]
			a[5] += v[5]
			a[6] += v[6]
			a[7] += v[7]
		}
		total += float64((a[0]+a[4])+(a[1]+a[5])) + float64((a[2]+a[6])+(a[3]+a[7]))
	}
	for _, v := range x {
		total += float64(v)
	}
	return total
}

// Max returns the largest element of x (not empty), or NaN if x holds one.
func Max[T Float](x []T) T { return extreme(x, true) }

// Min returns the smallest element of x (not empty), or NaN if x holds one.
func Min[T Float](x []T) T { return extreme(x, false) }

func extreme[T Float](x []T, isMax bool) T {
	acc := x[0]
	if useAsm {
		var nan int
		if is32[T]() {
			if m := len(x) &^ 31; m > 0 {
				var out [32]float32
				if isMax {
					nan = maxS(p32(x), m, &out)
				} else {
					nan = minS(p32(x), m, &out)
				}
				acc = T(out[0])
				for _, v := range out[1:] {
					acc = pick(acc, T(v), isMax)
				}
				x = x[m:]
			}
		} else if m := len(x) &^ 15; m > 0 {
			var out [16]float64
			if isMax {
				nan = maxD(p64(x), m, &out)
			} else {
				nan = minD(p64(x), m, &out)
			}
			acc = T(out[0])
			for _, v := range out[1:] {
				acc = pick(acc, T(v), isMax)
			}
			x = x[m:]
		}
		if nan != 0 {
			return T(math.NaN())
		}
	}
	for _, v := range x {
		if v != v {
			return v
		}
		acc = pick(acc, v, isMax)
	}
	return acc
}

// pick keeps the larger (isMax) or smaller of two NaN-free values.
func pick[T Float](acc, v T, isMax bool) T {
	if isMax && v > acc || !isMax && v < acc {
		return v
	}
	return acc
}
