// random.cu: Philox4x32-10 uniform and normal fills, following
// ember/internal/philox: element i uses block (seed, offset + i/4), lane i%4.

struct Philox4 {
    u32 x[4];
};

__device__ __forceinline__ Philox4 ember_philox(u64 seed, u64 counter) {
    u32 c0 = (u32)counter, c1 = (u32)(counter >> 32), c2 = 0, c3 = 0;
    u32 k0 = (u32)seed, k1 = (u32)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        u64 p0 = (u64)0xD2511F53u * c0;
        u64 p1 = (u64)0xCD9E8D57u * c2;
        u32 n0 = (u32)(p1 >> 32) ^ c1 ^ k0;
        u32 n1 = (u32)p1;
        u32 n2 = (u32)(p0 >> 32) ^ c3 ^ k1;
        u32 n3 = (u32)p0;
        c0 = n0; c1 = n1; c2 = n2; c3 = n3;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    Philox4 o;
    o.x[0] = c0; o.x[1] = c1; o.x[2] = c2; o.x[3] = c3;
    return o;
}

template <typename T> __device__ __forceinline__ T ember_uniform(u32 x);
// (x >> 8) * 2^-24: 24 bits, exact in float32.
template <> __device__ __forceinline__ float ember_uniform<float>(u32 x) {
    return (float)(x >> 8) * (1.0f / 16777216.0f);
}
template <> __device__ __forceinline__ double ember_uniform<double>(u32 x) {
    return (double)x * (1.0 / 4294967296.0);
}
// two-byte floats: the top digits of the lane, k * 2^-digits (8 for bf16,
// 11 for f16), exact and below 1 (philox.UniformDigits).
template <> __device__ __forceinline__ ember_bf16 ember_uniform<ember_bf16>(u32 x) {
    return ember_f32_to_half<ember_bf16>((float)(x >> 24) * (1.0f / 256.0f));
}
template <> __device__ __forceinline__ ember_f16 ember_uniform<ember_f16>(u32 x) {
    return ember_f32_to_half<ember_f16>((float)(x >> 21) * (1.0f / 2048.0f));
}

// ember_normal_to: a double normal draw to T (two-byte floats through
// float32, rounded once, as the CPU's).
template <typename T> __device__ __forceinline__ T ember_normal_to(double v) { return (T)v; }
template <> __device__ __forceinline__ ember_bf16 ember_normal_to<ember_bf16>(double v) {
    return ember_f32_to_half<ember_bf16>((float)v);
}
template <> __device__ __forceinline__ ember_f16 ember_normal_to<ember_f16>(double v) {
    return ember_f32_to_half<ember_f16>((float)v);
}

// ember_random: one thread per Philox block (4 elements).
template <typename T, int NORMAL>
__global__ void ember_random(T* d, i64 n, u64 seed, u64 offset) {
    i64 nb = (n + 3) / 4;
    EMBER_FOR(q, nb) {
        Philox4 b = ember_philox(seed, offset + (u64)q);
        i64 i0 = q * 4;
        if (NORMAL) {
            for (int p = 0; p < 4; p += 2) {
                double u1 = ((double)b.x[p] + 1.0) * (1.0 / 4294967296.0);
                double u2 = (double)b.x[p + 1] * (1.0 / 4294967296.0);
                double r = ::sqrt(-2.0 * ::log(u1));
                double th = 2.0 * 3.14159265358979323846 * u2;
                if (i0 + p < n) d[i0 + p] = ember_normal_to<T>(r * ::cos(th));
                if (i0 + p + 1 < n) d[i0 + p + 1] = ember_normal_to<T>(r * ::sin(th));
            }
        } else {
            for (int l = 0; l < 4; l++)
                if (i0 + l < n) d[i0 + l] = ember_uniform<T>(b.x[l]);
        }
    }
}
