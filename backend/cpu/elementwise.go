package cpu

import (
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/vec"
	"github.com/emberml/ember/backend/optable"
)

// The elementwise kernels (Fill, Copy, Unary, Binary, Where) coalesce their
// operands (backend.Coalesce), then run over 2-D blocks (layout.walk):
// contiguous rows go to package vec's vectorised loops for float types and
// to tight Go loops otherwise; other strides get a plain loop per block
// with no call per element or per short row.

// Fill sets every element.
func (Backend) Fill(dst backend.View, v float64) {
	switch dst.S.DType() {
	case backend.Float32:
		fill(dst, float32(v), vec.Fill[float32])
	case backend.Float64:
		fill(dst, v, vec.Fill[float64])
	case backend.Int64:
		fill(dst, int64(v), fillRow[int64])
	case backend.Int32:
		fill(dst, int32(v), fillRow[int32])
	case backend.Bool:
		fill(dst, v != 0, fillRow[bool])
	case backend.BFloat16:
		fill(dst, backend.ToBF16(float32(v)), fillRow[backend.BF16])
	case backend.Float16:
		fill(dst, backend.ToF16(float32(v)), fillRow[backend.F16])
	}
}

func fillRow[T any](d []T, v T) {
	for i := range d {
		d[i] = v
	}
}

func fill[T any](dst backend.View, v T, row func(d []T, v T)) {
	d := slice[T](dst.S)
	l := coalesce(dst.Shape, dst)
	s0, s1 := l.outer(0), l.inner(0)
	l.each(1, func(off []int, n0, n1 int) {
		for r := 0; r < n0; r++ {
			o := off[0] + r*s0
			if s1 == 1 {
				row(d[o:o+n1], v)
				continue
			}
			for i := 0; i < n1; i++ {
				d[o+i*s1] = v
			}
		}
	})
}

// Copy copies with dtype conversion.
func (Backend) Copy(dst, src backend.View) {
	if dst.NumElements() == 0 { // (gatherCopy's offset tables assume elements)
		return
	}
	switch dst.S.DType() {
	case backend.Float32:
		copyTo[float32](dst, src)
	case backend.Float64:
		copyTo[float64](dst, src)
	case backend.Int64:
		copyTo[int64](dst, src)
	case backend.Int32:
		copyTo[int32](dst, src)
	case backend.Bool:
		copyToBool(dst, src)
	case backend.BFloat16:
		copyToHalf(dst, src, backend.ToBF16, vec.BF16FromF32)
	case backend.Float16:
		copyToHalf(dst, src, backend.ToF16, vec.F16FromF32)
	}
}

// halfT is the host element type of the two-byte floats.
type halfT interface{ backend.BF16 | backend.F16 }

// copyToHalf copies any dtype into a BFloat16 or Float16 view through
// float32, rounding once with enc (float64 is rounded to float32 first, as
// PyTorch's conversions do); encRow is enc over contiguous float32 rows.
func copyToHalf[H halfT](dst, src backend.View, enc func(float32) H, encRow func([]H, []float32)) {
	if src.S.DType() == dst.S.DType() {
		copyView[H](dst, src)
		return
	}
	switch src.S.DType() {
	case backend.Float32:
		convView(dst, src, enc, encRow)
	case backend.Float64:
		mapView(dst, src, func(x float64) H { return enc(float32(x)) })
	case backend.Int64:
		mapView(dst, src, func(x int64) H { return enc(float32(x)) })
	case backend.Int32:
		mapView(dst, src, func(x int32) H { return enc(float32(x)) })
	case backend.Bool:
		mapView(dst, src, func(b bool) H {
			if b {
				return enc(1)
			}
			return 0
		})
	case backend.BFloat16:
		mapView(dst, src, func(x backend.BF16) H { return enc(x.Float32()) })
	case backend.Float16:
		mapView(dst, src, func(x backend.F16) H { return enc(x.Float32()) })
	}
}

func copyTo[D numT](dst, src backend.View) {
	if dst.S.DType() == backend.Float32 {
		switch src.S.DType() {
		case backend.BFloat16:
			convView(dst, src, backend.BF16.Float32, vec.F32FromBF16)
			return
		case backend.Float16:
			convView(dst, src, backend.F16.Float32, vec.F32FromF16)
			return
		}
	}
	switch src.S.DType() {
	case backend.Float32:
		castView[D, float32](dst, src)
	case backend.Float64:
		castView[D, float64](dst, src)
	case backend.Int64:
		castView[D, int64](dst, src)
	case backend.Int32:
		castView[D, int32](dst, src)
	case backend.Bool:
		mapView(dst, src, func(b bool) D {
			if b {
				return 1
			}
			return 0
		})
	case backend.BFloat16:
		mapView(dst, src, func(x backend.BF16) D { return D(x.Float32()) })
	case backend.Float16:
		mapView(dst, src, func(x backend.F16) D { return D(x.Float32()) })
	}
}

func copyToBool(dst, src backend.View) {
	switch src.S.DType() {
	case backend.Bool:
		copyView[bool](dst, src)
	case backend.Float32:
		mapView(dst, src, func(x float32) bool { return x != 0 })
	case backend.Float64:
		mapView(dst, src, func(x float64) bool { return x != 0 })
	case backend.Int64:
		mapView(dst, src, func(x int64) bool { return x != 0 })
	case backend.Int32:
		mapView(dst, src, func(x int32) bool { return x != 0 })
	case backend.BFloat16:
		mapView(dst, src, func(x backend.BF16) bool { return x.Float32() != 0 })
	case backend.Float16:
		mapView(dst, src, func(x backend.F16) bool { return x.Float32() != 0 })
	}
}

// castView copies src into dst converting S to D (copyView when equal).
func castView[D, S numT](dst, src backend.View) {
	d, s := slice[D](dst.S), slice[S](src.S)
	if _, same := any(d).([]S); same {
		copyView[S](dst, src)
		return
	}
	l := coalesce(dst.Shape, dst, src)
	sd0, sd1, ss0, ss1 := l.outer(0), l.inner(0), l.outer(1), l.inner(1)
	l.each(1, func(off []int, n0, n1 int) {
		for r := 0; r < n0; r++ {
			od, os := off[0]+r*sd0, off[1]+r*ss0
			if sd1 == 1 && ss1 == 1 {
				dd, sv := d[od:od+n1], s[os:os+n1]
				for i, x := range sv {
					dd[i] = D(x)
				}
				continue
			}
			dd, sv := d[od:], s[os:]
			for i := 0; i < n1; i++ {
				dd[i*sd1] = D(sv[i*ss1])
			}
		}
	})
}

// copyView copies src into dst of the same dtype: runs of memory where
// both rows are contiguous, cache-sized tiles where one is transposed
// relative to the other (Permute then Contiguous), a table of offsets
// where rows are short (windows, im2col), a loop per block otherwise.
func copyView[T any](dst, src backend.View) {
	d, s := slice[T](dst.S), slice[T](src.S)
	l := coalesce(dst.Shape, dst, src)
	if t := l.rowForTranspose(0, 1); t.transposed() {
		l = t
	} else if nd := len(l.Shape); nd >= 2 && l.Shape[nd-1] < 32 {
		gatherCopy(d, s, l)
		return
	}
	sd0, sd1, ss0, ss1 := l.outer(0), l.inner(0), l.outer(1), l.inner(1)
	l.each(1, func(off []int, n0, n1 int) {
		od, os := off[0], off[1]
		switch {
		case sd1 == 1 && ss1 == 1:
			for r := 0; r < n0; r++ {
				copy(d[od+r*sd0:][:n1], s[os+r*ss0:][:n1])
			}
		case sd1 == 1 && ss0 == 1 && n0 >= 4 && n1 >= 4:
			transposeBlock(d, od, sd0, s, os, ss1, n0, n1)
		default:
			for r := 0; r < n0; r++ {
				copyStrided(d[od+r*sd0:], s[os+r*ss0:], sd1, ss1, n1)
			}
		}
	})
}

// copyStrided sets d[i*sd] = s[i*ss] for i < n.
//
//go:noinline
func copyStrided[T any](d, s []T, sd, ss, n int) {
	for i := 0; i < n; i++ {
		d[i*sd] = s[i*ss]
	}
}

// transposed reports whether a two-operand layout's blocks are
// transpositions worth tiling: operand 0's rows and operand 1's columns
// contiguous, both sides at least a tile.
func (l layout) transposed() bool {
	nd := len(l.Shape)
	return nd >= 2 && l.inner(0) == 1 && l.outer(1) == 1 && l.inner(1) != 1 && l.Shape[nd-1] >= 16 && l.Shape[nd-2] >= 16
}

// gatherCopy copies a layout with short rows: the offsets of a sub-block of
// the innermost dims (up to 2048 elements) are tabled once for both
// operands, and every sub-block is then one loop over the tables.
func gatherCopy[T any](d, s []T, l layout) {
	nd := len(l.Shape)
	k, inner := 0, 1
	for k < nd && inner*l.Shape[nd-1-k] <= 2048 {
		inner *= l.Shape[nd-1-k]
		k++
	}
	k = max(k, 1)
	inner = 1
	for _, n := range l.Shape[nd-k:] {
		inner *= n
	}
	td, ts := make([]int, inner), make([]int, inner)
	sub := l.Shape[nd-k:]
	sd, ss := l.Strides[0][nd-k:], l.Strides[1][nd-k:]
	idx := make([]int, k)
	od, os := 0, 0
	for t := range td {
		td[t], ts[t] = od, os
		for i := k - 1; i >= 0; i-- {
			idx[i]++
			od, os = od+sd[i], os+ss[i]
			if idx[i] < sub[i] {
				break
			}
			idx[i] = 0
			od, os = od-sub[i]*sd[i], os-sub[i]*ss[i]
		}
	}
	outer := layout{Shape: l.Shape[:nd-k], Strides: [][]int{l.Strides[0][:nd-k], l.Strides[1][:nd-k]}, Base: l.Base}
	if len(outer.Shape) == 0 {
		outer.Shape, outer.Strides = []int{1}, [][]int{{0}, {0}}
	}
	s0d, s1d, s0s, s1s := outer.outer(0), outer.inner(0), outer.outer(1), outer.inner(1)
	outer.each(inner, func(off []int, n0, n1 int) {
		for r := 0; r < n0; r++ {
			for j := 0; j < n1; j++ {
				gather(d[off[0]+r*s0d+j*s1d:], s[off[1]+r*s0s+j*s1s:], td, ts)
			}
		}
	})
}

// gather sets d[td[t]] = s[ts[t]]. It is a function of its own, not
// inlined, so that its few variables stay in registers.
//
//go:noinline
func gather[T any](d, s []T, td, ts []int) {
	ts = ts[:len(td)]
	for t, o := range td {
		d[o] = s[ts[t]]
	}
}

// transposeBlock copies an n0×n1 block whose destination rows are
// contiguous (row stride sd0) and whose source columns are (column stride
// ss1): vec.Transpose's register blocks for 4- and 8-byte elements (the
// integers moved as float bits, which loads and stores keep exactly),
// transposeTiles for bool.
func transposeBlock[T any](d []T, od, sd0 int, s []T, os, ss1, n0, n1 int) {
	switch dd := any(d).(type) {
	case []float32:
		vec.Transpose(dd[od:], sd0, any(s).([]float32)[os:], ss1, n0, n1)
	case []float64:
		vec.Transpose(dd[od:], sd0, any(s).([]float64)[os:], ss1, n0, n1)
	case []int32:
		vec.Transpose(asBits[float32](dd)[od:], sd0, asBits[float32](any(s).([]int32))[os:], ss1, n0, n1)
	case []int64:
		vec.Transpose(asBits[float64](dd)[od:], sd0, asBits[float64](any(s).([]int64))[os:], ss1, n0, n1)
	default:
		transposeTiles(d, od, sd0, s, os, ss1, n0, n1)
	}
}

// asBits views a slice of 4- or 8-byte integers as floats of that size.
func asBits[F float32 | float64, I int32 | int64](s []I) []F {
	return unsafe.Slice((*F)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// transposeTiles copies an n0×n1 block whose destination rows are
// contiguous (row stride sd0) and whose source columns are (column stride
// ss1), in 16×16 tiles so that both sides stay in cache.
func transposeTiles[T any](d []T, od, sd0 int, s []T, os, ss1, n0, n1 int) {
	const tile = 32
	for r0 := 0; r0 < n0; r0 += tile {
		r1 := min(r0+tile, n0)
		for c0 := 0; c0 < n1; c0 += tile {
			c1 := min(c0+tile, n1)
			for r := r0; r < r1; r++ {
				dd := d[od+r*sd0:][c0:c1]
				so := os + r + c0*ss1
				for i := range dd {
					dd[i] = s[so+i*ss1]
				}
			}
		}
	}
}

// rowForTranspose reorders an elementwise layout so that, when operand a's
// last dim is contiguous and operand b's is not but b has a contiguous dim,
// that dim becomes the block's row dim: the block is then a transposition
// that transposeTiles serves. The order of iteration does not matter to
// elementwise kernels.
func (l layout) rowForTranspose(a, b int) layout {
	nd := len(l.Shape)
	if nd < 2 || l.inner(a) != 1 || l.inner(b) == 1 {
		return l
	}
	p := -1
	for i := 0; i < nd-1; i++ {
		if l.Strides[b][i] == 1 && l.Shape[i] > 1 {
			p = i
		}
	}
	if p < 0 || p == nd-2 {
		return l
	}
	move := func(s []int) []int {
		o := make([]int, 0, nd)
		o = append(o, s[:p]...)
		o = append(o, s[p+1:nd-1]...)
		return append(o, s[p], s[nd-1])
	}
	m := layout{Shape: move(l.Shape), Strides: make([][]int, len(l.Strides)), Base: l.Base}
	for k, st := range l.Strides {
		m.Strides[k] = move(st)
	}
	return m
}

// mapView writes f(src) into dst elementwise (conversions through bool).
func mapView[D, S any](dst, src backend.View, f func(S) D) {
	d, s := slice[D](dst.S), slice[S](src.S)
	l := coalesce(dst.Shape, dst, src)
	sd0, sd1, ss0, ss1 := l.outer(0), l.inner(0), l.outer(1), l.inner(1)
	l.each(1, func(off []int, n0, n1 int) {
		for r := 0; r < n0; r++ {
			od, os := off[0]+r*sd0, off[1]+r*ss0
			for i := 0; i < n1; i++ {
				d[od+i*sd1] = f(s[os+i*ss1])
			}
		}
	})
}

// convView is mapView with row serving the rows where both operands are
// contiguous (a tight conversion loop, package vec's) and f the others.
func convView[D, S any](dst, src backend.View, f func(S) D, row func([]D, []S)) {
	d, s := slice[D](dst.S), slice[S](src.S)
	l := coalesce(dst.Shape, dst, src)
	sd0, sd1, ss0, ss1 := l.outer(0), l.inner(0), l.outer(1), l.inner(1)
	l.each(1, func(off []int, n0, n1 int) {
		for r := 0; r < n0; r++ {
			od, os := off[0]+r*sd0, off[1]+r*ss0
			if sd1 == 1 && ss1 == 1 {
				row(d[od:od+n1], s[os:os+n1])
				continue
			}
			for i := 0; i < n1; i++ {
				d[od+i*sd1] = f(s[os+i*ss1])
			}
		}
	})
}

// Unary applies an elementwise function.
func (Backend) Unary(op backend.UnaryOp, dst, src backend.View, p backend.Params) {
	l := coalesce(dst.Shape, dst, src)
	cost, pred := op.Cost(), op.Class() == optable.Predicate
	ok := false
	switch src.S.DType() {
	case backend.Float32:
		ok = unaryDispatch(l, cost, pred, op, dst, src, p, unaryFloat32, unaryFloat32Pred)
	case backend.Float64:
		ok = unaryDispatch(l, cost, pred, op, dst, src, p, unaryFloat64, unaryFloat64Pred)
	case backend.Int64:
		ok = unaryDispatch(l, cost, pred, op, dst, src, p, unaryInt64, unaryInt64Pred)
	case backend.Int32:
		ok = unaryDispatch(l, cost, pred, op, dst, src, p, unaryInt32, unaryInt32Pred)
	case backend.Bool:
		ok = unaryDispatch(l, cost, pred, op, dst, src, p, unaryBool, unaryBoolPred)
	case backend.BFloat16:
		ok = unaryDispatch(l, cost, pred, op, dst, src, p, unaryBFloat16Rows, unaryBFloat16Pred)
	case backend.Float16:
		ok = unaryDispatch(l, cost, pred, op, dst, src, p, unaryFloat16, unaryFloat16Pred)
	}
	if !ok {
		notImpl(op.String(), src.S.DType())
	}
}

// unaryFn is a generated unary kernel over one 2-D block.
type unaryFn[D, T any] func(op backend.UnaryOp, d []D, od, sd0, sd1 int, a []T, oa, sa0, sa1, n0, n1 int, p1, p2, p3 float64) bool

// unaryDispatch runs the generated kernel (toBool for predicates) over the
// blocks of l, or reports that it lacks the op.
func unaryDispatch[T any](l layout, cost int, pred bool, op backend.UnaryOp, dst, src backend.View, p backend.Params, same unaryFn[T, T], toBool unaryFn[bool, T]) bool {
	a := slice[T](src.S)
	if pred {
		return runUnary(l, cost, op, slice[bool](dst.S), a, p, toBool)
	}
	return runUnary(l, cost, op, slice[T](dst.S), a, p, same)
}

func runUnary[D, T any](l layout, cost int, op backend.UnaryOp, d []D, a []T, p backend.Params, fn unaryFn[D, T]) bool {
	if !fn(op, d, 0, 0, 1, a, 0, 0, 1, 0, 0, p[0], p[1], p[2]) {
		return false
	}
	sd0, sd1, sa0, sa1 := l.outer(0), l.inner(0), l.outer(1), l.inner(1)
	l.each(cost, func(off []int, n0, n1 int) {
		fn(op, d, off[0], sd0, sd1, a, off[1], sa0, sa1, n0, n1, p[0], p[1], p[2])
	})
	return true
}

// Binary applies an elementwise function of two operands.
func (Backend) Binary(op backend.BinaryOp, dst, a, b backend.View) {
	l := coalesce(dst.Shape, dst, a, b)
	cost := op.Cost()
	cmp := dst.S.DType() == backend.Bool
	ok := false
	switch a.S.DType() {
	case backend.Float32:
		ok = binaryDispatch(l, cost, cmp, op, dst, a, b, binaryFloat32, binaryFloat32Bool)
	case backend.Float64:
		ok = binaryDispatch(l, cost, cmp, op, dst, a, b, binaryFloat64, binaryFloat64Bool)
	case backend.Int64:
		ok = binaryDispatch(l, cost, cmp, op, dst, a, b, binaryInt64, binaryInt64Bool)
	case backend.Int32:
		ok = binaryDispatch(l, cost, cmp, op, dst, a, b, binaryInt32, binaryInt32Bool)
	case backend.Bool:
		ok = binaryDispatch(l, cost, cmp, op, dst, a, b, nil, binaryBoolBool)
	case backend.BFloat16:
		ok = binaryDispatch(l, cost, cmp, op, dst, a, b, binaryBFloat16Rows, binaryBFloat16BoolRows)
	case backend.Float16:
		ok = binaryDispatch(l, cost, cmp, op, dst, a, b, binaryFloat16, binaryFloat16Bool)
	}
	if !ok {
		notImpl(op.String(), a.S.DType())
	}
}

// blockFn is a generated binary kernel over one 2-D block.
type blockFn[D, T any] func(op backend.BinaryOp, d []D, od, sd0, sd1 int, a []T, oa, sa0, sa1 int, b []T, ob, sb0, sb1, n0, n1 int) bool

func binaryDispatch[T any](l layout, cost int, cmp bool, op backend.BinaryOp, dst, a, b backend.View, same blockFn[T, T], toBool blockFn[bool, T]) bool {
	x, y := slice[T](a.S), slice[T](b.S)
	switch {
	case cmp:
		return runBinary(l, cost, op, slice[bool](dst.S), x, y, toBool)
	case same != nil:
		return runBinary(l, cost, op, slice[T](dst.S), x, y, same)
	}
	return false
}

// runBinary runs a generated kernel over the blocks of l, or reports that
// it lacks the op.
func runBinary[D, T any](l layout, cost int, op backend.BinaryOp, d []D, x, y []T, fn blockFn[D, T]) bool {
	if !fn(op, d, 0, 0, 1, x, 0, 0, 1, y, 0, 0, 1, 0, 0) {
		return false
	}
	sd0, sd1, sa0, sa1, sb0, sb1 := l.outer(0), l.inner(0), l.outer(1), l.inner(1), l.outer(2), l.inner(2)
	l.each(cost, func(off []int, n0, n1 int) {
		fn(op, d, off[0], sd0, sd1, x, off[1], sa0, sa1, y, off[2], sb0, sb1, n0, n1)
	})
	return true
}

// Where selects elementwise.
func (Backend) Where(dst, cond, a, b backend.View) {
	switch dst.S.DType() {
	case backend.Float32:
		where(dst, cond, a, b, vec.Where[float32], vec.WhereScalarB[float32], vec.WhereScalarA[float32])
	case backend.Float64:
		where(dst, cond, a, b, vec.Where[float64], vec.WhereScalarB[float64], vec.WhereScalarA[float64])
	case backend.Int64:
		where(dst, cond, a, b, vec.Where[int64], vec.WhereScalarB[int64], vec.WhereScalarA[int64])
	case backend.Int32:
		where(dst, cond, a, b, vec.Where[int32], vec.WhereScalarB[int32], vec.WhereScalarA[int32])
	case backend.Bool:
		where(dst, cond, a, b, vec.Where[bool], vec.WhereScalarB[bool], vec.WhereScalarA[bool])
	case backend.BFloat16:
		where(dst, cond, a, b, vec.Where[backend.BF16], vec.WhereScalarB[backend.BF16], vec.WhereScalarA[backend.BF16])
	case backend.Float16:
		where(dst, cond, a, b, vec.Where[backend.F16], vec.WhereScalarB[backend.F16], vec.WhereScalarA[backend.F16])
	}
}

// where runs the row loops vv (a and b rows), vs (b a scalar) and sv (a a
// scalar) on contiguous rows, and a plain loop on other strides.
func where[T any](dst, cond, a, b backend.View,
	vv func(d []T, c []bool, a, b []T), vs func(d []T, c []bool, a []T, s T), sv func(d []T, c []bool, s T, b []T)) {
	d, c, x, y := slice[T](dst.S), slice[bool](cond.S), slice[T](a.S), slice[T](b.S)
	l := coalesce(dst.Shape, dst, cond, a, b)
	sd0, sd1, sc0, sc1 := l.outer(0), l.inner(0), l.outer(1), l.inner(1)
	sa0, sa1, sb0, sb1 := l.outer(2), l.inner(2), l.outer(3), l.inner(3)
	l.each(1, func(off []int, n0, n1 int) {
		for r := 0; r < n0; r++ {
			od, oc, oa, ob := off[0]+r*sd0, off[1]+r*sc0, off[2]+r*sa0, off[3]+r*sb0
			if sd1 == 1 && sc1 == 1 {
				dd, cc := d[od:od+n1], c[oc:oc+n1]
				switch {
				case sa1 == 1 && sb1 == 1:
					vv(dd, cc, x[oa:oa+n1], y[ob:ob+n1])
					continue
				case sa1 == 1 && sb1 == 0:
					vs(dd, cc, x[oa:oa+n1], y[ob])
					continue
				case sa1 == 0 && sb1 == 1:
					sv(dd, cc, x[oa], y[ob:ob+n1])
					continue
				}
			}
			whereStrided(d[od:], c[oc:], x[oa:], y[ob:], sd1, sc1, sa1, sb1, n1)
		}
	})
}

// whereStrided is where's loop for any strides (not inlined: its
// variables stay in registers).
//
//go:noinline
func whereStrided[T any](d []T, c []bool, a, b []T, sd, sc, sa, sb, n int) {
	for i := 0; i < n; i++ {
		if c[i*sc] {
			d[i*sd] = a[i*sa]
		} else {
			d[i*sd] = b[i*sb]
		}
	}
}
