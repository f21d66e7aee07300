//! A CUDA GPU as the launch plan sees it (`core::plan::Device`): its facts, the occupancy of
//! a compiled variant, the tuned configurations, and the measuring hook.

use std::sync::{Arc, OnceLock};

use crate::barrier::{AutoTable, LaunchMode};
use crate::core::args::KernelArgs;
use crate::core::config_cache::ConfigCache;
use crate::core::device::DeviceInfo;
use crate::core::dynamic_shared::SharedLayout;
use crate::core::error::Result;
use crate::core::grid::Residency;
use crate::core::plan::{Device, KernelVariant, Measure};
use crate::core::split::no_segments;
use crate::cuda::calibrate;
use crate::cuda::compile::nvrtc_version;
use crate::cuda::context::CudaGpu;
use crate::cuda::measure::CudaMeasure;
use crate::cuda::occupancy::{grid_limit_reason, residency};

impl Device for CudaGpu {
    fn info(&self) -> &DeviceInfo {
        CudaGpu::info(self)
    }

    /// The driver's occupancy of the variant compiled and loaded; for a split variant, that of
    /// its segment kernel that holds the fewest blocks: a grid of that many is resident in
    /// every segment, which a kernel whose blocks wait for each other inside a phase (a
    /// decoupled look-back) needs of its split form as of its fused one.
    fn residency(&self, variant: &KernelVariant, shared: &SharedLayout) -> Result<Residency> {
        let (kernel, threads) = (&variant.build, variant.threads);
        match variant.barrier.descriptor().launch_mode {
            LaunchMode::Split => {
                let segments = self.segment_functions(kernel, threads)?.0;
                let held = segments.iter().map(|segment| residency(self, kernel, segment, threads, shared));
                let held = held.collect::<Result<Vec<Residency>>>()?;
                held.into_iter().min_by_key(|residency| residency.max_blocks()).ok_or_else(|| no_segments(kernel))
            }
            LaunchMode::Cooperative | LaunchMode::Ordinary => {
                residency(self, kernel, &self.function(kernel, variant.barrier, threads)?, threads, shared)
            }
        }
    }

    fn auto_table(&self) -> Result<Arc<AutoTable>> {
        calibrate::auto_table(self)
    }

    fn block_limit(&self, _threads: u32) -> u32 {
        CudaGpu::info(self).max_blocks_per_grid
    }

    fn block_limit_reason(&self) -> (String, String) {
        grid_limit_reason(self)
    }

    fn tuned(&self) -> Option<&ConfigCache> {
        Some(self.configs())
    }

    fn toolchain(&self) -> Result<&'static str> {
        toolchain(self)
    }

    unsafe fn measurer<'s>(&'s self, args: &'s KernelArgs<'s>) -> Result<Option<Box<dyn Measure + 's>>> {
        Ok(CudaMeasure::new(self, args)?.map(|measure| Box::new(measure) as Box<dyn Measure + 's>))
    }
}

/// The compiler and driver that decide a compiled kernel's registers, which key tuned
/// configurations; the same for every GPU of the process, so asked once.
pub(crate) fn toolchain(gpu: &CudaGpu) -> Result<&'static str> {
    static TOOLCHAIN: OnceLock<String> = OnceLock::new();
    if let Some(toolchain) = TOOLCHAIN.get() {
        return Ok(toolchain);
    }
    let toolchain = format!("nvrtc {:?}, driver {:?}", nvrtc_version()?, gpu.info().driver_cuda_version);
    Ok(TOOLCHAIN.get_or_init(|| toolchain))
}
