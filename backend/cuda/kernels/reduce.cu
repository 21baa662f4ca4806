// reduce.cu: reductions along dims, argmax/argmin, softmax.
// R_* (package backend's ReduceOp numbers) are generated and prepended.

// An accumulator: value, and for argmax/argmin the index (-1 = empty).
template <typename T> struct RAcc {
    T v;
    i64 i;
};

template <int OP, typename T> __device__ __forceinline__ RAcc<T> ember_rinit() {
    RAcc<T> a;
    a.i = -1;
    if constexpr (OP == R_PROD) a.v = (T)1;
    else if constexpr (OP == R_MAX) a.v = Lim<T>::lo();
    else if constexpr (OP == R_MIN) a.v = Lim<T>::hi();
    else if constexpr (OP == R_ALL) a.v = (T)1;
    else a.v = (T)0;
    return a;
}

// ember_rmerge folds b into a. For argmax/argmin NaN counts as the best
// value and ties go to the lower index, so the order of merges is free.
template <int OP, typename T>
__device__ __forceinline__ RAcc<T> ember_rmerge(RAcc<T> a, RAcc<T> b) {
    if constexpr (OP == R_SUM) a.v = a.v + b.v;
    else if constexpr (OP == R_PROD) a.v = a.v * b.v;
    else if constexpr (OP == R_MAX) { if (b.v > a.v || b.v != b.v) a.v = b.v; }
    else if constexpr (OP == R_MIN) { if (b.v < a.v || b.v != b.v) a.v = b.v; }
    else if constexpr (OP == R_ANY) a.v = a.v || b.v;
    else if constexpr (OP == R_ALL) a.v = a.v && b.v;
    else { // R_ARGMAX, R_ARGMIN
        if (b.i < 0) return a;
        if (a.i < 0) return b;
        bool an = a.v != a.v, bn = b.v != b.v;
        bool take;
        if (an) take = bn && b.i < a.i;
        else if (bn) take = true;
        else if (b.v == a.v) take = b.i < a.i;
        else if constexpr (OP == R_ARGMAX) take = b.v > a.v;
        else take = b.v < a.v;
        if (take) return b;
    }
    return a;
}

template <int OP, typename T, typename O>
__device__ __forceinline__ O ember_rresult(RAcc<T> a) {
    if constexpr (OP == R_ARGMAX || OP == R_ARGMIN) return (O)(a.i < 0 ? 0 : a.i);
    else return (O)a.v;
}

// ember_reduce reduces src over the space R for each point of the space K.
// K's operand 0 is dst, operand 1 src; R's operand 0 is src (base 0).
// blockMode 0: one thread per output; 1: one block per output with a
// shared-memory tree (blockDim.x a power of two, at most 1024).
template <typename T, typename O, int OP>
__global__ void ember_reduce(O* d, const T* s, Layout K, Layout R, i64 nOut, i64 nRed, int blockMode) {
    i64 ko[2], ro[1];
    if (!blockMode) {
        EMBER_FOR(o, nOut) {
            ember_offsets<2>(K, o, ko);
            const T* base = s + ko[1];
            RAcc<T> acc = ember_rinit<OP, T>();
            for (i64 r = 0; r < nRed; r++) {
                ember_offsets<1>(R, r, ro);
                RAcc<T> x;
                x.v = base[ro[0]];
                x.i = r;
                acc = ember_rmerge<OP, T>(acc, x);
            }
            d[ko[0]] = ember_rresult<OP, T, O>(acc);
        }
        return;
    }
    __shared__ RAcc<T> sh[EMBER_MAX_BLOCK];
    unsigned t = threadIdx.x;
    for (i64 o = blockIdx.x; o < nOut; o += gridDim.x) {
        ember_offsets<2>(K, o, ko);
        const T* base = s + ko[1];
        RAcc<T> acc = ember_rinit<OP, T>();
        for (i64 r = t; r < nRed; r += blockDim.x) {
            ember_offsets<1>(R, r, ro);
            RAcc<T> x;
            x.v = base[ro[0]];
            x.i = r;
            acc = ember_rmerge<OP, T>(acc, x);
        }
        sh[t] = acc;
        __syncthreads();
        for (unsigned w = blockDim.x / 2; w > 0; w >>= 1) {
            if (t < w) sh[t] = ember_rmerge<OP, T>(sh[t], sh[t + w]);
            __syncthreads();
        }
        if (t == 0) d[ko[0]] = ember_rresult<OP, T, O>(sh[0]);
        __syncthreads();
    }
}

// Block-wide reductions for softmax (blockDim.x a power of two).
template <typename T>
__device__ __forceinline__ T ember_block_max(T* sh, T v) {
    unsigned t = threadIdx.x;
    sh[t] = v;
    __syncthreads();
    for (unsigned w = blockDim.x / 2; w > 0; w >>= 1) {
        if (t < w) {
            T b = sh[t + w];
            if (b > sh[t] || b != b) sh[t] = b;
        }
        __syncthreads();
    }
    T r = sh[0];
    __syncthreads();
    return r;
}
template <typename T>
__device__ __forceinline__ T ember_block_sum(T* sh, T v) {
    unsigned t = threadIdx.x;
    sh[t] = v;
    __syncthreads();
    for (unsigned w = blockDim.x / 2; w > 0; w >>= 1) {
        if (t < w) sh[t] = sh[t] + sh[t + w];
        __syncthreads();
    }
    T r = sh[0];
    __syncthreads();
    return r;
}

// ember_softmax: one block per row of n contiguous elements.
template <typename T, int LOG>
__global__ void ember_softmax(T* d, const T* s, i64 rows, i64 n) {
    __shared__ T sh[EMBER_MAX_BLOCK];
    unsigned t = threadIdx.x;
    for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {
        const T* in = s + row * n;
        T* out = d + row * n;
        T m = -M<T>::inf();
        for (i64 j = t; j < n; j += blockDim.x) {
            T x = in[j];
            if (x > m || x != x) m = x;
        }
        m = ember_block_max<T>(sh, m);
        T sum = 0;
        for (i64 j = t; j < n; j += blockDim.x) sum += M<T>::exp(in[j] - m);
        sum = ember_block_sum<T>(sh, sum);
        if (LOG) {
            T ls = m + M<T>::log(sum);
            for (i64 j = t; j < n; j += blockDim.x) out[j] = in[j] - ls;
        } else {
            T inv = (T)1 / sum;
            for (i64 j = t; j < n; j += blockDim.x) out[j] = M<T>::exp(in[j] - m) * inv;
        }
    }
}
