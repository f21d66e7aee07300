//! A launch on the CPU emulator, from a finished plan to the report; what
//! [`Gpu::emulate`](crate::Gpu::emulate) runs.

use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::barrier::Barrier;
use crate::core::config::ConfigChoice;
use crate::core::dynamic_shared::DynamicShared;
use crate::core::error::{Error, Result};
use crate::core::grid::{CoResidency, Grid};
use crate::core::kernel::KernelSpec;
use crate::core::launch::{Launch, LaunchReport};
use crate::core::plan::resolve;
use crate::core::plan::LaunchPlan;
use crate::core::profile::{BlockRecorder, PhaseProfile, ProfileClock};
use crate::emu::block::{BlockRun, PhaseEnd, Stuck};
use crate::emu::fault::Faults;
use crate::emu::grid::{self, GridPoint, GridStop, Watchdog};
use crate::emu::team::{LaunchPoint, Step, TeamMember};
use crate::emu::thread::ThreadCtx;
use crate::emu::warp::BlockSync;
use crate::emu::{Emulator, ThreadFuture};

/// A fused launch on the emulator, as the generated emulator body sees it: the plan to run, or
/// the launch that was refused.
#[doc(hidden)]
pub struct EmuLaunch<'r> {
    emulator: &'r Emulator,
    plan: Refusable<'r>,
    /// The launch's number among its PE's launches, on a PE of a team.
    team_launch: Option<u64>,
}

/// A plan, or what was refused: resolved again to return its error (an [`Error`] is not
/// `Clone`, and generated code asks at most once).
enum Refusable<'r> {
    Planned(Box<LaunchPlan>),
    Refused {
        kernel: &'r KernelSpec,
        launch: &'r Launch,
        shared: DynamicShared,
    },
    /// The team refused the launch, or failed to agree on it.
    TeamRefused(Mutex<Option<Error>>),
}

impl<'r> EmuLaunch<'r> {
    /// The launch of `kernel` with `launch` and the shared slices `shared`, planned now.
    pub(crate) fn new(
        emulator: &'r Emulator,
        kernel: &'r KernelSpec,
        launch: &'r Launch,
        shared: DynamicShared,
    ) -> Self {
        let planned = resolve::fused(emulator, kernel, launch, &shared, CoResidency::Waived, launch.untuned_choice());
        let team = emulator.team().map(TeamLaunch::next);
        let agreed = team.map_or(Ok(()), |team| team.agree_to_start(kernel, launch, planned.as_ref().err()));
        let team_launch = team.map(|team| team.number);
        let plan = match (planned, agreed) {
            (Ok(plan), Ok(())) => Refusable::Planned(Box::new(plan)),
            (Err(_), _) => Refusable::Refused { kernel, launch, shared },
            (Ok(_), Err(error)) => Refusable::TeamRefused(Mutex::new(Some(error))),
        };
        EmuLaunch { emulator, plan, team_launch }
    }

    fn plan(&self) -> Result<&LaunchPlan> {
        match &self.plan {
            Refusable::Planned(plan) => Ok(plan),
            Refusable::Refused { kernel, launch, shared } => {
                let choice = ConfigChoice::Default;
                Err(resolve::fused(self.emulator, kernel, launch, shared, CoResidency::Waived, choice)
                    .err()
                    .unwrap_or_else(|| Error::EmptyGrid { kernel: kernel.name.to_owned() }))
            }
            Refusable::TeamRefused(error) => {
                Err(error.lock().unwrap_or_else(PoisonError::into_inner).take().unwrap_or_else(|| Error::InvalidTeam {
                    reason: "the launch's refusal was already returned".into(),
                }))
            }
        }
    }

    /// The team launch this is, on a PE of a team.
    fn team(&self) -> Option<TeamLaunch<'_>> {
        Some(TeamLaunch { member: self.emulator.team()?, number: self.team_launch? })
    }

    /// The launch's PE, if it runs on a PE of a team.
    pub(crate) fn member(&self) -> Option<&TeamMember> {
        self.emulator.team()
    }

    /// The kernel's name.
    pub(crate) fn kernel_name(&self) -> &'static str {
        match &self.plan {
            Refusable::Planned(plan) => plan.kernel.name,
            Refusable::Refused { kernel, .. } => kernel.name,
            Refusable::TeamRefused(_) => "(refused)",
        }
    }

    /// Threads per block of the launch, which sizes the shared arrays sized by `BLOCK_SIZE`;
    /// the launch's error where it is refused.
    pub fn block_size(&self) -> Result<u32> {
        Ok(self.plan()?.grid.threads)
    }

    /// Runs the kernel's threads, like [`Gpu::emulate`](crate::Gpu::emulate): `make_shared`
    /// builds a block's shared arrays, `body` one thread's future.
    pub fn run<S, MakeShared, Body>(&self, make_shared: MakeShared, body: Body) -> Result<LaunchReport>
    where
        S: Sync,
        MakeShared: Fn() -> S,
        Body: for<'a> Fn(&'a ThreadCtx<'a>, &'a S) -> ThreadFuture<'a> + Sync,
    {
        run(self.emulator, self.plan()?, self.team(), make_shared, body)
    }

    /// [`run`](Self::run) for a kernel with shared slices, laid out by the plan for the
    /// launch's block size (from the same call's `shared`): `make_shared` gets their lengths.
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
        let _ = shared;
        let plan = self.plan()?;
        run(self.emulator, plan, self.team(), || make_shared(&plan.shared.lens), body)
    }
}

impl std::fmt::Debug for EmuLaunch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plan = match &self.plan {
            Refusable::Planned(plan) => Some(plan),
            Refusable::Refused { .. } | Refusable::TeamRefused(_) => None,
        };
        f.debug_struct("EmuLaunch").field("plan", &plan).finish_non_exhaustive()
    }
}

/// A launch on a PE of a team: the PE, and the launch's number among its launches.
#[derive(Clone, Copy)]
pub(crate) struct TeamLaunch<'t> {
    member: &'t TeamMember,
    number: u64,
}

impl<'t> TeamLaunch<'t> {
    /// The next launch of PE `member`, numbered as every PE numbers it.
    pub(crate) fn next(member: &'t TeamMember) -> Self {
        TeamLaunch { member, number: member.next_launch() }
    }

    /// Every PE says whether it can run this launch of `kernel` (`refused`, its own plan's
    /// error); `Ok` when every other PE can. See [`agree_to_start`].
    pub(crate) fn agree_to_start(&self, kernel: &KernelSpec, launch: &Launch, refused: Option<&Error>) -> Result<()> {
        agree_to_start(self.member, self.number, kernel, launch, refused)
    }

    /// Meets the team at `point` of the launch of `kernel`: `Ok` once every PE is there, else
    /// the error every PE returns (another PE's failure among them).
    pub(crate) fn meet(&self, kernel: &KernelSpec, point: LaunchPoint, limit: Option<Duration>) -> Result<()> {
        let step = Step::Launch { number: self.number, kernel: kernel.name, point };
        let round = self.member.exchange(step, None, limit)?;
        let failed = round.iter().enumerate().find_map(|(pe, c)| match &c.step {
            Step::Launch { point: LaunchPoint::Failed { error }, .. } => Some((pe as u32, error.clone())),
            _ => None,
        });
        match failed {
            Some((pe, error)) if pe != self.member.pe() => {
                Err(Error::PeFailed { pe, kernel: kernel.name.to_owned(), error })
            }
            _ => Ok(()),
        }
    }
}

/// Every PE of `member`'s team says whether it can run launch `number` of `kernel` (its own
/// plan's error, `refused`); `Ok` when every other PE can.
fn agree_to_start(
    member: &TeamMember,
    number: u64,
    kernel: &KernelSpec,
    launch: &Launch,
    refused: Option<&Error>,
) -> Result<()> {
    let point = LaunchPoint::Start { refused: refused.map(ToString::to_string) };
    // PEs start apart by whatever host work each does in between: the deadline bounds that.
    let round = member.exchange(Step::Launch { number, kernel: kernel.name, point }, None, launch.deadline_limit())?;
    let other = round.iter().enumerate().find_map(|(pe, c)| match &c.step {
        Step::Launch { point: LaunchPoint::Start { refused: Some(reason) }, .. } if pe as u32 != member.pe() => {
            Some((pe as u32, reason.clone()))
        }
        _ => None,
    });
    match other {
        Some((pe, reason)) => Err(Error::TeamRefused { kernel: kernel.name.to_owned(), pe, reason }),
        None => Ok(()),
    }
}

/// Runs `plan` on the emulator: `make_shared` builds one block's shared memory, `body` one
/// thread's future; see [`Gpu::emulate`](crate::Gpu::emulate). On a PE of a team, the grid
/// meets the team's other grids at each `grid_sync()` and at its end.
pub(crate) fn run<S, MakeShared, Body>(
    emulator: &Emulator,
    plan: &LaunchPlan,
    team: Option<TeamLaunch<'_>>,
    make_shared: MakeShared,
    body: Body,
) -> Result<LaunchReport>
where
    S: Sync,
    MakeShared: Fn() -> S,
    Body: for<'a> Fn(&'a ThreadCtx<'a>, &'a S) -> ThreadFuture<'a> + Sync,
{
    let (kernel, launch, grid, barrier) = (&plan.kernel, &plan.launch, plan.grid, plan.barrier);
    let (blocks, threads) = (grid.blocks, grid.threads);
    let started = Instant::now();
    let faults = Faults::new(kernel.bounds_checks);
    let watchdog =
        Some(Watchdog { limit: launch.watchdog_limit(), deadline: launch.deadline_limit(), stop: faults.stop_flag() });
    let syncs: Vec<BlockSync> = (0..blocks).map(|_| BlockSync::new(threads)).collect();
    let shared: Vec<S> = (0..blocks).map(|_| make_shared()).collect();
    let place = emulator.team().map_or((0, 1), |member| (member.pe(), member.n_pes()));
    let ctxs = thread_contexts(grid, place, &syncs, &faults);
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
                Ok(PhaseEnd::AtGridSync | PhaseEnd::AtGpuSync) => recorder.arrive(now()),
                Ok(PhaseEnd::Finished) => recorder.finish(now()),
                Ok(PhaseEnd::Spinning) | Err(_) => {}
            }
        }
        ended
    };
    // A team's meeting waits as long as a block may wait at a barrier.
    let meeting_limit = launch.watchdog_limit().or(launch.deadline_limit());
    let team_error: Mutex<Option<Error>> = Mutex::new(None);
    // Set once this PE told the team it stops: it meets the team no more in this launch.
    let left_team = AtomicBool::new(false);
    let meet = |point: GridPoint| {
        let Some(team) = team else { return true };
        if left_team.load(Relaxed) {
            return true;
        }
        let point = match (point, faults.stopping()) {
            // A failed assertion or the deadline stops this PE's grid at this barrier, as on a
            // GPU: the others hear of it here rather than wait for a barrier it never reaches.
            (_, Some(why)) => {
                left_team.store(true, Relaxed);
                LaunchPoint::Failed { error: why }
            }
            (GridPoint::GridSync { number }, None) => LaunchPoint::GridSync { number },
            (GridPoint::Finished, None) => LaunchPoint::Finished,
        };
        let met = team.meet(kernel, point, meeting_limit);
        let ok = met.is_ok();
        if let Err(error) = met {
            team_error.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(error);
        }
        ok
    };
    let ran = grid::run_spanning(blocks, emulator.info().sm_count as usize, watchdog, Some(&meet), &run_phase);
    // The futures reach `faults` through their contexts: they go before it is read.
    drop(runs);
    if let Err(GridStop::TeamStopped { .. }) = ran {
        let error = team_error.into_inner().unwrap_or_else(PoisonError::into_inner);
        return Err(error.unwrap_or_else(|| Error::InvalidTeam { reason: "the team stopped the grid".into() }));
    }
    if let (Err(stop), Some(team), false) = (&ran, team, left_team.load(Relaxed)) {
        // The other PEs wait for this one at its next meeting: tell them why it will not come.
        let error = format!("{stop:?}");
        let _ = team.meet(kernel, LaunchPoint::Failed { error }, meeting_limit);
    }
    let ran = ran.map_err(|stop| match stop {
        GridStop::TimedOut { block, .. } => match spin_line(&ctxs, block, threads) {
            Some(line) => Error::SpinTimeout {
                kernel: kernel.name.to_owned(),
                line,
                block,
                limit: launch.watchdog_limit().unwrap_or_default(),
            },
            None => stop_error(kernel, launch, barrier, stop),
        },
        stop => stop_error(kernel, launch, barrier, stop),
    });
    if let Err(error @ Error::DeadlineExceeded { .. }) = ran {
        // As on a GPU, a fault the kernel recorded before its deadline is the launch's error.
        faults.into_result(kernel, barrier)?;
        return Err(error);
    }
    ran?;
    faults.into_result(kernel, barrier)?;
    let gpu_time = started.elapsed();
    let profile = recorders.map(|recorders| {
        let timelines = (0..blocks)
            .zip(recorders)
            .map(|(block, recorder)| recorder.into_inner().unwrap_or_else(PoisonError::into_inner).timeline(block))
            .collect();
        PhaseProfile::new(kernel.name, barrier, ProfileClock::HostWallTime, launch.profile_capacity(), timelines)
    });
    Ok(plan.report(gpu_time, profile))
}

/// The Rust line of a spin-wait that a thread of `block` waits in, if one does.
fn spin_line(ctxs: &[ThreadCtx<'_>], block: u32, threads: u32) -> Option<u32> {
    ctxs[block as usize * threads as usize..][..threads as usize].iter().find_map(ThreadCtx::spinning_at)
}

/// Every thread's context, block after block.
fn thread_contexts<'a>(
    grid: Grid,
    (pe, n_pes): (u32, u32),
    syncs: &'a [BlockSync],
    faults: &'a Faults,
) -> Vec<ThreadCtx<'a>> {
    let (blocks, threads) = (grid.blocks, grid.threads);
    let mut ctxs = Vec::with_capacity(blocks as usize * threads as usize);
    for (block, sync) in (0..blocks).zip(syncs) {
        ctxs.extend((0..threads).map(|thread| {
            ThreadCtx::new((thread, block), (blocks, threads), sync, faults)
                .with_shapes(grid.grid_shape, grid.block_shape)
                .on_pe(pe, n_pes)
        }));
    }
    ctxs
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
        GridStop::FinishedEarly { block, waiting, barrier: "grid_sync()", grid_syncs } => Error::BarrierMismatch {
            kernel,
            barrier: "grid_sync()",
            first: format!("block {waiting} waits at grid_sync() number {}", grid_syncs + 1),
            second: format!("block {block} finished after {grid_syncs} grid_sync() calls"),
        },
        // The count takes in both grid barriers, `grid_sync()` and `gpu_sync()`.
        GridStop::FinishedEarly { block, waiting, barrier, grid_syncs } => Error::BarrierMismatch {
            kernel,
            barrier,
            first: format!("block {waiting} waits at {barrier}, grid barrier number {}", grid_syncs + 1),
            second: format!("block {block} finished after {grid_syncs} grid barriers"),
        },
        GridStop::DifferentBarriers { team, gpu, grid_syncs } => Error::BarrierMismatch {
            kernel,
            barrier: "grid_sync()",
            first: format!("block {team} waits at grid_sync(), grid barrier number {}", grid_syncs + 1),
            second: format!("block {gpu} waits at gpu_sync(), grid barrier number {}", grid_syncs + 1),
        },
        GridStop::DeadlineExceeded { grid_syncs } => Error::DeadlineExceeded {
            kernel,
            phase: grid_syncs + 1,
            limit: launch.deadline_limit().unwrap_or_default(),
        },
        GridStop::TeamStopped { grid_syncs } => {
            Error::InvalidTeam { reason: format!("the team stopped `{kernel}` after {grid_syncs} grid_sync() calls") }
        }
        GridStop::TimedOut { block, grid_syncs } => Error::KernelTimeout {
            kernel,
            barrier: barrier.to_string(),
            phase: grid_syncs + 1,
            block,
            limit: launch.watchdog_limit().unwrap_or_default(),
        },
    }
}
