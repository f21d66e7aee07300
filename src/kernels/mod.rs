//! Ready-made kernels: the ones the examples run, kept in the library so
//! that tests check exactly the code the examples launch.

pub mod bitonic;
pub mod cg_team;
pub mod heat;
pub mod heat_team;
pub mod onesweep;
mod phases;
pub mod radix;
pub mod scan;
pub mod smith_waterman;
mod smoothing;
mod sorting;

pub use bitonic::Sorted;
pub use phases::empty_phases;
pub use smoothing::{smooth, smooth_reference};
pub use sorting::{
    radix_from, sort, sort_pairs, sort_with, OrderedKey, SortKernel, SortWord, RADIX_KEYS_FROM, RADIX_PAIRS_FROM,
};

use crate::{Gpu, KernelSpec, Launch, LaunchConfig, Result};

/// `launch` as it is if it names a grid; otherwise with one block per unit of
/// parallel work (`work`), capped at the co-resident grid and at the barrier's own limit:
/// more blocks would only wait at the barriers.
///
/// `Barrier::Auto` picks its barrier by the grid's size, and barriers differ in how many
/// blocks fit: the smaller grid keeps Auto's choice only where that choice fits it, and
/// otherwise runs the barrier chosen for the largest grid.
fn grid_for_work(gpu: &Gpu, launch: &Launch, kernel: &KernelSpec, work: usize) -> Result<Launch> {
    grid_for_work_with(launch, kernel, work, |shape| gpu.launch_config(kernel, shape, 0))
}

/// [`grid_for_work`] for a kernel whose configuration `config` gives (with the shared slices of
/// the call, where it has any).
fn grid_for_work_with(
    launch: &Launch,
    kernel: &KernelSpec,
    work: usize,
    config: impl Fn(&Launch) -> Result<LaunchConfig>,
) -> Result<Launch> {
    if launch.requested_blocks().is_some() {
        return Ok(launch.clone());
    }
    // The callers size their work by this block size; naming it also keeps the configuration query
    // from tuning, so no buffer length (size class) enters it.
    let launch = launch.clone().threads(launch.threads_for(kernel));
    let largest = config(&launch)?;
    let blocks = u32::try_from(work.max(1)).unwrap_or(u32::MAX).min(largest.blocks);
    let shaped = launch.blocks(blocks);
    if config(&shaped).is_ok() {
        return Ok(shaped);
    }
    Ok(shaped.barrier(largest.barrier))
}
