//! Launching a kernel: the launch configuration, the co-residency check that makes grid
//! barriers safe, and the launch itself.

use std::sync::{Arc, PoisonError};
use std::time::Duration;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaFunction, CudaSlice, CudaStream, DriverError, LaunchConfig, PushKernelArg};

use crate::barrier::{Barrier, LaunchMode};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::kernel::{KernelArgs, KernelSpec};
use crate::status::{DeviceStatus, STATUS_WORDS};

/// Barrier state words allocated at least, whatever the barrier asks for.
const MIN_BARRIER_WORDS: usize = 32;

/// How to launch a kernel; unset values take defaults that are always valid.
///
/// ```
/// use gsync_runtime::{Barrier, Launch};
/// let launch = Launch::new().blocks(60).threads(32).barrier(Barrier::Cooperative);
/// assert_eq!(launch.requested_blocks(), Some(60));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Launch {
    blocks: Option<u32>,
    threads: Option<u32>,
    barrier: Barrier,
    bounds_checks: Option<bool>,
}

impl Launch {
    /// The default launch: the largest co-resident grid, the kernel's block size, the
    /// default barrier.
    pub fn new() -> Self {
        Self::default()
    }

    /// Launches `blocks` blocks instead of the largest co-resident grid.
    #[must_use]
    pub fn blocks(mut self, blocks: u32) -> Self {
        self.blocks = Some(blocks);
        self
    }

    /// Uses `threads` threads per block instead of the kernel's default.
    #[must_use]
    pub fn threads(mut self, threads: u32) -> Self {
        self.threads = Some(threads);
        self
    }

    /// Uses `barrier` for the kernel's `grid_sync()` calls.
    #[must_use]
    pub fn barrier(mut self, barrier: Barrier) -> Self {
        self.barrier = barrier;
        self
    }

    /// Compiles the kernel with (`true`) or without (`false`) bounds checks on
    /// every slice access, whatever the build profile chose.
    #[must_use]
    pub fn bounds_checks(mut self, checks: bool) -> Self {
        self.bounds_checks = Some(checks);
        self
    }

    /// The kernel as this launch runs it: with the bounds-check choice applied.
    pub fn configure(&self, kernel: &KernelSpec) -> KernelSpec {
        KernelSpec { bounds_checks: self.bounds_checks.unwrap_or(kernel.bounds_checks), ..*kernel }
    }

    /// The number of blocks asked for, if any.
    pub fn requested_blocks(&self) -> Option<u32> {
        self.blocks
    }

    /// The block size asked for, if any.
    pub fn requested_threads(&self) -> Option<u32> {
        self.threads
    }

    /// The barrier to use.
    pub fn selected_barrier(&self) -> Barrier {
        self.barrier
    }

    /// The block size for `kernel`: the requested one, else
    /// [`KernelSpec::default_block_size`].
    pub fn threads_for(&self, kernel: &KernelSpec) -> u32 {
        self.threads.unwrap_or_else(|| kernel.default_block_size())
    }
}

/// What a launch did.
#[derive(Clone, Debug)]
pub struct LaunchReport {
    /// Time between CUDA events recorded just before and after the kernel.
    pub gpu_time: Duration,
    /// Blocks launched.
    pub blocks: u32,
    /// Threads per block.
    pub threads: u32,
    /// The barrier used.
    pub barrier: Barrier,
}

/// How many blocks of a kernel fit on the GPU at once.
#[derive(Clone, Copy, Debug)]
struct Residency {
    blocks_per_sm: u32,
    sm_count: u32,
}

impl Residency {
    fn max_blocks(self) -> u32 {
        self.blocks_per_sm.saturating_mul(self.sm_count)
    }
}

/// A launch with every value resolved and checked.
struct Plan {
    function: CudaFunction,
    blocks: u32,
    threads: u32,
    barrier: Barrier,
}

/// Device words every launch passes to its kernel, reused across launches.
pub(crate) struct LaunchScratch {
    status: CudaSlice<u32>,
    barrier_state: CudaSlice<u32>,
}

impl LaunchScratch {
    pub(crate) fn new(stream: &Arc<CudaStream>) -> Result<Self> {
        Ok(LaunchScratch {
            status: zeroed_words(stream, STATUS_WORDS)?,
            barrier_state: zeroed_words(stream, MIN_BARRIER_WORDS)?,
        })
    }

    /// Zeroes the status and at least `barrier_words` words of barrier state, on the stream.
    fn reset(&mut self, stream: &Arc<CudaStream>, barrier_words: usize) -> Result<()> {
        if self.barrier_state.len() < barrier_words {
            self.barrier_state = zeroed_words(stream, barrier_words)?;
        }
        let zero = Error::driver("zeroing the status word and barrier state");
        stream.memset_zeros(&mut self.status).and_then(|()| stream.memset_zeros(&mut self.barrier_state)).map_err(zero)
    }

    fn read_status(&self, stream: &Arc<CudaStream>) -> Result<DeviceStatus> {
        let mut words = [0u32; STATUS_WORDS];
        let read = Error::driver("reading the status word");
        stream.memcpy_dtoh(&self.status, &mut words).and_then(|()| stream.synchronize()).map_err(read)?;
        Ok(DeviceStatus::from_words(&words))
    }
}

/// The time between the events recorded around a kernel that has finished.
fn elapsed(events: Option<(CudaEvent, CudaEvent)>) -> std::result::Result<Duration, DriverError> {
    let Some((start, end)) = events else {
        return Ok(Duration::ZERO);
    };
    let ms = start.elapsed_ms(&end)?;
    Ok(Duration::try_from_secs_f64(f64::from(ms) / 1e3).unwrap_or_default())
}

fn zeroed_words(stream: &Arc<CudaStream>, words: usize) -> Result<CudaSlice<u32>> {
    stream.alloc_zeros::<u32>(words).map_err(Error::allocation(words * size_of::<u32>()))
}

impl Gpu {
    /// The most blocks of `kernel` that can be resident at once with `launch`'s block size and
    /// barrier: the driver's occupancy for the compiled kernel times the SM count.
    pub fn max_coresident_blocks(&self, kernel: &KernelSpec, launch: &Launch) -> Result<u32> {
        let kernel = &launch.configure(kernel);
        let threads = self.checked_threads(kernel, launch)?;
        let function = self.function(kernel, launch.barrier, threads)?;
        Ok(self.residency(kernel, &function, threads)?.max_blocks())
    }

    /// Runs `kernel` once and waits for it.
    ///
    /// Fails before launching when the grid cannot be co-resident (a grid barrier would hang),
    /// and after, with [`Error::OutOfBounds`], when a bounds-checked kernel indexed a slice
    /// out of bounds.
    ///
    /// # Safety
    /// `args` must match the kernel's C parameter list (the code `#[grid_phases]` generates
    /// guarantees it).
    pub unsafe fn launch_kernel(
        &self,
        kernel: &'static KernelSpec,
        launch: &Launch,
        args: KernelArgs<'_>,
    ) -> Result<LaunchReport> {
        let kernel = &launch.configure(kernel);
        if let Some(buffer_gpu) = args.foreign_gpu(self.info().ordinal) {
            return Err(Error::BufferOnOtherGpu {
                kernel: kernel.name.to_owned(),
                buffer_gpu,
                launch_gpu: self.info().ordinal,
            });
        }
        let plan = self.plan(kernel, launch)?;
        let descriptor = plan.barrier.descriptor();
        // One launch at a time may use the scratch words; the guard's state is reset below.
        let mut scratch = self.scratch.lock().unwrap_or_else(PoisonError::into_inner);
        scratch.reset(self.stream(), (descriptor.state_words)(plan.blocks, plan.threads))?;
        let running = format!("running kernel `{}`", kernel.name);
        // SAFETY: the caller vouches for `args`.
        let events = unsafe { self.enqueue(&plan, &args, &scratch) }.map_err(Error::driver(running.as_str()))?;
        // Waiting here also ends the kernel's use of the buffers `args` borrows.
        self.stream().synchronize().map_err(Error::driver(running.as_str()))?;
        let gpu_time = elapsed(events).map_err(Error::driver(running))?;
        scratch.read_status(self.stream())?.into_result(kernel)?;
        Ok(LaunchReport { gpu_time, blocks: plan.blocks, threads: plan.threads, barrier: plan.barrier })
    }

    /// Queues the launch between two timing events.
    ///
    /// # Safety
    /// `args` must match the kernel's C parameter list.
    unsafe fn enqueue(
        &self,
        plan: &Plan,
        args: &KernelArgs<'_>,
        scratch: &LaunchScratch,
    ) -> std::result::Result<Option<(CudaEvent, CudaEvent)>, DriverError> {
        let mut builder = self.stream().launch_builder(&plan.function);
        for slot in args.slots() {
            builder.arg(slot);
        }
        // The two trailing parameters every generated kernel declares.
        builder.arg(&scratch.barrier_state);
        builder.arg(&scratch.status);
        builder.record_kernel_launch(CUevent_flags::CU_EVENT_DEFAULT);
        let config =
            LaunchConfig { grid_dim: (plan.blocks, 1, 1), block_dim: (plan.threads, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: the caller vouches for `args`; the scratch words outlive the launch.
        match plan.barrier.descriptor().launch_mode {
            LaunchMode::Cooperative => unsafe { builder.launch_cooperative(config) },
            LaunchMode::Ordinary => unsafe { builder.launch(config) },
        }
    }

    /// Resolves the defaults of `launch` and checks everything that can be checked before
    /// launching.
    fn plan(&self, kernel: &KernelSpec, launch: &Launch) -> Result<Plan> {
        let barrier = launch.barrier;
        let descriptor = barrier.descriptor();
        if descriptor.launch_mode == LaunchMode::Cooperative && !self.info().cooperative_launch {
            return Err(Error::CooperativeLaunchUnsupported {
                gpu: self.info().name.clone(),
                barrier: descriptor.name,
            });
        }
        let threads = self.checked_threads(kernel, launch)?;
        let function = self.function(kernel, barrier, threads)?;
        let residency = self.residency(kernel, &function, threads)?;
        let barrier_max = (descriptor.max_blocks)(threads);
        let default_blocks = barrier_max.map_or(residency.max_blocks(), |max| max.min(residency.max_blocks())).max(1);
        let blocks = launch.blocks.unwrap_or(default_blocks);
        if blocks == 0 {
            return Err(Error::EmptyGrid { kernel: kernel.name.to_owned() });
        }
        if blocks > residency.max_blocks() {
            return Err(Error::GridTooLarge {
                kernel: kernel.name.to_owned(),
                requested: blocks,
                max: residency.max_blocks(),
                blocks_per_sm: residency.blocks_per_sm,
                sm_count: residency.sm_count,
                threads,
            });
        }
        if let Some(max) = barrier_max.filter(|&max| blocks > max) {
            return Err(Error::BarrierBlockLimit {
                kernel: kernel.name.to_owned(),
                barrier: descriptor.name,
                requested: blocks,
                max,
            });
        }
        Ok(Plan { function, blocks, threads, barrier })
    }

    fn checked_threads(&self, kernel: &KernelSpec, launch: &Launch) -> Result<u32> {
        let threads = launch.threads_for(kernel);
        let max = self.info().max_threads_per_block;
        if (1..=max).contains(&threads) {
            Ok(threads)
        } else {
            Err(Error::InvalidBlockSize { kernel: kernel.name.to_owned(), threads, max })
        }
    }

    /// Occupancy of the compiled kernel; kernels use static shared memory only, so the dynamic
    /// shared memory size is 0.
    fn residency(&self, kernel: &KernelSpec, function: &CudaFunction, threads: u32) -> Result<Residency> {
        let blocks_per_sm = function
            .occupancy_max_active_blocks_per_multiprocessor(threads, 0, None)
            .map_err(Error::driver(format!("computing the occupancy of kernel `{}`", kernel.name)))?;
        Ok(Residency { blocks_per_sm, sm_count: self.info().sm_count })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::tests::SMOOTH;

    #[test]
    fn the_builder_records_what_was_asked() {
        let launch = Launch::new().blocks(60).threads(32);
        assert_eq!(launch.requested_blocks(), Some(60));
        assert_eq!(launch.requested_threads(), Some(32));
        assert_eq!(launch.selected_barrier(), Barrier::Cooperative);
    }

    #[test]
    fn requested_threads_override_the_kernel_default() {
        assert_eq!(Launch::new().threads_for(&SMOOTH), 256);
        let wide = KernelSpec { default_threads: 512, ..SMOOTH };
        assert_eq!(Launch::new().threads_for(&wide), 512);
        assert_eq!(Launch::new().threads(64).threads_for(&wide), 64);
    }

    #[test]
    fn residency_multiplies_without_overflow() {
        let residency = Residency { blocks_per_sm: u32::MAX, sm_count: 2 };
        assert_eq!(residency.max_blocks(), u32::MAX);
    }
}
