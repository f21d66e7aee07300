//! A head start for timed launches: the GPU spins for a moment on the launch's own stream
//! first, so that by the time it reaches the launch, the host has submitted it.
//!
//! A launch's report times it between two events recorded on its stream around it. On an idle
//! stream the first event fires as soon as it is recorded, and the kernel starts only once the
//! host has finished submitting it: the time then holds the submission (several µs for a
//! launch whose state the host writes, more for a split run's several launches), which a
//! launch queued behind other work never pays. Fused kernels, split runs and graph replays
//! are timed alike, each behind the same head start.

use std::sync::Arc;
use std::time::Duration;

use gsync::cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use gsync::cudarc::nvrtc::Ptx;
use gsync::{Backend, Gpu};

use super::AnyError;

/// The spinning kernel: one thread reads the global timer until `ns` nanoseconds have passed.
const SPIN_C: &str = r#"extern "C" __global__ void head_start_spin(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}"#;

/// How long the GPU spins: longer than any launch in the examples takes to submit.
const SPIN: Duration = Duration::from_micros(60);

/// The spinning kernel on a GPU's stream; nothing on the emulator, whose launches hold no
/// submission.
pub struct HeadStart {
    spin: Option<(Arc<CudaStream>, CudaFunction)>,
}

impl HeadStart {
    /// The head start for launches on `gpu`.
    pub fn new(gpu: &Gpu) -> Result<HeadStart, AnyError> {
        if gpu.backend() != Backend::Cuda {
            return Ok(HeadStart { spin: None });
        }
        let (major, minor) = gpu.info().compute_capability;
        let compiled = gsync::compile(SPIN_C, "head_start_spin", (major, minor))?;
        let module = gpu.cuda_context()?.load_module(Ptx::from_binary(compiled.cubin))?;
        let function = module.load_function("head_start_spin")?;
        Ok(HeadStart { spin: Some((gpu.cuda_stream()?.clone(), function)) })
    }

    /// Queues the spin on the GPU's stream: call it right before the launch to time.
    pub fn give(&self) -> Result<(), AnyError> {
        let Some((stream, function)) = &self.spin else { return Ok(()) };
        let ns = SPIN.as_nanos() as u64;
        let mut builder = stream.launch_builder(function);
        builder.arg(&ns);
        let config = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: the kernel takes one `unsigned long long`, which `ns` is.
        unsafe { builder.launch(config) }?;
        Ok(())
    }
}
