// elementwise.cu: fill, copy with cast, unary, binary, where, arange.
// U_* and B_* (the op numbers of package backend) are generated and
// prepended by the Go side, together with common.cuh.

template <typename T>
__global__ void ember_fill(T* d, Layout L, i64 n, double v) {
    T x = ember_cast<T, double>(v);
    i64 off[1];
    EMBER_FOR(i, n) {
        ember_offsets<1>(L, i, off);
        d[off[0]] = x;
    }
}

template <typename D, typename S>
__global__ void ember_copy(D* d, const S* s, Layout L, i64 n) {
    i64 off[2];
    EMBER_FOR(i, n) {
        ember_offsets<2>(L, i, off);
        d[off[0]] = ember_cast<D, S>(s[off[1]]);
    }
}

// --- unary ---

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

template <int OP, typename T>
__device__ __forceinline__ T ember_unary_op(T x, double p1, double p2) {
    constexpr bool F = ember_is_float<T>::value;
    if constexpr (OP == U_NEG) return -x;
    else if constexpr (OP == U_ABS) {
        if constexpr (F) return M<T>::abs(x); else return x < 0 ? -x : x;
    }
    else if constexpr (OP == U_EXP) return M<T>::exp(x);
    else if constexpr (OP == U_LOG) return M<T>::log(x);
    else if constexpr (OP == U_SQRT) return M<T>::sqrt(x);
    else if constexpr (OP == U_RSQRT) return (T)1 / M<T>::sqrt(x);
    else if constexpr (OP == U_SIN) return M<T>::sin(x);
    else if constexpr (OP == U_COS) return M<T>::cos(x);
    else if constexpr (OP == U_TANH) return M<T>::tanh(x);
    else if constexpr (OP == U_SIGMOID) return (T)1 / ((T)1 + M<T>::exp(-x));
    else if constexpr (OP == U_RELU) return ember_relu(x);
    else if constexpr (OP == U_SIGN) return ember_sign(x);
    else if constexpr (OP == U_SQUARE) return x * x;
    else if constexpr (OP == U_FLOOR) {
        if constexpr (F) return M<T>::floor(x); else return x;
    }
    else if constexpr (OP == U_CEIL) {
        if constexpr (F) return M<T>::ceil(x); else return x;
    }
    else if constexpr (OP == U_ROUND) { // half to even
        if constexpr (F) return M<T>::rint(x); else return x;
    }
    else if constexpr (OP == U_LOG1P) return M<T>::log1p(x);
    else if constexpr (OP == U_EXPM1) return M<T>::expm1(x);
    else if constexpr (OP == U_ERF) return M<T>::erf(x);
    else if constexpr (OP == U_RECIPROCAL) return (T)1 / x;
    else if constexpr (OP == U_LOGICAL_NOT) return !x;
    else if constexpr (OP == U_CLAMP) {
        if constexpr (F) {
            double v = (double)x;
            if (v < p1) v = p1;
            if (v > p2) v = p2;
            return (T)v;
        } else {
            if ((double)x < p1) x = (T)::ceil(p1);
            if ((double)x > p2) x = (T)::floor(p2);
            return x;
        }
    }
    else if constexpr (OP == U_POW) {
        if constexpr (F) return M<T>::pow(x, (T)p1); else return ember_ipow(x, (T)p1);
    }
    else if constexpr (OP == U_LEAKY_RELU) return x > 0 ? x : x * (T)p1;
    else return x;
}

template <typename T, int OP>
__global__ void ember_unary(T* d, const T* s, Layout L, i64 n, double p1, double p2) {
    i64 off[2];
    EMBER_FOR(i, n) {
        ember_offsets<2>(L, i, off);
        d[off[0]] = ember_unary_op<OP, T>(s[off[1]], p1, p2);
    }
}

// --- binary ---

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

template <int OP, typename T, typename O>
__device__ __forceinline__ O ember_binary_op(T x, T y) {
    constexpr bool F = ember_is_float<T>::value;
    if constexpr (OP == B_ADD) return x + y;
    else if constexpr (OP == B_SUB) return x - y;
    else if constexpr (OP == B_MUL) return x * y;
    else if constexpr (OP == B_DIV) return x / y;
    else if constexpr (OP == B_POW) {
        if constexpr (F) return M<T>::pow(x, y); else return ember_ipow(x, y);
    }
    else if constexpr (OP == B_MAXIMUM) {
        if constexpr (F) return ember_maxf(x, y); else return x > y ? x : y;
    }
    else if constexpr (OP == B_MINIMUM) {
        if constexpr (F) return ember_minf(x, y); else return x < y ? x : y;
    }
    else if constexpr (OP == B_ATAN2) return M<T>::atan2(x, y);
    else if constexpr (OP == B_REMAINDER) { // sign of the divisor; x % 0 = 0 for ints
        if constexpr (F) {
            double a = (double)x, b = (double)y;
            double r = ::fmod(a, b);
            if (r != 0 && ((r < 0) != (b < 0))) r += b;
            return (T)r;
        } else {
            if (y == 0) return 0;
            T r = x % y;
            if (r != 0 && ((r < 0) != (y < 0))) r += y;
            return r;
        }
    }
    else if constexpr (OP == B_FLOOR_DIVIDE) { // x // 0 = 0 for ints
        if constexpr (F) return (T)::floor((double)x / (double)y);
        else {
            if (y == 0) return 0;
            T q = x / y;
            if ((x % y != 0) && ((x < 0) != (y < 0))) q--;
            return q;
        }
    }
    else if constexpr (OP == B_LOGICAL_AND) return x && y;
    else if constexpr (OP == B_LOGICAL_OR) return x || y;
    else if constexpr (OP == B_LOGICAL_XOR) return x != y;
    else if constexpr (OP == B_EQ) return x == y;
    else if constexpr (OP == B_NE) return x != y;
    else if constexpr (OP == B_LT) return x < y;
    else if constexpr (OP == B_LE) return x <= y;
    else if constexpr (OP == B_GT) return x > y;
    else if constexpr (OP == B_GE) return x >= y;
    else return O();
}

template <typename T, typename O, int OP>
__global__ void ember_binary(O* d, const T* a, const T* b, Layout L, i64 n) {
    i64 off[3];
    EMBER_FOR(i, n) {
        ember_offsets<3>(L, i, off);
        d[off[0]] = (O)ember_binary_op<OP, T, O>(a[off[1]], b[off[2]]);
    }
}

template <typename T>
__global__ void ember_where(T* d, const bool* c, const T* a, const T* b, Layout L, i64 n) {
    i64 off[4];
    EMBER_FOR(i, n) {
        ember_offsets<4>(L, i, off);
        d[off[0]] = c[off[1]] ? a[off[2]] : b[off[3]];
    }
}

template <typename T>
__global__ void ember_arange(T* d, i64 n, double start, double step) {
    EMBER_FOR(i, n) { d[i] = (T)(start + (double)i * step); }
}
