//! A CUDA GPU as a PE of a team: NVSHMEM on its context, the team record that kernels compiled
//! for the team read (`gsync_team` in the prelude), the spanning barrier's arrival slots, and
//! the agreement of every PE before a launch.

use std::sync::Arc;
use std::time::Duration;

use cudarc::driver::{CudaContext, CudaModule, CudaStream};

use crate::core::error::{Error, Result};
use crate::cuda::driver_error;
use crate::cuda::nvshmem::{Nvshmem, NvshmemPe, TeamEnv};

/// The most PEs a team may have: `GSYNC_MAX_PES` in the prelude, the length of the team
/// record's peer offsets.
pub(crate) const MAX_PES: u32 = 64;

/// The u64 words of a PE's arrival area: a slot per PE, then the spanning barrier's own words
/// up to `GSYNC_TEAM_GENERATION` (span.cuh), each on a 128-byte line.
const ARRIVAL_WORDS: usize = MAX_PES as usize + 48;

/// How long a PE waits for PE 0's unique id at the team's start.
const RENDEZVOUS_TIMEOUT: Duration = Duration::from_secs(60);

/// This process's PE of a team of CUDA GPUs.
pub(crate) struct CudaTeam {
    nvshmem: NvshmemPe,
    /// The prelude's `gsync_team_t` for this PE, as the module's bytes.
    record: Vec<u8>,
}

impl CudaTeam {
    /// Joins the team that `env` describes on `context`: NVSHMEM initialised (every PE at
    /// once), the arrival slots allocated on the symmetric heap, and every peer's mapping
    /// found. Fails with [`Error::InvalidTeam`] when a peer's memory cannot be reached with
    /// loads and stores from this GPU.
    pub(crate) fn join(env: &TeamEnv, context: &Arc<CudaContext>) -> Result<CudaTeam> {
        if env.n_pes > MAX_PES {
            return Err(Error::InvalidTeam {
                reason: format!("a team has at most {MAX_PES} PEs, and {} were asked for", env.n_pes),
            });
        }
        let nvshmem =
            NvshmemPe::init(Nvshmem::load()?, context, env.pe, env.n_pes, &env.rendezvous, RENDEZVOUS_TIMEOUT)?;
        // One slot per PE, then this PE's crossing count, arrival counter and generation, each
        // on a line of its own (span.cuh's GSYNC_TEAM_*), zeroed.
        let arrivals = nvshmem.malloc(ARRIVAL_WORDS * 8)?;
        let mut offsets = Vec::with_capacity(env.n_pes as usize);
        for pe in 0..env.n_pes {
            let Some(peer) = nvshmem.peer_ptr(arrivals, pe) else {
                return Err(Error::InvalidTeam {
                    reason: format!(
                        "PE {pe}'s memory cannot be reached with loads and stores from PE {} (no NVLink or PCIe \
                         peer access between their GPUs); gsync's teams need every PE's GPU to map every other's",
                        env.pe
                    ),
                });
            };
            offsets.push(peer.wrapping_sub(arrivals) as i64);
        }
        let record = team_record(env.pe, env.n_pes, &offsets, arrivals);
        Ok(CudaTeam { nvshmem, record })
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
    /// the same order. It lives as long as the team.
    pub(crate) fn allocate(&self, bytes: usize) -> Result<u64> {
        self.nvshmem.malloc(bytes)
    }

    /// Every PE says whether it refused a launch before it ran: `Ok` when none did, else
    /// the first PE that did (this one's own refusal is its caller's to return). A PE that
    /// does not come within `limit` fails it with [`Error::TeamTimedOut`].
    pub(crate) fn agree_to_launch(&self, refused: bool, limit: Option<Duration>) -> Result<Option<u32>> {
        let mut mine = vec![0u64; self.n_pes() as usize];
        mine[self.pe() as usize] = u64::from(refused);
        let every = self.nvshmem.agree_max_within(&mine, limit)?;
        Ok(every.iter().position(|&refused| refused != 0).map(|pe| pe as u32))
    }
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
    fn the_team_record_has_the_prelude_s_layout() {
        let record = team_record(1, 2, &[-4096, 0], 0x7000_0000);
        assert_eq!(record.len(), 8 + 8 * 64 + 8);
        assert_eq!(&record[..8], &[1, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(i64::from_le_bytes(record[8..16].try_into().expect("8 bytes")), -4096);
        assert_eq!(&record[16..24], &[0; 8]);
        assert_eq!(u64::from_le_bytes(record[520..528].try_into().expect("8 bytes")), 0x7000_0000);
    }
}
