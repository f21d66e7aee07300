//! A split kernel being run ([`Barrier::MultiLaunch`](crate::Barrier::MultiLaunch)): one
//! ordinary launch per segment, in the order the host code `#[grid_phases]` generates
//! decides. The end of a launch is the barrier, so no grid needs to be co-resident. Each
//! backend runs the segments its own way (`cuda::split`, `emu::split`); this is the one place
//! that picks between them.

use crate::buffer::{DeviceBuffer, DeviceScalar};
use crate::core::args::KernelArgs;
use crate::core::device::Backend;
use crate::core::dims::Dim3;
use crate::core::error::{Error, Result};
use crate::core::grid::Grid;
use crate::core::launch::LaunchReport;
use crate::cuda::{CudaGpu, CudaSplitRun};
use crate::emu::EmuSplitRun;
use std::time::{Duration, Instant};

/// A split kernel being run. Created by [`Gpu::begin_split`](crate::Gpu::begin_split); the
/// generated host code launches segments and reads device values through it, and the runtime
/// then calls [`finish`](Self::finish).
///
/// On CUDA it holds the GPU's status word for the whole run, so other launches on the same
/// [`Gpu`](crate::Gpu) wait until it is finished or dropped. Dropping it waits for the
/// launches made so far, so that the buffers they use stay borrowed until the device is done
/// with them. On the emulator every launch has finished when [`launch`](Self::launch)
/// returns.
pub struct SplitRun<'g> {
    runner: Runner<'g>,
    /// The kernel's name, for the deadline's error.
    kernel: &'static str,
    /// When the run began, and how long it may take ([`Launch::deadline`](crate::Launch::deadline)).
    started: Instant,
    deadline: Option<Duration>,
    /// The launches queued so far.
    launches: u32,
}

/// The backend's split run.
pub(crate) enum Runner<'g> {
    Cuda(CudaSplitRun<'g>),
    Emulator(EmuSplitRun<'g>),
}

impl<'g> SplitRun<'g> {
    pub(crate) fn new(runner: Runner<'g>, kernel: &'static str, deadline: Option<Duration>) -> Self {
        SplitRun { runner, kernel, started: Instant::now(), deadline, launches: 0 }
    }

    /// Blocks per launch.
    pub fn blocks(&self) -> u32 {
        self.grid().blocks
    }

    /// Threads per block.
    pub fn threads(&self) -> u32 {
        self.grid().threads
    }

    /// The grid's extent per axis: [`blocks`](Self::blocks) blocks in all.
    pub fn grid_shape(&self) -> Dim3 {
        self.grid().grid_shape
    }

    /// The block's extent per axis: [`threads`](Self::threads) threads in all.
    pub fn block_shape(&self) -> Dim3 {
        self.grid().block_shape
    }

    /// The PE this run's GPU is in its team, for host code that reads `pe()`: 0 outside a
    /// team.
    pub fn pe(&self) -> u32 {
        self.place().0
    }

    /// The number of PEs of this run's team, for host code that reads `n_pes()`: 1 outside
    /// a team.
    pub fn n_pes(&self) -> u32 {
        self.place().1
    }

    fn place(&self) -> (u32, u32) {
        match &self.runner {
            Runner::Cuda(cuda) => cuda.place(),
            Runner::Emulator(emulator) => emulator.place(),
        }
    }

    fn grid(&self) -> Grid {
        match &self.runner {
            Runner::Cuda(cuda) => cuda.grid(),
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
    ///
    /// Past the launch's deadline it queues nothing and fails with
    /// [`Error::DeadlineExceeded`](crate::Error::DeadlineExceeded), so that host code that
    /// never ends stops as a fused kernel does.
    pub unsafe fn launch(&mut self, segment: usize, args: KernelArgs<'_>) -> Result<()> {
        // A run recorded into a graph runs its host code once, while recording: the deadline
        // bounds the segments of each replay on the GPU instead.
        let recording = matches!(&self.runner, Runner::Cuda(cuda) if cuda.recording());
        if let Some(limit) = self.deadline.filter(|limit| !recording && self.started.elapsed() > *limit) {
            return Err(Error::DeadlineExceeded { kernel: self.kernel.to_owned(), phase: self.launches.max(1), limit });
        }
        self.launches += 1;
        match &mut self.runner {
            // SAFETY: the caller vouches for `args`.
            Runner::Cuda(cuda) => unsafe { cuda.launch(segment, args) },
            Runner::Emulator(emulator) => emulator.launch(segment, args),
        }
    }

    /// The host code passed a `grid_sync()`: on a PE of a team, the PEs cross (docs/barriers.md),
    /// so that no later launch or host read on any PE starts before every PE's launches so far
    /// have finished. Every PE crosses once per `grid_sync()`, whatever segments its own
    /// control flow launched in between (`gpu_sync()` under `pe()`). A `gpu_sync()` needs no
    /// call: the stream orders one GPU's launches. Outside a team it does nothing.
    ///
    /// Fails as a launch does: the GPU's or another PE's error (on the emulator
    /// [`Error::PeFailed`](crate::Error::PeFailed) or [`Error::TeamMismatch`](crate::Error::TeamMismatch)).
    pub fn grid_sync(&mut self) -> Result<()> {
        match &mut self.runner {
            Runner::Cuda(cuda) => cuda.grid_sync(),
            Runner::Emulator(emulator) => emulator.grid_sync(),
        }
    }

    /// Waits for the launches so far and reads `buf[index]`: the host's view of a grid-uniform
    /// load, such as the `flag[0]` of `while flag[0] != 0`.
    ///
    /// `array` and `line` name the access for messages. Fails with
    /// [`Error::OutOfBounds`](crate::Error::OutOfBounds) when `index` is out of range, and
    /// with the kernel's own error when a segment so far reported one, so that a faulty run
    /// stops instead of steering the host by bad data.
    pub fn read<T: DeviceScalar>(&mut self, buf: &DeviceBuffer<T>, index: u64, array: &str, line: u32) -> Result<T> {
        match &mut self.runner {
            Runner::Cuda(cuda) => cuda.read(buf.cuda()?, index, array, line),
            Runner::Emulator(emulator) => emulator.read(buf.emu()?, index, array, line),
        }
    }

    /// Records a host loop's `step_by(0)` on Rust source line `line`, as a segment's loop
    /// records one in the status word: the generated loop runs no iteration, and
    /// [`finish`](Self::finish) fails with [`Error::ZeroStep`](crate::Error::ZeroStep), or
    /// with the fault a segment reported before it (the first fault wins, as in a fused
    /// launch).
    pub fn zero_step(&mut self, line: u32) -> Result<()> {
        match &mut self.runner {
            Runner::Cuda(cuda) => cuda.zero_step(line),
            Runner::Emulator(emulator) => {
                emulator.zero_step(line);
                Ok(())
            }
        }
    }

    /// Ends a run recorded into its `Gpu`'s capture (a `submit` on [`Capture::gpu`](crate::Capture::gpu)):
    /// the copy of its status words joins the graph, which checks them after each replay.
    pub(crate) fn record(self) -> Result<Self> {
        match self.runner {
            Runner::Cuda(cuda) => Ok(SplitRun { runner: Runner::Cuda(cuda.record()?), ..self }),
            Runner::Emulator(_) => Err(Error::WrongBackend { what: "Gpu::capture", backend: Backend::Emulator }),
        }
    }

    /// Whether this is a run that `gpu`'s capture recorded.
    pub(crate) fn recorded_on(&self, gpu: &CudaGpu) -> bool {
        matches!(&self.runner, Runner::Cuda(cuda) if cuda.recorded_on(gpu))
    }

    /// How the recorded run ended in the replay of its graph that just finished.
    pub(crate) fn replayed(&self) -> Result<()> {
        match &self.runner {
            Runner::Cuda(cuda) => cuda.replayed(),
            Runner::Emulator(_) => Err(Error::WrongBackend { what: "Graph::replay", backend: Backend::Emulator }),
        }
    }

    /// Waits for every launch, checks the status word, and reports the run; `gpu_time` spans
    /// the first launch to the last (on the emulator: the wall time of the run).
    pub fn finish(self) -> Result<LaunchReport> {
        match self.runner {
            Runner::Cuda(cuda) => cuda.finish(),
            Runner::Emulator(emulator) => emulator.finish(),
        }
    }
}

impl std::fmt::Debug for SplitRun<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (kernel, backend) = match &self.runner {
            Runner::Cuda(cuda) => (cuda.kernel_name(), "CUDA"),
            Runner::Emulator(emulator) => (emulator.kernel_name(), "CPU emulator"),
        };
        f.debug_struct("SplitRun")
            .field("kernel", &kernel)
            .field("backend", &backend)
            .field("blocks", &self.blocks())
            .field("threads", &self.threads())
            .finish_non_exhaustive()
    }
}
