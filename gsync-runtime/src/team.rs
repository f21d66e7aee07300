//! A team of GPUs that run one kernel together: one PE per GPU, every `grid_sync()` of a
//! kernel launched on a PE spanning every block of every PE, and symmetric buffers that
//! kernels reach on any PE.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::thread;

use crate::core::error::{Error, Result};
use crate::emu::team::Rendezvous;
use crate::gpu::Gpu;

/// A team of PEs (processing elements), one per GPU, that run the same program: each PE
/// launches the same kernels and allocates the same symmetric buffers, in the same order,
/// on its own [`Gpu`].
///
/// In a kernel launched on a PE's `Gpu`, `grid_sync()` waits for every block of every PE;
/// `pe()` and `n_pes()` say where a block runs; a `#[symmetric]` slice parameter is the
/// PE's own part of a buffer that [`Gpu::symmetric_zeros`] allocated on every PE, and
/// `a.put(pe, i, v)` and `a.get(pe, i)` reach element `i` of PE `pe`'s part. A PE that
/// fails, leaves or does not arrive fails every other PE with a typed error
/// ([`Error::PeFailed`], [`Error::PeLeft`], [`Error::PeNotArrived`]); none hangs.
///
/// ```
/// # fn main() -> gsync_runtime::Result<()> {
/// use gsync_runtime::Team;
/// let team = Team::emulated(4)?;
/// let places = team.run(|gpu| Ok((gpu.pe(), gpu.n_pes())))?;
/// assert_eq!(places, [(0, 4), (1, 4), (2, 4), (3, 4)]);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Team {
    n_pes: u32,
}

impl Team {
    /// A team of `n_pes` GPUs emulated in this process, on the CPU emulator: the same
    /// semantics, refusals and errors as a team of GPUs, to write and test a multi-GPU kernel
    /// on any machine. Fails with [`Error::InvalidTeam`] for 0 PEs.
    pub fn emulated(n_pes: u32) -> Result<Team> {
        if n_pes == 0 {
            return Err(Error::InvalidTeam { reason: "a team has at least one PE; ask for 1 or more".into() });
        }
        Ok(Team { n_pes })
    }

    /// The number of PEs.
    pub fn n_pes(&self) -> u32 {
        self.n_pes
    }

    /// Runs `body` once per PE, each on a host thread of its own with its PE's [`Gpu`], and
    /// returns their results by PE. When PEs fail, the error is that of a PE that failed on
    /// its own account, not the [`Error::PeLeft`], [`Error::PeFailed`] or
    /// [`Error::TeamRefused`] of the others; a
    /// panic in `body` resumes here once every PE has stopped.
    pub fn run<T, F>(&self, body: F) -> Result<Vec<T>>
    where
        T: Send,
        F: Fn(&Gpu) -> Result<T> + Sync,
    {
        let rendezvous = Arc::new(Rendezvous::new(self.n_pes));
        let outcomes: Vec<thread::Result<Result<T>>> = thread::scope(|scope| {
            let body = &body;
            let handles: Vec<_> = (0..self.n_pes)
                .map(|pe| {
                    let rendezvous = Arc::clone(&rendezvous);
                    scope.spawn(move || {
                        // The PE leaves its team when its Gpu drops, also while unwinding.
                        let gpu = Gpu::emulated_pe(pe, rendezvous);
                        panic::catch_unwind(AssertUnwindSafe(|| body(&gpu)))
                    })
                })
                .collect();
            handles.into_iter().map(|handle| handle.join().and_then(|outcome| outcome)).collect()
        });
        collect(outcomes)
    }
}

/// The results of every PE, or the error (or panic) that explains the team's failure.
fn collect<T>(outcomes: Vec<thread::Result<Result<T>>>) -> Result<Vec<T>> {
    let mut results = Vec::with_capacity(outcomes.len());
    let mut panicked: Option<Box<dyn Any + Send>> = None;
    let mut errors = Vec::new();
    for outcome in outcomes {
        match outcome {
            Ok(Ok(result)) => results.push(result),
            Ok(Err(error)) => errors.push(error),
            Err(payload) => {
                panicked.get_or_insert(payload);
            }
        }
    }
    if let Some(payload) = panicked {
        panic::resume_unwind(payload);
    }
    let consequence =
        |error: &Error| matches!(error, Error::PeLeft { .. } | Error::PeFailed { .. } | Error::TeamRefused { .. });
    match errors.iter().position(|error| !consequence(error)) {
        Some(cause) => Err(errors.swap_remove(cause)),
        None => match errors.into_iter().next() {
            Some(error) => Err(error),
            None => Ok(results),
        },
    }
}
