package cpu

import "math"

// Helpers of the generated kernels (zz_kernels.go, from the op table
// backend/optable: go generate ./backend).

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
	}
	return 0 // PyTorch's sign of NaN, 0 and -0 is +0
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

// floorDivF is torch.floor_divide for floats (c10's div_floor_floating,
// Python's //): the quotient of x − fmod(x, y), so that 1 // 0.1 is 9, not
// floor(1/0.1) = 10, -5 // inf is -1 and inf // 3 is NaN; x // 0 is x / 0.
func floorDivF(x, y float64) float64 {
	if y == 0 {
		return x / y
	}
	mod := math.Mod(x, y)
	div := (x - mod) / y
	if mod != 0 && (y < 0) != (mod < 0) {
		div--
	}
	if div == 0 {
		return math.Copysign(0, x/y)
	}
	f := math.Floor(div)
	if div-f > 0.5 {
		f++
	}
	return f
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

// fmodI is C's integer remainder (the dividend's sign); x fmod 0 is 0.
func fmodI[T intT](x, y T) T {
	if y == 0 {
		return 0
	}
	return x % y
}

// softplusF is log(1+e^(beta·x))/beta, x itself above the threshold,
// computed in T as PyTorch does (e^(beta·x) overflows as T's would).
func softplusF[T floatT](x T, beta, threshold float64) T {
	b := T(beta)
	if x*b > T(threshold) {
		return x
	}
	return T(math.Log1p(float64(T(math.Exp(float64(x*b)))))) / b
}

// log10F is a log10 exact at powers of ten (math.Log10 is Log(x)/Ln10,
// which misses them: 14.999999999999998 for 1e15), as C's log10.
func log10F(x float64) float64 {
	r := math.Log10(x)
	if n := math.Round(r); n != r && math.Abs(n-r) < 1e-9 && math.Pow(10, n) == x {
		return n
	}
	return r
}

// relu6F is min(max(x, 0), 6), NaN propagating.
func relu6F[T floatT](x T) T {
	switch {
	case x < 0:
		return 0
	case x > 6:
		return 6
	}
	return x
}

func eluF[T floatT](x T, alpha float64) T {
	if x > 0 {
		return x
	}
	return T(alpha * math.Expm1(float64(x)))
}

// geluTanhF is GELU's tanh approximation.
func geluTanhF(x float64) float64 {
	const beta = 0.7978845608028654 // sqrt(2/pi)
	return 0.5 * x * (1 + math.Tanh(beta*(x+0.044715*x*x*x)))
}

// nanToNumF replaces NaN by nan, +Inf by posinf and -Inf by neginf;
// posinf = +Inf means T's largest finite value and neginf = -Inf its
// lowest (torch.nan_to_num's None).
func nanToNumF[T floatT](x T, nan, posinf, neginf float64) T {
	switch {
	case x != x:
		return T(nan)
	case math.IsInf(float64(x), 1):
		if math.IsInf(posinf, 1) {
			return maxFinite[T]()
		}
		return T(posinf)
	case math.IsInf(float64(x), -1):
		if math.IsInf(neginf, -1) {
			return -maxFinite[T]()
		}
		return T(neginf)
	}
	return x
}

func maxFinite[T floatT]() T {
	var z T
	if _, ok := any(z).(float32); ok {
		m := float32(math.MaxFloat32)
		return T(m)
	}
	m := math.MaxFloat64
	return T(m)
}
