//! A launch's argument slots as the CUDA driver takes them.

use cudarc::driver::{DeviceRepr, LaunchArgs, PushKernelArg};

use crate::core::args::{KernelArgs, Slot};

// SAFETY: plain bytes with C layout; the driver copies as many as the parameter's size.
unsafe impl DeviceRepr for Slot {}

/// Appends the parameters of `args` to a launch, in order.
pub(crate) fn push_args<'b>(builder: &mut LaunchArgs<'b>, args: &'b KernelArgs<'_>) {
    for slot in args.slots() {
        builder.arg(slot);
    }
}
