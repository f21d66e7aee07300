//! What a launch plan asks of the device it runs on. Each backend implements [`Device`] once;
//! the order in which a launch's defaults are resolved lives in `resolve`, not in a backend.

use std::sync::Arc;
use std::time::Duration;

use crate::barrier::AutoTable;
use crate::core::args::KernelArgs;
use crate::core::config_cache::ConfigCache;
use crate::core::device::DeviceInfo;
use crate::core::dynamic_shared::SharedLayout;
use crate::core::error::Result;
use crate::core::grid::Residency;
use crate::core::plan::build::KernelVariant;
use crate::core::plan::launch_plan::LaunchPlan;

/// A device as the launch plan sees it: its facts, how many blocks of a compiled kernel it
/// holds at once, and, where launches are tuned, a place to remember configurations and a way
/// to measure one.
pub(crate) trait Device {
    /// What the device is and what it can do.
    fn info(&self) -> &DeviceInfo;

    /// How many blocks of `variant`, with the shared slices `shared`, fit on the device at
    /// once, after checking that one block fits at all (its shared memory). A backend may
    /// compile and load the variant to answer, and lets it use the slices' bytes.
    fn residency(&self, variant: &KernelVariant, shared: &SharedLayout) -> Result<Residency>;

    /// Whether every grid within the block limit runs at once, with one grid barrier whatever
    /// the barrier (the emulator): co-residency is never refused, the largest co-resident grid
    /// is the block limit, [`residency`](Self::residency) is only the default grid, and a
    /// split barrier's kernel may also run fused.
    fn runs_every_grid(&self) -> bool {
        false
    }

    /// The table [`Barrier::Auto`](crate::Barrier::Auto) chooses from: by default Hopper's
    /// (a backend without one of its own, the emulator, borrows it).
    fn auto_table(&self) -> Result<Arc<AutoTable>> {
        Ok(AutoTable::shared_hopper())
    }

    /// The most blocks one grid of `threads` threads per block may have.
    fn block_limit(&self, threads: u32) -> u32;

    /// The device and the reason of its block limit, for
    /// [`Error::TooManyBlocks`](crate::Error::TooManyBlocks), e.g. ("GPU `H100`", "the
    /// largest gridDim.x the driver reports").
    fn block_limit_reason(&self) -> (String, String);

    /// The configurations tuned for this device, in memory and on disk; `None` where launches
    /// are never tuned (the host's timing says nothing about a GPU's).
    fn tuned(&self) -> Option<&ConfigCache> {
        None
    }

    /// The compiler and driver that decide a compiled kernel's registers, which key the
    /// tuned configurations.
    fn toolchain(&self) -> Result<&'static str> {
        Ok("")
    }

    /// A way to measure plans of one call on copies of the buffers it writes (the tuner's
    /// hook); `None` when there is no memory for the copies or nothing measures here.
    ///
    /// # Safety
    /// `args` must match the C parameters of the kernel of every plan measured with it, and
    /// name every buffer the kernel writes with [`KernelArgs::slice_mut`].
    unsafe fn measurer<'s>(&'s self, args: &'s KernelArgs<'s>) -> Result<Option<Box<dyn Measure + 's>>> {
        let _ = args;
        Ok(None)
    }
}

/// Runs plans of one call on copies of its buffers, and times them.
pub(crate) trait Measure {
    /// The kernel's time under `plan`, on the copies, restored from the caller's buffers
    /// before each run.
    ///
    /// # Safety
    /// `plan` must be of the kernel the measurer's arguments were made for.
    unsafe fn measure(&mut self, plan: &LaunchPlan) -> Result<Duration>;
}
