//! The configurations open to a launch that leaves them to the runtime: the candidates the
//! tuner measures, the heuristic that stands in for tuning, and the contest between them.

use std::time::{Duration, Instant};

use std::sync::Arc;

use crate::barrier::{AutoTable, Barrier};
use crate::core::config::{ConfigChoice, LaunchConfig};
use crate::core::device::DeviceInfo;
use crate::core::kernel::KernelSpec;
use crate::core::launch::Launch;

/// How long the first launch of a kernel and size class may spend tuning, compilation
/// included; a candidate that would start past it is not measured.
pub const TUNING_BUDGET: Duration = Duration::from_secs(2);

/// The variable that switches tuning off for the process (`0`, `off`, `false` or `no`).
pub const TUNE_VAR: &str = "GSYNC_TUNE";

/// Block sizes the tuner tries for a kernel that fixes none, the heuristic's order.
const TUNED_THREADS: [u32; 4] = [1024, 512, 256, 128];

/// Blocks per SM the tuner tries, besides the largest co-resident grid.
const TUNED_BLOCKS_PER_SM: [u32; 4] = [1, 2, 4, 8];

/// Grids smaller than one block per SM the tuner tries last, as fractions of the SM count:
/// where phases do little work, the barrier's cost decides, and it is lowest on a few blocks
/// (LBS: 0.60 µs at 7–9 blocks against 0.89 µs at 132–264 on an H200, docs/results.md).
const TUNED_SM_DIVISORS: [u32; 2] = [4, 16];

/// Threads per SM the heuristic aims for: a block per SM of 1024 threads, four of 256. Fewer
/// blocks make every barrier cheaper (docs/results.md), and 1024 threads per SM keep enough
/// loads in flight for the phases' work.
const HEURISTIC_THREADS_PER_SM: u32 = 1024;

/// Whether a launch leaves its configuration to the runtime: it names neither grid nor block
/// size. A launch that names one keeps the other's default (the kernel's block size; the
/// largest co-resident grid), so that
/// [`Gpu::max_coresident_blocks`](crate::Gpu::max_coresident_blocks) describes it.
pub(crate) fn is_open(launch: &Launch) -> bool {
    launch.requested_blocks().is_none() && launch.requested_threads().is_none()
}

/// Whether a launch may tune: its own switch, and [`TUNE_VAR`] not saying `off`.
pub(crate) fn tuning_enabled(launch: &Launch) -> bool {
    launch.tunes() && !switched_off(std::env::var(TUNE_VAR).ok().as_deref())
}

/// Whether a value of [`TUNE_VAR`] switches tuning off.
fn switched_off(value: Option<&str>) -> bool {
    value.is_some_and(|value| matches!(value.trim().to_ascii_lowercase().as_str(), "0" | "off" | "false" | "no"))
}

/// The configurations open to a launch: what it fixes, and the GPU it runs on.
#[derive(Clone, Debug)]
pub(crate) struct ConfigSpace {
    /// The barrier asked for; [`Barrier::Auto`] resolves per grid.
    barrier: Barrier,
    sm_count: u32,
    /// The table Auto chooses from, for a launch that asks for Auto.
    auto: Option<Arc<AutoTable>>,
    max_threads_per_block: u32,
    /// The block size the kernel declares, if any.
    fixed_threads: Option<u32>,
    /// The block sizes the kernel's `BLOCK_SIZE` constants rule out.
    refused: &'static [crate::core::dims::RefusedBlockSizes],
}

impl ConfigSpace {
    /// The space of `launch` (with `kernel` as the launch configures it) on `info`'s GPU, whose
    /// Auto chooses from `auto` (asked only of a launch that asks for Auto); only a launch that
    /// names neither grid nor block size has one (see [`is_open`]).
    pub fn new(kernel: &KernelSpec, launch: &Launch, info: &DeviceInfo, auto: Option<Arc<AutoTable>>) -> ConfigSpace {
        ConfigSpace {
            barrier: launch.selected_barrier(),
            sm_count: info.sm_count.max(1),
            auto,
            max_threads_per_block: info.max_threads_per_block,
            fixed_threads: (kernel.default_threads != 0).then_some(kernel.default_threads),
            refused: kernel.refused_block_sizes,
        }
    }

    /// Block sizes to try, the heuristic's first. A kernel that declares its block size
    /// (`#[grid_phases(threads = N)]`) may rely on it, so only that one. Every size is at most
    /// the GPU's limit, and none is one the kernel's `BLOCK_SIZE` constants rule out (but a
    /// declared one, whose launch then says why it cannot run).
    pub fn thread_options(&self) -> Vec<u32> {
        let allowed = |threads: u32| !self.refused.iter().any(|r| (r.first..=r.last).contains(&threads));
        match self.fixed_threads {
            Some(threads) => vec![threads.min(self.max_threads_per_block)],
            None => TUNED_THREADS
                .into_iter()
                .filter(|&threads| threads <= self.max_threads_per_block && allowed(threads))
                .collect(),
        }
    }

    /// The heuristic's configuration for `threads` threads per block, of which `blocks_per_sm` are
    /// co-resident: about [`HEURISTIC_THREADS_PER_SM`] threads per SM; `None` when no block
    /// fits.
    pub fn heuristic(&self, threads: u32, blocks_per_sm: u32) -> Option<LaunchConfig> {
        if blocks_per_sm == 0 {
            return None;
        }
        let per_sm = (HEURISTIC_THREADS_PER_SM / threads.max(1)).clamp(1, blocks_per_sm);
        Some(self.config(threads, per_sm.saturating_mul(self.sm_count)))
    }

    /// Every candidate with `threads` threads per block, of which `blocks_per_sm` are
    /// co-resident: the heuristic's first, then 1, 2, 4, 8 blocks per SM, the largest
    /// co-resident grid, and a quarter and a sixteenth of the SM count, each within the
    /// barrier's own limit.
    pub fn candidates(&self, threads: u32, blocks_per_sm: u32) -> Vec<LaunchConfig> {
        let Some(first) = self.heuristic(threads, blocks_per_sm) else {
            return Vec::new();
        };
        let mut configs = vec![first];
        let per_sm = TUNED_BLOCKS_PER_SM.into_iter().filter(|&per_sm| per_sm < blocks_per_sm);
        let grids = per_sm.chain([blocks_per_sm]).map(|per_sm| per_sm.saturating_mul(self.sm_count));
        let small = TUNED_SM_DIVISORS.into_iter().map(|divisor| (self.sm_count / divisor).max(1));
        for blocks in grids.chain(small) {
            let config = self.config(threads, blocks);
            if !configs.contains(&config) {
                configs.push(config);
            }
        }
        configs
    }

    /// The configuration of `blocks` (capped at the barrier's limit) × `threads`, with the barrier
    /// resolved for that grid.
    fn config(&self, threads: u32, blocks: u32) -> LaunchConfig {
        let limit = (self.barrier.descriptor().max_blocks)(threads);
        let blocks = limit.map_or(blocks, |limit| blocks.min(limit));
        let barrier = match self.barrier {
            Barrier::Auto => {
                let table = self.auto.clone().unwrap_or_else(AutoTable::shared_hopper);
                table.choose(self.sm_count, blocks).barrier
            }
            barrier => barrier,
        };
        LaunchConfig { blocks, threads, barrier }
    }
}

/// The measurements of one tuning: the fastest configuration so far, and whether there is time for
/// another candidate.
#[derive(Debug)]
pub(crate) struct Contest {
    started: Instant,
    budget: Duration,
    best: Option<(LaunchConfig, Duration)>,
    measured: u32,
}

impl Contest {
    /// A contest that may run for `budget`.
    pub fn new(budget: Duration) -> Contest {
        Contest { started: Instant::now(), budget, best: None, measured: 0 }
    }

    /// Whether a candidate expected to take `expected` still fits the budget. The first always
    /// does: the launch needs a configuration.
    pub fn has_time_for(&self, expected: Duration) -> bool {
        self.measured == 0 || self.started.elapsed() + expected <= self.budget
    }

    /// Records that `config` ran in `time`.
    pub fn record(&mut self, config: LaunchConfig, time: Duration) {
        self.measured += 1;
        if self.best.is_none_or(|(_, best)| time < best) {
            self.best = Some((config, time));
        }
    }

    /// The fastest configuration, and how the choice was made; `None` when nothing was measured.
    pub fn winner(&self) -> Option<(LaunchConfig, ConfigChoice)> {
        let (config, _) = self.best?;
        Some((config, ConfigChoice::Tuned { candidates: self.measured, took: self.started.elapsed() }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::kernel::tests::SMOOTH;
    use crate::test_support::h200;

    fn space(launch: &Launch) -> ConfigSpace {
        ConfigSpace::new(
            &KernelSpec { default_threads: 0, ..SMOOTH },
            launch,
            &h200(),
            Some(Arc::new(AutoTable::hopper())),
        )
    }

    #[test]
    fn the_heuristic_aims_for_1024_threads_per_sm_with_auto_s_barrier() {
        let space = space(&Launch::new());
        assert_eq!(space.thread_options(), [1024, 512, 256, 128]);
        assert_eq!(space.heuristic(1024, 2), Some(LaunchConfig { blocks: 132, threads: 1024, barrier: Barrier::Lbs }));
        assert_eq!(space.heuristic(256, 8), Some(LaunchConfig { blocks: 528, threads: 256, barrier: Barrier::Lbs }));
        let capped = space.heuristic(128, 3).expect("a block fits");
        assert_eq!(capped.blocks, 396, "at most what is co-resident");
        assert_eq!(space.heuristic(1024, 0), None, "no block fits");
    }

    #[test]
    fn candidates_start_with_the_heuristic_and_end_with_the_co_resident_grid() {
        let space = space(&Launch::new());
        let blocks: Vec<u32> = space.candidates(256, 8).iter().map(|config| config.blocks).collect();
        assert_eq!(blocks, [528, 132, 264, 1056, 33, 8]);
        let configs = space.candidates(128, 16);
        let largest = configs.iter().max_by_key(|config| config.blocks).map(|config| (config.blocks, config.barrier));
        assert_eq!(largest, Some((2112, Barrier::Relay)), "Auto resolves per grid");
        assert!(configs.iter().all(|config| config.barrier != Barrier::Auto));
    }

    #[test]
    fn what_the_launch_or_kernel_fixes_stays_fixed() {
        assert!(is_open(&Launch::new().barrier(Barrier::Ulfs)));
        assert!(!is_open(&Launch::new().blocks(60)), "a grid keeps the kernel's block size");
        assert!(!is_open(&Launch::new().threads(64)), "a block size keeps the largest grid");
        let declared = ConfigSpace::new(
            &KernelSpec { default_threads: 128, ..SMOOTH },
            &Launch::new(),
            &h200(),
            Some(Arc::new(AutoTable::hopper())),
        );
        assert_eq!(declared.thread_options(), [128], "a declared block size may be relied on");
        let ulfs = space(&Launch::new().barrier(Barrier::Ulfs));
        assert!(ulfs.candidates(512, 4).iter().all(|config| config.barrier == Barrier::Ulfs));
    }

    #[test]
    fn a_barrier_s_own_limit_caps_the_candidates() {
        let lfs = space(&Launch::new().barrier(Barrier::Lfs));
        assert!(lfs.candidates(128, 16).iter().all(|config| config.blocks <= 128 && config.barrier == Barrier::Lfs));
    }

    #[test]
    fn the_contest_keeps_the_fastest_and_stops_at_the_budget() {
        let config = |blocks| LaunchConfig { blocks, threads: 256, barrier: Barrier::Lbs };
        let mut contest = Contest::new(Duration::from_secs(3600));
        contest.record(config(132), Duration::from_micros(30));
        contest.record(config(264), Duration::from_micros(20));
        contest.record(config(528), Duration::from_micros(20));
        assert!(contest.has_time_for(Duration::from_secs(1)));
        assert!(!contest.has_time_for(Duration::from_secs(3600)));
        let (winner, choice) = contest.winner().expect("measured");
        assert_eq!(winner, config(264), "ties keep the earlier config");
        assert!(matches!(choice, ConfigChoice::Tuned { candidates: 3, .. }));
        let mut spent = Contest::new(Duration::ZERO);
        assert!(spent.has_time_for(Duration::from_secs(10)), "the first candidate always runs");
        spent.record(config(132), Duration::from_micros(30));
        assert!(!spent.has_time_for(Duration::ZERO) || spent.started.elapsed().is_zero());
        assert!(Contest::new(Duration::ZERO).winner().is_none());
    }

    #[test]
    fn the_variable_switches_tuning_off() {
        for off in ["0", "off", "OFF", " false", "no"] {
            assert!(switched_off(Some(off)), "{off}");
        }
        for on in [None, Some("1"), Some("on"), Some("")] {
            assert!(!switched_off(on), "{on:?}");
        }
    }
}
