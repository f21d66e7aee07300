//! The tuner's measuring hook on a CUDA GPU: candidate plans run on copies of the buffers a
//! call writes, restored from the caller's before each run.

use std::any::Any;
use std::time::Duration;

use cudarc::driver::{result, CudaSlice};

use crate::core::args::{sealed, KernelArgs, KernelBuffer};
use crate::core::error::{Error, Result};
use crate::core::plan::{LaunchPlan, Measure};
use crate::cuda::context::CudaGpu;
use crate::cuda::{allocation_error, driver_error, fused};

/// A candidate whose first run takes longer than this runs once; faster ones run twice and
/// count their faster run, so that a cold first run does not decide.
const SECOND_RUN_BELOW: Duration = Duration::from_millis(10);

/// Measures plans of one call on `gpu`, on copies of its writable buffers.
pub(crate) struct CudaMeasure<'s> {
    gpu: &'s CudaGpu,
    args: &'s KernelArgs<'s>,
    copies: WritableCopies,
}

impl<'s> CudaMeasure<'s> {
    /// A measurer of calls with `args`; `None` when the GPU has no memory for the copies.
    pub(crate) fn new(gpu: &'s CudaGpu, args: &'s KernelArgs<'s>) -> Result<Option<CudaMeasure<'s>>> {
        Ok(WritableCopies::new(gpu, args)?.map(|copies| CudaMeasure { gpu, args, copies }))
    }
}

impl Measure for CudaMeasure<'_> {
    unsafe fn measure(&mut self, plan: &LaunchPlan) -> Result<Duration> {
        let replacements: Vec<&dyn KernelBuffer> =
            self.copies.buffers.iter().map(|copy| copy as &dyn KernelBuffer).collect();
        let on_copies = self.args.with_mutable_replaced(&replacements);
        let mut best = Duration::MAX;
        for run in 0..2 {
            self.copies.restore(self.gpu, self.args)?;
            // SAFETY: `on_copies` are the caller's arguments, which match the plan's kernel's
            // parameters (the caller vouches), with each writable buffer replaced by a copy of
            // the same length and element type.
            let report = unsafe { fused::launch(self.gpu, plan.clone(), &on_copies) }?;
            best = best.min(report.gpu_time);
            if run == 0 && report.gpu_time > SECOND_RUN_BELOW {
                break;
            }
        }
        Ok(best)
    }
}

/// A copy of each buffer the kernel may write, for candidates to run on.
struct WritableCopies {
    buffers: Vec<DeviceCopy>,
}

impl WritableCopies {
    /// Uninitialised copies of `args`' writable buffers; `None` when the GPU has no memory for
    /// them.
    fn new(gpu: &CudaGpu, args: &KernelArgs<'_>) -> Result<Option<WritableCopies>> {
        let mut buffers = Vec::new();
        for buffer in args.mutable_buffers() {
            let bytes = (buffer.len() * buffer.element_bytes()).max(1);
            // SAFETY: `restore` fills the copy before any candidate reads it.
            match unsafe { gpu.stream().alloc::<u8>(bytes) }.map_err(allocation_error(bytes)) {
                Ok(memory) => {
                    buffers.push(DeviceCopy { memory, len: buffer.len(), element_bytes: buffer.element_bytes() })
                }
                Err(Error::OutOfMemory { .. }) => return Ok(None),
                Err(error) => return Err(error),
            }
        }
        Ok(Some(WritableCopies { buffers }))
    }

    /// Queues a copy of every writable buffer of `args` onto its copy, on the launch stream.
    fn restore(&self, gpu: &CudaGpu, args: &KernelArgs<'_>) -> Result<()> {
        for (original, copy) in args.mutable_buffers().zip(&self.buffers) {
            let (Some(from), Some(to)) = (original.device_address(), copy.device_address()) else {
                continue;
            };
            let bytes = copy.len * copy.element_bytes;
            if bytes == 0 {
                continue;
            }
            // SAFETY: both ranges are `bytes` long allocations of this GPU, live until the
            // stream is synchronised by the launch that follows; they do not overlap.
            unsafe { result::memcpy_dtod_async(to, from, bytes, gpu.stream().cu_stream()) }
                .map_err(driver_error("copying a buffer for tuning"))?;
        }
        Ok(())
    }
}

/// Device memory standing in for one of the caller's buffers.
struct DeviceCopy {
    memory: CudaSlice<u8>,
    len: usize,
    element_bytes: usize,
}

impl sealed::Buffer for DeviceCopy {}

impl KernelBuffer for DeviceCopy {
    fn len(&self) -> usize {
        self.len
    }

    fn element_bytes(&self) -> usize {
        self.element_bytes
    }

    fn device_address(&self) -> Option<u64> {
        use cudarc::driver::DevicePtr;
        // Event tracking is off (see `CudaGpu::open`), so there is no event to record on drop.
        let (address, _no_event) = self.memory.device_ptr(self.memory.stream());
        Some(address)
    }

    fn gpu_ordinal(&self) -> usize {
        self.memory.ordinal()
    }

    fn emulated(&self) -> Option<&(dyn Any + Send + Sync)> {
        None
    }

    fn emulated_team(&self) -> Option<&(dyn Any + Send + Sync)> {
        None
    }

    /// Tuning runs only on a GPU in no team, where nothing needs to be symmetric.
    fn is_symmetric(&self) -> bool {
        false
    }
}
