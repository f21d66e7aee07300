//! The one order in which a launch is resolved, for every backend: threads → shared layout →
//! barrier → compiled variant → occupancy → grid → block limit → Relay's variant.

use crate::barrier::{AutoChoice, Barrier, LaunchMode, RelayMode};
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
    let (kernel, threads, layout) = build(device, spec, launch, shared)?;
    let (barrier, auto) = barrier(device, &kernel, launch, launch.requested_blocks(), threads, &layout)?;
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
    Ok(LaunchPlan { kernel, launch: launch.clone(), grid, barrier, auto, compiled, shared: layout, choice })
}

/// The plan of a split run ([`Barrier::MultiLaunch`]) of `spec` with `launch` on `device`: by
/// default the largest co-resident grid of the segment holding the fewest blocks (larger grids
/// are allowed, since each segment is a launch of its own).
pub(crate) fn split(
    device: &dyn Device,
    spec: &KernelSpec,
    launch: &Launch,
    shared: &DynamicShared,
) -> Result<LaunchPlan> {
    let kernel = KernelBuild::new(spec, launch);
    let threads = checked_threads(device.info(), &kernel, launch)?;
    // Before the layout: a kernel that cannot split says so first.
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
        auto: None,
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
    let (kernel, threads, layout) = build(device, spec, launch, shared)?;
    let (barrier, _) = barrier(device, &kernel, launch, None, threads, &layout)?;
    if barrier.descriptor().launch_mode == LaunchMode::Split {
        check_split(&kernel)?;
    }
    let resident = device.residency(&kernel.variant(barrier, threads), &layout)?;
    Ok(if device.runs_every_grid() { device.block_limit(threads) } else { resident.max_blocks() })
}

/// The first three steps of a fused plan: the launch's build of `spec`, its checked block
/// size, and the shared slices' layout for that size.
fn build(
    device: &dyn Device,
    spec: &KernelSpec,
    launch: &Launch,
    shared: &DynamicShared,
) -> Result<(KernelBuild, u32, SharedLayout)> {
    let kernel = KernelBuild::new(spec, launch);
    let threads = checked_threads(device.info(), &kernel, launch)?;
    let layout = shared.layout(&kernel, threads)?;
    Ok((kernel, threads, layout))
}

/// The barrier a launch of `requested_blocks` (or the default grid) uses: Auto becomes the
/// barrier the device's table names for the grid (with the row that chose it), whose default
/// size is Relay's largest co-resident grid.
fn barrier(
    device: &dyn Device,
    kernel: &KernelBuild,
    launch: &Launch,
    requested_blocks: Option<u32>,
    threads: u32,
    shared: &SharedLayout,
) -> Result<(Barrier, Option<AutoChoice>)> {
    resolve_barrier(
        launch.selected_barrier(),
        device.info(),
        || device.auto_table(),
        requested_blocks,
        || Ok(device.residency(&kernel.variant(Barrier::Relay, threads), shared)?.max_blocks()),
    )
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
    use crate::test_support::FakeDevice as Fake;

    fn plan(device: &Fake, launch: &Launch, co_residency: CoResidency) -> Result<LaunchPlan> {
        fused(device, &SMOOTH, launch, &DynamicShared::none(), co_residency, launch.untuned_choice())
    }

    #[test]
    fn an_open_auto_launch_asks_relay_for_the_default_grid_then_the_barrier_it_chose() {
        let device = Fake::gpu(|_| 2);
        let plan = plan(&device, &Launch::new(), CoResidency::Required).expect("planned");
        assert_eq!((plan.grid.blocks, plan.grid.threads), (264, 256));
        assert_eq!((plan.barrier, plan.compiled), (Barrier::Lbs, Barrier::Lbs), "264 blocks: Auto picks LBS");
        assert_eq!(device.asked(), [Barrier::Relay, Barrier::Lbs]);
        assert_eq!(plan.choice, ConfigChoice::Default);
        assert!(!plan.kernel.profile && plan.shared.bytes == 0);
    }

    #[test]
    fn relay_keeps_its_own_kernel_where_the_direct_one_would_not_be_co_resident() {
        let launch = Launch::new().barrier(Barrier::Relay).blocks(200);
        let tight = Fake::gpu(|barrier| if barrier == Barrier::Lbs { 1 } else { 4 });
        let kept = plan(&tight, &launch, CoResidency::Required).expect("planned");
        assert_eq!((kept.barrier, kept.compiled), (Barrier::Relay, Barrier::Relay));
        assert_eq!(tight.asked(), [Barrier::Relay, Barrier::Lbs], "the direct variant is asked, and allowed");
        let waived = plan(&tight, &launch, CoResidency::Waived).expect("planned");
        assert_eq!(waived.compiled, Barrier::Lbs);
        let roomy = Fake::gpu(|_| 2);
        assert_eq!(plan(&roomy, &launch, CoResidency::Required).map(|plan| plan.compiled).ok(), Some(Barrier::Lbs));
    }

    #[test]
    fn a_gpu_refuses_grids_that_are_not_co_resident_and_split_kernels() {
        let device = Fake::gpu(|_| 1);
        let error = plan(&device, &Launch::new().barrier(Barrier::Ulfs).blocks(133), CoResidency::Required);
        assert!(matches!(error, Err(Error::GridTooLarge { requested: 133, max: 132, .. })), "{error:?}");
        let split = plan(&device, &Launch::new().barrier(Barrier::MultiLaunch), CoResidency::Required);
        assert!(matches!(split, Err(Error::InvalidBarrier { .. })), "{split:?}");
        let profiled = Launch::new().profile(true).bounds_checks(false);
        let plan = plan(&device, &profiled, CoResidency::Required).expect("planned");
        assert!(plan.kernel.profile && !plan.kernel.bounds_checks, "the build is the launch's");
    }

    #[test]
    fn a_device_that_runs_every_grid_waives_co_residency_and_runs_split_kernels_fused() {
        let device = Fake { every_grid: true, block_limit: 4096, ..Fake::gpu(|_| 1) };
        let big = plan(&device, &Launch::new().barrier(Barrier::Lbs).blocks(1000), CoResidency::Required);
        assert_eq!(big.map(|plan| plan.grid.blocks).ok(), Some(1000));
        let split = plan(&device, &Launch::new().barrier(Barrier::MultiLaunch), CoResidency::Required);
        assert_eq!(split.map(|plan| plan.barrier).ok(), Some(Barrier::MultiLaunch));
        let error = plan(&device, &Launch::new().barrier(Barrier::Lbs).blocks(4097), CoResidency::Required);
        let Err(Error::TooManyBlocks { requested: 4097, max: 4096, device, why, .. }) = error else {
            panic!("{error:?}");
        };
        assert_eq!((device.as_str(), why.as_str()), ("the fake", "it says so"));
        assert_eq!(
            max_coresident_blocks(
                &Fake { every_grid: true, ..Fake::gpu(|_| 1) },
                &SMOOTH,
                &Launch::new(),
                &DynamicShared::none()
            )
            .ok(),
            Some(i32::MAX as u32)
        );
    }

    #[test]
    fn the_largest_co_resident_grid_is_the_chosen_barrier_s() {
        let device = Fake::gpu(|barrier| if barrier == Barrier::Cooperative { 3 } else { 2 });
        let none = DynamicShared::none();
        let cooperative = Launch::new().barrier(Barrier::Cooperative);
        assert_eq!(max_coresident_blocks(&device, &SMOOTH, &cooperative, &none).ok(), Some(396));
        assert_eq!(max_coresident_blocks(&device, &SMOOTH, &Launch::new(), &none).ok(), Some(264));
        let unsplit = KernelSpec { split: SplitSpec::NONE, ..SMOOTH };
        let split = Launch::new().barrier(Barrier::MultiLaunch);
        assert!(matches!(max_coresident_blocks(&device, &unsplit, &split, &none), Err(Error::CannotSplit { .. })));
    }

    #[test]
    fn a_split_plan_defaults_to_its_segments_co_resident_grid_and_allows_larger_ones() {
        let device = Fake::gpu(|_| 2);
        let none = DynamicShared::none();
        let launch = Launch::new().barrier(Barrier::MultiLaunch);
        let plan = split(&device, &SMOOTH, &launch, &none).expect("planned");
        assert_eq!((plan.grid.blocks, plan.barrier, plan.compiled), (264, Barrier::MultiLaunch, Barrier::MultiLaunch));
        assert_eq!(device.asked(), [Barrier::MultiLaunch]);
        assert_eq!(
            split(&device, &SMOOTH, &launch.clone().blocks(10_000), &none).map(|plan| plan.grid.blocks).ok(),
            Some(10_000)
        );
        let unsplit = KernelSpec { split: SplitSpec::NONE, ..SMOOTH };
        assert!(matches!(split(&device, &unsplit, &launch, &none), Err(Error::CannotSplit { .. })));
        let profiled = split(&device, &SMOOTH, &launch.profile(true), &none);
        assert!(matches!(profiled, Err(Error::InvalidBarrier { .. })), "{profiled:?}");
    }

    #[test]
    fn a_multi_launch_through_launch_kernel_says_where_it_belongs() {
        let error = not_fused(&SMOOTH);
        assert!(matches!(&error, Error::InvalidBarrier { barrier, .. } if barrier == "multi-launch"), "{error}");
        assert!(error.to_string().contains("Gpu::begin_split"), "{error}");
        let unsplit = KernelSpec { split: SplitSpec::NONE, ..SMOOTH };
        assert!(matches!(not_fused(&unsplit), Error::CannotSplit { .. }));
    }
}
