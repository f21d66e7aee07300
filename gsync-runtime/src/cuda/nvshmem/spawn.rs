//! A team on this machine: the program started once per PE, each process told its PE through
//! its environment, and supervised until all end.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::core::error::{Error, Result};
use crate::cuda::nvshmem::place::{local_error, N_PES_VAR, PE_VAR, RENDEZVOUS_VAR};

/// Set in every PE, whatever the caller's environment says: NVLink multicast off, in NVSHMEM,
/// NCCL and PyTorch (on shared machines a program that uses it can take the GPUs down).
/// [`run_local`] sets them in each PE's environment; [`NvshmemPe::init`](super::NvshmemPe::init)
/// sets them in its process before NVSHMEM reads it, as a launcher's PEs need.
pub const NO_MULTICAST: [(&str, &str); 3] =
    [("NVSHMEM_DISABLE_NVLS", "1"), ("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")];

/// Set in every PE that [`run_local`] starts, unless the caller's environment sets them: a team
/// on one host bootstraps over the loopback interface and needs no network transport between
/// hosts. A launcher's PEs get neither.
const LOCAL_DEFAULTS: [(&str, &str); 2] =
    [("NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME", "lo"), ("NVSHMEM_REMOTE_TRANSPORT", "none")];

/// How long the other PEs may run on once one failed, before they are killed.
const GRACE: Duration = Duration::from_secs(3);

/// How often the launcher looks at its PEs.
const POLL: Duration = Duration::from_millis(20);

/// How one PE of a local team ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeExit {
    /// The PE.
    pub pe: u32,
    /// Its process's exit status.
    pub status: ExitStatus,
    /// Whether the launcher killed it, after another PE failed.
    pub killed_by_launcher: bool,
}

impl std::fmt::Display for PeExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use std::os::unix::process::ExitStatusExt;
        write!(f, "PE {}: ", self.pe)?;
        match (self.status.code(), self.status.signal()) {
            _ if self.killed_by_launcher => f.write_str("killed after another PE failed"),
            (Some(0), _) => f.write_str("succeeded"),
            (Some(code), _) => write!(f, "exited with {code}"),
            (None, Some(signal)) => write!(f, "killed by signal {signal}"),
            (None, None) => f.write_str("ended without a status"),
        }
    }
}

/// How a local team ended: each PE's exit, and which PE failed first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalOutcome {
    /// Every PE's exit, by PE.
    pub pes: Vec<PeExit>,
    /// The PE that failed (exited non-zero or was killed) first, if one did.
    pub first_failure: Option<u32>,
}

impl LocalOutcome {
    /// Whether every PE succeeded.
    pub fn success(&self) -> bool {
        self.first_failure.is_none()
    }

    /// `Ok` when every PE succeeded, else [`Error::TeamFailed`] naming each PE's end.
    pub fn into_result(self) -> Result<()> {
        match self.first_failure {
            None => Ok(()),
            Some(pe) => {
                Err(Error::TeamFailed { n_pes: self.pes.len() as u32, detail: format!("PE {pe} failed first; {self}") })
            }
        }
    }
}

impl std::fmt::Display for LocalOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ends: Vec<String> = self.pes.iter().map(PeExit::to_string).collect();
        f.write_str(&ends.join(", "))
    }
}

/// Runs this program as a team of `n_pes` PEs on this machine: starts the current executable
/// with the same arguments once per PE, PE `i` with [`PE_VAR`]`=i`, [`N_PES_VAR`]`=n_pes` and a
/// fresh [`RENDEZVOUS_VAR`] file, [`NO_MULTICAST`] always, and its stdout and stderr this
/// process's. `CUDA_VISIBLE_DEVICES` is left alone: PE `i` opens GPU `i`.
///
/// Once a PE fails (exits non-zero or is killed), the others get a few seconds, then are
/// killed. Returns when every PE has ended; a PE that cannot be started is an error.
pub fn run_local(n_pes: u32) -> Result<LocalOutcome> {
    if n_pes == 0 {
        return Err(local_error(N_PES_VAR, "0", "a team has at least 1 PE".into()));
    }
    let program = std::env::current_exe().map_err(|error| spawn_failed(n_pes, 0, &error))?;
    let arguments: Vec<OsString> = std::env::args_os().skip(1).collect();
    let folder = RendezvousFolder::new().map_err(|error| spawn_failed(n_pes, 0, &error))?;
    let rendezvous = folder.0.join("unique-id");
    let mut running = Vec::with_capacity(n_pes as usize);
    for pe in 0..n_pes {
        let mut command = Command::new(&program);
        command.args(&arguments).env(PE_VAR, pe.to_string()).env(N_PES_VAR, n_pes.to_string());
        command.env(RENDEZVOUS_VAR, &rendezvous).envs(NO_MULTICAST);
        for (name, value) in LOCAL_DEFAULTS {
            if std::env::var_os(name).is_none() {
                command.env(name, value);
            }
        }
        match command.spawn() {
            Ok(child) => running.push(child),
            Err(error) => {
                for mut child in running {
                    let _ = child.kill();
                    let _ = child.wait();
                }
                return Err(spawn_failed(n_pes, pe, &error));
            }
        }
    }
    supervise(running)
}

fn spawn_failed(n_pes: u32, pe: u32, error: &std::io::Error) -> Error {
    Error::TeamFailed { n_pes, detail: format!("PE {pe} could not be started ({error})") }
}

/// Waits for every child; once one fails, kills those still running after [`GRACE`].
fn supervise(children: Vec<Child>) -> Result<LocalOutcome> {
    let n_pes = children.len();
    let mut children: Vec<Option<Child>> = children.into_iter().map(Some).collect();
    let mut exits: Vec<Option<PeExit>> = vec![None; n_pes];
    let mut first_failure = None;
    let mut deadline: Option<Instant> = None;
    while exits.iter().any(Option::is_none) {
        for (pe, slot) in children.iter_mut().enumerate() {
            let Some(child) = slot else { continue };
            let pe_number = pe as u32;
            let status = match child.try_wait() {
                Ok(Some(status)) => Some((status, false)),
                Ok(None) if deadline.is_some_and(|deadline| Instant::now() >= deadline) => {
                    let _ = child.kill();
                    child.wait().ok().map(|status| (status, true))
                }
                Ok(None) => None,
                Err(_) => {
                    let _ = child.kill();
                    child.wait().ok().map(|status| (status, true))
                }
            };
            if let Some((status, killed_by_launcher)) = status {
                if !status.success() && !killed_by_launcher && first_failure.is_none() {
                    first_failure = Some(pe_number);
                    deadline = Some(Instant::now() + GRACE);
                }
                exits[pe] = Some(PeExit { pe: pe_number, status, killed_by_launcher });
                *slot = None;
            }
        }
        std::thread::sleep(POLL);
    }
    let pes: Vec<PeExit> = exits.into_iter().flatten().collect();
    let first_failure = first_failure.or_else(|| pes.iter().find(|exit| !exit.status.success()).map(|exit| exit.pe));
    Ok(LocalOutcome { pes, first_failure })
}

/// A fresh folder for one team's rendezvous file, removed on drop.
struct RendezvousFolder(PathBuf);

impl RendezvousFolder {
    fn new() -> std::io::Result<Self> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
        let unique = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("gsync-team-{}-{nanos}-{unique}", std::process::id()));
        std::fs::create_dir(&path)?;
        Ok(RendezvousFolder(path))
    }
}

impl Drop for RendezvousFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(script: &str) -> Child {
        Command::new("sh").arg("-c").arg(script).spawn().expect("start sh")
    }

    #[test]
    fn a_failing_pe_is_named_first_and_the_others_are_killed_after_the_grace() {
        let started = Instant::now();
        let outcome = supervise(vec![shell("sleep 30"), shell("exit 3"), shell("exit 0")]).expect("supervised");
        assert!(started.elapsed() < Duration::from_secs(20), "the sleeper was killed");
        assert_eq!(outcome.first_failure, Some(1));
        assert!(outcome.pes[0].killed_by_launcher);
        assert_eq!(outcome.pes[1].status.code(), Some(3));
        assert!(outcome.pes[2].status.success());
        let message = outcome.into_result().expect_err("failed").to_string();
        assert!(message.contains("PE 1 failed first"), "{message}");
        assert!(
            message.contains("PE 0: killed after another PE failed, PE 1: exited with 3, PE 2: succeeded"),
            "{message}"
        );
    }

    #[test]
    fn a_team_whose_pes_all_succeed_succeeds() {
        let outcome = supervise(vec![shell("exit 0"), shell("exit 0")]).expect("supervised");
        assert!(outcome.success());
        assert!(outcome.into_result().is_ok());
    }
}
