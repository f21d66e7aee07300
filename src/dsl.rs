//! The builtins of the kernel language, as documented items: what a `#[grid_phases]` kernel
//! body may call, with its Rust signature, meaning and where it may be used.
//!
//! The kernel body is never compiled as host Rust: `#[grid_phases]` translates it to CUDA and
//! to the CPU emulator, so these functions are never called. They exist so that rustdoc and
//! IDE hovers show the builtins, and so that `use gsync::prelude::*` brings their names into
//! scope. Each requires [`KernelOnly`], which no type meets: host code that calls one does not
//! compile. In a kernel, a builtin may also be written with a path (`gsync::dsl::grid_sync()`).
//!
//! Uniformity (the last line of most entries) says how a value may differ between threads:
//! *uniform* values are the same in the whole grid, *block-uniform* ones in a block,
//! *warp-uniform* ones in a warp, *varying* ones per thread. Barriers need uniform control,
//! warp collectives warp-uniform control; see docs/dsl.md, "Uniformity".
//!
//! The methods of slices and arrays in kernels (`a.atomic_add(i, v)`, `a.load_acquire(i)`,
//! `locks.with_lock(i, || …)`, `a.load_chunk::<N>(c)`) are the trait [`SliceBuiltins`]; the
//! float and integer methods are Rust's own. docs/dsl.md lists them all, with the block size as
//! a constant, [`BLOCK_SIZE`](crate::BLOCK_SIZE), and local arrays (`[0u32; 8]`).

use core::ops::Range;

mod sealed {
    pub trait Sealed {}
    pub trait FusedInt {}
    impl FusedInt for i32 {}
    impl FusedInt for u32 {}
}

/// A bound that no type meets, on every builtin: the builtins exist for documentation and
/// run only inside a `#[grid_phases]` kernel, whose body the macro compiles to CUDA, so host
/// code that calls one fails to compile.
#[diagnostic::on_unimplemented(
    message = "a gsync builtin runs only inside a `#[grid_phases]` kernel",
    label = "called from host code",
    note = "the kernel body is compiled to CUDA and to the emulator, never as host Rust; see docs/dsl.md"
)]
pub trait KernelOnly: sealed::Sealed {}

/// The body of every builtin: no host code can call one (see [`KernelOnly`]).
fn device_only() -> ! {
    unreachable!("a gsync builtin runs only inside a #[grid_phases] kernel, never as host Rust")
}

// Barriers.

/// Every thread of the grid waits here until all have arrived; global-memory writes before it
/// are visible to every thread after it. A statement (`grid_sync();`), compiled to the
/// launch's grid barrier (`Launch::barrier`; `Barrier::Auto` by default), or, for
/// `Barrier::MultiLaunch`, to the end of one launch and the start of the next.
///
/// Allowed under uniform control only: every thread of the grid must reach the same
/// `grid_sync()` the same number of times. Not inside `with_lock` or a spin condition.
pub fn grid_sync()
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// Every thread of this GPU's grid waits here until all of them have arrived: on a PE of a
/// team, a grid barrier that the other PEs' blocks do not take part in; elsewhere the same as
/// [`grid_sync`]. Global-memory writes that this GPU's blocks made before it are visible to
/// every thread of this GPU after it; writes other PEs make into this PE's memory are not
/// ordered by it (wait on their signal, or use `grid_sync()`). A statement (`gpu_sync();`),
/// compiled to the launch's grid barrier, or for `Barrier::MultiLaunch` to the end of one
/// launch and the start of the next, without the crossing to the other PEs.
///
/// Allowed under control flow that is the same in every block of a PE: uniform values and
/// `pe()`. Not inside `with_lock` or a spin condition.
pub fn gpu_sync()
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// Every thread of the block waits here until all of the block have arrived; the block's
/// shared- and global-memory writes before it are visible to the block after it (CUDA's
/// `__syncthreads()`). A statement (`sync_block();`).
///
/// Allowed under uniform or block-uniform control. Not inside `with_lock` or a spin condition.
pub fn sync_block()
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// Waits until every async copy this thread issued (`copy_chunk_async`) has landed: its later
/// reads see the copied elements, and after a `sync_block()` the block's threads do. A
/// statement (`wait_async_copies();`), compiled to `cp.async.wait_all`.
pub fn wait_async_copies()
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

// Strided loops.

/// The indices of `range` this thread visits when the whole grid shares the range: thread
/// `g = global_id()` takes `start + g`, `start + g + grid_size()`, … below `end`. Only as the
/// range of a `for` loop: `for i in grid_stride(0..n) { … }`.
///
/// `T` is `u32`, `i32`, `u64`, `i64` or `usize`; the loop's body is varying.
pub fn grid_stride<T>(range: Range<T>) -> Range<T>
where
    for<'a> &'a (): KernelOnly,
{
    let _ = range;
    device_only()
}

/// The indices of `range` this thread visits when its block shares the range: thread
/// `t = thread_idx()` takes `start + t`, `start + t + block_dim()`, … below `end`. Only as
/// the range of a `for` loop: `for i in block_stride(0..n) { … }`.
///
/// `T` is `u32`, `i32`, `u64`, `i64` or `usize`; the loop's body is varying.
pub fn block_stride<T>(range: Range<T>) -> Range<T>
where
    for<'a> &'a (): KernelOnly,
{
    let _ = range;
    device_only()
}

// Shared memory.

/// An array of `N` elements shared by the threads of a block (CUDA's `__shared__`), one per
/// block, uninitialised at the start and kept across `grid_sync()`:
/// `let mut tile = shared_array::<f32, 256>();`. `N` is a literal or a `const`, possibly
/// computed from `BLOCK_SIZE`.
///
/// Only to initialise a `let` at the top level of the kernel body. `T` is any scalar type but
/// `bool`. The block's shared arrays take 48 KiB at most; synchronise with `sync_block()`
/// between writing and reading other threads' elements.
pub fn shared_array<T, const N: usize>() -> [T; N]
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// A slice of `len` elements shared by the threads of a block, whose length the launch decides
/// (CUDA's dynamic shared memory): `let mut values = shared_slice::<u32>(n as usize);`.
/// `len` is a `usize` or `u32` expression of the kernel's scalar parameters and the block size.
///
/// Only to initialise a `let` at the top level of the kernel body. `T` is any scalar type but
/// `bool`; the slices and shared arrays of a block take at most the device's opt-in maximum
/// (227 KiB on an H100 or H200).
pub fn shared_slice<T>(len: usize) -> &'static mut [T]
where
    for<'a> &'a (): KernelOnly,
{
    let _ = len;
    device_only()
}

// Point-to-point communication.

/// Spins until `condition` holds, testing it again and again (sleeping a little after each
/// failed test): `wait_until(|| flags.load_acquire(other) == 1);`. A statement. The condition
/// is a closure without parameters that reads memory another thread can change
/// (`load_acquire`, `load_relaxed` or an atomic).
///
/// Any thread may call it under any control. After the launch's watchdog the thread records
/// `Error::SpinTimeout` and goes on. Not inside `with_lock`.
pub fn wait_until(condition: impl FnMut() -> bool)
where
    for<'a> &'a (): KernelOnly,
{
    let _ = condition;
    device_only()
}

// Warp shuffles.

/// `value` as lane `lane` of the warp holds it (CUDA's `__shfl_sync`). `T` is any scalar
/// type; `i8 u8 i16 u16 bool` travel widened to 32 bits.
///
/// Every lane of the warp must run it: allowed under warp-uniform (or more uniform) control.
/// The result is warp-uniform when `lane` is, else varying.
pub fn shfl<T: Copy>(value: T, lane: u32) -> T
where
    for<'a> &'a (): KernelOnly,
{
    let _ = (value, lane);
    device_only()
}

/// `value` of lane `lane_id() - delta`, or this lane's own `value` where that is below 0
/// (CUDA's `__shfl_up_sync`).
///
/// Allowed under warp-uniform (or more uniform) control; the result is varying.
pub fn shfl_up<T: Copy>(value: T, delta: u32) -> T
where
    for<'a> &'a (): KernelOnly,
{
    let _ = (value, delta);
    device_only()
}

/// `value` of lane `lane_id() + delta`, or this lane's own `value` where that is above 31
/// (CUDA's `__shfl_down_sync`).
///
/// Allowed under warp-uniform (or more uniform) control; the result is varying.
pub fn shfl_down<T: Copy>(value: T, delta: u32) -> T
where
    for<'a> &'a (): KernelOnly,
{
    let _ = (value, delta);
    device_only()
}

/// `value` of lane `lane_id() ^ mask` (CUDA's `__shfl_xor_sync`).
///
/// Allowed under warp-uniform (or more uniform) control; the result is varying.
pub fn shfl_xor<T: Copy>(value: T, mask: u32) -> T
where
    for<'a> &'a (): KernelOnly,
{
    let _ = (value, mask);
    device_only()
}

// Warp votes.

/// A `u32` with bit `l` set where lane `l`'s `predicate` is true (CUDA's `__ballot_sync`).
///
/// Allowed under warp-uniform (or more uniform) control; the result is warp-uniform.
pub fn ballot(predicate: bool) -> u32
where
    for<'a> &'a (): KernelOnly,
{
    let _ = predicate;
    device_only()
}

/// Whether `predicate` is true in some lane of the warp (CUDA's `__any_sync`).
///
/// Allowed under warp-uniform (or more uniform) control; the result is warp-uniform.
pub fn any(predicate: bool) -> bool
where
    for<'a> &'a (): KernelOnly,
{
    let _ = predicate;
    device_only()
}

/// Whether `predicate` is true in every lane of the warp (CUDA's `__all_sync`).
///
/// Allowed under warp-uniform (or more uniform) control; the result is warp-uniform.
pub fn all(predicate: bool) -> bool
where
    for<'a> &'a (): KernelOnly,
{
    let _ = predicate;
    device_only()
}

/// A `u32` with bit `l` set where lane `l`'s `value` has the same bits as this lane's
/// (CUDA's `__match_any_sync`). `T` is any scalar type.
///
/// Allowed under warp-uniform (or more uniform) control; the result is varying.
pub fn match_any<T: Copy>(value: T) -> u32
where
    for<'a> &'a (): KernelOnly,
{
    let _ = value;
    device_only()
}

// Arithmetic.

/// The smaller of `a` and `b`, both of one scalar type, with Rust's meaning (`f32::min` for
/// floats: a NaN operand yields the other one).
pub fn min<T: PartialOrd>(a: T, b: T) -> T
where
    for<'a> &'a (): KernelOnly,
{
    let _ = (a, b);
    device_only()
}

/// The larger of `a` and `b`, both of one scalar type, with Rust's meaning (`f32::max` for
/// floats: a NaN operand yields the other one).
pub fn max<T: PartialOrd>(a: T, b: T) -> T
where
    for<'a> &'a (): KernelOnly,
{
    let _ = (a, b);
    device_only()
}

// Fused integer max and min: Hopper's DPX instructions.

/// The 32-bit integers that [`max3`], [`min3`], [`add_max`] and [`add_min`] take: `i32` and
/// `u32`, the types of Hopper's DPX instructions. (The `_relu` forms take `i32` only.)
pub trait FusedInt: sealed::FusedInt {}
impl FusedInt for i32 {}
impl FusedInt for u32 {}

/// The largest of `a`, `b` and `c`, one type, `i32` or `u32`: CUDA's `__vimax3_s32` /
/// `__vimax3_u32`: Hopper's DPX instructions on sm_90 and newer, two maxima on older GPUs.
pub fn max3<T: FusedInt>(a: T, b: T, c: T) -> T
where
    for<'a> &'a (): KernelOnly,
{
    let _ = (a, b, c);
    device_only()
}

/// The smallest of `a`, `b` and `c`, one type, `i32` or `u32`: CUDA's `__vimin3_s32` /
/// `__vimin3_u32`.
pub fn min3<T: FusedInt>(a: T, b: T, c: T) -> T
where
    for<'a> &'a (): KernelOnly,
{
    let _ = (a, b, c);
    device_only()
}

/// `max(a, b)`, or 0 where that is negative (`max(max(a, b), 0)`): CUDA's `__vimax_s32_relu`.
pub fn max_relu(a: i32, b: i32) -> i32
where
    for<'a> &'a (): KernelOnly,
{
    let _ = (a, b);
    device_only()
}

/// `min(a, b)`, or 0 where that is negative (`max(min(a, b), 0)`): CUDA's `__vimin_s32_relu`.
pub fn min_relu(a: i32, b: i32) -> i32
where
    for<'a> &'a (): KernelOnly,
{
    let _ = (a, b);
    device_only()
}

/// The largest of `a`, `b`, `c` and 0 (`max(max(max(a, b), c), 0)`): CUDA's
/// `__vimax3_s32_relu`.
pub fn max3_relu(a: i32, b: i32, c: i32) -> i32
where
    for<'a> &'a (): KernelOnly,
{
    let _ = (a, b, c);
    device_only()
}

/// The smallest of `a`, `b` and `c`, or 0 where that is negative (`max(min(min(a, b), c), 0)`):
/// CUDA's `__vimin3_s32_relu`.
pub fn min3_relu(a: i32, b: i32, c: i32) -> i32
where
    for<'a> &'a (): KernelOnly,
{
    let _ = (a, b, c);
    device_only()
}

/// `max(a + b, c)`, one type, `i32` or `u32`: CUDA's `__viaddmax_s32` / `__viaddmax_u32`.
/// The sum wraps at 32 bits, as `+` does in kernels and the hardware's add does; it never
/// saturates. An affine gap, `max(e - extend, h - open)`, is `add_max(e, -extend, h - open)`.
pub fn add_max<T: FusedInt>(a: T, b: T, c: T) -> T
where
    for<'a> &'a (): KernelOnly,
{
    let _ = (a, b, c);
    device_only()
}

/// `min(a + b, c)`, one type, `i32` or `u32`: CUDA's `__viaddmin_s32` / `__viaddmin_u32`. The
/// sum wraps at 32 bits.
pub fn add_min<T: FusedInt>(a: T, b: T, c: T) -> T
where
    for<'a> &'a (): KernelOnly,
{
    let _ = (a, b, c);
    device_only()
}

/// `max(a + b, c)`, or 0 where that is negative (`max(max(a + b, c), 0)`): CUDA's
/// `__viaddmax_s32_relu`. The sum wraps at 32 bits. Smith-Waterman's cell, `max(0, diagonal +
/// s, E, F)`, is `add_max_relu(diagonal, s, e).max(f)`.
pub fn add_max_relu(a: i32, b: i32, c: i32) -> i32
where
    for<'a> &'a (): KernelOnly,
{
    let _ = (a, b, c);
    device_only()
}

/// `min(a + b, c)`, or 0 where that is negative (`max(min(a + b, c), 0)`): CUDA's
/// `__viaddmin_s32_relu`. The sum wraps at 32 bits.
pub fn add_min_relu(a: i32, b: i32, c: i32) -> i32
where
    for<'a> &'a (): KernelOnly,
{
    let _ = (a, b, c);
    device_only()
}

// The launch's shape, linear: in a 2-D or 3-D launch, x varies fastest.

/// The index of the thread in its block, a `u32` (CUDA's `threadIdx.x` in a 1-D launch).
///
/// Varying.
pub fn thread_idx() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// The index of the block in the grid, a `u32` (CUDA's `blockIdx.x` in a 1-D launch).
///
/// Block-uniform.
pub fn block_idx() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// Threads per block, a `u32` (CUDA's `blockDim.x` in a 1-D launch). As a `usize` constant:
/// [`BLOCK_SIZE`](crate::BLOCK_SIZE).
///
/// Uniform.
pub fn block_dim() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// Blocks in the grid, a `u32` (CUDA's `gridDim.x` in a 1-D launch).
///
/// Uniform.
pub fn grid_dim() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// The index of the thread in the grid, `block_idx() * block_dim() + thread_idx()`, a `u32`.
///
/// Varying.
pub fn global_id() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// Threads in the grid, `block_dim() * grid_dim()`, a `u32`.
///
/// Uniform.
pub fn grid_size() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// The PE (GPU) of its [`Team`](crate::Team) the block runs on, a `u32`: 0 for a GPU in no
/// team.
///
/// The same in every block of a PE, different between PEs: a `grid_sync()` under a condition
/// on it is refused, as under one on `block_idx()`; a [`gpu_sync`] or `sync_block()` is not.
pub fn pe() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// The number of PEs of the team, a `u32`: 1 for a GPU in no team.
///
/// Uniform.
pub fn n_pes() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// The index of the thread in its warp, `thread_idx() % 32`, a `u32`.
///
/// Varying.
pub fn lane_id() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// Threads per warp: 32, a `u32`.
///
/// Uniform.
pub fn warp_size() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// The index of the warp in its block, `thread_idx() / 32`, a `u32`.
///
/// Warp-uniform.
pub fn warp_id() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

// The launch's shape, per axis.

/// The index of the thread along x in its block, a `u32`: CUDA's `threadIdx.x`.
///
/// Varying. A kernel that reads it may run in 2-D and 3-D shapes, and its launch must
/// name the block's shape (`Launch::threads_xyz`); see docs/dsl.md, "2-D and 3-D launches".
pub fn thread_idx_x() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// The index of the thread along y in its block, a `u32`: CUDA's `threadIdx.y`.
///
/// Varying. A kernel that reads it may run in 2-D and 3-D shapes, and its launch must
/// name the block's shape (`Launch::threads_xyz`); see docs/dsl.md, "2-D and 3-D launches".
pub fn thread_idx_y() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// The index of the thread along z in its block, a `u32`: CUDA's `threadIdx.z`.
///
/// Varying. A kernel that reads it may run in 2-D and 3-D shapes, and its launch must
/// name the block's shape (`Launch::threads_xyz`); see docs/dsl.md, "2-D and 3-D launches".
pub fn thread_idx_z() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// The index of the block along x in the grid, a `u32`: CUDA's `blockIdx.x`.
///
/// Block-uniform. A kernel that reads it may run in 2-D and 3-D shapes, and its launch must
/// name the grid's shape (`Launch::blocks_xyz`); see docs/dsl.md, "2-D and 3-D launches".
pub fn block_idx_x() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// The index of the block along y in the grid, a `u32`: CUDA's `blockIdx.y`.
///
/// Block-uniform. A kernel that reads it may run in 2-D and 3-D shapes, and its launch must
/// name the grid's shape (`Launch::blocks_xyz`); see docs/dsl.md, "2-D and 3-D launches".
pub fn block_idx_y() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// The index of the block along z in the grid, a `u32`: CUDA's `blockIdx.z`.
///
/// Block-uniform. A kernel that reads it may run in 2-D and 3-D shapes, and its launch must
/// name the grid's shape (`Launch::blocks_xyz`); see docs/dsl.md, "2-D and 3-D launches".
pub fn block_idx_z() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// The extent of the block along x: threads per block in that direction, a `u32`: CUDA's `blockDim.x`.
///
/// Uniform. A kernel that reads it may run in 2-D and 3-D shapes, and its launch must
/// name the block's shape (`Launch::threads_xyz`); see docs/dsl.md, "2-D and 3-D launches".
pub fn block_dim_x() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// The extent of the block along y: threads per block in that direction, a `u32`: CUDA's `blockDim.y`.
///
/// Uniform. A kernel that reads it may run in 2-D and 3-D shapes, and its launch must
/// name the block's shape (`Launch::threads_xyz`); see docs/dsl.md, "2-D and 3-D launches".
pub fn block_dim_y() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// The extent of the block along z: threads per block in that direction, a `u32`: CUDA's `blockDim.z`.
///
/// Uniform. A kernel that reads it may run in 2-D and 3-D shapes, and its launch must
/// name the block's shape (`Launch::threads_xyz`); see docs/dsl.md, "2-D and 3-D launches".
pub fn block_dim_z() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// The extent of the grid along x: blocks in that direction, a `u32`: CUDA's `gridDim.x`.
///
/// Uniform. A kernel that reads it may run in 2-D and 3-D shapes, and its launch must
/// name the grid's shape (`Launch::blocks_xyz`); see docs/dsl.md, "2-D and 3-D launches".
pub fn grid_dim_x() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// The extent of the grid along y: blocks in that direction, a `u32`: CUDA's `gridDim.y`.
///
/// Uniform. A kernel that reads it may run in 2-D and 3-D shapes, and its launch must
/// name the grid's shape (`Launch::blocks_xyz`); see docs/dsl.md, "2-D and 3-D launches".
pub fn grid_dim_y() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// The extent of the grid along z: blocks in that direction, a `u32`: CUDA's `gridDim.z`.
///
/// Uniform. A kernel that reads it may run in 2-D and 3-D shapes, and its launch must
/// name the grid's shape (`Launch::blocks_xyz`); see docs/dsl.md, "2-D and 3-D launches".
pub fn grid_dim_z() -> u32
where
    for<'a> &'a (): KernelOnly,
{
    device_only()
}

/// The methods a kernel calls on its slices, shared arrays and shared slices: atomics, ordered
/// loads and stores, chunks and locks. Like the free builtins, they exist for rustdoc and IDE
/// hovers and cannot be called by host code ([`KernelOnly`]).
///
/// An index `i` follows the indexing rules (any integer type, checked against the length with
/// bounds checks on). The atomics and ordered accesses act on one element at device scope; on a
/// shared array, on the block's shared memory. See docs/dsl.md, "Atomics", "Point-to-point
/// communication" and "Chunks".
#[allow(unused_variables)] // the stubs only document their parameters
pub trait SliceBuiltins<T> {
    /// Adds `v` to element `i` atomically and returns its previous value (CUDA's `atomicAdd`);
    /// integers wrap. For `i32 u32 i64 u64 f32 f64 f16 bf16` on a `&mut [T]` or a `let mut`
    /// shared array. An optional last argument gives a memory ordering
    /// (`a.atomic_add(i, v, Ordering::AcqRel)`). The result is varying.
    fn atomic_add<I>(&mut self, i: I, v: T) -> T
    where
        for<'a> &'a (): KernelOnly,
    {
        device_only()
    }

    /// Stores `v` in element `i` atomically and returns its previous value (`atomicExch`). An
    /// optional last argument gives a memory ordering.
    fn atomic_exch<I>(&mut self, i: I, v: T) -> T
    where
        for<'a> &'a (): KernelOnly,
    {
        device_only()
    }

    /// Element `i` becomes the smaller of itself and `v`, atomically; returns its previous
    /// value. Floats follow `f32::min` (a NaN operand yields the other) and order `-0.0` below
    /// `+0.0`. An optional last argument gives a memory ordering.
    fn atomic_min<I>(&mut self, i: I, v: T) -> T
    where
        for<'a> &'a (): KernelOnly,
    {
        device_only()
    }

    /// Element `i` becomes the larger of itself and `v`, atomically; returns its previous
    /// value. Floats follow `f32::max`, as [`atomic_min`](Self::atomic_min) does `min`. An
    /// optional last argument gives a memory ordering.
    fn atomic_max<I>(&mut self, i: I, v: T) -> T
    where
        for<'a> &'a (): KernelOnly,
    {
        device_only()
    }

    /// Stores `new` in element `i` if it holds `expected`, atomically; returns its previous
    /// value (`atomicCAS`). For `i32 u32 i64 u64`. An optional last argument gives a memory
    /// ordering.
    fn atomic_cas<I>(&mut self, i: I, expected: T, new: T) -> T
    where
        for<'a> &'a (): KernelOnly,
    {
        device_only()
    }

    /// Element `i`, read with acquire ordering (`ld.acquire.gpu`): every write the thread that
    /// stored the value made before its release store is visible after this load.
    fn load_acquire<I>(&self, i: I) -> T
    where
        for<'a> &'a (): KernelOnly,
    {
        device_only()
    }

    /// Writes element `i` with release ordering (`st.release.gpu`), publishing every write this
    /// thread made (or saw) before it to a thread whose acquire load reads `v`. A statement.
    fn store_release<I>(&mut self, i: I, v: T)
    where
        for<'a> &'a (): KernelOnly,
    {
        device_only()
    }

    /// Element `i`, read atomically with no ordering (`ld.relaxed.gpu`): for a word that carries
    /// its own meaning, never for a flag that guards other data.
    fn load_relaxed<I>(&self, i: I) -> T
    where
        for<'a> &'a (): KernelOnly,
    {
        device_only()
    }

    /// Writes element `i` atomically with no ordering (`st.relaxed.gpu`). A statement.
    fn store_relaxed<I>(&mut self, i: I, v: T)
    where
        for<'a> &'a (): KernelOnly,
    {
        device_only()
    }

    /// Element `i` of PE `pe`'s part of a `#[symmetric]` slice, read atomically with no
    /// ordering (`ld.relaxed.sys` through the peer's mapping); writes of other PEs before the
    /// last `grid_sync()` are visible. A PE out of the team is a typed error, in every build.
    fn get<I>(&self, pe: u32, i: I) -> T
    where
        for<'a> &'a (): KernelOnly,
    {
        device_only()
    }

    /// Writes element `i` of PE `pe`'s part of a `#[symmetric]` slice, atomically with no
    /// ordering (`st.relaxed.sys`); PE `pe` sees it after the next `grid_sync()`. A statement.
    fn put<I>(&mut self, pe: u32, i: I, v: T)
    where
        for<'a> &'a (): KernelOnly,
    {
        device_only()
    }

    /// Writes element `i` of PE `pe`'s part of a `#[symmetric]` integer slice with release
    /// ordering at system scope (`st.release.sys`): every write this thread made or saw
    /// before (after a `sync_block()`, its block's `put`s) is visible to a thread of PE `pe`
    /// that reads `v` with [`load_signal`](Self::load_signal). A statement.
    fn signal<I>(&mut self, pe: u32, i: I, v: T)
    where
        for<'a> &'a (): KernelOnly,
    {
        device_only()
    }

    /// This PE's element `i` of a `#[symmetric]` integer slice, read with acquire ordering at
    /// system scope (`ld.acquire.sys`): the value another PE `signal`led, and what it covers.
    /// Wait on it with `wait_until(|| flags.load_signal(i) >= round)`.
    fn load_signal<I>(&self, i: I) -> T
    where
        for<'a> &'a (): KernelOnly,
    {
        device_only()
    }

    /// Copies this PE's `src`, written `&source[lo..hi]` (a range of a slice parameter or a
    /// shared array of `T`), into PE `pe`'s part of this `#[symmetric]` slice from `at`, each
    /// element as [`put`](Self::put) writes one (`st.relaxed.sys`). Block-collective, like
    /// `sync_block()`: every thread of the block calls it, under block-uniform control, with
    /// block-uniform operands; the threads share the copy, and a block barrier ends it. PE `pe`
    /// sees it after the next `grid_sync()`, or after a signal that follows it
    /// ([`put_range_signal`](Self::put_range_signal)). A statement.
    fn put_range<I>(&mut self, pe: u32, at: I, src: &[T])
    where
        for<'a> &'a (): KernelOnly,
    {
        device_only()
    }

    /// [`put_range`](Self::put_range), then one thread of the block runs
    /// `flags.signal(pe, index, value)` on a `#[symmetric]` integer slice: the block barrier
    /// orders every element of the copy before it, so a thread of PE `pe` that waits with
    /// `wait_until(|| flags.load_signal(index) >= value)` sees the whole range. A statement.
    fn put_range_signal<I, F, J>(&mut self, pe: u32, at: I, src: &[T], flags: &mut [F], index: J, value: F)
    where
        for<'a> &'a (): KernelOnly,
    {
        device_only()
    }

    /// Chunk `c`, elements `c·N .. c·N + N`, as the thread's own array, in accesses of up to 16
    /// bytes; `N` from the turbofish or the binding's annotation.
    fn load_chunk<const N: usize, I>(&self, c: I) -> [T; N]
    where
        for<'a> &'a (): KernelOnly,
    {
        device_only()
    }

    /// Writes the thread's array `v` to chunk `c`, elements `c·N .. c·N + N`, in accesses of up
    /// to 16 bytes. A statement.
    fn store_chunk<const N: usize, I>(&mut self, c: I, v: [T; N])
    where
        for<'a> &'a (): KernelOnly,
    {
        device_only()
    }

    /// Copies chunk `s` of `source`, a slice in global memory, into chunk `c` of this shared
    /// array or shared slice (elements `c·N .. c·N + N`), without passing through the thread's
    /// registers (`cp.async`): the copy lands by the thread's next [`wait_async_copies`], and
    /// until then neither the chunk nor the source's elements may be touched. Other threads see
    /// it after that wait and a `sync_block()`. `N` from the turbofish; the chunk is 4, 8, 16
    /// or a multiple of 16 bytes, at most 256. A statement.
    fn copy_chunk_async<const N: usize, I, J>(&mut self, c: I, source: &[T], s: J)
    where
        for<'a> &'a (): KernelOnly,
    {
        device_only()
    }

    /// Runs `body` holding lock word `i` of this `u32` array (0 free, 1 held): taken with an
    /// acquire compare-and-swap, given back with a release store, so each holder sees the
    /// writes of the holders before it. The array belongs to `with_lock`: no other access to it
    /// compiles. See docs/dsl.md, "`with_lock`".
    fn with_lock<I>(&mut self, i: I, body: impl FnOnce())
    where
        for<'a> &'a (): KernelOnly,
    {
        device_only()
    }
}

impl<T> SliceBuiltins<T> for [T] {}
