//! Running a fused kernel on a CUDA GPU: one launch, planned in `core::plan`, whose
//! `grid_sync()` calls are device barriers.

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaFunction, DriverError, LaunchConfig};

use crate::barrier::{limit_ns, LaunchMode};
use crate::core::args::KernelArgs;
use crate::core::error::Result;
use crate::core::launch::LaunchReport;
use crate::core::plan::LaunchPlan;
use crate::cuda::args::{push_args, push_shared_args};
use crate::cuda::context::CudaGpu;
use crate::cuda::driver_error;
use crate::cuda::health::describe_launch;
use crate::cuda::profile::ProfileBuffer;
use crate::cuda::scratch::LaunchScratch;
use crate::cuda::timing::elapsed;

/// Runs `plan` once over `args` and waits for it: allocates the profile's records, prepares the
/// scratch words, enqueues, and reads the status word.
///
/// # Safety
/// `args` must match the C parameter list of the plan's kernel.
pub(crate) unsafe fn launch(gpu: &CudaGpu, plan: &LaunchPlan, args: &KernelArgs<'_>) -> Result<LaunchReport> {
    let (kernel, grid) = (&plan.kernel, plan.grid);
    let function = gpu.function(kernel, plan.compiled, grid.threads)?;
    let profile = kernel.profile.then(|| ProfileBuffer::new(gpu.stream(), grid, plan.launch.profile_capacity()));
    let profile = profile.transpose()?;
    gpu.health().launching(describe_launch(kernel, grid, plan.barrier));
    let watchdog = plan.launch.watchdog_limit();
    // One launch at a time may use the scratch words; `prepare` resets what it needs.
    let mut scratch = gpu.lock_scratch();
    // On a team every grid_sync() is the spanning barrier, whose waits have the watchdog
    // whatever the barrier (the cooperative one has none of its own).
    let barrier_ns = if gpu.team().is_some() { limit_ns(watchdog) } else { plan.barrier.watchdog_ns(watchdog) };
    let spin_ns = limit_ns(watchdog);
    scratch.prepare(gpu.stream(), plan.compiled, grid, barrier_ns, spin_ns, limit_ns(plan.launch.deadline_limit()))?;
    // SAFETY: the caller vouches for `args`.
    let ran = unsafe { run(gpu, plan, &function, args, &scratch, profile.as_ref()) };
    let outcome = ran.and_then(|gpu_time| {
        scratch.read_status(gpu.stream())?.into_result(kernel, plan.barrier, watchdog)?;
        Ok(gpu_time)
    });
    scratch.settle(gpu.stream(), plan.compiled, outcome.is_ok());
    let gpu_time = outcome?;
    let profile = match &profile {
        Some(records) => records.read(gpu.stream(), kernel, plan.barrier)?,
        None => None,
    };
    Ok(plan.report(gpu_time, profile))
}

/// Launches and waits, returning the kernel's time.
///
/// # Safety
/// `args` must match the kernel's C parameter list.
unsafe fn run(
    gpu: &CudaGpu,
    plan: &LaunchPlan,
    function: &CudaFunction,
    args: &KernelArgs<'_>,
    scratch: &LaunchScratch,
    profile: Option<&ProfileBuffer>,
) -> Result<std::time::Duration> {
    let running = format!("running kernel `{}`", plan.kernel.name);
    // SAFETY: the caller vouches for `args`.
    let events =
        unsafe { enqueue(gpu, plan, function, args, scratch, profile) }.map_err(driver_error(running.as_str()))?;
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
    plan: &LaunchPlan,
    function: &CudaFunction,
    args: &KernelArgs<'_>,
    scratch: &LaunchScratch,
    profile: Option<&ProfileBuffer>,
) -> std::result::Result<Option<(CudaEvent, CudaEvent)>, DriverError> {
    let mut builder = gpu.stream().launch_builder(function);
    push_args(&mut builder, args);
    push_shared_args(&mut builder, &plan.shared);
    scratch.push_trailing_args(&mut builder);
    if let Some(profile) = profile {
        profile.push_args(&mut builder);
    }
    builder.record_kernel_launch(CUevent_flags::CU_EVENT_DEFAULT);
    let config = LaunchConfig {
        grid_dim: plan.grid.grid_shape.tuple(),
        block_dim: plan.grid.block_shape.tuple(),
        shared_mem_bytes: plan.shared.driver_bytes(),
    };
    match plan.barrier.descriptor().launch_mode {
        // SAFETY: the caller vouches for `args`; the scratch words outlive the launch.
        LaunchMode::Cooperative => unsafe { builder.launch_cooperative(config) },
        // SAFETY: as above.
        LaunchMode::Ordinary | LaunchMode::Split => unsafe { builder.launch(config) },
    }
}
