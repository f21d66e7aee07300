//! The CUDA backend: the only part of the runtime that imports cudarc.
//!
//! Follow a launch in this order: `discover` (finding the driver, NVRTC and the CUDA
//! headers, each library checked by `elf` before it is loaded), `compile` and `cache` (NVRTC,
//! and its cubins on disk), `context` (an opened GPU: its stream, its loaded kernels, its
//! launch scratch), `memory` (buffers), `occupancy` (how many blocks fit), `device` (this GPU
//! as the launch plan's `Device`, with `measure`, the tuner's hook), then, with a plan that
//! `core` finished, `fused` (one cooperative or ordinary launch) or `split` (one launch per
//! segment, or a CUDA graph of them). `scratch` holds the status word and the barrier state
//! every launch passes, `profile` the records of a profiled launch, and `health` records a
//! lost context.

pub(crate) mod args;
pub(crate) mod cache;
pub(crate) mod calibrate;
pub(crate) mod compile;
pub(crate) mod context;
pub(crate) mod device;
pub(crate) mod discover;
pub(crate) mod elf;
pub(crate) mod fit;
pub(crate) mod fused;
pub(crate) mod graph;
pub(crate) mod health;
pub(crate) mod measure;
pub(crate) mod memory;
pub(crate) mod nvshmem;
pub(crate) mod occupancy;
pub(crate) mod profile;
pub(crate) mod scratch;
pub(crate) mod split;
pub(crate) mod team;
pub(crate) mod timing;

pub(crate) use context::{require_gpu, CudaGpu};
/// The cudarc types of the public interop API (`Gpu::from_cudarc`, `Gpu::adopt_cudarc`, …).
pub(crate) use cudarc::driver::{sys::CUdeviceptr, CudaContext, CudaSlice, CudaStream};
pub(crate) use memory::{CudaBuffer, CudaElement, Ownership};
pub(crate) use split::CudaSplitRun;

use cudarc::driver::sys::CUresult;
use cudarc::driver::DriverError;

use crate::core::error::Error;

/// A failed driver call as the source of an [`Error`]: the result code by name, which
/// formatting never asks the driver for (it may be gone).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct DriverFailure(pub DriverError);

impl std::fmt::Display for DriverFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.0 .0)
    }
}

impl std::fmt::Debug for DriverFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DriverFailure({self})")
    }
}

impl std::error::Error for DriverFailure {}

/// Maps a failed driver call to [`Error::Driver`], saying what the runtime was doing.
pub(crate) fn driver_error(context: impl Into<String>) -> impl FnOnce(DriverError) -> Error {
    let context = context.into();
    move |source| Error::Driver { context, source: Box::new(DriverFailure(source)) }
}

/// Maps a failed allocation of `bytes` to [`Error::OutOfMemory`] when memory ran out.
pub(crate) fn allocation_error(bytes: usize) -> impl FnOnce(DriverError) -> Error {
    move |source| {
        if source.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            Error::OutOfMemory { bytes }
        } else {
            driver_error(format!("allocating {bytes} bytes"))(source)
        }
    }
}
