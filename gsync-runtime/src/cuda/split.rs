//! A split run on a CUDA GPU: one ordinary launch per segment on the GPU's stream, launched
//! directly or captured into a CUDA graph and replayed.

use cudarc::driver::sys::{CUevent_flags, CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaEvent, CudaFunction, CudaGraph, LaunchConfig, PushKernelArg};

use crate::barrier::{limit_ns, Barrier};
use crate::core::args::KernelArgs;
use crate::core::error::{Error, Result};
use crate::core::grid::Grid;
use crate::core::kernel::KernelSpec;
use crate::core::launch::Launch;
use crate::core::launch::LaunchReport;
use crate::core::plan::LaunchPlan;
use crate::core::split::{check_read, missing_segment};
use crate::core::status::DeviceStatus;
use crate::cuda::args::{check_buffers, push_args, push_shared_args};
use crate::cuda::context::CudaGpu;
use crate::cuda::driver_error;
use crate::cuda::health::describe_launch;
use crate::cuda::memory::{CudaBuffer, CudaElement};
use crate::cuda::occupancy::residency;
use crate::cuda::scratch::TakenScratch;
use crate::cuda::timing::elapsed;

/// A split run on a CUDA GPU.
pub(crate) struct CudaSplitRun<'g> {
    gpu: &'g CudaGpu,
    /// The split plan: the kernel build, the grid, the shared slices' layout, the launch
    /// (its watchdog limit bounds the segments' spin-waits) and how the grid was chosen.
    plan: LaunchPlan,
    functions: Vec<CudaFunction>,
    scratch: TakenScratch<'g>,
    /// Recorded just before the first launch.
    start: Option<CudaEvent>,
    /// Whether the launches are being captured into a graph, replayed by `finish`.
    capturing: bool,
    /// Whether the run is recorded into the capture of its `Gpu` (a `submit` on a
    /// [`Capture`](crate::Capture)'s `Gpu`), to run when the graph replays.
    recording: bool,
    /// The replayed graph, kept until the stream has finished it.
    graph: Option<CudaGraph>,
    /// The first fault of the run when the host's own control flow had one: the host's, or
    /// the device's that came before it.
    host_fault: Option<DeviceStatus>,
    /// On a PE of a team: the one-thread kernel launched at each `grid_sync()` between
    /// segments and at the end, which takes the spanning barrier's cross-GPU step
    /// (span_segments.cuh).
    crossing: Option<CudaFunction>,
    /// On a team, the crossings queued so far: one per `grid_sync()` the host code passed.
    crossings: u32,
}

impl<'g> CudaSplitRun<'g> {
    /// Starts the split run `planned` of `kernel` on `gpu`; see
    /// [`Gpu::begin_split`](crate::Gpu::begin_split): loads the segment kernels, allows each
    /// the shared slices' bytes, and prepares the status word. On a PE of a team, it starts
    /// only when every PE's run can ([`Error::TeamRefused`] otherwise), as a fused launch does.
    /// On a `Gpu` under capture, a run that `records` (a `submit`) is recorded into the graph;
    /// any other is refused.
    pub(crate) fn begin(
        gpu: &'g CudaGpu,
        kernel: &KernelSpec,
        launch: &Launch,
        planned: Result<LaunchPlan>,
        records: bool,
    ) -> Result<Self> {
        let recording = gpu.capturing();
        if !records || launch.replays_graph() {
            gpu.refuse_capturing("a blocking split run, or one replayed as a graph of its own (`submit` records one)")?;
        }
        let loaded = planned.and_then(|plan| {
            let functions = load(gpu, &plan)?;
            Ok((plan, functions))
        });
        let (plan, (functions, crossing)) = match gpu.team() {
            None => loaded?,
            Some(team) => {
                // PEs start apart by whatever host work each does in between: the deadline
                // bounds that.
                let agreed = team.settle(team.agree_to_launch(kernel.name, loaded.is_err(), launch.deadline_limit()));
                let loaded = loaded?;
                if let Some(pe) = agreed? {
                    let reason = format!("see PE {pe}'s own error");
                    return Err(Error::TeamRefused { kernel: kernel.name.to_owned(), pe, reason });
                }
                loaded
            }
        };
        let capturing = plan.launch.replays_graph();
        gpu.health().launching(describe_launch(&plan.kernel, plan.grid, Barrier::MultiLaunch));
        let mut scratch = gpu.take_scratch()?;
        let watchdog = limit_ns(plan.launch.watchdog_limit());
        // Only the crossings between segments wait at a barrier, with the launch's watchdog.
        let crossing_ns = if crossing.is_some() { watchdog } else { 0 };
        let prepared =
            scratch.prepare_split(gpu.stream(), crossing_ns, watchdog, limit_ns(plan.launch.deadline_limit()));
        if recording && prepared.is_err() {
            gpu.poison_capture();
        }
        prepared?;
        if capturing {
            // Thread-local mode: only this thread's CUDA calls are captured or forbidden.
            let mode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
            gpu.stream().begin_capture(mode).map_err(driver_error("starting a graph capture"))?;
        }
        Ok(CudaSplitRun {
            gpu,
            plan,
            functions,
            scratch,
            start: None,
            capturing,
            recording,
            graph: None,
            host_fault: None,
            crossing,
            crossings: 0,
        })
    }

    /// The run's PE and the team's size: `(0, 1)` outside a team.
    pub(crate) fn place(&self) -> (u32, u32) {
        self.gpu.team().map_or((0, 1), |team| (team.pe(), team.n_pes()))
    }

    /// Blocks and threads per launch.
    pub(crate) fn grid(&self) -> Grid {
        self.plan.grid
    }

    /// The kernel's name.
    pub(crate) fn kernel_name(&self) -> &'static str {
        self.plan.kernel.name
    }
}

impl CudaSplitRun<'_> {
    /// See [`SplitRun::launch`].
    ///
    /// # Safety
    /// As [`SplitRun::launch`].
    pub(crate) unsafe fn launch(&mut self, segment: usize, args: KernelArgs<'_>) -> Result<()> {
        let (health, gpu) = (self.gpu.health(), self.gpu);
        // SAFETY: the caller vouches for `args`.
        let launched = settle(gpu, health.guard(|| unsafe { self.launch_segment(segment, args) }));
        if self.recording && launched.is_err() {
            gpu.poison_capture();
        }
        launched
    }

    /// See [`SplitRun::grid_sync`].
    pub(crate) fn grid_sync(&mut self) -> Result<()> {
        if self.crossing.is_none() {
            return Ok(());
        }
        let health = self.gpu.health();
        let context = format!("kernel `{}`, grid_sync() between segments", self.plan.kernel.name);
        health.guard(|| self.cross(&context))
    }

    /// See [`SplitRun::read`].
    pub(crate) fn read<T: CudaElement>(
        &mut self,
        buf: &CudaBuffer<T>,
        index: u64,
        array: &str,
        line: u32,
    ) -> Result<T> {
        let (health, gpu) = (self.gpu.health(), self.gpu);
        settle(gpu, health.guard(|| self.read_value(buf, index, array, line)))
    }

    /// See [`SplitRun::zero_step`].
    pub(crate) fn zero_step(&mut self, line: u32) -> Result<()> {
        let health = self.gpu.health();
        health.guard(|| self.record_zero_step(line))
    }

    /// See [`SplitRun::finish`].
    pub(crate) fn finish(self) -> Result<LaunchReport> {
        if self.recording {
            return Err(Error::Capture {
                reason: "a split run recorded into a graph runs when the graph is replayed: hand it to \
                         Capture::finish and call Graph::replay instead of wait()"
                    .into(),
            });
        }
        let (health, gpu) = (self.gpu.health(), self.gpu);
        settle(gpu, health.guard(|| self.wait_and_report()))
    }

    /// # Safety
    /// As [`SplitRun::launch`].
    unsafe fn launch_segment(&mut self, segment: usize, args: KernelArgs<'_>) -> Result<()> {
        let Some(function) = self.functions.get(segment) else {
            return Err(missing_segment(&self.plan.kernel, segment, self.functions.len()));
        };
        check_buffers(self.gpu, &self.plan.kernel, &args)?;
        let stream = self.gpu.stream();
        let context = format!("launching segment {segment} of kernel `{}`", self.plan.kernel.name);
        if self.start.is_none() && !self.capturing && !self.recording {
            let start = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT));
            self.start = Some(start.map_err(driver_error(context.as_str()))?);
        }
        let mut builder = stream.launch_builder(function);
        push_args(&mut builder, &args);
        push_shared_args(&mut builder, &self.plan.shared);
        self.scratch.push_trailing_args(&mut builder);
        let config = LaunchConfig {
            grid_dim: self.plan.grid.grid_shape.tuple(),
            block_dim: self.plan.grid.block_shape.tuple(),
            shared_mem_bytes: self.plan.shared.driver_bytes(),
        };
        // SAFETY: the caller vouches for `args`; the scratch words outlive the launch, since
        // `self` holds them until the stream is synchronized.
        unsafe { builder.launch(config) }.map_err(driver_error(context))?;
        Ok(())
    }

    /// On a PE of a team, queues the spanning barrier's cross-GPU step after the launches so
    /// far: at every `grid_sync()` the host code passes, and at the end of the run, so that
    /// every PE crosses as many times whatever segments its own control flow launched.
    fn cross(&mut self, context: &str) -> Result<()> {
        let Some(crossing) = &self.crossing else { return Ok(()) };
        let mut builder = self.gpu.stream().launch_builder(crossing);
        self.crossings += 1;
        let crossings = self.crossings;
        builder.arg(&crossings);
        self.scratch.push_trailing_args(&mut builder);
        let config = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: the arguments follow the crossing kernel's C parameters (span_segments.cuh);
        // the scratch words outlive the launch, as for the segments.
        unsafe { builder.launch(config) }.map_err(driver_error(format!("{context}: crossing to the other PEs")))?;
        Ok(())
    }

    fn read_value<T: CudaElement>(&mut self, buf: &CudaBuffer<T>, index: u64, array: &str, line: u32) -> Result<T> {
        if self.recording {
            self.gpu.poison_capture();
            return Err(Error::Capture {
                reason: format!(
                    "the split form of kernel `{}` reads `{array}` on the host (line {line}) to decide what to \
                     launch next, which a graph cannot replay; record its fused form, or run this split kernel \
                     outside the capture",
                    self.plan.kernel.name
                ),
            });
        }
        let index = check_read(&self.plan.kernel, buf.len(), index, array, line)?;
        let stream = self.gpu.stream();
        stream.synchronize().map_err(driver_error(format!("running kernel `{}`", self.plan.kernel.name)))?;
        self.scratch.read_status(stream)?.into_result(
            &self.plan.kernel,
            Barrier::MultiLaunch,
            self.plan.launch.watchdog_limit(),
        )?;
        buf.read(self.gpu, index)
    }

    fn record_zero_step(&mut self, line: u32) -> Result<()> {
        if self.host_fault.is_some() {
            return Ok(());
        }
        let mut first = DeviceStatus::zero_step(line);
        // While capturing, nothing has run yet, and the host's fault is taken as the first.
        if !self.capturing && !self.recording {
            let stream = self.gpu.stream();
            stream.synchronize().map_err(driver_error(format!("running kernel `{}`", self.plan.kernel.name)))?;
            let device = self.scratch.read_status(stream)?;
            if device != DeviceStatus::default() {
                first = device;
            }
        }
        self.host_fault = Some(first);
        Ok(())
    }

    fn wait_and_report(mut self) -> Result<LaunchReport> {
        let stream = self.gpu.stream();
        let running = format!("running kernel `{}`", self.plan.kernel.name);
        // On a team the run ends with a crossing too, as the emulated team's run ends with a
        // meeting: the other PEs' puts of the last segment must have landed when the run
        // returns. Every PE makes it, launches or none.
        self.cross(&running)?;
        if self.capturing {
            self.replay_capture()?;
        }
        let events = match self.start.take() {
            Some(start) => {
                let end = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT));
                Some((start, end.map_err(driver_error(running.as_str()))?))
            }
            None => None,
        };
        stream.synchronize().map_err(driver_error(running.as_str()))?;
        let gpu_time = elapsed(events).map_err(driver_error(running))?;
        let device = self.scratch.read_status(stream)?;
        self.host_fault.unwrap_or(device).into_result(
            &self.plan.kernel,
            Barrier::MultiLaunch,
            self.plan.launch.watchdog_limit(),
        )?;
        Ok(self.plan.report(gpu_time, None))
    }
}

impl CudaSplitRun<'_> {
    /// Ends a run recorded into its `Gpu`'s capture: the copy of its status words joins the
    /// graph, whose replays run it. A fault its host code met while recording (a zero step)
    /// is returned now, and the capture is spoiled.
    pub(crate) fn record(mut self) -> Result<Self> {
        let gpu = self.gpu;
        let recorded = match self.host_fault {
            Some(fault) => {
                fault.into_result(&self.plan.kernel, Barrier::MultiLaunch, self.plan.launch.watchdog_limit())
            }
            None => self.scratch.queue_captured_status_copy(gpu.stream()),
        };
        if let Err(error) = recorded {
            gpu.poison_capture();
            return Err(error);
        }
        gpu.note_captured();
        Ok(self)
    }

    /// Whether this run is being recorded into its `Gpu`'s capture.
    pub(crate) fn recording(&self) -> bool {
        self.recording
    }

    /// Whether this run was recorded into `gpu`'s capture.
    pub(crate) fn recorded_on(&self, gpu: &CudaGpu) -> bool {
        self.recording && std::ptr::eq(self.gpu, gpu)
    }

    /// How the recorded run ended in the replay of its graph that the stream has just
    /// finished: its status words, decoded.
    pub(crate) fn replayed(&self) -> Result<()> {
        let watchdog = self.plan.launch.watchdog_limit();
        self.scratch.status_copy().into_result(&self.plan.kernel, Barrier::MultiLaunch, watchdog)
    }
}

/// The segment kernels of `plan`, each allowed the shared slices' bytes, and on a PE of a
/// team the crossing kernel between them.
fn load(gpu: &CudaGpu, plan: &LaunchPlan) -> Result<(Vec<CudaFunction>, Option<CudaFunction>)> {
    let (kernel, threads) = (&plan.kernel, plan.grid.threads);
    let (functions, crossing) = gpu.segment_functions(kernel, threads)?;
    // Every segment takes the shared slices' bytes, and is allowed them here (the plan asked
    // for the first).
    for function in functions.iter().skip(1) {
        residency(gpu, kernel, function, threads, &plan.shared)?;
    }
    Ok((functions, crossing))
}

/// `ran`, a step of a split run on `gpu`, passed on; on a PE of a team a failure may break the
/// team, as a fused launch's does.
fn settle<T>(gpu: &CudaGpu, ran: Result<T>) -> Result<T> {
    match gpu.team() {
        Some(team) => team.settle(ran),
        None => ran,
    }
}

impl CudaSplitRun<'_> {
    /// Ends the capture and launches the graph between the timing events.
    fn replay_capture(&mut self) -> Result<()> {
        self.capturing = false;
        let stream = self.gpu.stream();
        let context = format!("replaying kernel `{}` as a CUDA graph", self.plan.kernel.name);
        let graph = stream.end_capture(CUgraphInstantiate_flags(0)).map_err(driver_error(context.as_str()))?;
        let Some(graph) = graph else { return Ok(()) };
        // Uploading first keeps the graph's one-time setup out of the timed replay.
        graph.upload().map_err(driver_error(context.as_str()))?;
        let start = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT));
        self.start = Some(start.map_err(driver_error(context.as_str()))?);
        let launched = graph.launch().map_err(driver_error(context));
        self.graph = Some(graph);
        launched
    }
}

impl Drop for CudaSplitRun<'_> {
    fn drop(&mut self) {
        // A recorded run owes the stream nothing: its graph waits for its replays.
        if self.recording {
            return;
        }
        if self.capturing {
            // An early return mid-capture: discard the capture so the stream works again.
            let _ = self.gpu.stream().end_capture(CUgraphInstantiate_flags(0));
        }
        // After an early return the driver's borrows end here, so the launches must be done.
        // A failure that lost the context is recorded, and every later call reports it.
        if let Err(error) = self.gpu.stream().synchronize() {
            let _ =
                self.gpu.health().absorb(driver_error(format!("running kernel `{}`", self.plan.kernel.name))(error));
        }
    }
}
