//! A launch on the CPU emulator, from the launch configuration to the report; what
//! [`Gpu::emulate`](crate::Gpu::emulate) runs.

use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use crate::barrier::Barrier;
use crate::core::dynamic_shared::{check_dynamic_shared, DynamicShared, SharedLayout};
use crate::core::error::{Error, Result};
use crate::core::grid::{
    check_block_limit, checked_threads, resolve_barrier, resolve_grid, CoResidency, Grid, Residency,
};
use crate::core::kernel::KernelSpec;
use crate::core::launch::{Launch, LaunchReport};
use crate::core::profile::{BlockRecorder, PhaseProfile, ProfileClock};
use crate::core::shape::untuned_choice;
use crate::emu::block::{BlockRun, PhaseEnd, Stuck};
use crate::emu::fault::Faults;
use crate::emu::grid::{self, GridStop, Watchdog};
use crate::emu::thread::ThreadCtx;
use crate::emu::warp::BlockSync;
use crate::emu::{max_grid_blocks, Emulator, ThreadFuture, MAX_GRID_BLOCKS, MAX_GRID_THREADS};

/// Blocks per host core in an emulated grid when the launch does not say.
pub(super) const BLOCKS_PER_CORE: u32 = 4;

/// A fused launch on the emulator, as the generated emulator body sees it: the kernel and
/// launch to run.
#[doc(hidden)]
pub struct EmuLaunch<'r> {
    emulator: &'r Emulator,
    kernel: &'r KernelSpec,
    launch: &'r Launch,
}

impl<'r> EmuLaunch<'r> {
    pub(crate) fn new(emulator: &'r Emulator, kernel: &'r KernelSpec, launch: &'r Launch) -> Self {
        EmuLaunch { emulator, kernel, launch }
    }

    /// Threads per block of the launch, which sizes the shared arrays sized by `BLOCK_SIZE`;
    /// the launch's error where its shape is refused.
    pub fn block_size(&self) -> Result<u32> {
        let kernel = self.launch.configure(self.kernel);
        Ok(resolve(self.emulator, &kernel, self.launch)?.0.threads)
    }

    /// Runs the kernel's threads, like [`Gpu::emulate`](crate::Gpu::emulate): `make_shared`
    /// builds a block's shared arrays, `body` one thread's future.
    pub fn run<S, MakeShared, Body>(&self, make_shared: MakeShared, body: Body) -> Result<LaunchReport>
    where
        S: Sync,
        MakeShared: Fn() -> S,
        Body: for<'a> Fn(&'a ThreadCtx<'a>, &'a S) -> ThreadFuture<'a> + Sync,
    {
        run(self.emulator, self.kernel, self.launch, make_shared, body)
    }

    /// [`run`](Self::run) for a kernel with shared slices, which `shared` lays out for the
    /// launch's block size (refusing, as a GPU does, slices beyond the device's opt-in
    /// maximum): `make_shared` gets their lengths.
    pub fn run_shared<S, MakeShared, Body>(
        &self,
        shared: &DynamicShared,
        make_shared: MakeShared,
        body: Body,
    ) -> Result<LaunchReport>
    where
        S: Sync,
        MakeShared: Fn(&[u64]) -> S,
        Body: for<'a> Fn(&'a ThreadCtx<'a>, &'a S) -> ThreadFuture<'a> + Sync,
    {
        let kernel = self.launch.configure(self.kernel);
        let (grid, _) = resolve(self.emulator, &kernel, self.launch)?;
        let lens = check_shared(self.emulator, &kernel, grid.threads, shared)?.lens;
        run(self.emulator, self.kernel, self.launch, || make_shared(&lens), body)
    }
}

/// The shared slices of `shared` laid out for blocks of `threads`, checked against the
/// emulator's opt-in maximum beside the kernel's static shared arrays, as a GPU checks them.
pub(crate) fn check_shared(
    emulator: &Emulator,
    kernel: &KernelSpec,
    threads: u32,
    shared: &DynamicShared,
) -> Result<SharedLayout> {
    let layout = shared.layout(kernel, threads)?;
    check_dynamic_shared(kernel, emulator.info(), threads, shared.static_bytes(), &layout)?;
    Ok(layout)
}

impl std::fmt::Debug for EmuLaunch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmuLaunch")
            .field("kernel", &self.kernel.name)
            .field("launch", self.launch)
            .finish_non_exhaustive()
    }
}

/// Runs `kernel` on the emulator: `make_shared` builds one block's shared memory, `body`
/// one thread's future; see [`Gpu::emulate`](crate::Gpu::emulate).
pub(crate) fn run<S, MakeShared, Body>(
    emulator: &Emulator,
    kernel: &KernelSpec,
    launch: &Launch,
    make_shared: MakeShared,
    body: Body,
) -> Result<LaunchReport>
where
    S: Sync,
    MakeShared: Fn() -> S,
    Body: for<'a> Fn(&'a ThreadCtx<'a>, &'a S) -> ThreadFuture<'a> + Sync,
{
    let kernel = launch.configure(kernel);
    let (grid, barrier) = resolve(emulator, &kernel, launch)?;
    let (blocks, threads) = (grid.blocks, grid.threads);
    let started = Instant::now();
    let faults = Faults::new(kernel.bounds_checks);
    let watchdog =
        Some(Watchdog { limit: launch.watchdog_limit(), deadline: launch.deadline_limit(), stop: faults.stop_flag() });
    let syncs: Vec<BlockSync> = (0..blocks).map(|_| BlockSync::new(threads)).collect();
    let shared: Vec<S> = (0..blocks).map(|_| make_shared()).collect();
    let ctxs = thread_contexts(grid, &syncs, &faults);
    let recorders: Option<Vec<Mutex<BlockRecorder>>> = kernel
        .profile
        .then(|| (0..blocks).map(|_| Mutex::new(BlockRecorder::new(launch.profile_capacity()))).collect());
    let now = || u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    // Declared after what its futures borrow, so that it is dropped first.
    let runs: Vec<Mutex<Option<BlockRun<'_>>>> = (0..blocks).map(|_| Mutex::new(None)).collect();
    // Per block: whether it gave its worker back to spin, so that running it again resumes
    // its phase rather than starting the next one.
    let parked: Vec<AtomicBool> = (0..blocks).map(|_| AtomicBool::new(false)).collect();
    let run_phase = |block: u32| -> std::result::Result<PhaseEnd, Stuck> {
        let index = block as usize;
        let block_ctxs = &ctxs[index * threads as usize..][..threads as usize];
        let mut run = runs[index].lock().unwrap_or_else(PoisonError::into_inner);
        // Each thread's future is boxed once, by the worker that first runs its block.
        let run =
            run.get_or_insert_with(|| BlockRun::new(block_ctxs.iter().map(|ctx| body(ctx, &shared[index])).collect()));
        // A block leaves a grid barrier when a worker runs it again.
        let recorder = recorders.as_ref().map(|recorders| &recorders[index]);
        let resumed = parked[index].load(Relaxed);
        if let (Some(recorder), false) = (recorder, resumed) {
            recorder.lock().unwrap_or_else(PoisonError::into_inner).resume(now());
        }
        let ended = run.run_phase(block_ctxs, &syncs[index]);
        parked[index].store(matches!(ended, Ok(PhaseEnd::Spinning)), Relaxed);
        if let Some(recorder) = recorder {
            let mut recorder = recorder.lock().unwrap_or_else(PoisonError::into_inner);
            match ended {
                Ok(PhaseEnd::AtGridSync) => recorder.arrive(now()),
                Ok(PhaseEnd::Finished) => recorder.finish(now()),
                Ok(PhaseEnd::Spinning) | Err(_) => {}
            }
        }
        ended
    };
    let ran = grid::run(blocks, emulator.info().sm_count as usize, watchdog, &run_phase);
    // The futures reach `faults` through their contexts: they go before it is read.
    drop(runs);
    let ran = ran.map_err(|stop| match stop {
        GridStop::TimedOut { block, .. } => match spin_line(&ctxs, block, threads) {
            Some(line) => Error::SpinTimeout {
                kernel: kernel.name.to_owned(),
                line,
                block,
                limit: launch.watchdog_limit().unwrap_or_default(),
            },
            None => stop_error(&kernel, launch, barrier, stop),
        },
        stop => stop_error(&kernel, launch, barrier, stop),
    });
    if let Err(error @ Error::DeadlineExceeded { .. }) = ran {
        // As on a GPU, a fault the kernel recorded before its deadline is the launch's error.
        faults.into_result(&kernel, barrier)?;
        return Err(error);
    }
    ran?;
    faults.into_result(&kernel, barrier)?;
    let gpu_time = started.elapsed();
    let profile = recorders.map(|recorders| {
        let timelines = (0..blocks)
            .zip(recorders)
            .map(|(block, recorder)| recorder.into_inner().unwrap_or_else(PoisonError::into_inner).timeline(block))
            .collect();
        PhaseProfile::new(kernel.name, barrier, ProfileClock::HostWallTime, launch.profile_capacity(), timelines)
    });
    Ok(LaunchReport { gpu_time, blocks, threads, barrier, choice: untuned_choice(launch), profile })
}

/// The grid and barrier of a fused launch of `kernel` (as `launch` configures it): the
/// requested grid, else [`BLOCKS_PER_CORE`] blocks per host core within the barrier's limit.
/// No shape is tuned here: the host's timing says nothing about a GPU's.
pub(crate) fn resolve(emulator: &Emulator, kernel: &KernelSpec, launch: &Launch) -> Result<(Grid, Barrier)> {
    let threads = checked_threads(emulator.info(), kernel, launch)?;
    // Any grid is co-resident here, but each barrier keeps its own limits, as on a GPU.
    let default_grid = Residency { blocks_per_sm: BLOCKS_PER_CORE, sm_count: emulator.info().sm_count };
    let barrier = resolve_barrier(launch.selected_barrier(), emulator.info(), launch.requested_blocks(), || {
        let limit = (launch.selected_barrier().descriptor().max_blocks)(threads);
        Ok(limit.map_or(default_grid.max_blocks(), |limit| limit.min(default_grid.max_blocks())))
    })?;
    let grid = resolve_grid(kernel, barrier, launch.requested_blocks(), threads, default_grid, CoResidency::Waived)?
        .shaped_by(launch);
    check_block_limit(kernel, grid, max_grid_blocks(threads), grid_limit_reason)?;
    Ok((grid, barrier))
}

/// The Rust line of a spin-wait that a thread of `block` waits in, if one does.
fn spin_line(ctxs: &[ThreadCtx<'_>], block: u32, threads: u32) -> Option<u32> {
    ctxs[block as usize * threads as usize..][..threads as usize].iter().find_map(ThreadCtx::spinning_at)
}

/// Every thread's context, block after block.
fn thread_contexts<'a>(grid: Grid, syncs: &'a [BlockSync], faults: &'a Faults) -> Vec<ThreadCtx<'a>> {
    let (blocks, threads) = (grid.blocks, grid.threads);
    let mut ctxs = Vec::with_capacity(blocks as usize * threads as usize);
    for (block, sync) in (0..blocks).zip(syncs) {
        ctxs.extend((0..threads).map(|thread| {
            ThreadCtx::new((thread, block), (blocks, threads), sync, faults)
                .with_shapes(grid.grid_shape, grid.block_shape)
        }));
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
        GridStop::DeadlineExceeded { grid_syncs } => Error::DeadlineExceeded {
            kernel,
            phase: grid_syncs + 1,
            limit: launch.deadline_limit().unwrap_or_default(),
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
