package cpu

import (
	"math"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/vec"
)

// Reduce reduces src over the dims where dst has size 1 and src does not.
func (Backend) Reduce(op backend.ReduceOp, dst, src backend.View) {
	if op == backend.ArgMax || op == backend.ArgMin {
		switch src.S.DType() {
		case backend.Float32:
			argReduce[float32](op, dst, src)
		case backend.Float64:
			argReduce[float64](op, dst, src)
		case backend.Int64:
			argReduce[int64](op, dst, src)
		case backend.Int32:
			argReduce[int32](op, dst, src)
		default:
			notImpl(op.String(), src.S.DType())
		}
		return
	}
	if op == backend.Any || op == backend.All {
		anyAll(op == backend.All, dst, src)
		return
	}
	switch src.S.DType() {
	case backend.Float32:
		reduceNum[float32](op, dst, src)
	case backend.Float64:
		reduceNum[float64](op, dst, src)
	case backend.Int64:
		reduceNum[int64](op, dst, src)
	case backend.Int32:
		reduceNum[int32](op, dst, src)
	default:
		notImpl(op.String(), src.S.DType())
	}
}

// split returns the kept-dims layout (dst, src over the kept shape) and the
// reduced-dims layout (src over the reduced shape, base 0).
func split(dst, src backend.View) (kept, red layout) {
	ks := make([]int, len(src.Shape))
	rs := make([]int, len(src.Shape))
	for i, d := range src.Shape {
		if dst.Shape[i] == 1 && d != 1 {
			ks[i], rs[i] = 1, d
		} else {
			ks[i], rs[i] = d, 1
		}
	}
	kept = coalesce(ks, dst, src)
	r := src
	r.Offset = 0
	red = coalesce(rs, r)
	return kept, red
}

func identity[T numT](op backend.ReduceOp) T {
	var z T
	switch op {
	case backend.Prod:
		return 1
	case backend.Max:
		return lowest(z)
	case backend.Min:
		return highest(z)
	}
	return 0
}

func lowest[T numT](z T) T {
	switch any(z).(type) {
	case float32:
		return T(float32(math.Inf(-1)))
	case float64:
		return T(math.Inf(-1))
	case int64:
		v := int64(math.MinInt64)
		return T(v)
	case int32:
		v := int32(math.MinInt32)
		return T(v)
	}
	return 0
}

func highest[T numT](z T) T {
	switch any(z).(type) {
	case float32:
		return T(float32(math.Inf(1)))
	case float64:
		return T(math.Inf(1))
	case int64:
		v := int64(math.MaxInt64)
		return T(v)
	case int32:
		v := int32(math.MaxInt32)
		return T(v)
	}
	return 0
}

// combine folds n elements of s (stride st from off) into acc. Float sums
// do not come here (see sumRun).
func combine[T numT](op backend.ReduceOp, acc T, s []T, off, st, n int) T {
	if n == 0 {
		return acc
	}
	switch op {
	case backend.Sum:
		if st == 1 {
			return acc + sumInts(s[off:off+n])
		}
		for i := 0; i < n; i++ {
			acc += s[off+i*st]
		}
	case backend.Prod:
		for i := 0; i < n; i++ {
			acc *= s[off+i*st]
		}
	case backend.Max, backend.Min:
		if st == 1 && n >= 32 {
			if v, ok := extremeRun(s[off:off+n], op == backend.Max); ok {
				return merge2(op, acc, v)
			}
		}
		isMax := op == backend.Max
		for i := 0; i < n; i++ {
			x := s[off+i*st]
			if x != x {
				return x
			}
			if isMax && x > acc || !isMax && x < acc {
				acc = x
			}
		}
	}
	return acc
}

// extremeRun is vec.Max/Min of a contiguous float run (ok false for ints).
func extremeRun[T numT](s []T, isMax bool) (T, bool) {
	var v T
	switch x := any(s).(type) {
	case []float32:
		if isMax {
			v = T(vec.Max(x))
		} else {
			v = T(vec.Min(x))
		}
	case []float64:
		if isMax {
			v = T(vec.Max(x))
		} else {
			v = T(vec.Min(x))
		}
	default:
		return v, false
	}
	return v, true
}

// sumRun adds n floats of s (stride st from off) in float64 at the end:
// contiguous runs through vec.Sum (float32 lanes over short blocks).
func sumRun[T numT](s []T, off, st, n int) float64 {
	if st == 1 && n >= 32 {
		switch x := any(s[off : off+n]).(type) {
		case []float32:
			return vec.Sum(x)
		case []float64:
			return vec.Sum(x)
		}
	}
	var t float64
	for i := 0; i < n; i++ {
		t += float64(s[off+i*st])
	}
	return t
}

// sumInts adds a contiguous run of integers with four accumulators.
func sumInts[T numT](s []T) T {
	var a0, a1, a2, a3 T
	i := 0
	for ; i+4 <= len(s); i += 4 {
		a0 += s[i]
		a1 += s[i+1]
		a2 += s[i+2]
		a3 += s[i+3]
	}
	for ; i < len(s); i++ {
		a0 += s[i]
	}
	return (a0 + a1) + (a2 + a3)
}

func isFloatT[T numT]() bool {
	var z T
	switch any(z).(type) {
	case float32, float64:
		return true
	}
	return false
}

func merge2[T numT](op backend.ReduceOp, a, b T) T {
	switch op {
	case backend.Sum:
		return a + b
	case backend.Prod:
		return a * b
	case backend.Max:
		if b > a || b != b {
			return b
		}
	case backend.Min:
		if b < a || b != b {
			return b
		}
	}
	return a
}

// forKept calls f with the dst and src offsets of every kept element, in
// parallel when the work (cost per element) is large.
func forKept(kept layout, cost int, f func(od, os int)) {
	sd0, sd1, ss0, ss1 := kept.outer(0), kept.inner(0), kept.outer(1), kept.inner(1)
	kept.each(cost, func(off []int, n0, n1 int) {
		for r := 0; r < n0; r++ {
			od, os := off[0]+r*sd0, off[1]+r*ss0
			for j := 0; j < n1; j++ {
				f(od+j*sd1, os+j*ss1)
			}
		}
	})
}

// sumBlock is the span of the fixed blocks a long single reduction is split
// into, so that its result does not depend on the thread count.
const sumBlock = 1 << 14

func reduceNum[T numT](op backend.ReduceOp, dst, src backend.View) {
	d, s := slice[T](dst.S), slice[T](src.S)
	kept, red := split(dst, src)
	nOut, nRed := kept.total(), red.total()
	id := identity[T](op)
	rd := len(red.Shape) == 1
	rs := red.Strides[0][len(red.Shape)-1]
	fsum := op == backend.Sum && isFloatT[T]()

	// One output (or very few): split the reduction itself across workers,
	// in fixed blocks merged in order, so that the result does not depend on
	// the thread count or on which worker finishes first.
	if nOut < 8 && rd && nRed >= 2*grain {
		nb := (nRed + sumBlock - 1) / sumBlock
		parts := make([]T, nb)
		fparts := make([]float64, nb)
		forKept(kept, 1, func(od, os int) {
			parallelFor(nb, sumBlock, func(lo, hi int) {
				for b := lo; b < hi; b++ {
					off, n := os+b*sumBlock*rs, min(sumBlock, nRed-b*sumBlock)
					if fsum {
						fparts[b] = sumRun(s, off, rs, n)
					} else {
						parts[b] = combine(op, id, s, off, rs, n)
					}
				}
			})
			acc := id
			if fsum {
				var tot float64
				for _, p := range fparts {
					tot += p
				}
				acc = T(tot)
			} else {
				for _, p := range parts {
					acc = merge2(op, acc, p)
				}
			}
			d[od] = acc
		})
		return
	}

	// Reducing leading dims with the innermost dim kept and contiguous:
	// accumulate whole rows, which walks memory in order.
	if rd && kept.inner(1) == 1 && kept.inner(0) == 1 && rs != 1 {
		sd0, ss0 := kept.outer(0), kept.outer(1)
		kept.each(nRed, func(off []int, n0, n1 int) {
			for r := 0; r < n0; r++ {
				out, base := d[off[0]+r*sd0:][:n1], off[1]+r*ss0
				accumulateRows(op, out, s, base, rs, nRed)
			}
		})
		return
	}

	if rd {
		sd0, sd1, ss0, ss1 := kept.outer(0), kept.inner(0), kept.outer(1), kept.inner(1)
		kept.each(nRed, func(off []int, n0, n1 int) {
			for r := 0; r < n0; r++ {
				reduceRuns(op, d, off[0]+r*sd0, sd1, s, off[1]+r*ss0, ss1, n1, rs, nRed)
			}
		})
		return
	}
	forKept(kept, nRed, func(od, os int) {
		if fsum {
			var tot float64
			eachRun(red, func(ro, st, m int) { tot += sumRun(s, os+ro, st, m) })
			d[od] = T(tot)
			return
		}
		acc := id
		eachRun(red, func(ro, st, m int) { acc = combine(op, acc, s, os+ro, st, m) })
		d[od] = acc
	})
}

// reduceRuns sets d[od+j*sd] for j < n to the reduction of the nRed
// elements of s at os+j*ss, rs apart.
func reduceRuns[T numT](op backend.ReduceOp, d []T, od, sd int, s []T, os, ss, n, rs, nRed int) {
	switch {
	case op == backend.Sum && isFloatT[T]():
		for j := 0; j < n; j++ {
			d[od+j*sd] = T(sumRun(s, os+j*ss, rs, nRed))
		}
	case (op == backend.Max || op == backend.Min) && nRed > 0 && (rs != 1 || nRed < 32):
		extremeRuns(op == backend.Max, d[od:], sd, s[os:], ss, rs, nRed, n)
	default:
		id := identity[T](op)
		for j := 0; j < n; j++ {
			d[od+j*sd] = combine(op, id, s, os+j*ss, rs, nRed)
		}
	}
}

// extremeRuns sets d[j*sd] for j < cnt to the largest (isMax) or smallest
// of the n > 0 elements of s at j*ss, rs apart; a NaN wins. Short runs (a
// pooling window) cost a few instructions an element here.
//
//go:noinline
func extremeRuns[T numT](isMax bool, d []T, sd int, s []T, ss, rs, n, cnt int) {
	for j := 0; j < cnt; j++ {
		run := s[j*ss:]
		acc := run[0]
		if isMax {
			for i := 1; i < n; i++ {
				if x := run[i*rs]; x > acc || x != x {
					acc = x
				}
			}
		} else {
			for i := 1; i < n; i++ {
				if x := run[i*rs]; x < acc || x != x {
					acc = x
				}
			}
		}
		d[j*sd] = acc
	}
}

// eachRun calls f for every run of the last dim of a single-operand
// layout, in order, with its offset, stride and length.
func eachRun(l layout, f func(off, st, n int)) {
	s0, s1 := l.outer(0), l.inner(0)
	l.walk(0, l.total(), func(off []int, n0, n1 int) {
		for r := 0; r < n0; r++ {
			f(off[0]+r*s0, s1, n1)
		}
	})
}

// accumulateRows sets out to the reduction of n rows of s (row r at
// base + r*rs, contiguous, len(out) long).
func accumulateRows[T numT](op backend.ReduceOp, out, s []T, base, rs, n int) {
	if n == 0 {
		fillRow(out, identity[T](op))
		return
	}
	if o, ok := any(out).([]float32); ok && op == backend.Sum && n > rowBlock {
		sumRowsF32(o, any(s).([]float32), base, rs, n)
		return
	}
	copy(out, s[base:base+len(out)])
	for r := 1; r < n; r++ {
		mergeRow(op, out, s[base+r*rs:][:len(out)])
	}
}

// rowBlock is how many float32 rows sumRowsF32 adds in float32 before
// folding them into its float64 sums.
const rowBlock = 128

// sumRowsF32 sets out to the sum of n rows of s (row r at base + r*rs):
// blocks of rowBlock rows added in float32 (vec's loops), the blocks'
// sums in float64, so that a long column's error does not grow with its
// length (a sequential float32 sum of 10⁴ rows of 0.1 was off by 1e-4
// relative; PyTorch's cascade sum, and ember's other float sums, are not).
func sumRowsF32(out, s []float32, base, rs, n int) {
	m := len(out)
	acc := make([]float64, m)
	part := make([]float32, m)
	for r0 := 0; r0 < n; r0 += rowBlock {
		copy(part, s[base+r0*rs:][:m])
		for r := r0 + 1; r < min(n, r0+rowBlock); r++ {
			vec.Binary(vec.Add, part, part, s[base+r*rs:][:m])
		}
		for i, v := range part {
			acc[i] += float64(v)
		}
	}
	for i, v := range acc {
		out[i] = float32(v)
	}
}

// mergeRow merges row into out elementwise: out += row for Sum (vec's loops
// for floats), else merge2.
func mergeRow[T numT](op backend.ReduceOp, out, row []T) {
	switch op {
	case backend.Sum:
		switch o := any(out).(type) {
		case []float32:
			vec.Binary(vec.Add, o, o, any(row).([]float32))
		case []float64:
			vec.Binary(vec.Add, o, o, any(row).([]float64))
		default:
			for i, x := range row {
				out[i] += x
			}
		}
	default:
		for i, x := range row {
			out[i] = merge2(op, out[i], x)
		}
	}
}

func argReduce[T numT](op backend.ReduceOp, dst, src backend.View) {
	d, s := slice[int64](dst.S), slice[T](src.S)
	r := -1
	for i := range src.Shape {
		if dst.Shape[i] == 1 && src.Shape[i] != 1 {
			r = i
		}
	}
	if r < 0 { // reducing a size-1 dim (or nothing): index 0 everywhere
		fill(dst, int64(0), fillRow[int64])
		return
	}
	n, st := src.Shape[r], src.Strides[r]
	kept, _ := split(dst, src)
	isMax := op == backend.ArgMax
	sd0, sd1, ss0, ss1 := kept.outer(0), kept.inner(0), kept.outer(1), kept.inner(1)
	kept.each(n, func(off []int, n0, n1 int) {
		for r := 0; r < n0; r++ {
			argRuns(isMax, d[off[0]+r*sd0:], sd1, s[off[1]+r*ss0:], ss1, st, n, n1)
		}
	})
}

// argRuns sets d[j*sd] for j < cnt to the index of the first largest
// (isMax) or smallest of the n elements of s at j*ss, st apart, or of the
// first NaN.
//
//go:noinline
func argRuns[T numT](isMax bool, d []int64, sd int, s []T, ss, st, n, cnt int) {
	for j := 0; j < cnt; j++ {
		run := s[j*ss:]
		best, bi := run[0], 0
		for i := 1; i < n && best == best; i++ {
			x := run[i*st]
			if isMax && x > best || !isMax && x < best || x != x {
				best, bi = x, i
			}
		}
		d[j*sd] = int64(bi)
	}
}

func anyAll(all bool, dst, src backend.View) {
	d, s := slice[bool](dst.S), slice[bool](src.S)
	kept, red := split(dst, src)
	forKept(kept, red.total(), func(od, base int) {
		acc := all
		eachRun(red, func(ro, st, m int) {
			if acc != all {
				return
			}
			for i := 0; i < m; i++ {
				if s[base+ro+i*st] != all {
					acc = !all
					return
				}
			}
		})
		d[od] = acc
	})
}
