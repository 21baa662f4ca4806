// attention.cu: fused scaled dot-product attention (FlashAttention-2's
// schedule), forward and backward, the L×S scores never stored.
//
// Templates: T is the storage type of q, k, v, out and the gradients, A
// the accumulation type (of the softmax statistics, lse and every sum), D
// the head-dim bound of the per-thread registers (E, Ev ≤ D). fp32 and fp64
// are instantiated as <float, float, D> and <double, double, D>; bf16 and
// fp16 as <ember_bf16, float, D> and <ember_f16, float, D>: ember_attn_ld
// and ember_attn_st convert at the bit level (common.cuh; NVRTC without a
// toolkit has no cuda_bf16.h), so the tiles in shared memory, the scores,
// the online softmax and every sum are float, and each output is rounded
// once (round to nearest even).
//
// Each thread owns one query row (forward, dQ) or one key row (dK, dV)
// in registers; a block of ATTN_ROWS threads walks the other side's rows
// one tile of ATTN_BC(D, A) rows at a time, staged in shared memory.
// No warp shuffles, no atomics: every output is written by one thread,
// so results are deterministic (and run in the g++ emulator as on a GPU).

#define ATTN_ROWS 64

// Tile rows: two [BC][D] tiles of A in 32 KiB of static shared memory.
template <int D, typename A> struct AttnTile {
    static constexpr int BC = (16384 / (D * (int)sizeof(A))) < 64 ? (16384 / (D * (int)sizeof(A))) : 64;
};

// AttnShape: sizes, strides in elements (batch, row, column) and options.
// Every field is 8 bytes (the Go side packs it as such).
struct AttnShape {
    i64 B, L, S, E, Ev;
    i64 q[3], k[3], v[3], o[3], g[3]; // q, k, v, out, gout
    i64 m[4];                         // mask: b1, b2, row, column
    i64 mb2;                          // the mask's second batch extent
    i64 mask;                         // 0 none, 1 bool (true = take part), 2 added
    i64 causal;                       // key j > query i is masked
    double scale;
};

template <typename A, typename T> __device__ __forceinline__ A ember_attn_ld(T x) { return (A)x; }
template <typename T, typename A> __device__ __forceinline__ T ember_attn_st(A x) { return (T)x; }
template <> __device__ __forceinline__ float ember_attn_ld<float, ember_bf16>(ember_bf16 x) { return ember_half_to_f32(x); }
template <> __device__ __forceinline__ float ember_attn_ld<float, ember_f16>(ember_f16 x) { return ember_half_to_f32(x); }
template <> __device__ __forceinline__ ember_bf16 ember_attn_st<ember_bf16, float>(float x) { return ember_f32_to_half<ember_bf16>(x); }
template <> __device__ __forceinline__ ember_f16 ember_attn_st<ember_f16, float>(float x) { return ember_f32_to_half<ember_f16>(x); }

// ember_attn_score applies the mask and the causal triangle to the scaled
// score s of query i, key j in batch b.
template <typename T, typename A>
__device__ __forceinline__ A ember_attn_score(const AttnShape& a, const void* mask, i64 b, i64 i, i64 j, A s) {
    if (a.causal && j > i) return -M<A>::inf();
    if (a.mask) {
        i64 off = (b / a.mb2) * a.m[0] + (b % a.mb2) * a.m[1] + i * a.m[2] + j * a.m[3];
        if (a.mask == 1) {
            if (!((const bool*)mask)[off]) return -M<A>::inf();
        } else {
            s += ember_attn_ld<A>(((const T*)mask)[off]);
        }
    }
    return s;
}

// ember_attn_stage copies rows [r0, r0+n) (n ≤ BC) of a [rows, cols]
// matrix at p (row stride rs, column stride cs) into the shared tile dst
// (zeros past n).
template <typename T, typename A, int D, int BC>
__device__ __forceinline__ void ember_attn_stage(A (*dst)[D], const T* p, i64 rs, i64 cs, i64 r0, i64 n, i64 cols) {
    for (i64 x = threadIdx.x; x < BC * cols; x += blockDim.x) {
        i64 r = x / cols, c = x - r * cols;
        dst[r][c] = r < n ? ember_attn_ld<A>(p[(r0 + r) * rs + c * cs]) : (A)0;
    }
}

// ember_attn_fwd: block w → batch w / ceil(L/ROWS), rows of its query
// tile; out = acc / l, lse = m + log l (−∞ and NaN for a row with no key).
template <typename T, typename A, int D>
__global__ void ember_attn_fwd(T* out, A* lse, const T* q, const T* k, const T* v, const void* mask, AttnShape a) {
    constexpr int BC = AttnTile<D, A>::BC;
    __shared__ A ks[BC][D];
    __shared__ A vs[BC][D];
    const i64 qt = (a.L + ATTN_ROWS - 1) / ATTN_ROWS;
    const A scale = (A)a.scale, ninf = -M<A>::inf();
    for (i64 w = blockIdx.x; w < a.B * qt; w += gridDim.x) {
        const i64 b = w / qt, r0 = (w - b * qt) * ATTN_ROWS;
        const i64 i = r0 + threadIdx.x;
        const bool live = i < a.L;
        A qr[D], acc[D];
        A m = ninf, l = 0;
        for (int d = 0; d < a.E; d++) qr[d] = live ? ember_attn_ld<A>(q[b * a.q[0] + i * a.q[1] + d * a.q[2]]) : (A)0;
        for (int d = 0; d < a.Ev; d++) acc[d] = 0;
        i64 nk = a.S;
        if (a.causal && r0 + ATTN_ROWS < nk) nk = r0 + ATTN_ROWS;
        for (i64 c0 = 0; c0 < nk; c0 += BC) {
            const i64 nc = a.S - c0 < BC ? a.S - c0 : BC;
            __syncthreads();
            ember_attn_stage<T, A, D, BC>(ks, k + b * a.k[0], a.k[1], a.k[2], c0, nc, a.E);
            ember_attn_stage<T, A, D, BC>(vs, v + b * a.v[0], a.v[1], a.v[2], c0, nc, a.Ev);
            __syncthreads();
            if (!live) continue;
            A sc[BC];
            A mt = m;
            for (int j = 0; j < nc; j++) {
                A s = 0;
                for (int d = 0; d < a.E; d++) s += qr[d] * ks[j][d];
                s = ember_attn_score<T, A>(a, mask, b, i, c0 + j, s * scale);
                sc[j] = s;
                if (s > mt || s != s) mt = s;
            }
            if (mt == ninf) continue; // nothing seen yet
            const A alpha = M<A>::exp(m - mt);
            A ts = 0;
            for (int d = 0; d < a.Ev; d++) acc[d] *= alpha;
            for (int j = 0; j < nc; j++) {
                const A p = M<A>::exp(sc[j] - mt);
                ts += p;
                for (int d = 0; d < a.Ev; d++) acc[d] += p * vs[j][d];
            }
            l = l * alpha + ts;
            m = mt;
        }
        if (live) {
            const A inv = (A)1 / l;
            for (int d = 0; d < a.Ev; d++) out[(b * a.L + i) * a.Ev + d] = ember_attn_st<T, A>(acc[d] * inv);
            lse[b * a.L + i] = m + M<A>::log(l);
        }
    }
}

// ember_attn_bwd_dq: one thread per query row: D_i = dO_i·O_i (written to
// dd for the dK/dV pass), then dQ_i = scale·Σ_j P_ij (dP_ij − D_i) K_j with
// P recomputed from lse.
template <typename T, typename A, int D>
__global__ void ember_attn_bwd_dq(T* gq, A* dd, const T* gout, const T* q, const T* k, const T* v, const void* mask,
                                  const T* out, const A* lse, AttnShape a) {
    constexpr int BC = AttnTile<D, A>::BC;
    __shared__ A ks[BC][D];
    __shared__ A vs[BC][D];
    const i64 qt = (a.L + ATTN_ROWS - 1) / ATTN_ROWS;
    const A scale = (A)a.scale;
    for (i64 w = blockIdx.x; w < a.B * qt; w += gridDim.x) {
        const i64 b = w / qt, r0 = (w - b * qt) * ATTN_ROWS;
        const i64 i = r0 + threadIdx.x;
        const bool live = i < a.L;
        A qr[D], dor[D], dq[D];
        A di = 0, li = 0;
        if (live) {
            for (int d = 0; d < a.E; d++) qr[d] = ember_attn_ld<A>(q[b * a.q[0] + i * a.q[1] + d * a.q[2]]);
            for (int d = 0; d < a.Ev; d++) {
                dor[d] = ember_attn_ld<A>(gout[b * a.g[0] + i * a.g[1] + d * a.g[2]]);
                di += dor[d] * ember_attn_ld<A>(out[b * a.o[0] + i * a.o[1] + d * a.o[2]]);
            }
            dd[b * a.L + i] = di;
            li = lse[b * a.L + i];
        }
        for (int d = 0; d < a.E; d++) dq[d] = 0;
        i64 nk = a.S;
        if (a.causal && r0 + ATTN_ROWS < nk) nk = r0 + ATTN_ROWS;
        for (i64 c0 = 0; c0 < nk; c0 += BC) {
            const i64 nc = a.S - c0 < BC ? a.S - c0 : BC;
            __syncthreads();
            ember_attn_stage<T, A, D, BC>(ks, k + b * a.k[0], a.k[1], a.k[2], c0, nc, a.E);
            ember_attn_stage<T, A, D, BC>(vs, v + b * a.v[0], a.v[1], a.v[2], c0, nc, a.Ev);
            __syncthreads();
            if (!live) continue;
            for (int j = 0; j < nc; j++) {
                A s = 0, dp = 0;
                for (int d = 0; d < a.E; d++) s += qr[d] * ks[j][d];
                s = ember_attn_score<T, A>(a, mask, b, i, c0 + j, s * scale);
                const A p = M<A>::exp(s - li);
                for (int d = 0; d < a.Ev; d++) dp += dor[d] * vs[j][d];
                const A ds = p * (dp - di);
                for (int d = 0; d < a.E; d++) dq[d] += ds * ks[j][d];
            }
        }
        if (live)
            for (int d = 0; d < a.E; d++) gq[(b * a.L + i) * a.E + d] = ember_attn_st<T, A>(dq[d] * scale);
    }
}

// ember_attn_bwd_dkv: one thread per key row j: dV_j = Σ_i P_ij dO_i and
// dK_j = scale·Σ_i P_ij (dP_ij − D_i) Q_i over the query rows that see it.
template <typename T, typename A, int D>
__global__ void ember_attn_bwd_dkv(T* gk, T* gv, const T* gout, const T* q, const T* k, const T* v, const void* mask,
                                   const A* lse, const A* dd, AttnShape a) {
    constexpr int BC = AttnTile<D, A>::BC;
    __shared__ A qs[BC][D];
    __shared__ A gs[BC][D];
    __shared__ A ls[BC];
    __shared__ A ds_[BC];
    const i64 kt = (a.S + ATTN_ROWS - 1) / ATTN_ROWS;
    const A scale = (A)a.scale;
    for (i64 w = blockIdx.x; w < a.B * kt; w += gridDim.x) {
        const i64 b = w / kt, c0 = (w - b * kt) * ATTN_ROWS;
        const i64 j = c0 + threadIdx.x;
        const bool live = j < a.S;
        A kr[D], vr[D], dk[D], dv[D];
        for (int d = 0; d < a.E; d++) {
            kr[d] = live ? ember_attn_ld<A>(k[b * a.k[0] + j * a.k[1] + d * a.k[2]]) : (A)0;
            dk[d] = 0;
        }
        for (int d = 0; d < a.Ev; d++) {
            vr[d] = live ? ember_attn_ld<A>(v[b * a.v[0] + j * a.v[1] + d * a.v[2]]) : (A)0;
            dv[d] = 0;
        }
        const i64 first = a.causal ? c0 / BC * BC : 0; // queries above c0 see no key of this block
        for (i64 r0 = first; r0 < a.L; r0 += BC) {
            const i64 nr = a.L - r0 < BC ? a.L - r0 : BC;
            __syncthreads();
            ember_attn_stage<T, A, D, BC>(qs, q + b * a.q[0], a.q[1], a.q[2], r0, nr, a.E);
            ember_attn_stage<T, A, D, BC>(gs, gout + b * a.g[0], a.g[1], a.g[2], r0, nr, a.Ev);
            for (i64 x = threadIdx.x; x < nr; x += blockDim.x) {
                ls[x] = lse[b * a.L + r0 + x];
                ds_[x] = dd[b * a.L + r0 + x];
            }
            __syncthreads();
            if (!live) continue;
            for (int r = 0; r < nr; r++) {
                A s = 0, dp = 0;
                for (int d = 0; d < a.E; d++) s += qs[r][d] * kr[d];
                s = ember_attn_score<T, A>(a, mask, b, r0 + r, j, s * scale);
                const A p = M<A>::exp(s - ls[r]);
                for (int d = 0; d < a.Ev; d++) {
                    dv[d] += p * gs[r][d];
                    dp += gs[r][d] * vr[d];
                }
                const A dsv = p * (dp - ds_[r]);
                for (int d = 0; d < a.E; d++) dk[d] += dsv * qs[r][d];
            }
        }
        if (live) {
            for (int d = 0; d < a.E; d++) gk[(b * a.S + j) * a.E + d] = ember_attn_st<T, A>(dk[d] * scale);
            for (int d = 0; d < a.Ev; d++) gv[(b * a.S + j) * a.Ev + d] = ember_attn_st<T, A>(dv[d]);
        }
    }
}
