//go:build !amd64 || purego

package gemm

// interleave sets d[j] = x[a+j] | x[a+ld+j]<<16.
func interleave(d []uint32, x []uint16, a, ld int) { interleaveGo(d, x, a, ld) }

// pairRow sets d[P·kk+t] = w[2P·kk+t] | w[(2P+1)·kk+t]<<16 for P < np,
// t < kk.
func pairRow(d []uint32, w []uint16, np, kk int) { pairRowGo(d, w, np, kk) }

// gatherPanelSIMD reports false: gatherPanel does the work.
func gatherPanelSIMD(dst, src []float32, cb, offs []int, nr int) bool { return false }

// interleaveRows sets dst[r·ds+j] = x[a+r·ss+j] | x[a+r·ss+ld+j]<<16 for
// r < rows, j < w.
func interleaveRows(dst []uint32, x []uint16, a, ld, rows, ss, ds, w int) {
	interleaveRowsGo(dst, x, a, ld, rows, ss, ds, w)
}

// roundSegs sets dst[i] to the bfloat16 nearest t[nr·r+j] + acc[i]
// (t[nr·r+j] alone when acc is nil), i = base + r·ldd + s.off + j, for
// r < rows, each segment s, column j < nr in s.mask.
func roundSegs(dst []uint16, base, ldd int, t []float32, nr, rows int, segs []roundSeg, acc []float32) {
	roundSegsGo(dst, base, ldd, t, nr, rows, segs, acc)
}

// phaseRows2 sets dst[r·ds+j] = x[a+r·ss+2j] | x[a+r·ss+ld+2j]<<16 for
// r < rows, j < w (the second term absent when ld < 0).
func phaseRows2(dst []uint32, x []uint16, a, ld, rows, ss, ds, w int) {
	phaseRows2Go(dst, x, a, ld, rows, ss, ds, w)
}
