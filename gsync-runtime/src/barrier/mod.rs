//! Grid barriers: how `grid_sync()` is implemented on the device.
//!
//! A barrier is data, not a branch in code generation: each one is a [`BarrierDescriptor`]
//! holding its CUDA fragment (one `.cuh` file next to this module, with its algorithm and its
//! memory-order argument) and the facts the launcher needs. Adding a barrier means adding a
//! variant, a fragment and a descriptor; nothing else changes.
//!
//! Every fragment defines the same three things, which the kernel body uses:
//!
//! ```c
//! struct gsync_barrier_t { ... };  // per-thread barrier context
//! gsync_barrier_t gsync_barrier_begin(unsigned int* gsync_barrier_state);  // first statement
//! void gsync_grid_sync(gsync_barrier_t& barrier, gsync_status_t* gsync_status);  // each grid_sync()
//! ```
//!
//! The software barriers (LBS, LFS, ILBS, ULFS, from the paper the crate follows, and Relay,
//! gsync's own) share `common.cuh`: the state layout, release/acquire helpers in PTX, and the
//! watchdog. Their state starts with a header line the host writes before each launch
//! (`layout.rs`). [`Barrier::Auto`] is not a fragment: each launch resolves it to the barrier
//! measured fastest for its grid (`auto.rs`).

mod auto;
mod layout;
mod name;

use std::time::Duration;

pub use auto::{AutoChoice, AutoSource, AutoTable};
pub use layout::RelayMode;
pub(crate) use layout::{default_ilbs_groups, limit_ns, LaunchHeader, LINE_WORDS, STATUS_WORD};
pub use name::ParseBarrierError;

/// Which grid barrier a kernel's `grid_sync()` calls use.
///
/// A launch names one with [`Launch::barrier`](crate::Launch::barrier); a kernel's source does
/// not change with it.
///
/// ```
/// use gsync_runtime::{Barrier, Launch, LaunchMode};
/// let launch = Launch::new().barrier(Barrier::Ilbs { groups: Some(4) });
/// assert_eq!(launch.selected_barrier(), Barrier::Ilbs { groups: Some(4) });
/// assert_eq!(Barrier::default(), Barrier::Auto);
/// assert_eq!(Barrier::MultiLaunch.descriptor().launch_mode, LaunchMode::Split);
/// assert!(Barrier::DEVICE.iter().all(|b| b.descriptor().launch_mode != LaunchMode::Split));
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Barrier {
    /// For each launch, the device barrier measured fastest on this kind of GPU for the
    /// launch's block size and grid; the [`LaunchReport`](crate::LaunchReport) names the one
    /// that ran. The default.
    #[default]
    Auto,
    /// CUDA's cooperative groups `grid.sync()`, with a cooperative launch.
    Cooperative,
    /// Lock-based: one atomic counter for the grid (Xiao & Feng; the paper's Algorithm 1).
    Lbs,
    /// Lock-free: a flag per block and a master block that gathers them (Algorithm 2); at most
    /// as many blocks as threads per block.
    Lfs,
    /// Improved lock-based: blocks count in groups, groups in a grid counter (Algorithm 3).
    Ilbs {
        /// Number of groups, 1 to the number of blocks; `None` for round(√blocks).
        groups: Option<u32>,
    },
    /// Unlimited lock-free: LFS on a tree with fan-out = block size, for any grid
    /// (Algorithm 4).
    Ulfs,
    /// gsync's own: one counter while the grid is small, arrivals spread over 32 counters and
    /// released per SM once it is large (see `RelayMode`).
    Relay,
    /// No device barrier: the kernel is split at every `grid_sync()` and each segment is a
    /// launch of its own (see [`Gpu::begin_split`](crate::Gpu::begin_split)).
    MultiLaunch,
}

impl Barrier {
    /// Every barrier this runtime implements (ILBS with its default group count), and Auto.
    pub const ALL: &'static [Barrier] = &[
        Barrier::Auto,
        Barrier::Cooperative,
        Barrier::Lbs,
        Barrier::Lfs,
        Barrier::Ilbs { groups: None },
        Barrier::Ulfs,
        Barrier::Relay,
        Barrier::MultiLaunch,
    ];

    /// The device barriers Auto chooses from: every fused barrier but Auto itself.
    pub const DEVICE: &'static [Barrier] = &[
        Barrier::Cooperative,
        Barrier::Lbs,
        Barrier::Lfs,
        Barrier::Ilbs { groups: None },
        Barrier::Ulfs,
        Barrier::Relay,
    ];

    /// What the runtime needs to know to compile and launch with this barrier.
    pub fn descriptor(&self) -> &'static BarrierDescriptor {
        match self {
            Barrier::Auto => &AUTO,
            Barrier::Cooperative => &COOPERATIVE,
            Barrier::Lbs => &LBS,
            Barrier::Lfs => &LFS,
            Barrier::Ilbs { .. } => &ILBS,
            Barrier::Ulfs => &ULFS,
            Barrier::Relay => &RELAY,
            Barrier::MultiLaunch => &MULTI_LAUNCH,
        }
    }

    /// The barrier's short name, as used in messages and generated source; without the ILBS
    /// group count, which `Display` adds.
    pub fn name(&self) -> &'static str {
        self.descriptor().name
    }

    /// ILBS's default group count for a grid of `blocks`: round(√blocks), at least 1, which
    /// minimises the ⌈N/g⌉ + g atomic additions of a barrier.
    pub fn default_ilbs_groups(blocks: u32) -> u32 {
        layout::default_ilbs_groups(blocks)
    }

    /// Levels of ULFS's tree for `blocks` blocks of `threads` threads, the root included:
    /// the paper's ⌈log_B N⌉ + 1 with B = `threads`, so 2 (plain LFS) up to B blocks, and 1
    /// for a single block, which waits for no one.
    pub fn ulfs_levels(blocks: u32, threads: u32) -> u32 {
        layout::ulfs_levels(blocks, threads).len() as u32 + 1
    }

    /// The ILBS group count for a grid of `blocks` blocks (0 for other barriers, which have
    /// none), or why the requested count cannot work.
    pub(crate) fn groups_for(&self, blocks: u32) -> Result<u32, String> {
        match *self {
            Barrier::Ilbs { groups: None } => Ok(default_ilbs_groups(blocks)),
            Barrier::Ilbs { groups: Some(groups) } if (1..=blocks).contains(&groups) => Ok(groups),
            Barrier::Ilbs { groups: Some(groups) } => Err(format!(
                "ILBS splits the {blocks} blocks into 1 to {blocks} groups, and {groups} is not in that range; \
                 pass a group count in it, or None for round(sqrt(blocks))"
            )),
            _ => Ok(0),
        }
    }

    /// The nanoseconds the device's watchdog waits for `limit`: 0 (off) for barriers without
    /// one and for `None`, at least 1 otherwise, so that a zero limit still times out.
    /// The barrier whose CUDA fragment a launch of `self` on `grid` runs: LBS's for Relay in
    /// direct mode (the same algorithm, and its own fragment keeps the path free of the
    /// per-SM code), `self` otherwise.
    pub(crate) fn compiled_for(&self, relay: RelayMode) -> Barrier {
        match (self, relay) {
            (Barrier::Relay, RelayMode::Direct) => Barrier::Lbs,
            _ => *self,
        }
    }

    pub(crate) fn watchdog_ns(&self, limit: Option<Duration>) -> u64 {
        match limit {
            Some(limit) if self.descriptor().watchdog => u64::try_from(limit.as_nanos()).unwrap_or(u64::MAX).max(1),
            _ => 0,
        }
    }
}

/// How the kernel must be launched for its barrier to be correct.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LaunchMode {
    /// `cuLaunchCooperativeKernel`: the driver guarantees that all blocks are co-resident.
    Cooperative,
    /// `cuLaunchKernel`: the runtime's co-residency check is the only guarantee.
    Ordinary,
    /// One `cuLaunchKernel` per segment of the split kernel; no grid needs to be co-resident.
    Split,
}

/// Everything the runtime knows about one barrier.
#[derive(Debug)]
pub struct BarrierDescriptor {
    /// Short name, e.g. `"cooperative"`.
    pub name: &'static str,
    /// How kernels using this barrier are launched.
    pub launch_mode: LaunchMode,
    /// CUDA text defining `gsync_barrier_t`, `gsync_barrier_begin` and `gsync_grid_sync`.
    pub cuda_fragment: &'static str,
    /// Device words of barrier state, the header line included, for a grid of
    /// `blocks` x `threads`.
    pub state_words: fn(blocks: u32, threads: u32) -> usize,
    /// The leading words the host rewrites before every launch: the header, then zeros for
    /// counters that only grow during a launch; for `blocks` blocks and `groups` ILBS groups.
    pub launch_words: fn(blocks: u32, groups: u32) -> usize,
    /// The algorithm's own limit on blocks for a block size; `None` when unlimited.
    pub max_blocks: fn(threads: u32) -> Option<u32>,
    /// Whether the fragment includes CUDA toolkit headers.
    pub needs_cuda_headers: bool,
    /// Whether a waiting block gives up after the launch's watchdog limit.
    pub watchdog: bool,
}

static AUTO: BarrierDescriptor = BarrierDescriptor {
    name: "auto",
    // Never launched as such: each launch resolves Auto to a device barrier first.
    launch_mode: LaunchMode::Ordinary,
    cuda_fragment: "",
    state_words: layout::header_only,
    launch_words: layout::header_only_per_launch,
    max_blocks: |_| None,
    needs_cuda_headers: false,
    watchdog: true,
};

static COOPERATIVE: BarrierDescriptor = BarrierDescriptor {
    name: "cooperative",
    launch_mode: LaunchMode::Cooperative,
    cuda_fragment: include_str!("cooperative.cuh"),
    state_words: layout::header_only,
    launch_words: layout::header_only_per_launch,
    max_blocks: |_| None,
    needs_cuda_headers: true,
    watchdog: false,
};

static LBS: BarrierDescriptor = BarrierDescriptor {
    name: "lbs",
    launch_mode: LaunchMode::Ordinary,
    cuda_fragment: concat!(include_str!("common.cuh"), include_str!("lbs.cuh")),
    state_words: layout::lbs_words,
    launch_words: layout::lbs_launch_words,
    max_blocks: |_| None,
    needs_cuda_headers: false,
    watchdog: true,
};

static LFS: BarrierDescriptor = BarrierDescriptor {
    name: "lfs",
    launch_mode: LaunchMode::Ordinary,
    cuda_fragment: concat!(include_str!("common.cuh"), include_str!("lfs.cuh")),
    state_words: layout::lfs_words,
    // The master block gathers with one thread per block.
    launch_words: layout::header_only_per_launch,
    max_blocks: Some,
    needs_cuda_headers: false,
    watchdog: true,
};

static ILBS: BarrierDescriptor = BarrierDescriptor {
    name: "ilbs",
    launch_mode: LaunchMode::Ordinary,
    cuda_fragment: concat!(include_str!("common.cuh"), include_str!("ilbs.cuh")),
    state_words: layout::ilbs_words,
    launch_words: layout::ilbs_launch_words,
    max_blocks: |_| None,
    needs_cuda_headers: false,
    watchdog: true,
};

static ULFS: BarrierDescriptor = BarrierDescriptor {
    name: "ulfs",
    launch_mode: LaunchMode::Ordinary,
    cuda_fragment: concat!(include_str!("common.cuh"), include_str!("ulfs.cuh")),
    state_words: layout::ulfs_words,
    launch_words: layout::header_only_per_launch,
    max_blocks: |_| None,
    needs_cuda_headers: false,
    watchdog: true,
};

static RELAY: BarrierDescriptor = BarrierDescriptor {
    name: "relay",
    launch_mode: LaunchMode::Ordinary,
    cuda_fragment: concat!(include_str!("common.cuh"), include_str!("relay.cuh")),
    state_words: layout::relay_words,
    launch_words: layout::relay_launch_words,
    max_blocks: |_| None,
    needs_cuda_headers: false,
    watchdog: true,
};

static MULTI_LAUNCH: BarrierDescriptor = BarrierDescriptor {
    name: "multi-launch",
    launch_mode: LaunchMode::Split,
    cuda_fragment: include_str!("multi_launch.cuh"),
    state_words: layout::header_only,
    launch_words: layout::header_only_per_launch,
    max_blocks: |_| None,
    needs_cuda_headers: false,
    watchdog: false,
};

#[cfg(test)]
mod tests {
    use super::*;

    const BEGIN: &str = "gsync_barrier_t gsync_barrier_begin(unsigned int* gsync_barrier_state)";
    const GRID_SYNC: &str = "void gsync_grid_sync(gsync_barrier_t& barrier, gsync_status_t* gsync_status)";

    #[test]
    fn the_public_barrier_arithmetic_follows_the_paper() {
        assert_eq!([1, 2, 100, 1056].map(Barrier::default_ilbs_groups), [1, 1, 10, 32]);
        assert_eq!(Barrier::ulfs_levels(1, 32), 1);
        assert_eq!(Barrier::ulfs_levels(32, 32), 2, "plain LFS up to the block size");
        assert_eq!(Barrier::ulfs_levels(33, 32), 3);
        assert_eq!(Barrier::ulfs_levels(1024, 32), 3);
        assert_eq!(Barrier::ulfs_levels(1025, 32), 4);
    }

    #[test]
    fn relay_runs_lbs_s_fragment_in_direct_mode_only() {
        assert_eq!(Barrier::Relay.compiled_for(RelayMode::Direct), Barrier::Lbs);
        assert_eq!(Barrier::Relay.compiled_for(RelayMode::PerSm), Barrier::Relay);
        for &barrier in Barrier::ALL.iter().filter(|&&barrier| barrier != Barrier::Relay) {
            assert_eq!(barrier.compiled_for(RelayMode::Direct), barrier);
        }
    }

    #[test]
    fn every_device_barrier_defines_the_fragment_contract() {
        for barrier in Barrier::ALL.iter().filter(|&&barrier| barrier != Barrier::Auto) {
            let fragment = barrier.descriptor().cuda_fragment;
            assert!(fragment.contains("struct gsync_barrier_t"), "barrier {barrier} lacks gsync_barrier_t");
            assert!(fragment.contains(BEGIN), "barrier {barrier} lacks gsync_barrier_begin");
            let defines_grid_sync = fragment.contains(GRID_SYNC);
            assert_eq!(defines_grid_sync, *barrier != Barrier::MultiLaunch, "barrier {barrier} and gsync_grid_sync");
        }
    }

    #[test]
    fn auto_is_the_default_and_has_no_code_of_its_own() {
        assert_eq!(Barrier::default(), Barrier::Auto);
        assert_eq!(Barrier::Auto.descriptor().cuda_fragment, "");
        assert!(!Barrier::DEVICE.contains(&Barrier::Auto) && !Barrier::DEVICE.contains(&Barrier::MultiLaunch));
    }

    #[test]
    fn cooperative_needs_a_cooperative_launch() {
        let descriptor = Barrier::Cooperative.descriptor();
        assert_eq!(descriptor.name, "cooperative");
        assert_eq!(descriptor.launch_mode, LaunchMode::Cooperative);
        assert!(descriptor.cuda_fragment.contains("#include <cooperative_groups.h>"));
        assert_eq!((descriptor.max_blocks)(1024), None);
        assert!(!descriptor.watchdog, "the driver's barrier cannot time out");
    }

    #[test]
    fn software_barriers_share_the_common_code_and_launch_ordinarily() {
        let common = include_str!("common.cuh");
        for barrier in [Barrier::Lbs, Barrier::Lfs, Barrier::Ilbs { groups: None }, Barrier::Ulfs, Barrier::Relay] {
            let descriptor = barrier.descriptor();
            assert!(descriptor.cuda_fragment.starts_with(common), "{barrier}");
            assert_eq!(descriptor.launch_mode, LaunchMode::Ordinary, "{barrier}");
            assert!(descriptor.watchdog && !descriptor.needs_cuda_headers, "{barrier}");
        }
        assert_eq!(Barrier::MultiLaunch.descriptor().launch_mode, LaunchMode::Split);
    }

    #[test]
    fn only_lfs_limits_blocks_to_the_block_size() {
        for barrier in Barrier::ALL {
            let limit = (barrier.descriptor().max_blocks)(256);
            assert_eq!(limit, (*barrier == Barrier::Lfs).then_some(256), "{barrier}");
        }
    }

    #[test]
    fn every_state_holds_at_least_the_header_and_the_words_zeroed_per_launch() {
        for barrier in Barrier::ALL {
            let descriptor = barrier.descriptor();
            for (blocks, threads) in [(1, 1), (7, 32), (264, 1024), (4224, 32)] {
                let state = (descriptor.state_words)(blocks, threads);
                let groups = barrier.groups_for(blocks).unwrap_or(0);
                let per_launch = (descriptor.launch_words)(blocks, groups);
                assert!(state >= LINE_WORDS && per_launch >= LINE_WORDS, "{barrier}");
                assert!(per_launch <= state, "{barrier} {blocks}x{threads}: {per_launch} > {state}");
            }
        }
    }

    #[test]
    fn ilbs_accepts_1_to_n_groups_and_defaults_to_the_square_root() {
        assert_eq!(Barrier::Ilbs { groups: None }.groups_for(100), Ok(10));
        assert_eq!(Barrier::Ilbs { groups: Some(1) }.groups_for(100), Ok(1));
        assert_eq!(Barrier::Ilbs { groups: Some(100) }.groups_for(100), Ok(100));
        for groups in [0, 101] {
            let reason = Barrier::Ilbs { groups: Some(groups) }.groups_for(100).expect_err("out of range");
            assert!(reason.contains("1 to 100 groups, and") && reason.contains(&groups.to_string()), "{reason}");
        }
        assert_eq!(Barrier::Lbs.groups_for(100), Ok(0));
    }

    #[test]
    fn the_watchdog_limit_reaches_only_barriers_that_have_one() {
        let limit = Some(Duration::from_millis(1500));
        assert_eq!(Barrier::Lbs.watchdog_ns(limit), 1_500_000_000);
        assert_eq!(Barrier::Lbs.watchdog_ns(None), 0);
        assert_eq!(Barrier::Ulfs.watchdog_ns(Some(Duration::ZERO)), 1, "zero still times out");
        assert_eq!(Barrier::Ulfs.watchdog_ns(Some(Duration::MAX)), u64::MAX);
        assert_eq!(Barrier::Cooperative.watchdog_ns(limit), 0);
        assert_eq!(Barrier::MultiLaunch.watchdog_ns(limit), 0);
    }
}
