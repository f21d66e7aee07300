// ---- gsync half precision prelude -------------------------------------------
// `f16` and `bf16` with the meaning of the Rust `half` crate: arithmetic widens to f32,
// operates there and rounds back to nearest even (for + - * / and sqrt that is also the
// correctly rounded half precision result: f32 carries more than 2p + 2 bits); conversions
// and bit-level operations are the crate's bit for bit, NaN payloads included. Compiled in
// only for kernels that use a half precision type.
//
// CUDA's own half operators are switched off: `__hdiv` is not correctly rounded on every
// architecture, and the operators below say what they compute. The conversion constructors
// stay (a bounds-checked load yields `(T)0`); generated code converts through the named
// helpers only.
#define __CUDA_NO_HALF_OPERATORS__
#define __CUDA_NO_HALF2_OPERATORS__
#define __CUDA_NO_BFLOAT16_OPERATORS__
#define __CUDA_NO_BFLOAT162_OPERATORS__
#include <cuda_fp16.h>
#include <cuda_bf16.h>

typedef __half f16;
typedef __nv_bfloat16 bf16;

namespace gsync {

__device__ __forceinline__ u16 half_to_bits(f16 h) { return __half_as_ushort(h); }
__device__ __forceinline__ u16 half_to_bits(bf16 h) { return __bfloat16_as_ushort(h); }
__device__ __forceinline__ f16 f16_from_bits(u16 b) { return __ushort_as_half(b); }
__device__ __forceinline__ bf16 bf16_from_bits(u16 b) { return __ushort_as_bfloat16(b); }
template <typename H> __device__ __forceinline__ H half_from_bits(u16 b);
template <> __device__ __forceinline__ f16 half_from_bits<f16>(u16 b) { return f16_from_bits(b); }
template <> __device__ __forceinline__ bf16 half_from_bits<bf16>(u16 b) { return bf16_from_bits(b); }

// Exact widening. A NaN keeps its sign and payload and becomes quiet, as in the half crate.
__device__ __forceinline__ f32 half_to_f32(f16 h) {
    const u32 b = __half_as_ushort(h);
    if ((b & 0x7fffu) > 0x7c00u) return __uint_as_float(((b & 0x8000u) << 16) | 0x7fc00000u | ((b & 0x3ffu) << 13));
    return __half2float(h);
}
__device__ __forceinline__ f32 half_to_f32(bf16 h) {
    u32 b = __bfloat16_as_ushort(h);
    if ((b & 0x7fffu) > 0x7f80u) b |= 0x0040u;
    return __uint_as_float(b << 16);
}
template <typename H> __device__ __forceinline__ f64 half_to_f64(H h) {
    const f32 wide = half_to_f32(h);
    const u32 b = __float_as_uint(wide);
    if ((b & 0x7fffffffu) > 0x7f800000u) {
        return __longlong_as_double((i64)(((u64)(b & 0x80000000u) << 32) | 0x7ff8000000000000ull | ((u64)(b & 0x7fffffu) << 29)));
    }
    return (f64)wide;
}

// Rounding to nearest even; a NaN keeps its sign and the top of its payload, made quiet.
__device__ __forceinline__ f16 f16_from_f32(f32 x) {
    const u32 b = __float_as_uint(x);
    if ((b & 0x7fffffffu) > 0x7f800000u) return f16_from_bits((u16)(((b >> 16) & 0x8000u) | 0x7e00u | ((b & 0x7fffffu) >> 13)));
    return __float2half_rn(x);
}
__device__ __forceinline__ bf16 bf16_from_f32(f32 x) {
    const u32 b = __float_as_uint(x);
    if ((b & 0x7fffffffu) > 0x7f800000u) return bf16_from_bits((u16)((b >> 16) | 0x0040u));
    const bool up = (b & 0x8000u) != 0u && (b & 0x17fffu) != 0u;
    return bf16_from_bits((u16)((b >> 16) + (up ? 1u : 0u)));
}
template <typename H> __device__ __forceinline__ H half_from_f32(f32 x);
template <> __device__ __forceinline__ f16 half_from_f32<f16>(f32 x) { return f16_from_f32(x); }
template <> __device__ __forceinline__ bf16 half_from_f32<bf16>(f32 x) { return bf16_from_f32(x); }

} // namespace gsync

// The operators: through f32, rounded back; negation flips the sign bit.
#define GSYNC_HALF_OPERATORS(H)                                                                              \
    __device__ __forceinline__ H operator+(H a, H b) { return gsync::half_from_f32<H>(gsync::half_to_f32(a) + gsync::half_to_f32(b)); } \
    __device__ __forceinline__ H operator-(H a, H b) { return gsync::half_from_f32<H>(gsync::half_to_f32(a) - gsync::half_to_f32(b)); } \
    __device__ __forceinline__ H operator*(H a, H b) { return gsync::half_from_f32<H>(gsync::half_to_f32(a) * gsync::half_to_f32(b)); } \
    __device__ __forceinline__ H operator/(H a, H b) { return gsync::half_from_f32<H>(gsync::half_to_f32(a) / gsync::half_to_f32(b)); } \
    __device__ __forceinline__ H operator-(H a) { return gsync::half_from_bits<H>((u16)(gsync::half_to_bits(a) ^ 0x8000u)); } \
    __device__ __forceinline__ H& operator+=(H& a, H b) { a = a + b; return a; }                             \
    __device__ __forceinline__ H& operator-=(H& a, H b) { a = a - b; return a; }                             \
    __device__ __forceinline__ H& operator*=(H& a, H b) { a = a * b; return a; }                             \
    __device__ __forceinline__ H& operator/=(H& a, H b) { a = a / b; return a; }                             \
    __device__ __forceinline__ bool operator==(H a, H b) { return gsync::half_to_f32(a) == gsync::half_to_f32(b); } \
    __device__ __forceinline__ bool operator!=(H a, H b) { return gsync::half_to_f32(a) != gsync::half_to_f32(b); } \
    __device__ __forceinline__ bool operator<(H a, H b) { return gsync::half_to_f32(a) < gsync::half_to_f32(b); }   \
    __device__ __forceinline__ bool operator<=(H a, H b) { return gsync::half_to_f32(a) <= gsync::half_to_f32(b); } \
    __device__ __forceinline__ bool operator>(H a, H b) { return gsync::half_to_f32(a) > gsync::half_to_f32(b); }   \
    __device__ __forceinline__ bool operator>=(H a, H b) { return gsync::half_to_f32(a) >= gsync::half_to_f32(b); }
GSYNC_HALF_OPERATORS(f16)
GSYNC_HALF_OPERATORS(bf16)
#undef GSYNC_HALF_OPERATORS

namespace gsync {

// The methods, as the half crate (and its num_traits::Float implementation) computes them.
// EXP is the exponent mask, ONE the bits of 1.0.
#define GSYNC_HALF_METHODS(H, EXP, ONE)                                                                         \
    __device__ __forceinline__ bool half_is_nan(H x) { return (half_to_bits(x) & 0x7fffu) > EXP; }            \
    __device__ __forceinline__ bool half_is_infinite(H x) { return (half_to_bits(x) & 0x7fffu) == EXP; }      \
    __device__ __forceinline__ bool half_is_finite(H x) { return (half_to_bits(x) & EXP) != EXP; }            \
    __device__ __forceinline__ bool half_is_sign_negative(H x) { return (half_to_bits(x) & 0x8000u) != 0u; }  \
    __device__ __forceinline__ H half_copysign(H x, H sign) {                                                 \
        return half_from_bits<H>((u16)((half_to_bits(sign) & 0x8000u) | (half_to_bits(x) & 0x7fffu)));       \
    }                                                                                                         \
    __device__ __forceinline__ H signum(H x) {                                                                \
        if (half_is_nan(x)) return x;                                                                         \
        return half_from_bits<H>((u16)((half_to_bits(x) & 0x8000u) | ONE));                                   \
    }                                                                                                         \
    __device__ __forceinline__ H max(H a, H b) { return half_is_nan(a) || b > a ? b : a; }                    \
    __device__ __forceinline__ H min(H a, H b) { return half_is_nan(a) || b < a ? b : a; }                    \
    __device__ __forceinline__ H clamp(H x, H lo, H hi) {                                                     \
        if (x < lo) x = lo;                                                                                   \
        if (x > hi) x = hi;                                                                                   \
        return x;                                                                                             \
    }                                                                                                         \
    __device__ __forceinline__ H rem(H a, H b) { return half_from_f32<H>(fmodf(half_to_f32(a), half_to_f32(b))); } \
    __device__ __forceinline__ H abs(H x) { return half_from_f32<H>(fabsf(half_to_f32(x))); }               \
    __device__ __forceinline__ H half_sqrt(H x) { return half_from_f32<H>(sqrtf(half_to_f32(x))); }         \
    __device__ __forceinline__ H half_floor(H x) { return half_from_f32<H>(floorf(half_to_f32(x))); }       \
    __device__ __forceinline__ H half_ceil(H x) { return half_from_f32<H>(ceilf(half_to_f32(x))); }         \
    __device__ __forceinline__ H half_round(H x) { return half_from_f32<H>(roundf(half_to_f32(x))); }       \
    __device__ __forceinline__ H half_trunc(H x) { return half_from_f32<H>(truncf(half_to_f32(x))); }
GSYNC_HALF_METHODS(f16, 0x7c00u, 0x3c00u)
GSYNC_HALF_METHODS(bf16, 0x7f80u, 0x3f80u)
#undef GSYNC_HALF_METHODS

// Atomics: a compare-and-swap loop on the 32-bit word that holds the element, computing the
// new value exactly as a plain operation would; it writes only when the value changes.
// min and max follow the f32 atomics: a NaN operand yields the other one, -0.0 is below +0.0.
template <typename H> __device__ __forceinline__ H half_atomic_pick(H current, H v, bool is_max) {
    if (half_is_nan(v)) return current;
    if (half_is_nan(current)) return v;
    const bool v_negative = half_is_sign_negative(v), current_negative = half_is_sign_negative(current);
    if (is_max) return current < v || (current == v && current_negative && !v_negative) ? v : current;
    return v < current || (current == v && v_negative && !current_negative) ? v : current;
}
// op: 0 add, 1 exchange, 2 min, 3 max.
template <typename H> __device__ __forceinline__ H half_atomic(H* p, H v, int op) {
    u32* word = (u32*)((usize)p & ~(usize)3);
    const u32 shift = ((u32)(usize)p & 2u) * 8u;
    u32 old = *(volatile u32*)word;
    while (true) {
        const H current = half_from_bits<H>((u16)(old >> shift));
        const H next = op == 0 ? current + v : op == 1 ? v : half_atomic_pick(current, v, op == 3);
        const u32 replaced = (old & ~(0xffffu << shift)) | ((u32)half_to_bits(next) << shift);
        if (replaced == old) return current;
        const u32 seen = atomicCAS(word, old, replaced);
        if (seen == old) return current;
        old = seen;
    }
}
__device__ __forceinline__ f16 atomic_add(f16* p, f16 v) { return half_atomic(p, v, 0); }
__device__ __forceinline__ bf16 atomic_add(bf16* p, bf16 v) { return half_atomic(p, v, 0); }
__device__ __forceinline__ f16 atomic_exch(f16* p, f16 v) { return half_atomic(p, v, 1); }
__device__ __forceinline__ bf16 atomic_exch(bf16* p, bf16 v) { return half_atomic(p, v, 1); }
__device__ __forceinline__ f16 atomic_min(f16* p, f16 v) { return half_atomic(p, v, 2); }
__device__ __forceinline__ bf16 atomic_min(bf16* p, bf16 v) { return half_atomic(p, v, 2); }
__device__ __forceinline__ f16 atomic_max(f16* p, f16 v) { return half_atomic(p, v, 3); }
__device__ __forceinline__ bf16 atomic_max(bf16* p, bf16 v) { return half_atomic(p, v, 3); }

// Acquire, release and relaxed loads and stores move the bits.
__device__ __forceinline__ f16 load_acquire(const f16* p) { return f16_from_bits(load_acquire((const u16*)p)); }
__device__ __forceinline__ bf16 load_acquire(const bf16* p) { return bf16_from_bits(load_acquire((const u16*)p)); }
__device__ __forceinline__ void store_release(f16* p, f16 v) { store_release((u16*)p, half_to_bits(v)); }
__device__ __forceinline__ void store_release(bf16* p, bf16 v) { store_release((u16*)p, half_to_bits(v)); }
__device__ __forceinline__ f16 load_relaxed(const f16* p) { return f16_from_bits(load_relaxed((const u16*)p)); }
__device__ __forceinline__ bf16 load_relaxed(const bf16* p) { return bf16_from_bits(load_relaxed((const u16*)p)); }
__device__ __forceinline__ void store_relaxed(f16* p, f16 v) { store_relaxed((u16*)p, half_to_bits(v)); }
__device__ __forceinline__ void store_relaxed(bf16* p, bf16 v) { store_relaxed((u16*)p, half_to_bits(v)); }
__device__ __forceinline__ f16 load_relaxed_sys(const f16* p) { return f16_from_bits(load_relaxed_sys((const u16*)p)); }
__device__ __forceinline__ bf16 load_relaxed_sys(const bf16* p) { return bf16_from_bits(load_relaxed_sys((const u16*)p)); }
__device__ __forceinline__ void store_relaxed_sys(f16* p, f16 v) { store_relaxed_sys((u16*)p, half_to_bits(v)); }
__device__ __forceinline__ void store_relaxed_sys(bf16* p, bf16 v) { store_relaxed_sys((u16*)p, half_to_bits(v)); }

// match_any compares the bits, as for the other types.
__device__ __forceinline__ u32 match_any(f16 v) { return __match_any_sync(warp_lanes(), (u32)half_to_bits(v)); }
__device__ __forceinline__ u32 match_any(bf16 v) { return __match_any_sync(warp_lanes(), (u32)half_to_bits(v)); }

// Shuffles move the bits, widened to 32.
#define GSYNC_HALF_SHUFFLES(H)                                                                                              \
    template <> __device__ __forceinline__ H shfl_down(H v, u32 d) { return half_from_bits<H>((u16)__shfl_down_sync(warp_lanes(), (u32)half_to_bits(v), d)); } \
    template <> __device__ __forceinline__ H shfl_up(H v, u32 d) { return half_from_bits<H>((u16)__shfl_up_sync(warp_lanes(), (u32)half_to_bits(v), d)); }     \
    template <> __device__ __forceinline__ H shfl_xor(H v, u32 m) { return half_from_bits<H>((u16)__shfl_xor_sync(warp_lanes(), (u32)half_to_bits(v), m)); }   \
    template <> __device__ __forceinline__ H shfl(H v, u32 l) { return half_from_bits<H>((u16)__shfl_sync(warp_lanes(), (u32)half_to_bits(v), l)); }
GSYNC_HALF_SHUFFLES(f16)
GSYNC_HALF_SHUFFLES(bf16)
#undef GSYNC_HALF_SHUFFLES

} // namespace gsync
