//! Choosing and checking a launch's grid before anything runs: the co-residency check that
//! makes device barriers safe, and each barrier's own limits.

use std::sync::Arc;

use crate::barrier::{AutoChoice, AutoTable, Barrier};
use crate::core::device::DeviceInfo;
use crate::core::dims::Dim3;
use crate::core::error::{Error, Result};
use crate::core::kernel::KernelSpec;
use crate::core::launch::Launch;
use crate::core::shape_check::{check_block_size, check_shape};

/// How many blocks of a kernel fit on the GPU at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Residency {
    /// Co-resident blocks per SM for the compiled kernel and block size.
    pub blocks_per_sm: u32,
    /// The GPU's SM count.
    pub sm_count: u32,
}

impl Residency {
    /// The largest co-resident grid.
    pub fn max_blocks(self) -> u32 {
        self.blocks_per_sm.saturating_mul(self.sm_count)
    }
}

/// Whether a grid larger than can be co-resident is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoResidency {
    /// Refused with [`Error::GridTooLarge`]: a device barrier would wait for blocks that
    /// cannot be scheduled until it lets others finish.
    Required,
    /// Allowed: for split kernels, whose launches wait for no block, and for tests of the
    /// watchdog.
    Waived,
}

/// A grid with every value resolved and checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Grid {
    /// Blocks to launch.
    pub blocks: u32,
    /// Threads per block.
    pub threads: u32,
    /// ILBS group count; 0 for other barriers.
    pub groups: u32,
    /// The grid's extent per axis: `blocks` blocks in all.
    pub grid_shape: Dim3,
    /// The block's extent per axis: `threads` threads in all.
    pub block_shape: Dim3,
}

impl Grid {
    /// A one-dimensional grid of `blocks` blocks of `threads` threads.
    pub const fn linear(blocks: u32, threads: u32, groups: u32) -> Grid {
        Grid { blocks, threads, groups, grid_shape: Dim3::linear(blocks), block_shape: Dim3::linear(threads) }
    }

    /// This grid with the shapes `launch` names, where they have its block and thread counts.
    pub fn shaped_by(self, launch: &Launch) -> Grid {
        Grid {
            grid_shape: launch.grid_shape_for(self.blocks),
            block_shape: launch.block_shape_for(self.threads),
            ..self
        }
    }
}

/// The barrier a launch uses: `barrier` itself, or for [`Barrier::Auto`] the barrier the table
/// (asked of `table` only then) names for a grid of `blocks` on `info`'s GPU (`blocks`: the
/// requested grid, or the default one, asked of `default_blocks` only then), with the row that
/// chose it.
pub(crate) fn resolve_barrier(
    barrier: Barrier,
    info: &DeviceInfo,
    table: impl FnOnce() -> Result<Arc<AutoTable>>,
    requested_blocks: Option<u32>,
    default_blocks: impl FnOnce() -> Result<u32>,
) -> Result<(Barrier, Option<AutoChoice>)> {
    if barrier != Barrier::Auto {
        return Ok((barrier, None));
    }
    let blocks = match requested_blocks {
        Some(blocks) => blocks,
        None => default_blocks()?,
    };
    let choice = table()?.choose(info.sm_count, blocks);
    Ok((choice.barrier, Some(choice)))
}

/// Decides the grid of a launch: the requested blocks, else the largest grid both the GPU and
/// the barrier allow, checked against both.
pub(crate) fn resolve_grid(
    kernel: &KernelSpec,
    barrier: Barrier,
    requested_blocks: Option<u32>,
    threads: u32,
    residency: Residency,
    co_residency: CoResidency,
) -> Result<Grid> {
    let descriptor = barrier.descriptor();
    let resident = residency.max_blocks();
    let barrier_max = (descriptor.max_blocks)(threads);
    let default_blocks = barrier_max.map_or(resident, |max| max.min(resident)).max(1);
    let blocks = requested_blocks.unwrap_or(default_blocks);
    if blocks == 0 {
        return Err(Error::EmptyGrid { kernel: kernel.name.to_owned() });
    }
    if co_residency == CoResidency::Required && blocks > resident {
        return Err(Error::GridTooLarge {
            kernel: kernel.name.to_owned(),
            requested: blocks,
            max: resident,
            blocks_per_sm: residency.blocks_per_sm,
            sm_count: residency.sm_count,
            threads,
        });
    }
    if let Some(max) = barrier_max.filter(|&max| blocks > max) {
        return Err(Error::BarrierBlockLimit {
            kernel: kernel.name.to_owned(),
            barrier: descriptor.name,
            requested: blocks,
            max,
        });
    }
    let groups = barrier.groups_for(blocks).map_err(|reason| Error::InvalidBarrier {
        kernel: kernel.name.to_owned(),
        barrier: barrier.to_string(),
        reason,
    })?;
    Ok(Grid::linear(blocks, threads, groups))
}

/// Refuses a grid of more blocks than the device launches at all: `max` at this block size,
/// on `device` (e.g. "GPU `NVIDIA H100`"), for the reason `why`. Checked before anything is
/// allocated for the grid.
pub(crate) fn check_block_limit(
    kernel: &KernelSpec,
    grid: Grid,
    max: u32,
    device_and_why: impl FnOnce() -> (String, String),
) -> Result<()> {
    if grid.blocks <= max {
        return Ok(());
    }
    let (device, why) = device_and_why();
    Err(Error::TooManyBlocks {
        kernel: kernel.name.to_owned(),
        requested: grid.blocks,
        threads: grid.threads,
        max,
        device,
        why,
    })
}

/// Refuses a kernel that needs more shared memory per block (`bytes`: static plus dynamic)
/// than the GPU gives a block (`max`).
pub(crate) fn check_shared_memory(kernel: &KernelSpec, info: &DeviceInfo, bytes: u64) -> Result<()> {
    let max = u64::from(info.max_shared_memory_per_block);
    if bytes <= max {
        return Ok(());
    }
    Err(Error::SharedMemoryLimit { kernel: kernel.name.to_owned(), bytes, max, gpu: info.name.clone() })
}

/// The block size of a launch, checked against the device's limit.
pub(crate) fn checked_threads(info: &DeviceInfo, kernel: &KernelSpec, launch: &Launch) -> Result<u32> {
    let max = info.max_threads_per_block;
    check_shape(kernel, launch, max)?;
    let threads = launch.threads_for(kernel);
    if (1..=max).contains(&threads) {
        check_block_size(kernel, threads)?;
        Ok(threads)
    } else {
        Err(Error::InvalidBlockSize { kernel: kernel.name.to_owned(), threads, max })
    }
}

/// Dynamic shared memory per block: generated kernels declare all theirs statically.
pub(crate) const DYNAMIC_SHARED_BYTES: u32 = 0;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::kernel::tests::SMOOTH;
    use crate::test_support::h200;

    /// An H100-like GPU running 2 blocks per SM.
    const H100: Residency = Residency { blocks_per_sm: 2, sm_count: 132 };

    fn grid(barrier: Barrier, blocks: Option<u32>, threads: u32) -> Result<Grid> {
        resolve_grid(&SMOOTH, barrier, blocks, threads, H100, CoResidency::Required)
    }

    #[test]
    fn auto_resolves_by_the_grid_and_asks_for_the_default_grid_only_without_one() {
        let info = h200();
        let table = || Ok(AutoTable::shared_hopper());
        let never = || -> Result<u32> { panic!("the grid was given") };
        let resolve = |barrier, blocks, default: &dyn Fn() -> Result<u32>| {
            resolve_barrier(barrier, &info, table, blocks, default).ok().map(|(barrier, _)| barrier)
        };
        assert_eq!(resolve(Barrier::Auto, Some(60), &never), Some(Barrier::Lbs));
        assert_eq!(resolve(Barrier::Auto, Some(800), &never), Some(Barrier::Ilbs { groups: None }));
        assert_eq!(resolve(Barrier::Auto, None, &|| Ok(4224)), Some(Barrier::Relay));
        assert_eq!(resolve(Barrier::Lfs, None, &never), Some(Barrier::Lfs), "a chosen barrier stays");
        let (_, why) = resolve_barrier(Barrier::Auto, &info, table, Some(60), never).expect("chosen");
        assert_eq!(why.map(|choice| choice.up_to_blocks_per_sm), Some(4), "the row that chose it");
        let (_, why) =
            resolve_barrier(Barrier::Lbs, &info, || panic!("a named barrier needs no table"), Some(60), never)
                .expect("named");
        assert!(why.is_none(), "a named barrier has no Auto reason");
        let failed =
            resolve_barrier(Barrier::Auto, &info, table, None, || Err(Error::EmptyGrid { kernel: "k".into() }));
        assert!(matches!(failed, Err(Error::EmptyGrid { .. })));
    }

    #[test]
    fn residency_multiplies_without_overflow() {
        let residency = Residency { blocks_per_sm: u32::MAX, sm_count: 2 };
        assert_eq!(residency.max_blocks(), u32::MAX);
    }

    #[test]
    fn the_default_grid_is_the_largest_co_resident_one() {
        let resolved = grid(Barrier::Lbs, None, 256).expect("valid");
        assert_eq!(resolved, Grid::linear(264, 256, 0));
    }

    #[test]
    fn lfs_defaults_to_at_most_one_block_per_thread_and_refuses_more() {
        assert_eq!(grid(Barrier::Lfs, None, 128).map(|grid| grid.blocks).ok(), Some(128));
        assert_eq!(grid(Barrier::Lfs, Some(128), 128).map(|grid| grid.blocks).ok(), Some(128));
        let error = grid(Barrier::Lfs, Some(129), 128).expect_err("over the limit");
        assert!(matches!(error, Error::BarrierBlockLimit { barrier: "lfs", requested: 129, max: 128, .. }), "{error}");
        assert_eq!(grid(Barrier::Ulfs, Some(264), 128).map(|grid| grid.blocks).ok(), Some(264));
    }

    #[test]
    fn too_large_grids_are_refused_unless_co_residency_is_waived() {
        let error = grid(Barrier::Ulfs, Some(265), 256).expect_err("not co-resident");
        assert!(matches!(error, Error::GridTooLarge { requested: 265, max: 264, .. }), "{error}");
        let waived = resolve_grid(&SMOOTH, Barrier::Ulfs, Some(10_000), 256, H100, CoResidency::Waived);
        assert_eq!(waived.map(|grid| grid.blocks).ok(), Some(10_000));
    }

    #[test]
    fn a_grid_beyond_the_device_s_block_limit_is_refused_stating_it() {
        let grid = Grid::linear(u32::MAX, 256, 0);
        let why = || ("GPU `H100`".to_owned(), "its largest gridDim.x".to_owned());
        let error = check_block_limit(&SMOOTH, grid, i32::MAX as u32, why).expect_err("over the limit");
        assert!(
            matches!(&error, Error::TooManyBlocks { requested: u32::MAX, threads: 256, max: 2_147_483_647, .. }),
            "{error}"
        );
        let message = error.to_string();
        assert!(message.contains("GPU `H100` launches at most 2147483647 blocks"), "{message}");
        assert!(message.contains("launch at most 2147483647 blocks"), "{message}");
        let fits = Grid::linear(2_147_483_647, 256, 0);
        assert!(check_block_limit(&SMOOTH, fits, i32::MAX as u32, || unreachable!()).is_ok());
    }

    #[test]
    fn shared_memory_beyond_the_per_block_limit_is_refused_with_both_numbers() {
        let info = h200();
        assert!(check_shared_memory(&SMOOTH, &info, 48 * 1024).is_ok());
        let error = check_shared_memory(&SMOOTH, &info, 64 * 1024).expect_err("too much");
        assert!(matches!(error, Error::SharedMemoryLimit { bytes: 65536, max: 49152, .. }), "{error}");
        let message = error.to_string();
        assert!(message.contains("needs 65536 bytes") && message.contains("at most 49152 bytes"), "{message}");
        assert!(message.contains("make the kernel's shared arrays smaller"), "{message}");
    }

    #[test]
    fn an_empty_grid_is_refused() {
        let error = grid(Barrier::Cooperative, Some(0), 256).expect_err("no blocks");
        assert!(matches!(error, Error::EmptyGrid { .. }), "{error}");
    }

    #[test]
    fn ilbs_group_counts_outside_1_to_n_are_invalid_before_launch() {
        assert_eq!(grid(Barrier::Ilbs { groups: None }, Some(100), 256).map(|grid| grid.groups).ok(), Some(10));
        assert_eq!(grid(Barrier::Ilbs { groups: Some(7) }, Some(100), 256).map(|grid| grid.groups).ok(), Some(7));
        for groups in [0, 101] {
            let error = grid(Barrier::Ilbs { groups: Some(groups) }, Some(100), 256).expect_err("invalid");
            let Error::InvalidBarrier { kernel, barrier, reason } = &error else {
                panic!("expected InvalidBarrier, got {error}");
            };
            assert_eq!((kernel.as_str(), barrier.as_str()), ("smooth", format!("ilbs:{groups}").as_str()));
            assert!(reason.contains("1 to 100 groups"), "{reason}");
        }
    }
}
