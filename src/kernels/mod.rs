//! Ready-made kernels: the ones the examples run, kept in the library so
//! that tests check exactly the code the examples launch.

pub mod bitonic;
pub mod heat;
mod phases;
pub mod scan;
pub mod smith_waterman;
mod smoothing;

pub use phases::empty_phases;
pub use smoothing::{smooth, smooth_reference};

use crate::{Gpu, KernelSpec, Launch, Result};

/// `launch` as it is if it names a grid; otherwise with one block per unit of
/// parallel work (`work`), capped at the co-resident grid and at the
/// barrier's own limit: more blocks would only wait at the barriers.
fn grid_for_work(gpu: &Gpu, launch: &Launch, kernel: &KernelSpec, work: usize) -> Result<Launch> {
    if launch.requested_blocks().is_some() {
        return Ok(launch.clone());
    }
    let resident = gpu.max_coresident_blocks(kernel, launch)?;
    let barrier_limit = (launch.selected_barrier().descriptor().max_blocks)(launch.threads_for(kernel));
    let work = u32::try_from(work.max(1)).unwrap_or(u32::MAX);
    Ok(launch.clone().blocks(work.min(resident).min(barrier_limit.unwrap_or(u32::MAX))))
}
