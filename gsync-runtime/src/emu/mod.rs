//! The CPU emulator: any `#[grid_phases]` kernel, run on the host with GPU semantics.
//!
//! The macro emits, next to the CUDA, the kernel body as one async Rust function per thread;
//! the hidden `Gpu::run` runs it through an [`EmuLaunch`], as [`Gpu::emulate`](crate::Gpu::emulate)
//! runs a hand-written one. Like the CUDA backend, this one imports only the core and the
//! barrier table, and runs a launch the core planned: `device` is the emulator as the plan's
//! `Device`. Follow a launch in this order: [`ThreadCtx`]
//! (a thread's indices, and its await points: `sync_block`, `grid_sync`, warp shuffles),
//! [`EmuSlice`] (memory shared soundly between threads: relaxed atomics, bounds-checked),
//! `block` (a block's threads polled round-robin on one host thread, its barriers released
//! when every unfinished thread has arrived), `grid` (blocks in parallel on the host's cores
//! from one grid barrier to the next), then `launch` (a plan run to its errors and its
//! report). `split` runs a split kernel ([`Barrier::MultiLaunch`](crate::Barrier::MultiLaunch)):
//! one such launch per segment. `arith` is the DSL's arithmetic on the host, which the
//! emulator body and the split form's host code share.

pub mod arith;
mod async_copy;
mod block;
mod device;
mod fault;
mod grid;
pub mod half_arith;
mod launch;
mod memory;
mod scalar;
mod split;
mod symmetric;
pub(crate) mod team;
mod thread;
mod warp;

#[cfg(test)]
mod tests;

pub use async_copy::EmuAsyncCopies;
pub use block::ThreadFuture;
pub use launch::EmuLaunch;
pub use memory::EmuSlice;
pub use scalar::{EmuScalar, ShuffleScalar};
pub(crate) use split::EmuSplitRun;
pub use split::{EmuSegment, EmuSegmentFn};
pub(crate) use symmetric::{allocate_symmetric, symmetric_view, TeamSlices};
pub use symmetric::{EmuRangePut, EmuSymmetric};
pub use thread::{Shuffle, ThreadCtx};

use crate::core::device::DeviceInfo;

/// The most threads an emulated grid may have: every thread of a grid is a future, alive from
/// the launch to its end.
pub(crate) const MAX_GRID_THREADS: u32 = 1 << 20;

/// The most blocks an emulated grid may have: each block's shared arrays live as long.
pub(crate) const MAX_GRID_BLOCKS: u32 = 1 << 14;

/// The most blocks of `threads` threads an emulated grid may have.
pub(crate) fn max_grid_blocks(threads: u32) -> u32 {
    (MAX_GRID_THREADS / threads.max(1)).min(MAX_GRID_BLOCKS)
}

/// The emulator as a device: what it tells kernels about itself.
#[derive(Debug)]
pub(crate) struct Emulator {
    info: DeviceInfo,
    /// Its place in an emulated team, if it is a PE of one.
    team: Option<team::TeamMember>,
}

impl Emulator {
    /// The emulator on this host: one "SM" per available core.
    pub(crate) fn new() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Emulator {
            info: DeviceInfo {
                name: "gsync CPU emulator".to_owned(),
                ordinal: 0,
                sm_count: u32::try_from(cores).unwrap_or(u32::MAX),
                compute_capability: (0, 0),
                cooperative_launch: true,
                max_threads_per_block: gsync_contract::MAX_BLOCK_SIZE,
                max_shared_memory_per_block: gsync_contract::MAX_STATIC_SHARED_BYTES,
                // An H100's or H200's opt-in maximum, so that the emulator refuses the shared
                // slices a GPU would.
                max_shared_memory_per_block_optin: 227 * 1024,
                max_blocks_per_grid: MAX_GRID_BLOCKS,
                // Host memory, which the emulator does not measure.
                total_memory: 0,
                driver_cuda_version: None,
            },
            team: None,
        }
    }

    /// PE `pe` of an emulated team that meets at `rendezvous`: the host's cores shared out
    /// among the team's PEs, which run at once.
    pub(crate) fn member(pe: u32, rendezvous: std::sync::Arc<team::Rendezvous>) -> Self {
        let mut emulator = Emulator::new();
        emulator.info.sm_count = (emulator.info.sm_count / rendezvous.n_pes()).max(1);
        emulator.info.ordinal = pe as usize;
        emulator.team = Some(team::TeamMember::new(pe, rendezvous));
        emulator
    }

    /// Another handle to this emulator outside a team (`Gpu::new_stream`): the same device.
    pub(crate) fn another_stream(&self) -> Self {
        Emulator { info: self.info.clone(), team: None }
    }

    /// Its place in an emulated team, if it is a PE of one.
    pub(crate) fn team(&self) -> Option<&team::TeamMember> {
        self.team.as_ref()
    }

    /// What the emulator reports as its device.
    pub(crate) fn info(&self) -> &DeviceInfo {
        &self.info
    }
}
