package backend

// Resampler is implemented by backends with a fused step of a separable
// resampling (Interpolate's linear modes): Resample writes, along dim,
// dst[.., j, ..] = Σk src[.., idx[k][j], ..]·w[k][j], each product rounded
// to the dtype and the sum taken from k = 0 up, each addition rounded (as
// a Mul of each tap then Adds would give: no fused multiply-add). dst and
// src are contiguous, of one floating dtype, of one shape but along dim;
// the indices are in range and the weights exact in the dtype. It returns
// false, having written nothing, for the dtypes it leaves to the caller.
//
// ResampleGrad is its gradient with respect to src: dst (src's shape) is
// Σk zk, summed from k = 0 up, where zk starts at zeros and gets
// g[.., j, ..]·w[k][j] (each product rounded) added at idx[k][j] for j
// from 0 up (as each tap's Mul and index-add, then Adds, would give), g
// of Resample's dst's shape; the same conditions hold.
type Resampler interface {
	Resample(dst, src View, dim int, idx [][]int64, w [][]float64) bool
	ResampleGrad(dst, g View, dim int, idx [][]int64, w [][]float64) bool
}
