// elementwise.cu: fill, copy with cast, unary, binary, where, arange.
// The Go side prepends the op constants (U_*, B_*: package backend's op
// numbers), common.cuh, scalar.cuh and the op chains generated from the op
// table (zz_ops.cuh).

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

// --- unary and binary (the op chains are generated: zz_ops.cuh) ---
// bfloat16 and float16 load as float, compute the row's float expression
// and round back once (ember_compute), as the CPU kernels do.

template <typename T, typename O, int OP>
__global__ void ember_unary(O* d, const T* s, Layout L, i64 n, double p1, double p2, double p3) {
    i64 off[2];
    EMBER_FOR(i, n) {
        ember_offsets<2>(L, i, off);
        typedef typename ember_compute<T>::type C;
        typedef typename ember_compute<O>::type OC;
        d[off[0]] = ember_cast<O, OC>(ember_unary_op<OP, C, OC>(ember_cast<C, T>(s[off[1]]), p1, p2, p3));
    }
}

template <typename T, typename O, int OP>
__global__ void ember_binary(O* d, const T* a, const T* b, Layout L, i64 n) {
    i64 off[3];
    EMBER_FOR(i, n) {
        ember_offsets<3>(L, i, off);
        typedef typename ember_compute<T>::type C;
        typedef typename ember_compute<O>::type OC;
        d[off[0]] = ember_cast<O, OC>((OC)ember_binary_op<OP, C, OC>(ember_cast<C, T>(a[off[1]]), ember_cast<C, T>(b[off[2]])));
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
