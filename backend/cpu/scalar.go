package cpu

import "math"

//go:generate go run ./internal/gen

type floatT interface{ ~float32 | ~float64 }
type intT interface{ ~int64 | ~int32 }
type numT interface{ floatT | intT }

func absI[T intT](x T) T {
	if x < 0 {
		return -x
	}
	return x
}

func reluF[T floatT](x T) T {
	if x > 0 || x != x {
		return x
	}
	return 0
}

func reluI[T intT](x T) T {
	if x > 0 {
		return x
	}
	return 0
}

func signF[T floatT](x T) T {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	case x != x:
		return 0 // PyTorch's sign of NaN is 0
	}
	return x // 0 or -0
}

func signI[T intT](x T) T {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

func clampF(x, lo, hi float64) float64 {
	if x < lo {
		x = lo
	}
	if x > hi {
		x = hi
	}
	return x
}

func clampI[T intT](x T, lo, hi float64) T {
	if float64(x) < lo {
		x = T(math.Ceil(lo))
	}
	if float64(x) > hi {
		x = T(math.Floor(hi))
	}
	return x
}

func leakyF[T floatT](x, slope T) T {
	if x > 0 {
		return x
	}
	return x * slope
}

// maxF and minF propagate NaN, as torch.maximum/minimum do.
func maxF[T floatT](x, y T) T {
	if x != x || x > y {
		return x
	}
	if y != y {
		return y
	}
	if x == y && x == 0 && math.Signbit(float64(y)) { // max(0, -0) = 0
		return x
	}
	return y
}

func minF[T floatT](x, y T) T {
	if x != x || x < y {
		return x
	}
	if y != y {
		return y
	}
	if x == y && x == 0 && math.Signbit(float64(x)) {
		return x
	}
	return y
}

// remF is Python's modulo: the result takes the divisor's sign (torch.remainder).
func remF(x, y float64) float64 {
	r := math.Mod(x, y)
	if r != 0 && (r < 0) != (y < 0) {
		r += y
	}
	return r
}

// remI and floorDivI define x/0 as 0 rather than crash a worker goroutine.
func remI[T intT](x, y T) T {
	if y == 0 {
		return 0
	}
	r := x % y
	if r != 0 && (r < 0) != (y < 0) {
		r += y
	}
	return r
}

func floorDivI[T intT](x, y T) T {
	if y == 0 {
		return 0
	}
	q := x / y
	if (x%y != 0) && ((x < 0) != (y < 0)) {
		q--
	}
	return q
}

// ipow is integer power by squaring; negative exponents give 0 except for |x| = 1.
func ipow[T intT](x, y T) T {
	if y < 0 {
		switch x {
		case 1:
			return 1
		case -1:
			if y%2 == 0 {
				return 1
			}
			return -1
		}
		return 0
	}
	r := T(1)
	for y > 0 {
		if y&1 == 1 {
			r *= x
		}
		x *= x
		y >>= 1
	}
	return r
}
