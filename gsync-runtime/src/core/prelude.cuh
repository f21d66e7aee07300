// ---- gsync device prelude ---------------------------------------------------
// Rust's primitive types under their Rust names, and Rust's meaning for the
// operations where C++ would differ (integer promotion, signed overflow,
// over-wide shifts, division by zero, float-to-int casts).

typedef signed char i8;
typedef unsigned char u8;
typedef short i16;
typedef unsigned short u16;
typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;
typedef unsigned long long usize;
typedef float f32;
typedef double f64;

// The launch's linear indices, which the builtins and the grid barriers use. A kernel that
// reads a per-axis index (thread_idx_y(), block_idx_z(), ...) is compiled with
// GSYNC_MULTI_DIM and may run in 2-D and 3-D shapes; x varies fastest, as in the warps CUDA
// forms. Every other kernel runs in 1-D shapes only, where these are the .x components.
#ifdef GSYNC_MULTI_DIM
__device__ __forceinline__ u32 gsync_linear_thread() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
__device__ __forceinline__ u32 gsync_linear_block() { return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); }
__device__ __forceinline__ u32 gsync_block_threads() { return GSYNC_BLOCK_SIZE; }
__device__ __forceinline__ u32 gsync_grid_blocks() { return gridDim.x * gridDim.y * gridDim.z; }
#else
__device__ __forceinline__ u32 gsync_linear_thread() { return threadIdx.x; }
__device__ __forceinline__ u32 gsync_linear_block() { return blockIdx.x; }
__device__ __forceinline__ u32 gsync_block_threads() { return blockDim.x; }
__device__ __forceinline__ u32 gsync_grid_blocks() { return gridDim.x; }
#endif

// The device error word: the first fault wins and is read back by the host.
struct gsync_status_t {
    u32 code;   // 0: ok, 1: slice index out of bounds, 2: barrier timeout, 3: step_by(0), 4: assert!, 5: spin timeout, 6: deadline, 7: PE out of the team (index: the PE, len: the team's size), 8: a PE did not arrive (array: the PE); 9 is the emulator's own
    u32 array;  // index into the kernel's array-name table (4: the assertion's number; 5: the block)
    u32 line;   // Rust source line of the faulting access
    u32 phase;  // reserved for barrier faults
    u64 index;  // (4: an assert_eq!'s left operand, as bits)
    u64 len;    // (4: its right operand)
};
#define GSYNC_OK 0u
#define GSYNC_OUT_OF_BOUNDS 1u
#define GSYNC_BARRIER_TIMEOUT 2u
#define GSYNC_ZERO_STEP 3u
#define GSYNC_ASSERTION_FAILED 4u
#define GSYNC_SPIN_TIMEOUT 5u
#define GSYNC_DEADLINE_EXCEEDED 6u
#define GSYNC_NO_SUCH_PE 7u
#define GSYNC_PE_TIMEOUT 8u
// 9: an async copy's source changed in flight; only the emulator reports it.
// What a launch writes, at its start, for the launch that will follow it with the same
// scratch: that launch's barrier state (`state`, the other of two) gets its header line and
// zeros up to `words`, which the host would otherwise write with copies before it. A null
// `state` asks for nothing (segments of a split run, graphs, teams).
struct gsync_next_launch_t {
    u32* state;
    u32 words;
    u32 line[32];
};

// ---- teams: where a block runs among the PEs (GPUs) of a team ------------------------------
// The host writes this PE's place into the module after loading it for a team; outside a team
// it keeps its initial value, PE 0 of 1. A symmetric buffer has the same offset in every PE's
// symmetric heap, and each peer's heap is mapped into this GPU's address space at a fixed
// distance from its own, so a peer's copy of any symmetric element is at that distance.
#define GSYNC_MAX_PES 64u
struct gsync_team_t {
    u32 pe;                              // pe(): this PE
    u32 n_pes;                           // n_pes(): the team's PEs
    long long peer_offset[GSYNC_MAX_PES];  // bytes from a symmetric address here to PE p's copy
    unsigned long long* arrivals;        // the spanning barrier's words (symmetric): a slot per PE, then its own (span.cuh)
};
__constant__ gsync_team_t gsync_team = {0u, 1u, {0}, 0};

// The first statement of every `while` and `loop` iteration. Rust defines a loop that never
// ends (it hangs); C++ lets a compiler assume that a loop without side effects ends, and
// remove it. A volatile asm statement is a side effect, and it emits no instruction.
__device__ __forceinline__ void gsync_loop_progress() {
    asm volatile("");
}

// The CTA barrier of sync_block() and of the grid barriers, in PTX's non-aligned form.
// __syncthreads() is bar.sync, an *aligned* barrier: every warp must reach it converged, or
// the behaviour is undefined. Independent thread scheduling lets a warp leave a divergent
// step (a grid barrier's release stores, a spin that only some threads run) in pieces, and
// ptxas does not always reconverge it before the next barrier: an H100 then faulted with
// an illegal instruction, or let a one-warp block through half-arrived. The non-aligned
// barrier.sync makes each thread wait for the rest of its warp, wherever they are.
__device__ __forceinline__ void gsync_sync_block() {
    asm volatile("barrier.sync 0;" ::: "memory");
}
// Like gsync_sync_block(); true in every thread when `p` is true in any thread of the block.
__device__ __forceinline__ bool gsync_sync_block_any(bool p) {
    unsigned int any;
    asm volatile(
        "{\n\t.reg .pred p, q;\n\tsetp.ne.u32 p, %1, 0;\n\tbarrier.red.or.pred q, 0, p;\n\tselp.u32 %0, 1, 0, q;\n\t}"
        : "=r"(any)
        : "r"((unsigned int)p)
        : "memory");
    return any != 0u;
}

namespace gsync {

// Writes what `next` asks for, by the first block's threads, with stores only. Its indices are
// read afresh (volatile), so that the compiler does not share them with the kernel's body and
// keep them live through it.
__device__ __forceinline__ void prepare_next_launch(const gsync_next_launch_t& next) {
    u32 bx, by, bz;
    asm volatile("mov.u32 %0, %%ctaid.x;\n\tmov.u32 %1, %%ctaid.y;\n\tmov.u32 %2, %%ctaid.z;" : "=r"(bx), "=r"(by), "=r"(bz));
    if (next.state == nullptr || (bx | by | bz) != 0u) return;
    u32 tx, ty, tz, nx, ny, nz;
    asm volatile("mov.u32 %0, %%tid.x;\n\tmov.u32 %1, %%tid.y;\n\tmov.u32 %2, %%tid.z;" : "=r"(tx), "=r"(ty), "=r"(tz));
    asm volatile("mov.u32 %0, %%ntid.x;\n\tmov.u32 %1, %%ntid.y;\n\tmov.u32 %2, %%ntid.z;" : "=r"(nx), "=r"(ny), "=r"(nz));
    const u32 threads = nx * ny * nz;
    for (u32 word = tx + nx * (ty + ny * tz); word < next.words; word += threads) {
        next.state[word] = word < 32u ? next.line[word] : 0u;
    }
}

// Integer arithmetic happens in an unsigned type at least 32 bits wide, where
// C++ defines wrap-around; the conversion back to the Rust type then
// truncates, which is exactly Rust's release-build wrapping.
template <typename T> struct wide_unsigned;
template <> struct wide_unsigned<i8> { typedef u32 type; };
template <> struct wide_unsigned<u8> { typedef u32 type; };
template <> struct wide_unsigned<i16> { typedef u32 type; };
template <> struct wide_unsigned<u16> { typedef u32 type; };
template <> struct wide_unsigned<i32> { typedef u32 type; };
template <> struct wide_unsigned<u32> { typedef u32 type; };
template <> struct wide_unsigned<i64> { typedef u64 type; };
template <> struct wide_unsigned<u64> { typedef u64 type; };

template <typename T> struct int_limits;
template <> struct int_limits<i8>  { static constexpr i8 min = -128; static constexpr i8 max = 127; static constexpr u32 bits = 8; };
template <> struct int_limits<u8>  { static constexpr u8 min = 0; static constexpr u8 max = 255; static constexpr u32 bits = 8; };
template <> struct int_limits<i16> { static constexpr i16 min = -32768; static constexpr i16 max = 32767; static constexpr u32 bits = 16; };
template <> struct int_limits<u16> { static constexpr u16 min = 0; static constexpr u16 max = 65535; static constexpr u32 bits = 16; };
template <> struct int_limits<i32> { static constexpr i32 min = -2147483647 - 1; static constexpr i32 max = 2147483647; static constexpr u32 bits = 32; };
template <> struct int_limits<u32> { static constexpr u32 min = 0u; static constexpr u32 max = 4294967295u; static constexpr u32 bits = 32; };
template <> struct int_limits<i64> { static constexpr i64 min = -9223372036854775807ll - 1; static constexpr i64 max = 9223372036854775807ll; static constexpr u32 bits = 64; };
template <> struct int_limits<u64> { static constexpr u64 min = 0ull; static constexpr u64 max = 18446744073709551615ull; static constexpr u32 bits = 64; };

template <typename T> __device__ __forceinline__ T add(T a, T b) {
    typedef typename wide_unsigned<T>::type U;
    return (T)((U)a + (U)b);
}
template <typename T> __device__ __forceinline__ T sub(T a, T b) {
    typedef typename wide_unsigned<T>::type U;
    return (T)((U)a - (U)b);
}
template <typename T> __device__ __forceinline__ T mul(T a, T b) {
    typedef typename wide_unsigned<T>::type U;
    return (T)((U)a * (U)b);
}
template <typename T> __device__ __forceinline__ T neg(T a) {
    typedef typename wide_unsigned<T>::type U;
    return (T)((U)0 - (U)a);
}
// Rust panics on x / 0 and on MIN / -1; the device cannot panic, so both
// have a defined value: x / 0 == 0, and MIN / -1 wraps to MIN (wrapping_div).
template <typename T> __device__ __forceinline__ T div(T a, T b) {
    if (b == (T)0) return (T)0;
    if (int_limits<T>::min != 0 && a == int_limits<T>::min && b == (T)-1) return a;
    return (T)(a / b);
}
template <typename T> __device__ __forceinline__ T rem(T a, T b) {
    if (b == (T)0) return (T)0;
    if (int_limits<T>::min != 0 && a == int_limits<T>::min && b == (T)-1) return (T)0;
    return (T)(a % b);
}
// Release-build Rust masks the shift amount to the type's width.
template <typename T> __device__ __forceinline__ T shl(T a, u32 s) {
    typedef typename wide_unsigned<T>::type U;
    return (T)((U)a << (s & (int_limits<T>::bits - 1)));
}
template <typename T> __device__ __forceinline__ T shr(T a, u32 s) {
    return (T)(a >> (s & (int_limits<T>::bits - 1)));  // arithmetic for signed T, as in Rust
}
template <typename T> __device__ __forceinline__ T bit_not(T a) { return (T)~a; }
template <typename T> __device__ __forceinline__ T bit_and(T a, T b) { return (T)(a & b); }
template <typename T> __device__ __forceinline__ T bit_or(T a, T b) { return (T)(a | b); }
template <typename T> __device__ __forceinline__ T bit_xor(T a, T b) { return (T)(a ^ b); }

// Rust's `as` from float to integer truncates toward zero and saturates;
// NaN becomes 0. Every f32 is exact as an f64, and the bounds are powers of two.
template <typename T> __device__ __forceinline__ T float_to_int(f64 x) {
    const f64 lowest = (f64)int_limits<T>::min;
    const f64 past_max = 2.0 * (f64)(int_limits<T>::max / 2 + 1);
    if (x != x) return (T)0;
    if (x <= lowest) return int_limits<T>::min;
    if (x >= past_max) return int_limits<T>::max;
    return (T)x;
}

template <typename T> __device__ __forceinline__ T min(T a, T b) { return b < a ? b : a; }
template <typename T> __device__ __forceinline__ T max(T a, T b) { return a < b ? b : a; }
template <typename T> __device__ __forceinline__ T clamp(T x, T lo, T hi) { return x < lo ? lo : (hi < x ? hi : x); }
template <typename T> __device__ __forceinline__ T abs(T a) { return a < (T)0 ? neg(a) : a; }
template <typename T> __device__ __forceinline__ typename wide_unsigned<T>::type abs_diff(T a, T b) {
    typedef typename wide_unsigned<T>::type U;
    return a < b ? (U)b - (U)a : (U)a - (U)b;
}
template <typename T> __device__ __forceinline__ T signum(T a) { return a > (T)0 ? (T)1 : (a < (T)0 ? (T)-1 : (T)0); }
template <typename T> __device__ __forceinline__ T saturating_add(T a, T b) {
    T r = add(a, b);
    if (int_limits<T>::min == 0) return r < a ? int_limits<T>::max : r;
    if (b > 0 && r < a) return int_limits<T>::max;
    if (b < 0 && r > a) return int_limits<T>::min;
    return r;
}
template <typename T> __device__ __forceinline__ T saturating_sub(T a, T b) {
    T r = sub(a, b);
    if (int_limits<T>::min == 0) return b > a ? (T)0 : r;
    if (b < 0 && r < a) return int_limits<T>::max;
    if (b > 0 && r > a) return int_limits<T>::min;
    return r;
}
template <typename T> __device__ __forceinline__ T pow(T base, u32 exp) {
    T acc = (T)1;
    while (exp != 0u) {
        if (exp & 1u) acc = mul(acc, base);
        base = mul(base, base);
        exp >>= 1;
    }
    return acc;
}
template <typename T> __device__ __forceinline__ u32 count_ones(T a) {
    typedef typename wide_unsigned<T>::type U;
    const U bits = (U)a & (U)(~(U)0 >> (sizeof(U) * 8 - int_limits<T>::bits));
    return sizeof(U) == 8 ? (u32)__popcll((u64)bits) : (u32)__popc((u32)bits);
}
template <typename T> __device__ __forceinline__ u32 leading_zeros(T a) {
    typedef typename wide_unsigned<T>::type U;
    const u32 extra = sizeof(U) * 8 - int_limits<T>::bits;
    const U bits = (U)a & (U)(~(U)0 >> extra);
    return (sizeof(U) == 8 ? (u32)__clzll((long long)bits) : (u32)__clz((int)bits)) - extra;
}
template <typename T> __device__ __forceinline__ u32 trailing_zeros(T a) {
    typedef typename wide_unsigned<T>::type U;
    const U bits = (U)a;
    const u32 width = int_limits<T>::bits;
    if ((bits & (U)(~(U)0 >> (sizeof(U) * 8 - width))) == 0) return width;
    return sizeof(U) == 8 ? (u32)(__ffsll((long long)bits) - 1) : (u32)(__ffs((int)bits) - 1);
}
template <typename T> __device__ __forceinline__ T rotate_left(T a, u32 n) {
    typedef typename wide_unsigned<T>::type U;
    const u32 width = int_limits<T>::bits;
    const U mask = (U)(~(U)0 >> (sizeof(U) * 8 - width));
    const U bits = (U)a & mask;
    n &= width - 1;
    if (n == 0) return a;
    return (T)(((bits << n) | (bits >> (width - n))) & mask);
}
template <typename T> __device__ __forceinline__ T rotate_right(T a, u32 n) {
    return rotate_left(a, (int_limits<T>::bits - (n & (int_limits<T>::bits - 1))) & (int_limits<T>::bits - 1));
}
template <typename T> __device__ __forceinline__ T div_ceil(T a, T b) {
    const T q = div(a, b);
    return rem(a, b) != (T)0 ? (T)(q + (T)1) : q;
}
// Rust panics where the result would overflow; here it wraps to 0.
template <typename T> __device__ __forceinline__ T next_power_of_two(T a) {
    if (a <= (T)1) return (T)1;
    const u32 shift = int_limits<T>::bits - leading_zeros((T)(a - (T)1));
    return shift >= int_limits<T>::bits ? (T)0 : shl((T)1, shift);
}
// Rust panics on 0; here ilog2(0) == 0.
template <typename T> __device__ __forceinline__ u32 ilog2(T a) {
    return a <= (T)0 ? 0u : int_limits<T>::bits - 1u - leading_zeros(a);
}
// The next value of a stepped range: `x + step`, or `end` once that would pass it.
template <typename T> __device__ __forceinline__ T step_toward(T x, T end, u64 step) {
    typedef typename wide_unsigned<T>::type U;
    const u64 remaining = (u64)(U)((U)end - (U)x);
    return remaining > step ? (T)((U)x + (U)step) : end;
}
// Whether a stepped range goes on: `x < end`. A zero step, where Rust panics, records the
// fault with the Rust line of the step and ends the loop before its first iteration.
__device__ __noinline__ void record_zero_step(gsync_status_t* status, u32 line) {
    if (atomicCAS(&status->code, GSYNC_OK, GSYNC_ZERO_STEP) == GSYNC_OK) status->line = line;
}
template <typename T> __device__ __forceinline__ bool step_continues(T x, T end, u64 step, gsync_status_t* status, u32 line) {
    if (step == 0ull) {
        record_zero_step(status, line);
        return false;
    }
    return x < end;
}
template <typename T> __device__ __forceinline__ bool is_multiple_of(T a, T b) {
    return b == (T)0 ? a == (T)0 : a % b == (T)0;
}
template <typename T> __device__ __forceinline__ bool is_power_of_two(T a) {
    return a != (T)0 && (a & (T)(a - (T)1)) == (T)0;
}

// The signed add-then-max/min builtins (add_max, add_min and their _relu forms), whose sum
// wraps as `+` does in kernels. On sm_90 and newer CUDA's intrinsic is DPX's PTX, exact:
// `add.s32` wraps. Below sm_90 (and on sm_110, which CUDA 13.1's header leaves to software)
// CUDA computes `a + b` on `int`, undefined in C++ on overflow, so the sum is taken here,
// through u32: the same value, one add and one max.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && __CUDA_ARCH__ != 1100
__device__ __forceinline__ i32 add_max(i32 a, i32 b, i32 c) { return __viaddmax_s32(a, b, c); }
__device__ __forceinline__ i32 add_min(i32 a, i32 b, i32 c) { return __viaddmin_s32(a, b, c); }
__device__ __forceinline__ i32 add_max_relu(i32 a, i32 b, i32 c) { return __viaddmax_s32_relu(a, b, c); }
__device__ __forceinline__ i32 add_min_relu(i32 a, i32 b, i32 c) { return __viaddmin_s32_relu(a, b, c); }
#else
__device__ __forceinline__ i32 add_max(i32 a, i32 b, i32 c) { return max(add(a, b), c); }
__device__ __forceinline__ i32 add_min(i32 a, i32 b, i32 c) { return min(add(a, b), c); }
__device__ __forceinline__ i32 add_max_relu(i32 a, i32 b, i32 c) { return max(max(add(a, b), c), 0); }
__device__ __forceinline__ i32 add_min_relu(i32 a, i32 b, i32 c) { return max(min(add(a, b), c), 0); }
#endif

// Float helpers where Rust's definition differs from the C library's.
__device__ __forceinline__ f32 clamp(f32 x, f32 lo, f32 hi) { return x < lo ? lo : (x > hi ? hi : x); }
__device__ __forceinline__ f64 clamp(f64 x, f64 lo, f64 hi) { return x < lo ? lo : (x > hi ? hi : x); }
__device__ __forceinline__ f32 signum(f32 x) { return x != x ? x : copysignf(1.0f, x); }
__device__ __forceinline__ f64 signum(f64 x) { return x != x ? x : copysign(1.0, x); }
__device__ __forceinline__ f32 rem(f32 a, f32 b) { return fmodf(a, b); }
__device__ __forceinline__ f64 rem(f64 a, f64 b) { return fmod(a, b); }

// Bounds checks of debug builds: the first violation is recorded, the access
// is skipped (a read yields zero), and the kernel runs on to every barrier.
__device__ __noinline__ void record_out_of_bounds(gsync_status_t* status, u32 array, u32 line, u64 index, u64 len) {
    if (atomicCAS(&status->code, GSYNC_OK, GSYNC_OUT_OF_BOUNDS) == GSYNC_OK) {
        status->array = array;
        status->line = line;
        status->index = index;
        status->len = len;
    }
}
__device__ __forceinline__ bool in_bounds(u64 index, u64 len, gsync_status_t* status, u32 array, u32 line) {
    if (index < len) return true;
    record_out_of_bounds(status, array, line, index, len);
    return false;
}
// A PE out of the team, named by a.put(pe, …) or a.get(pe, …), is recorded like an index
// out of bounds (the team's size in `len`) and the access skipped, in every build: a peer
// offset past the team's would be a wild address.
__device__ __noinline__ void record_no_such_pe(gsync_status_t* status, u32 array, u32 line, u64 pe) {
    if (atomicCAS(&status->code, GSYNC_OK, GSYNC_NO_SUCH_PE) == GSYNC_OK) {
        status->array = array;
        status->line = line;
        status->index = pe;
        status->len = gsync_team.n_pes;
    }
}
__device__ __forceinline__ bool on_team(u64 pe, gsync_status_t* status, u32 array, u32 line) {
    if (pe < gsync_team.n_pes) return true;
    record_no_such_pe(status, array, line, pe);
    return false;
}
// PE `pe`'s copy of the symmetric element at `local`.
template <typename T> __device__ __forceinline__ T* on_pe(T* local, u64 pe) {
    return (T*)((char*)local + gsync_team.peer_offset[pe]);
}
template <typename T> __device__ __forceinline__ T load(const T* data, u64 len, u64 index, gsync_status_t* status, u32 array, u32 line) {
    return in_bounds(index, len, status, array, line) ? data[index] : (T)0;
}
// Whether chunk `chunk` of `n` elements lies wholly within `len`; if not, records the fault
// at the chunk's last element, as the emulator does.
__device__ __forceinline__ bool chunk_in_bounds(u64 chunk, u64 n, u64 len, gsync_status_t* status, u32 array, u32 line) {
    if (chunk < len / n) return true;
    record_out_of_bounds(status, array, line, chunk >= ~0ull / n ? ~0ull : chunk * n + (n - 1), len);
    return false;
}
// Whether the `n` elements from `at` lie within `len` (`put_range`'s target), computed without
// overflow; if not, records the fault at the last of them (at `at` when there are none), as the
// emulator does.
__device__ __forceinline__ bool span_in_bounds(u64 at, u64 n, u64 len, gsync_status_t* status, u32 array, u32 line) {
    if (n <= len && at <= len - n) return true;
    record_out_of_bounds(status, array, line, n == 0 ? at : (at > ~0ull - (n - 1) ? ~0ull : at + (n - 1)), len);
    return false;
}
// Whether `lo..hi` is a range within `len` (`put_range`'s source); a range that starts past its
// end records its start against its end, as the emulator does.
__device__ __forceinline__ bool range_in_bounds(u64 lo, u64 hi, u64 len, gsync_status_t* status, u32 array, u32 line) {
    if (lo <= hi) return span_in_bounds(lo, hi - lo, len, status, array, line);
    record_out_of_bounds(status, array, line, lo, hi);
    return false;
}

// Chunks (`load_chunk`, `store_chunk`): BYTES bytes, a power of two, at an address aligned to
// BYTES (buffers, shared arrays and shared slices all start at multiples of 16 bytes), moved in
// words of up to 16 bytes. Copying through memcpy keeps the access defined for any element
// type; the compiler makes each word one vector load or store.
template <u64 W> struct chunk_word;
template <> struct chunk_word<1> { typedef u8 type; };
template <> struct chunk_word<2> { typedef u16 type; };
template <> struct chunk_word<4> { typedef u32 type; };
template <> struct chunk_word<8> { typedef u64 type; };
template <> struct chunk_word<16> { typedef uint4 type; };
template <u64 BYTES> __device__ __forceinline__ void load_chunk(void* to, const void* from) {
    constexpr u64 W = BYTES < 16 ? BYTES : 16;
    typedef typename chunk_word<W>::type word;
#pragma unroll
    for (u64 i = 0; i < BYTES / W; ++i) {
        word w;
        memcpy(&w, __builtin_assume_aligned(static_cast<const char*>(from) + i * W, W), W);
        memcpy(static_cast<char*>(to) + i * W, &w, W);
    }
}
// A chunk of a thread's own array, whose alignment is its element's only.
template <u64 BYTES> __device__ __forceinline__ void copy_chunk(void* to, const void* from) {
    memcpy(to, from, BYTES);
}
template <u64 BYTES> __device__ __forceinline__ void store_chunk(void* to, const void* from) {
    constexpr u64 W = BYTES < 16 ? BYTES : 16;
    typedef typename chunk_word<W>::type word;
#pragma unroll
    for (u64 i = 0; i < BYTES / W; ++i) {
        word w;
        memcpy(&w, static_cast<const char*>(from) + i * W, W);
        memcpy(__builtin_assume_aligned(static_cast<char*>(to) + i * W, W), &w, W);
    }
}

// Async copies (`copy_chunk_async`, `wait_async_copies`): BYTES bytes (4, 8, 16 or a multiple
// of 16, aligned to the smaller of BYTES and 16 at both ends) from global to shared memory
// without passing through registers (`cp.async`, sm_80 on), landing by the thread's next
// `wait_async_copies()`; 16-byte words bypass L1 (`.cg`). Older GPUs copy at once.
template <u64 BYTES> __device__ __forceinline__ void copy_chunk_async(void* to, const void* from) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    constexpr u64 W = BYTES < 16 ? BYTES : 16;
#pragma unroll
    for (u64 i = 0; i < BYTES / W; ++i) {
        void* word_to = static_cast<char*>(to) + i * W;
        const void* word_from = static_cast<const char*>(from) + i * W;
        if (W == 16) {
            asm volatile(
                "{ .reg .u64 s64, g; .reg .u32 s; cvta.to.shared.u64 s64, %0; cvt.u32.u64 s, s64;"
                " cvta.to.global.u64 g, %1; cp.async.cg.shared.global [s], [g], 16; }"
                :: "l"(word_to), "l"(word_from) : "memory");
        } else {
            asm volatile(
                "{ .reg .u64 s64, g; .reg .u32 s; cvta.to.shared.u64 s64, %0; cvt.u32.u64 s, s64;"
                " cvta.to.global.u64 g, %1; cp.async.ca.shared.global [s], [g], %2; }"
                :: "l"(word_to), "l"(word_from), "n"((int)W) : "memory");
        }
    }
#else
    load_chunk<BYTES>(to, from);
#endif
}
__device__ __forceinline__ void wait_async_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

// Atomics on Rust types that CUDA only offers under other names.
__device__ __forceinline__ i64 atomic_add(i64* p, i64 v) { return (i64)atomicAdd((u64*)p, (u64)v); }
__device__ __forceinline__ i64 atomic_exch(i64* p, i64 v) { return (i64)atomicExch((u64*)p, (u64)v); }
__device__ __forceinline__ i64 atomic_cas(i64* p, i64 expected, i64 v) { return (i64)atomicCAS((u64*)p, (u64)expected, (u64)v); }
__device__ __forceinline__ i64 atomic_min(i64* p, i64 v) { return atomicMin((long long*)p, (long long)v); }
__device__ __forceinline__ i64 atomic_max(i64* p, i64 v) { return atomicMax((long long*)p, (long long)v); }
template <typename T> __device__ __forceinline__ T atomic_add(T* p, T v) { return atomicAdd(p, v); }
template <typename T> __device__ __forceinline__ T atomic_exch(T* p, T v) { return atomicExch(p, v); }
template <typename T> __device__ __forceinline__ T atomic_cas(T* p, T expected, T v) { return atomicCAS(p, expected, v); }
template <typename T> __device__ __forceinline__ T atomic_min(T* p, T v) { return atomicMin(p, v); }
template <typename T> __device__ __forceinline__ T atomic_max(T* p, T v) { return atomicMax(p, v); }
__device__ __forceinline__ f32 atomic_exch(f32* p, f32 v) { return atomicExch(p, v); }
__device__ __forceinline__ f64 atomic_exch(f64* p, f64 v) {
    return __longlong_as_double((long long)atomicExch((u64*)p, (u64)__double_as_longlong(v)));
}

// Float atomic_max/atomic_min, which CUDA lacks: Rust's max/min (a NaN operand yields the other
// one) with -0.0 below +0.0, so that the result is always one operand bit for bit, as on the
// emulator. A compare-and-swap loop on the bits, which writes only when the value changes.
template <typename F> __device__ __forceinline__ F float_max(F current, F v) {
    if (v != v) return current;
    if (current != current) return v;
    return current < v || (current == v && signbit(current) && !signbit(v)) ? v : current;
}
template <typename F> __device__ __forceinline__ F float_min(F current, F v) {
    if (v != v) return current;
    if (current != current) return v;
    return v < current || (current == v && signbit(v) && !signbit(current)) ? v : current;
}
template <bool Max> __device__ __forceinline__ f32 atomic_float_extreme(f32* p, f32 v) {
    u32* word = (u32*)p;
    u32 old = *(volatile u32*)word;
    while (true) {
        const f32 current = __uint_as_float(old);
        const u32 wanted = __float_as_uint(Max ? float_max(current, v) : float_min(current, v));
        if (wanted == old) return current;
        const u32 seen = atomicCAS(word, old, wanted);
        if (seen == old) return current;
        old = seen;
    }
}
template <bool Max> __device__ __forceinline__ f64 atomic_float_extreme(f64* p, f64 v) {
    u64* word = (u64*)p;
    u64 old = *(volatile u64*)word;
    while (true) {
        const f64 current = __longlong_as_double((long long)old);
        const u64 wanted = (u64)__double_as_longlong(Max ? float_max(current, v) : float_min(current, v));
        if (wanted == old) return current;
        const u64 seen = atomicCAS(word, old, wanted);
        if (seen == old) return current;
        old = seen;
    }
}
__device__ __forceinline__ f32 atomic_max(f32* p, f32 v) { return atomic_float_extreme<true>(p, v); }
__device__ __forceinline__ f32 atomic_min(f32* p, f32 v) { return atomic_float_extreme<false>(p, v); }
__device__ __forceinline__ f64 atomic_max(f64* p, f64 v) { return atomic_float_extreme<true>(p, v); }
__device__ __forceinline__ f64 atomic_min(f64* p, f64 v) { return atomic_float_extreme<false>(p, v); }

// The lanes of the calling thread's warp: all 32, but in the last warp of a block whose size is
// no multiple of 32 only those the block has. Shuffles and votes name exactly these: a mask
// with lanes that do not exist is undefined in CUDA, and __activemask() would name only the
// lanes that happen to be converged. (GSYNC_BLOCK_SIZE is the block's thread count: each block
// size is compiled on its own.)
__device__ __forceinline__ u32 warp_lanes() {
#if GSYNC_BLOCK_SIZE % 32 == 0
    return 0xffffffffu;
#else
    const u32 present = GSYNC_BLOCK_SIZE - (gsync_linear_thread() & ~31u);
    return present >= 32u ? 0xffffffffu : (1u << present) - 1u;
#endif
}

// std::mem::swap of two slice parameters: their pointers, then their lengths.
template <typename T> __device__ __forceinline__ void swap(T& a, T& b) {
    const T t = a;
    a = b;
    b = t;
}

// Warp shuffles over the warp's lanes. Types narrower than 32 bits travel widened.
template <typename T> __device__ __forceinline__ T shfl_down(T v, u32 delta) { return (T)__shfl_down_sync(warp_lanes(), v, delta); }
template <typename T> __device__ __forceinline__ T shfl_up(T v, u32 delta) { return (T)__shfl_up_sync(warp_lanes(), v, delta); }
template <typename T> __device__ __forceinline__ T shfl_xor(T v, u32 mask) { return (T)__shfl_xor_sync(warp_lanes(), v, mask); }
template <typename T> __device__ __forceinline__ T shfl(T v, u32 lane) { return (T)__shfl_sync(warp_lanes(), v, lane); }
// ---- point-to-point communication: acquire, release, ordered atomics, spin-waits --------
// Device (gpu) scope throughout. The acquire and release qualifiers need sm_70 or newer;
// CUDA 13 starts at sm_75. Every helper is an `asm volatile` with a "memory" clobber, so the
// compiler moves no other memory access across it (the kernel hands its `__restrict__`
// slices to an empty asm first, so that this holds for them too).

// load_acquire / store_release: ld.acquire.gpu and st.release.gpu of the element's width;
// load_relaxed / store_relaxed: ld.relaxed.gpu and st.relaxed.gpu, atomic but unordered (no
// fence, no L1 invalidation).
// The _sys forms are the same at system scope, for memory another GPU of a team reads or
// writes (`get`, `put`, `signal`, `load_signal`).
// 8- and 16-bit elements travel in 32-bit registers (the load zero- or sign-extends, the store
// truncates).
// One scope's four accesses; NAME is the empty suffix at gpu scope, _sys at system scope.
#define GSYNC_ORDERED_ACCESSES(T, PTX, R, C, SCOPE, NAME)                                         \
    __device__ __forceinline__ T load_acquire##NAME(const T* p) {                                 \
        R value;                                                                                  \
        asm volatile("ld.acquire." SCOPE "." PTX " %0, [%1];" : "=" C(value) : "l"(p) : "memory"); \
        return (T)value;                                                                          \
    }                                                                                             \
    __device__ __forceinline__ void store_release##NAME(T* p, T v) {                              \
        asm volatile("st.release." SCOPE "." PTX " [%0], %1;" ::"l"(p), C((R)v) : "memory");       \
    }                                                                                             \
    __device__ __forceinline__ T load_relaxed##NAME(const T* p) {                                 \
        R value;                                                                                  \
        asm volatile("ld.relaxed." SCOPE "." PTX " %0, [%1];" : "=" C(value) : "l"(p) : "memory"); \
        return (T)value;                                                                          \
    }                                                                                             \
    __device__ __forceinline__ void store_relaxed##NAME(T* p, T v) {                              \
        asm volatile("st.relaxed." SCOPE "." PTX " [%0], %1;" ::"l"(p), C((R)v) : "memory");       \
    }
#define GSYNC_ACQUIRE_RELEASE(T, PTX, R, C)             \
    GSYNC_ORDERED_ACCESSES(T, PTX, R, C, "gpu", )       \
    GSYNC_ORDERED_ACCESSES(T, PTX, R, C, "sys", _sys)
GSYNC_ACQUIRE_RELEASE(u8, "u8", u32, "r")
GSYNC_ACQUIRE_RELEASE(i8, "s8", i32, "r")
GSYNC_ACQUIRE_RELEASE(u16, "u16", u32, "r")
GSYNC_ACQUIRE_RELEASE(i16, "s16", i32, "r")
GSYNC_ACQUIRE_RELEASE(u32, "u32", u32, "r")
GSYNC_ACQUIRE_RELEASE(i32, "s32", i32, "r")
GSYNC_ACQUIRE_RELEASE(u64, "u64", u64, "l")
GSYNC_ACQUIRE_RELEASE(i64, "s64", i64, "l")
GSYNC_ACQUIRE_RELEASE(f32, "f32", f32, "f")
GSYNC_ACQUIRE_RELEASE(f64, "f64", f64, "d")
#undef GSYNC_ACQUIRE_RELEASE
#undef GSYNC_ORDERED_ACCESSES

// Atomics with an ordering other than Relaxed (Relaxed is CUDA's atomicAdd & co. above):
// atom.<order>.gpu; SeqCst is a fence.sc.gpu followed by an acq_rel atom, as libcu++ does it.
#define GSYNC_ATOM2(NAME, T, OP, C)                                                                      \
    __device__ __forceinline__ T NAME(T* p, T v) {                                                    \
        T old;                                                                                        \
        asm volatile(GSYNC_ATOM_PREFIX OP " %0, [%1], %2;" : "=" C(old) : "l"(p), C(v) : "memory");  \
        return old;                                                                                   \
    }
#define GSYNC_ATOM3(NAME, T, OP, C)                                                                                \
    __device__ __forceinline__ T NAME(T* p, T expected, T v) {                                                  \
        T old;                                                                                                  \
        asm volatile(GSYNC_ATOM_PREFIX OP " %0, [%1], %2, %3;" : "=" C(old) : "l"(p), C(expected), C(v) : "memory"); \
        return old;                                                                                             \
    }
#define GSYNC_ORDERED_ATOMICS(SUFFIX)                                   \
    GSYNC_ATOM2(atomic_add##SUFFIX, u32, "add.u32", "r")               \
    GSYNC_ATOM2(atomic_add##SUFFIX, i32, "add.s32", "r")               \
    GSYNC_ATOM2(atomic_add##SUFFIX, u64, "add.u64", "l")               \
    GSYNC_ATOM2(atomic_add##SUFFIX, i64, "add.u64", "l")               \
    GSYNC_ATOM2(atomic_add##SUFFIX, f32, "add.f32", "f")               \
    GSYNC_ATOM2(atomic_add##SUFFIX, f64, "add.f64", "d")               \
    GSYNC_ATOM2(atomic_min##SUFFIX, u32, "min.u32", "r")               \
    GSYNC_ATOM2(atomic_min##SUFFIX, i32, "min.s32", "r")               \
    GSYNC_ATOM2(atomic_min##SUFFIX, u64, "min.u64", "l")               \
    GSYNC_ATOM2(atomic_min##SUFFIX, i64, "min.s64", "l")               \
    GSYNC_ATOM2(atomic_max##SUFFIX, u32, "max.u32", "r")               \
    GSYNC_ATOM2(atomic_max##SUFFIX, i32, "max.s32", "r")               \
    GSYNC_ATOM2(atomic_max##SUFFIX, u64, "max.u64", "l")               \
    GSYNC_ATOM2(atomic_max##SUFFIX, i64, "max.s64", "l")               \
    GSYNC_ATOM2(atomic_exch##SUFFIX, u32, "exch.b32", "r")             \
    GSYNC_ATOM2(atomic_exch##SUFFIX, i32, "exch.b32", "r")             \
    GSYNC_ATOM2(atomic_exch##SUFFIX, u64, "exch.b64", "l")             \
    GSYNC_ATOM2(atomic_exch##SUFFIX, i64, "exch.b64", "l")             \
    GSYNC_ATOM2(atomic_exch##SUFFIX, f32, "exch.b32", "f")             \
    GSYNC_ATOM2(atomic_exch##SUFFIX, f64, "exch.b64", "d")             \
    GSYNC_ATOM3(atomic_cas##SUFFIX, u32, "cas.b32", "r")               \
    GSYNC_ATOM3(atomic_cas##SUFFIX, i32, "cas.b32", "r")               \
    GSYNC_ATOM3(atomic_cas##SUFFIX, u64, "cas.b64", "l")               \
    GSYNC_ATOM3(atomic_cas##SUFFIX, i64, "cas.b64", "l")
#define GSYNC_ATOM_PREFIX "atom.acquire.gpu."
GSYNC_ORDERED_ATOMICS(_acquire)
#undef GSYNC_ATOM_PREFIX
#define GSYNC_ATOM_PREFIX "atom.release.gpu."
GSYNC_ORDERED_ATOMICS(_release)
#undef GSYNC_ATOM_PREFIX
#define GSYNC_ATOM_PREFIX "atom.acq_rel.gpu."
GSYNC_ORDERED_ATOMICS(_acq_rel)
#undef GSYNC_ATOM_PREFIX
#define GSYNC_ATOM_PREFIX "fence.sc.gpu;\n\tatom.acq_rel.gpu."
GSYNC_ORDERED_ATOMICS(_seq_cst)
#undef GSYNC_ATOM_PREFIX
#undef GSYNC_ORDERED_ATOMICS
#undef GSYNC_ATOM3
#undef GSYNC_ATOM2

// Ordered float atomic_max/atomic_min: the relaxed loop above (the same float_max/float_min,
// so the same meaning) on the ordered compare-and-swap of the element's bits, which carries
// the ordering on every attempt. It always ends in a successful compare-and-swap, writing the
// element back when it stays, so that the operation is a read-modify-write with its ordering
// whatever the operands, as Rust's fetch_max and fetch_min (and the emulator's) are.
__device__ __forceinline__ u32 float_bits(f32 x) { return __float_as_uint(x); }
__device__ __forceinline__ u64 float_bits(f64 x) { return (u64)__double_as_longlong(x); }
__device__ __forceinline__ f32 float_of_bits(u32 bits) { return __uint_as_float(bits); }
__device__ __forceinline__ f64 float_of_bits(u64 bits) { return __longlong_as_double((long long)bits); }
#define GSYNC_ORDERED_FLOAT_EXTREMES(SUFFIX)                                                            \
    template <bool Max, typename F, typename W>                                                        \
    __device__ __forceinline__ F atomic_float_extreme##SUFFIX(F* p, F v) {                             \
        W* word = (W*)p;                                                                               \
        W old = *(volatile W*)word;                                                                    \
        while (true) {                                                                                 \
            const F current = float_of_bits(old);                                                      \
            const W wanted = float_bits(Max ? float_max(current, v) : float_min(current, v));          \
            const W seen = atomic_cas##SUFFIX(word, old, wanted);                                      \
            if (seen == old) return current;                                                           \
            old = seen;                                                                                \
        }                                                                                              \
    }                                                                                                  \
    __device__ __forceinline__ f32 atomic_max##SUFFIX(f32* p, f32 v) { return atomic_float_extreme##SUFFIX<true, f32, u32>(p, v); }  \
    __device__ __forceinline__ f32 atomic_min##SUFFIX(f32* p, f32 v) { return atomic_float_extreme##SUFFIX<false, f32, u32>(p, v); } \
    __device__ __forceinline__ f64 atomic_max##SUFFIX(f64* p, f64 v) { return atomic_float_extreme##SUFFIX<true, f64, u64>(p, v); }  \
    __device__ __forceinline__ f64 atomic_min##SUFFIX(f64* p, f64 v) { return atomic_float_extreme##SUFFIX<false, f64, u64>(p, v); }
GSYNC_ORDERED_FLOAT_EXTREMES(_acquire)
GSYNC_ORDERED_FLOAT_EXTREMES(_release)
GSYNC_ORDERED_FLOAT_EXTREMES(_acq_rel)
GSYNC_ORDERED_FLOAT_EXTREMES(_seq_cst)
#undef GSYNC_ORDERED_FLOAT_EXTREMES

// Spin-waits (wait_until, with_lock) are bounded by the launch's watchdog. The host writes
// the limit into the barrier state's header line for every launch, whatever the barrier
// (gsync-runtime/src/barrier/layout.rs), beside the abort flag that a timed-out software
// barrier or spin-wait raises so that every other waiter gives up too.
#define GSYNC_SPIN_ABORT_WORD 1u
#define GSYNC_SPIN_TIMEOUT_WORD 6u
// The launch's deadline, in nanoseconds from its start (a u64; 0: none), and the global timer
// at its start (a u64, 0 until the kernel's first check of the deadline sets it).
#define GSYNC_DEADLINE_WORD 8u
#define GSYNC_DEADLINE_START_WORD 10u
// The grid_sync() calls passed, plus one, when a thread found the deadline passed at a
// checkpoint (0 until then): the grid stops at the next checkpoint whatever fault the status
// word holds first.
#define GSYNC_DEADLINE_STOP_WORD 12u
// A spinning thread checks the abort flag and the clock once every this many polls.
#define GSYNC_SPIN_POLLS_PER_CHECK 256u

}  // namespace gsync

// One spin-wait's watchdog state, and the lock loop's backoff.
struct gsync_spin_t {
    u32 polls;
    u32 backoff_ns;
    u64 since;  // the global timer at the first check; 0 before it
};

namespace gsync {

__device__ __forceinline__ gsync_spin_t spin_begin() {
    gsync_spin_t spin = {0u, 0u, 0ull};
    return spin;
}

// Records the timeout with the Rust line (the first fault of the launch wins) and raises the
// abort flag.
__device__ __noinline__ void spin_time_out(u32* state, gsync_status_t* status, u32 line) {
    if (atomicCAS(&status->code, GSYNC_OK, GSYNC_SPIN_TIMEOUT) == GSYNC_OK) {
        status->line = line;
        status->array = gsync_linear_block();  // the block that gave up
    }
    asm volatile("st.release.gpu.u32 [%0], %1;" ::"l"(state + GSYNC_SPIN_ABORT_WORD), "r"(1u) : "memory");
}

// The spin-waits' clock: nanoseconds of the GPU's global timer (the only timer read of a
// kernel compiled without a profile).
__device__ __forceinline__ u64 spin_clock_ns() {
    u64 now;
    asm volatile("mov.u64 \t%0, %%globaltimer;" : "=l"(now)::"memory");
    return now;
}

__device__ __forceinline__ bool deadline_passed(u32* state);
__device__ __forceinline__ void record_deadline(gsync_status_t* status, const u32* state, u32 phase, u32 line);

// Called on every failed poll: true when the thread must stop waiting, because a waiter gave
// up (the abort flag), the launch's deadline has passed (recorded with the grid_sync() calls
// passed, `phase`) or this one has waited longer than the launch's limit. The wait is then
// abandoned, the abort flag raised, and the thread runs on, so that it still reaches every
// barrier. Without the deadline here, a wait for another PE's signal that never comes would
// outlast a launch whose watchdog is off.
__device__ __forceinline__ bool spin_give_up(gsync_spin_t& spin, u32* state, gsync_status_t* status, u32 phase, u32 line) {
    if (++spin.polls % GSYNC_SPIN_POLLS_PER_CHECK != 0u) return false;
    u32 abort;
    asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(abort) : "l"(state + GSYNC_SPIN_ABORT_WORD) : "memory");
    if (abort != 0u) return true;
    if (deadline_passed(state)) {
        record_deadline(status, state, phase, line);
        asm volatile("st.release.gpu.u32 [%0], %1;" ::"l"(state + GSYNC_SPIN_ABORT_WORD), "r"(1u) : "memory");
        return true;
    }
    const u64 limit = *(const volatile u64*)(state + GSYNC_SPIN_TIMEOUT_WORD);
    if (limit == 0ull) return false;
    const u64 now = spin_clock_ns();
    if (spin.since == 0ull) {
        spin.since = now;
        return false;
    }
    if (now - spin.since < limit) return false;
    spin_time_out(state, status, line);
    return true;
}

// A lock word is 0 when free and 1 when held. Taking it is an acquire compare-and-swap, so
// that the critical section sees what the previous holder wrote before its release store.
// A waiter first reads the word and tries the compare-and-swap only when it looks free
// (test and test-and-set): thousands of waiters polling with compare-and-swaps would queue
// in the L2's atomic unit ahead of the holder's own atomics and its release.
__device__ __forceinline__ bool lock_acquire(u32* word) {
    u32 seen;
    asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(seen) : "l"(word) : "memory");
    return seen == 0u && atomic_cas_acquire(word, 0u, 1u) == 0u;
}
__device__ __forceinline__ void lock_release(u32* word) {
    store_release(word, 0u);
}
// After a failed attempt: sleeps 32 ns, doubling up to `most_ns`. A lock's waiters (1 µs)
// leave its cache line to the holder; a wait_until's (256 ns) leave the issue slots and the
// memory system to the warps doing the work it waits for.
__device__ __forceinline__ void spin_backoff(gsync_spin_t& spin, u32 most_ns) {
    spin.backoff_ns = spin.backoff_ns == 0u ? 32u : min(spin.backoff_ns * 2u, most_ns);
    __nanosleep(spin.backoff_ns);
}

#define GSYNC_NARROW_SHUFFLES(T, W)                                                                      \
    template <> __device__ __forceinline__ T shfl_down(T v, u32 d) { return (T)__shfl_down_sync(warp_lanes(), (W)v, d); } \
    template <> __device__ __forceinline__ T shfl_up(T v, u32 d) { return (T)__shfl_up_sync(warp_lanes(), (W)v, d); }     \
    template <> __device__ __forceinline__ T shfl_xor(T v, u32 m) { return (T)__shfl_xor_sync(warp_lanes(), (W)v, m); }   \
    template <> __device__ __forceinline__ T shfl(T v, u32 l) { return (T)__shfl_sync(warp_lanes(), (W)v, l); }
GSYNC_NARROW_SHUFFLES(i8, i32)
GSYNC_NARROW_SHUFFLES(u8, u32)
GSYNC_NARROW_SHUFFLES(i16, i32)
GSYNC_NARROW_SHUFFLES(u16, u32)
GSYNC_NARROW_SHUFFLES(bool, u32)
#undef GSYNC_NARROW_SHUFFLES

// Warp votes over the warp's lanes (sm_70 or newer for match_any; CUDA 13 starts at sm_75).
// match_any compares bits: narrow types travel zero-extended, which keeps equality.
__device__ __forceinline__ u32 ballot(bool p) { return __ballot_sync(warp_lanes(), p); }
__device__ __forceinline__ bool any(bool p) { return __any_sync(warp_lanes(), p) != 0; }
__device__ __forceinline__ bool all(bool p) { return __all_sync(warp_lanes(), p) != 0; }
template <typename T> __device__ __forceinline__ u32 match_any(T v) { return __match_any_sync(warp_lanes(), v); }
// Values of at most 8 bits match by one ballot per bit, each keeping the lanes that agree with
// this one on that bit: an H200 runs these few instructions a bit many times faster than its
// MATCH.ANY. Each bit is tested by a mask (and, setp, the ballot, its complement where the bit
// is clear, the AND), from which ptxas gathers several bits' predicates with one R2P: about
// 3.4 instructions a bit (an H200, the radix sort at 2^24 keys, 449 -> 433 us). On some
// kernels ptxas 13.0 then fails to allocate predicates ("(C7600) Register allocation failed
// with register count of '7'"); the runtime compiles those again with GSYNC_MATCH_BY_SIGN,
// which tests each bit at the sign instead, five instructions a bit that ptxas never gathers.
// Lanes the block does not have are not in the result, as for __match_any_sync.
#ifdef GSYNC_MATCH_BY_SIGN
#define GSYNC_MATCH_BIT_TEST "shl.b32 %0, %1, %2;\n\tsetp.lt.s32 p, %0, 0;\n\t"
#define GSYNC_MATCH_BIT_OPERAND(b) (31u - (b))
#else
#define GSYNC_MATCH_BIT_TEST "and.b32 %0, %1, %2;\n\tsetp.ne.u32 p, %0, 0;\n\t"
#define GSYNC_MATCH_BIT_OPERAND(b) (1u << (b))
#endif
template <int BITS> __device__ __forceinline__ u32 match_low_bits(u32 v) {
    const u32 lanes = warp_lanes();
    u32 peers = lanes;
#pragma unroll
    for (int b = 0; b < BITS; ++b) {
        u32 agree;
        asm("{\n\t.reg .pred p;\n\t" GSYNC_MATCH_BIT_TEST
            "vote.sync.ballot.b32 %0, p, %3;\n\t"
            "@!p not.b32 %0, %0;\n\t}"
            : "=&r"(agree)
            : "r"(v), "r"(GSYNC_MATCH_BIT_OPERAND(b)), "r"(lanes));
        peers &= agree;
    }
    return peers;
}
__device__ __forceinline__ u32 match_any(bool v) { return match_low_bits<1>((u32)v); }
__device__ __forceinline__ u32 match_any(i8 v) { return match_low_bits<8>((u32)(u8)v); }
__device__ __forceinline__ u32 match_any(u8 v) { return match_low_bits<8>((u32)v); }
__device__ __forceinline__ u32 match_any(i16 v) { return __match_any_sync(warp_lanes(), (u32)(u16)v); }
__device__ __forceinline__ u32 match_any(u16 v) { return __match_any_sync(warp_lanes(), (u32)v); }

// assert!: the first fault of the launch wins, as for bounds checks. The operands of a failed
// assert_eq!/assert_ne! travel as bits, zero-extended, for the host to print. `phase` is the
// number of grid_sync() calls the thread had passed; it is stored last, plus one, so that a
// thread that reads it nonzero also reads the rest.
__device__ __noinline__ void record_assertion(gsync_status_t* status, u32 phase, u32 number, u32 line, u64 left, u64 right) {
    if (atomicCAS(&status->code, GSYNC_OK, GSYNC_ASSERTION_FAILED) == GSYNC_OK) {
        status->array = number;
        status->line = line;
        status->index = left;
        status->len = right;
        __threadfence();
        *(volatile u32*)&status->phase = phase + 1u;
    }
}
template <typename T> __device__ __forceinline__ u64 operand_bits(T v) { return (u64)(typename wide_unsigned<T>::type)v; }
__device__ __forceinline__ u64 operand_bits(bool v) { return (u64)v; }
__device__ __forceinline__ u64 operand_bits(i8 v) { return (u64)(u8)v; }
__device__ __forceinline__ u64 operand_bits(i16 v) { return (u64)(u16)v; }
__device__ __forceinline__ u64 operand_bits(i32 v) { return (u64)(u32)v; }
__device__ __forceinline__ u64 operand_bits(f32 v) { return (u64)__float_as_uint(v); }
__device__ __forceinline__ u64 operand_bits(f64 v) { return (u64)__double_as_longlong(v); }
__device__ __forceinline__ void fail_assert(gsync_status_t* status, u32 phase, u32 number, u32 line) {
    record_assertion(status, phase, number, line, 0ull, 0ull);
}
template <typename T> __device__ __forceinline__ void fail_assert(gsync_status_t* status, u32 phase, u32 number, u32 line, T left, T right) {
    record_assertion(status, phase, number, line, operand_bits(left), operand_bits(right));
}
// Whether the launch's first fault stops the grid (a failed assertion, a passed deadline) and
// was recorded before the thread's grid_sync() number `phase`. Read right after that barrier,
// which orders every such record before it, it gives every thread of the grid the same answer;
// a record after the barrier, which a fast thread may already have made, does not count.
__device__ __forceinline__ bool stopped_before(const gsync_status_t* status, u32 phase) {
    const u32 failed_in = *(const volatile u32*)&status->phase;
    const u32 code = *(const volatile u32*)&status->code;
    return (code == GSYNC_ASSERTION_FAILED || code == GSYNC_DEADLINE_EXCEEDED) && failed_in != 0u && failed_in - 1u < phase;
}

// The launch's deadline (Launch::deadline). Nothing of it stays in registers: the clock is
// read, to keep its cost off the work, only at every GSYNC_DEADLINE_PHASES-th grid_sync() (by
// each block's first thread, right after the barrier) and every GSYNC_DEADLINE_ITERATIONS-th
// iteration of a `while` or `loop` that no grid_sync() follows. Where a grid_sync() can follow,
// the grid stops together right after the next such barrier, as after a failed assertion;
// elsewhere the thread ends, which no barrier waits for.
#define GSYNC_DEADLINE_PHASES 64u
#define GSYNC_DEADLINE_ITERATIONS 1024u
// Starts the launch's clock, at the kernel's start, in its first block's first thread (a
// compare-and-swap of the header's start word, which the host zeroes for every launch: a
// block that checks before this one starts starts it instead).
__device__ __forceinline__ void deadline_start(u32* state) {
    if (gsync_linear_thread() == 0u && gsync_linear_block() == 0u) {
        atomicCAS((unsigned long long*)(state + GSYNC_DEADLINE_START_WORD), 0ull, spin_clock_ns());
    }
}
// Whether the launch has run longer than its deadline.
__device__ __forceinline__ bool deadline_passed(u32* state) {
    const u64 limit = *(const volatile u64*)(state + GSYNC_DEADLINE_WORD);
    if (limit == 0ull) return false;
    const u64 now = spin_clock_ns();
    const u64 began = atomicCAS((unsigned long long*)(state + GSYNC_DEADLINE_START_WORD), 0ull, now);
    // Another SM's reading of the global timer may be a little ahead of this one's.
    return began != 0ull && now > began && now - began > limit;
}
// Records the passed deadline, with the grid_sync() calls the thread had passed and the Rust
// line; the first fault of the launch wins, and `phase + 1` is stored last, as for assertions.
__device__ __forceinline__ void record_deadline(gsync_status_t* status, const u32* state, u32 phase, u32 line) {
    if (atomicCAS(&status->code, GSYNC_OK, GSYNC_DEADLINE_EXCEEDED) == GSYNC_OK) {
        status->line = line;
        status->index = *(const volatile u64*)(state + GSYNC_DEADLINE_WORD);
        __threadfence();
        *(volatile u32*)&status->phase = phase + 1u;
    }
}
// Every GSYNC_DEADLINE_PHASES-th barrier, after it: whether the grid stops here (a deadline
// found passed at the checkpoint before, or an assertion), else the block's first thread
// checks the clock.
__device__ __forceinline__ bool deadline_checkpoint(gsync_status_t* status, u32* state, u32 phase, u32 line) {
    const u32 stop = *(const volatile u32*)(state + GSYNC_DEADLINE_STOP_WORD);
    if ((stop != 0u && stop - 1u < phase) || stopped_before(status, phase)) return true;
    if (gsync_linear_thread() == 0u && deadline_passed(state)) {
        record_deadline(status, state, phase, line);
        atomicCAS(state + GSYNC_DEADLINE_STOP_WORD, 0u, phase + 1u);
    }
    return false;
}
// Right after grid_sync() number `phase` (on Rust line `line`): whether the grid stops there.
__device__ __forceinline__ bool stop_at_barrier(gsync_status_t* status, u32* state, u32 phase, u32 line) {
    return phase % GSYNC_DEADLINE_PHASES == 0u && deadline_checkpoint(status, state, phase, line);
}
// At the top of iteration `polls` (counting from 1) of a loop that no grid_sync() follows, on
// line `line`: true when the thread must end. It is also the iteration's side effect (see
// gsync_loop_progress).
__device__ __forceinline__ bool deadline_at_poll(gsync_status_t* status, u32* state, u32 phase, u32 line) {
    if (!deadline_passed(state)) return false;
    record_deadline(status, state, phase, line);
    return true;
}
__device__ __forceinline__ bool deadline_poll(u32 polls, gsync_status_t* status, u32* state, u32 phase, u32 line) {
    gsync_loop_progress();
    return polls % GSYNC_DEADLINE_ITERATIONS == 0u && deadline_at_poll(status, state, phase, line);
}
// Whether an assertion failed in an earlier launch of a split kernel (or this one).
__device__ __forceinline__ bool assert_failed(const gsync_status_t* status) {
    return *(const volatile u32*)&status->code == GSYNC_ASSERTION_FAILED;
}

}  // namespace gsync
// ---- end of prelude ----------------------------------------------------------
