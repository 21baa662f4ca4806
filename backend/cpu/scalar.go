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
	r := logSub(x) * (1 / math.Ln10) // math.Log10, right for subnormals
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

// logSub is math.Log, right for subnormal x too (Go's amd64 Log is not:
// Log(5e-310) gives -709.07, not -712.19).
func logSub(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		f, e := math.Frexp(x)
		return math.Log(f) + float64(e)*math.Ln2
	}
	return math.Log(x)
}

// lgammaF is log|Γ(x)|, +Inf at -Inf as C's lgamma (Go's Lgamma gives -Inf),
// and −log|x| for subnormal x (where Go's Lgamma inherits Log's error).
func lgammaF(x float64) float64 {
	if math.IsInf(x, -1) {
		return x * -1
	}
	if a := math.Abs(x); a > 0 && a < 0x1p-1022 {
		return -logSub(a)
	}
	v, _ := math.Lgamma(x)
	return v
}

// digammaF is ψ(x): the reflection ψ(x) = ψ(1−x) − π/tan(πx) below 0,
// the recurrence ψ(x) = ψ(x+1) − 1/x up to 10, then the asymptotic
// series ln x − 1/(2x) − Σ B₂ₖ/(2k·x²ᵏ). The same steps as ember_digamma
// (backend/cuda/kernels/scalar.cuh).
func digammaF(x float64) float64 {
	if x == 0 {
		return math.Copysign(math.Inf(1), -x)
	}
	res := 0.0
	if x < 0 {
		if x == math.Trunc(x) {
			return math.NaN()
		}
		_, r := math.Modf(x) // tan(π·frac) is more accurate than tan(πx)
		res = -math.Pi / math.Tan(math.Pi*r)
		x = 1 - x
	}
	for x < 10 {
		res -= 1 / x
		x++
	}
	y := 0.0
	if x < 1e17 {
		z := 1 / (x * x)
		y = z * (1.0/12 - z*(1.0/120-z*(1.0/252-z*(1.0/240-z*(1.0/132-z*(691.0/32760-z/12))))))
	}
	return res + math.Log(x) - 0.5/x - y
}

// trigammaF is ψ′(x) in T, as PyTorch computes it (and its error, some
// 1e-9 in float64): the reflection ψ′(x) = π²/sin²(πx) − ψ′(1−x) below
// 1/2, six steps of the recurrence ψ′(x) = ψ′(x+1) + 1/x², then the
// asymptotic series to its x⁻⁷ term. The same steps as ember_trigamma.
func trigammaF[T floatT](x T) T {
	sign, res, pi := T(1), T(0), T(math.Pi)
	if x < 0.5 {
		sign = -1
		s := T(math.Sin(float64(pi * x)))
		res -= pi * pi / (s * s)
		x = 1 - x
	}
	for range 6 {
		res += 1 / (x * x)
		x++
	}
	ixx := 1 / (x * x)
	res += (1 + 1/(2*x) + ixx*(T(1.0)/6-ixx*(T(1.0)/30-ixx*(T(1.0)/42)))) / x
	return sign * res
}

// zetaA are (2k)!/B₂ₖ, k = 1..12: the Euler–Maclaurin tail's coefficients.
var zetaA = [12]float64{12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
	-2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18}

// zetaF is the Hurwitz zeta function ζ(s, q) = Σₙ (q+n)^−s for s > 1: the
// first terms summed directly (at least 9, until q+n > 9), the rest by
// the Euler–Maclaurin formula.
func zetaF(s, q float64) float64 {
	const macheps = 1.11022302462515654042e-16
	switch {
	case s == 1:
		return math.Inf(1)
	case s < 1:
		return math.NaN()
	case q <= 0 && q == math.Floor(q):
		return math.Inf(1)
	case q <= 0 && s != math.Floor(s):
		return math.NaN()
	}
	sum := math.Pow(q, -s)
	a, b := q, 0.0
	for i := 0; i < 9 || a <= 9; {
		i++
		a++
		b = math.Pow(a, -s)
		sum += b
		if -macheps*sum < b && b < macheps*sum {
			return sum
		}
	}
	w := a
	sum += b*w/(s-1) - 0.5*b
	f, k := 1.0, 0.0
	for j := 0; j < 12; j++ {
		f *= s + k
		b /= w
		t := f * b / zetaA[j]
		sum += t
		if math.Abs(t/sum) < macheps {
			break
		}
		k++
		f *= s + k
		b /= w
		k++
	}
	return sum
}

// polygammaF is the n-th derivative of ψ at x: ψ, ψ′ (in T), and for
// n ≥ 2 (−1)^(n+1)·n!·ζ(n+1, x).
func polygammaF[T floatT](n float64, x T) T {
	switch n {
	case 0:
		return T(digammaF(float64(x)))
	case 1:
		return trigammaF(x)
	}
	sign := -1.0
	if math.Mod(n, 2) == 1 {
		sign = 1
	}
	lg, _ := math.Lgamma(n + 1)
	return T(sign * math.Exp(lg) * zetaF(n+1, float64(x)))
}

// erfinvF is the inverse error function: a single-precision rational
// first guess (M. Giles, "Approximating the erfinv function", 2010)
// refined by four Newton steps on erf, or on log erfc where |y| > 1/2
// (there 1−|y| is exact and erf(x)−y is not: near ±1 it loses every digit;
// log erfc is near-quadratic, so the out-of-range guess still converges).
// The same steps as ember_erfinv.
func erfinvF(y float64) float64 {
	switch a := math.Abs(y); {
	case !(a <= 1):
		return math.NaN()
	case a == 1:
		return math.Copysign(math.Inf(1), y)
	}
	w := -math.Log((1 - y) * (1 + y))
	var p float64
	if w < 5 {
		w -= 2.5
		p = 2.81022636e-08
		for _, c := range [...]float64{3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941} {
			p = c + p*w
		}
	} else {
		w = math.Sqrt(w) - 3
		p = -0.000200214257
		for _, c := range [...]float64{0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682} {
			p = c + p*w
		}
	}
	a := math.Abs(y)
	x := p * a
	for range 4 {
		d := 2 / math.SqrtPi * math.Exp(-x*x)
		if a > 0.5 {
			e := math.Erfc(x)
			x += (math.Log(e) - math.Log(1-a)) * e / d
		} else {
			x -= (math.Erf(x) - a) / d
		}
	}
	return math.Copysign(x, y)
}

// sincF is sin(πx)/(πx), 1 at 0, in T as PyTorch.
func sincF[T floatT](x T) T {
	if x == 0 {
		return 1
	}
	p := T(math.Pi) * x
	return T(math.Sin(float64(p))) / p
}

// logitF is log(x/(1−x)) with x clamped to [eps, 1−eps] unless noEps,
// in T as PyTorch.
func logitF[T floatT](x, eps T, noEps bool) T {
	if !noEps {
		if x < eps {
			x = eps
		} else if x > 1-eps {
			x = 1 - eps
		}
	}
	if x == 1 {
		return T(math.Inf(1))
	}
	return T(logSub(float64(x / (1 - x))))
}

// xlogyF is x·log(y), 0 where x is 0 unless y is NaN.
func xlogyF[T floatT](x, y T) T {
	switch {
	case y != y:
		return y
	case x == 0:
		return 0
	}
	return x * T(logSub(float64(y)))
}

// signbitF reports whether x's sign bit is set (-0 and negative NaNs too;
// a float32 NaN is read from its own bits, not a widened copy).
func signbitF[T floatT](x T) bool {
	if v, ok := any(x).(float32); ok {
		return math.Float32bits(v)>>31 != 0
	}
	return math.Signbit(float64(x))
}

// logaddexpF is log(e^x + e^y) (log2(2^x + 2^y) with base2), as PyTorch
// computes it: x where both are the same infinity, else
// max + log1p(exp(-|x-y|)).
func logaddexpF[T floatT](x, y T, base2 bool) T {
	if x == y && math.IsInf(float64(x), 0) {
		return x
	}
	m := x
	if x < y {
		m = y
	}
	d := -math.Abs(float64(x - y))
	if base2 {
		return m + T(math.Log1p(math.Exp2(d))/math.Ln2)
	}
	return m + T(math.Log1p(math.Exp(d)))
}

// fmaxF is the larger of x and y ignoring a NaN (x where they are equal, so
// fmax(0, -0) is 0 and fmax(-0, 0) is -0, as PyTorch's).
func fmaxF[T floatT](x, y T) T {
	if x != x || (y == y && y > x) {
		return y
	}
	return x
}

// fminF is the smaller of x and y ignoring a NaN (x where they are equal).
func fminF[T floatT](x, y T) T {
	if x != x || (y == y && y < x) {
		return y
	}
	return x
}

// heaviside is 0 below zero, y at (either) zero, 1 above; a NaN x gives 0.
func heaviside[T numT](x, y T) T {
	switch {
	case x == 0:
		return y
	case x > 0:
		return 1
	}
	return 0
}

// bitsOf is the bit width of T.
func bitsOf[T intT]() uint {
	var z T
	if _, ok := any(z).(int32); ok {
		return 32
	}
	return 64
}

// shlI is x << y with the count taken modulo T's width, as C's shift on
// x86 and so torch 1.13's CPU kernel compute it (1 << 64 is 1).
func shlI[T intT](x, y T) T { return x << (uint(y) & (bitsOf[T]() - 1)) }

// shrI is the arithmetic x >> y with the count taken modulo T's width.
func shrI[T intT](x, y T) T { return x >> (uint(y) & (bitsOf[T]() - 1)) }

// gcdI is PyTorch's calc_gcd: Euclid on |x| and |y| (the lowest integer
// stays negative, its absolute value wrapping).
func gcdI[T intT](x, y T) T {
	a, b := absI(x), absI(y)
	for a != 0 {
		a, b = b%a, a
	}
	return b
}

// lcmI is |x / gcd · y|, 0 where the gcd is 0.
func lcmI[T intT](x, y T) T {
	g := gcdI(x, y)
	if g == 0 {
		return 0
	}
	return absI(x / g * y)
}
