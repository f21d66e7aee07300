//! A CUDA GPU as a PE of a team: NVSHMEM on its context, the team record that kernels compiled
//! for the team read (`gsync_team` in the prelude), the spanning barrier's arrival slots, and
//! the agreement of every PE before a launch.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use cudarc::driver::{CudaContext, CudaModule, CudaStream};

use crate::core::error::{Error, ErrorKind, Result};
use crate::cuda::driver_error;
#[cfg(test)]
use crate::cuda::nvshmem::{Launcher, TeamOrigin};
use crate::cuda::nvshmem::{Nvshmem, NvshmemPe, TeamEnv};

/// The most PEs a team may have: `GSYNC_MAX_PES` in the prelude, the length of the team
/// record's peer offsets.
pub(crate) const MAX_PES: u32 = 64;

/// The u64 words of a PE's arrival area: a slot per PE, then the spanning barrier's own words
/// up to `GSYNC_TEAM_GENERATION` (span.cuh), each on a 128-byte line.
const ARRIVAL_WORDS: usize = MAX_PES as usize + 48;

/// How long a PE that run_local started waits for PE 0's unique id at the team's start.
const RENDEZVOUS_TIMEOUT: Duration = Duration::from_secs(60);

/// This process's PE of a team of CUDA GPUs.
pub(crate) struct CudaTeam {
    nvshmem: NvshmemPe,
    /// The prelude's `gsync_team_t` for this PE, as the module's bytes.
    record: Vec<u8>,
    /// Each peer's mapping: bytes from a symmetric address here to the same one on PE p.
    offsets: Vec<i64>,
    /// Launches so far, which every PE numbers alike.
    launches: AtomicU64,
    /// The failure that broke the team, after which nothing of it runs.
    broken: Mutex<Option<String>>,
}

impl CudaTeam {
    /// Joins the team that `env` describes on `context`: NVSHMEM initialised (every PE at
    /// once), the arrival slots allocated on the symmetric heap, and every peer's mapping
    /// found. Fails with [`Error::InvalidTeam`] when a peer's memory cannot be reached with
    /// loads and stores from this GPU: a peer on another node, or on a GPU without peer access.
    pub(crate) fn join(env: &TeamEnv, context: &Arc<CudaContext>) -> Result<CudaTeam> {
        if env.n_pes > MAX_PES {
            return Err(Error::InvalidTeam {
                reason: format!("a team has at most {MAX_PES} PEs, and {} were asked for", env.n_pes),
            });
        }
        let nvshmem = NvshmemPe::init(Nvshmem::load()?, context, env, RENDEZVOUS_TIMEOUT)?;
        // One slot per PE, then this PE's crossing count, arrival counter and generation, each
        // on a line of its own (span.cuh's GSYNC_TEAM_*), zeroed.
        let arrivals = nvshmem.malloc(ARRIVAL_WORDS * 8)?;
        let mut offsets = Vec::with_capacity(env.n_pes as usize);
        for pe in 0..env.n_pes {
            let Some(peer) = nvshmem.peer_ptr(arrivals, pe) else {
                return Err(unreachable_peer(env, pe));
            };
            offsets.push(peer.wrapping_sub(arrivals) as i64);
        }
        let record = team_record(env.pe, env.n_pes, &offsets, arrivals);
        Ok(CudaTeam { nvshmem, record, offsets, launches: AtomicU64::new(0), broken: Mutex::new(None) })
    }

    /// This PE's number.
    pub(crate) fn pe(&self) -> u32 {
        self.nvshmem.pe()
    }

    /// The number of PEs.
    pub(crate) fn n_pes(&self) -> u32 {
        self.nvshmem.n_pes()
    }

    /// Writes this PE's team record into `module`, which was compiled for the team.
    pub(crate) fn write_record(&self, module: &Arc<CudaModule>, stream: &Arc<CudaStream>) -> Result<()> {
        let context = "writing the team record into a kernel's module";
        let mut global = module.get_global("gsync_team", stream).map_err(driver_error(context))?;
        if global.len() != self.record.len() {
            return Err(Error::InvalidTeam {
                reason: format!(
                    "the kernel's team record has {} bytes, and this runtime writes {}; the prelude and the \
                     runtime disagree",
                    global.len(),
                    self.record.len()
                ),
            });
        }
        stream.memcpy_htod(&self.record, &mut global).map_err(driver_error(context))?;
        stream.synchronize().map_err(driver_error(context))
    }

    /// `bytes` of symmetric memory, zeroed: collective, every PE allocates the same size in
    /// the same order (else every PE fails with [`Error::CollectiveMismatch`], and a PE that
    /// does not come within `limit` with [`Error::TeamTimedOut`]). It lives as long as the team.
    pub(crate) fn allocate(&self, bytes: usize, limit: Option<Duration>) -> Result<u64> {
        self.intact()?;
        let size = bytes as u64;
        let agreed = self.nvshmem.agree_among(&[size, !size], limit, "allocates a symmetric buffer")?;
        if (agreed[0], !agreed[1]) != (size, size) {
            return Err(Error::CollectiveMismatch {
                call: "Gpu::symmetric_zeros",
                detail: format!("the PEs allocated between {} and {} bytes", !agreed[1], agreed[0]),
            });
        }
        let address = self.nvshmem.malloc(bytes.max(1))?;
        // Every peer's copy must lie at the team's offset, which kernels add to reach it.
        for (pe, &offset) in self.offsets.iter().enumerate() {
            let peer = self.nvshmem.peer_ptr(address, pe as u32).map(|peer| peer.wrapping_sub(address) as i64);
            if peer != Some(offset) {
                return Err(Error::InvalidTeam {
                    reason: format!(
                        "PE {pe}'s copy of a symmetric buffer is not at the distance its first one was; \
                         NVSHMEM's heap is not mapped as one range (set NVSHMEM_SYMMETRIC_SIZE large enough \
                         for every buffer, so that the heap never grows)"
                    ),
                });
            }
        }
        Ok(address)
    }

    /// Every PE says whether it refused launch `kernel` before it ran, and which kernel it
    /// launches: `Ok(None)` when all launch the same and none refused, `Ok(Some(pe))` for the
    /// first PE that refused (this one's own refusal is its caller's to return). PEs that
    /// launch different kernels fail with [`Error::CollectiveMismatch`]; a PE that does not
    /// come within `limit` fails it with [`Error::TeamTimedOut`].
    pub(crate) fn agree_to_launch(&self, kernel: &str, refused: bool, limit: Option<Duration>) -> Result<Option<u32>> {
        self.intact()?;
        let number = self.launches.fetch_add(1, Ordering::Relaxed);
        let identity = identity(kernel, number);
        let mut mine = vec![0u64; self.n_pes() as usize + 2];
        mine[self.pe() as usize] = u64::from(refused);
        mine[self.n_pes() as usize] = identity;
        mine[self.n_pes() as usize + 1] = !identity;
        let every = self.nvshmem.agree_among(&mine, limit, "agrees to launch a kernel")?;
        if (every[self.n_pes() as usize], !every[self.n_pes() as usize + 1]) != (identity, identity) {
            return Err(Error::CollectiveMismatch {
                call: "a launch",
                detail: format!(
                    "this PE launches `{kernel}` as the team's launch number {}, another PE something else",
                    number + 1
                ),
            });
        }
        Ok(every[..self.n_pes() as usize].iter().position(|&refused| refused != 0).map(|pe| pe as u32))
    }

    /// `Ok` while no launch of the team has failed, else [`Error::TeamBroken`].
    pub(crate) fn intact(&self) -> Result<()> {
        match &*self.broken.lock().unwrap_or_else(PoisonError::into_inner) {
            Some(cause) => Err(Error::TeamBroken { cause: cause.clone() }),
            None => Ok(()),
        }
    }

    /// Passes on how a launch (fused, or a step of a split run) ended, marking the team broken
    /// by a failure after which its PEs' barrier state may no longer agree (see
    /// [`breaks_the_team`]).
    pub(crate) fn settle<T>(&self, ran: Result<T>) -> Result<T> {
        if let Err(error) = &ran {
            if breaks_the_team(error) {
                self.broken.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert_with(|| error.to_string());
            }
        }
        ran
    }

    /// The team's last collective step ([`NvshmemPe::farewell`]).
    pub(crate) fn farewell(&self) -> Result<()> {
        self.nvshmem.farewell()
    }

    /// Leaves NVSHMEM as it is when this PE goes away, instead of finalising it with the
    /// others: for a PE that failed, whose peers may never finalise.
    pub(crate) fn abandon(&self) {
        self.nvshmem.abandon();
    }
}

/// [`Error::InvalidTeam`] for PE `peer`, whose memory this PE cannot reach with loads and stores:
/// on another node of a launch over several, or on a GPU without peer access to this one.
fn unreachable_peer(env: &TeamEnv, peer: u32) -> Error {
    let unreachable = format!("PE {peer}'s memory cannot be reached with loads and stores from PE {}", env.pe);
    let needed = "gsync's kernels reach other PEs with loads and stores alone, so every PE's GPU must map every \
                  other's, and a team lives on one node (docs/scale-out.md says what crossing nodes would take)";
    let reason = match (env.launcher(), env.multi_node) {
        (Some(launcher), Some(true)) => format!(
            "{unreachable}: {} started the team's {} PEs on more than one node, and a PE on another node is \
             reached only through the network; {needed}: start all {} on one node (`{}`)",
            launcher.name(),
            env.n_pes,
            env.n_pes,
            launcher.start_command(env.n_pes)
        ),
        (Some(launcher), None) => format!(
            "{unreachable}: it runs on another node, or there is no NVLink or PCIe peer access between their \
             GPUs; {needed}: start all {} PEs on one node (`{}`) whose GPUs reach each other",
            env.n_pes,
            launcher.start_command(env.n_pes)
        ),
        _ => format!("{unreachable} (no NVLink or PCIe peer access between their GPUs); {needed}"),
    };
    Error::InvalidTeam { reason }
}

/// Whether a team launch that failed with `error` may have left the PEs' barrier state apart:
/// not when it was refused before any PE launched, nor for the faults after which the kernel
/// runs on to every barrier (an access skipped, a loop not run).
fn breaks_the_team(error: &Error) -> bool {
    match error {
        Error::TeamRefused { .. }
        | Error::OutOfBounds { .. }
        | Error::AsyncCopySourceWritten { .. }
        | Error::NoSuchPe { .. }
        | Error::ZeroStep { .. } => false,
        Error::CollectiveMismatch { .. } | Error::TeamTimedOut { .. } => true,
        _ => !matches!(
            error.kind(),
            ErrorKind::Configuration | ErrorKind::Memory | ErrorKind::Compilation | ErrorKind::Installation
        ),
    }
}

/// A launch's identity across the team: its kernel's name and its number, hashed (FNV-1a).
fn identity(kernel: &str, number: u64) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for byte in kernel.bytes().chain(number.to_le_bytes()) {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

impl std::fmt::Debug for CudaTeam {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaTeam").field("pe", &self.pe()).field("n_pes", &self.n_pes()).finish_non_exhaustive()
    }
}

/// The prelude's `gsync_team_t` as bytes: `pe`, `n_pes` (u32 each), `MAX_PES` peer offsets
/// (i64, unused ones 0), the arrival slots' address (u64).
fn team_record(pe: u32, n_pes: u32, offsets: &[i64], arrivals: u64) -> Vec<u8> {
    let mut record = Vec::with_capacity(8 + 8 * MAX_PES as usize + 8);
    record.extend_from_slice(&pe.to_le_bytes());
    record.extend_from_slice(&n_pes.to_le_bytes());
    for slot in 0..MAX_PES as usize {
        record.extend_from_slice(&offsets.get(slot).copied().unwrap_or(0).to_le_bytes());
    }
    record.extend_from_slice(&arrivals.to_le_bytes());
    record
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_team_breaks_on_failures_that_stop_a_grid_not_on_refusals_or_skipped_accesses() {
        let kernel = || "k".to_owned();
        let refused = Error::TeamRefused { kernel: kernel(), pe: 1, reason: "grid".into() };
        let skipped = Error::NoSuchPe { kernel: kernel(), array: "a".into(), pe: 2, n_pes: 2, line: 3 };
        let too_large = Error::EmptyGrid { kernel: kernel() };
        for error in [refused, skipped, too_large] {
            assert!(!breaks_the_team(&error), "{error}");
        }
        let waited = Error::PeNotArrived { pe: 1, missing: vec![1], doing: "waits".into(), waited: Duration::ZERO };
        let timed_out = Error::BarrierTimeout {
            kernel: kernel(),
            barrier: "lbs".into(),
            phase: 2,
            block: 0,
            limit: Duration::ZERO,
        };
        let apart = Error::CollectiveMismatch { call: "a launch", detail: "kernels differ".into() };
        for error in [waited, timed_out, apart] {
            assert!(breaks_the_team(&error), "{error}");
        }
    }

    #[test]
    fn an_unreachable_peer_of_a_launch_over_several_nodes_is_said_to_be_on_another_node() {
        let env = |origin: TeamOrigin, multi_node| TeamEnv { pe: 1, n_pes: 8, gpu: 1, multi_node, origin };
        let srun = TeamOrigin::Launcher(Launcher::Slurm);
        let message = unreachable_peer(&env(srun.clone(), Some(true)), 5).to_string();
        for part in ["PE 5's memory cannot be reached", "from PE 1", "on more than one node", "srun -N 1 -n 8"] {
            assert!(message.contains(part), "{part}: {message}");
        }
        assert!(message.contains("a team lives on one node"), "{message}");
        let unknown = unreachable_peer(&env(srun, None), 5).to_string();
        assert!(unknown.contains("it runs on another node, or there is no NVLink"), "{unknown}");
        let local = TeamOrigin::Local { rendezvous: "/x".into() };
        let one_node = unreachable_peer(&env(local, Some(false)), 5).to_string();
        assert!(one_node.contains("no NVLink or PCIe peer access") && !one_node.contains("another node"), "{one_node}");
    }

    #[test]
    fn the_team_record_has_the_prelude_s_layout() {
        let record = team_record(1, 2, &[-4096, 0], 0x7000_0000);
        assert_eq!(record.len(), 8 + 8 * 64 + 8);
        assert_eq!(&record[..8], &[1, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(i64::from_le_bytes(record[8..16].try_into().expect("8 bytes")), -4096);
        assert_eq!(&record[16..24], &[0; 8]);
        assert_eq!(u64::from_le_bytes(record[520..528].try_into().expect("8 bytes")), 0x7000_0000);
    }
}
