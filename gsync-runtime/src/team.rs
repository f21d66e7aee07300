//! A team of GPUs that run one kernel together: one PE per GPU, every `grid_sync()` of a
//! kernel launched on a PE spanning every block of every PE, and symmetric buffers that
//! kernels reach on any PE.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::thread;

use crate::core::error::{Error, Result};
use crate::cuda::nvshmem::{run_local, TeamEnv};
use crate::cuda::require_gpu;
use crate::cuda::team::MAX_PES;
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
/// ([`Error::PeFailed`], [`Error::PeLeft`], [`Error::PeNotArrived`], [`Error::TeamTimedOut`]),
/// after the launch's watchdog or deadline at the latest; with both off, a PE that never
/// comes is waited for as long as a GPU would.
///
/// ```
/// # fn main() -> gsync_runtime::Result<()> {
/// use gsync_runtime::Team;
/// let team = Team::emulated(4)?;
/// let places = team.run(|gpu| Ok((gpu.pe(), gpu.n_pes())))?;
/// assert_eq!(places, [(0, 4), (1, 4), (2, 4), (3, 4)]);
/// # Ok(()) }
/// ```
///
/// A team of CUDA GPUs ([`Team::cuda`]) is one process per GPU: the program starts its PEs as
/// copies of itself, or a launcher (`mpirun`, `srun`, `nvshmrun`) starts them, and each runs
/// `run`'s body as its PE, on its GPU, with NVSHMEM (loaded only then) between them.
#[derive(Debug)]
pub struct Team {
    n_pes: u32,
    kind: Kind,
}

/// Where a team's PEs run.
#[derive(Debug)]
enum Kind {
    /// Emulated GPUs, one host thread each, in this process.
    Emulated,
    /// CUDA GPUs, one process each: this process is PE `env.pe` when `env` is set (started by
    /// run_local or a launcher), else the one that starts them.
    Cuda { env: Option<TeamEnv> },
}

impl Team {
    /// A team of `n_pes` GPUs emulated in this process, on the CPU emulator: the same
    /// semantics, refusals and errors as a team of GPUs, to write and test a multi-GPU kernel
    /// on any machine. Fails with [`Error::InvalidTeam`] for 0 PEs.
    pub fn emulated(n_pes: u32) -> Result<Team> {
        check_size(n_pes)?;
        Ok(Team { n_pes, kind: Kind::Emulated })
    }

    /// A team of `n_pes` CUDA GPUs of this machine, one process per GPU.
    ///
    /// In the process that starts the program, [`run`](Self::run) starts `n_pes` copies of
    /// it (same executable, same arguments; `GSYNC_TEAM_PE`, `GSYNC_TEAM_N_PES` and
    /// `GSYNC_TEAM_RENDEZVOUS` tell each its place; PE `p` opens GPU `p`), waits for them, and
    /// returns no results: each PE's stay in its process. In each copy, `Team::cuda` finds its
    /// place and `run` runs its body once, as that PE. So call it near the top of `main`, before
    /// work that every copy would repeat.
    ///
    /// A program started by a launcher (`mpirun`, `srun`, `nvshmrun` or another PMI launcher)
    /// starts nothing: each of the launcher's processes is a PE, its rank the PE, the launcher's
    /// number of processes the team's size, which must be `n_pes`, and its rank on the node the
    /// GPU it opens; NVSHMEM bootstraps through the launcher (`NVSHMEM_BOOTSTRAP` chooses how).
    /// `GSYNC_TEAM_LAUNCHER=none` reads no launcher. docs/scale-out.md says which variables are
    /// read, in which order.
    ///
    /// NVLink multicast stays off in every PE (`NVSHMEM_DISABLE_NVLS=1`, `NCCL_NVLS_ENABLE=0`).
    /// Fails with [`Error::NoSuchGpu`] when the machine has fewer GPUs, with
    /// [`Error::InvalidTeam`] for 0 or more than 64 PEs, or in a copy started for a team of
    /// another size, with [`Error::LaunchSizeMismatch`] when a launcher started another number
    /// of processes, and with [`Error::TeamSettings`] when the variables that place the process
    /// are malformed.
    pub fn cuda(n_pes: u32) -> Result<Team> {
        check_size(n_pes)?;
        Team::cuda_as(n_pes, TeamEnv::from_env().transpose()?)
    }

    /// [`Team::cuda`] in a process whose place is `env`: `None` in the process that starts the
    /// team.
    fn cuda_as(n_pes: u32, env: Option<TeamEnv>) -> Result<Team> {
        match &env {
            Some(env) => env.check_size(n_pes)?,
            None => require_gpu(n_pes as usize - 1)?,
        }
        Ok(Team { n_pes, kind: Kind::Cuda { env } })
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
    ///
    /// On a team of CUDA GPUs, in the process that starts the team: starts every PE's
    /// process, waits for them all, and returns an empty vector, or [`Error::TeamFailed`]
    /// naming the first PE that failed (the others are stopped soon after; each PE's own
    /// error is on its standard error). In a PE's process, whether run_local or a launcher
    /// started it: opens its GPU, joins the team (every PE at once), runs `body`, and returns
    /// its result alone.
    pub fn run<T, F>(&self, body: F) -> Result<Vec<T>>
    where
        T: Send,
        F: Fn(&Gpu) -> Result<T> + Sync,
    {
        match &self.kind {
            Kind::Emulated => self.run_emulated(body),
            Kind::Cuda { env: None } => {
                run_local(self.n_pes)?.into_result()?;
                Ok(Vec::new())
            }
            Kind::Cuda { env: Some(env) } => {
                let gpu = Gpu::cuda_pe(env)?;
                match panic::catch_unwind(AssertUnwindSafe(|| body(&gpu))) {
                    // The team's end is collective too: a peer that left instead fails it.
                    Ok(Ok(result)) => match gpu.end_team() {
                        Ok(()) => Ok(vec![result]),
                        Err(error) => {
                            eprintln!("gsync: PE {} of {}: {error}", env.pe, env.n_pes);
                            Err(error)
                        }
                    },
                    // A PE that fails says why (the starting process sees only its exit), and
                    // leaves NVSHMEM unfinalised: its peers, still in the program, may never
                    // join a collective finalisation.
                    Ok(Err(error)) => {
                        eprintln!("gsync: PE {} of {}: {error}", env.pe, env.n_pes);
                        gpu.abandon_team();
                        Err(error)
                    }
                    Err(payload) => {
                        gpu.abandon_team();
                        panic::resume_unwind(payload)
                    }
                }
            }
        }
    }

    /// [`run`](Self::run) on an emulated team.
    fn run_emulated<T, F>(&self, body: F) -> Result<Vec<T>>
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

/// Refuses a team of no PE, or of more than the device code's team record holds.
fn check_size(n_pes: u32) -> Result<()> {
    if n_pes == 0 || n_pes > MAX_PES {
        return Err(Error::InvalidTeam {
            reason: format!("a team has 1 to {MAX_PES} PEs, and {n_pes} were asked for"),
        });
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;
    use crate::cuda::nvshmem::Launcher;

    #[test]
    fn a_launch_of_another_size_than_the_team_is_refused_and_one_of_its_size_is_a_pe_of_it() {
        let open_mpi =
            [("OMPI_COMM_WORLD_RANK", "1"), ("OMPI_COMM_WORLD_SIZE", "2"), ("OMPI_COMM_WORLD_LOCAL_RANK", "1")];
        let var = |name: &str| open_mpi.iter().find(|(var, _)| *var == name).map(|(_, value)| OsString::from(value));
        let env = TeamEnv::from_vars(var).expect("a PE").expect("well-formed");
        let error = Team::cuda_as(4, Some(env.clone())).expect_err("2 processes for a team of 4");
        let message = error.to_string();
        assert!(matches!(error, Error::LaunchSizeMismatch { launched: 2, asked: 4, .. }), "{message}");
        assert!(
            message.contains("Open MPI's mpirun started 2 process") && message.contains("mpirun -np 4"),
            "{message}"
        );
        let team = Team::cuda_as(2, Some(env)).expect("the launch's size");
        let Kind::Cuda { env: Some(place) } = &team.kind else { panic!("a PE of a CUDA team: {team:?}") };
        assert_eq!((team.n_pes(), place.pe, place.gpu, place.launcher()), (2, 1, 1, Some(Launcher::OpenMpi)));
    }
}
