//! How to launch a kernel, and what a launch reports.

use std::time::Duration;

use crate::barrier::{AutoChoice, Barrier};
use crate::core::config::{ConfigChoice, LaunchConfig};
use crate::core::dims::Dim3;
use crate::core::kernel::KernelSpec;
use crate::core::profile::{PhaseProfile, DEFAULT_PROFILE_PHASES};

/// How long a block may wait in one software grid barrier unless the launch says otherwise.
pub const DEFAULT_WATCHDOG: Duration = Duration::from_secs(5);

/// The longest a launch runs by default, start to end, before it is stopped with
/// [`Error::DeadlineExceeded`](crate::Error::DeadlineExceeded) ([`Launch::deadline`]).
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(60);

/// How to launch a kernel; unset values take defaults that are always valid.
///
/// ```
/// use std::time::Duration;
/// use gsync_runtime::{Barrier, Launch};
/// let launch = Launch::new().blocks(60).threads(32).barrier(Barrier::Ulfs).watchdog(Some(Duration::from_secs(1)));
/// assert_eq!(launch.requested_blocks(), Some(60));
/// assert_eq!(launch.watchdog_limit(), Some(Duration::from_secs(1)));
/// ```
#[derive(Clone, Debug)]
pub struct Launch {
    blocks: Option<u32>,
    threads: Option<u32>,
    /// The grid's shape when the launch named one with [`Launch::blocks_xyz`]; `blocks` is its
    /// block count.
    grid_shape: Option<Dim3>,
    /// The block's shape when the launch named one with [`Launch::threads_xyz`]; `threads` is
    /// its thread count.
    block_shape: Option<Dim3>,
    barrier: Barrier,
    bounds_checks: Option<bool>,
    watchdog: Option<Duration>,
    deadline: Option<Duration>,
    graph: bool,
    tune: bool,
    profile: bool,
    profile_phases: u32,
}

impl Default for Launch {
    fn default() -> Self {
        Launch {
            blocks: None,
            threads: None,
            grid_shape: None,
            block_shape: None,
            barrier: Barrier::default(),
            bounds_checks: None,
            watchdog: Some(DEFAULT_WATCHDOG),
            deadline: Some(DEFAULT_DEADLINE),
            graph: false,
            tune: true,
            profile: false,
            profile_phases: DEFAULT_PROFILE_PHASES,
        }
    }
}

impl Launch {
    /// The default launch: the configuration (blocks × threads × barrier) measured fastest for
    /// the kernel, GPU and size class on its first launch ([`Launch::tune`]), the default
    /// barrier, and a watchdog of [`DEFAULT_WATCHDOG`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Launches `blocks` blocks instead of the tuned grid (see [`Launch::tune`]); the block
    /// size then defaults to the kernel's.
    #[must_use]
    pub fn blocks(mut self, blocks: u32) -> Self {
        self.blocks = Some(blocks);
        self.grid_shape = None;
        self
    }

    /// Launches a grid of `x × y × z` blocks. Its linear block index, `block_idx()`, is
    /// `x + y·X + z·X·Y` for block `(x, y, z)` of an `X × Y × Z` grid, and `grid_dim()` counts
    /// all blocks; `block_idx_y()`, `grid_dim_z()` and their kin read the axes. Only a kernel
    /// that reads a per-axis builtin runs in a grid of more than one dimension
    /// ([`Error::InvalidShape`](crate::Error::InvalidShape) for any other); one that reads
    /// `block_idx_x()` … `grid_dim_z()` must name its grid, with this or [`Launch::blocks`].
    #[must_use]
    pub fn blocks_xyz(mut self, x: u32, y: u32, z: u32) -> Self {
        let shape = Dim3::new(x, y, z);
        self.blocks = Some(u32::try_from(shape.count()).unwrap_or(u32::MAX));
        self.grid_shape = Some(shape);
        self
    }

    /// Uses `threads` threads per block instead of the tuned block size (see
    /// [`Launch::tune`]); the grid then defaults to the largest co-resident one.
    #[must_use]
    pub fn threads(mut self, threads: u32) -> Self {
        self.threads = Some(threads);
        self.block_shape = None;
        self
    }

    /// Uses blocks of `x × y × z` threads (at most 1024 in all; 64 along z). The linear thread
    /// index, `thread_idx()`, is `x + y·X + z·X·Y` for thread `(x, y, z)` of an `X × Y × Z`
    /// block, consecutive linear indices form the warps as on the GPU, and `block_dim()` and
    /// `BLOCK_SIZE` count all threads; `thread_idx_y()`, `block_dim_z()` and their kin read the
    /// axes. Only a kernel that reads a per-axis builtin runs in a block of more than one
    /// dimension ([`Error::InvalidShape`](crate::Error::InvalidShape) for any other); one
    /// that reads `thread_idx_x()` … `block_dim_z()` must name its block, with this or
    /// [`Launch::threads`], and is never tuned.
    #[must_use]
    pub fn threads_xyz(mut self, x: u32, y: u32, z: u32) -> Self {
        let shape = Dim3::new(x, y, z);
        self.threads = Some(u32::try_from(shape.count()).unwrap_or(u32::MAX));
        self.block_shape = Some(shape);
        self
    }

    /// Uses `barrier` for the kernel's `grid_sync()` calls.
    #[must_use]
    pub fn barrier(mut self, barrier: Barrier) -> Self {
        self.barrier = barrier;
        self
    }

    /// Compiles the kernel with (`true`) or without (`false`) bounds checks on
    /// every slice access, whatever the build profile chose.
    #[must_use]
    pub fn bounds_checks(mut self, checks: bool) -> Self {
        self.bounds_checks = Some(checks);
        self
    }

    /// Lets a block wait at most `limit` in one software grid barrier (`None`: forever).
    ///
    /// Past the limit the kernel stops at every block's next barrier and the launch fails
    /// with [`Error::BarrierTimeout`](crate::Error::BarrierTimeout) instead of hanging. On a
    /// GPU only the software barriers (LBS, LFS, ILBS, ULFS) have a watchdog: the cooperative
    /// barrier is the driver's, which cannot time out, and multi-launch waits for no block.
    /// On the emulator the limit bounds how long a block may run one phase, under every
    /// barrier: past it, every thread ends at its next loop iteration and the launch fails
    /// with [`Error::KernelTimeout`](crate::Error::KernelTimeout), so that an endless loop
    /// cannot hang it.
    #[must_use]
    pub fn watchdog(mut self, limit: Option<Duration>) -> Self {
        self.watchdog = limit;
        self
    }

    /// Lets the whole launch run at most `limit`, start to end (`None`: forever; the default
    /// is [`DEFAULT_DEADLINE`]).
    ///
    /// The watchdog bounds one wait; the deadline bounds a kernel that never stops although
    /// each of its phases does, such as an endless loop whose every iteration passes
    /// `grid_sync()`. Past it, the launch fails with
    /// [`Error::DeadlineExceeded`](crate::Error::DeadlineExceeded), naming the phase it had
    /// reached, and the outputs hold whatever the kernel wrote before it stopped. On a GPU
    /// the fused kernel reads the clock at every 64th `grid_sync()` and every 1024th
    /// iteration of a `while` or `loop` that no `grid_sync()` follows, and stops the whole
    /// grid together after a `grid_sync()`; a split run checks before each launch; the
    /// emulator checks continuously.
    #[must_use]
    pub fn deadline(mut self, limit: Option<Duration>) -> Self {
        self.deadline = limit;
        self
    }

    /// With [`Barrier::MultiLaunch`]: captures the run's launches as a CUDA graph and
    /// replays it, instead of launching each segment on the stream. Only for kernels
    /// whose host control flow reads no device memory (else `Error::InvalidBarrier`).
    #[must_use]
    pub fn graph(mut self, replay: bool) -> Self {
        self.graph = replay;
        self
    }

    /// Whether a fused launch that names neither its grid nor its block size may measure
    /// candidate configurations (default: yes). A launch that names one of them keeps the
    /// other's default: the largest co-resident grid, or the kernel's block size.
    ///
    /// On a CUDA GPU, the first such launch of a kernel for a size class (⌈log₂⌉ of its
    /// longest buffer) runs a handful of configurations — blocks per SM, block sizes unless the
    /// kernel may assume one, with the launch's barrier (Auto resolves per grid) — on copies of
    /// the buffers the kernel writes, so that the caller's data is written once, by the real
    /// launch. It prints one line, starts no candidate past
    /// [`TUNING_BUDGET`](crate::TUNING_BUDGET) (so a kernel that runs longer than that costs
    /// one extra run), and remembers the fastest configuration in memory and beside the kernel
    /// cache on disk, keyed by kernel, GPU, compiler, driver and size class but not by scalar
    /// arguments. A remembered configuration is used whatever this switch says; with `false`
    /// (or `GSYNC_TUNE=off` in the environment) a launch with none takes the heuristic's
    /// configuration instead of measuring (see [`ConfigChoice::Heuristic`]). A kernel whose
    /// buffers' sizes depend on the grid asks [`Gpu::launch_config`](crate::Gpu::launch_config)
    /// for the configuration before allocating and launches with [`Launch::config`].
    #[must_use]
    pub fn tune(mut self, tune: bool) -> Self {
        self.tune = tune;
        self
    }

    /// Launches exactly `config`: its blocks, threads and barrier.
    #[must_use]
    pub fn config(self, config: LaunchConfig) -> Self {
        self.blocks(config.blocks).threads(config.threads).barrier(config.barrier)
    }

    /// Whether the launch may tune its configuration ([`Launch::tune`]).
    pub fn tunes(&self) -> bool {
        self.tune
    }

    /// Whether a split run is replayed as a CUDA graph.
    pub fn replays_graph(&self) -> bool {
        self.graph
    }

    /// Records a per-phase profile ([`LaunchReport::profile`]): per block, when it started,
    /// arrived at and left each `grid_sync()`, and ended.
    ///
    /// On a GPU the kernel is compiled, and cached, a second time with the recording in it
    /// (without a profile nothing of it is compiled in): thread 0 of each block reads the
    /// global timer after a block barrier at each arrival, so a profiled phase boundary costs
    /// a little more than an unprofiled one. On the emulator the host's clock is read as each
    /// block's part of a phase starts and ends. A split run ([`Barrier::MultiLaunch`]) has no
    /// `grid_sync()` on the device to record, and fails with
    /// [`Error::InvalidBarrier`](crate::Error::InvalidBarrier).
    #[must_use]
    pub fn profile(mut self, record: bool) -> Self {
        self.profile = record;
        self
    }

    /// Records at most `max` `grid_sync()` calls per block in a profile (default
    /// [`DEFAULT_PROFILE_PHASES`]); a block counts later ones without recording them, and the
    /// profile says it is truncated. The buffer takes `8 × (3 + 2 × max)` bytes per block.
    #[must_use]
    pub fn profile_phases(mut self, max: u32) -> Self {
        self.profile_phases = max;
        self
    }

    /// Whether the launch records a profile.
    pub fn records_profile(&self) -> bool {
        self.profile
    }

    /// The most `grid_sync()` calls a profile records per block.
    pub fn profile_capacity(&self) -> u32 {
        self.profile_phases
    }

    /// How the configuration of a launch that is not tuned was chosen: as asked, or the
    /// backend's default grid.
    pub(crate) fn untuned_choice(&self) -> ConfigChoice {
        match (self.blocks, self.threads) {
            (Some(_), Some(_)) => ConfigChoice::Requested,
            _ => ConfigChoice::Default,
        }
    }

    /// Whether the launch chose bounds checks ([`Launch::bounds_checks`]), if it did.
    pub(crate) fn requested_bounds_checks(&self) -> Option<bool> {
        self.bounds_checks
    }

    /// The number of blocks asked for, if any.
    pub fn requested_blocks(&self) -> Option<u32> {
        self.blocks
    }

    /// The block size asked for, if any.
    pub fn requested_threads(&self) -> Option<u32> {
        self.threads
    }

    /// The grid shape asked for with [`Launch::blocks_xyz`], if any.
    pub fn requested_grid_shape(&self) -> Option<Dim3> {
        self.grid_shape
    }

    /// The block shape asked for with [`Launch::threads_xyz`], if any.
    pub fn requested_block_shape(&self) -> Option<Dim3> {
        self.block_shape
    }

    /// The block shape of a launch of `threads` threads per block: the one asked for, else
    /// `threads × 1 × 1`.
    pub fn block_shape_for(&self, threads: u32) -> Dim3 {
        self.block_shape.filter(|shape| shape.count() == u64::from(threads)).unwrap_or(Dim3::linear(threads))
    }

    /// The grid shape of a launch of `blocks` blocks: the one asked for, else `blocks × 1 × 1`.
    pub fn grid_shape_for(&self, blocks: u32) -> Dim3 {
        self.grid_shape.filter(|shape| shape.count() == u64::from(blocks)).unwrap_or(Dim3::linear(blocks))
    }

    /// The barrier to use.
    pub fn selected_barrier(&self) -> Barrier {
        self.barrier
    }

    /// The whole launch's time limit; `None` when there is none ([`Launch::deadline`]).
    pub fn deadline_limit(&self) -> Option<Duration> {
        self.deadline
    }

    /// The watchdog limit; `None` when the watchdog is off.
    pub fn watchdog_limit(&self) -> Option<Duration> {
        self.watchdog
    }

    /// The block size for `kernel`: the requested one, else
    /// [`KernelSpec::default_block_size`].
    pub fn threads_for(&self, kernel: &KernelSpec) -> u32 {
        self.threads.unwrap_or_else(|| kernel.default_block_size())
    }
}

/// What a launch did.
#[derive(Clone, Debug)]
pub struct LaunchReport {
    /// Time between CUDA events recorded just before the (first) launch and after the (last).
    pub gpu_time: Duration,
    /// Blocks launched.
    pub blocks: u32,
    /// Threads per block.
    pub threads: u32,
    /// The barrier used.
    pub barrier: Barrier,
    /// For a launch that asked for [`Barrier::Auto`]: why it ran `barrier`, the row of which
    /// table ([`AutoChoice`]'s `Display` says it in a sentence).
    pub auto: Option<AutoChoice>,
    /// How blocks, threads and barrier were chosen.
    pub choice: ConfigChoice,
    /// The per-phase profile, when the launch asked for one ([`Launch::profile`]); `None`
    /// otherwise, and for a kernel that records nothing (one written by hand, without the
    /// profile hooks `#[grid_phases]` emits).
    pub profile: Option<PhaseProfile>,
}

impl LaunchReport {
    /// The configuration that ran: blocks × threads × barrier.
    pub fn config(&self) -> LaunchConfig {
        LaunchConfig { blocks: self.blocks, threads: self.threads, barrier: self.barrier }
    }

    /// The report of a call that had nothing to run (an empty input): no blocks, no time.
    pub fn no_launch(barrier: Barrier) -> LaunchReport {
        LaunchReport {
            gpu_time: Duration::ZERO,
            blocks: 0,
            threads: 0,
            barrier,
            auto: None,
            choice: ConfigChoice::Requested,
            profile: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::kernel::tests::SMOOTH;

    #[test]
    fn the_builder_records_what_was_asked() {
        let launch = Launch::new().blocks(60).threads(32);
        assert_eq!(launch.requested_blocks(), Some(60));
        assert_eq!(launch.requested_threads(), Some(32));
        assert_eq!(launch.selected_barrier(), Barrier::Auto);
    }

    #[test]
    fn requested_threads_override_the_kernel_default() {
        assert_eq!(Launch::new().threads_for(&SMOOTH), 256);
        let wide = KernelSpec { default_threads: 512, ..SMOOTH };
        assert_eq!(Launch::new().threads_for(&wide), 512);
        assert_eq!(Launch::new().threads(64).threads_for(&wide), 64);
    }

    #[test]
    fn the_deadline_defaults_to_a_minute_and_can_be_lifted() {
        assert_eq!(Launch::new().deadline_limit(), Some(Duration::from_secs(60)));
        assert_eq!(Launch::new().deadline(None).deadline_limit(), None);
        assert_eq!(
            Launch::new().deadline(Some(Duration::from_millis(5))).deadline_limit(),
            Some(Duration::from_millis(5))
        );
    }

    #[test]
    fn the_watchdog_defaults_to_five_seconds_and_can_be_turned_off() {
        assert_eq!(Launch::new().watchdog_limit(), Some(Duration::from_secs(5)));
        assert_eq!(Launch::default().watchdog_limit(), Some(DEFAULT_WATCHDOG));
        assert_eq!(Launch::new().watchdog(None).watchdog_limit(), None);
    }

    #[test]
    fn a_launch_records_its_profile_choices() {
        let launch = Launch::new().profile(true).profile_phases(7);
        assert!(launch.records_profile());
        assert_eq!(launch.profile_capacity(), 7);
        assert_eq!(Launch::new().profile_capacity(), DEFAULT_PROFILE_PHASES);
    }
}
