//! Running a split kernel ([`Barrier::MultiLaunch`]): one ordinary launch per segment, in
//! the order the host code `#[grid_phases]` generates decides. The end of a launch is the
//! barrier, so no grid needs to be co-resident. On the emulator the same driver runs, and
//! each segment launch is a grid run of its own (`emu::segments`).

use std::sync::MutexGuard;

use cudarc::driver::sys::{CUevent_flags, CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaEvent, CudaFunction, CudaGraph, LaunchConfig};

use crate::barrier::Barrier;
use crate::buffer::{DeviceBuffer, DeviceScalar};
use crate::cuda_gpu::CudaGpu;
use crate::emu::EmuSegmentRun;
use crate::error::{Error, Result};
use crate::gpu::{Device, Gpu};
use crate::health::describe_launch;
use crate::kernel::{KernelArgs, KernelSpec};
use crate::launch::{elapsed, Launch, LaunchReport};
use crate::plan::{check_block_limit, checked_threads, resolve_grid, CoResidency, Grid, Residency};
use crate::scratch::LaunchScratch;
use crate::status::DeviceStatus;

/// A split kernel being run. Created by [`Gpu::begin_segments`]; the generated driver launches
/// segments and reads device values through it, then calls [`finish`](Self::finish).
///
/// On CUDA it holds the GPU's status word for the whole run, so other launches on the same
/// [`Gpu`] wait until it is finished or dropped. Dropping it waits for the launches made so
/// far, so that the buffers they use stay borrowed until the device is done with them. On the
/// emulator every launch has finished when [`launch`](Self::launch) returns.
pub struct SegmentRun<'g> {
    runner: Runner<'g>,
}

/// The backend's split run.
enum Runner<'g> {
    Cuda(CudaSegmentRun<'g>),
    Emulator(EmuSegmentRun<'g>),
}

/// A split run on a CUDA GPU.
struct CudaSegmentRun<'g> {
    gpu: &'g CudaGpu,
    kernel: KernelSpec,
    functions: Vec<CudaFunction>,
    grid: Grid,
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

impl Gpu {
    /// Starts a split run of `kernel`: resolves the grid like a fused launch (by default the
    /// largest co-resident grid of the first segment; larger grids are allowed, since each
    /// segment is a launch of its own), compiles and loads the segment kernels once, and
    /// zeroes the status word.
    ///
    /// Fails with [`Error::CannotSplit`] when the kernel has no split version. On the
    /// emulator, the same checks and errors; the default grid is the emulator's, and each
    /// segment launch runs the segment's emulator body
    /// ([`SplitSpec::emulated`](crate::SplitSpec::emulated)) as a grid of its own.
    pub fn begin_segments(&self, kernel: &KernelSpec, launch: &Launch) -> Result<SegmentRun<'_>> {
        let runner = match self.device() {
            Device::Cuda(cuda) => Runner::Cuda(cuda.health().guard(|| cuda.begin_segments(kernel, launch))?),
            Device::Emulator(emulator) => Runner::Emulator(EmuSegmentRun::begin(self, emulator, kernel, launch)?),
        };
        Ok(SegmentRun { runner })
    }
}

impl CudaGpu {
    /// See [`Gpu::begin_segments`].
    fn begin_segments(&self, kernel: &KernelSpec, launch: &Launch) -> Result<CudaSegmentRun<'_>> {
        let kernel = launch.configure(kernel);
        let threads = checked_threads(self.info(), &kernel, launch.threads_for(&kernel))?;
        let functions = self.segment_kernels(&kernel, threads)?;
        let first = functions.first().ok_or_else(|| no_segments(&kernel))?;
        let residency = self.residency(&kernel, first, threads)?;
        let grid = split_grid(&kernel, launch, threads, residency)?;
        check_block_limit(&kernel, grid, self.info().max_blocks_per_grid, || self.grid_limit_reason())?;
        let capturing = launch.replays_graph();
        self.health().launching(describe_launch(&kernel, grid, Barrier::MultiLaunch));
        let mut scratch = self.lock_scratch();
        scratch.prepare_segments(self.stream())?;
        if capturing {
            // Thread-local mode: only this thread's CUDA calls are captured or forbidden.
            let mode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
            self.stream().begin_capture(mode).map_err(Error::driver("starting a graph capture"))?;
        }
        Ok(CudaSegmentRun {
            gpu: self,
            kernel,
            functions,
            grid,
            scratch,
            start: None,
            capturing,
            graph: None,
            host_fault: None,
        })
    }

    /// The first segment kernel, whose occupancy stands for the split kernel's.
    pub(crate) fn first_segment(&self, kernel: &KernelSpec, threads: u32) -> Result<CudaFunction> {
        self.segment_kernels(kernel, threads)?.into_iter().next().ok_or_else(|| no_segments(kernel))
    }

    /// The loaded segment kernels, or why the kernel cannot be split.
    fn segment_kernels(&self, kernel: &KernelSpec, threads: u32) -> Result<Vec<CudaFunction>> {
        check_split(kernel)?;
        self.segment_functions(kernel, threads)
    }
}

impl SegmentRun<'_> {
    /// Blocks per launch.
    pub fn blocks(&self) -> u32 {
        self.grid().blocks
    }

    /// Threads per block.
    pub fn threads(&self) -> u32 {
        self.grid().threads
    }

    fn grid(&self) -> Grid {
        match &self.runner {
            Runner::Cuda(cuda) => cuda.grid,
            Runner::Emulator(emulator) => emulator.grid(),
        }
    }

    /// Queues one launch of segment `segment`, without waiting for it (on the emulator: runs
    /// it to the end).
    ///
    /// # Safety
    /// `args` must match segment `segment`'s C parameters (the user's parameters, then the
    /// extra scalars the split passes), as the code `#[grid_phases]` generates guarantees.
    /// The buffers behind `args` must stay borrowed until [`finish`](Self::finish).
    pub unsafe fn launch(&mut self, segment: usize, args: KernelArgs<'_>) -> Result<()> {
        match &mut self.runner {
            // SAFETY: the caller vouches for `args`.
            Runner::Cuda(cuda) => {
                let health = cuda.gpu.health();
                health.guard(|| unsafe { cuda.launch(segment, args) })
            }
            Runner::Emulator(emulator) => emulator.launch(segment, args),
        }
    }

    /// Waits for the launches so far and reads `buf[index]`: the host's view of a grid-uniform
    /// load, such as the `flag[0]` of `while flag[0] != 0`.
    ///
    /// `array` and `line` name the access for messages. Fails with [`Error::OutOfBounds`]
    /// when `index` is out of range, and with the kernel's own error when a segment so far
    /// reported one, so that a faulty run stops instead of steering the host by bad data.
    pub fn read<T: DeviceScalar>(&mut self, buf: &DeviceBuffer<T>, index: u64, array: &str, line: u32) -> Result<T> {
        match &mut self.runner {
            Runner::Cuda(cuda) => {
                let health = cuda.gpu.health();
                health.guard(|| cuda.read(buf, index, array, line))
            }
            Runner::Emulator(emulator) => emulator.read(buf, index, array, line),
        }
    }

    /// Records a host loop's `step_by(0)` on Rust source line `line`, as a segment's loop
    /// records one in the status word: the generated loop runs no iteration, and
    /// [`finish`](Self::finish) fails with [`Error::ZeroStep`], or with the fault a segment
    /// reported before it (the first fault wins, as in a fused launch).
    pub fn zero_step(&mut self, line: u32) -> Result<()> {
        match &mut self.runner {
            Runner::Cuda(cuda) => {
                let health = cuda.gpu.health();
                health.guard(|| cuda.zero_step(line))
            }
            Runner::Emulator(emulator) => {
                emulator.zero_step(line);
                Ok(())
            }
        }
    }

    /// Waits for every launch, checks the status word, and reports the run; `gpu_time` spans
    /// the first launch to the last (on the emulator: the wall time of the run).
    pub fn finish(self) -> Result<LaunchReport> {
        match self.runner {
            Runner::Cuda(cuda) => {
                let health = cuda.gpu.health();
                health.guard(|| cuda.finish())
            }
            Runner::Emulator(emulator) => emulator.finish(),
        }
    }
}

impl CudaSegmentRun<'_> {
    /// See [`SegmentRun::launch`].
    ///
    /// # Safety
    /// As [`SegmentRun::launch`].
    unsafe fn launch(&mut self, segment: usize, args: KernelArgs<'_>) -> Result<()> {
        let Some(function) = self.functions.get(segment) else {
            return Err(missing_segment(&self.kernel, segment, self.functions.len()));
        };
        self.gpu.check_buffers(&self.kernel, &args)?;
        let stream = self.gpu.stream();
        let context = format!("launching segment {segment} of kernel `{}`", self.kernel.name);
        if self.start.is_none() && !self.capturing {
            let start = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT));
            self.start = Some(start.map_err(Error::driver(context.as_str()))?);
        }
        let mut builder = stream.launch_builder(function);
        args.push_onto(&mut builder);
        self.scratch.push_trailing_args(&mut builder);
        let config = LaunchConfig {
            grid_dim: (self.grid.blocks, 1, 1),
            block_dim: (self.grid.threads, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the caller vouches for `args`; the scratch words outlive the launch, since
        // `self` holds them until the stream is synchronized.
        unsafe { builder.launch(config) }.map_err(Error::driver(context))?;
        Ok(())
    }

    /// See [`SegmentRun::read`].
    fn read<T: DeviceScalar>(&mut self, buf: &DeviceBuffer<T>, index: u64, array: &str, line: u32) -> Result<T> {
        let index = check_read(&self.kernel, buf.len(), index, array, line)?;
        let stream = self.gpu.stream();
        stream.synchronize().map_err(Error::driver(format!("running kernel `{}`", self.kernel.name)))?;
        self.scratch.read_status(stream)?.into_result(&self.kernel, Barrier::MultiLaunch, None)?;
        self.gpu.read_element(buf, index)
    }

    /// See [`SegmentRun::zero_step`].
    fn zero_step(&mut self, line: u32) -> Result<()> {
        if self.host_fault.is_some() {
            return Ok(());
        }
        let mut first = DeviceStatus::zero_step(line);
        // While capturing, nothing has run yet, and the host's fault is taken as the first.
        if !self.capturing {
            let stream = self.gpu.stream();
            stream.synchronize().map_err(Error::driver(format!("running kernel `{}`", self.kernel.name)))?;
            let device = self.scratch.read_status(stream)?;
            if device != DeviceStatus::default() {
                first = device;
            }
        }
        self.host_fault = Some(first);
        Ok(())
    }

    /// See [`SegmentRun::finish`].
    fn finish(mut self) -> Result<LaunchReport> {
        let stream = self.gpu.stream();
        let running = format!("running kernel `{}`", self.kernel.name);
        if self.capturing {
            self.replay_capture()?;
        }
        let events = match self.start.take() {
            Some(start) => {
                let end = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT));
                Some((start, end.map_err(Error::driver(running.as_str()))?))
            }
            None => None,
        };
        stream.synchronize().map_err(Error::driver(running.as_str()))?;
        let gpu_time = elapsed(events).map_err(Error::driver(running))?;
        let device = self.scratch.read_status(stream)?;
        self.host_fault.unwrap_or(device).into_result(&self.kernel, Barrier::MultiLaunch, None)?;
        Ok(LaunchReport {
            gpu_time,
            blocks: self.grid.blocks,
            threads: self.grid.threads,
            barrier: Barrier::MultiLaunch,
        })
    }
}

impl CudaSegmentRun<'_> {
    /// Ends the capture and launches the graph between the timing events.
    fn replay_capture(&mut self) -> Result<()> {
        self.capturing = false;
        let stream = self.gpu.stream();
        let context = format!("replaying kernel `{}` as a CUDA graph", self.kernel.name);
        let graph = stream.end_capture(CUgraphInstantiate_flags(0)).map_err(Error::driver(context.as_str()))?;
        let Some(graph) = graph else { return Ok(()) };
        // Uploading first keeps the graph's one-time setup out of the timed replay.
        graph.upload().map_err(Error::driver(context.as_str()))?;
        let start = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT));
        self.start = Some(start.map_err(Error::driver(context.as_str()))?);
        let launched = graph.launch().map_err(Error::driver(context));
        self.graph = Some(graph);
        launched
    }
}

impl Drop for CudaSegmentRun<'_> {
    fn drop(&mut self) {
        if self.capturing {
            // An early return mid-capture: discard the capture so the stream works again.
            let _ = self.gpu.stream().end_capture(CUgraphInstantiate_flags(0));
        }
        // After an early return the driver's borrows end here, so the launches must be done.
        // A failure that lost the context is recorded, and every later call reports it.
        if let Err(error) = self.gpu.stream().synchronize() {
            let _ = self.gpu.health().absorb(Error::driver(format!("running kernel `{}`", self.kernel.name))(error));
        }
    }
}

impl std::fmt::Debug for SegmentRun<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (kernel, backend) = match &self.runner {
            Runner::Cuda(cuda) => (cuda.kernel.name, "CUDA"),
            Runner::Emulator(emulator) => (emulator.kernel_name(), "CPU emulator"),
        };
        f.debug_struct("SegmentRun")
            .field("kernel", &kernel)
            .field("backend", &backend)
            .field("blocks", &self.blocks())
            .field("threads", &self.threads())
            .finish_non_exhaustive()
    }
}

/// Refuses a kernel that cannot be split, with the reason the macro gave.
pub(crate) fn check_split(kernel: &KernelSpec) -> Result<()> {
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
    let grid = resolve_grid(
        kernel,
        Barrier::MultiLaunch,
        launch.requested_blocks(),
        threads,
        residency,
        CoResidency::Unchecked,
    )?;
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

/// The driver launched a segment the kernel does not have.
pub(crate) fn missing_segment(kernel: &KernelSpec, segment: usize, count: usize) -> Error {
    let reason = format!("it has no segment {segment} (it has {count}); this is a bug in gsync");
    Error::CannotSplit { kernel: kernel.name.to_owned(), reason }
}

fn no_segments(kernel: &KernelSpec) -> Error {
    Error::CannotSplit {
        kernel: kernel.name.to_owned(),
        reason: "it has no segment kernels; this is a bug in gsync".to_owned(),
    }
}
