//! The shape of a fused launch that leaves it open: remembered from an earlier launch, measured
//! now on copies of the buffers the kernel writes, or the heuristic's.

use std::any::Any;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use cudarc::driver::{result, CudaSlice};

use crate::barrier::Barrier;
use crate::core::args::{sealed, KernelArgs, KernelBuffer};
use crate::core::dims::check_shape;
use crate::core::dynamic_shared::{shared_class, DynamicShared};
use crate::core::error::{Error, ErrorKind, Result};
use crate::core::grid::CoResidency;
use crate::core::kernel::KernelSpec;
use crate::core::launch::Launch;
use crate::core::shape::{
    is_open, tuning_enabled, untuned_choice, Contest, LaunchShape, ShapeChoice, ShapeSpace, SizeClass, TUNING_BUDGET,
};
use crate::core::shape_cache::ShapeKey;
use crate::cuda::compile::nvrtc_version;
use crate::cuda::context::CudaGpu;
use crate::cuda::occupancy::residency;
use crate::cuda::{allocation_error, driver_error, fused};

/// A candidate whose first run takes longer than this runs once; faster ones run twice and
/// count their faster run, so that a cold first run does not decide.
const SECOND_RUN_BELOW: Duration = Duration::from_millis(10);

/// The launch to run, with its shape settled, and how it was chosen. `kernel` is configured by
/// `launch`, and `args` are the launch's own (checked to be this GPU's).
pub(crate) fn choose(
    gpu: &CudaGpu,
    kernel: &KernelSpec,
    launch: &Launch,
    args: &KernelArgs<'_>,
) -> Result<(Launch, ShapeChoice)> {
    // A kernel that reads per-axis builtins is never tuned: it must name its shape.
    check_shape(kernel, launch, gpu.info().max_threads_per_block)?;
    if !is_open(launch) {
        return Ok((launch.clone(), untuned_choice(launch)));
    }
    let class = SizeClass::of(args.longest_buffer());
    let shared = args.shared();
    let key =
        ShapeKey::new(kernel, gpu.info(), launch, class, toolchain(gpu)?).shared(shared_key(kernel, launch, shared));
    if let Some(shape) = gpu.shapes().in_memory(&key) {
        return Ok((launch.clone().shape(shape), ShapeChoice::Remembered));
    }
    if let Some(shape) = gpu.shapes().on_disk(&key) {
        // A shape stored by another run may no longer fit (another compiler, more registers).
        match fused::resolved_shape(gpu, kernel, &launch.clone().shape(shape), shared) {
            Ok(_) => {
                return Ok((launch.clone().shape(gpu.shapes().remember_first(&key, shape)), ShapeChoice::Remembered))
            }
            Err(error) if refuses_shape(&error) => gpu.shapes().forget(&key),
            Err(error) => return Err(error),
        }
    }
    let space = ShapeSpace::new(kernel, launch, gpu.info());
    let tuned = if tuning_enabled(launch) { tune(gpu, kernel, launch, args, &space)? } else { None };
    let Some((shape, choice)) = tuned else {
        return Ok(match heuristic(gpu, kernel, launch, &space, shared)? {
            Some(shape) => (launch.clone().shape(shape), ShapeChoice::Heuristic),
            // No block size fits: the launch as asked, which fails saying why.
            None => (launch.clone(), ShapeChoice::Default),
        });
    };
    // A thread that asked `launch_shape` meanwhile was promised its answer: that one stays.
    let kept = gpu.shapes().put_first(&key, shape);
    if kept != shape {
        return Ok((launch.clone().shape(kept), ShapeChoice::Remembered));
    }
    if let ShapeChoice::Tuned { shapes, took } = choice {
        eprintln!(
            "gsync: tuned `{}` for buffers of up to 2^{} elements on {}: {shape} ({shapes} shapes in {:.2} s; \
             Launch::tune(false) or {}=off skips this)",
            kernel.name,
            class.log2(),
            gpu.info().name,
            took.as_secs_f64(),
            crate::core::shape::TUNE_VAR,
        );
    }
    Ok((launch.clone().shape(shape), choice))
}

/// See [`Gpu::launch_shape`](crate::Gpu::launch_shape): for an open launch ([`is_open`]),
/// the remembered shape, else the heuristic's, which from then on this process's
/// launches for `class` run instead of tuning. `None` when no block size fits (the launch fails).
pub(crate) fn promise(
    gpu: &CudaGpu,
    kernel: &KernelSpec,
    launch: &Launch,
    class: SizeClass,
    shared: &DynamicShared,
) -> Result<Option<LaunchShape>> {
    check_shape(kernel, launch, gpu.info().max_threads_per_block)?;
    let key =
        ShapeKey::new(kernel, gpu.info(), launch, class, toolchain(gpu)?).shared(shared_key(kernel, launch, shared));
    if let Some(shape) = gpu.shapes().get(&key) {
        return Ok(Some(shape));
    }
    let shape = heuristic(gpu, kernel, launch, &ShapeSpace::new(kernel, launch, gpu.info()), shared)?;
    Ok(shape.map(|shape| gpu.shapes().remember_first(&key, shape)))
}

/// The compiler and driver that decide a compiled kernel's registers, for [`ShapeKey`]; the
/// same for every GPU of the process, so asked once.
fn toolchain(gpu: &CudaGpu) -> Result<&'static str> {
    static TOOLCHAIN: OnceLock<String> = OnceLock::new();
    if let Some(toolchain) = TOOLCHAIN.get() {
        return Ok(toolchain);
    }
    let toolchain = format!("nvrtc {:?}, driver {:?}", nvrtc_version()?, gpu.info().driver_cuda_version);
    Ok(TOOLCHAIN.get_or_init(|| toolchain))
}

/// The size class of the shared slices' bytes at the launch's default block size, which
/// tells apart the shapes of calls whose tiles differ; one that cannot be laid out has a class
/// of its own (its launch fails saying why).
fn shared_key(kernel: &KernelSpec, launch: &Launch, shared: &DynamicShared) -> u32 {
    if shared.is_empty() {
        return 0;
    }
    shared.layout(kernel, launch.threads_for(kernel)).map_or(u32::MAX, |layout| shared_class(layout.bytes))
}

/// The heuristic's shape: the first block size that fits, with about 1024 threads per SM.
fn heuristic(
    gpu: &CudaGpu,
    kernel: &KernelSpec,
    launch: &Launch,
    space: &ShapeSpace,
    shared: &DynamicShared,
) -> Result<Option<LaunchShape>> {
    for threads in space.thread_options() {
        if let Some(shape) = space.heuristic(threads, blocks_per_sm(gpu, kernel, launch, threads, shared)?) {
            return Ok(Some(shape));
        }
    }
    Ok(None)
}

/// Measures the candidates within [`TUNING_BUDGET`]; `None` when there was nothing to measure,
/// no memory for the copies, or a candidate's kernel faulted or timed out (not for its shape):
/// the caller's own launch then runs untuned, with the heuristic's shape, and reports it. A
/// failure of the driver or the installation is returned.
fn tune(
    gpu: &CudaGpu,
    kernel: &KernelSpec,
    launch: &Launch,
    args: &KernelArgs<'_>,
    space: &ShapeSpace,
) -> Result<Option<(LaunchShape, ShapeChoice)>> {
    let mut contest = Contest::new(TUNING_BUDGET);
    let Some(copies) = WritableCopies::new(gpu, args)? else {
        return Ok(None);
    };
    let replacements: Vec<&dyn KernelBuffer> = copies.buffers.iter().map(|copy| copy as &dyn KernelBuffer).collect();
    let on_copies = args.with_mutable_replaced(&replacements);
    // What the next candidate is expected to take: the last one's measurement, and a
    // compilation (a new block size or barrier compiles a kernel) as long as the last took.
    let (mut expected, mut compile) = (Duration::ZERO, Duration::ZERO);
    'sizes: for threads in space.thread_options() {
        if !contest.has_time_for(expected + compile) {
            break;
        }
        let compiling = Instant::now();
        let resident = blocks_per_sm(gpu, kernel, launch, threads, args.shared())?;
        compile = compile.max(compiling.elapsed());
        for shape in space.candidates(threads, resident) {
            if !contest.has_time_for(expected + compile) {
                break 'sizes;
            }
            let started = Instant::now();
            match measure(gpu, kernel, launch, args, &copies, &on_copies, shape) {
                Ok(time) => {
                    contest.record(shape, time);
                    expected = started.elapsed();
                }
                Err(error) if refuses_shape(&error) => {}
                // The driver or the installation failed: the caller's launch would too.
                Err(error) if matches!(error.kind(), ErrorKind::Driver | ErrorKind::Installation) => return Err(error),
                // The kernel faulted or timed out on this input: its own launch reports it,
                // untuned, exactly as without tuning.
                Err(_) => return Ok(None),
            }
        }
    }
    Ok(contest.winner())
}

/// The kernel's time with `shape`, on the copies, restored from the caller's buffers before
/// each run.
fn measure(
    gpu: &CudaGpu,
    kernel: &KernelSpec,
    launch: &Launch,
    args: &KernelArgs<'_>,
    copies: &WritableCopies,
    on_copies: &KernelArgs<'_>,
    shape: LaunchShape,
) -> Result<Duration> {
    let launch = launch.clone().shape(shape);
    let mut best = Duration::MAX;
    for run in 0..2 {
        copies.restore(gpu, args)?;
        // SAFETY: `on_copies` are the caller's arguments, which match the kernel's parameters,
        // with each writable buffer replaced by a copy of the same length and element type.
        let report = unsafe { fused::launch_shaped(gpu, kernel, &launch, on_copies, CoResidency::Required) }?;
        best = best.min(report.gpu_time);
        if run == 0 && report.gpu_time > SECOND_RUN_BELOW {
            break;
        }
    }
    Ok(best)
}

/// Whether a candidate failed only because this shape cannot run (not co-resident, beyond a
/// barrier's limit, no cooperative launch): a configuration error, which the next candidate
/// may not have.
fn refuses_shape(error: &Error) -> bool {
    error.kind() == ErrorKind::Configuration
}

/// Co-resident blocks per SM of `kernel` with `threads` threads per block and the shared
/// slices laid out for them, compiled for the launch's barrier (for Auto, LBS, which it
/// resolves to up to 4 blocks per SM); 0 when no block fits.
fn blocks_per_sm(
    gpu: &CudaGpu,
    kernel: &KernelSpec,
    launch: &Launch,
    threads: u32,
    shared: &DynamicShared,
) -> Result<u32> {
    let barrier = match launch.selected_barrier() {
        Barrier::Auto => Barrier::Lbs,
        barrier => barrier,
    };
    let layout = match shared.layout(kernel, threads) {
        Ok(layout) => layout,
        Err(Error::SharedSliceLength { .. }) => return Ok(0),
        Err(error) => return Err(error),
    };
    let function = gpu.function(kernel, barrier, threads)?;
    match residency(gpu, kernel, &function, threads, &layout) {
        Ok(resident) => Ok(resident.blocks_per_sm),
        Err(Error::SharedMemoryLimit { .. } | Error::DynamicSharedMemoryLimit { .. }) => Ok(0),
        Err(error) => Err(error),
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
}
