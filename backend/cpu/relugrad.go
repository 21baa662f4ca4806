package cpu

import (
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/vec"
)

var _ backend.ReLUGrader = Backend{}

// ReLUGrad is the fused ReLU gradient (see backend.ReLUGrader): dst = g
// where y is not zero, +0 where it is. float32 and float64 take vec's
// loop (y <= 0: 0), bfloat16 and float16 a test of the magnitude bits,
// four elements at a time in a uint64.
func (Backend) ReLUGrad(dst, g, y backend.View) bool {
	dt := dst.S.DType()
	if !dt.IsFloat() || g.S.DType() != dt || y.S.DType() != dt || !dst.IsContiguous() || !g.IsContiguous() || !y.IsContiguous() {
		return false
	}
	n := 1
	for _, d := range dst.Shape {
		n *= d
	}
	run := func(f func(lo, hi int)) {
		parallelFor((n+1023)/1024, 1024, func(lo, hi int) { f(lo*1024, min(hi*1024, n)) })
	}
	switch dt {
	case backend.Float32:
		dd, gd, yd := data[float32](dst)[:n], data[float32](g)[:n], data[float32](y)[:n]
		run(func(lo, hi int) { vec.ReLUGrad(dd[lo:hi], gd[lo:hi], yd[lo:hi]) })
	case backend.Float64:
		dd, gd, yd := data[float64](dst)[:n], data[float64](g)[:n], data[float64](y)[:n]
		run(func(lo, hi int) { vec.ReLUGrad(dd[lo:hi], gd[lo:hi], yd[lo:hi]) })
	default:
		dd, gd, yd := bits16(dst)[:n], bits16(g)[:n], bits16(y)[:n]
		run(func(lo, hi int) { reluGrad16(dd[lo:hi], gd[lo:hi], yd[lo:hi]) })
	}
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
