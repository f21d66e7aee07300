//! How many blocks of a compiled kernel fit on a CUDA GPU at once.

use cudarc::driver::CudaFunction;

use crate::core::error::Result;
use crate::core::grid::{check_shared_memory, Residency, DYNAMIC_SHARED_BYTES};
use crate::core::kernel::KernelSpec;
use crate::cuda::context::CudaGpu;
use crate::cuda::driver_error;

/// The device and the reason of its grid limit, for
/// [`Error::TooManyBlocks`](crate::Error::TooManyBlocks).
pub(crate) fn grid_limit_reason(gpu: &CudaGpu) -> (String, String) {
    (format!("GPU `{}`", gpu.info().name), "the largest gridDim.x the driver reports".to_owned())
}

/// Occupancy of a compiled kernel, after checking that one block fits at all: its shared
/// memory (static, as compiled, plus [`DYNAMIC_SHARED_BYTES`]) within the GPU's per-block
/// limit.
pub(crate) fn residency(
    gpu: &CudaGpu,
    kernel: &KernelSpec,
    function: &CudaFunction,
    threads: u32,
) -> Result<Residency> {
    let static_bytes = function
        .shared_size_bytes()
        .map_err(driver_error(format!("reading the shared memory size of kernel `{}`", kernel.name)))?;
    let bytes = u64::try_from(static_bytes).unwrap_or(0) + u64::from(DYNAMIC_SHARED_BYTES);
    check_shared_memory(kernel, gpu.info(), bytes)?;
    let blocks_per_sm = function
        .occupancy_max_active_blocks_per_multiprocessor(threads, DYNAMIC_SHARED_BYTES as usize, None)
        .map_err(driver_error(format!("computing the occupancy of kernel `{}`", kernel.name)))?;
    Ok(Residency { blocks_per_sm, sm_count: gpu.info().sm_count })
}
