package backend

// HalfReLUGrader is implemented by backends with a fused ReLU gradient for
// the two-byte floats: ReLUGradHalf sets dst = 0 where y is zero (of either
// sign) and g elsewhere, for y a ReLU's output (so never negative; a NaN
// passes g, as PyTorch's threshold_backward) and dst, g, y of one two-byte
// dtype and shape. It returns false, having written nothing, for the
// layouts it leaves to the caller (it takes contiguous views).
type HalfReLUGrader interface {
	ReLUGradHalf(dst, g, y View) bool
}
