//! A launch's configuration — blocks × threads × barrier —, how it was chosen, and the size
//! class a configuration is tuned for.

use std::fmt;
use std::time::Duration;

use crate::barrier::Barrier;

/// Blocks × threads × barrier: what a launch's speed depends on, apart from the kernel.
///
/// ```
/// use gsync_runtime::{Barrier, Launch, LaunchConfig};
/// let config = LaunchConfig { blocks: 132, threads: 1024, barrier: Barrier::Lbs };
/// assert_eq!(config.to_string(), "132 × 1024, lbs");
/// let launch = Launch::new().config(config);
/// assert_eq!((launch.requested_blocks(), launch.requested_threads()), (Some(132), Some(1024)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Blocks in the grid.
    pub blocks: u32,
    /// Threads per block.
    pub threads: u32,
    /// The barrier between phases, resolved ([`Barrier::Auto`] never appears here).
    pub barrier: Barrier,
}

impl fmt::Display for LaunchConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} × {}, {}", self.blocks, self.threads, self.barrier)
    }
}

/// How the configuration of a launch was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigChoice {
    /// The launch named both the grid and the block size.
    Requested,
    /// The backend's default for what the launch did not name, which no tuning applies to: a
    /// launch that names only its grid or only its block size, the emulator's grid, a split
    /// run's (the largest grid resident in every segment), or an oversubscribed launch's.
    Default,
    /// The heuristic, with tuning off ([`Launch::tune`](crate::Launch::tune), or
    /// `GSYNC_TUNE=off`), or when a candidate's kernel faulted or timed out while tuning (the
    /// launch then reports its own error as it would untuned): about 1024 threads per SM, with
    /// the largest of 1024, 512, 256 and 128 threads per block that the kernel fits, unless
    /// the kernel declares its block size.
    Heuristic,
    /// Measured by this launch: the fastest of `candidates` configurations, run on copies
    /// of the buffers the kernel writes, in `took` (compilation included).
    Tuned {
        /// Candidate configurations measured.
        candidates: u32,
        /// Wall time of the tuning, from the first compilation to the last measurement.
        took: Duration,
    },
    /// Chosen before, for the same kernel, GPU, launch and size class: tuned (remembered in
    /// this process or in the on-disk cache beside the compiled kernels), or answered by
    /// [`Gpu::launch_config`](crate::Gpu::launch_config), which fixes its answer.
    Remembered,
}

/// The size class of a launch, ⌈log₂⌉ of its longest buffer's length: a configuration is
/// tuned and remembered once per class.
///
/// ```
/// use gsync_runtime::SizeClass;
/// assert_eq!(SizeClass::of(1 << 20), SizeClass::of((1 << 19) + 1));
/// assert_ne!(SizeClass::of(1 << 20), SizeClass::of((1 << 20) + 1));
/// assert_eq!(SizeClass::of(1000).log2(), 10);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SizeClass(u32);

impl SizeClass {
    /// The class of a launch whose longest buffer has `len` elements.
    pub fn of(len: usize) -> SizeClass {
        SizeClass(len.max(1).next_power_of_two().trailing_zeros())
    }

    /// ⌈log₂⌉ of the longest buffer's length; buffers of up to `2^log2()` elements share it.
    pub fn log2(self) -> u32 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_classes_round_up_to_powers_of_two() {
        assert_eq!(SizeClass::of(0).log2(), 0);
        assert_eq!(SizeClass::of(1).log2(), 0);
        assert_eq!(SizeClass::of(3).log2(), 2);
        assert_eq!(SizeClass::of(1 << 24).log2(), 24);
    }
}
