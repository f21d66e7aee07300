//! What the code `#[grid_phases]` generates names, and a helper the workspace's tests share;
//! not a public API. Generated code reaches the runtime through this module alone
//! (`::gsync::__private::…`): the user-facing items it names too, and the plumbing that the
//! public root leaves out.
//!
//! A generated launch function hands `Gpu::run` its kernel's three forms
//! over the caller's arguments, as a [`KernelForms`]; the runtime picks the form from the
//! backend and the barrier, so generated code holds no backend or barrier branch.

// The user-facing items generated code names, so that it names everything through this
// module alone.
pub use crate::{
    bf16, f16, Barrier, DeviceBuffer, DeviceScalar, Gpu, KernelSpec, Launch, LaunchConfig, LaunchReport, Pending,
};
pub use crate::{Result, DEFAULT_THREADS};

// The kernel's description, as the macro writes it: the contract's facts among it.
pub use crate::core::{Axes, KernelAssertion, RefusedBlockSizes, SplitSpec};

// A fused launch's arguments and co-residency, and a split run's launches.
pub use crate::core::{CoResidency, KernelArgs, KernelBuffer, KernelScalar};
pub use crate::split::SplitRun;

// Shared slices, whose lengths the call's arguments decide.
pub use crate::core::dynamic_shared::{DynamicShared, LengthFault, SharedSlice};

// The emulator: a thread and its await points, memory, segments, and the DSL's arithmetic.
pub use crate::emu::{arith, half_arith};
pub use crate::emu::{
    EmuAsyncCopies, EmuLaunch, EmuRangePut, EmuScalar, EmuSegment, EmuSegmentFn, EmuSlice, EmuSymmetric, Shuffle,
    ShuffleScalar, ThreadCtx, ThreadFuture,
};

// For the workspace's tests.
pub use crate::cuda::discover::nvrtc_or_skip;
pub use crate::cuda::fit::{fit_builds, Fitted};

/// The multi-GPU teams' host layer (NVSHMEM), for the `nvshmem_ring` example.
pub mod nvshmem {
    pub use crate::cuda::nvshmem::{launch_cooperative, link_kernel, load_module, nvshmem_or_skip, run_local};
    pub use crate::cuda::nvshmem::{LocalOutcome, Nvshmem, NvshmemPe, PeExit, RawFunction, RawModule};
    pub use crate::cuda::nvshmem::{RegisteredFunction, TeamEnv, REQUIRED_RELEASE};
    pub use crate::cuda::nvshmem::{NO_MULTICAST, N_PES_VAR, PE_VAR, RENDEZVOUS_VAR};
}

/// One call of a `#[grid_phases]` kernel, in the three forms the macro generates: the fused
/// kernel's argument list, the split form's host code, and the emulator body.
///
/// # Safety
/// [`push_args`](Self::push_args) must push exactly the arguments of the user parameters of
/// the fused kernel's C parameter list (the runtime appends the contract's
/// `gsync_contract::TRAILING_PARAMS`), and
/// [`run_split`](Self::run_split) must launch each segment with exactly that segment's, the
/// buffers borrowed by `self` until it returns: the runtime launches device code with them.
pub unsafe trait KernelForms {
    /// Pushes the call's arguments, in the fused kernel's C parameter order.
    fn push_args<'a>(&'a mut self, args: &mut KernelArgs<'a>);

    /// Runs the split form's host code: its control flow, and one launch per segment
    /// through `run`. The runtime begins the run before and finishes it after.
    fn run_split(&mut self, run: &mut SplitRun<'_>) -> Result<()>;

    /// The split form's segments as emulator bodies, in segment order.
    fn emulated_segments(&self) -> &'static [EmuSegmentFn];

    /// Runs the fused form on the emulator, through `launch`.
    fn emulate(&mut self, launch: EmuLaunch<'_>) -> Result<LaunchReport>;

    /// The call's shared slices (`shared_slice::<T>(len)`), whose lengths its arguments and
    /// the block size decide; none by default.
    fn dynamic_shared(&mut self) -> DynamicShared {
        DynamicShared::none()
    }
}
