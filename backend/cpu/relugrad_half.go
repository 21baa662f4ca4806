package cpu

import (
	"unsafe"

	"github.com/emberml/ember/backend"
)

var _ backend.HalfReLUGrader = Backend{}

// ReLUGradHalf is the fused ReLU gradient on bfloat16 or float16: dst = g
// where y's magnitude bits are not zero, +0 where they are (see
// backend.HalfReLUGrader). Four elements at a time in a uint64.
func (Backend) ReLUGradHalf(dst, g, y backend.View) bool {
	dt := dst.S.DType()
	if !dt.IsHalf() || g.S.DType() != dt || y.S.DType() != dt || !dst.IsContiguous() || !g.IsContiguous() || !y.IsContiguous() {
		return false
	}
	n := 1
	for _, d := range dst.Shape {
		n *= d
	}
	dd, gd, yd := bits16(dst)[:n], bits16(g)[:n], bits16(y)[:n]
	parallelFor((n+1023)/1024, 1024, func(lo, hi int) {
		lo, hi = lo*1024, min(hi*1024, n)
		reluGrad16(dd[lo:hi], gd[lo:hi], yd[lo:hi])
	})
	return true
}

// reluGrad16 sets d[i] = g[i] if y[i]&0x7FFF != 0, else 0.
func reluGrad16(d, g, y []uint16) {
	g, y = g[:len(d)], y[:len(d)]
	const mag, top = 0x7FFF_7FFF_7FFF_7FFF, 0x8000_8000_8000_8000
	i := 0
	for ; i+4 <= len(d); i += 4 {
		yv := *(*uint64)(unsafe.Pointer(&y[i]))
		gv := *(*uint64)(unsafe.Pointer(&g[i]))
		// a lane's top bit: set iff its magnitude is not zero (no carry
		// leaves a lane: at most 0x7FFF + 0x7FFF)
		nz := ((yv & mag) + mag) & top
		m := (nz >> 15) * 0xFFFF // all 16 bits of the lane
		*(*uint64)(unsafe.Pointer(&d[i])) = gv & m
	}
	for ; i < len(d); i++ {
		if y[i]&0x7FFF != 0 {
			d[i] = g[i]
		} else {
			d[i] = 0
		}
	}
}

// bits16 is a two-byte float view's data (from its offset) as bits.
func bits16(v backend.View) []uint16 {
	if v.S.DType() == backend.Float16 {
		return halfBits(data[backend.F16](v))
	}
	return halfBits(data[backend.BF16](v))
}
