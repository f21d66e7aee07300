//! The checks of a split run ([`Barrier::MultiLaunch`]) that every backend makes the same way.

use crate::barrier::Barrier;
use crate::core::error::{Error, Result};
use crate::core::grid::{resolve_grid, CoResidency, Grid, Residency};
use crate::core::kernel::KernelSpec;
use crate::core::launch::Launch;
use crate::core::plan::KernelBuild;

/// Refuses a kernel that cannot be split, with the reason the macro gave, and a profiled
/// split run.
pub(crate) fn check_split(kernel: &KernelBuild) -> Result<()> {
    if kernel.profile {
        return Err(Error::InvalidBarrier {
            kernel: kernel.name.to_owned(),
            barrier: Barrier::MultiLaunch.to_string(),
            reason: "a profile records every block at each grid_sync() of the fused kernel, and a split run has \
                     none on the device (each segment is a launch of its own, timed by the report's gpu_time); \
                     profile the kernel under a device barrier"
                .to_owned(),
        });
    }
    if let Some(reason) = kernel.split.error {
        return Err(Error::CannotSplit { kernel: kernel.name.to_owned(), reason: reason.to_owned() });
    }
    if kernel.split.segments.is_empty() {
        return Err(no_segments(kernel));
    }
    Ok(())
}

/// The grid of a split run, on either backend: its segments wait for no block, so nothing
/// limits it to the co-resident grid. Also refuses a graph replay the kernel cannot have.
pub(crate) fn split_grid(kernel: &KernelSpec, launch: &Launch, threads: u32, residency: Residency) -> Result<Grid> {
    let grid =
        resolve_grid(kernel, Barrier::MultiLaunch, launch.requested_blocks(), threads, residency, CoResidency::Waived)?
            .shaped_by(launch);
    check_graph(kernel, launch)?;
    Ok(grid)
}

/// Refuses graph replay of host control flow that reads device memory.
pub(crate) fn check_graph(kernel: &KernelSpec, launch: &Launch) -> Result<()> {
    if launch.replays_graph() && kernel.split.reads_device {
        return Err(Error::InvalidBarrier {
            kernel: kernel.name.to_owned(),
            barrier: Barrier::MultiLaunch.to_string(),
            reason: "graph replay needs host control flow that reads no device memory, and this kernel's does; \
                     launch without Launch::graph"
                .to_owned(),
        });
    }
    Ok(())
}

/// `index` as a `usize`, if it is below `len`: a host read between launches is bounds-checked.
pub(crate) fn check_read(kernel: &KernelSpec, len: usize, index: u64, array: &str, line: u32) -> Result<usize> {
    match usize::try_from(index) {
        Ok(i) if i < len => Ok(i),
        _ => Err(Error::OutOfBounds {
            kernel: kernel.name.to_owned(),
            array: array.to_owned(),
            index,
            len: len as u64,
            line,
        }),
    }
}

/// The host code launched a segment the kernel does not have.
pub(crate) fn missing_segment(kernel: &KernelSpec, segment: usize, count: usize) -> Error {
    let reason = format!("it has no segment {segment} (it has {count}); this is a bug in gsync");
    Error::CannotSplit { kernel: kernel.name.to_owned(), reason }
}

pub(crate) fn no_segments(kernel: &KernelSpec) -> Error {
    Error::CannotSplit {
        kernel: kernel.name.to_owned(),
        reason: "it has no segment kernels; this is a bug in gsync".to_owned(),
    }
}
