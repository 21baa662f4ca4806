// index.cu: gather, scatter (set and add), cumulative scans and a stable
// sort along one dim. Index operands are long long. ember checks their
// range as a deferred check (a device-side assert, read at the next
// synchronisation), so the kernels guard every access: an index outside
// [0, size) gathers 0 and scatters nothing.

// ember_gather: for each point o of the space L (index's shape), operands
// 0 dst, 1 index, 2 src with the gathered dim's stride zeroed:
// dst[o] = src[o + index[o] * sd].
template <typename T>
__global__ void ember_gather(T* d, const i64* ix, const T* s, Layout L, i64 n, i64 sd, i64 size) {
    i64 off[3];
    EMBER_FOR(o, n) {
        ember_offsets<3>(L, o, off);
        i64 j = ix[off[1]];
        d[off[0]] = (j >= 0 && j < size) ? s[off[2] + j * sd] : T();
    }
}

template <typename T> __device__ __forceinline__ void ember_atomic_add(T* p, T v) { atomicAdd(p, v); }
template <> __device__ __forceinline__ void ember_atomic_add<i64>(i64* p, i64 v) {
    atomicAdd((unsigned long long*)p, (unsigned long long)v);
}
// The two-byte floats: a compare-and-swap loop on the aligned 32-bit word
// holding the element, the sum computed in float and rounded once (no
// 16-bit atomicAdd without cuda_bf16.h / cuda_fp16.h).
template <typename H> __device__ __forceinline__ void ember_atomic_add_half(H* p, H v) {
    unsigned int* word = (unsigned int*)((unsigned long long)p & ~3ull);
    const unsigned int shift = ((unsigned long long)p & 2ull) ? 16u : 0u;
    unsigned int old = *word, assumed;
    do {
        assumed = old;
        H cur;
        cur.bits = (unsigned short)(assumed >> shift);
        const H sum = ember_f32_to_half<H>(ember_half_to_f32(cur) + ember_half_to_f32(v));
        const unsigned int nw = (assumed & ~(0xFFFFu << shift)) | ((unsigned int)sum.bits << shift);
        old = atomicCAS(word, assumed, nw);
    } while (old != assumed);
}
template <> __device__ __forceinline__ void ember_atomic_add<ember_bf16>(ember_bf16* p, ember_bf16 v) { ember_atomic_add_half(p, v); }
template <> __device__ __forceinline__ void ember_atomic_add<ember_f16>(ember_f16* p, ember_f16 v) { ember_atomic_add_half(p, v); }

// ember_scatter: for each point o of L (index's shape), operands 0 index,
// 1 src, 2 dst with the scattered dim's stride zeroed: dst[o + index[o]*dd]
// = src[o] (ACC 0) or += src[o] (ACC 1, atomically).
template <typename T, int ACC>
__global__ void ember_scatter(T* d, const i64* ix, const T* s, Layout L, i64 n, i64 dd, i64 size) {
    i64 off[3];
    EMBER_FOR(o, n) {
        ember_offsets<3>(L, o, off);
        i64 j = ix[off[0]];
        if (j < 0 || j >= size) continue;
        T* p = d + off[2] + j * dd;
        if constexpr (ACC) ember_atomic_add<T>(p, s[off[1]]);
        else *p = s[off[1]];
    }
}

// The accumulator of a scan: double for float, as on the CPU.
template <typename T> struct ScanAcc { typedef T type; };
template <> struct ScanAcc<float> { typedef double type; };

// ember_scan: one thread per line. L is the space of lines (operands 0 dst,
// 1 src); each line has n elements at strides ds, ss.
template <typename T, int PROD, int REV>
__global__ void ember_scan(T* d, const T* s, Layout L, i64 lines, i64 n, i64 ds, i64 ss) {
    i64 off[2];
    EMBER_FOR(l, lines) {
        ember_offsets<2>(L, l, off);
        T* dl = d + off[0];
        const T* sl = s + off[1];
        typename ScanAcc<T>::type acc = PROD ? 1 : 0;
        for (i64 c = 0; c < n; c++) {
            i64 j = REV ? n - 1 - c : c;
            if (PROD) acc *= sl[j * ss];
            else acc += sl[j * ss];
            dl[j * ds] = (T)acc;
        }
    }
}

// ember_sort_before reports whether (x, i) comes before (y, j): by key
// (NaN largest), ties by position, so the order is total and the sort stable.
template <typename T, int DESC>
__device__ __forceinline__ bool ember_sort_before(T x, i64 i, T y, i64 j) {
    bool xn = ember_isnan(x), yn = ember_isnan(y);
    bool lt, gt;
    if (DESC) {
        lt = (xn && !yn) || x > y; // x first
        gt = (yn && !xn) || y > x;
    } else {
        lt = (!xn && yn) || x < y;
        gt = (!yn && xn) || y < x;
    }
    if (lt) return true;
    if (gt) return false;
    return i < j;
}

// ember_sort: one block per line (L: the space of lines, operands 0
// values, 1 indices, 2 src; each line n elements at strides vs, is, ss).
// The line is copied into values and indices, then sorted there by a
// bitonic network over the next power of two p >= n, in the form whose
// every comparator puts the earlier element first: pairs reaching past n
// are skipped, as if padded with elements that sort last.
template <typename T, int DESC>
__global__ void ember_sort(T* v, i64* ix, const T* s, Layout L, i64 lines, i64 n, i64 p, i64 vs, i64 is, i64 ss) {
    i64 off[3];
    for (i64 l = blockIdx.x; l < lines; l += gridDim.x) {
        ember_offsets<3>(L, l, off);
        T* vl = v + off[0];
        i64* il = ix + off[1];
        const T* sl = s + off[2];
        for (i64 j = threadIdx.x; j < n; j += blockDim.x) {
            vl[j * vs] = sl[j * ss];
            il[j * is] = j;
        }
        __syncthreads();
        for (i64 k = 2; k <= p; k <<= 1) {
            for (i64 j = k >> 1; j > 0; j >>= 1) {
                for (i64 t = threadIdx.x; t < p / 2; t += blockDim.x) {
                    i64 a, b;
                    if (j == (k >> 1)) { // the flip: a pairs with its mirror in the block of k
                        i64 blk = t / j, r = t - blk * j;
                        a = blk * k + r;
                        b = blk * k + k - 1 - r;
                    } else { // the half-cleaner
                        i64 blk = t / j, r = t - blk * j;
                        a = blk * 2 * j + r;
                        b = a + j;
                    }
                    if (b < n) {
                        T x = vl[a * vs], y = vl[b * vs];
                        i64 xi = il[a * is], yi = il[b * is];
                        if (ember_sort_before<T, DESC>(y, yi, x, xi)) {
                            vl[a * vs] = y;
                            vl[b * vs] = x;
                            il[a * is] = yi;
                            il[b * is] = xi;
                        }
                    }
                }
                __syncthreads();
            }
        }
    }
}
