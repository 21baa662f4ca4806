// scalar.cuh: the helpers that the op table's C expressions call (the
// twins of backend/cpu/scalar.go), prepended to the elementwise module
// before the generated op chains (zz_ops.cuh).

template <typename T> __device__ __forceinline__ T ember_relu(T x) {
    if constexpr (ember_is_float<T>::value) return (x > 0 || x != x) ? x : (T)0;
    else return x > 0 ? x : (T)0;
}
// sign as torch computes it, (0 < x) - (x < 0): NaN and -0 give +0 (what
// backend/cpu produces too).
template <typename T> __device__ __forceinline__ T ember_sign(T x) {
    return (T)((int)(0 < x) - (int)(x < 0));
}
// ipow is integer power by squaring; negative exponents give 0 except |x| = 1.
template <typename T> __device__ __forceinline__ T ember_ipow(T x, T y) {
    if (y < 0) {
        if (x == 1) return 1;
        if (x == -1) return (y % 2 == 0) ? 1 : -1;
        return 0;
    }
    T r = 1;
    while (y > 0) {
        if (y & 1) r *= x;
        x *= x;
        y >>= 1;
    }
    return r;
}
template <typename T> __device__ __forceinline__ T ember_clampf(T x, double lo, double hi) {
    double v = (double)x;
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    return (T)v;
}
template <typename T> __device__ __forceinline__ T ember_clampi(T x, double lo, double hi) {
    if ((double)x < lo) x = (T)::ceil(lo);
    if ((double)x > hi) x = (T)::floor(hi);
    return x;
}

// NaN-propagating maximum/minimum with max(0, -0) = 0, min(0, -0) = -0.
template <typename T> __device__ __forceinline__ T ember_maxf(T x, T y) {
    if (x != x || x > y) return x;
    if (y != y) return y;
    if (x == y && x == 0 && M<T>::signbit(y)) return x;
    return y;
}
template <typename T> __device__ __forceinline__ T ember_minf(T x, T y) {
    if (x != x || x < y) return x;
    if (y != y) return y;
    if (x == y && x == 0 && M<T>::signbit(x)) return x;
    return y;
}

// Python-style modulo: the result takes the divisor's sign (torch.remainder);
// x % 0 = 0 for integers.
__device__ __forceinline__ double ember_remf(double a, double b) {
    double r = ::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
// torch.floor_divide for floats (c10's div_floor_floating, Python's //):
// the quotient of x - fmod(x, y), so that 1 // 0.1 is 9, -5 // inf is -1.
__device__ __forceinline__ double ember_floordivf(double a, double b) {
    if (b == 0) return a / b;
    double mod = ::fmod(a, b);
    double div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
    if (div == 0) return ::copysign(0.0, a / b);
    double f = ::floor(div);
    if (div - f > 0.5) f += 1;
    return f;
}
template <typename T> __device__ __forceinline__ T ember_remi(T x, T y) {
    if (y == 0 || y == -1) return 0; // x % -1 is 0 (and MinInt % -1 undefined in C)
    T r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
}
template <typename T> __device__ __forceinline__ T ember_floordivi(T x, T y) { // x // 0 = 0
    if (y == 0) return 0;
    if (y == -1) return (T)(0 - (typename ember_unsigned<T>::type)x); // wraps at MinInt, as Go
    T q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) q--;
    return q;
}
// C's remainder (the dividend's sign); x fmod 0 = 0 for integers.
template <typename T> __device__ __forceinline__ T ember_fmodi(T x, T y) { return (y == 0 || y == -1) ? (T)0 : x % y; }

// log(1+e^(beta·x))/beta, x itself above the threshold (in T, as PyTorch).
template <typename T> __device__ __forceinline__ T ember_softplus(T x, double beta, double threshold) {
    T b = (T)beta;
    return x * b > (T)threshold ? x : M<T>::log1p(M<T>::exp(x * b)) / b;
}
// min(max(x, 0), 6), NaN propagating.
template <typename T> __device__ __forceinline__ T ember_relu6(T x) {
    return x < (T)0 ? (T)0 : (x > (T)6 ? (T)6 : x);
}
template <typename T> __device__ __forceinline__ T ember_gelu_tanh(T x) {
    const T beta = (T)0.7978845608028654; // sqrt(2/pi)
    return (T)0.5 * x * ((T)1 + M<T>::tanh(beta * (x + (T)0.044715 * x * x * x)));
}
// NaN → nan, +Inf → posinf, -Inf → neginf; posinf = +Inf means T's
// largest finite value and neginf = -Inf its lowest (torch.nan_to_num's None).
template <typename T> __device__ __forceinline__ T ember_nan_to_num(T x, double nan, double posinf, double neginf) {
    if (x != x) return (T)nan;
    if (x == M<T>::inf()) return posinf > 1.7976931348623157e308 ? M<T>::maxfinite() : (T)posinf;
    if (x == -M<T>::inf()) return neginf < -1.7976931348623157e308 ? -M<T>::maxfinite() : (T)neginf;
    return x;
}

// The special functions, in double for every float dtype: the same steps
// as backend/cpu/scalar.go's digammaF, zetaF, polygammaF and erfinvF (see
// there).
#define EMBER_NAN_D __longlong_as_double(0x7ff8000000000000LL)
#define EMBER_PI_D 3.14159265358979323846
__device__ inline double ember_digamma(double x) {
    if (x == 0) return ::copysign(EMBER_INF_D, -x);
    double res = 0;
    if (x < 0) {
        if (x == ::trunc(x)) return EMBER_NAN_D;
        double ip;
        double r = ::modf(x, &ip);
        res = -EMBER_PI_D / ::tan(EMBER_PI_D * r);
        x = 1 - x;
    }
    while (x < 10) {
        res -= 1 / x;
        x += 1;
    }
    double y = 0;
    if (x < 1e17) {
        double z = 1 / (x * x);
        y = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z / 12))))));
    }
    return res + ::log(x) - 0.5 / x - y;
}
// ψ′ in T, as PyTorch (backend/cpu/scalar.go's trigammaF).
template <typename T> __device__ __forceinline__ T ember_trigamma(T x) {
    const T pi = (T)EMBER_PI_D;
    T sign = 1, r = 0;
    if (x < (T)0.5) {
        sign = -1;
        T s = M<T>::sin(pi * x);
        r -= pi * pi / (s * s);
        x = (T)1 - x;
    }
    for (int i = 0; i < 6; i++) {
        r += (T)1 / (x * x);
        x += (T)1;
    }
    T ixx = (T)1 / (x * x);
    r += ((T)1 + (T)1 / ((T)2 * x) + ixx * ((T)1 / 6 - ixx * ((T)1 / 30 - ixx * ((T)1 / 42)))) / x;
    return sign * r;
}
__device__ inline double ember_zeta(double s, double q) {
    const double macheps = 1.11022302462515654042e-16;
    const double A[12] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
                          -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
                          1.8152105401943546773e17, -7.1661652561756670113e18};
    if (s == 1) return EMBER_INF_D;
    if (s < 1) return EMBER_NAN_D;
    if (q <= 0 && q == ::floor(q)) return EMBER_INF_D;
    if (q <= 0 && s != ::floor(s)) return EMBER_NAN_D;
    double sum = ::pow(q, -s), a = q, b = 0;
    for (int i = 0; i < 9 || a <= 9;) {
        i++;
        a += 1;
        b = ::pow(a, -s);
        sum += b;
        if (-macheps * sum < b && b < macheps * sum) return sum;
    }
    double w = a;
    sum += b * w / (s - 1) - 0.5 * b;
    double f = 1, k = 0;
    for (int j = 0; j < 12; j++) {
        f *= s + k;
        b /= w;
        double t = f * b / A[j];
        sum += t;
        if (::fabs(t / sum) < macheps) break;
        k += 1;
        f *= s + k;
        b /= w;
        k += 1;
    }
    return sum;
}
template <typename T> __device__ __forceinline__ T ember_polygamma(double n, T x) {
    if (n == 0) return (T)ember_digamma((double)x);
    if (n == 1) return ember_trigamma(x);
    double sign = ::fmod(n, 2.0) == 1 ? 1.0 : -1.0;
    return (T)(sign * ::exp(::lgamma(n + 1)) * ember_zeta(n + 1, (double)x));
}
__device__ inline double ember_erfinv(double y) {
    double a = ::fabs(y);
    if (!(a <= 1)) return EMBER_NAN_D;
    if (a == 1) return ::copysign(EMBER_INF_D, y);
    double w = -::log((1 - y) * (1 + y)), p;
    if (w < 5) {
        w -= 2.5;
        p = 2.81022636e-08;
        p = 3.43273939e-07 + p * w;
        p = -3.5233877e-06 + p * w;
        p = -4.39150654e-06 + p * w;
        p = 0.00021858087 + p * w;
        p = -0.00125372503 + p * w;
        p = -0.00417768164 + p * w;
        p = 0.246640727 + p * w;
        p = 1.50140941 + p * w;
    } else {
        w = ::sqrt(w) - 3;
        p = -0.000200214257;
        p = 0.000100950558 + p * w;
        p = 0.00134934322 + p * w;
        p = -0.00367342844 + p * w;
        p = 0.00573950773 + p * w;
        p = -0.0076224613 + p * w;
        p = 0.00943887047 + p * w;
        p = 1.00167406 + p * w;
        p = 2.83297682 + p * w;
    }
    // Newton on log erfc where a > 1/2: 1 - a is exact there, erf(x) - a is not.
    double x = p * a;
    for (int i = 0; i < 4; i++) {
        double d = 1.1283791670955126 * ::exp(-x * x);
        if (a > 0.5) {
            double e = ::erfc(x);
            x += (::log(e) - ::log(1 - a)) * e / d;
        } else {
            x -= (::erf(x) - a) / d;
        }
    }
    return ::copysign(x, y);
}
// sin(πx)/(πx), 1 at 0, in T (as PyTorch).
template <typename T> __device__ __forceinline__ T ember_sinc(T x) {
    if (x == (T)0) return (T)1;
    T p = (T)EMBER_PI_D * x;
    return M<T>::sin(p) / p;
}
// log(x/(1-x)), x clamped to [eps, 1-eps] unless eps < 0 (torch.logit).
template <typename T> __device__ __forceinline__ T ember_logit(T x, double eps) {
    if (eps >= 0) {
        T lo = (T)eps, hi = (T)1 - (T)eps;
        x = x < lo ? lo : (x > hi ? hi : x);
    }
    return x == (T)1 ? M<T>::inf() : M<T>::log(x / ((T)1 - x));
}
// x·log(y), 0 where x is 0 unless y is NaN.
template <typename T> __device__ __forceinline__ T ember_xlogy(T x, T y) {
    if (y != y) return y;
    if (x == (T)0) return (T)0;
    return x * M<T>::log(y);
}

// Small elementwise ops (torch 1.13 parity); the Go twins are in
// backend/cpu/scalar.go.
template <typename T> __device__ __forceinline__ T ember_logaddexp(T x, T y, bool base2) {
    if (x == y && (x == M<T>::inf() || x == -M<T>::inf())) return x;
    T m = x < y ? y : x;
    double d = -fabs((double)(x - y));
    if (base2) return m + (T)(::log1p(::exp2(d)) / 0.6931471805599453);
    return m + (T)::log1p(::exp(d));
}
template <typename T> __device__ __forceinline__ T ember_fmax(T x, T y) {
    if (x != x || (y == y && y > x)) return y;
    return x;
}
template <typename T> __device__ __forceinline__ T ember_fmin(T x, T y) {
    if (x != x || (y == y && y < x)) return y;
    return x;
}
template <typename T> __device__ __forceinline__ T ember_shl(T x, T y) {
    typedef typename ember_unsigned<T>::type U;
    return (T)((U)x << ((unsigned)y & (unsigned)(sizeof(T) * 8 - 1)));
}
template <typename T> __device__ __forceinline__ T ember_shr(T x, T y) {
    return x >> ((unsigned)y & (unsigned)(sizeof(T) * 8 - 1));
}
template <typename T> __device__ __forceinline__ T ember_iabs_wrap(T x) {
    typedef typename ember_unsigned<T>::type U;
    return x < 0 ? (T)(0 - (U)x) : x;
}
template <typename T> __device__ __forceinline__ T ember_gcd(T x, T y) {
    T a = ember_iabs_wrap(x), b = ember_iabs_wrap(y);
    while (a != 0) {
        T c = a;
        a = (a == -1) ? 0 : b % a; // b % -1 is 0 (MinInt % -1 is undefined in C)
        b = c;
    }
    return b;
}
template <typename T> __device__ __forceinline__ T ember_lcm(T x, T y) {
    T g = ember_gcd(x, y);
    if (g == 0) return 0;
    typedef typename ember_unsigned<T>::type U;
    T q = (g == -1) ? (T)(0 - (U)x) : x / g;
    return ember_iabs_wrap((T)((U)q * (U)y));
}
