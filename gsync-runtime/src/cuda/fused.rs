//! Running a fused kernel on a CUDA GPU: one launch whose `grid_sync()` calls are device
//! barriers.

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaFunction, DriverError, LaunchConfig};

use crate::barrier::{limit_ns, Barrier, LaunchMode, RelayMode};
use crate::core::args::KernelArgs;
use crate::core::dynamic_shared::{DynamicShared, SharedLayout};
use crate::core::error::{Error, Result};
use crate::core::grid::{check_block_limit, checked_threads, resolve_barrier, resolve_grid, CoResidency, Grid};
use crate::core::kernel::KernelSpec;
use crate::core::launch::{Launch, LaunchReport};
use crate::core::shape::{untuned_choice, LaunchShape};
use crate::cuda::args::{check_buffers, push_args, push_shared_args};
use crate::cuda::context::CudaGpu;
use crate::cuda::driver_error;
use crate::cuda::health::describe_launch;
use crate::cuda::occupancy::{grid_limit_reason, residency};
use crate::cuda::profile::ProfileBuffer;
use crate::cuda::scratch::LaunchScratch;
use crate::cuda::timing::elapsed;
use crate::cuda::tune;

/// A launch with every value resolved and checked.
struct FusedLaunch {
    function: CudaFunction,
    grid: Grid,
    /// The barrier the launch reports.
    barrier: Barrier,
    /// The barrier whose fragment `function` was compiled with, whose state it uses.
    compiled: Barrier,
    /// The shared slices laid out for the block size.
    shared: SharedLayout,
}

/// See [`Gpu::max_coresident_blocks_with`](crate::Gpu::max_coresident_blocks_with).
pub(crate) fn max_coresident_blocks(
    gpu: &CudaGpu,
    kernel: &KernelSpec,
    launch: &Launch,
    shared: &DynamicShared,
) -> Result<u32> {
    gpu.health().guard(|| {
        let kernel = &launch.configure(kernel);
        let threads = checked_threads(gpu.info(), kernel, launch)?;
        let layout = shared.layout(kernel, threads)?;
        let barrier = resolve(gpu, kernel, launch.selected_barrier(), None, threads, &layout)?;
        let function = match barrier.descriptor().launch_mode {
            LaunchMode::Split => gpu.first_segment(kernel, threads)?,
            LaunchMode::Cooperative | LaunchMode::Ordinary => gpu.function(kernel, barrier, threads)?,
        };
        Ok(residency(gpu, kernel, &function, threads, &layout)?.max_blocks())
    })
}

/// The shape a launch of `kernel` (configured by `launch`) with `launch` runs when it names
/// its grid and block size, or lets them default without tuning.
pub(crate) fn resolved_shape(
    gpu: &CudaGpu,
    kernel: &KernelSpec,
    launch: &Launch,
    shared: &DynamicShared,
) -> Result<LaunchShape> {
    let fused = resolve_launch(gpu, kernel, launch, CoResidency::Required, shared)?;
    Ok(LaunchShape { blocks: fused.grid.blocks, threads: fused.grid.threads, barrier: fused.barrier })
}

/// Runs `kernel` once with `launch` and waits for it; see
/// [`Gpu::launch_kernel`](crate::Gpu::launch_kernel). A launch that must be co-resident and
/// leaves its shape open gets one first ([`tune::choose`]).
///
/// # Safety
/// `args` must match the kernel's C parameter list.
pub(crate) unsafe fn launch(
    gpu: &CudaGpu,
    kernel: &KernelSpec,
    launch: &Launch,
    args: KernelArgs<'_>,
    co_residency: CoResidency,
) -> Result<LaunchReport> {
    gpu.health().check()?;
    let kernel = &launch.configure(kernel);
    check_buffers(gpu, kernel, &args)?;
    let (shaped, choice) = match co_residency {
        CoResidency::Required => {
            tune::choose(gpu, kernel, launch, &args).map_err(|error| gpu.health().absorb(error))?
        }
        CoResidency::Waived => (launch.clone(), untuned_choice(launch)),
    };
    // SAFETY: the caller vouches for `args`.
    let report = unsafe { launch_shaped(gpu, kernel, &shaped, &args, co_residency) }?;
    Ok(LaunchReport { choice, ..report })
}

/// One launch of `kernel` (configured by `launch`) with buffers already checked, its shape as
/// `launch` says or the default grid.
///
/// # Safety
/// `args` must match the kernel's C parameter list.
pub(crate) unsafe fn launch_shaped(
    gpu: &CudaGpu,
    kernel: &KernelSpec,
    launch: &Launch,
    args: &KernelArgs<'_>,
    co_residency: CoResidency,
) -> Result<LaunchReport> {
    let fused =
        resolve_launch(gpu, kernel, launch, co_residency, args.shared()).map_err(|error| gpu.health().absorb(error))?;
    let profile = kernel.profile.then(|| ProfileBuffer::new(gpu.stream(), fused.grid, launch.profile_capacity()));
    let profile = profile.transpose().map_err(|error| gpu.health().absorb(error))?;
    gpu.health().launching(describe_launch(kernel, fused.grid, fused.barrier));
    let watchdog = launch.watchdog_limit();
    // One launch at a time may use the scratch words; `prepare` resets what it needs.
    let mut scratch = gpu.lock_scratch();
    let (barrier_ns, spin_ns) = (fused.barrier.watchdog_ns(watchdog), limit_ns(watchdog));
    scratch.prepare(
        gpu.stream(),
        fused.compiled,
        fused.grid,
        barrier_ns,
        spin_ns,
        limit_ns(launch.deadline_limit()),
    )?;
    // SAFETY: the caller vouches for `args`.
    let ran = unsafe { run(gpu, kernel, &fused, args, &scratch, profile.as_ref()) };
    let outcome = ran.and_then(|gpu_time| {
        scratch.read_status(gpu.stream())?.into_result(kernel, fused.barrier, watchdog)?;
        Ok(gpu_time)
    });
    scratch.settle(gpu.stream(), fused.compiled, outcome.is_ok());
    let gpu_time = outcome.map_err(|error| gpu.health().absorb(error))?;
    let profile = match &profile {
        Some(records) => {
            records.read(gpu.stream(), kernel, fused.barrier).map_err(|error| gpu.health().absorb(error))?
        }
        None => None,
    };
    Ok(LaunchReport {
        gpu_time,
        blocks: fused.grid.blocks,
        threads: fused.grid.threads,
        barrier: fused.barrier,
        choice: untuned_choice(launch),
        profile,
    })
}

/// Launches and waits, returning the kernel's time.
///
/// # Safety
/// `args` must match the kernel's C parameter list.
unsafe fn run(
    gpu: &CudaGpu,
    kernel: &KernelSpec,
    fused: &FusedLaunch,
    args: &KernelArgs<'_>,
    scratch: &LaunchScratch,
    profile: Option<&ProfileBuffer>,
) -> Result<std::time::Duration> {
    let running = format!("running kernel `{}`", kernel.name);
    // SAFETY: the caller vouches for `args`.
    let events = unsafe { enqueue(gpu, fused, args, scratch, profile) }.map_err(driver_error(running.as_str()))?;
    // Waiting here also ends the kernel's use of the buffers `args` borrows.
    gpu.stream().synchronize().map_err(driver_error(running.as_str()))?;
    elapsed(events).map_err(driver_error(running))
}

/// Queues the launch between two timing events.
///
/// # Safety
/// `args` must match the kernel's C parameter list; a profiled kernel takes the profile's
/// two parameters after the scratch words.
unsafe fn enqueue(
    gpu: &CudaGpu,
    fused: &FusedLaunch,
    args: &KernelArgs<'_>,
    scratch: &LaunchScratch,
    profile: Option<&ProfileBuffer>,
) -> std::result::Result<Option<(CudaEvent, CudaEvent)>, DriverError> {
    let mut builder = gpu.stream().launch_builder(&fused.function);
    push_args(&mut builder, args);
    push_shared_args(&mut builder, &fused.shared);
    scratch.push_trailing_args(&mut builder);
    if let Some(profile) = profile {
        profile.push_args(&mut builder);
    }
    builder.record_kernel_launch(CUevent_flags::CU_EVENT_DEFAULT);
    let config = LaunchConfig {
        grid_dim: fused.grid.grid_shape.tuple(),
        block_dim: fused.grid.block_shape.tuple(),
        shared_mem_bytes: fused.shared.driver_bytes(),
    };
    match fused.barrier.descriptor().launch_mode {
        // SAFETY: the caller vouches for `args`; the scratch words outlive the launch.
        LaunchMode::Cooperative => unsafe { builder.launch_cooperative(config) },
        // SAFETY: as above.
        LaunchMode::Ordinary | LaunchMode::Split => unsafe { builder.launch(config) },
    }
}

/// The barrier a launch of `requested_blocks` (or the default grid) uses: Auto becomes the
/// barrier measured fastest for the grid, whose default size is Relay's largest co-resident
/// grid.
fn resolve(
    gpu: &CudaGpu,
    kernel: &KernelSpec,
    barrier: Barrier,
    requested_blocks: Option<u32>,
    threads: u32,
    shared: &SharedLayout,
) -> Result<Barrier> {
    resolve_barrier(barrier, gpu.info(), requested_blocks, || {
        let function = gpu.function(kernel, Barrier::Relay, threads)?;
        Ok(residency(gpu, kernel, &function, threads, shared)?.max_blocks())
    })
}

/// Resolves the defaults of `launch` and checks everything that can be checked before
/// launching.
fn resolve_launch(
    gpu: &CudaGpu,
    kernel: &KernelSpec,
    launch: &Launch,
    co_residency: CoResidency,
    shared: &DynamicShared,
) -> Result<FusedLaunch> {
    let threads = checked_threads(gpu.info(), kernel, launch)?;
    let shared = shared.layout(kernel, threads)?;
    let barrier = resolve(gpu, kernel, launch.selected_barrier(), launch.requested_blocks(), threads, &shared)?;
    let descriptor = barrier.descriptor();
    match descriptor.launch_mode {
        LaunchMode::Cooperative if !gpu.info().cooperative_launch => {
            return Err(Error::CooperativeLaunchUnsupported { gpu: gpu.info().name.clone(), barrier: descriptor.name });
        }
        LaunchMode::Split => return Err(not_fused(kernel)),
        LaunchMode::Cooperative | LaunchMode::Ordinary => {}
    }
    let function = gpu.function(kernel, barrier, threads)?;
    let resident = residency(gpu, kernel, &function, threads, &shared)?;
    let grid =
        resolve_grid(kernel, barrier, launch.requested_blocks(), threads, resident, co_residency)?.shaped_by(launch);
    check_block_limit(kernel, grid, gpu.info().max_blocks_per_grid, || grid_limit_reason(gpu))?;
    let compiled = barrier.compiled_for(RelayMode::for_grid(grid.blocks, gpu.info().sm_count));
    if compiled == barrier {
        return Ok(FusedLaunch { function, grid, barrier, compiled, shared });
    }
    // Relay's own kernel serves any grid: it stays where the other one would not be
    // co-resident.
    let other = gpu.function(kernel, compiled, threads)?;
    // Asked in either case: it also lets `other` take the shared slices' bytes.
    let other_resident = residency(gpu, kernel, &other, threads, &shared)?;
    if co_residency == CoResidency::Required && grid.blocks > other_resident.max_blocks() {
        return Ok(FusedLaunch { function, grid, barrier, compiled: barrier, shared });
    }
    Ok(FusedLaunch { function: other, grid, barrier, compiled, shared })
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
