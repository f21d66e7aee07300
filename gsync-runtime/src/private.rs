//! What the code `#[grid_phases]` generates calls, and a helper the workspace's tests share;
//! not a public API.
//!
//! A generated launch function hands `Gpu::run` its kernel's three forms
//! over the caller's arguments, as a [`KernelForms`]; the runtime picks the form from the
//! backend and the barrier, so generated code holds no backend or barrier branch.

pub use crate::core::dynamic_shared::{DynamicShared, LengthFault, SharedSlice};
pub use crate::cuda::discover::nvrtc_or_skip;
pub use crate::emu::arith;
pub use crate::emu::half_arith;

use crate::core::args::KernelArgs;
use crate::core::error::Result;
use crate::core::launch::LaunchReport;
use crate::emu::{EmuLaunch, EmuSegmentFn};
use crate::split::SplitRun;

/// One call of a `#[grid_phases]` kernel, in the three forms the macro generates: the fused
/// kernel's argument list, the split form's host code, and the emulator body.
///
/// # Safety
/// [`push_args`](Self::push_args) must push exactly the arguments of the user parameters of
/// the fused kernel's C parameter list (the runtime appends its own trailing two), and
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
