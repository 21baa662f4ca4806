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
