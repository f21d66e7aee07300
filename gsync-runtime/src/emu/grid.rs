//! The grid of an emulated launch: its blocks run phase by phase, in parallel on a few host
//! threads, with every `grid_sync()` a point where all of them meet.
//!
//! Within a phase, blocks are independent (they share only relaxed atomic memory, as on a
//! GPU), so each worker claims the next unrun block until none is left. A phase ends when every
//! worker is out of blocks; the barrier the workers then pass orders every write of the phase
//! before every read of the next, as a grid barrier does on a GPU.
//!
//! A block whose threads spin-wait for memory (`wait_until`, a lock) gives its worker back:
//! it is parked and runs again, in the same phase, after the blocks claimed or parked before
//! it had their turn. Every block of a phase thus progresses, as every co-resident block does
//! on a GPU, and a wait that another block ends ends on any number of workers.
//!
//! A watchdog thread watches how long each worker's block has been in its phase (parked time
//! included): past the launch's limit it stops the grid, and raises the flag that ends every
//! emulated thread at its next loop iteration, so that an endless loop cannot hang the launch.

use std::any::Any;
use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};
use std::sync::{Barrier, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use crate::emu::block::{PhaseEnd, Stuck};

/// Why a grid stopped before every block finished.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum GridStop {
    /// A block's threads can never go on, after `grid_syncs` completed grid barriers.
    Stuck { block: u32, why: Stuck, grid_syncs: u32 },
    /// A block finished while others (`waiting` among them) wait at a grid barrier
    /// (`barrier`: `grid_sync()` or `gpu_sync()`), which would hang a GPU.
    FinishedEarly { block: u32, waiting: u32, barrier: &'static str, grid_syncs: u32 },
    /// Every block waits at a grid barrier, some (`team` among them) at `grid_sync()` and
    /// others (`gpu`) at `gpu_sync()`: on a GPU, two barriers that never complete.
    DifferentBarriers { team: u32, gpu: u32, grid_syncs: u32 },
    /// A block ran one phase for longer than the watchdog's limit, after `grid_syncs`
    /// completed grid barriers.
    TimedOut { block: u32, grid_syncs: u32 },
    /// The launch ran longer than its deadline, after `grid_syncs` completed grid barriers.
    DeadlineExceeded { grid_syncs: u32 },
    /// The team the grid spans failed at its meeting after `grid_syncs` completed grid
    /// barriers (the span hook holds the reason).
    TeamStopped { grid_syncs: u32 },
}

/// Where every block of a grid has arrived, as the hook of a grid that spans a team hears it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GridPoint {
    /// Every block waits at `grid_sync()` number `number`.
    GridSync { number: u32 },
    /// Every block has finished.
    Finished,
}

/// The hook through which a grid meets the other grids of a team at each of its
/// [`GridPoint`]s: it returns once they all arrived (true), or failed (false).
pub(crate) type Span<'s> = &'s (dyn Fn(GridPoint) -> bool + Sync);

/// The launch's watchdog: the longest a block may run in one phase, the longest the whole
/// launch may run, and the flag that ends every emulated thread at its next loop iteration.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Watchdog<'a> {
    pub limit: Option<Duration>,
    pub deadline: Option<Duration>,
    pub stop: &'a AtomicBool,
}

impl Watchdog<'_> {
    /// Whether there is anything to watch.
    pub fn watches(&self) -> bool {
        self.limit.is_some() || self.deadline.is_some()
    }
}

/// Why the workers stopped early.
enum Failure {
    /// The grid cannot go on.
    Stopped(GridStop),
    /// A thread panicked, with this payload.
    Panicked(Box<dyn Any + Send>),
}

/// Runs `blocks` blocks on `workers` host threads: `run_phase(block)` runs one block until it
/// reaches `grid_sync()` or finishes, and is called once per block and phase. A panic in
/// `run_phase` stops every worker and then resumes on the calling thread. With a `watchdog`,
/// a block that runs one phase longer than its limit stops the grid with
/// [`GridStop::TimedOut`], whatever else then goes wrong.
#[cfg(test)]
pub(crate) fn run<F>(blocks: u32, workers: usize, watchdog: Option<Watchdog<'_>>, run_phase: &F) -> Result<(), GridStop>
where
    F: Fn(u32) -> Result<PhaseEnd, Stuck> + Sync,
{
    run_spanning(blocks, workers, watchdog, None, run_phase)
}

/// [`run`] for a grid that spans a team: with every block at a `grid_sync()`, or finished,
/// the grid goes on only once `span` says that the team's other grids are there too.
pub(crate) fn run_spanning<F>(
    blocks: u32,
    workers: usize,
    watchdog: Option<Watchdog<'_>>,
    span: Option<Span<'_>>,
    run_phase: &F,
) -> Result<(), GridStop>
where
    F: Fn(u32) -> Result<PhaseEnd, Stuck> + Sync,
{
    let workers = workers.clamp(1, blocks.max(1) as usize);
    let mut grid = Phases::new(blocks, workers, run_phase);
    grid.span = span;
    let finished = AtomicBool::new(false);
    thread::scope(|scope| {
        let (grid, finished) = (&grid, &finished);
        let watcher =
            watchdog.filter(Watchdog::watches).map(|watchdog| scope.spawn(move || grid.watch(watchdog, finished)));
        let helpers: Vec<_> = (1..workers).map(|worker| scope.spawn(move || grid.work(worker))).collect();
        grid.work(0);
        for helper in helpers {
            // A helper's panics are caught in `work`; joining only waits for it.
            let _ = helper.join();
        }
        finished.store(true, Relaxed);
        if let Some(watcher) = watcher {
            watcher.thread().unpark();
        }
    });
    match grid.failure.into_inner().unwrap_or_else(PoisonError::into_inner) {
        None => Ok(()),
        Some(Failure::Stopped(stop)) => Err(stop),
        Some(Failure::Panicked(payload)) => panic::resume_unwind(payload),
    }
}

/// The shared state of the workers of one grid.
struct Phases<'f, F> {
    run_phase: &'f F,
    /// The team's meeting, for a grid that spans one.
    span: Option<Span<'f>>,
    blocks: u32,
    /// The next block to claim in the phase under way.
    next: AtomicU32,
    /// Blocks of the phase under way that reached `grid_sync()`, that reached `gpu_sync()`,
    /// and that finished.
    at_grid_sync: AtomicU32,
    at_gpu_sync: AtomicU32,
    finished: AtomicU32,
    /// A block that finished in the phase under way, for the message if the others did not,
    /// one that reached `grid_sync()` and one that reached `gpu_sync()`.
    a_finished_block: AtomicU32,
    a_waiting_block: AtomicU32,
    a_gpu_waiting_block: AtomicU32,
    /// When the launch started, for the workers' clocks.
    epoch: Instant,
    /// Per worker: nanoseconds after `epoch`, plus 1, when it started the block it runs; 0
    /// while it runs none.
    busy_since: Box<[AtomicU64]>,
    /// Per worker: the block it runs.
    busy_block: Box<[AtomicU32]>,
    /// Per block: nanoseconds after `epoch`, plus 1, when it was first run in the phase
    /// under way.
    phase_started: Box<[AtomicU64]>,
    /// Blocks of the phase under way that spin-wait, in the order they gave their worker back.
    parked: Mutex<VecDeque<u32>>,
    /// Grid barriers completed, `gpu_sync()` included.
    grid_syncs: AtomicU32,
    /// `grid_sync()` barriers completed: the team's meetings.
    crossings: AtomicU32,
    /// Set on the first failure: workers claim no more blocks.
    failed: AtomicBool,
    failure: Mutex<Option<Failure>>,
    /// Whether another phase follows, decided between `phase_end` and `decided`.
    go_on: AtomicBool,
    phase_end: Barrier,
    decided: Barrier,
}

impl<'f, F> Phases<'f, F>
where
    F: Fn(u32) -> Result<PhaseEnd, Stuck> + Sync,
{
    fn new(blocks: u32, workers: usize, run_phase: &'f F) -> Self {
        Phases {
            run_phase,
            span: None,
            blocks,
            next: AtomicU32::new(0),
            at_grid_sync: AtomicU32::new(0),
            at_gpu_sync: AtomicU32::new(0),
            finished: AtomicU32::new(0),
            a_finished_block: AtomicU32::new(0),
            a_waiting_block: AtomicU32::new(0),
            a_gpu_waiting_block: AtomicU32::new(0),
            crossings: AtomicU32::new(0),
            epoch: Instant::now(),
            busy_since: (0..workers).map(|_| AtomicU64::new(0)).collect(),
            busy_block: (0..workers).map(|_| AtomicU32::new(0)).collect(),
            phase_started: (0..blocks).map(|_| AtomicU64::new(0)).collect(),
            parked: Mutex::new(VecDeque::new()),
            grid_syncs: AtomicU32::new(0),
            failed: AtomicBool::new(false),
            failure: Mutex::new(None),
            go_on: AtomicBool::new(false),
            phase_end: Barrier::new(workers),
            decided: Barrier::new(workers),
        }
    }

    /// One worker: runs blocks phase after phase until the grid finishes or fails.
    fn work(&self, worker: usize) {
        loop {
            self.run_blocks(worker);
            if self.phase_end.wait().is_leader() {
                self.decide();
            }
            self.decided.wait();
            if !self.go_on.load(Relaxed) {
                return;
            }
        }
    }

    /// Claims and runs blocks of the phase under way until none is left: first the blocks
    /// not yet run, then the parked ones.
    fn run_blocks(&self, worker: usize) {
        while !self.failed.load(Relaxed) {
            // Parked blocks are claimed once the fresh ones are gone, without counting `next` on.
            let fresh =
                if self.next.load(Relaxed) < self.blocks { self.next.fetch_add(1, Relaxed) } else { self.blocks };
            let block = match fresh {
                fresh if fresh < self.blocks => {
                    self.phase_started[fresh as usize].store(self.nanos() + 1, Relaxed);
                    fresh
                }
                _ => match self.parked.lock().unwrap_or_else(PoisonError::into_inner).pop_front() {
                    Some(parked) => parked,
                    None => return,
                },
            };
            self.busy_block[worker].store(block, Relaxed);
            // Release: the watchdog that reads this start reads this block.
            self.busy_since[worker].store(self.phase_started[block as usize].load(Relaxed), Release);
            // A panicking thread must not leave the other workers waiting at a barrier forever.
            let ran = panic::catch_unwind(AssertUnwindSafe(|| (self.run_phase)(block)));
            self.busy_since[worker].store(0, Relaxed);
            match ran {
                Ok(Ok(PhaseEnd::AtGridSync)) => {
                    self.at_grid_sync.fetch_add(1, Relaxed);
                    self.a_waiting_block.store(block, Relaxed);
                }
                Ok(Ok(PhaseEnd::AtGpuSync)) => {
                    self.at_gpu_sync.fetch_add(1, Relaxed);
                    self.a_gpu_waiting_block.store(block, Relaxed);
                }
                Ok(Ok(PhaseEnd::Finished)) => {
                    self.finished.fetch_add(1, Relaxed);
                    self.a_finished_block.store(block, Relaxed);
                }
                Ok(Ok(PhaseEnd::Spinning)) => {
                    self.parked.lock().unwrap_or_else(PoisonError::into_inner).push_back(block);
                }
                Ok(Err(why)) => {
                    let grid_syncs = self.grid_syncs.load(Relaxed);
                    self.fail(Failure::Stopped(GridStop::Stuck { block, why, grid_syncs }));
                }
                Err(payload) => self.fail(Failure::Panicked(payload)),
            }
        }
    }

    /// Between phases, with every worker waiting: whether the grid goes on, and the counters
    /// reset for the next phase.
    fn decide(&self) {
        let at_grid_sync = self.at_grid_sync.swap(0, Relaxed);
        let at_gpu_sync = self.at_gpu_sync.swap(0, Relaxed);
        let finished = self.finished.swap(0, Relaxed);
        self.next.store(0, Relaxed);
        let go_on = if self.failed.load(Relaxed) {
            false
        } else if finished == self.blocks {
            self.meet(GridPoint::Finished);
            false
        } else if at_grid_sync == self.blocks {
            let number = self.crossings.load(Relaxed) + 1;
            let met = self.meet(GridPoint::GridSync { number });
            if met {
                self.crossings.fetch_add(1, Relaxed);
                self.grid_syncs.fetch_add(1, Relaxed);
            }
            met
        } else if at_gpu_sync == self.blocks {
            // This GPU's blocks only: the team does not meet.
            self.grid_syncs.fetch_add(1, Relaxed);
            true
        } else if at_grid_sync + at_gpu_sync == self.blocks {
            let (team, gpu) = (self.a_waiting_block.load(Relaxed), self.a_gpu_waiting_block.load(Relaxed));
            let grid_syncs = self.grid_syncs.load(Relaxed);
            self.fail(Failure::Stopped(GridStop::DifferentBarriers { team, gpu, grid_syncs }));
            false
        } else {
            let block = self.a_finished_block.load(Relaxed);
            let (waiting, barrier) = if at_grid_sync > 0 {
                (self.a_waiting_block.load(Relaxed), "grid_sync()")
            } else {
                (self.a_gpu_waiting_block.load(Relaxed), "gpu_sync()")
            };
            let grid_syncs = self.grid_syncs.load(Relaxed);
            self.fail(Failure::Stopped(GridStop::FinishedEarly { block, waiting, barrier, grid_syncs }));
            false
        };
        self.go_on.store(go_on, Relaxed);
    }

    /// Meets the team the grid spans at `point`, if it spans one; false (the grid stopped)
    /// if the team failed.
    fn meet(&self, point: GridPoint) -> bool {
        let met = self.span.is_none_or(|span| span(point));
        if !met {
            self.fail(Failure::Stopped(GridStop::TeamStopped { grid_syncs: self.grid_syncs.load(Relaxed) }));
        }
        met
    }

    /// The watchdog: until the workers are `finished`, checks every few milliseconds whether
    /// one has run its block longer than the limit; if so, stops the grid and the threads.
    /// Past the deadline, it stops them whatever the blocks are doing.
    fn watch(&self, watchdog: Watchdog<'_>, finished: &AtomicBool) {
        let nanos = |d: Option<Duration>| d.map_or(u64::MAX, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        let (limit, deadline) = (nanos(watchdog.limit), nanos(watchdog.deadline));
        let shortest = watchdog.limit.into_iter().chain(watchdog.deadline).min().unwrap_or(Duration::from_secs(1));
        let poll = (shortest / 8).clamp(Duration::from_millis(1), Duration::from_millis(50));
        while !finished.load(Relaxed) {
            let now = self.nanos();
            if now > deadline {
                self.fail(Failure::Stopped(GridStop::DeadlineExceeded { grid_syncs: self.grid_syncs.load(Relaxed) }));
                watchdog.stop.store(true, Relaxed);
                return;
            }
            if let Some(block) = self.overrunning_block(now, limit) {
                let stop = GridStop::TimedOut { block, grid_syncs: self.grid_syncs.load(Relaxed) };
                self.fail(Failure::Stopped(stop));
                watchdog.stop.store(true, Relaxed);
                return;
            }
            thread::park_timeout(poll);
        }
    }

    /// A block whose phase has run longer than `limit` nanoseconds at `now`: one a worker
    /// runs, or one parked while it spin-waits. (A spinning block hands its worker back at
    /// every poll, so a watchdog that looked only at the running ones would catch it only
    /// when a sample fell inside one of its short turns.)
    fn overrunning_block(&self, now: u64, limit: u64) -> Option<u32> {
        let overran = |since: u64| since != 0 && now.saturating_sub(since - 1) > limit;
        let running = self.busy_since.iter().zip(&self.busy_block);
        if let Some((_, block)) = running.into_iter().find(|(since, _)| overran(since.load(Acquire))) {
            return Some(block.load(Relaxed));
        }
        let parked = self.parked.lock().unwrap_or_else(PoisonError::into_inner);
        parked.iter().copied().find(|&block| overran(self.phase_started[block as usize].load(Relaxed)))
    }

    /// Nanoseconds since the launch started.
    fn nanos(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Keeps the first failure and stops the grid.
    fn fail(&self, failure: Failure) {
        self.failed.store(true, Relaxed);
        let mut first = self.failure.lock().unwrap_or_else(PoisonError::into_inner);
        first.get_or_insert(failure);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grid whose blocks all finish after `phases` phases, counting the calls.
    fn phases(blocks: u32, workers: usize, phases: u32) -> (Result<(), GridStop>, Vec<u32>) {
        let calls: Vec<AtomicU32> = (0..blocks).map(|_| AtomicU32::new(0)).collect();
        let run_phase = |block: u32| {
            let done = calls[block as usize].fetch_add(1, Relaxed) + 1;
            Ok(if done == phases { PhaseEnd::Finished } else { PhaseEnd::AtGridSync })
        };
        let result = run(blocks, workers, None, &run_phase);
        (result, calls.iter().map(|calls| calls.load(Relaxed)).collect())
    }

    #[test]
    fn every_block_runs_once_per_phase_on_any_number_of_workers() {
        for workers in [1, 2, 3, 16] {
            let (result, calls) = phases(7, workers, 5);
            assert!(result.is_ok(), "{result:?}");
            assert_eq!(calls, [5; 7]);
        }
    }

    #[test]
    fn a_block_finishing_while_others_wait_at_grid_sync_stops_the_grid() {
        let run_phase = |block: u32| Ok(if block == 2 { PhaseEnd::Finished } else { PhaseEnd::AtGridSync });
        let result = run(4, 1, None, &run_phase);
        assert_eq!(
            result,
            Err(GridStop::FinishedEarly { block: 2, waiting: 3, barrier: "grid_sync()", grid_syncs: 0 })
        );
    }

    /// Blocks at `gpu_sync()` go on without the team; blocks split between `grid_sync()` and
    /// `gpu_sync()` stop the grid, as two barriers that never complete would hang a GPU.
    #[test]
    fn gpu_sync_meets_no_team_and_cannot_pair_with_grid_sync() {
        use std::sync::atomic::AtomicUsize;
        let meetings = AtomicUsize::new(0);
        let span = |point: GridPoint| {
            assert_eq!(point, GridPoint::Finished, "only the end meets the team");
            meetings.fetch_add(1, Relaxed);
            true
        };
        let phases: Vec<AtomicU32> = (0..3).map(|_| AtomicU32::new(0)).collect();
        let run_phase = |block: u32| {
            let done = phases[block as usize].fetch_add(1, Relaxed) + 1;
            Ok(if done == 4 { PhaseEnd::Finished } else { PhaseEnd::AtGpuSync })
        };
        assert_eq!(run_spanning(3, 2, None, Some(&span), &run_phase), Ok(()));
        assert_eq!(meetings.load(Relaxed), 1);

        let run_phase = |block: u32| Ok(if block == 1 { PhaseEnd::AtGridSync } else { PhaseEnd::AtGpuSync });
        let result = run(3, 1, None, &run_phase);
        assert!(matches!(result, Err(GridStop::DifferentBarriers { team: 1, grid_syncs: 0, .. })), "{result:?}");
    }

    #[test]
    fn a_stuck_block_stops_the_grid_after_its_phase() {
        let run_phase =
            |block: u32| if block == 1 { Err(Stuck::Deadlock("where".into())) } else { Ok(PhaseEnd::AtGridSync) };
        let result = run(3, 2, None, &run_phase);
        assert!(matches!(&result, Err(GridStop::Stuck { block: 1, grid_syncs: 0, .. })), "{result:?}");
    }

    #[test]
    fn a_panic_in_a_block_resumes_on_the_caller_not_a_hang() {
        let run_phase = |block: u32| -> Result<PhaseEnd, Stuck> {
            if block == 3 {
                panic!("thread body panicked");
            }
            Ok(PhaseEnd::AtGridSync)
        };
        let payload = panic::catch_unwind(|| run(5, 2, None, &run_phase)).expect_err("the panic comes back");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"thread body panicked"));
    }

    /// A block that spins until the watchdog's flag is raised, as an endless loop of
    /// generated code does.
    fn spin_until(stop: &AtomicBool) {
        while !stop.load(Relaxed) {
            std::hint::spin_loop();
        }
    }

    #[test]
    fn a_block_running_past_the_watchdog_limit_stops_the_grid_in_about_the_limit() {
        for workers in [1, 3] {
            let stop = AtomicBool::new(false);
            let watchdog = Watchdog { limit: Some(Duration::from_millis(50)), deadline: None, stop: &stop };
            let phases = AtomicU32::new(0);
            let run_phase = |block: u32| {
                // Block 2 spins in the second phase; the others wait at grid_sync().
                if block == 2 && phases.fetch_add(1, Relaxed) > 0 {
                    spin_until(&stop);
                    return Ok(PhaseEnd::Finished);
                }
                Ok(PhaseEnd::AtGridSync)
            };
            let started = Instant::now();
            let result = run(4, workers, Some(watchdog), &run_phase);
            let took = started.elapsed();
            assert_eq!(result, Err(GridStop::TimedOut { block: 2, grid_syncs: 1 }), "{workers} workers");
            assert!(took < Duration::from_secs(2), "{took:?}");
            assert!(stop.load(Relaxed), "the threads were told to stop");
        }
    }

    #[test]
    fn a_grid_whose_phases_never_end_stops_at_the_deadline() {
        let stop = AtomicBool::new(false);
        let watchdog =
            Watchdog { limit: Some(Duration::from_secs(60)), deadline: Some(Duration::from_millis(50)), stop: &stop };
        // Every phase is short, and every block reaches grid_sync() again, forever.
        let run_phase = |_: u32| Ok(PhaseEnd::AtGridSync);
        let started = Instant::now();
        let result = run(4, 2, Some(watchdog), &run_phase);
        assert!(matches!(result, Err(GridStop::DeadlineExceeded { grid_syncs }) if grid_syncs > 0), "{result:?}");
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
        assert!(stop.load(Relaxed), "the threads were told to stop");
    }

    #[test]
    fn a_spinning_block_gives_its_worker_to_the_block_it_waits_for() {
        // One worker: block 0 spins until block 2, claimed after it, has run.
        let block_2_ran = AtomicBool::new(false);
        let turns = AtomicU32::new(0);
        let run_phase = |block: u32| {
            if block == 2 {
                block_2_ran.store(true, Relaxed);
            }
            if block == 0 && !block_2_ran.load(Relaxed) {
                turns.fetch_add(1, Relaxed);
                return Ok(PhaseEnd::Spinning);
            }
            Ok(PhaseEnd::Finished)
        };
        assert_eq!(run(3, 1, None, &run_phase), Ok(()));
        assert_eq!(turns.load(Relaxed), 1, "block 0 ran again once the others had their turn");
    }

    #[test]
    fn a_block_that_spins_forever_times_out_with_its_parked_time_counted() {
        let stop = AtomicBool::new(false);
        let watchdog = Watchdog { limit: Some(Duration::from_millis(50)), deadline: None, stop: &stop };
        let run_phase = |block: u32| Ok(if block == 1 { PhaseEnd::Spinning } else { PhaseEnd::Finished });
        let started = Instant::now();
        let result = run(3, 2, Some(watchdog), &run_phase);
        assert_eq!(result, Err(GridStop::TimedOut { block: 1, grid_syncs: 0 }));
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    }

    #[test]
    fn blocks_within_the_limit_are_not_stopped() {
        let stop = AtomicBool::new(false);
        let watchdog =
            Watchdog { limit: Some(Duration::from_secs(60)), deadline: Some(Duration::from_secs(60)), stop: &stop };
        let run_phase = |_: u32| Ok(PhaseEnd::Finished);
        assert_eq!(run(8, 2, Some(watchdog), &run_phase), Ok(()));
        assert!(!stop.load(Relaxed));
    }
}
