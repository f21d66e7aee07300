//! Running a fused kernel on a CUDA GPU: one launch, planned in `core::plan`, whose
//! `grid_sync()` calls are device barriers.

use cudarc::driver::{CudaFunction, DriverError, LaunchConfig};

use crate::barrier::{limit_ns, LaunchMode};
use crate::core::args::KernelArgs;
use crate::core::error::{Error, Result};
use crate::core::launch::LaunchReport;
use crate::core::plan::LaunchPlan;
use crate::core::status::DeviceStatus;
use crate::cuda::args::{push_args, push_shared_args};
use crate::cuda::context::CudaGpu;
use crate::cuda::driver_error;
use crate::cuda::health::describe_launch;
use crate::cuda::profile::ProfileBuffer;
use crate::cuda::scratch::{Chaining, LaunchScratch, TakenScratch};
use crate::cuda::timing::elapsed_between;

/// Runs `plan` once over `args` and waits for it.
///
/// # Safety
/// `args` must match the C parameter list of the plan's kernel.
pub(crate) unsafe fn launch(gpu: &CudaGpu, plan: LaunchPlan, args: &KernelArgs<'_>) -> Result<LaunchReport> {
    // SAFETY: the caller vouches for `args`.
    let mut queued = unsafe { submit(gpu, plan, args) }?;
    // Waited for at once: the status words are copied right behind the kernel.
    queued.read_status_behind();
    queued.wait()
}

/// Queues `plan` once over `args` and returns without waiting: allocates the profile's records,
/// takes and prepares a scratch of its own (which the launch before with it may have prepared
/// already), and enqueues the kernel between two timing events.
///
/// # Safety
/// `args` must match the C parameter list of the plan's kernel, and the buffers it names must
/// stay untouched until the returned launch has been waited for or dropped.
pub(crate) unsafe fn submit<'g>(gpu: &'g CudaGpu, plan: LaunchPlan, args: &KernelArgs<'_>) -> Result<Queued<'g>> {
    let (kernel, grid) = (&plan.kernel, plan.grid);
    let captured = gpu.capturing();
    if captured && kernel.profile {
        return Err(Error::Capture {
            reason: "a profiled launch reads its records back after it ran, which a graph replay does not; \
                     profile the launch outside the capture"
                .into(),
        });
    }
    let function = gpu.function(kernel, plan.compiled, grid.threads)?;
    let profile = kernel.profile.then(|| ProfileBuffer::new(gpu.stream(), grid, plan.launch.profile_capacity()));
    let profile = profile.transpose()?;
    gpu.health().launching(describe_launch(kernel, grid, plan.barrier));
    let watchdog = plan.launch.watchdog_limit();
    let mut scratch = gpu.take_scratch()?;
    // On a team every grid_sync() is the spanning barrier, whose waits have the watchdog
    // whatever the barrier (the cooperative one has none of its own).
    let barrier_ns = if gpu.team().is_some() { limit_ns(watchdog) } else { plan.barrier.watchdog_ns(watchdog) };
    let spin_ns = limit_ns(watchdog);
    let deadline_ns = limit_ns(plan.launch.deadline_limit());
    let chaining = match (captured, gpu.team()) {
        (true, _) => Chaining::Captured,
        (false, None) if kernel.prepares_next_launch(plan.compiled) => Chaining::PrepareNext,
        (false, _) => Chaining::HostWrites,
    };
    let prepared = scratch.prepare(gpu.stream(), plan.compiled, grid, barrier_ns, spin_ns, deadline_ns, chaining);
    if captured && prepared.is_err() {
        gpu.poison_capture();
    }
    prepared?;
    let name = plan.kernel.name;
    let running = || format!("running kernel `{name}`");
    let mut queued = Queued { gpu, plan, scratch, profile, waited: false, captured, status: None };
    if captured {
        // Timed with its graph's replay: events recorded under capture record nothing. A
        // launch recorded in part must not reach a graph.
        // SAFETY: the caller vouches for `args`.
        let recorded = unsafe { enqueue(gpu, &queued.plan, &function, args, &queued.scratch, None, false) }
            .map_err(|error| driver_error(running())(error))
            .and_then(|()| queued.scratch.queue_captured_status_copy(gpu.stream()));
        if let Err(error) = recorded {
            gpu.poison_capture();
            return Err(error);
        }
        gpu.note_captured();
        return Ok(queued);
    }
    // Fused launches on several streams of the GPU run one after another (see `FusedOrder`).
    let order = gpu.fused_order();
    let ordered = order.wait_turn(gpu.stream()).map_err(|error| driver_error(running())(error))?;
    // SAFETY: the caller vouches for `args`.
    let enqueued =
        unsafe { enqueue(gpu, &queued.plan, &function, args, &queued.scratch, queued.profile.as_ref(), true) }
            .map_err(|error| driver_error(running())(error));
    let recorded =
        if ordered { order.record(gpu.stream()).map_err(|error| driver_error(running())(error)) } else { Ok(()) };
    enqueued?;
    recorded?;
    Ok(queued)
}

/// A fused launch in flight: its plan, its scratch and timing events, until it is waited for.
pub(crate) struct Queued<'g> {
    gpu: &'g CudaGpu,
    plan: LaunchPlan,
    scratch: TakenScratch<'g>,
    profile: Option<ProfileBuffer>,
    waited: bool,
    /// Recorded into a graph: it runs when the graph is replayed ([`Queued::replayed`]).
    captured: bool,
    /// Its status words, when they were read right behind it; else they are read back once
    /// it has been waited for.
    status: Option<Result<DeviceStatus>>,
}

impl Queued<'_> {
    /// Waits for the launch and reads its status word: the report, or the launch's error.
    pub(crate) fn wait(self) -> Result<LaunchReport> {
        if self.captured {
            return Err(Error::Capture {
                reason: "a launch captured into a graph runs when the graph is replayed: hand it to \
                         Capture::finish and call Graph::replay instead of wait()"
                    .into(),
            });
        }
        let health = self.gpu.health();
        health.guard(move || self.read_outcome())
    }

    fn read_outcome(mut self) -> Result<LaunchReport> {
        self.waited = true;
        let (gpu, kernel) = (self.gpu, &self.plan.kernel);
        let watchdog = self.plan.launch.watchdog_limit();
        let running = || format!("running kernel `{}`", kernel.name);
        let status = match self.status.take() {
            Some(Ok(status)) => Ok(status),
            // The kernel may still run: the buffers are free only once it is over.
            Some(Err(error)) => {
                let _ = self.scratch.timing().1.synchronize();
                Err(error)
            }
            None => {
                let (_, end) = self.scratch.timing();
                end.synchronize()
                    .map_err(|error| driver_error(running())(error))
                    .and_then(|()| self.scratch.read_status_now())
            }
        };
        let outcome = status.and_then(|status| {
            status.into_result(kernel, self.plan.barrier, watchdog)?;
            let (start, end) = self.scratch.timing();
            elapsed_between(start, end).map_err(|error| driver_error(running())(error))
        });
        self.scratch.settle(gpu.stream(), self.plan.compiled, outcome.is_ok());
        let gpu_time = outcome?;
        let profile = match &self.profile {
            Some(records) => records.read(gpu.stream(), kernel, self.plan.barrier)?,
            None => None,
        };
        Ok(self.plan.report(gpu_time, profile))
    }
}

impl Queued<'_> {
    /// Reads the status words right behind the launch, for a caller about to wait.
    fn read_status_behind(&mut self) {
        if !self.captured {
            self.status = Some(self.scratch.read_status_behind(self.gpu.stream()));
        }
    }

    /// The GPU it was queued on.
    pub(crate) fn gpu(&self) -> &CudaGpu {
        self.gpu
    }

    /// Whether the launch was captured into a graph.
    pub(crate) fn captured(&self) -> bool {
        self.captured
    }

    /// How the captured launch ended in the replay of its graph that the stream has just
    /// finished: its status word, decoded.
    pub(crate) fn replayed(&self) -> Result<()> {
        let watchdog = self.plan.launch.watchdog_limit();
        self.scratch.status_copy().into_result(&self.plan.kernel, self.plan.barrier, watchdog)
    }
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        // A captured launch owes the stream nothing: its graph waits for its replays.
        if self.waited || self.captured {
            return;
        }
        // Never waited for: the scratch goes back to the pool only once the kernel is done
        // with it, and not trusted.
        let stream = self.gpu.stream();
        if let Err(error) = stream.synchronize() {
            let _ =
                self.gpu.health().absorb(driver_error(format!("running kernel `{}`", self.plan.kernel.name))(error));
        }
        self.scratch.settle(stream, self.plan.compiled, false);
    }
}

/// Queues the launch between the scratch's two timing events.
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
    timed: bool,
) -> std::result::Result<(), DriverError> {
    let mut builder = gpu.stream().launch_builder(function);
    push_args(&mut builder, args);
    push_shared_args(&mut builder, &plan.shared);
    scratch.push_trailing_args(&mut builder);
    if let Some(profile) = profile {
        profile.push_args(&mut builder);
    }
    let config = LaunchConfig {
        grid_dim: plan.grid.grid_shape.tuple(),
        block_dim: plan.grid.block_shape.tuple(),
        shared_mem_bytes: plan.shared.driver_bytes(),
    };
    let (start, end) = scratch.timing();
    if timed {
        start.record(gpu.stream())?;
    }
    match plan.barrier.descriptor().launch_mode {
        // SAFETY: the caller vouches for `args`; the scratch words outlive the launch.
        LaunchMode::Cooperative => unsafe { builder.launch_cooperative(config) }?,
        // SAFETY: as above.
        LaunchMode::Ordinary | LaunchMode::Split => unsafe { builder.launch(config) }?,
    };
    if timed {
        end.record(gpu.stream())?;
    }
    Ok(())
}
