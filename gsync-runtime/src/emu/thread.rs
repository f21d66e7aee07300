//! One emulated thread's view of its launch: its indices, and its await points (`sync_block`,
//! `grid_sync`, warp shuffles), where it hands control back to its block's scheduler.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8};
use std::task::{Context, Poll};

use crate::core::dims::Dim3;
use crate::emu::fault::Faults;
use crate::emu::scalar::ShuffleScalar;
use crate::emu::warp::{BlockSync, WARP_SIZE};

/// The per-axis coordinates of linear index `index` in `extent`, x varying fastest.
fn split_index(index: u32, extent: Dim3) -> (u32, u32, u32) {
    let (x, y) = (extent.x.max(1), extent.y.max(1));
    (index % x, index / x % y, index / x / y)
}

/// Where a thread is, as the block scheduler sees it after polling it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Wait {
    /// Runnable: not waiting, or released from its barrier.
    Running = 0,
    /// Waiting at `sync_block()`.
    Block = 1,
    /// Waiting at `grid_sync()`.
    Grid = 2,
    /// Waiting at a warp shuffle.
    Warp = 3,
    /// Paused after an ordered access (acquire, release, an ordered atomic): runnable again
    /// once the block's other threads have had their turn.
    Yield = 4,
    /// Waiting for memory to change: a `wait_until` condition that does not hold yet, or a
    /// lock another thread holds.
    Spin = 5,
    /// Waiting at `gpu_sync()`.
    Gpu = 6,
}

impl Wait {
    fn from_u8(value: u8) -> Wait {
        match value {
            1 => Wait::Block,
            2 => Wait::Grid,
            3 => Wait::Warp,
            4 => Wait::Yield,
            5 => Wait::Spin,
            6 => Wait::Gpu,
            _ => Wait::Running,
        }
    }
}

/// The warp shuffles of CUDA's `__shfl_*_sync` family, with the full mask and width 32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shuffle {
    /// `__shfl_up_sync`: the value of lane `lane - delta`, or the own value below lane 0.
    Up,
    /// `__shfl_down_sync`: the value of lane `lane + delta`, or the own value past the last lane.
    Down,
    /// `__shfl_xor_sync`: the value of lane `lane ^ mask`, or the own value past the last lane.
    Xor,
    /// `__shfl_sync`: the value of lane `lane % 32`.
    Idx,
}

impl Shuffle {
    /// The lane `lane` reads from, if it is one of the warp's 32.
    fn source(self, lane: u32, lane_or_delta: u32) -> Option<u32> {
        let source = match self {
            Shuffle::Up => lane.checked_sub(lane_or_delta),
            Shuffle::Down => lane.checked_add(lane_or_delta),
            Shuffle::Xor => Some(lane ^ lane_or_delta),
            Shuffle::Idx => Some(lane_or_delta % WARP_SIZE),
        };
        source.filter(|&source| source < WARP_SIZE)
    }
}

/// One emulated thread's view: its indices and the launch shape, all `u32` as on the device.
/// The code `#[grid_phases]` generates gets one per thread from the emulator's grid run.
pub struct ThreadCtx<'a> {
    thread_idx: u32,
    block_idx: u32,
    block_dim: u32,
    grid_dim: u32,
    /// The block's and the grid's extents per axis; `block_dim` and `grid_dim` are their counts.
    block_shape: Dim3,
    grid_shape: Dim3,
    /// The PE the thread runs on, and the team's size (0 and 1 outside a team).
    pe: u32,
    n_pes: u32,
    /// A [`Wait`]: written by the thread at an await point, reset by the scheduler's release.
    wait: AtomicU8,
    /// `sync_block()` and `grid_sync()` calls so far, counting the one waited at.
    block_syncs: AtomicU32,
    grid_syncs: AtomicU32,
    /// The Rust line of the spin-wait the thread waits in, while it spins.
    spin_line: AtomicU32,
    /// Whether the thread ended in a spin-wait because the launch was stopped.
    abandoned_spin: AtomicBool,
    block: &'a BlockSync,
    faults: &'a Faults,
    /// Set when an assertion of the thread failed: if it then ends, it has exited as on the
    /// device, and a `sync_block()` the rest of its block waits at releases without it.
    failed: AtomicBool,
}

impl<'a> ThreadCtx<'a> {
    /// Thread `thread_idx` of block `block_idx` of a `grid_dim` × `block_dim` launch.
    pub(crate) fn new(
        (thread_idx, block_idx): (u32, u32),
        (grid_dim, block_dim): (u32, u32),
        block: &'a BlockSync,
        faults: &'a Faults,
    ) -> Self {
        ThreadCtx {
            thread_idx,
            block_idx,
            block_dim,
            grid_dim,
            block_shape: Dim3::linear(block_dim),
            grid_shape: Dim3::linear(grid_dim),
            pe: 0,
            n_pes: 1,
            wait: AtomicU8::new(0),
            block_syncs: AtomicU32::new(0),
            grid_syncs: AtomicU32::new(0),
            spin_line: AtomicU32::new(0),
            abandoned_spin: AtomicBool::new(false),
            block,
            faults,
            failed: AtomicBool::new(false),
        }
    }
}

impl ThreadCtx<'_> {
    /// The same thread in a launch of `grid` blocks of `block` threads, whose counts are the
    /// `grid_dim` and `block_dim` it was made with: the linear indices stay, and the per-axis
    /// ones derive from them, x varying fastest.
    pub(crate) fn with_shapes(self, grid: Dim3, block: Dim3) -> Self {
        debug_assert_eq!((grid.count(), block.count()), (u64::from(self.grid_dim), u64::from(self.block_dim)));
        ThreadCtx { grid_shape: grid, block_shape: block, ..self }
    }

    /// The same thread on PE `pe` of a team of `n_pes`.
    pub(crate) fn on_pe(self, pe: u32, n_pes: u32) -> Self {
        ThreadCtx { pe, n_pes, ..self }
    }

    /// The PE the thread runs on (`pe()`): 0 outside a team.
    #[inline]
    pub fn pe(&self) -> u32 {
        self.pe
    }

    /// The number of PEs of the team (`n_pes()`): 1 outside a team.
    #[inline]
    pub fn n_pes(&self) -> u32 {
        self.n_pes
    }

    /// Records an access of symmetric array `array` on PE `pe`, which is out of the team.
    #[cold]
    pub(crate) fn no_such_pe(&self, array: u32, pe: u64, n_pes: u32, line: u32) {
        self.faults.no_such_pe(array, pe, n_pes, line);
    }

    /// The linear thread index in the block, `threadIdx.x` in a one-dimensional block.
    #[inline]
    pub fn thread_idx(&self) -> u32 {
        self.thread_idx
    }

    /// The linear block index in the grid, `blockIdx.x` in a one-dimensional grid.
    #[inline]
    pub fn block_idx(&self) -> u32 {
        self.block_idx
    }

    /// Threads per block, `blockDim.x` in a one-dimensional block.
    #[inline]
    pub fn block_dim(&self) -> u32 {
        self.block_dim
    }

    /// Blocks in the grid, `gridDim.x` in a one-dimensional grid.
    #[inline]
    pub fn grid_dim(&self) -> u32 {
        self.grid_dim
    }

    /// `threadIdx.x`, `threadIdx.y`, `threadIdx.z`.
    pub fn thread_idx_xyz(&self) -> (u32, u32, u32) {
        split_index(self.thread_idx, self.block_shape)
    }

    /// `blockIdx.x`, `blockIdx.y`, `blockIdx.z`.
    pub fn block_idx_xyz(&self) -> (u32, u32, u32) {
        split_index(self.block_idx, self.grid_shape)
    }

    /// `blockDim.x`, `blockDim.y`, `blockDim.z`.
    pub fn block_dim_xyz(&self) -> (u32, u32, u32) {
        self.block_shape.tuple()
    }

    /// `gridDim.x`, `gridDim.y`, `gridDim.z`.
    pub fn grid_dim_xyz(&self) -> (u32, u32, u32) {
        self.grid_shape.tuple()
    }

    /// `blockIdx.x * blockDim.x + threadIdx.x`, wrapping as `u32` arithmetic does on the device.
    #[inline]
    pub fn global_id(&self) -> u32 {
        self.block_idx.wrapping_mul(self.block_dim).wrapping_add(self.thread_idx)
    }

    /// `gridDim.x * blockDim.x`, wrapping as on the device.
    #[inline]
    pub fn grid_size(&self) -> u32 {
        self.grid_dim.wrapping_mul(self.block_dim)
    }

    /// The thread's lane in its warp: `threadIdx.x % 32`.
    #[inline]
    pub fn lane_id(&self) -> u32 {
        self.thread_idx % WARP_SIZE
    }

    /// The thread's warp in its block: `threadIdx.x / 32`.
    #[inline]
    pub fn warp_id(&self) -> u32 {
        self.thread_idx / WARP_SIZE
    }

    /// `__syncthreads()`: returns when every thread of the block has arrived. A thread that
    /// finished while the others wait here fails the launch with
    /// [`Error::BarrierMismatch`](crate::Error::BarrierMismatch).
    pub async fn sync_block(&self) {
        count(&self.block_syncs);
        Arrival::new(&self.wait, Wait::Block).await;
    }

    /// A grid barrier: returns when every thread of the grid has arrived. A thread or block
    /// that finished while others wait here fails the launch with
    /// [`Error::BarrierMismatch`](crate::Error::BarrierMismatch), as it would hang a GPU.
    pub async fn grid_sync(&self) {
        count(&self.grid_syncs);
        Arrival::new(&self.wait, Wait::Grid).await;
    }

    /// A grid barrier over this GPU's blocks: as [`grid_sync`](Self::grid_sync) outside a
    /// team; on a PE of a team the other PEs' grids do not meet it.
    pub async fn gpu_sync(&self) {
        count(&self.grid_syncs);
        Arrival::new(&self.wait, Wait::Gpu).await;
    }

    /// Lets the block's other threads run before this one goes on: the generated code
    /// yields after every ordered access, where threads communicate, so that a thread that
    /// reads a value, communicates and writes it back sees what others did in between, as it
    /// may on a GPU.
    pub async fn yield_now(&self) {
        Arrival::new(&self.wait, Wait::Yield).await;
    }

    /// One turn of a spin-wait on Rust line `line` whose condition does not hold yet: the
    /// other threads of the block, and the other blocks of the grid, run before this one
    /// tests it again. A wait that no thread ends runs until the watchdog stops the launch
    /// with [`Error::SpinTimeout`](crate::Error::SpinTimeout).
    pub async fn spin(&self, line: u32) {
        self.spin_line.store(line, Relaxed);
        Arrival::new(&self.wait, Wait::Spin).await;
    }

    /// Whether the launch is being stopped (see [`stopped`](Self::stopped)), asked by a
    /// spin-wait on Rust line `line` before each turn; if so, the thread ends, and the launch
    /// names this wait in its [`Error::SpinTimeout`](crate::Error::SpinTimeout).
    #[inline]
    pub fn stopped_spinning(&self, line: u32) -> bool {
        if !self.faults.stopped() {
            return false;
        }
        self.spin_line.store(line, Relaxed);
        self.abandoned_spin.store(true, Relaxed);
        true
    }

    /// The Rust line of the spin-wait the thread waits in, or ended in when the launch was
    /// stopped, if any.
    pub(crate) fn spinning_at(&self) -> Option<u32> {
        let spins = self.waiting() == Wait::Spin || self.abandoned_spin.load(Relaxed);
        spins.then(|| self.spin_line.load(Relaxed))
    }

    /// Whether the launch is being stopped because a block ran past the watchdog limit
    /// ([`Launch::watchdog`](crate::Launch::watchdog)). The code `#[grid_phases]` generates
    /// asks at the top of every loop iteration and ends the thread when it is, so that an
    /// endless loop ends the launch with [`Error::KernelTimeout`](crate::Error::KernelTimeout)
    /// instead of hanging.
    #[inline]
    pub fn stopped(&self) -> bool {
        self.faults.stopped()
    }

    /// A warp shuffle of `value` among the warp's lanes (`threadIdx.x / 32` picks the warp;
    /// the last warp of a block may be partial): returns when every unfinished lane has
    /// arrived. Reading a lane that does not exist or has finished gives the own `value`.
    pub async fn shuffle<T: ShuffleScalar>(&self, op: Shuffle, value: T, lane_or_delta: u32) -> T {
        let lane = self.lane_id();
        let warp = self.block.warp(self.thread_idx);
        let exchange = warp.deposit(lane, value.to_lane_bits());
        Arrival::new(&self.wait, Wait::Warp).await;
        let read = op.source(lane, lane_or_delta).and_then(|source| warp.collect(exchange, source));
        read.map_or(value, T::from_lane_bits)
    }

    /// `__ballot_sync`: bit `l` is set where lane `l` of the warp has `predicate` true.
    /// Returns when every unfinished lane has arrived; lanes that do not exist or have
    /// finished contribute 0, as on the device.
    pub async fn ballot(&self, predicate: bool) -> u32 {
        let (lanes, values) = self.exchange(u64::from(predicate)).await;
        lanes_where(lanes, |lane| values[lane] != 0)
    }

    /// `__any_sync`: whether some lane of the warp has `predicate` true.
    pub async fn any(&self, predicate: bool) -> bool {
        self.ballot(predicate).await != 0
    }

    /// `__all_sync`: whether every lane of the warp that takes part has `predicate` true.
    pub async fn all(&self, predicate: bool) -> bool {
        let (lanes, values) = self.exchange(u64::from(predicate)).await;
        lanes_where(lanes, |lane| values[lane] != 0) == lanes
    }

    /// `__match_any_sync`: bit `l` is set where lane `l` of the warp holds the calling lane's
    /// `value`, bit for bit.
    pub async fn match_any<T: ShuffleScalar>(&self, value: T) -> u32 {
        let bits = value.to_lane_bits();
        let (lanes, values) = self.exchange(bits).await;
        lanes_where(lanes, |lane| values[lane] == bits)
    }

    /// Deposits `bits` for a vote of the warp and waits for the warp's unfinished lanes: the
    /// lanes that took part, and every lane's bits.
    async fn exchange(&self, bits: u64) -> (u32, [u64; WARP_SIZE as usize]) {
        let warp = self.block.warp(self.thread_idx);
        let exchange = warp.deposit(self.lane_id(), bits);
        Arrival::new(&self.wait, Wait::Warp).await;
        let lanes = warp.lanes(exchange);
        let values = std::array::from_fn(|lane| warp.collect(exchange, lane as u32).unwrap_or(0));
        (lanes, values)
    }

    /// Records the failure of the kernel's `number`-th `assert!`, on Rust source line
    /// `line`, as the device's status word does. The generated code then ends the thread,
    /// or, before a `grid_sync()`, runs on to it and ends the grid there.
    #[doc(hidden)]
    #[cold]
    pub fn fail_assert(&self, number: u32, line: u32) {
        self.failed.store(true, Relaxed);
        self.faults.assertion_failed(self.grid_syncs(), number, line, 0, 0);
    }

    /// Like [`fail_assert`](Self::fail_assert), for an `assert_eq!` or `assert_ne!` with
    /// its operands.
    #[doc(hidden)]
    #[cold]
    pub fn fail_assert_eq<T: ShuffleScalar>(&self, number: u32, line: u32, left: T, right: T) {
        self.failed.store(true, Relaxed);
        self.faults.assertion_failed(self.grid_syncs(), number, line, left.to_lane_bits(), right.to_lane_bits());
    }

    /// Whether the launch's first fault is an assertion that failed before the thread's last
    /// `grid_sync()`: right after one, every thread gets the same answer, and they end
    /// together. A failure after it, which a faster thread may already have recorded, does
    /// not count.
    #[doc(hidden)]
    pub fn assert_failed(&self) -> bool {
        self.faults.assertion_failed_before(self.grid_syncs())
    }

    /// Whether the launch checks `debug_assert!`s (its bounds-check setting).
    #[doc(hidden)]
    pub fn debug_checks(&self) -> bool {
        self.faults.debug_checks()
    }

    /// Whether one of the thread's assertions failed.
    pub(crate) fn has_failed(&self) -> bool {
        self.failed.load(Relaxed)
    }

    /// Records an out-of-bounds access for the launch's result.
    #[cold]
    pub(crate) fn out_of_bounds(&self, array: u32, index: u64, len: usize, line: u32) {
        self.faults.out_of_bounds(array, index, len, line);
    }

    /// Records that element `index` of array `array` (the kernel's array number) was written
    /// while an async copy from it, issued on Rust source line `line`, was in flight: what
    /// `wait_async_copies()` found.
    #[doc(hidden)]
    pub fn async_source_written(&self, array: u32, index: u64, line: u32) {
        self.faults.async_source_written(array, index, line);
    }

    /// The thread's `sync_block()` calls so far, counting the one it waits at.
    pub(crate) fn block_syncs(&self) -> u32 {
        self.block_syncs.load(Relaxed)
    }

    /// The thread's `grid_sync()` calls so far, counting the one it waits at.
    pub(crate) fn grid_syncs(&self) -> u32 {
        self.grid_syncs.load(Relaxed)
    }

    /// Records a `step_by(0)` on Rust source line `line`, as the device's status word does;
    /// the generated loop then runs no iteration.
    #[doc(hidden)]
    pub fn zero_step(&self, line: u32) {
        self.faults.zero_step(line);
    }

    /// Where the thread waits, read by the scheduler after polling it.
    pub(crate) fn waiting(&self) -> Wait {
        Wait::from_u8(self.wait.load(Relaxed))
    }

    /// Lets the thread go on past its barrier at its next poll.
    pub(crate) fn release(&self) {
        self.wait.store(Wait::Running as u8, Relaxed);
    }
}

impl std::fmt::Debug for ThreadCtx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadCtx")
            .field("thread_idx", &self.thread_idx)
            .field("block_idx", &self.block_idx)
            .field("block_dim", &self.block_dim)
            .field("grid_dim", &self.grid_dim)
            .finish_non_exhaustive()
    }
}

/// The lanes of `lanes` (a bit per lane) for which `holds` is true.
fn lanes_where(lanes: u32, holds: impl Fn(usize) -> bool) -> u32 {
    (0..WARP_SIZE as usize).filter(|&lane| lanes & (1 << lane) != 0 && holds(lane)).fold(0, |m, lane| m | (1 << lane))
}

/// Counts one call of a barrier; only its own thread writes the counter.
fn count(calls: &AtomicU32) {
    calls.store(calls.load(Relaxed).wrapping_add(1), Relaxed);
}

/// A thread's arrival at a barrier: the first poll marks the thread as waiting there and
/// yields to the scheduler; later polls finish once the scheduler has released it.
struct Arrival<'c> {
    wait: &'c AtomicU8,
    at: Wait,
    arrived: bool,
}

impl<'c> Arrival<'c> {
    fn new(wait: &'c AtomicU8, at: Wait) -> Self {
        Arrival { wait, at, arrived: false }
    }
}

impl Future for Arrival<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if !self.arrived {
            self.arrived = true;
            self.wait.store(self.at as u8, Relaxed);
            return Poll::Pending;
        }
        if Wait::from_u8(self.wait.load(Relaxed)) == Wait::Running {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_sources_follow_cuda_with_width_32() {
        assert_eq!(Shuffle::Up.source(5, 2), Some(3));
        assert_eq!(Shuffle::Up.source(1, 2), None);
        assert_eq!(Shuffle::Down.source(29, 2), Some(31));
        assert_eq!(Shuffle::Down.source(30, 2), None);
        assert_eq!(Shuffle::Down.source(3, u32::MAX), None);
        assert_eq!(Shuffle::Xor.source(6, 1), Some(7));
        assert_eq!(Shuffle::Xor.source(6, 32), None);
        assert_eq!(Shuffle::Idx.source(6, 33), Some(1));
    }

    #[test]
    fn indices_wrap_as_u32_arithmetic_on_the_device() {
        let (block, faults) = (BlockSync::new(64), Faults::default());
        let ctx = ThreadCtx::new((37, 2), (5, 64), &block, &faults);
        assert_eq!((ctx.global_id(), ctx.grid_size(), ctx.lane_id()), (2 * 64 + 37, 5 * 64, 5));
        let far = ThreadCtx::new((1, u32::MAX), (u32::MAX, 2), &block, &faults);
        assert_eq!(far.global_id(), u32::MAX.wrapping_mul(2).wrapping_add(1));
    }
}
