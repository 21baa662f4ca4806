package cpu

import "github.com/emberml/ember/backend"

var _ backend.Resampler = Backend{}

// Resample is the fused resampling step (see backend.Resampler), for
// Float32 and Float64 contiguous views.
func (Backend) Resample(dst, src backend.View, dim int, idx [][]int64, w [][]float64) bool {
	if len(idx) == 0 || len(idx) != len(w) || !dst.IsContiguous() || !src.IsContiguous() {
		return false
	}
	switch dst.S.DType() {
	case backend.Float32:
		resample[float32](dst, src, dim, idx, w)
	case backend.Float64:
		resample[float64](dst, src, dim, idx, w)
	default:
		return false
	}
	return true
}

func resample[T float32 | float64](dst, src backend.View, dim int, idx [][]int64, w [][]float64) {
	d, s := slice[T](dst.S), slice[T](src.S)
	n, m := dst.Shape[dim], src.Shape[dim]
	outer, inner, wt := resampleSetup[T](dst.Shape, dim, n, w)
	taps := len(idx)
	if inner == 1 { // along the last dim: one line a step
		parallelFor(outer, n*taps*2, func(lo, hi int) {
			for o := lo; o < hi; o++ {
				dr := d[dst.Offset+o*n : dst.Offset+(o+1)*n]
				sr := s[src.Offset+o*m : src.Offset+(o+1)*m]
				i0, w0 := idx[0][:len(dr)], wt[0][:len(dr)]
				for j := range dr {
					dr[j] = T(sr[i0[j]] * w0[j])
				}
				for k := 1; k < taps; k++ {
					ik, wk := idx[k][:len(dr)], wt[k][:len(dr)]
					for j := range dr {
						dr[j] += T(sr[ik[j]] * wk[j]) // T(): no fused multiply-add
					}
				}
			}
		})
		return
	}
	parallelFor(outer*n, inner*taps*2, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			o, j := r/n, r%n
			dr := d[dst.Offset+r*inner : dst.Offset+(r+1)*inner]
			so := src.Offset + (o*m+int(idx[0][j]))*inner
			sr, wj := s[so:so+inner], wt[0][j]
			for c := range dr {
				dr[c] = T(sr[c] * wj)
			}
			for k := 1; k < taps; k++ {
				so := src.Offset + (o*m+int(idx[k][j]))*inner
				sr, wj := s[so:so+inner], wt[k][j]
				for c := range dr {
					dr[c] += T(sr[c] * wj)
				}
			}
		}
	})
}

// ResampleGrad is Resample's gradient (see backend.Resampler), for
// Float32 and Float64 contiguous views.
func (Backend) ResampleGrad(dst, g backend.View, dim int, idx [][]int64, w [][]float64) bool {
	if len(idx) == 0 || len(idx) != len(w) || !dst.IsContiguous() || !g.IsContiguous() {
		return false
	}
	switch dst.S.DType() {
	case backend.Float32:
		resampleGrad[float32](dst, g, dim, idx, w)
	case backend.Float64:
		resampleGrad[float64](dst, g, dim, idx, w)
	default:
		return false
	}
	return true
}

// resampleGrad: each outer block of dst (m·inner elements) is written by
// one worker: the taps' index-adds, each in a zeroed block (the first in
// dst's), each added to dst's in turn.
func resampleGrad[T float32 | float64](dst, g backend.View, dim int, idx [][]int64, w [][]float64) {
	d, s := slice[T](dst.S), slice[T](g.S)
	n, m := g.Shape[dim], dst.Shape[dim]
	outer, inner, wt := resampleSetup[T](dst.Shape, dim, n, w)
	parallelFor(outer, (n+m)*inner*len(idx)*2, func(lo, hi int) {
		var tmp []T
		if len(idx) > 1 {
			tmp = make([]T, m*inner)
		}
		for o := lo; o < hi; o++ {
			db := d[dst.Offset+o*m*inner : dst.Offset+(o+1)*m*inner]
			gb := s[g.Offset+o*n*inner : g.Offset+(o+1)*n*inner]
			for k := range idx {
				z := db
				if k > 0 {
					z = tmp
				}
				clear(z)
				ik, wk := idx[k][:n], wt[k][:n]
				if inner == 1 {
					for j, v := range gb {
						z[ik[j]] += T(v * wk[j]) // T(): no fused multiply-add
					}
				} else {
					for j := range ik {
						zr := z[int(ik[j])*inner : (int(ik[j])+1)*inner]
						gr, wj := gb[j*inner:(j+1)*inner], wk[j]
						for c := range zr {
							zr[c] += T(gr[c] * wj)
						}
					}
				}
				if k > 0 {
					for c := range db {
						db[c] += tmp[c]
					}
				}
			}
		}
	})
}

// resampleSetup returns the element counts of shape before and after dim,
// and the taps' weights for the n output positions in T.
func resampleSetup[T float32 | float64](shape []int, dim, n int, w [][]float64) (outer, inner int, wt [][]T) {
	outer, inner = 1, 1
	for k := 0; k < dim; k++ {
		outer *= shape[k]
	}
	for k := dim + 1; k < len(shape); k++ {
		inner *= shape[k]
	}
	wt = make([][]T, len(w))
	for k := range w {
		wt[k] = make([]T, n)
		for j := range wt[k] {
			wt[k][j] = T(w[k][j])
		}
	}
	return outer, inner, wt
}
