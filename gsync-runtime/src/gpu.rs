//! A GPU as kernels see it: a CUDA device, or the CPU emulator standing in for one.

use std::fmt;
use std::sync::Once;

use crate::cuda_gpu::{require_gpu, CudaGpu};
use crate::emu::Emulator;
use crate::error::{Error, Result};

/// What a GPU is and what it can do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The device's name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// The CUDA ordinal.
    pub ordinal: usize,
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Compute capability as (major, minor); kernels are compiled for exactly this.
    pub compute_capability: (u32, u32),
    /// Whether the device supports cooperative launches.
    pub cooperative_launch: bool,
    /// The most threads a block may have.
    pub max_threads_per_block: u32,
    /// Shared memory available to one block, in bytes.
    pub max_shared_memory_per_block: u32,
    /// The most blocks one grid may have (`gridDim.x`). On the emulator, which keeps every
    /// thread of a grid alive at once, the most for blocks of up to 64 threads: larger blocks
    /// allow fewer (2^20 threads in all).
    pub max_blocks_per_grid: u32,
    /// Device memory, in bytes.
    pub total_memory: u64,
    /// The newest CUDA version the installed driver supports, as (major, minor)
    /// (`cuDriverGetVersion`); `None` on the emulator.
    pub driver_cuda_version: Option<(u32, u32)>,
}

/// Where a [`Gpu`] runs kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// An NVIDIA GPU, through the CUDA driver.
    Cuda,
    /// The CPU emulator: every thread a task on the host, with GPU semantics.
    Emulator,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Cuda => "CUDA",
            Backend::Emulator => "CPU emulator",
        })
    }
}

/// One GPU, or the CPU emulator standing in for one: where buffers live and kernels run.
///
/// On CUDA, all work goes to one stream, in order; every call that returns data waits for it.
pub struct Gpu {
    device: Device,
}

/// The backend's own state.
pub(crate) enum Device {
    /// A CUDA GPU (boxed: its state dwarfs the emulator's).
    Cuda(Box<CudaGpu>),
    /// The CPU emulator.
    Emulator(Emulator),
}

impl Gpu {
    /// Opens GPU `ordinal` (0 is the first) when the NVIDIA driver is installed and reports
    /// it; otherwise runs on the CPU emulator, saying so once per process on stderr.
    ///
    /// Errors opening a GPU that is there are returned, not papered over.
    pub fn new(ordinal: usize) -> Result<Gpu> {
        match require_gpu(ordinal) {
            Ok(()) => Gpu::open_cuda(ordinal),
            Err(reason) => {
                announce_fallback(&reason);
                Ok(Gpu::emulator())
            }
        }
    }

    /// Opens CUDA GPU `ordinal` (0 is the first), or says why it cannot.
    pub fn cuda(ordinal: usize) -> Result<Gpu> {
        require_gpu(ordinal)?;
        Gpu::open_cuda(ordinal)
    }

    /// The CPU emulator, which runs every kernel on the host's cores with GPU semantics.
    pub fn emulator() -> Gpu {
        Gpu { device: Device::Emulator(Emulator::new()) }
    }

    /// Where this GPU runs kernels.
    pub fn backend(&self) -> Backend {
        match self.device {
            Device::Cuda(_) => Backend::Cuda,
            Device::Emulator(_) => Backend::Emulator,
        }
    }

    /// What this GPU is and what it can do.
    pub fn info(&self) -> &DeviceInfo {
        match &self.device {
            Device::Cuda(cuda) => cuda.info(),
            Device::Emulator(emulator) => emulator.info(),
        }
    }

    /// The backend's state.
    pub(crate) fn device(&self) -> &Device {
        &self.device
    }

    /// The CUDA GPU, or [`Error::WrongBackend`] saying that `what` needs one.
    pub(crate) fn require_cuda(&self, what: &'static str) -> Result<&CudaGpu> {
        match &self.device {
            Device::Cuda(cuda) => Ok(cuda),
            Device::Emulator(_) => Err(Error::WrongBackend { what, backend: Backend::Emulator }),
        }
    }

    fn open_cuda(ordinal: usize) -> Result<Gpu> {
        Ok(Gpu { device: Device::Cuda(Box::new(CudaGpu::open(ordinal)?)) })
    }
}

impl fmt::Debug for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gpu").field("backend", &self.backend()).field("info", self.info()).finish_non_exhaustive()
    }
}

/// Says once per process that kernels run on the CPU, and why.
fn announce_fallback(reason: &Error) {
    static ANNOUNCED: Once = Once::new();
    ANNOUNCED.call_once(|| eprintln!("{}", fallback_notice(reason)));
}

/// The one line [`Gpu::new`] prints when it falls back to the emulator.
fn fallback_notice(reason: &Error) -> String {
    let reason = match reason {
        Error::DriverNotFound { .. } => "the NVIDIA driver library is not installed".to_owned(),
        Error::NoSuchGpu { count: 0, .. } => "the driver reports no GPU".to_owned(),
        Error::NoSuchGpu { ordinal, count } => format!("there is no GPU {ordinal}, the driver reports {count}"),
        Error::Driver { source, .. } => format!("the CUDA driver failed to initialise: {source}"),
        other => other.to_string(),
    };
    format!("gsync: no CUDA GPU ({reason}); running kernels on the CPU emulator")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover;

    #[test]
    fn opening_a_cuda_gpu_without_a_driver_is_an_error_not_a_panic() {
        if discover::require_driver().is_ok() {
            return; // a driver is installed; the GPU tests cover this machine.
        }
        let error = Gpu::cuda(0).expect_err("no driver, no GPU");
        assert!(matches!(error, Error::DriverNotFound { .. }), "{error}");
        assert!(error.to_string().contains("install the NVIDIA driver"));
    }

    #[test]
    fn new_falls_back_to_the_emulator_without_a_gpu() {
        if Gpu::cuda(0).is_ok() {
            return; // a GPU is here; `new` opens it.
        }
        let gpu = Gpu::new(0).expect("the emulator always opens");
        assert_eq!(gpu.backend(), Backend::Emulator);
        assert_eq!(gpu.info().name, "gsync CPU emulator");
    }

    #[test]
    fn the_fallback_notice_is_one_line_with_a_short_reason() {
        let notice = fallback_notice(&Error::DriverNotFound { searched: vec!["libcuda.so.1".into()] });
        assert_eq!(
            notice,
            "gsync: no CUDA GPU (the NVIDIA driver library is not installed); running kernels on the CPU emulator"
        );
        let notice = fallback_notice(&Error::NoSuchGpu { ordinal: 2, count: 1 });
        assert!(notice.contains("(there is no GPU 2, the driver reports 1)"), "{notice}");
        assert!(!notice.contains('\n'));
    }

    #[test]
    fn cuda_only_calls_on_the_emulator_name_the_call_and_the_backend() {
        let error = Gpu::emulator().require_cuda("Gpu::launch_kernel").expect_err("not CUDA");
        assert!(matches!(error, Error::WrongBackend { what: "Gpu::launch_kernel", backend: Backend::Emulator }));
        assert!(error.to_string().contains("Gpu::launch_kernel"), "{error}");
    }
}
