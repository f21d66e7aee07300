//! An emulated team: N emulated GPUs in one process, each a PE on a host thread of its own,
//! meeting at every collective step (a launch's start, each spanning `grid_sync()`, its end,
//! a symmetric allocation) as the PEs of a GPU team do.
//!
//! Every collective step is one round of [`Rendezvous::exchange`]: each PE hands in what it
//! is doing and gets what every PE handed in, or an error that every PE sees alike. PEs that
//! disagree (one launches `heat` while another allocates, or one finishes while another waits
//! at `grid_sync()`) fail with [`Error::TeamMismatch`]; a PE that does not arrive within the
//! step's limit fails everyone with [`Error::PeNotArrived`]; a PE whose thread ended (it
//! returned, failed or panicked) fails everyone still waiting with [`Error::PeLeft`]. A
//! failure breaks the team: every later step fails with it at once, as a GPU team whose PE
//! died is of no further use.

use std::any::Any;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::core::error::{Error, Result};

/// What a PE does at a collective step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Allocates symmetric buffer number `number` of `len` elements of `elem`.
    Allocate { number: u64, elem: &'static str, len: usize },
    /// Launch number `number` of `kernel` reached `point`.
    Launch { number: u64, kernel: &'static str, point: LaunchPoint },
}

/// Where a launch meets the other PEs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum LaunchPoint {
    /// Before any block runs: the PE's plan, or why it was refused.
    Start { refused: Option<String> },
    /// Every block of the PE's grid is at `grid_sync()` number `number`.
    GridSync { number: u32 },
    /// A split run's host code passed its `number`-th `grid_sync()`, every launch before it
    /// finished.
    Crossing { number: u32 },
    /// Every block of the PE's grid has finished.
    Finished,
    /// The PE's grid failed with this error's message.
    Failed { error: String },
}

impl Step {
    /// The step as messages name it.
    pub(crate) fn describe(&self) -> String {
        match self {
            Step::Allocate { number, elem, len } => {
                format!("allocates symmetric buffer number {} of {len} {elem}", number + 1)
            }
            Step::Launch { kernel, point, .. } => match point {
                LaunchPoint::Start { .. } => format!("launches `{kernel}`"),
                LaunchPoint::GridSync { number } => format!("waits at grid_sync() number {number} of `{kernel}`"),
                LaunchPoint::Crossing { number } => {
                    format!("passes grid_sync() number {number} between the segments of `{kernel}`")
                }
                LaunchPoint::Finished => format!("finished `{kernel}`"),
                LaunchPoint::Failed { error } => format!("failed in `{kernel}`: {error}"),
            },
        }
    }

    /// Whether two PEs doing `self` and `other` are at the same collective step: the same
    /// launch at the same point (a PE's refusal or failure is its own), or the same
    /// allocation.
    fn agrees_with(&self, other: &Step) -> bool {
        match (self, other) {
            (Step::Launch { number: a, kernel: ka, point: pa }, Step::Launch { number: b, kernel: kb, point: pb }) => {
                a == b
                    && ka == kb
                    && match (pa, pb) {
                        (LaunchPoint::Start { .. }, LaunchPoint::Start { .. }) => true,
                        (LaunchPoint::Failed { .. }, _) | (_, LaunchPoint::Failed { .. }) => true,
                        (pa, pb) => pa == pb,
                    }
            }
            (a, b) => a == b,
        }
    }
}

/// One PE's contribution to a round: its step, and a value handed to every PE (a symmetric
/// allocation's memory).
#[derive(Debug)]
pub(crate) struct Contribution {
    pub step: Step,
    pub payload: Option<Arc<dyn Any + Send + Sync>>,
}

/// What every PE handed in to a round, by PE.
pub(crate) type Round = Arc<Vec<Contribution>>;

/// The meeting point of an emulated team's PEs.
pub(crate) struct Rendezvous {
    n_pes: u32,
    state: Mutex<State>,
    changed: Condvar,
}

struct State {
    /// This round's contributions so far, by PE.
    arrived: Vec<Option<Contribution>>,
    /// Rounds completed; a waiter leaves once it moves on.
    rounds: u64,
    /// The last completed round, until the next completes (a waiter takes it before it can
    /// arrive again, so it is never overwritten unread).
    completed: Option<Round>,
    /// PEs whose thread has ended.
    left: Vec<bool>,
    /// The failure that broke the team, which every later step returns.
    broken: Option<Broken>,
}

/// Why a team broke, kept to fail every later step alike.
#[derive(Clone, Debug)]
enum Broken {
    Mismatch { pe: u32, doing: String, other_pe: u32, other_doing: String },
    NotArrived { pe: u32, missing: Vec<u32>, doing: String, waited: Duration },
    Left { pe: u32, doing: String },
}

impl Broken {
    fn error(&self) -> Error {
        match self.clone() {
            Broken::Mismatch { pe, doing, other_pe, other_doing } => {
                Error::TeamMismatch { pe, doing, other_pe, other_doing }
            }
            Broken::NotArrived { pe, missing, doing, waited } => Error::PeNotArrived { pe, missing, doing, waited },
            Broken::Left { pe, doing } => Error::PeLeft { pe, doing },
        }
    }
}

impl Rendezvous {
    /// The meeting point of `n_pes` PEs.
    pub(crate) fn new(n_pes: u32) -> Self {
        let n = n_pes as usize;
        Rendezvous {
            n_pes,
            state: Mutex::new(State {
                arrived: (0..n).map(|_| None).collect(),
                rounds: 0,
                completed: None,
                left: vec![false; n],
                broken: None,
            }),
            changed: Condvar::new(),
        }
    }

    /// The number of PEs.
    pub(crate) fn n_pes(&self) -> u32 {
        self.n_pes
    }

    /// PE `pe` hands in `contribution` and waits, at most `limit` (`None`: until every PE
    /// arrived or one left), for every PE's; every PE gets the same round, or the same error.
    pub(crate) fn exchange(&self, pe: u32, contribution: Contribution, limit: Option<Duration>) -> Result<Round> {
        let started = Instant::now();
        let mut state = self.lock();
        if let Some(broken) = &state.broken {
            return Err(broken.error());
        }
        let doing = contribution.step.describe();
        state.arrived[pe as usize] = Some(contribution);
        let round = state.rounds;
        if state.arrived.iter().all(Option::is_some) {
            let contributions: Vec<Contribution> =
                state.arrived.iter_mut().map(|c| c.take().expect("all in")).collect();
            if let Some(broken) = disagreement(&contributions) {
                return Err(self.break_team(&mut state, broken));
            }
            state.completed = Some(Arc::new(contributions));
            state.rounds += 1;
            self.changed.notify_all();
            return Ok(state.completed.clone().expect("just completed"));
        }
        loop {
            if let Some(broken) = &state.broken {
                return Err(broken.error());
            }
            if state.rounds > round {
                return Ok(state.completed.clone().expect("a completed round"));
            }
            if let Some(gone) = (0..self.n_pes).find(|&p| state.left[p as usize] && state.arrived[p as usize].is_none())
            {
                let broken = Broken::Left { pe: gone, doing: doing.clone() };
                return Err(self.break_team(&mut state, broken));
            }
            let waited = started.elapsed();
            match limit {
                Some(limit) if waited >= limit => {
                    let missing: Vec<u32> = (0..self.n_pes).filter(|&p| state.arrived[p as usize].is_none()).collect();
                    let broken = Broken::NotArrived { pe: missing[0], missing, doing, waited: limit };
                    return Err(self.break_team(&mut state, broken));
                }
                Some(limit) => {
                    state = self.changed.wait_timeout(state, limit - waited).unwrap_or_else(PoisonError::into_inner).0;
                }
                None => state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner),
            }
        }
    }

    /// Records that PE `pe`'s thread ended: PEs waiting for it fail at once.
    pub(crate) fn leave(&self, pe: u32) {
        let mut state = self.lock();
        state.left[pe as usize] = true;
        self.changed.notify_all();
    }

    /// Breaks the team with `broken`, waking every waiter, and returns its error.
    fn break_team(&self, state: &mut MutexGuard<'_, State>, broken: Broken) -> Error {
        let error = broken.error();
        state.broken.get_or_insert(broken);
        self.changed.notify_all();
        error
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The first two PEs of a full round that are not at the same step, if any.
fn disagreement(contributions: &[Contribution]) -> Option<Broken> {
    let first = &contributions[0].step;
    let (other, step) = contributions.iter().enumerate().skip(1).find(|(_, c)| !first.agrees_with(&c.step))?;
    Some(Broken::Mismatch { pe: 0, doing: first.describe(), other_pe: other as u32, other_doing: step.step.describe() })
}

/// A PE's place in an emulated team, held by its [`Emulator`](crate::emu::Emulator).
pub(crate) struct TeamMember {
    pe: u32,
    rendezvous: Arc<Rendezvous>,
    /// Launches and symmetric allocations so far: each step's number.
    launches: AtomicU64,
    allocations: AtomicU64,
}

impl TeamMember {
    pub(crate) fn new(pe: u32, rendezvous: Arc<Rendezvous>) -> Self {
        TeamMember { pe, rendezvous, launches: AtomicU64::new(0), allocations: AtomicU64::new(0) }
    }

    /// This PE's number.
    pub(crate) fn pe(&self) -> u32 {
        self.pe
    }

    /// The number of PEs of the team.
    pub(crate) fn n_pes(&self) -> u32 {
        self.rendezvous.n_pes()
    }

    /// The number of this PE's next launch.
    pub(crate) fn next_launch(&self) -> u64 {
        self.launches.fetch_add(1, Relaxed)
    }

    /// The number of this PE's next symmetric allocation.
    pub(crate) fn next_allocation(&self) -> u64 {
        self.allocations.fetch_add(1, Relaxed)
    }

    /// The team's meeting point.
    pub(crate) fn rendezvous(&self) -> Arc<Rendezvous> {
        Arc::clone(&self.rendezvous)
    }

    /// Whether this PE belongs to the team that meets at `rendezvous`.
    pub(crate) fn in_team(&self, rendezvous: &Arc<Rendezvous>) -> bool {
        Arc::ptr_eq(&self.rendezvous, rendezvous)
    }

    /// Takes part in a collective step: see [`Rendezvous::exchange`].
    pub(crate) fn exchange(
        &self,
        step: Step,
        payload: Option<Arc<dyn Any + Send + Sync>>,
        limit: Option<Duration>,
    ) -> Result<Round> {
        self.rendezvous.exchange(self.pe, Contribution { step, payload }, limit)
    }
}

impl std::fmt::Debug for TeamMember {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TeamMember").field("pe", &self.pe).field("n_pes", &self.n_pes()).finish_non_exhaustive()
    }
}

impl Drop for TeamMember {
    /// A PE that goes away leaves the team, so that no other PE waits for it.
    fn drop(&mut self) {
        self.rendezvous.leave(self.pe);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;

    fn launch(number: u64, kernel: &'static str, point: LaunchPoint) -> Contribution {
        Contribution { step: Step::Launch { number, kernel, point }, payload: None }
    }

    #[test]
    fn every_pe_gets_every_contribution_round_after_round() {
        let rendezvous = Rendezvous::new(3);
        thread::scope(|scope| {
            for pe in 0..3 {
                let rendezvous = &rendezvous;
                scope.spawn(move || {
                    for sync in 1..=50 {
                        let point = LaunchPoint::GridSync { number: sync };
                        let round = rendezvous.exchange(pe, launch(0, "k", point.clone()), None).expect("agree");
                        assert_eq!(round.len(), 3);
                        assert!(round
                            .iter()
                            .all(|c| c.step == Step::Launch { number: 0, kernel: "k", point: point.clone() }));
                    }
                });
            }
        });
    }

    #[test]
    fn pes_at_different_steps_all_fail_with_the_same_mismatch() {
        let rendezvous = Rendezvous::new(2);
        let errors: Vec<String> = thread::scope(|scope| {
            let a = scope.spawn(|| rendezvous.exchange(0, launch(0, "heat", LaunchPoint::Finished), None));
            let b =
                scope.spawn(|| rendezvous.exchange(1, launch(0, "heat", LaunchPoint::GridSync { number: 3 }), None));
            [a, b].map(|h| h.join().expect("no panic").expect_err("mismatch").to_string()).to_vec()
        });
        assert_eq!(errors[0], errors[1]);
        assert!(errors[0].contains("PE 0 finished `heat`"), "{}", errors[0]);
        assert!(errors[0].contains("PE 1 waits at grid_sync() number 3 of `heat`"), "{}", errors[0]);
    }

    #[test]
    fn a_pe_that_never_arrives_is_named_after_the_limit_and_breaks_the_team() {
        let rendezvous = Rendezvous::new(3);
        let started = Instant::now();
        let limit = Some(Duration::from_millis(100));
        let error = thread::scope(|scope| {
            let waiter = scope.spawn(|| rendezvous.exchange(1, launch(0, "k", LaunchPoint::Finished), limit));
            let error = rendezvous.exchange(0, launch(0, "k", LaunchPoint::Finished), limit).expect_err("PE 2 missing");
            waiter.join().expect("no panic").expect_err("PE 2 missing");
            error
        });
        assert!(started.elapsed() < Duration::from_secs(2));
        assert!(matches!(&error, Error::PeNotArrived { pe: 2, missing, .. } if missing == &[2]), "{error}");
        // Broken: the late PE fails at once too.
        let late = rendezvous.exchange(2, launch(0, "k", LaunchPoint::Finished), None).expect_err("broken");
        assert!(matches!(late, Error::PeNotArrived { pe: 2, .. }), "{late}");
    }

    #[test]
    fn a_pe_whose_thread_ended_fails_the_waiters_at_once() {
        let rendezvous = Rendezvous::new(2);
        let error = thread::scope(|scope| {
            let waiter = scope.spawn(|| rendezvous.exchange(0, launch(0, "k", LaunchPoint::Finished), None));
            rendezvous.leave(1);
            waiter.join().expect("no panic").expect_err("PE 1 left")
        });
        assert!(matches!(error, Error::PeLeft { pe: 1, .. }), "{error}");
    }
}
