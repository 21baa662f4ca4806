package backend

import "math"

// BF16 is one bfloat16 value as its bits (the top half of a float32): the
// element type of BFloat16 storage on the host.
type BF16 uint16

// F16 is one IEEE 754 binary16 value as its bits: the element type of
// Float16 storage on the host.
type F16 uint16

// ToBF16 rounds f to the nearest bfloat16, ties to even, as PyTorch's
// c10::BFloat16 does: infinities stay infinite, values past the largest
// finite bfloat16 round to infinity, every NaN becomes 0xFFFF (what
// PyTorch 1.13's vectorised CPU conversion writes; its scalar c10 path
// writes 0x7FC0, also a NaN), and float32 subnormals round like any other
// value (bfloat16 has the same exponent range).
func ToBF16(f float32) BF16 {
	if f != f {
		return 0xFFFF
	}
	u := math.Float32bits(f)
	return BF16((u + 0x7FFF + (u>>16)&1) >> 16)
}

// Float32 is the exact float32 value of h.
func (h BF16) Float32() float32 { return math.Float32frombits(uint32(h) << 16) }

// ToF16 rounds f to the nearest IEEE binary16, ties to even: results below
// 2⁻¹⁴ are binary16 subnormals (down to 2⁻²⁴), magnitudes from 65520 up
// round to infinity, and a NaN becomes the quiet NaN 0x7E00 of its sign
// (its payload dropped, as PyTorch).
func ToF16(f float32) F16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man != 0 {
			return F16(sign | 0x7e00)
		}
		return F16(sign | 0x7c00)
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return F16(sign | 0x7c00)
	}
	if e <= 0 {
		shift := uint(14 - e) // bits dropped from the 24-bit significand
		if exp == 0 || shift > 24 {
			return F16(sign)
		}
		man |= 0x800000
		h := man >> shift
		rem, half := man&(1<<shift-1), uint32(1)<<(shift-1)
		if rem > half || rem == half && h&1 == 1 {
			h++
		}
		return F16(sign | uint16(h))
	}
	h := uint32(e)<<10 | man>>13
	if rem := man & 0x1fff; rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
		h++ // a carry into the exponent is right, up to infinity
	}
	return F16(sign | uint16(h))
}

// Float32 is the exact float32 value of h.
func (h F16) Float32() float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0:
		v := float32(man) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}

// IsHalf reports whether d is one of the two-byte floating types, which
// ember computes in float32 and rounds back (as PyTorch on the CPU).
func (d DType) IsHalf() bool { return d == BFloat16 || d == Float16 }
