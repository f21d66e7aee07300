//! A split run on a CUDA GPU: one ordinary launch per segment on the GPU's stream, launched
//! directly or captured into a CUDA graph and replayed.

use std::sync::MutexGuard;

use cudarc::driver::sys::{CUevent_flags, CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaEvent, CudaFunction, CudaGraph, LaunchConfig};

use crate::barrier::{limit_ns, Barrier};
use crate::core::args::KernelArgs;
use crate::core::error::Result;
use crate::core::grid::Grid;
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
use crate::cuda::scratch::LaunchScratch;
use crate::cuda::timing::elapsed;

/// A split run on a CUDA GPU.
pub(crate) struct CudaSplitRun<'g> {
    gpu: &'g CudaGpu,
    /// The split plan: the kernel build, the grid, the shared slices' layout, the launch
    /// (its watchdog limit bounds the segments' spin-waits) and how the grid was chosen.
    plan: LaunchPlan,
    functions: Vec<CudaFunction>,
    scratch: MutexGuard<'g, LaunchScratch>,
    /// Recorded just before the first launch.
    start: Option<CudaEvent>,
    /// Whether the launches are being captured into a graph, replayed by `finish`.
    capturing: bool,
    /// The replayed graph, kept until the stream has finished it.
    graph: Option<CudaGraph>,
    /// The first fault of the run when the host's own control flow had one: the host's, or
    /// the device's that came before it.
    host_fault: Option<DeviceStatus>,
}

impl<'g> CudaSplitRun<'g> {
    /// Starts the split run `plan` on `gpu`; see [`Gpu::begin_split`](crate::Gpu::begin_split):
    /// loads the segment kernels, allows each the shared slices' bytes, and prepares the
    /// status word.
    pub(crate) fn begin(gpu: &'g CudaGpu, plan: LaunchPlan) -> Result<Self> {
        let (kernel, grid, threads) = (plan.kernel, plan.grid, plan.grid.threads);
        let functions = gpu.segment_functions(&kernel, threads)?;
        // Every segment takes the shared slices' bytes, and is allowed them here (the plan
        // asked for the first).
        for function in functions.iter().skip(1) {
            residency(gpu, &kernel, function, threads, &plan.shared)?;
        }
        let capturing = plan.launch.replays_graph();
        gpu.health().launching(describe_launch(&kernel, grid, Barrier::MultiLaunch));
        let mut scratch = gpu.lock_scratch();
        let watchdog = plan.launch.watchdog_limit();
        scratch.prepare_split(gpu.stream(), limit_ns(watchdog), limit_ns(plan.launch.deadline_limit()))?;
        if capturing {
            // Thread-local mode: only this thread's CUDA calls are captured or forbidden.
            let mode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
            gpu.stream().begin_capture(mode).map_err(driver_error("starting a graph capture"))?;
        }
        Ok(CudaSplitRun { gpu, plan, functions, scratch, start: None, capturing, graph: None, host_fault: None })
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
        let health = self.gpu.health();
        // SAFETY: the caller vouches for `args`.
        health.guard(|| unsafe { self.launch_segment(segment, args) })
    }

    /// See [`SplitRun::read`].
    pub(crate) fn read<T: CudaElement>(
        &mut self,
        buf: &CudaBuffer<T>,
        index: u64,
        array: &str,
        line: u32,
    ) -> Result<T> {
        let health = self.gpu.health();
        health.guard(|| self.read_value(buf, index, array, line))
    }

    /// See [`SplitRun::zero_step`].
    pub(crate) fn zero_step(&mut self, line: u32) -> Result<()> {
        let health = self.gpu.health();
        health.guard(|| self.record_zero_step(line))
    }

    /// See [`SplitRun::finish`].
    pub(crate) fn finish(self) -> Result<LaunchReport> {
        let health = self.gpu.health();
        health.guard(|| self.wait_and_report())
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
        if self.start.is_none() && !self.capturing {
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

    fn read_value<T: CudaElement>(&mut self, buf: &CudaBuffer<T>, index: u64, array: &str, line: u32) -> Result<T> {
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
        if !self.capturing {
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
