package weights

import (
	"encoding/binary"
	"math"
)

func u32(b []byte) uint32  { return binary.LittleEndian.Uint32(b) }
func u64(b []byte) uint64  { return binary.LittleEndian.Uint64(b) }
func f32(b []byte) float32 { return math.Float32frombits(u32(b)) }
func f64(b []byte) float64 { return math.Float64frombits(u64(b)) }

// half converts an IEEE 754 binary16 value to float32.
func half(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf or nan
		return math.Float32frombits(sign | 0xff<<23 | mant<<13)
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		// subnormal: value = mant * 2^-24
		v := float32(mant) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}
