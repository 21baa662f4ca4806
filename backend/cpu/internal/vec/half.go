package vec

import (
	"math"
	"unsafe"

	"github.com/emberml/ember/backend"
)

// The two-byte float conversions over contiguous slices, element for
// element the same bits as backend.ToBF16, backend.ToF16 and their Float32
// methods, as tight pure-Go loops without a call per element. Each reads
// len(dst) elements of src (src at least as long). They run AVX2 loops
// (asm/) where the float32 ones do (float16 with F16C too), and Go loops
// for the remainder of a block and elsewhere.

// BF16FromF32 sets dst[i] = backend.ToBF16(src[i]): round to nearest, ties
// to even, every NaN 0xFFFF.
func BF16FromF32(dst []backend.BF16, src []float32) {
	src = src[:len(dst)]
	if n := len(dst) &^ 15; useAsm && n > 0 {
		bf16FromS(p16(dst), p32(src), n)
		dst, src = dst[n:], src[n:]
	}
	for i, f := range src {
		u := math.Float32bits(f)
		h := (u + 0x7FFF + (u>>16)&1) >> 16
		if u&0x7FFFFFFF > 0x7F800000 {
			h = 0xFFFF
		}
		dst[i] = backend.BF16(h)
	}
}

// F32FromBF16 sets dst[i] = src[i].Float32().
func F32FromBF16(dst []float32, src []backend.BF16) {
	src = src[:len(dst)]
	if n := len(dst) &^ 31; useAsm && n > 0 {
		sFromBF16(p32(dst), p16(src), n)
		dst, src = dst[n:], src[n:]
	}
	for i, h := range src {
		dst[i] = math.Float32frombits(uint32(h) << 16)
	}
}

// F16FromF32 sets dst[i] = backend.ToF16(src[i]): round to nearest, ties to
// even, binary16 subnormals below 2⁻¹⁴, infinity from 65520 up, a NaN the
// quiet NaN 0x7E00 of its sign. (The normal range adds the rounding bias in
// the integer bits; the subnormal range lets a float32 addition of 0.5 do
// the rounding, exact under Go's round-to-nearest float32 arithmetic.)
func F16FromF32(dst []backend.F16, src []float32) {
	src = src[:len(dst)]
	if n := len(dst) &^ 15; useAsm && hasF16C && n > 0 {
		f16FromS(p16(dst), p32(src), n)
		dst, src = dst[n:], src[n:]
	}
	const (
		inf32  = 0xFF << 23
		max16  = (127 + 16) << 23               // 2¹⁶: from here on, infinity or NaN
		min16  = 113 << 23                      // 2⁻¹⁴, the least normal binary16
		magicU = (127 - 15 + 23 - 10 + 1) << 23 // 0.5: its ulp is 2⁻²⁴
	)
	magic := math.Float32frombits(magicU)
	for i, f := range src {
		u := math.Float32bits(f)
		sign := uint16(u>>16) & 0x8000
		u &= 0x7FFFFFFF
		var h uint32
		switch {
		case u >= max16:
			h = 0x7C00
			if u > inf32 {
				h = 0x7E00
			}
		case u < min16:
			h = math.Float32bits(math.Float32frombits(u)+magic) - magicU
		default:
			odd := (u >> 13) & 1
			h = (u - (127-15)<<23 + 0xFFF + odd) >> 13
		}
		dst[i] = backend.F16(uint16(h) | sign)
	}
}

// F32FromF16 sets dst[i] = src[i].Float32().
func F32FromF16(dst []float32, src []backend.F16) {
	src = src[:len(dst)]
	if n := len(dst) &^ 15; useAsm && hasF16C && n > 0 {
		sFromF16(p32(dst), p16(src), n)
		dst, src = dst[n:], src[n:]
	}
	const (
		expMask = 0x7C00 << 13
		magic   = 113 << 23 // 2⁻¹⁴
	)
	for i, h := range src {
		o := uint32(h&0x7FFF) << 13
		e := o & expMask
		o += (127 - 15) << 23
		switch e {
		case expMask: // infinity or NaN
			o += (128 - 16) << 23
		case 0: // zero or subnormal: exact in float32
			o = math.Float32bits(math.Float32frombits(o+1<<23) - math.Float32frombits(magic))
		}
		dst[i] = math.Float32frombits(o | uint32(h&0x8000)<<16)
	}
}

// p16 is the first element's address of a slice of two-byte elements.
func p16[T ~uint16](s []T) *uint16 { return (*uint16)(unsafe.Pointer(unsafe.SliceData(s))) }

// ReLUBF16 sets d[i] = relu(a[i]) on bfloat16 bits: +0 for negatives and
// -0, 0xFFFF for NaNs (what rounding a float32 ReLU gives), the rest
// unchanged.
func ReLUBF16(d, a []backend.BF16) {
	a = a[:len(d)]
	if n := len(d) &^ 15; useAsm && n > 0 {
		reluBF16(p16(d), p16(a), n)
		d, a = d[n:], a[n:]
	}
	for i, h := range a {
		neg := backend.BF16(int16(h) >> 15)                    // 0xFFFF for a negative sign
		nan := backend.BF16((0x7F80 - uint32(h&0x7FFF)) >> 31) // 1 for a NaN
		d[i] = h&^neg | -nan
	}
}

// u16 views a slice of two-byte elements as []uint16.
func u16[T any](s []T) []uint16 {
	return unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// mask16 is 0xFFFF for true, 0 for false (a bool's byte is 0 or 1).
func mask16(c *bool) uint16 { return -uint16(*(*uint8)(unsafe.Pointer(c))) }

// where16 is Where on two-byte elements, without a branch per element
// (the condition is data, often random: a ReLU's mask).
func where16(d []uint16, c []bool, a, b []uint16) {
	c, a, b = c[:len(d)], a[:len(d)], b[:len(d)]
	for i := range d {
		m := mask16(&c[i])
		d[i] = a[i]&m | b[i]&^m
	}
}

// where16s is WhereScalarB (d[i] = c[i] ? v[i] : s) when vFirst, else
// WhereScalarA (d[i] = c[i] ? s : v[i]), on two-byte elements.
func where16s(d []uint16, c []bool, v []uint16, s uint16, vFirst bool) {
	c, v = c[:len(d)], v[:len(d)]
	var flip uint16
	if !vFirst {
		flip = 0xFFFF
	}
	for i := range d {
		m := mask16(&c[i]) ^ flip
		d[i] = v[i]&m | s&^m
	}
}

// SumBF16 is Sum of the bfloat16 values of x, bit for bit Sum on their
// float32 copy, reading the two-byte data once: with the AVX2 loops the
// same float32 lanes over blocks and float64 partial sums, widened in
// registers; elsewhere SumWiden over chunks widened on the stack.
func SumBF16(x []backend.BF16) float64 {
	if m := len(x) &^ 31; useAsm && m > 0 {
		var acc [32]float64
		sumBF16(p16(x), m, &acc)
		var tail [32]float32
		t := tail[:len(x)-m]
		F32FromBF16(t, x[m:])
		return addLanes(acc[:]) + sumGo(t)
	}
	var buf [SumBlock]float32
	return SumWiden(len(x), buf[:], func(d []float32, off int) { F32FromBF16(d, x[off:off+len(d)]) })
}

// F16CAccelerated reports whether F32FromF16 and F16FromF32 run F16C
// instructions (else Go loops).
func F16CAccelerated() bool { return useAsm && hasF16C }

// Max pooling of bfloat16 on order keys: int16s that compare as the
// values do, so that window maxima are integer maxima (VPMAXSW) with no
// widening. The key of a non-NaN h is h with the magnitude bits flipped
// when the sign is set (-0 sorts below +0, as Go's max has it); every NaN
// is the largest key 0x7FFF, which comes back as 0xFFFF, the bits
// ToBF16 gives a NaN: the same bits as widening, pooling with max and
// rounding back.

// KeyBF16 is the order key of h.
func KeyBF16(h backend.BF16) int16 {
	k := int16(h) ^ (int16(h) >> 15 & 0x7FFF)
	if h&0x7FFF > 0x7F80 {
		k = 0x7FFF
	}
	return k
}

// BF16OfKey is the bfloat16 whose key is k (0xFFFF for the NaN key).
func BF16OfKey(k int16) backend.BF16 {
	h := backend.BF16(k ^ (k >> 15 & 0x7FFF))
	if k == 0x7FFF {
		h = 0xFFFF
	}
	return h
}

// MaxKeysBF16 sets k[i] to the key of s[i] or, with acc, to the larger of
// k[i] and that key; it reads len(k) elements of s.
func MaxKeysBF16(k []int16, s []backend.BF16, acc bool) {
	s = s[:len(k)]
	if n := len(k) &^ 15; useAsm && n > 0 {
		if acc {
			maxKeysBF16(&k[0], p16(s), n)
		} else {
			keysBF16(&k[0], p16(s), n)
		}
		k, s = k[n:], s[n:]
	}
	for i, h := range s {
		v := KeyBF16(h)
		if acc {
			v = max(v, k[i])
		}
		k[i] = v
	}
}

// WindowMaxBF16 sets o[j] to the bfloat16 whose key is the largest of
// k[sw*j : sw*j+kw] (kw ≥ 1, sw ≥ 1).
func WindowMaxBF16(o []backend.BF16, k []int16, kw, sw int) {
	_ = k[sw*(len(o)-1)+kw-1]
	if useAsm && (sw == 1 || sw == 2) {
		n := len(o)
		if sw == 2 {
			n = min(n, (len(k)-kw+1)/2) // the loop reads k[2n+kw-2]
		}
		if n &^= 15; n > 0 {
			if sw == 1 {
				windowMaxS1BF16(p16(o), &k[0], n, kw)
			} else {
				windowMaxS2BF16(p16(o), &k[0], n, kw)
			}
			o, k = o[n:], k[sw*n:]
		}
	}
	for j := range o {
		w := k[sw*j:][:kw]
		m := w[0]
		for _, v := range w[1:] {
			m = max(m, v)
		}
		o[j] = BF16OfKey(m)
	}
}

// MaxPool2x2BF16 max-pools the bfloat16 plane x (rows w wide, at least
// 2·oh rows) with 2×2 windows at stride 2, no padding, into o[:oh·ow] and
// the plane indices ix[:oh·ow] (row·w + column): the first maximum of each
// window in row-major order, comparing as float32 does (-0 equals +0; the
// value +0 if the window has one), or, when the window has a NaN, the last
// NaN, whose bits become 0xFFFF. These are the bits and indices of a
// float32 max pool of the widened plane, rounded back (PyTorch's choice of
// index). AVX-512 loops where the CPU has them (16 outputs at a time,
// order keys in dword lanes), else Go on order keys.
func MaxPool2x2BF16(o []backend.BF16, ix []int64, x []backend.BF16, oh, ow, w int) {
	if oh == 0 || ow == 0 {
		return
	}
	o, ix = o[:oh*ow], ix[:oh*ow]
	_ = x[(2*oh-1)*w+2*ow-1]
	if useAsm && hasAVX512BW {
		maxPool2x2BF16(p16(o), &ix[0], p16(x), oh, ow, w)
		return
	}
	for oy := range oh {
		r0, r1 := x[2*oy*w:][:2*ow], x[(2*oy+1)*w:][:2*ow]
		oo, io := o[oy*ow:][:ow], ix[oy*ow:][:ow]
		for ox := range oo {
			ka, kb := int32(KeyBF16(r0[2*ox])), int32(KeyBF16(r0[2*ox+1]))
			kc, kd := int32(KeyBF16(r1[2*ox])), int32(KeyBF16(r1[2*ox+1]))
			m := max(ka, kb, kc, kd)
			fold := func(k int32) int32 { return k - k>>31 } // -0 meets +0
			fm := fold(m)
			ea, eb, ec, ed := fold(ka) == fm, fold(kb) == fm, fold(kc) == fm, fold(kd) == fm
			var col, row bool
			if m == 0x7FFF { // the last NaN
				row, col = ed || ec, ed || eb && !ec
			} else { // the first maximum
				row, col = !ea && !eb, !ea && (eb || !ec)
			}
			at := 2*oy*w + 2*ox
			if col {
				at++
			}
			if row {
				at += w
			}
			oo[ox], io[ox] = BF16OfKey(int16(m)), int64(at)
		}
	}
}

// MaxPool2x2S is MaxPool2x2BF16 for float32: the first maximum of each
// window in row-major order (-0 equals +0; the value +0 if the window has
// one, as Go's max gives), or, when the window has a NaN, the last NaN and
// its own bits. AVX-512 loops where the CPU has them (16 outputs at a
// time, order keys), else Go.
func MaxPool2x2S(o []float32, ix []int64, x []float32, oh, ow, w int) {
	if oh == 0 || ow == 0 {
		return
	}
	o, ix = o[:oh*ow], ix[:oh*ow]
	_ = x[(2*oh-1)*w+2*ow-1]
	if useAsm && hasAVX512BW {
		maxPool2x2S(&o[0], &ix[0], &x[0], oh, ow, w)
		return
	}
	for oy := range oh {
		r0, r1 := x[2*oy*w:][:2*ow], x[(2*oy+1)*w:][:2*ow]
		oo, io := o[oy*ow:][:ow], ix[oy*ow:][:ow]
		for ox := range oo {
			j := 2 * ox
			m, k := Window2x2(r0[j], r0[j+1], r1[j], r1[j+1], w)
			oo[ox], io[ox] = m, int64(2*oy*w+j+k)
		}
	}
}

// Max2 sets d[i] = max(a[i], b[i]), Go's max, for i < len(d), and reports
// whether some a[i] or b[i] is NaN: there d's elements need not be max's
// (the assembly takes VMAXPS's), and the caller must compute them anew.
func Max2(d, a, b []float32) (nan bool) {
	a, b = a[:len(d)], b[:len(d)]
	if useAsm && len(d) > 0 {
		return max2S(&d[0], &a[0], &b[0], len(d)) != 0
	}
	for i, x := range a {
		y := b[i]
		nan = nan || x != x || y != y
		d[i] = max(x, y)
	}
	return nan
}

// MaxPool3S2 sets o[k] = max(v[2k], v[2k+1], v[2k+2]), Go's max, for
// k < len(o): a 3-wide, stride-2 max pool of a row v (at least 2·len(o)+1
// long) holding no NaN.
func MaxPool3S2(o, v []float32) {
	v = v[:2*len(o)+1]
	k := 0
	if m := len(o) &^ 7; useAsm && m > 0 {
		maxPool3S2S(&o[0], &v[0], m)
		k = m
	}
	for ; k < len(o); k++ {
		o[k] = max(v[2*k], v[2*k+1], v[2*k+2])
	}
}

// Window2x2 pools the 2×2 window a b over c d (c is w elements after a):
// the maximum, Go's max (-0 equals +0; +0 if the window has one), and the
// offset from a of the first element equal to it in row-major order; or,
// when the window has a NaN, its last NaN (bits and all) and that one's
// offset, as PyTorch picks.
func Window2x2[T interface{ ~float32 | ~float64 }](a, b, c, d T, w int) (T, int) {
	m := max(max(a, b), max(c, d))
	k := w + 1 // the first equal to m, as conditional moves
	if c == m {
		k = w
	}
	if b == m {
		k = 1
	}
	if a == m {
		k = 0
	}
	if m != m {
		switch {
		case d != d:
			return d, w + 1
		case c != c:
			return c, w
		case b != b:
			return b, 1
		}
		return a, 0
	}
	return m, k
}
