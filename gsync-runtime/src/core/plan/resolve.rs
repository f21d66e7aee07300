//! The one order in which a launch is resolved, for every backend: threads → shared layout →
//! barrier → compiled variant → occupancy → grid → block limit → Relay's variant.

use crate::barrier::{Barrier, LaunchMode, RelayMode};
use crate::core::config::ConfigChoice;
use crate::core::dynamic_shared::{DynamicShared, SharedLayout};
use crate::core::error::{Error, Result};
use crate::core::grid::{check_block_limit, checked_threads, resolve_barrier, resolve_grid, CoResidency};
use crate::core::kernel::KernelSpec;
use crate::core::launch::Launch;
use crate::core::plan::build::KernelBuild;
use crate::core::plan::device::Device;
use crate::core::plan::launch_plan::LaunchPlan;
use crate::core::split::{check_split, split_grid};

/// The plan of one fused launch of `spec` with `launch` on `device`, whose configuration was
/// chosen as `choice`: the grid `launch` names or the largest the device and barrier allow,
/// refused where it cannot be co-resident unless `co_residency` waives it.
pub(crate) fn fused(
    device: &dyn Device,
    spec: &KernelSpec,
    launch: &Launch,
    shared: &DynamicShared,
    co_residency: CoResidency,
    choice: ConfigChoice,
) -> Result<LaunchPlan> {
    let co_residency = if device.runs_every_grid() { CoResidency::Waived } else { co_residency };
    let info = device.info();
    let kernel = KernelBuild::new(spec, launch);
    let threads = checked_threads(info, &kernel, launch)?;
    let layout = shared.layout(&kernel, threads)?;
    let barrier = barrier(device, &kernel, launch, launch.requested_blocks(), threads, &layout)?;
    let descriptor = barrier.descriptor();
    match descriptor.launch_mode {
        LaunchMode::Cooperative if !info.cooperative_launch => {
            return Err(Error::CooperativeLaunchUnsupported { gpu: info.name.clone(), barrier: descriptor.name });
        }
        LaunchMode::Split if !device.runs_every_grid() => return Err(not_fused(&kernel)),
        LaunchMode::Cooperative | LaunchMode::Ordinary | LaunchMode::Split => {}
    }
    let resident = device.residency(&kernel.variant(barrier, threads), &layout)?;
    let grid =
        resolve_grid(&kernel, barrier, launch.requested_blocks(), threads, resident, co_residency)?.shaped_by(launch);
    check_block_limit(&kernel, grid, device.block_limit(threads), || device.block_limit_reason())?;
    let mut compiled = barrier.compiled_for(RelayMode::for_grid(grid.blocks, info.sm_count));
    if compiled != barrier {
        // Relay's own kernel serves any grid: it stays where the other one would not be
        // co-resident. Asked in either case: it also lets the other take the slices' bytes.
        let other = device.residency(&kernel.variant(compiled, threads), &layout)?;
        if co_residency == CoResidency::Required && grid.blocks > other.max_blocks() {
            compiled = barrier;
        }
    }
    Ok(LaunchPlan { kernel, launch: launch.clone(), grid, barrier, compiled, shared: layout, choice })
}

/// The plan of a split run ([`Barrier::MultiLaunch`]) of `spec` with `launch` on `device`: by
/// default the largest co-resident grid of the first segment (larger grids are allowed, since
/// each segment is a launch of its own).
pub(crate) fn split(
    device: &dyn Device,
    spec: &KernelSpec,
    launch: &Launch,
    shared: &DynamicShared,
) -> Result<LaunchPlan> {
    let kernel = KernelBuild::new(spec, launch);
    let threads = checked_threads(device.info(), &kernel, launch)?;
    check_split(&kernel)?;
    let layout = shared.layout(&kernel, threads)?;
    let resident = device.residency(&kernel.variant(Barrier::MultiLaunch, threads), &layout)?;
    let grid = split_grid(&kernel, launch, threads, resident)?;
    check_block_limit(&kernel, grid, device.block_limit(threads), || device.block_limit_reason())?;
    Ok(LaunchPlan {
        kernel,
        launch: launch.clone(),
        grid,
        barrier: Barrier::MultiLaunch,
        compiled: Barrier::MultiLaunch,
        shared: layout,
        choice: launch.untuned_choice(),
    })
}

/// The most blocks of `spec` that can be resident at once with `launch`'s block size and
/// barrier; see [`Gpu::max_coresident_blocks_with`](crate::Gpu::max_coresident_blocks_with).
pub(crate) fn max_coresident_blocks(
    device: &dyn Device,
    spec: &KernelSpec,
    launch: &Launch,
    shared: &DynamicShared,
) -> Result<u32> {
    let kernel = KernelBuild::new(spec, launch);
    let threads = checked_threads(device.info(), &kernel, launch)?;
    let layout = shared.layout(&kernel, threads)?;
    let barrier = barrier(device, &kernel, launch, None, threads, &layout)?;
    if barrier.descriptor().launch_mode == LaunchMode::Split {
        check_split(&kernel)?;
    }
    let resident = device.residency(&kernel.variant(barrier, threads), &layout)?;
    Ok(if device.runs_every_grid() { device.block_limit(threads) } else { resident.max_blocks() })
}

/// The barrier a launch of `requested_blocks` (or the default grid) uses: Auto becomes the
/// barrier measured fastest for the grid, whose default size is Relay's largest co-resident
/// grid.
fn barrier(
    device: &dyn Device,
    kernel: &KernelBuild,
    launch: &Launch,
    requested_blocks: Option<u32>,
    threads: u32,
    shared: &SharedLayout,
) -> Result<Barrier> {
    resolve_barrier(launch.selected_barrier(), device.info(), requested_blocks, || {
        Ok(device.residency(&kernel.variant(Barrier::Relay, threads), shared)?.max_blocks())
    })
}

/// Why a split kernel cannot go through a fused launch.
fn not_fused(kernel: &KernelSpec) -> Error {
    match kernel.split.error {
        Some(reason) => Error::CannotSplit { kernel: kernel.name.to_owned(), reason: reason.to_owned() },
        None => Error::InvalidBarrier {
            kernel: kernel.name.to_owned(),
            barrier: Barrier::MultiLaunch.to_string(),
            reason: "a split kernel runs through Gpu::begin_split (the launch functions \
                     #[grid_phases] generates route it there), not through launch_kernel"
                .to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::kernel::tests::SMOOTH;
    use crate::core::kernel::SplitSpec;

    #[test]
    fn a_multi_launch_through_launch_kernel_says_where_it_belongs() {
        let error = not_fused(&SMOOTH);
        assert!(matches!(&error, Error::InvalidBarrier { barrier, .. } if barrier == "multi-launch"), "{error}");
        assert!(error.to_string().contains("Gpu::begin_split"), "{error}");
        let unsplit = KernelSpec { split: SplitSpec::NONE, ..SMOOTH };
        assert!(matches!(not_fused(&unsplit), Error::CannotSplit { .. }));
    }
}
