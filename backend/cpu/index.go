package cpu

import (
	"cmp"

	"slices"

	"github.com/emberml/ember/backend"
)

// The indexing kernels (backend.Indexer): loops over strided views, one
// row (the last coalesced dim) at a time, split over goroutines by rows
// where rows are independent.

// rows is a coalesced iteration space walked row by row: every dim but the
// last indexes a row, the last is the inner loop.
type rows struct {
	shape []int
	st    [][]int
	inner int   // size of the last dim
	in    []int // each operand's stride in the last dim
	n     int   // number of rows
}

func makeRows(shape []int, strides ...[]int) rows {
	cs, cst := backend.Coalesce(shape, strides...)
	nd := len(cs)
	r := rows{shape: cs, st: cst, inner: cs[nd-1], in: make([]int, len(strides)), n: 1}
	for k := range cst {
		r.in[k] = cst[k][nd-1]
	}
	for _, d := range cs[:nd-1] {
		r.n *= d
	}
	for _, d := range shape {
		if d == 0 {
			r.n = 0
		}
	}
	return r
}

// at writes into off each operand's offset of row i's first element.
func (r *rows) at(i int, off []int) {
	for k := range off {
		off[k] = 0
	}
	for d := len(r.shape) - 2; d >= 0; d-- {
		n := r.shape[d]
		q := i / n
		x := i - q*n
		i = q
		for k := range off {
			off[k] += x * r.st[k][d]
		}
	}
}

// without returns strides with dim's entry set to 0, and shape with dim's
// size set to n (n < 0 keeps it).
func without(strides []int, dim int) []int {
	s := append([]int(nil), strides...)
	s[dim] = 0
	return s
}

func withDim(shape []int, dim, n int) []int {
	s := append([]int(nil), shape...)
	s[dim] = n
	return s
}

// Gather writes dst[p] = src[p with dim ← index[p]].
func (Backend) Gather(dst, src, index backend.View, dim int) {
	switch dst.S.DType() {
	case backend.Float32:
		ixGather[float32](dst, src, index, dim)
	case backend.Float64:
		ixGather[float64](dst, src, index, dim)
	case backend.Int64:
		ixGather[int64](dst, src, index, dim)
	case backend.Int32:
		ixGather[int32](dst, src, index, dim)
	case backend.Bool:
		ixGather[bool](dst, src, index, dim)
	case backend.BFloat16:
		ixGather[backend.BF16](dst, src, index, dim)
	case backend.Float16:
		ixGather[backend.F16](dst, src, index, dim)
	default:
		notImpl("gather", dst.S.DType())
	}
}

// selectForm returns the [outer, n, inner] blocks of an index_select-like
// Gather or Scatter along dim: index (of shape) varies along dim alone, and
// the data views a and b are both contiguous, of shape but along dim; ok is
// false otherwise. is is index's stride along dim.
func selectForm(shape []int, index, a, b backend.View, dim int) (outer, inner, is int, ok bool) {
	for k, st := range index.Strides {
		if k != dim && (st != 0 && shape[k] != 1 || a.Shape[k] != shape[k] || b.Shape[k] != shape[k]) {
			return 0, 0, 0, false
		}
	}
	if !a.IsContiguous() || !b.IsContiguous() {
		return 0, 0, 0, false
	}
	outer, inner = 1, 1
	for k := 0; k < dim; k++ {
		outer *= shape[k]
	}
	for k := dim + 1; k < len(shape); k++ {
		inner *= shape[k]
	}
	return outer, inner, index.Strides[dim], true
}

func ixGather[T any](dst, src, index backend.View, dim int) {
	d, s, ix := slice[T](dst.S), slice[T](src.S), slice[int64](index.S)
	if outer, inner, is, ok := selectForm(dst.Shape, index, dst, src, dim); ok {
		// index_select: whole rows of inner elements copied, split over
		// outer × n; or, along the last dim, one element a step
		n, m := dst.Shape[dim], src.Shape[dim]
		if inner == 1 {
			parallelFor(outer, n*2, func(lo, hi int) {
				for o := lo; o < hi; o++ {
					dr := d[dst.Offset+o*n : dst.Offset+(o+1)*n]
					sr := s[src.Offset+o*m : src.Offset+(o+1)*m]
					for j := range dr {
						dr[j] = sr[ix[index.Offset+j*is]]
					}
				}
			})
			return
		}
		parallelFor(outer*n, inner*2, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				o, j := r/n, r%n
				so := src.Offset + (o*m+int(ix[index.Offset+j*is]))*inner
				do := dst.Offset + r*inner
				copy(d[do:do+inner], s[so:so+inner])
			}
		})
		return
	}
	sd := src.Strides[dim]
	r := makeRows(dst.Shape, dst.Strides, index.Strides, without(src.Strides, dim))
	parallelFor(r.n, r.inner*2, func(lo, hi int) {
		var off [3]int
		for i := lo; i < hi; i++ {
			r.at(i, off[:])
			od, oi, os := dst.Offset+off[0], index.Offset+off[1], src.Offset+off[2]
			for k := 0; k < r.inner; k++ {
				d[od+k*r.in[0]] = s[os+k*r.in[2]+int(ix[oi+k*r.in[1]])*sd]
			}
		}
	})
}

// Scatter writes (or adds) src[p] at dst[p with dim ← index[p]].
func (Backend) Scatter(dst, index, src backend.View, dim int, accumulate bool) {
	switch dst.S.DType() {
	case backend.Float32:
		ixScatter[float32](dst, index, src, dim, accumulate)
	case backend.Float64:
		ixScatter[float64](dst, index, src, dim, accumulate)
	case backend.Int64:
		ixScatter[int64](dst, index, src, dim, accumulate)
	case backend.Int32:
		ixScatter[int32](dst, index, src, dim, accumulate)
	case backend.Bool:
		if accumulate {
			notImpl("scatter_add", backend.Bool)
		}
		ixScatterSet[bool](dst, index, src, dim)
	case backend.BFloat16:
		if accumulate {
			ixScatterAddHalf(dst, index, src, dim, backend.BF16.Float32, backend.ToBF16)
			return
		}
		ixScatterSet[backend.BF16](dst, index, src, dim)
	case backend.Float16:
		if accumulate {
			ixScatterAddHalf(dst, index, src, dim, backend.F16.Float32, backend.ToF16)
			return
		}
		ixScatterSet[backend.F16](dst, index, src, dim)
	default:
		notImpl("scatter", dst.S.DType())
	}
}

// ixScatterAddHalf adds src[p] at dst[p with dim ← index[p]] for a
// two-byte float: each addition in float32, rounded once (as PyTorch's
// index_add/scatter_add on bf16 and fp16).
func ixScatterAddHalf[H ~uint16](dst, index, src backend.View, dim int, dec func(H) float32, enc func(float32) H) {
	d, s, ix := slice[H](dst.S), slice[H](src.S), slice[int64](index.S)
	dd := dst.Strides[dim]
	r := makeRows(index.Shape, index.Strides, src.Strides, without(dst.Strides, dim))
	var off [3]int
	for i := 0; i < r.n; i++ {
		r.at(i, off[:])
		oi, os, od := index.Offset+off[0], src.Offset+off[1], dst.Offset+off[2]
		for k := 0; k < r.inner; k++ {
			p := od + k*r.in[2] + int(ix[oi+k*r.in[0]])*dd
			d[p] = enc(dec(d[p]) + dec(s[os+k*r.in[1]]))
		}
	}
}

func ixScatter[T numT](dst, index, src backend.View, dim int, accumulate bool) {
	if !accumulate {
		ixScatterSet[T](dst, index, src, dim)
		return
	}
	d, s, ix := slice[T](dst.S), slice[T](src.S), slice[int64](index.S)
	if outer, inner, is, ok := selectForm(index.Shape, index, src, dst, dim); ok {
		// index_add: rows of inner elements added, every destination
		// element in the same order as below (ascending position along
		// dim); split over outer and, when outer is small, over pieces of
		// the rows, so that no two workers write one element
		n, m := src.Shape[dim], dst.Shape[dim]
		pieces := 1
		if outer < 8 {
			pieces = max(1, min(8, inner/2048))
		}
		parallelFor(outer*pieces, n*inner/pieces*2, func(lo, hi int) {
			for t := lo; t < hi; t++ {
				o, c := t/pieces, t%pieces
				a, b := inner*c/pieces, inner*(c+1)/pieces
				if inner == 1 {
					dr, sr := d[dst.Offset+o*m:dst.Offset+(o+1)*m], s[src.Offset+o*n:src.Offset+(o+1)*n]
					for j, v := range sr {
						dr[ix[index.Offset+j*is]] += v
					}
					continue
				}
				for j := 0; j < n; j++ {
					so := src.Offset + (o*n+j)*inner
					do := dst.Offset + (o*m+int(ix[index.Offset+j*is]))*inner
					dr, sr := d[do+a:do+b], s[so+a:so+b]
					for k := range dr {
						dr[k] += sr[k]
					}
				}
			}
		})
		return
	}
	dd := dst.Strides[dim]
	r := makeRows(index.Shape, index.Strides, src.Strides, without(dst.Strides, dim))
	var off [3]int
	for i := 0; i < r.n; i++ {
		r.at(i, off[:])
		oi, os, od := index.Offset+off[0], src.Offset+off[1], dst.Offset+off[2]
		for k := 0; k < r.inner; k++ {
			d[od+k*r.in[2]+int(ix[oi+k*r.in[0]])*dd] += s[os+k*r.in[1]]
		}
	}
}

func ixScatterSet[T any](dst, index, src backend.View, dim int) {
	d, s, ix := slice[T](dst.S), slice[T](src.S), slice[int64](index.S)
	dd := dst.Strides[dim]
	r := makeRows(index.Shape, index.Strides, src.Strides, without(dst.Strides, dim))
	var off [3]int
	for i := 0; i < r.n; i++ {
		r.at(i, off[:])
		oi, os, od := index.Offset+off[0], src.Offset+off[1], dst.Offset+off[2]
		for k := 0; k < r.inner; k++ {
			d[od+k*r.in[2]+int(ix[oi+k*r.in[0]])*dd] = s[os+k*r.in[1]]
		}
	}
}

// Scan writes the cumulative sum or product along dim.
func (Backend) Scan(dst, src backend.View, dim int, prod, reverse bool) {
	switch dst.S.DType() {
	case backend.Float32:
		ixScan[float32, float64](dst, src, dim, prod, reverse)
	case backend.Float64:
		ixScan[float64, float64](dst, src, dim, prod, reverse)
	case backend.Int64:
		ixScan[int64, int64](dst, src, dim, prod, reverse)
	default:
		notImpl("cumsum", dst.S.DType())
	}
}

func ixScan[T, A numT](dst, src backend.View, dim int, prod, reverse bool) {
	d, s := slice[T](dst.S), slice[T](src.S)
	n := dst.Shape[dim]
	ds, ss := dst.Strides[dim], src.Strides[dim]
	r := makeRows(withDim(dst.Shape, dim, 1), dst.Strides, src.Strides)
	if n == 0 {
		return
	}
	lines := r.n * r.inner
	parallelFor(lines, n*2, func(lo, hi int) {
		var off [2]int
		for l := lo; l < hi; l++ {
			r.at(l/r.inner, off[:])
			k := l % r.inner
			od, os := dst.Offset+off[0]+k*r.in[0], src.Offset+off[1]+k*r.in[1]
			start, step := 0, 1
			if reverse {
				start, step = n-1, -1
			}
			var acc A
			if prod {
				acc = 1
			}
			for j, c := start, 0; c < n; j, c = j+step, c+1 {
				if prod {
					acc *= A(s[os+j*ss])
				} else {
					acc += A(s[os+j*ss])
				}
				d[od+j*ds] = T(acc)
			}
		}
	})
}

// Sort sorts every line along dim, stably, NaN last (first descending).
func (Backend) Sort(values, indices, src backend.View, dim int, descending bool) {
	switch src.S.DType() {
	case backend.Float32:
		sortLines[float32](values, indices, src, dim, descending, true)
	case backend.Float64:
		sortLines[float64](values, indices, src, dim, descending, true)
	case backend.Int64:
		sortLines[int64](values, indices, src, dim, descending, false)
	case backend.Int32:
		sortLines[int32](values, indices, src, dim, descending, false)
	case backend.Bool:
		sortBools(values, indices, src, dim, descending)
	default:
		notImpl("sort", src.S.DType())
	}
}

type keyed[T any] struct {
	v T
	i int64
}

func sortLines[T numT](values, indices, src backend.View, dim int, descending, float bool) {
	vd, id, s := slice[T](values.S), slice[int64](indices.S), slice[T](src.S)
	n := src.Shape[dim]
	vs, is, ss := values.Strides[dim], indices.Strides[dim], src.Strides[dim]
	r := makeRows(withDim(src.Shape, dim, 1), values.Strides, indices.Strides, src.Strides)
	if n == 0 {
		return
	}
	less := func(a, b keyed[T]) int { return cmp.Compare(a.v, b.v) } // cmp.Compare orders NaN first
	if float {
		less = func(a, b keyed[T]) int {
			an, bn := a.v != a.v, b.v != b.v
			switch {
			case an && bn:
				return 0
			case an:
				return 1
			case bn:
				return -1
			}
			return cmp.Compare(a.v, b.v)
		}
	}
	order := less
	if descending {
		order = func(a, b keyed[T]) int { return less(b, a) }
	}
	lines := r.n * r.inner
	parallelFor(lines, n*16, func(lo, hi int) {
		var off [3]int
		buf := make([]keyed[T], n)
		for l := lo; l < hi; l++ {
			r.at(l/r.inner, off[:])
			k := l % r.inner
			ov, oi, os := values.Offset+off[0]+k*r.in[0], indices.Offset+off[1]+k*r.in[1], src.Offset+off[2]+k*r.in[2]
			for j := range buf {
				buf[j] = keyed[T]{s[os+j*ss], int64(j)}
			}
			slices.SortStableFunc(buf, order)
			for j, e := range buf {
				vd[ov+j*vs] = e.v
				id[oi+j*is] = e.i
			}
		}
	})
}

// sortBools is a stable counting sort of bool lines.
func sortBools(values, indices, src backend.View, dim int, descending bool) {
	vd, id, s := slice[bool](values.S), slice[int64](indices.S), slice[bool](src.S)
	n := src.Shape[dim]
	vs, is, ss := values.Strides[dim], indices.Strides[dim], src.Strides[dim]
	r := makeRows(withDim(src.Shape, dim, 1), values.Strides, indices.Strides, src.Strides)
	var off [3]int
	for l := 0; l < r.n*r.inner && n > 0; l++ {
		r.at(l/r.inner, off[:])
		k := l % r.inner
		ov, oi, os := values.Offset+off[0]+k*r.in[0], indices.Offset+off[1]+k*r.in[1], src.Offset+off[2]+k*r.in[2]
		p := 0
		for _, first := range []bool{descending, !descending} {
			for j := 0; j < n; j++ {
				if s[os+j*ss] == first {
					vd[ov+p*vs] = first
					id[oi+p*is] = int64(j)
					p++
				}
			}
		}
	}
}
