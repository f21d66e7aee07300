//! Running a fused kernel: one launch whose `grid_sync()` calls are device barriers.

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaFunction, DriverError, LaunchConfig};

use crate::barrier::{Barrier, LaunchMode, RelayMode};
use crate::cuda_gpu::CudaGpu;
use crate::emu;
use crate::error::{Error, Result};
use crate::gpu::{Backend, Device, Gpu};
use crate::health::describe_launch;
use crate::kernel::{KernelArgs, KernelSpec};
use crate::launch::{elapsed, Launch, LaunchReport};
use crate::plan::{check_block_limit, checked_threads, resolve_barrier, resolve_grid, CoResidency, Grid};
use crate::scratch::LaunchScratch;
use crate::segments::check_split;

/// A launch with every value resolved and checked.
struct Plan {
    function: CudaFunction,
    grid: Grid,
    /// The barrier the launch reports.
    barrier: Barrier,
    /// The barrier whose fragment `function` was compiled with, whose state it uses.
    compiled: Barrier,
}

impl Gpu {
    /// The most blocks of `kernel` that can be resident at once with `launch`'s block size and
    /// barrier: the driver's occupancy for the compiled kernel times the SM count. For
    /// [`Barrier::MultiLaunch`], that of the first segment kernel (and
    /// [`Error::CannotSplit`] for a kernel that cannot be split, on either backend). On the
    /// emulator, whose blocks all exist at once, its grid limit: 2^20 threads, at most 2^14
    /// blocks.
    pub fn max_coresident_blocks(&self, kernel: &KernelSpec, launch: &Launch) -> Result<u32> {
        let kernel = &launch.configure(kernel);
        let threads = checked_threads(self.info(), kernel, launch.threads_for(kernel))?;
        let barrier = launch.selected_barrier();
        match self.device() {
            Device::Cuda(cuda) => cuda.health().guard(|| {
                let barrier = cuda.resolve(kernel, barrier, None, threads)?;
                cuda.max_coresident_blocks(kernel, barrier, threads)
            }),
            Device::Emulator(_) if barrier.descriptor().launch_mode == LaunchMode::Segments => {
                check_split(kernel).map(|()| emu::max_grid_blocks(threads))
            }
            Device::Emulator(_) => Ok(emu::max_grid_blocks(threads)),
        }
    }

    /// Runs `kernel` once and waits for it.
    ///
    /// Fails before launching when the grid cannot be co-resident (a grid barrier would hang)
    /// or the barrier cannot serve it; after, with [`Error::OutOfBounds`] when a
    /// bounds-checked kernel indexed a slice out of bounds, and with
    /// [`Error::BarrierTimeout`] when a software barrier waited past the launch's watchdog.
    /// [`Barrier::MultiLaunch`] runs through [`Gpu::begin_segments`] instead. CUDA only: on
    /// the emulator, kernels run through [`Gpu::emulate`], and this fails with
    /// [`Error::WrongBackend`].
    ///
    /// # Safety
    /// `args` must match the kernel's C parameter list (the code `#[grid_phases]` generates
    /// guarantees it).
    pub unsafe fn launch_kernel(
        &self,
        kernel: &KernelSpec,
        launch: &Launch,
        args: KernelArgs<'_>,
    ) -> Result<LaunchReport> {
        let cuda = self.require_cuda("Gpu::launch_kernel")?;
        // SAFETY: the caller vouches for `args`.
        unsafe { cuda.launch_fused(kernel, launch, args, CoResidency::Required) }
    }

    /// Like [`launch_kernel`](Self::launch_kernel), but launches grids larger than can be
    /// co-resident instead of refusing them with [`Error::GridTooLarge`].
    ///
    /// Meant for proving the watchdog. With a software barrier, the resident blocks wait for
    /// blocks that cannot be scheduled until they leave, so the launch ends only through the
    /// watchdog ([`Launch::watchdog`]), with [`Error::BarrierTimeout`]: with the watchdog off
    /// it never ends, and the GPU stays busy until the process is killed. The driver itself
    /// refuses a cooperative launch that is too large. CUDA only, like `launch_kernel`.
    ///
    /// # Safety
    /// As [`launch_kernel`](Self::launch_kernel); and the caller accepts that a launch with
    /// the watchdog off may never return.
    pub unsafe fn launch_kernel_unchecked(
        &self,
        kernel: &KernelSpec,
        launch: &Launch,
        args: KernelArgs<'_>,
    ) -> Result<LaunchReport> {
        let cuda = self.require_cuda("Gpu::launch_kernel_unchecked")?;
        // SAFETY: the caller vouches for `args` and accepts the risk.
        unsafe { cuda.launch_fused(kernel, launch, args, CoResidency::Unchecked) }
    }
}

impl CudaGpu {
    /// See [`Gpu::max_coresident_blocks`].
    fn max_coresident_blocks(&self, kernel: &KernelSpec, barrier: Barrier, threads: u32) -> Result<u32> {
        let function = match barrier.descriptor().launch_mode {
            LaunchMode::Segments => self.first_segment(kernel, threads)?,
            LaunchMode::Cooperative | LaunchMode::Ordinary => self.function(kernel, barrier, threads)?,
        };
        Ok(self.residency(kernel, &function, threads)?.max_blocks())
    }

    /// # Safety
    /// `args` must match the kernel's C parameter list.
    unsafe fn launch_fused(
        &self,
        kernel: &KernelSpec,
        launch: &Launch,
        args: KernelArgs<'_>,
        co_residency: CoResidency,
    ) -> Result<LaunchReport> {
        self.health().check()?;
        let kernel = &launch.configure(kernel);
        self.check_buffers(kernel, &args)?;
        let plan = self.plan(kernel, launch, co_residency).map_err(|error| self.health().absorb(error))?;
        self.health().launching(describe_launch(kernel, plan.grid, plan.barrier));
        let watchdog = launch.watchdog_limit();
        // One launch at a time may use the scratch words; `prepare` resets what it needs.
        let mut scratch = self.lock_scratch();
        scratch.prepare(self.stream(), plan.compiled, plan.grid, plan.barrier.watchdog_ns(watchdog))?;
        // SAFETY: the caller vouches for `args`.
        let ran = unsafe { self.run(kernel, &plan, &args, &scratch) };
        let outcome = ran.and_then(|gpu_time| {
            scratch.read_status(self.stream())?.into_result(kernel, plan.barrier, watchdog)?;
            Ok(gpu_time)
        });
        scratch.settle(self.stream(), plan.compiled, outcome.is_ok());
        let gpu_time = outcome.map_err(|error| self.health().absorb(error))?;
        Ok(LaunchReport { gpu_time, blocks: plan.grid.blocks, threads: plan.grid.threads, barrier: plan.barrier })
    }

    /// Launches and waits, returning the kernel's time.
    ///
    /// # Safety
    /// `args` must match the kernel's C parameter list.
    unsafe fn run(
        &self,
        kernel: &KernelSpec,
        plan: &Plan,
        args: &KernelArgs<'_>,
        scratch: &LaunchScratch,
    ) -> Result<std::time::Duration> {
        let running = format!("running kernel `{}`", kernel.name);
        // SAFETY: the caller vouches for `args`.
        let events = unsafe { self.enqueue(plan, args, scratch) }.map_err(Error::driver(running.as_str()))?;
        // Waiting here also ends the kernel's use of the buffers `args` borrows.
        self.stream().synchronize().map_err(Error::driver(running.as_str()))?;
        elapsed(events).map_err(Error::driver(running))
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
        args.push_onto(&mut builder);
        scratch.push_trailing_args(&mut builder);
        builder.record_kernel_launch(CUevent_flags::CU_EVENT_DEFAULT);
        let config = LaunchConfig {
            grid_dim: (plan.grid.blocks, 1, 1),
            block_dim: (plan.grid.threads, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the caller vouches for `args`; the scratch words outlive the launch.
        match plan.barrier.descriptor().launch_mode {
            LaunchMode::Cooperative => unsafe { builder.launch_cooperative(config) },
            LaunchMode::Ordinary | LaunchMode::Segments => unsafe { builder.launch(config) },
        }
    }

    /// The barrier a launch of `requested_blocks` (or the default grid) uses: Auto becomes the
    /// barrier measured fastest for the grid, whose default size is Relay's largest
    /// co-resident grid.
    fn resolve(&self, kernel: &KernelSpec, barrier: Barrier, requested_blocks: Option<u32>, threads: u32) -> Result<Barrier> {
        resolve_barrier(barrier, self.info(), requested_blocks, || {
            let function = self.function(kernel, Barrier::Relay, threads)?;
            Ok(self.residency(kernel, &function, threads)?.max_blocks())
        })
    }

    /// Resolves the defaults of `launch` and checks everything that can be checked before
    /// launching.
    fn plan(&self, kernel: &KernelSpec, launch: &Launch, co_residency: CoResidency) -> Result<Plan> {
        let threads = checked_threads(self.info(), kernel, launch.threads_for(kernel))?;
        let barrier = self.resolve(kernel, launch.selected_barrier(), launch.requested_blocks(), threads)?;
        let descriptor = barrier.descriptor();
        match descriptor.launch_mode {
            LaunchMode::Cooperative if !self.info().cooperative_launch => {
                return Err(Error::CooperativeLaunchUnsupported {
                    gpu: self.info().name.clone(),
                    barrier: descriptor.name,
                });
            }
            LaunchMode::Segments => return Err(not_fused(kernel)),
            LaunchMode::Cooperative | LaunchMode::Ordinary => {}
        }
        let function = self.function(kernel, barrier, threads)?;
        let residency = self.residency(kernel, &function, threads)?;
        let grid = resolve_grid(kernel, barrier, launch.requested_blocks(), threads, residency, co_residency)?;
        check_block_limit(kernel, grid, self.info().max_blocks_per_grid, || self.grid_limit_reason())?;
        let compiled = barrier.compiled_for(RelayMode::for_grid(grid.blocks, self.info().sm_count));
        if compiled == barrier {
            return Ok(Plan { function, grid, barrier, compiled });
        }
        // Relay's own kernel serves any grid: it stays where the other one would not be
        // co-resident.
        let other = self.function(kernel, compiled, threads)?;
        if co_residency == CoResidency::Required && grid.blocks > self.residency(kernel, &other, threads)?.max_blocks() {
            return Ok(Plan { function, grid, barrier, compiled: barrier });
        }
        Ok(Plan { function: other, grid, barrier, compiled })
    }

    /// Refuses buffers of another GPU or of the emulator, whose addresses mean nothing here.
    pub(crate) fn check_buffers(&self, kernel: &KernelSpec, args: &KernelArgs<'_>) -> Result<()> {
        if args.has_emulator_buffer() {
            return Err(Error::BufferBackendMismatch { buffer: Backend::Emulator, gpu: Backend::Cuda });
        }
        match args.foreign_gpu(self.info().ordinal) {
            Some(buffer_gpu) => Err(Error::BufferOnOtherGpu {
                kernel: kernel.name.to_owned(),
                buffer_gpu,
                launch_gpu: self.info().ordinal,
            }),
            None => Ok(()),
        }
    }
}

/// Why a multi-launch cannot go through [`Gpu::launch_kernel`].
fn not_fused(kernel: &KernelSpec) -> Error {
    match kernel.split.error {
        Some(reason) => Error::CannotSplit { kernel: kernel.name.to_owned(), reason: reason.to_owned() },
        None => Error::InvalidBarrier {
            kernel: kernel.name.to_owned(),
            barrier: Barrier::MultiLaunch.to_string(),
            reason: "a split kernel runs through Gpu::begin_segments, which the launch functions \
                     #[grid_phases] generates call, not through launch_kernel"
                .to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::tests::SMOOTH;
    use crate::kernel::SplitSpec;

    #[test]
    fn a_multi_launch_through_launch_kernel_says_where_it_belongs() {
        let error = not_fused(&SMOOTH);
        assert!(matches!(&error, Error::InvalidBarrier { barrier, .. } if barrier == "multi-launch"), "{error}");
        assert!(error.to_string().contains("Gpu::begin_segments"), "{error}");
        let unsplit = KernelSpec { split: SplitSpec::NONE, ..SMOOTH };
        assert!(matches!(not_fused(&unsplit), Error::CannotSplit { .. }));
    }
}
