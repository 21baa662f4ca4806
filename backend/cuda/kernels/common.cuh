// common.cuh: definitions every ember kernel module shares. It is prepended
// to each module's source (NVRTC gets no include path), after the op
// constants that the Go side generates from package backend.
//
// Indexing: a Layout describes an iteration space of ndim <= 8 dims (already
// coalesced on the Go side) and, per operand, strides in elements (0 for a
// broadcast dim). Pointers arrive already advanced by the view's offset.

#ifndef EMBER_EMU
#define EMBER_NAN_F __int_as_float(0x7fffffff)
#define EMBER_INF_F __int_as_float(0x7f800000)
#define EMBER_INF_D __longlong_as_double(0x7ff0000000000000LL)
#endif

#define EMBER_MAX_DIMS 8
#define EMBER_MAX_OPERANDS 4
#define EMBER_MAX_BLOCK 1024

typedef long long i64;
typedef unsigned long long u64;
typedef unsigned int u32;

struct Layout {
    int ndim;
    int pad;
    i64 shape[EMBER_MAX_DIMS];
    i64 stride[EMBER_MAX_OPERANDS][EMBER_MAX_DIMS];
};

// Offsets (in elements) of operands 0..K-1 at linear index i.
template <int K>
__device__ __forceinline__ void ember_offsets(const Layout& L, i64 i, i64* off) {
    if (L.ndim == 1) {
        for (int k = 0; k < K; k++) off[k] = i * L.stride[k][0];
        return;
    }
    for (int k = 0; k < K; k++) off[k] = 0;
    for (int d = L.ndim - 1; d >= 0; d--) {
        i64 n = L.shape[d];
        i64 q = i / n;
        i64 r = i - q * n;
        i = q;
        for (int k = 0; k < K; k++) off[k] += r * L.stride[k][d];
    }
}

// Grid-stride loop over [0, n).
#define EMBER_FOR(i, n)                                                       \
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n);        \
         i += (i64)blockDim.x * gridDim.x)

template <typename T> struct ember_is_float { static constexpr bool value = false; };
template <> struct ember_is_float<float> { static constexpr bool value = true; };
template <> struct ember_is_float<double> { static constexpr bool value = true; };
template <typename T> struct ember_unsigned { typedef T type; };
template <> struct ember_unsigned<long long> { typedef unsigned long long type; };
template <> struct ember_unsigned<int> { typedef unsigned int type; };
template <typename T> struct ember_is_bool { static constexpr bool value = false; };
template <> struct ember_is_bool<bool> { static constexpr bool value = true; };

// The two-byte floats as their bits. NVRTC without a CUDA toolkit has no
// cuda_bf16.h / cuda_fp16.h, so the conversions are bit-level (the same
// round-to-nearest-even as backend.ToBF16 / backend.ToF16 on the host);
// the arithmetic runs in float (ember_compute).
struct ember_bf16 { unsigned short bits; };
struct ember_f16 { unsigned short bits; };
template <typename T> struct ember_is_half { static constexpr bool value = false; };
template <> struct ember_is_half<ember_bf16> { static constexpr bool value = true; };
template <> struct ember_is_half<ember_f16> { static constexpr bool value = true; };
// ember_compute<T>::type is the type ops compute T in: float for the halves.
template <typename T> struct ember_compute { typedef T type; };
template <> struct ember_compute<ember_bf16> { typedef float type; };
template <> struct ember_compute<ember_f16> { typedef float type; };

__device__ __forceinline__ float ember_half_to_f32(ember_bf16 h) { return __int_as_float((int)((unsigned int)h.bits << 16)); }
__device__ __forceinline__ float ember_half_to_f32(ember_f16 h) {
    unsigned int sign = (unsigned int)(h.bits & 0x8000) << 16;
    unsigned int exp = (h.bits >> 10) & 0x1f, man = h.bits & 0x3ff;
    if (exp == 0) {
        float v = (float)man * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    if (exp == 0x1f) return __int_as_float((int)(sign | 0x7f800000u | (man << 13)));
    return __int_as_float((int)(sign | ((exp + 112) << 23) | (man << 13)));
}
template <typename H> __device__ __forceinline__ H ember_f32_to_half(float f);
template <> __device__ __forceinline__ ember_bf16 ember_f32_to_half<ember_bf16>(float f) {
    ember_bf16 h;
    if (f != f) { h.bits = 0xFFFF; return h; } // PyTorch 1.13's CPU NaN
    unsigned int u = (unsigned int)__float_as_int(f);
    h.bits = (unsigned short)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
    return h;
}
template <> __device__ __forceinline__ ember_f16 ember_f32_to_half<ember_f16>(float f) {
    unsigned int b = (unsigned int)__float_as_int(f);
    unsigned short sign = (unsigned short)((b >> 16) & 0x8000);
    int exp = (int)((b >> 23) & 0xff);
    unsigned int man = b & 0x7fffff;
    ember_f16 h;
    if (exp == 0xff) { h.bits = sign | (man ? 0x7e00 : 0x7c00); return h; }
    int e = exp - 127 + 15;
    if (e >= 0x1f) { h.bits = sign | 0x7c00; return h; }
    if (e <= 0) {
        unsigned int shift = (unsigned int)(14 - e);
        if (exp == 0 || shift > 24) { h.bits = sign; return h; }
        man |= 0x800000;
        unsigned int v = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (v & 1))) v++;
        h.bits = sign | (unsigned short)v;
        return h;
    }
    unsigned int v = ((unsigned int)e << 10) | (man >> 13), rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (v & 1))) v++;
    h.bits = sign | (unsigned short)v;
    return h;
}

// Conversions as Go's T(x) (truncation toward zero), bool as x != 0; the
// halves through float, rounding once (double is rounded to float first, as
// PyTorch's conversions).
template <typename D, typename S>
__device__ __forceinline__ D ember_cast(S x) {
    if constexpr (ember_is_half<S>::value) {
        if constexpr (ember_is_half<D>::value) {
            return ember_f32_to_half<D>(ember_half_to_f32(x));
        } else if constexpr (ember_is_bool<D>::value) {
            return ember_half_to_f32(x) != 0;
        } else {
            return (D)ember_half_to_f32(x);
        }
    } else if constexpr (ember_is_half<D>::value) {
        return ember_f32_to_half<D>((float)x);
    } else {
        return (D)x;
    }
}
template <> __device__ __forceinline__ bool ember_cast<bool, float>(float x) { return x != 0; }
template <> __device__ __forceinline__ bool ember_cast<bool, double>(double x) { return x != 0; }
template <> __device__ __forceinline__ bool ember_cast<bool, i64>(i64 x) { return x != 0; }
template <> __device__ __forceinline__ bool ember_cast<bool, int>(int x) { return x != 0; }

// Math by type: M<float> uses the single-precision builtins.
template <typename T> struct M;
template <> struct M<float> {
    static __device__ __forceinline__ float exp(float x) { return expf(x); }
    static __device__ __forceinline__ float log(float x) { return logf(x); }
    static __device__ __forceinline__ float sqrt(float x) { return sqrtf(x); }
    static __device__ __forceinline__ float sin(float x) { return sinf(x); }
    static __device__ __forceinline__ float cos(float x) { return cosf(x); }
    static __device__ __forceinline__ float tanh(float x) { return tanhf(x); }
    static __device__ __forceinline__ float floor(float x) { return floorf(x); }
    static __device__ __forceinline__ float ceil(float x) { return ceilf(x); }
    static __device__ __forceinline__ float rint(float x) { return rintf(x); }
    static __device__ __forceinline__ float log1p(float x) { return log1pf(x); }
    static __device__ __forceinline__ float expm1(float x) { return expm1f(x); }
    static __device__ __forceinline__ float erf(float x) { return erff(x); }
    static __device__ __forceinline__ float abs(float x) { return fabsf(x); }
    static __device__ __forceinline__ float pow(float x, float y) { return powf(x, y); }
    static __device__ __forceinline__ float atan2(float x, float y) { return atan2f(x, y); }
    static __device__ __forceinline__ float log2(float x) { return log2f(x); }
    static __device__ __forceinline__ float log10(float x) { return log10f(x); }
    static __device__ __forceinline__ float exp2(float x) { return exp2f(x); }
    static __device__ __forceinline__ float trunc(float x) { return truncf(x); }
    static __device__ __forceinline__ float fmod(float x, float y) { return fmodf(x, y); }
    static __device__ __forceinline__ float hypot(float x, float y) { return hypotf(x, y); }
    static __device__ __forceinline__ float copysign(float x, float y) { return copysignf(x, y); }
    static __device__ __forceinline__ float tan(float x) { return tanf(x); }
    static __device__ __forceinline__ float asin(float x) { return asinf(x); }
    static __device__ __forceinline__ float acos(float x) { return acosf(x); }
    static __device__ __forceinline__ float atan(float x) { return atanf(x); }
    static __device__ __forceinline__ float sinh(float x) { return sinhf(x); }
    static __device__ __forceinline__ float cosh(float x) { return coshf(x); }
    static __device__ __forceinline__ float asinh(float x) { return asinhf(x); }
    static __device__ __forceinline__ float acosh(float x) { return acoshf(x); }
    static __device__ __forceinline__ float atanh(float x) { return atanhf(x); }
    static __device__ __forceinline__ float lgamma(float x) { return lgammaf(x); }
    static __device__ __forceinline__ float erfc(float x) { return erfcf(x); }
    static __device__ __forceinline__ float maxfinite() { return 3.40282346638528859812e+38f; }
    static __device__ __forceinline__ float inf() { return EMBER_INF_F; }
    static __device__ __forceinline__ bool signbit(float x) { return __float_as_int(x) < 0; }
};
template <> struct M<double> {
    static __device__ __forceinline__ double exp(double x) { return ::exp(x); }
    static __device__ __forceinline__ double log(double x) { return ::log(x); }
    static __device__ __forceinline__ double sqrt(double x) { return ::sqrt(x); }
    static __device__ __forceinline__ double sin(double x) { return ::sin(x); }
    static __device__ __forceinline__ double cos(double x) { return ::cos(x); }
    static __device__ __forceinline__ double tanh(double x) { return ::tanh(x); }
    static __device__ __forceinline__ double floor(double x) { return ::floor(x); }
    static __device__ __forceinline__ double ceil(double x) { return ::ceil(x); }
    static __device__ __forceinline__ double rint(double x) { return ::rint(x); }
    static __device__ __forceinline__ double log1p(double x) { return ::log1p(x); }
    static __device__ __forceinline__ double expm1(double x) { return ::expm1(x); }
    static __device__ __forceinline__ double erf(double x) { return ::erf(x); }
    static __device__ __forceinline__ double abs(double x) { return ::fabs(x); }
    static __device__ __forceinline__ double pow(double x, double y) { return ::pow(x, y); }
    static __device__ __forceinline__ double atan2(double x, double y) { return ::atan2(x, y); }
    static __device__ __forceinline__ double log2(double x) { return ::log2(x); }
    static __device__ __forceinline__ double log10(double x) { return ::log10(x); }
    static __device__ __forceinline__ double exp2(double x) { return ::exp2(x); }
    static __device__ __forceinline__ double trunc(double x) { return ::trunc(x); }
    static __device__ __forceinline__ double fmod(double x, double y) { return ::fmod(x, y); }
    static __device__ __forceinline__ double hypot(double x, double y) { return ::hypot(x, y); }
    static __device__ __forceinline__ double copysign(double x, double y) { return ::copysign(x, y); }
    static __device__ __forceinline__ double tan(double x) { return ::tan(x); }
    static __device__ __forceinline__ double asin(double x) { return ::asin(x); }
    static __device__ __forceinline__ double acos(double x) { return ::acos(x); }
    static __device__ __forceinline__ double atan(double x) { return ::atan(x); }
    static __device__ __forceinline__ double sinh(double x) { return ::sinh(x); }
    static __device__ __forceinline__ double cosh(double x) { return ::cosh(x); }
    static __device__ __forceinline__ double asinh(double x) { return ::asinh(x); }
    static __device__ __forceinline__ double acosh(double x) { return ::acosh(x); }
    static __device__ __forceinline__ double atanh(double x) { return ::atanh(x); }
    static __device__ __forceinline__ double lgamma(double x) { return ::lgamma(x); }
    static __device__ __forceinline__ double erfc(double x) { return ::erfc(x); }
    static __device__ __forceinline__ double maxfinite() { return 1.79769313486231570815e+308; }
    static __device__ __forceinline__ double inf() { return EMBER_INF_D; }
    static __device__ __forceinline__ bool signbit(double x) { return __double_as_longlong(x) < 0; }
};

// Extremes of each type (identities of max/min).
template <typename T> struct Lim;
template <> struct Lim<float> {
    static __device__ __forceinline__ float lo() { return -EMBER_INF_F; }
    static __device__ __forceinline__ float hi() { return EMBER_INF_F; }
};
template <> struct Lim<double> {
    static __device__ __forceinline__ double lo() { return -EMBER_INF_D; }
    static __device__ __forceinline__ double hi() { return EMBER_INF_D; }
};
template <> struct Lim<i64> {
    static __device__ __forceinline__ i64 lo() { return (i64)(1ULL << 63); }
    static __device__ __forceinline__ i64 hi() { return (i64)((1ULL << 63) - 1); }
};
template <> struct Lim<int> {
    static __device__ __forceinline__ int lo() { return (int)(1U << 31); }
    static __device__ __forceinline__ int hi() { return (int)((1U << 31) - 1); }
};
template <> struct Lim<bool> {
    static __device__ __forceinline__ bool lo() { return false; }
    static __device__ __forceinline__ bool hi() { return true; }
};

template <typename T>
__device__ __forceinline__ bool ember_isnan(T x) { return x != x; }
