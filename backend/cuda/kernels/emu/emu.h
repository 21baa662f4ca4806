// emu.h: just enough of CUDA's device environment for g++ to compile
// ember's kernel sources into a CPU emulation (backend/cuda/kernels/emu).
//
// An emulated block runs on one OS thread, its threads as fibers
// switched at __syncthreads(); so __shared__ (static thread_local) storage
// is per block, and blocks run in parallel on worker threads.
#pragma once
#define EMBER_EMU 1

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <atomic>
#include <cstddef>
#include <type_traits>
#include <utility>

struct dim3 {
    unsigned x, y, z;
};

// The emulator's own thread-local variables (threadIdx and the like). They
// keep the default model: initial-exec would save a __tls_get_addr call
// per read, but dlopen then fails with "cannot allocate memory in static
// TLS block" once the CUDA libraries have taken glibc's small reserve.
#define EMU_TLS thread_local

namespace emu {
extern EMU_TLS dim3 threadIdx_, blockIdx_, blockDim_, gridDim_;
void syncthreads();

// invoke calls kernel k with its parameters unpacked from args (each entry
// points at one parameter's bytes).
template <typename... P, std::size_t... I>
inline void invoke_impl(void (*k)(P...), void** args, std::index_sequence<I...>) {
    k(*static_cast<std::remove_cv_t<std::remove_reference_t<P>>*>(args[I])...);
}
template <typename... P>
inline void invoke(void (*k)(P...), void** args) {
    invoke_impl(k, args, std::index_sequence_for<P...>{});
}

struct entry {
    const char* name;
    void (*call)(void**);
};
} // namespace emu

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static thread_local
#define __restrict__
#define threadIdx (::emu::threadIdx_)
#define blockIdx (::emu::blockIdx_)
#define blockDim (::emu::blockDim_)
#define gridDim (::emu::gridDim_)
#define __syncthreads() ::emu::syncthreads()

#define EMBER_INF_F __builtin_inff()
#define EMBER_NAN_F __builtin_nanf("")
#define EMBER_INF_D __builtin_inf()

inline float __int_as_float(int x) { float f; memcpy(&f, &x, 4); return f; }
inline int __float_as_int(float x) { int i; memcpy(&i, &x, 4); return i; }
inline double __longlong_as_double(long long x) { double f; memcpy(&f, &x, 8); return f; }
inline long long __double_as_longlong(double x) { long long i; memcpy(&i, &x, 8); return i; }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

// Atomics (blocks run concurrently on worker threads).
template <typename T>
inline T emu_atomic_add(T* p, T v) {
    if constexpr (std::is_integral_v<T>) {
        return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
    } else {
        T old, nv;
        __atomic_load(p, &old, __ATOMIC_SEQ_CST);
        do {
            nv = old + v;
        } while (!__atomic_compare_exchange(p, &old, &nv, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
        return old;
    }
}
inline float atomicAdd(float* p, float v) { return emu_atomic_add(p, v); }
inline double atomicAdd(double* p, double v) { return emu_atomic_add(p, v); }
inline int atomicAdd(int* p, int v) { return emu_atomic_add(p, v); }
inline unsigned atomicAdd(unsigned* p, unsigned v) { return emu_atomic_add(p, v); }
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) { return emu_atomic_add(p, v); }
inline unsigned atomicCAS(unsigned* p, unsigned cmp, unsigned v) {
    __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return cmp; // the old value, whether or not it was swapped
}
inline int atomicMax(int* p, int v) {
    int old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (old < v && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return old;
}
inline int atomicMin(int* p, int v) {
    int old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (old > v && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return old;
}
inline int atomicCAS(int* p, int cmp, int v) {
    __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return cmp;
}
inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long cmp, unsigned long long v) {
    __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return cmp;
}
