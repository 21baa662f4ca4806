package cpu

import (
	"math"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/vec"
)

// Pooling kernels: one pass over each input plane, planes split across
// goroutines.

var _ backend.Pooler = Backend{}

// poolGeom is a pooling's sizes, from the input and output views.
type poolGeom struct {
	n, c, h, w, oh, ow int
	kh, kw, sh, sw     int
	ph, pw             int
}

func poolOf(x, out []int, p backend.Pool2dParams) poolGeom {
	return poolGeom{n: x[0], c: x[1], h: x[2], w: x[3], oh: out[2], ow: out[3],
		kh: p.Kernel[0], kw: p.Kernel[1], sh: p.Stride[0], sw: p.Stride[1], ph: p.Padding[0], pw: p.Padding[1]}
}

// rows returns the input rows [h0, h1) of output row o along one dim.
func window(o, s, p, k, size int) (int, int) {
	h0 := o*s - p
	return max(h0, 0), min(h0+k, size)
}

// MaxPool2d writes window maxima and their plane indices. Besides float32
// and float64 it takes bfloat16 and float16 views (out of x's dtype):
// their rows are widened to float32 (exactly), pooled there and the
// maxima narrowed back, which is exact too.
func (Backend) MaxPool2d(out, idx, x backend.View, p backend.Pool2dParams) {
	g := poolOf(x.Shape, out.Shape, p)
	switch x.S.DType() {
	case backend.BFloat16:
		if idx.S == nil {
			maxPoolKeysBF16(g, out, x)
			return
		}
		if g.is2x2() && x.Strides[3] == 1 && x.Strides[2] == g.w {
			maxPool2x2Planes(g, out, idx, x, vec.MaxPool2x2BF16)
			return
		}
		maxPoolHalf(g, out, idx, x, vec.F32FromBF16, vec.BF16FromF32)
		return
	case backend.Float16:
		maxPoolHalf(g, out, idx, x, vec.F32FromF16, vec.F16FromF32)
		return
	}
	if x.S.DType() == backend.Float32 && idx.S != nil && g.is2x2() && x.Strides[3] == 1 && x.Strides[2] == g.w {
		maxPool2x2Planes(g, out, idx, x, vec.MaxPool2x2S)
		return
	}
	floatKernel("max_pool2d", x.S.DType(), func() { maxPool[float32](g, out, idx, x) }, func() { maxPool[float64](g, out, idx, x) })
}

// maxPool2x2Planes is maxPool for 2×2 windows at stride 2 with indices on
// planes whose rows are contiguous: pool (vec.MaxPool2x2S, or
// vec.MaxPool2x2BF16 on the two-byte data: the same bits and indices as
// maxPoolHalf) a plane at a time.
func maxPool2x2Planes[E any](g poolGeom, out, idx, x backend.View, pool func(o []E, ix []int64, x []E, oh, ow, w int)) {
	xd, od, id := data[E](x), data[E](out), data[int64](idx)
	parallelFor(g.n*g.c, g.oh*g.ow*4, func(lo, hi int) {
		for pl := lo; pl < hi; pl++ {
			src := pl/g.c*x.Strides[0] + pl%g.c*x.Strides[1]
			at := pl * g.oh * g.ow
			pool(od[at:][:g.oh*g.ow], id[at:][:g.oh*g.ow], xd[src:], g.oh, g.ow, g.w)
		}
	})
}

// PoolsHalf reports that MaxPool2d and MaxPool2dBackward take bfloat16 and
// float16 views (backend.HalfPooler).
func (Backend) PoolsHalf(dt backend.DType) bool { return dt.IsHalf() }

// maxPool works one output row at a time: first the maximum of each input
// column over the window's rows (and the row it is in), then each window's
// maximum over those. Both passes are branch-free in the common case.
func maxPool[T floatT](g poolGeom, out, idx, x backend.View) {
	xd, od := data[T](x), data[T](out)
	id := poolIdx(idx)
	w0s, w1s := colWindows(g)
	sh, sw := x.Strides[2], x.Strides[3]
	parallelFor(g.n*g.c, g.oh*g.ow*g.kh*g.kw, func(lo, hi int) {
		s := newMaxScratch[T](g.w)
		for pl := lo; pl < hi; pl++ {
			src := pl/g.c*x.Strides[0] + pl%g.c*x.Strides[1]
			row := func(i, slot int) []T {
				r := src + i*sh
				if sw == 1 {
					return xd[r : r+g.w]
				}
				d := s.rows[slot]
				for j := range d {
					d[j] = xd[r+j*sw]
				}
				return d
			}
			maxPlane(g, &s, row, od[pl*g.oh*g.ow:][:g.oh*g.ow], planeIdx(id, pl, g), w0s, w1s)
		}
	})
}

// maxPoolHalf is maxPool on two-byte floats: each input row is widened to
// float32 as it is read and each plane's maxima are narrowed back.
func maxPoolHalf[H halfT](g poolGeom, out, idx, x backend.View, widen func([]float32, []H), narrow func([]H, []float32)) {
	xd, od := data[H](x), data[H](out)
	id := poolIdx(idx)
	w0s, w1s := colWindows(g)
	sh, sw := x.Strides[2], x.Strides[3]
	parallelFor(g.n*g.c, g.oh*g.ow*g.kh*g.kw, func(lo, hi int) {
		s := newMaxScratch[float32](g.w)
		o := make([]float32, g.oh*g.ow)
		var gather []H
		if sw != 1 {
			gather = make([]H, g.w)
		}
		var plane []float32
		if sw == 1 && sh == g.w {
			plane = make([]float32, g.h*g.w)
		}
		for pl := lo; pl < hi; pl++ {
			src := pl/g.c*x.Strides[0] + pl%g.c*x.Strides[1]
			if plane != nil {
				// contiguous planes: widened in one call (rows are short)
				widen(plane, xd[src:][:len(plane)])
				maxPlane(g, &s, func(i, _ int) []float32 { return plane[i*g.w:][:g.w] }, o, planeIdx(id, pl, g), w0s, w1s)
				narrow(od[pl*g.oh*g.ow:][:g.oh*g.ow], o)
				continue
			}
			row := func(i, slot int) []float32 {
				r := src + i*sh
				hr := xd[r:]
				if sw != 1 {
					for j := range gather {
						gather[j] = xd[r+j*sw]
					}
					hr = gather
				}
				d := s.rows[slot]
				widen(d, hr)
				return d
			}
			maxPlane(g, &s, row, o, planeIdx(id, pl, g), w0s, w1s)
			narrow(od[pl*g.oh*g.ow:][:g.oh*g.ow], o)
		}
	})
}

// is2x2 reports whether the windows are 2×2 at stride 2 without padding,
// all inside the plane (a ceil_mode output's last window over an odd size
// is not).
func (g poolGeom) is2x2() bool {
	return g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 && g.pw == 0 && 2*g.oh <= g.h && 2*g.ow <= g.w
}

// maxPoolKeysBF16 is maxPool on bfloat16 without indices (inference): on
// order keys (vec.KeyBF16), so that each output row is the integer
// maxima of its window rows, then of each window along the row, with no
// widening; the same bits as maxPoolHalf.
func maxPoolKeysBF16(g poolGeom, out, x backend.View) {
	xd, od := data[backend.BF16](x), data[backend.BF16](out)
	sh, sw := x.Strides[2], x.Strides[3]
	// keys of the padded row: pw guards of the lowest key on the left, and
	// on the right as far as the last window reaches, plus one that the
	// stride-2 loop reads
	kn := max(g.w+g.pw, g.sw*(g.ow-1)+g.kw) + 1
	parallelFor(g.n*g.c, g.oh*g.ow*g.kh*g.kw, func(lo, hi int) {
		keys := make([]int16, kn)
		for i := range keys {
			keys[i] = math.MinInt16
		}
		vm := keys[g.pw:][:g.w]
		var gather []backend.BF16
		if sw != 1 {
			gather = make([]backend.BF16, g.w)
		}
		for pl := lo; pl < hi; pl++ {
			src := pl/g.c*x.Strides[0] + pl%g.c*x.Strides[1]
			o := od[pl*g.oh*g.ow:][:g.oh*g.ow]
			for oy := 0; oy < g.oh; oy++ {
				h0, h1 := window(oy, g.sh, g.ph, g.kh, g.h)
				for i := h0; i < h1; i++ {
					r := xd[src+i*sh:]
					if sw != 1 {
						for j := range gather {
							gather[j] = xd[src+i*sh+j*sw]
						}
						r = gather
					}
					vec.MaxKeysBF16(vm, r, i > h0)
				}
				vec.WindowMaxBF16(o[oy*g.ow:][:g.ow], keys, g.kw, g.sw)
			}
		}
	})
}

func poolIdx(idx backend.View) []int64 {
	if idx.S == nil {
		return nil
	}
	return data[int64](idx)
}

func planeIdx(id []int64, pl int, g poolGeom) []int64 {
	if id == nil {
		return nil
	}
	return id[pl*g.oh*g.ow:][:g.oh*g.ow]
}

// colWindows returns the output columns' input windows [w0s[ox], w1s[ox]).
func colWindows(g poolGeom) (w0s, w1s []int) {
	w0s, w1s = make([]int, g.ow), make([]int, g.ow)
	for ox := range w0s {
		w0s[ox], w1s[ox] = window(ox, g.sw, g.pw, g.kw, g.w)
	}
	return w0s, w1s
}

type maxScratch[T floatT] struct {
	vm   []T    // column maxima over one output row's window rows
	vr   []int  // and their rows: the first
	rows [2][]T // input rows, gathered or widened
}

func newMaxScratch[T floatT](w int) maxScratch[T] {
	return maxScratch[T]{vm: make([]T, w), vr: make([]int, w), rows: [2][]T{make([]T, w), make([]T, w)}}
}

// maxPlane pools one plane, whose input row i is row(i, slot) (slot 0 or
// 1: a row of slot 0 stays valid until the next of slot 0), into o and,
// when ix is not nil, the indices.
func maxPlane[T floatT](g poolGeom, s *maxScratch[T], row func(i, slot int) []T, o []T, ix []int64, w0s, w1s []int) {
	if g.is2x2() {
		for oy := 0; oy < g.oh; oy++ {
			var irow []int64
			if ix != nil {
				irow = ix[oy*g.ow:][:g.ow]
			}
			max2x2Row(o[oy*g.ow:][:g.ow], irow, row(2*oy, 0), row(2*oy+1, 1), 2*oy, g.w)
		}
		return
	}
	vm, vr := s.vm, s.vr
	row0 := func(i int) []T { return row(i, 0) }
	// 3-wide windows at stride 2 (ResNet's 3×3 pool) without indices, in
	// float32: vec's loops, for the output columns whose windows lie
	// inside the row (ox in [lo, hi)); a row with a NaN in its window rows
	// is pooled below instead.
	vm32, fast := any(vm).([]float32)
	fast = fast && ix == nil && g.kw == 3 && g.sw == 2
	lo, hi := (g.pw+1)/2, min(g.ow, (g.w+g.pw-3)/2+1)
	for oy := 0; oy < g.oh; oy++ {
		h0, h1 := window(oy, g.sh, g.ph, g.kh, g.h)
		if fast && h1-h0 >= 2 && pool3S2Row(o[oy*g.ow:][:g.ow], vm32, row, h0, h1, lo, hi, w0s, w1s) {
			continue
		}
		copy(vm, row0(h0))
		if ix != nil {
			for j := range vr {
				vr[j] = h0
			}
		}
		for i := h0 + 1; i < h1; i++ {
			if ix == nil {
				colMax(vm, row0(i))
			} else {
				colMaxRow(vm, vr, row0(i), i)
			}
		}
		orow := o[oy*g.ow:][:g.ow]
		if ix == nil {
			for ox := range orow {
				orow[ox] = sliceMax(vm[w0s[ox]:w1s[ox]])
			}
			continue
		}
		irow := ix[oy*g.ow:][:g.ow]
		rowArgMax(orow, irow, vm, vr, w0s, w1s, g.w)
		for ox, at := range irow {
			if at < 0 {
				irow[ox] = lastNaN(row0, h0, h1, w0s[ox], w1s[ox], g.w)
			}
		}
	}
}

// pool3S2Row pools the float32 input rows [h0, h1) (row(i, slot), at
// least two) with 3-wide windows at stride 2 into orow: column maxima
// with vec.Max2, the windows inside the row ([lo, hi)) with
// vec.MaxPool3S2, the edge ones here. It reports false, orow unwritten,
// when a window row holds a NaN (vec's maxima are not Go's max there).
func pool3S2Row[T floatT](orow []T, vm []float32, row func(i, slot int) []T, h0, h1, lo, hi int, w0s, w1s []int) bool {
	f32 := func(r []T) []float32 { return any(r).([]float32) }
	nan := vec.Max2(vm, f32(row(h0, 0)), f32(row(h0+1, 1)))
	for i := h0 + 2; i < h1 && !nan; i++ {
		nan = vec.Max2(vm, vm, f32(row(i, 0)))
	}
	if nan {
		return false
	}
	o := f32(orow)
	if lo < hi {
		vec.MaxPool3S2(o[lo:hi], vm[w0s[lo]:])
	}
	for ox := range min(lo, len(o)) {
		o[ox] = sliceMax(vm[w0s[ox]:w1s[ox]])
	}
	for ox := max(lo, hi); ox < len(o); ox++ {
		o[ox] = sliceMax(vm[w0s[ox]:w1s[ox]])
	}
	return true
}

// max2x2Row pools input rows r0 (row y0 of a plane w wide) and r1 (row
// y0+1) with 2×2 windows at stride 2 into o and, when ix is not nil, ix
// (see vec.Window2x2).
func max2x2Row[T floatT](o []T, ix []int64, r0, r1 []T, y0, w int) {
	r0, r1 = r0[:2*len(o)], r1[:2*len(o)]
	if ix == nil {
		for ox := range o {
			o[ox] = max(max(r0[2*ox], r0[2*ox+1]), max(r1[2*ox], r1[2*ox+1]))
		}
		return
	}
	ix = ix[:len(o)]
	for ox := range o {
		j := 2 * ox
		m, k := vec.Window2x2(r0[j], r0[j+1], r1[j], r1[j+1], w)
		o[ox], ix[ox] = m, int64(y0*w+j+k)
	}
}

// colMax sets vm[j] = max(vm[j], row[j]); the builtin max is branch-free
// and keeps NaN.
func colMax[T floatT](vm, row []T) {
	row = row[:len(vm)]
	for j, v := range row {
		vm[j] = max(vm[j], v)
	}
}

// colMaxRow is colMax that also records in vr the row i where a new
// maximum comes from (a conditional move; with NaNs vr is not meaningful
// and the caller scans the window instead).
func colMaxRow[T floatT](vm []T, vr []int, row []T, i int) {
	row, vr = row[:len(vm)], vr[:len(vm)]
	for j, v := range row {
		m, k := vm[j], vr[j]
		if v > m {
			k = i
		}
		vm[j], vr[j] = max(m, v), k
	}
}

func sliceMax[T floatT](v []T) T {
	best := T(math.Inf(-1))
	for _, x := range v {
		best = max(best, x)
	}
	return best
}

// rowArgMax writes, for each output column ox, the maximum of
// vm[w0s[ox]:w1s[ox]] and its plane index (row vr[j], column j, rows w
// wide): the first maximum in row-major order. Windows whose maximum is
// NaN get index -1 (the caller scans them). The loops are written so that
// the compiler uses conditional moves, not branches.
func rowArgMax[T floatT](orow []T, irow []int64, vm []T, vr, w0s, w1s []int, w int) {
	irow, w0s, w1s = irow[:len(orow)], w0s[:len(orow)], w1s[:len(orow)]
	for ox := range orow {
		w0, w1 := w0s[ox], w1s[ox]
		vs, rs := vm[w0:w1], vr[w0:w1]
		best := vs[0]
		for _, v := range vs[1:] {
			best = max(best, v)
		}
		at := math.MaxInt
		rs = rs[:len(vs)]
		for j, v := range vs {
			k := rs[j]*w + w0 + j
			if best > v {
				k = math.MaxInt
			}
			at = min(at, k)
		}
		if best != best {
			at = -1
		}
		orow[ox], irow[ox] = best, int64(at)
	}
}

// lastNaN returns the plane index of the last NaN in rows [h0, h1),
// columns [w0, w1) of a plane, as PyTorch's index of a NaN maximum.
func lastNaN[T floatT](row func(i int) []T, h0, h1, w0, w1, w int) int64 {
	at := -1
	for i := h0; i < h1; i++ {
		for j, v := range row(i)[w0:w1] {
			if v != v {
				at = i*w + w0 + j
			}
		}
	}
	return int64(at)
}

// MaxPool2dBackward scatters gout to the recorded maxima. For bfloat16
// and float16 each plane is summed in float32 and rounded once, as the
// gradient of a float32 pool of the widened input would be.
func (Backend) MaxPool2dBackward(gx, gout, idx backend.View) {
	switch gx.S.DType() {
	case backend.BFloat16:
		if gout.Strides[3] == 1 && gout.Strides[2] == gout.Shape[3] {
			maxPoolBackBF16(gx, gout, idx)
			return
		}
		maxPoolBackHalf(gx, gout, idx, backend.BF16.Float32, vec.BF16FromF32)
		return
	case backend.Float16:
		maxPoolBackHalf(gx, gout, idx, backend.F16.Float32, vec.F16FromF32)
		return
	}
	floatKernel("max_pool2d backward", gx.S.DType(), func() { maxPoolBack[float32](gx, gout, idx) }, func() { maxPoolBack[float64](gx, gout, idx) })
}

func maxPoolBack[T floatT](gx, gout, idx backend.View) {
	c, hw := gx.Shape[1], gx.Shape[2]*gx.Shape[3]
	oh, ow := gout.Shape[2], gout.Shape[3]
	gd, gs, id := data[T](gx), data[T](gout), data[int64](idx)
	sn, sc, sh, sw := gout.Strides[0], gout.Strides[1], gout.Strides[2], gout.Strides[3]
	parallelFor(gx.Shape[0]*c, hw+oh*ow, func(lo, hi int) {
		for pl := lo; pl < hi; pl++ {
			d := gd[pl*hw:][:hw]
			clear(d)
			ix := id[pl*oh*ow:][:oh*ow]
			src := pl/c*sn + pl%c*sc
			for y := 0; y < oh; y++ {
				for x := 0; x < ow; x++ {
					d[ix[y*ow+x]] += gs[src+y*sh+x*sw]
				}
			}
		}
	})
}

// maxPoolBackBF16 is maxPoolBackHalf on bfloat16 planes of gout with
// contiguous rows. Where a plane's indices strictly increase (windows that
// do not overlap, as 2×2 at stride 2), no element receives two gradients,
// and each gradient is written as its float32 sum with +0 rounds it: the
// same bits, -0 as +0, a NaN as 0xFFFF; other planes take the float32
// sums.
func maxPoolBackBF16(gx, gout, idx backend.View) {
	c, hw := gx.Shape[1], gx.Shape[2]*gx.Shape[3]
	oh, ow := gout.Shape[2], gout.Shape[3]
	gd, gs, id := data[backend.BF16](gx), data[backend.BF16](gout), data[int64](idx)
	sn, sc := gout.Strides[0], gout.Strides[1]
	parallelFor(gx.Shape[0]*c, hw+oh*ow, func(lo, hi int) {
		var d []float32
		for pl := lo; pl < hi; pl++ {
			dst := gd[pl*hw:][:hw]
			clear(dst)
			ix := id[pl*oh*ow:][:oh*ow]
			src := gs[pl/c*sn+pl%c*sc:][:oh*ow]
			prev := int64(-1)
			ok := true
			for j, at := range ix {
				if at <= prev {
					ok = false
					break
				}
				prev = at
				h := src[j]
				if h == 0x8000 {
					h = 0
				}
				if h&0x7FFF > 0x7F80 {
					h = 0xFFFF
				}
				dst[at] = h
			}
			if ok {
				continue
			}
			// a plane whose windows share elements: float32 sums
			if d == nil {
				d = make([]float32, hw)
			}
			clear(d)
			for j, at := range ix {
				d[at] += src[j].Float32()
			}
			vec.BF16FromF32(dst, d)
		}
	})
}

func maxPoolBackHalf[H halfT](gx, gout, idx backend.View, widen func(H) float32, narrow func([]H, []float32)) {
	c, hw := gx.Shape[1], gx.Shape[2]*gx.Shape[3]
	oh, ow := gout.Shape[2], gout.Shape[3]
	gd, gs, id := data[H](gx), data[H](gout), data[int64](idx)
	sn, sc, sh, sw := gout.Strides[0], gout.Strides[1], gout.Strides[2], gout.Strides[3]
	parallelFor(gx.Shape[0]*c, hw+oh*ow, func(lo, hi int) {
		d := make([]float32, hw)
		for pl := lo; pl < hi; pl++ {
			clear(d)
			ix := id[pl*oh*ow:][:oh*ow]
			src := pl/c*sn + pl%c*sc
			for y := 0; y < oh; y++ {
				iy, gy := ix[y*ow:][:ow], gs[src+y*sh:]
				if bf, ok := any(gy).([]backend.BF16); ok && sw == 1 {
					// bfloat16 widened inline, the common case
					bf = bf[:ow]
					for x, at := range iy {
						d[at] += math.Float32frombits(uint32(bf[x]) << 16)
					}
					continue
				}
				for x, at := range iy {
					d[at] += widen(gy[x*sw])
				}
			}
			narrow(gd[pl*hw:][:hw], d)
		}
	})
}

// AvgPool2d writes window means.
func (Backend) AvgPool2d(out, x backend.View, p backend.Pool2dParams, countIncludePad bool) {
	g := poolOf(x.Shape, out.Shape, p)
	floatKernel("avg_pool2d", x.S.DType(), func() { avgPool[float32](g, out, x, countIncludePad) }, func() { avgPool[float64](g, out, x, countIncludePad) })
}

// divisor is what window (oy, ox) is divided by: PyTorch counts the padded
// window clipped to the padded input when padding counts, else the part
// inside the input.
func (g poolGeom) divisor(oy, ox int, countIncludePad bool) int {
	if countIncludePad {
		hs, ws := oy*g.sh-g.ph, ox*g.sw-g.pw
		he, we := min(hs+g.kh, g.h+g.ph), min(ws+g.kw, g.w+g.pw)
		return (he - hs) * (we - ws)
	}
	h0, h1 := window(oy, g.sh, g.ph, g.kh, g.h)
	w0, w1 := window(ox, g.sw, g.pw, g.kw, g.w)
	return (h1 - h0) * (w1 - w0)
}

func avgPool[T floatT](g poolGeom, out, x backend.View, countIncludePad bool) {
	xd, od := data[T](x), data[T](out)
	sn, sc, sh, sw := x.Strides[0], x.Strides[1], x.Strides[2], x.Strides[3]
	parallelFor(g.n*g.c, g.oh*g.ow*g.kh*g.kw, func(lo, hi int) {
		for pl := lo; pl < hi; pl++ {
			src := pl/g.c*sn + pl%g.c*sc
			o := od[pl*g.oh*g.ow:][:g.oh*g.ow]
			for oy := 0; oy < g.oh; oy++ {
				h0, h1 := window(oy, g.sh, g.ph, g.kh, g.h)
				for ox := 0; ox < g.ow; ox++ {
					w0, w1 := window(ox, g.sw, g.pw, g.kw, g.w)
					var s T
					for i := h0; i < h1; i++ {
						r := src + i*sh
						for j := w0; j < w1; j++ {
							s += xd[r+j*sw]
						}
					}
					o[oy*g.ow+ox] = s / T(g.divisor(oy, ox, countIncludePad))
				}
			}
		}
	})
}

// AvgPool2dBackward spreads each output's gradient over its window.
func (Backend) AvgPool2dBackward(gx, gout backend.View, p backend.Pool2dParams, countIncludePad bool) {
	g := poolOf(gx.Shape, gout.Shape, p)
	floatKernel("avg_pool2d backward", gx.S.DType(), func() { avgPoolBack[float32](g, gx, gout, countIncludePad) }, func() { avgPoolBack[float64](g, gx, gout, countIncludePad) })
}

func avgPoolBack[T floatT](g poolGeom, gx, gout backend.View, countIncludePad bool) {
	gd, gs := data[T](gx), data[T](gout)
	sn, sc, sh, sw := gout.Strides[0], gout.Strides[1], gout.Strides[2], gout.Strides[3]
	hw := g.h * g.w
	parallelFor(g.n*g.c, hw+g.oh*g.ow*g.kh*g.kw, func(lo, hi int) {
		for pl := lo; pl < hi; pl++ {
			d := gd[pl*hw:][:hw]
			clear(d)
			src := pl/g.c*sn + pl%g.c*sc
			for oy := 0; oy < g.oh; oy++ {
				h0, h1 := window(oy, g.sh, g.ph, g.kh, g.h)
				for ox := 0; ox < g.ow; ox++ {
					w0, w1 := window(ox, g.sw, g.pw, g.kw, g.w)
					v := gs[src+oy*sh+ox*sw] / T(g.divisor(oy, ox, countIncludePad))
					for i := h0; i < h1; i++ {
						r := d[i*g.w+w0 : i*g.w+w1]
						for j := range r {
							r[j] += v
						}
					}
				}
			}
		}
	})
}
