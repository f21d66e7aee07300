//! What the code `#[grid_phases]` generates calls; not a public API.
//!
//! A generated launch function hands `Gpu::run` its kernel's three forms
//! over the caller's arguments, as a [`KernelForms`]; the runtime picks the form from the
//! backend and the barrier, so generated code holds no backend or barrier branch.

pub use crate::emu::arith;

use crate::core::args::KernelArgs;
use crate::core::error::Result;
use crate::core::launch::LaunchReport;
use crate::cuda::discover;
use crate::emu::{EmuLaunch, EmuSegmentFn};
use crate::split::SplitRun;

/// Whether a test that compiles with NVRTC can run: `true` when NVRTC loads. Otherwise the
/// test should return at once, after this prints why, unless `GSYNC_REQUIRE_NVRTC=1`, which
/// turns the missing NVRTC into a panic. For the workspace's tests.
pub fn nvrtc_or_skip() -> bool {
    match discover::toolkit() {
        Ok(_) => true,
        Err(error) if std::env::var_os("GSYNC_REQUIRE_NVRTC").is_some_and(|value| value == "1") => {
            panic!("GSYNC_REQUIRE_NVRTC=1 but NVRTC is unavailable: {error}")
        }
        Err(error) => {
            eprintln!("skipping: NVRTC is unavailable ({error})");
            false
        }
    }
}

/// One call of a `#[grid_phases]` kernel, in the three forms the macro generates: the fused
/// kernel's argument list, the split form's host code, and the emulator body.
///
/// # Safety
/// [`push_args`](Self::push_args) must push exactly the arguments of the fused kernel's C
/// parameter list, and [`run_split`](Self::run_split) must launch each segment with
/// exactly that segment's: the runtime launches device code with them.
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
}
