package backend

// ReLUGrader is implemented by backends with a fused ReLU gradient:
// ReLUGrad sets dst = 0 where y is zero (of either sign) and g elsewhere,
// for y a ReLU's output (so never negative; a NaN passes g, as PyTorch's
// threshold_backward) and dst, g, y of one floating dtype and shape. It
// returns false, having written nothing, for the dtypes and layouts it
// leaves to the caller (it takes contiguous views).
type ReLUGrader interface {
	ReLUGrad(dst, g, y View) bool
}
