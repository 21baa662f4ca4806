package cpu

import (
	"math"

	"github.com/emberml/ember/backend"
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

// combine folds n elements of s (stride st from off) into acc.
func combine[T numT](op backend.ReduceOp, acc T, s []T, off, st, n int) T {
	switch op {
	case backend.Sum:
		if st == 1 {
			return acc + sumContig(s[off:off+n])
		}
		for i := 0; i < n; i++ {
			acc += s[off+i*st]
		}
	case backend.Prod:
		for i := 0; i < n; i++ {
			acc *= s[off+i*st]
		}
	case backend.Max:
		for i := 0; i < n; i++ {
			x := s[off+i*st]
			if x > acc || x != x {
				acc = x
				if x != x {
					return x
				}
			}
		}
	case backend.Min:
		for i := 0; i < n; i++ {
			x := s[off+i*st]
			if x < acc || x != x {
				acc = x
				if x != x {
					return x
				}
			}
		}
	}
	return acc
}

// sumContig adds a contiguous run with four accumulators, in blocks added in
// float64 so long float32 sums keep their precision.
func sumContig[T numT](s []T) T {
	var total float64
	var itotal T
	isFloat := isFloatT[T]()
	for len(s) > 0 {
		blk := s
		if len(blk) > 4096 {
			blk = blk[:4096]
		}
		s = s[len(blk):]
		var a0, a1, a2, a3 T
		i := 0
		for ; i+4 <= len(blk); i += 4 {
			a0 += blk[i]
			a1 += blk[i+1]
			a2 += blk[i+2]
			a3 += blk[i+3]
		}
		for ; i < len(blk); i++ {
			a0 += blk[i]
		}
		if isFloat {
			total += float64((a0 + a1) + (a2 + a3))
		} else {
			itotal += (a0 + a1) + (a2 + a3)
		}
	}
	if isFloat {
		return T(total)
	}
	return itotal
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

func reduceNum[T numT](op backend.ReduceOp, dst, src backend.View) {
	d, s := slice[T](dst.S), slice[T](src.S)
	kept, red := split(dst, src)
	nOut, nRed := kept.total(), red.total()
	id := identity[T](op)
	rd := len(red.shape) == 1
	rs := red.strides[0][len(red.shape)-1]

	// One output (or very few): split the reduction itself across workers,
	// in fixed blocks merged in order, so that the result does not depend on
	// the thread count or on which worker finishes first.
	if nOut < 8 && rd && nRed >= 2*grain {
		const blk = 4096 // sumContig's block: the same rounding as one run
		nb := (nRed + blk - 1) / blk
		parts := make([]T, nb)
		for o := 0; o < nOut; o++ {
			var offs [2]int
			kept.walk(o, o+1, func(off []int, n int) { offs[0], offs[1] = off[0], off[1] })
			parallelFor(nb, blk, func(lo, hi int) {
				for b := lo; b < hi; b++ {
					parts[b] = combine(op, id, s, offs[1]+b*blk*rs, rs, min(blk, nRed-b*blk))
				}
			})
			acc := id
			if op == backend.Sum && isFloatT[T]() {
				var tot float64
				for _, p := range parts {
					tot += float64(p)
				}
				acc = T(tot)
			} else {
				for _, p := range parts {
					acc = merge2(op, acc, p)
				}
			}
			d[offs[0]] = acc
		}
		return
	}

	// Reducing leading dims with the innermost dim kept and contiguous:
	// accumulate whole rows, which walks memory in order.
	ks := kept.inner(1)
	if rd && ks == 1 && kept.inner(0) == 1 && rs != 1 {
		kept.each(nRed, func(off []int, n int) {
			out := d[off[0] : off[0]+n]
			for i := range out {
				out[i] = id
			}
			for r := 0; r < nRed; r++ {
				row := s[off[1]+r*rs : off[1]+r*rs+n]
				switch op {
				case backend.Sum:
					for i, x := range row {
						out[i] += x
					}
				default:
					for i, x := range row {
						out[i] = merge2(op, out[i], x)
					}
				}
			}
		})
		return
	}

	sd, ss := kept.inner(0), kept.inner(1)
	kept.each(nRed, func(off []int, n int) {
		for j := 0; j < n; j++ {
			base := off[1] + j*ss
			acc := id
			if rd {
				acc = combine(op, id, s, base, rs, nRed)
			} else {
				red.walk(0, nRed, func(ro []int, m int) {
					acc = combine(op, acc, s, base+ro[0], red.inner(0), m)
				})
			}
			d[off[0]+j*sd] = acc
		}
	})
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
		fill(dst, int64(0))
		return
	}
	n, st := src.Shape[r], src.Strides[r]
	kept, _ := split(dst, src)
	sd, ss := kept.inner(0), kept.inner(1)
	isMax := op == backend.ArgMax
	kept.each(n, func(off []int, cnt int) {
		for j := 0; j < cnt; j++ {
			base := off[1] + j*ss
			best, bi := s[base], 0
			if best == best {
				for i := 1; i < n; i++ {
					x := s[base+i*st]
					if x != x {
						bi = i
						break
					}
					if (isMax && x > best) || (!isMax && x < best) {
						best, bi = x, i
					}
				}
			}
			d[off[0]+j*sd] = int64(bi)
		}
	})
}

func anyAll(all bool, dst, src backend.View) {
	d, s := slice[bool](dst.S), slice[bool](src.S)
	kept, red := split(dst, src)
	nRed := red.total()
	sd, ss := kept.inner(0), kept.inner(1)
	kept.each(nRed, func(off []int, n int) {
		for j := 0; j < n; j++ {
			base := off[1] + j*ss
			acc := all
			red.walk(0, nRed, func(ro []int, m int) {
				for i := 0; i < m; i++ {
					if s[base+ro[0]+i*red.inner(0)] != all {
						acc = !all
						return
					}
				}
			})
			d[off[0]+j*sd] = acc
		}
	})
}
