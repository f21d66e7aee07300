//! [`Gpu::emulate`]: a launch on the CPU emulator, from the launch configuration to the
//! report.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use crate::emu::block::{BlockRun, BlockSync, PhaseEnd, Stuck};
use crate::emu::fault::Faults;
use crate::emu::grid::{self, GridStop, Watchdog};
use crate::emu::thread::ThreadCtx;
use crate::emu::{max_grid_blocks, Emulator, MAX_GRID_BLOCKS, MAX_GRID_THREADS};
use crate::error::{Error, Result};
use crate::gpu::{Backend, Device, Gpu};
use crate::kernel::KernelSpec;
use crate::launch::{Launch, LaunchReport};
use crate::barrier::Barrier;
use crate::plan::{check_block_limit, checked_threads, resolve_barrier, resolve_grid, CoResidency, Residency};

/// Blocks per host core in an emulated grid when the launch does not say.
pub(super) const BLOCKS_PER_CORE: u32 = 4;

impl Gpu {
    /// Runs a kernel on the emulator: `make_shared` builds one block's shared memory, `body`
    /// one thread's future. The code `#[grid_phases]` generates calls this on an emulator
    /// [`Gpu`]; on a CUDA one it fails with [`Error::WrongBackend`].
    ///
    /// The grid has `launch`'s blocks, by default 4 per host core (the emulator's `sm_count`);
    /// blocks have `launch`'s threads, by default the kernel's, from 1 to 1024. Each block's
    /// threads run as futures polled in turn on one host thread, each until it awaits
    /// [`ThreadCtx::sync_block`], [`ThreadCtx::grid_sync`] or [`ThreadCtx::shuffle`], or
    /// finishes; blocks run in parallel on the host's cores from one `grid_sync()` to the
    /// next. Every device [`Barrier`](crate::Barrier) means this same grid barrier. Threads
    /// that can never meet fail the launch with [`Error::EmulatorDeadlock`] at once, and
    /// threads that disagree on the number of barrier calls with [`Error::BarrierMismatch`].
    /// A block that runs one phase longer than [`Launch::watchdog`] fails it with
    /// [`Error::KernelTimeout`], whatever the barrier. A split kernel
    /// ([`Barrier::MultiLaunch`](crate::Barrier::MultiLaunch)) runs through
    /// [`Gpu::begin_segments`] instead, one such launch per segment.
    ///
    /// Every thread of the grid lives from start to end, so a grid has at most 2^20 threads
    /// and 2^14 blocks; more fail with [`Error::TooManyBlocks`] before anything is allocated.
    ///
    /// Fails after the run with [`Error::OutOfBounds`] for the first access out of bounds
    /// ([`EmuSlice`](crate::EmuSlice) checks every access, whatever the build profile).
    /// `gpu_time` in the report is the wall time of the emulation. A panic in `body`'s
    /// futures (or `make_shared`) resumes on the calling thread once every block has stopped.
    pub fn emulate<S, MakeShared, Body>(
        &self,
        kernel: &KernelSpec,
        launch: &Launch,
        make_shared: MakeShared,
        body: Body,
    ) -> Result<LaunchReport>
    where
        S: Sync,
        MakeShared: Fn() -> S,
        Body: for<'a> Fn(&'a ThreadCtx<'a>, &'a S) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> + Sync,
    {
        let Device::Emulator(emulator) = self.device() else {
            return Err(Error::WrongBackend { what: "Gpu::emulate", backend: Backend::Cuda });
        };
        let kernel = launch.configure(kernel);
        let threads = checked_threads(self.info(), &kernel, launch.threads_for(&kernel))?;
        // Any grid is co-resident here, but each barrier keeps its own limits, as on a GPU.
        let default_grid = Residency { blocks_per_sm: BLOCKS_PER_CORE, sm_count: emulator.info().sm_count };
        let barrier =
            resolve_barrier(launch.selected_barrier(), emulator.info(), launch.requested_blocks(), || {
                Ok(default_grid.max_blocks())
            })?;
        let grid =
            resolve_grid(&kernel, barrier, launch.requested_blocks(), threads, default_grid, CoResidency::Unchecked)?;
        check_block_limit(&kernel, grid, max_grid_blocks(threads), grid_limit_reason)?;
        let blocks = grid.blocks;
        let started = Instant::now();
        let faults = Faults::default();
        let watchdog = launch.watchdog_limit().map(|limit| Watchdog { limit, stop: faults.stop_flag() });
        let syncs: Vec<BlockSync> = (0..blocks).map(|_| BlockSync::new(threads)).collect();
        let shared: Vec<S> = (0..blocks).map(|_| make_shared()).collect();
        let ctxs = thread_contexts(blocks, threads, &syncs, &faults);
        // Declared after what its futures borrow, so that it is dropped first.
        let runs: Vec<Mutex<Option<BlockRun<'_>>>> = (0..blocks).map(|_| Mutex::new(None)).collect();
        let run_phase = |block: u32| -> std::result::Result<PhaseEnd, Stuck> {
            let index = block as usize;
            let block_ctxs = &ctxs[index * threads as usize..][..threads as usize];
            let mut run = runs[index].lock().unwrap_or_else(PoisonError::into_inner);
            // Each thread's future is boxed once, by the worker that first runs its block.
            let run = run
                .get_or_insert_with(|| BlockRun::new(block_ctxs.iter().map(|ctx| body(ctx, &shared[index])).collect()));
            run.run_phase(block_ctxs, &syncs[index])
        };
        let ran = grid::run(blocks, emulator.workers(), watchdog, &run_phase);
        // The futures reach `faults` through their contexts: they go before it is read.
        drop(runs);
        ran.map_err(|stop| stop_error(&kernel, launch, barrier, stop))?;
        faults.into_result(&kernel, barrier)?;
        Ok(LaunchReport { gpu_time: started.elapsed(), blocks, threads, barrier })
    }
}

impl Emulator {
    /// Host threads that run blocks.
    fn workers(&self) -> usize {
        self.info().sm_count as usize
    }
}

/// Every thread's context, block after block.
fn thread_contexts<'a>(blocks: u32, threads: u32, syncs: &'a [BlockSync], faults: &'a Faults) -> Vec<ThreadCtx<'a>> {
    let mut ctxs = Vec::with_capacity(blocks as usize * threads as usize);
    for (block, sync) in (0..blocks).zip(syncs) {
        ctxs.extend((0..threads).map(|thread| ThreadCtx::new((thread, block), (blocks, threads), sync, faults)));
    }
    ctxs
}

/// The device and the reason of the emulator's grid limit, for [`Error::TooManyBlocks`].
pub(super) fn grid_limit_reason() -> (String, String) {
    let why = format!(
        "it keeps every thread of a grid alive from start to end: at most {MAX_GRID_THREADS} threads and \
         {MAX_GRID_BLOCKS} blocks"
    );
    ("the CPU emulator".to_owned(), why)
}

/// The error of a grid that stopped.
fn stop_error(kernel: &KernelSpec, launch: &Launch, barrier: Barrier, stop: GridStop) -> Error {
    let kernel = kernel.name.to_owned();
    match stop {
        GridStop::Stuck { block, why: Stuck::Deadlock(detail), grid_syncs } => {
            Error::EmulatorDeadlock { kernel, block, detail: format!("{detail}, after {grid_syncs} grid_sync() calls") }
        }
        GridStop::Stuck { why: Stuck::Mismatch { barrier, first, second }, .. } => {
            Error::BarrierMismatch { kernel, barrier, first, second }
        }
        GridStop::FinishedEarly { block, waiting, grid_syncs } => Error::BarrierMismatch {
            kernel,
            barrier: "grid_sync()",
            first: format!("block {waiting} waits at grid_sync() number {}", grid_syncs + 1),
            second: format!("block {block} finished after {grid_syncs} grid_sync() calls"),
        },
        GridStop::TimedOut { block, grid_syncs } => Error::KernelTimeout {
            kernel,
            barrier: barrier.to_string(),
            phase: grid_syncs + 1,
            block,
            limit: launch.watchdog_limit().unwrap_or_default(),
        },
    }
}
