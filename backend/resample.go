package backend

// Resampler is implemented by backends with a fused step of a separable
// resampling (Interpolate's linear modes): Resample writes, along dim,
// dst[.., j, ..] = Σk src[.., idx[k][j], ..]·w[k][j], each product rounded
// to the dtype and the sum taken from k = 0 up, each addition rounded (as
// a Mul of each tap then Adds would give: no fused multiply-add). dst and
// src are contiguous, of one floating dtype, of one shape but along dim;
// the indices are in range and the weights exact in the dtype. It returns
// false, having written nothing, for the dtypes it leaves to the caller.
type Resampler interface {
	Resample(dst, src View, dim int, idx [][]int64, w [][]float64) bool
}
