//! A launch's arguments as the CUDA driver takes them, and the check that its buffers are
//! this GPU's.

use cudarc::driver::{DeviceRepr, LaunchArgs, PushKernelArg};

use crate::core::args::{KernelArgs, Slot};
use crate::core::device::Backend;
use crate::core::dynamic_shared::SharedLayout;
use crate::core::error::{Error, Result};
use crate::core::kernel::KernelSpec;
use crate::cuda::context::CudaGpu;

// SAFETY: plain bytes with C layout; the driver copies as many as the parameter's size.
unsafe impl DeviceRepr for Slot {}

/// Appends the parameters of `args` to a launch, in order.
pub(crate) fn push_args<'b>(builder: &mut LaunchArgs<'b>, args: &'b KernelArgs<'_>) {
    for slot in args.slots() {
        builder.arg(slot);
    }
}

/// Appends each shared slice's length and byte offset, the parameters that follow the
/// kernel's own.
pub(crate) fn push_shared_args<'b>(builder: &mut LaunchArgs<'b>, layout: &'b SharedLayout) {
    for param in &layout.params {
        builder.arg(param);
    }
}

/// Refuses buffers of another GPU or of the emulator, whose addresses mean nothing here.
pub(crate) fn check_buffers(gpu: &CudaGpu, kernel: &KernelSpec, args: &KernelArgs<'_>) -> Result<()> {
    let ordinal = gpu.info().ordinal;
    for buffer in args.buffers() {
        if buffer.device_address().is_none() {
            return Err(Error::BufferBackendMismatch { buffer: Backend::Emulator, gpu: Backend::Cuda });
        }
        if buffer.gpu_ordinal() != ordinal {
            return Err(Error::BufferOnOtherGpu {
                kernel: kernel.name.to_owned(),
                buffer_gpu: buffer.gpu_ordinal(),
                launch_gpu: ordinal,
            });
        }
    }
    if gpu.team().is_some_and(|team| team.n_pes() > 1) {
        if let Some((name, _)) = args.symmetric_buffers().find(|(_, buffer)| !buffer.is_symmetric()) {
            return Err(Error::NotSymmetric { kernel: kernel.name.to_owned(), param: name.to_owned() });
        }
    }
    Ok(())
}
