package cpu

import (
	"sync"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/vec"
)

var _ backend.HalfReducer = Backend{}

// redChunk is how many two-byte elements are widened to float32 at a time
// (an 8 KiB buffer: vec.SumWiden wants whole SumBlocks).
const redChunk = vec.SumBlock

// redBufs holds the float32 chunks (vec.Binary's function tables would
// move a chunk on the stack to the heap).
var redBufs = sync.Pool{New: func() any { return new([redChunk]float32) }}

// halfSrc is a two-byte source: one of its slices is set.
type halfSrc struct {
	bf  []backend.BF16
	f16 []backend.F16
}

func halfSource(src backend.View) (halfSrc, bool) {
	switch src.S.DType() {
	case backend.BFloat16:
		return halfSrc{bf: slice[backend.BF16](src.S)}, true
	case backend.Float16:
		return halfSrc{f16: slice[backend.F16](src.S)}, true
	}
	return halfSrc{}, false
}

// widen converts len(dst) elements from off into dst.
func (h halfSrc) widen(dst []float32, off int) {
	if h.bf != nil {
		vec.F32FromBF16(dst, h.bf[off:off+len(dst)])
	} else {
		vec.F32FromF16(dst, h.f16[off:off+len(dst)])
	}
}

// ReduceHalf reduces a bfloat16 or float16 src into a float32 dst, reading
// the two-byte data in chunks widened to float32 (backend.HalfReducer):
// the reduced elements must form one run, contiguous (a full reduction of
// a contiguous tensor, the last dims) or rows of a contiguous innermost
// kept dim (the leading dims), or two runs of reduced dims of which the
// inner one is contiguous (planes: [N, C, H, W] over N, H and W); other
// layouts return false. Sums add in
// float32 lanes into float64 partials as Reduce's float32 sum does; Prod,
// Max and Min accumulate in float32, exactly as on a float32 copy
// (bfloat16 sums widen in registers, vec.SumBF16).
func (Backend) ReduceHalf(op backend.ReduceOp, dst, src backend.View) bool {
	switch op {
	case backend.Sum, backend.Prod, backend.Max, backend.Min:
	default:
		return false
	}
	if dst.S.DType() != backend.Float32 {
		return false
	}
	h, ok := halfSource(src)
	if !ok {
		return false
	}
	kept, red := split(dst, src)
	nOut, nRed := kept.total(), red.total()
	if nRed == 0 || nOut == 0 {
		return false
	}
	d := slice[float32](dst.S)
	if len(red.Shape) == 2 && red.Strides[0][1] == 1 {
		return halfPlanes(op, h, d, kept, red)
	}
	if len(red.Shape) != 1 {
		return false
	}
	rs := red.Strides[0][0]
	if nRed == 1 { // one element a run (size-1 dims): any stride
		rs = 1
	}

	if rs == 1 {
		// One output (or very few): fixed blocks across workers, merged in
		// order, as reduceNum does.
		if nOut < 8 && nRed >= 2*grain {
			nb := (nRed + sumBlock - 1) / sumBlock
			parts := make([]float64, nb)
			forKept(kept, 1, func(od, os int) {
				parallelFor(nb, sumBlock, func(lo, hi int) {
					buf := redBufs.Get().(*[redChunk]float32)
					for b := lo; b < hi; b++ {
						parts[b] = halfRun(op, h, buf, os+b*sumBlock, min(sumBlock, nRed-b*sumBlock))
					}
					redBufs.Put(buf)
				})
				acc := parts[0]
				for _, p := range parts[1:] {
					acc = mergeF(op, acc, p)
				}
				d[od] = float32(acc)
			})
			return true
		}
		sd0, sd1, ss0, ss1 := kept.outer(0), kept.inner(0), kept.outer(1), kept.inner(1)
		kept.each(nRed, func(off []int, n0, n1 int) {
			buf := redBufs.Get().(*[redChunk]float32)
			for r := 0; r < n0; r++ {
				od, os := off[0]+r*sd0, off[1]+r*ss0
				for j := 0; j < n1; j++ {
					d[od+j*sd1] = float32(halfRun(op, h, buf, os+j*ss1, nRed))
				}
			}
			redBufs.Put(buf)
		})
		return true
	}

	// Leading dims reduced, the innermost kept dim contiguous: accumulate
	// whole rows in dst, widening each row a chunk at a time.
	if kept.inner(1) == 1 && kept.inner(0) == 1 {
		sd0, ss0 := kept.outer(0), kept.outer(1)
		kept.each(nRed, func(off []int, n0, n1 int) {
			buf := redBufs.Get().(*[redChunk]float32)
			defer redBufs.Put(buf)
			for r := 0; r < n0; r++ {
				out, base := d[off[0]+r*sd0:][:n1], off[1]+r*ss0
				for c := 0; c < n1; c += redChunk {
					o := out[c:min(n1, c+redChunk)]
					t := buf[:len(o)]
					if op == backend.Sum && nRed > rowBlock {
						// as sumRowsF32: float32 blocks of rows, float64 totals
						acc := make([]float64, len(o))
						for r0 := 0; r0 < nRed; r0 += rowBlock {
							h.widen(o, base+r0*rs+c)
							for i := r0 + 1; i < min(nRed, r0+rowBlock); i++ {
								h.widen(t, base+i*rs+c)
								mergeRow(op, o, t)
							}
							for k, v := range o {
								acc[k] += float64(v)
							}
						}
						for k, v := range acc {
							o[k] = float32(v)
						}
						continue
					}
					h.widen(o, base+c)
					for i := 1; i < nRed; i++ {
						h.widen(t, base+i*rs+c)
						mergeRow(op, o, t)
					}
				}
			}
		})
		return true
	}

	return false
}

// halfPlanes reduces two reduced dims whose inner one is contiguous:
// planes, as a [N, C, H, W] sum over N, H and W (a convolution's bias
// gradient). Each kept element reduces its planes' runs in turn (halfRun's
// results merged in order: Sum's float64 totals).
func halfPlanes(op backend.ReduceOp, h halfSrc, d []float32, kept, red layout) bool {
	np, run, ps := red.Shape[0], red.Shape[1], red.Strides[0][0]
	sd0, sd1, ss0, ss1 := kept.outer(0), kept.inner(0), kept.outer(1), kept.inner(1)
	kept.each(np*run, func(off []int, n0, n1 int) {
		buf := redBufs.Get().(*[redChunk]float32)
		for r := 0; r < n0; r++ {
			od, os := off[0]+r*sd0, off[1]+r*ss0
			for j := 0; j < n1; j++ {
				at := os + j*ss1
				acc := halfRun(op, h, buf, at, run)
				for p := 1; p < np; p++ {
					acc = mergeF(op, acc, halfRun(op, h, buf, at+p*ps, run))
				}
				d[od+j*sd1] = float32(acc)
			}
		}
		redBufs.Put(buf)
	})
	return true
}

// halfRun reduces the n > 0 contiguous elements from off, widened a chunk
// at a time: a float64 total for Sum, else the float32 result.
func halfRun(op backend.ReduceOp, h halfSrc, buf *[redChunk]float32, off, n int) float64 {
	if op == backend.Sum {
		// as sumRun on the float32 copy: a float64 loop for a short run,
		// else vec.Sum's blocks and lanes
		if n < 32 {
			b := buf[:n]
			h.widen(b, off)
			var t float64
			for _, x := range b {
				t += float64(x)
			}
			return t
		}
		if h.bf != nil { // widened in registers
			return vec.SumBF16(h.bf[off : off+n])
		}
		return vec.SumWiden(n, buf[:], func(d []float32, o int) { h.widen(d, off+o) })
	}
	acc := identity[float32](op)
	for i := 0; i < n; i += redChunk {
		b := buf[:min(redChunk, n-i)]
		h.widen(b, off+i)
		acc = combine(op, acc, b, 0, 1, len(b))
	}
	return float64(acc)
}

// mergeF merges two partial results of halfRun.
func mergeF(op backend.ReduceOp, a, b float64) float64 {
	if op == backend.Prod {
		return float64(float32(a) * float32(b))
	}
	return merge2(op, a, b)
}
