//! How many blocks of a compiled kernel fit on a CUDA GPU at once.

use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::CudaFunction;

use crate::core::dynamic_shared::{check_dynamic_shared, SharedLayout};
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

/// Occupancy of a compiled kernel with `dynamic` shared slices, after checking that one block
/// fits at all: its static shared memory (as compiled, plus [`DYNAMIC_SHARED_BYTES`]) within
/// the GPU's per-block limit, and its shared slices beside it within the opt-in maximum, which
/// the function is then allowed to use.
pub(crate) fn residency(
    gpu: &CudaGpu,
    kernel: &KernelSpec,
    function: &CudaFunction,
    threads: u32,
    dynamic: &SharedLayout,
) -> Result<Residency> {
    let static_bytes = function
        .shared_size_bytes()
        .map_err(driver_error(format!("reading the shared memory size of kernel `{}`", kernel.name)))?;
    let static_bytes = u64::try_from(static_bytes).unwrap_or(0);
    check_shared_memory(kernel, gpu.info(), static_bytes + u64::from(DYNAMIC_SHARED_BYTES))?;
    check_dynamic_shared(kernel, gpu.info(), threads, static_bytes, dynamic)?;
    allow_dynamic_shared(gpu, kernel, function, static_bytes, dynamic)?;
    let blocks_per_sm = function
        .occupancy_max_active_blocks_per_multiprocessor(
            threads,
            DYNAMIC_SHARED_BYTES as usize + dynamic.driver_bytes() as usize,
            None,
        )
        .map_err(driver_error(format!("computing the occupancy of kernel `{}`", kernel.name)))?;
    Ok(Residency { blocks_per_sm, sm_count: gpu.info().sm_count })
}

/// Lets `function` take shared slices beyond the 48 KiB a block gets without asking
/// (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`, set to all the opt-in maximum leaves
/// beside its static shared memory: the attribute is a ceiling, each launch passes its own
/// bytes, and one value for every launch means no launch changes it under another).
fn allow_dynamic_shared(
    gpu: &CudaGpu,
    kernel: &KernelSpec,
    function: &CudaFunction,
    static_bytes: u64,
    dynamic: &SharedLayout,
) -> Result<()> {
    let default = u64::from(gpu.info().max_shared_memory_per_block);
    if static_bytes + dynamic.bytes <= default {
        return Ok(());
    }
    let ceiling = u64::from(gpu.info().max_shared_memory_per_block_optin).saturating_sub(static_bytes);
    function
        .set_attribute(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            i32::try_from(ceiling).unwrap_or(i32::MAX),
        )
        .map_err(driver_error(format!("allowing kernel `{}` {} bytes of dynamic shared memory", kernel.name, ceiling)))
}
