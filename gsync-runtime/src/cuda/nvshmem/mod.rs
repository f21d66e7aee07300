//! The host layer of multi-GPU teams: one process per GPU, each an NVSHMEM PE.
//!
//! Nothing here is touched by a one-GPU program: NVSHMEM and nvJitLink are loaded on demand by
//! [`Nvshmem::load`]. Follow a team in this order: `place` ([`TeamEnv`]: what a process learns
//! from its environment about its team, from [`run_local`]'s variables or a launcher's), `spawn`
//! ([`run_local`] starts one process per PE on this node and supervises them),
//! `library` (finding and loading NVSHMEM 3.8 and nvJitLink), `pe` ([`NvshmemPe`]: NVSHMEM
//! initialised on a CUDA context, the symmetric heap, barriers, [`NvshmemPe::agree_max`], and
//! modules registered with NVSHMEM), and `link` ([`link_kernel`]: NVRTC to LTO-IR, nvJitLink
//! with NVSHMEM's device library to a CUBIN).

mod library;
mod link;
mod pe;
mod place;
mod spawn;

pub use library::{nvshmem_or_skip, Nvshmem, REQUIRED_RELEASE};
pub use link::link_kernel;
pub use pe::{launch_cooperative, load_module, NvshmemPe, RawFunction, RawModule, RegisteredFunction};
pub use place::{Launcher, TeamEnv, TeamOrigin, N_PES_VAR, PE_VAR, RENDEZVOUS_VAR};
pub use spawn::{run_local, LocalOutcome, PeExit, NO_MULTICAST};
