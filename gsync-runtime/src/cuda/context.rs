//! An opened CUDA GPU: its context and stream, what it can do, and the kernels loaded on it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use cudarc::driver::sys::{CUdevice_attribute, CUevent_flags, CUresult};
use cudarc::driver::{CudaContext, CudaEvent, CudaFunction, CudaModule, CudaStream, DriverError};
use cudarc::nvrtc::Ptx;

use crate::barrier::{AutoTable, Barrier, LaunchMode};
use crate::core::config_cache::ConfigCache;
use crate::core::device::DeviceInfo;
use crate::core::error::{Error, Result};
use crate::core::grid::DYNAMIC_SHARED_BYTES;
use crate::core::kernel::SEGMENT_CROSSING;
use crate::core::plan::KernelBuild;
use crate::core::split::{check_split, no_segments};
use crate::cuda::cache::compile_cached;
use crate::cuda::discover;
use crate::cuda::driver_error;
use crate::cuda::fit::{fit_builds, Fitted};
use crate::cuda::health::{self, ContextHealth};
use crate::cuda::nvshmem::TeamEnv;
use crate::cuda::scratch::{ScratchPool, TakenScratch};
use crate::cuda::team::CudaTeam;

/// Which compiled function serves a launch. Names can repeat across modules, so the body's
/// address (a `&'static str` of generated code, one per kernel and bounds-check setting)
/// tells kernels apart, and a profiled kernel is compiled apart. The barrier counts by name:
/// launch parameters such as the ILBS group count do not change the code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct FunctionKey {
    name: &'static str,
    body: usize,
    profile: bool,
    barrier: &'static str,
    threads: u32,
    /// The kernel's own blocks per SM, which its source's launch bounds carry.
    blocks_per_sm: u32,
}

impl FunctionKey {
    /// The key of function `name` in the module compiled for `kernel` (as the launch builds it),
    /// `barrier` and `threads`.
    fn new(name: &'static str, kernel: &KernelBuild, barrier: Barrier, threads: u32) -> Self {
        let body = kernel.body_for(barrier).as_ptr() as usize;
        let blocks_per_sm = kernel.blocks_per_sm;
        FunctionKey { name, body, profile: kernel.profile, barrier: barrier.name(), threads, blocks_per_sm }
    }
}

/// The order of fused launches across the streams of one GPU. A fused grid is sized to be
/// co-resident on the whole GPU; two of them running at once could each be resident only in
/// part, and their grid barriers would wait for blocks that cannot be scheduled. So once a GPU
/// has more than one stream, each fused launch waits for the one queued before it, on any
/// stream, through the event recorded after it.
#[derive(Default)]
pub(crate) struct FusedOrder {
    /// Streams opened beside the first.
    streams: AtomicUsize,
    /// The event after the last fused launch queued on any stream.
    last: Mutex<Option<CudaEvent>>,
}

impl FusedOrder {
    /// Makes `stream` wait for the fused launch queued last on another stream, when there is
    /// more than one stream. Returns whether the caller must [`record`](Self::record) after
    /// its launch.
    pub(crate) fn wait_turn(&self, stream: &CudaStream) -> std::result::Result<bool, DriverError> {
        if self.streams.load(Ordering::Acquire) == 0 {
            return Ok(false);
        }
        if let Some(last) = &*self.last.lock().unwrap_or_else(PoisonError::into_inner) {
            stream.wait(last)?;
        }
        Ok(true)
    }

    /// Records, on `stream`, the end of the fused launch just queued there.
    pub(crate) fn record(&self, stream: &CudaStream) -> std::result::Result<(), DriverError> {
        let event = stream.record_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))?;
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Some(event);
        Ok(())
    }
}

/// An opened CUDA GPU: its context, a stream, and the kernels compiled for it.
///
/// Its work goes to its stream, in order; every call that returns data waits for it. Other
/// streams of the same GPU ([`CudaGpu::with_new_stream`]) share the context and kernels.
pub(crate) struct CudaGpu {
    context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    info: DeviceInfo,
    /// Shared by every stream of the GPU ([`CudaGpu::with_new_stream`]).
    functions: Arc<Mutex<HashMap<FunctionKey, CudaFunction>>>,
    scratch: ScratchPool,
    /// Configurations tuned for this GPU, in memory and on disk.
    configs: Arc<ConfigCache>,
    health: ContextHealth,
    /// Whether its stream is being captured into a graph ([`CudaGpu::for_capture`]), until
    /// the capture ends.
    capturing: AtomicBool,
    /// The launches recorded into the capture so far.
    captured: AtomicUsize,
    /// Set when a launch was recorded only in part: the capture's graph must not be made.
    capture_poisoned: AtomicBool,
    /// Orders the fused launches of every stream of the GPU (see [`FusedOrder`]).
    order: Arc<FusedOrder>,
    /// The table Auto chooses from, once asked for; shared by every stream of the GPU.
    auto: Arc<Mutex<Option<Arc<AutoTable>>>>,
    /// Its PE of a team, if it is one: declared last, so that NVSHMEM is finalised after the
    /// kernels and buffers above are gone and before the context.
    team: Option<CudaTeam>,
}

impl CudaGpu {
    /// Opens GPU `ordinal`, which [`require_gpu`] found.
    ///
    /// The device's primary context is shared by every `Gpu` of it in the process; one that an
    /// earlier launch lost stays lost for the rest of the process (the driver keeps the error
    /// even once nothing holds the context), which this reports as [`Error::ContextLost`].
    pub(crate) fn open(ordinal: usize) -> Result<CudaGpu> {
        CudaGpu::open_as(ordinal, None)
    }

    /// Opens GPU `env.gpu` as PE `env.pe` of the team `env` describes (every PE at once).
    pub(crate) fn open_pe(env: &TeamEnv) -> Result<CudaGpu> {
        CudaGpu::open_as(env.gpu as usize, Some(env))
    }

    fn open_as(ordinal: usize, team: Option<&TeamEnv>) -> Result<CudaGpu> {
        let health = ContextHealth::new(ordinal);
        let (context, stream) = health.guard(|| {
            let context = CudaContext::new(ordinal).map_err(driver_error("opening the GPU"))?;
            // SAFETY: event tracking orders work between streams; this runtime uses one stream
            // only, and no buffer has been allocated yet.
            unsafe { context.disable_event_tracking() };
            context.synchronize().map_err(driver_error("checking the GPU's context"))?;
            // A stream of its own, not the legacy default stream, which cannot be captured
            // into a CUDA graph (MultiLaunch's graph replay).
            let stream = context.new_stream().map_err(driver_error("creating a stream"))?;
            Ok((context, stream))
        })?;
        let team = |context: &Arc<CudaContext>| team.map(|env| CudaTeam::join(env, context)).transpose();
        CudaGpu::assemble(context, stream, health, team)
    }

    /// A GPU over `context` and `stream`, which another library opened and keeps using: every
    /// launch and copy goes to `stream`. Its event tracking stays as it is, since the other
    /// library's buffers may rely on it. The legacy default stream is refused with
    /// [`Error::UnsupportedStream`], as is a stream of another context.
    pub(crate) fn adopt(context: Arc<CudaContext>, stream: Arc<CudaStream>) -> Result<CudaGpu> {
        if stream.cu_stream().is_null() {
            return Err(Error::UnsupportedStream {
                reason: "it is the context's legacy default stream, which cannot be captured into a CUDA graph \
                         (Barrier::MultiLaunch replays one); pass a stream of its own, `context.new_stream()?`",
            });
        }
        if **stream.context() != *context {
            return Err(Error::UnsupportedStream {
                reason: "it belongs to another CUDA context than the one passed with it; \
                         pass the stream's own context, `stream.context().clone()`",
            });
        }
        let health = ContextHealth::new(context.ordinal());
        health.guard(|| stream.synchronize().map_err(driver_error("checking the given stream")))?;
        CudaGpu::assemble(context, stream, health, |_| Ok(None))
    }

    /// The GPU over an opened `context` and `stream`: what it can do, its launch scratch, and
    /// its PE of a team, if `team` joins one.
    fn assemble(
        context: Arc<CudaContext>,
        stream: Arc<CudaStream>,
        health: ContextHealth,
        team: impl FnOnce(&Arc<CudaContext>) -> Result<Option<CudaTeam>>,
    ) -> Result<CudaGpu> {
        let (info, scratch) = health.guard(|| {
            let info = query_info(&context)?;
            let scratch = ScratchPool::new(&stream, info.sm_count)?;
            Ok((info, scratch))
        })?;
        health::forget_loss(context.ordinal());
        let team = team(&context)?;
        Ok(CudaGpu {
            context,
            stream,
            info,
            functions: Arc::new(Mutex::new(HashMap::new())),
            scratch,
            configs: Arc::new(ConfigCache::from_env()),
            capturing: AtomicBool::new(false),
            captured: AtomicUsize::new(0),
            capture_poisoned: AtomicBool::new(false),
            order: Arc::new(FusedOrder::default()),
            auto: Arc::new(Mutex::new(None)),
            team,
            health,
        })
    }

    /// The same GPU with a stream of its own, sharing the context, the loaded kernels and the
    /// tuned configurations: its launches and copies are ordered among themselves, not with
    /// this one's. A PE of a team has one stream, since every PE must launch in one order:
    /// [`Error::TeamStream`].
    pub(crate) fn with_new_stream(&self) -> Result<CudaGpu> {
        self.beside(false)
    }

    /// The same GPU with a stream of its own that is then captured into a graph: its scratch
    /// is allocated on this GPU's stream, since a stream under capture must not allocate.
    pub(crate) fn for_capture(&self) -> Result<CudaGpu> {
        self.beside(true)
    }

    /// Whether this GPU's stream is captured into a graph.
    pub(crate) fn capturing(&self) -> bool {
        self.capturing.load(Ordering::Acquire)
    }

    /// [`Error::Capture`] while this GPU's stream is captured: `what` would copy, allocate or
    /// wait on it, which would end the capture with a driver error.
    pub(crate) fn refuse_capturing(&self, what: &str) -> Result<()> {
        if !self.capturing() {
            return Ok(());
        }
        Err(Error::Capture {
            reason: format!(
                "{what} on a capture's Gpu would copy, allocate or wait on the stream being recorded; call it \
                 on the Gpu the capture came from"
            ),
        })
    }

    /// Marks the capture ended: later launches on this GPU run.
    pub(crate) fn end_capturing(&self) {
        self.capturing.store(false, Ordering::Release);
    }

    /// Marks the capture as holding a launch recorded in part.
    pub(crate) fn poison_capture(&self) {
        self.capture_poisoned.store(true, Ordering::Release);
    }

    /// Whether a launch was recorded in part.
    pub(crate) fn capture_poisoned(&self) -> bool {
        self.capture_poisoned.load(Ordering::Acquire)
    }

    /// Whether this GPU has more than one stream, so that a copy must have landed before it
    /// returns (another stream may use its buffer next).
    pub(crate) fn has_other_streams(&self) -> bool {
        self.order.streams.load(Ordering::Acquire) > 0
    }

    /// The order of fused launches across this GPU's streams.
    pub(crate) fn fused_order(&self) -> &FusedOrder {
        &self.order
    }

    /// Counts a launch recorded into the capture.
    pub(crate) fn note_captured(&self) {
        self.captured.fetch_add(1, Ordering::Relaxed);
    }

    /// The launches recorded into the capture so far.
    pub(crate) fn captured(&self) -> usize {
        self.captured.load(Ordering::Relaxed)
    }

    fn beside(&self, capturing: bool) -> Result<CudaGpu> {
        self.refuse_capturing("opening another stream")?;
        if self.team.is_some() {
            return Err(Error::TeamStream);
        }
        let stream = self.health.guard(|| {
            // Copies on this stream returned before they landed while it was the only one.
            self.stream.synchronize().map_err(driver_error("finishing the copies queued so far"))?;
            self.context.new_stream().map_err(driver_error("creating a stream"))
        })?;
        self.order.streams.fetch_add(1, Ordering::AcqRel);
        let alloc_stream = if capturing { &self.stream } else { &stream };
        let scratch = self.health.guard(|| ScratchPool::new(alloc_stream, self.info.sm_count))?;
        Ok(CudaGpu {
            context: self.context.clone(),
            stream,
            info: self.info.clone(),
            functions: self.functions.clone(),
            scratch,
            configs: self.configs.clone(),
            health: ContextHealth::new(self.context.ordinal()),
            capturing: AtomicBool::new(capturing),
            captured: AtomicUsize::new(0),
            capture_poisoned: AtomicBool::new(false),
            order: self.order.clone(),
            auto: self.auto.clone(),
            team: None,
        })
    }

    /// Where Auto's table is kept once asked for (see `cuda/calibrate.rs`), shared by every
    /// stream of the GPU.
    pub(crate) fn auto_slot(&self) -> &Mutex<Option<Arc<AutoTable>>> {
        &self.auto
    }

    /// What this GPU is and what it can do.
    pub(crate) fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// Whether the context works; see [`ContextHealth`].
    pub(crate) fn health(&self) -> &ContextHealth {
        &self.health
    }

    /// The stream all of this GPU's work goes to.
    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The CUDA context this GPU's memory and kernels belong to.
    pub(crate) fn context(&self) -> &Arc<CudaContext> {
        &self.context
    }

    /// The fused kernel compiled for this GPU, a barrier and a block size, compiling and
    /// loading it on first use.
    pub(crate) fn function(&self, kernel: &KernelBuild, barrier: Barrier, threads: u32) -> Result<CudaFunction> {
        let mut functions = self.functions(kernel, barrier, threads, &[kernel.symbol])?;
        // `functions` returns one function per name asked for, so this is never `None`.
        functions.pop().ok_or_else(|| driver_error(format!("loading kernel `{}`", kernel.name))(not_found()))
    }

    /// The segment kernels of a split kernel, compiled for this GPU and a block size, in
    /// segment order, or why the kernel cannot be split; on a PE of a team also the kernel
    /// launched between two segments (the spanning barrier's cross-GPU step), which the same
    /// module holds and which is loaded with them.
    pub(crate) fn segment_functions(
        &self,
        kernel: &KernelBuild,
        threads: u32,
    ) -> Result<(Vec<CudaFunction>, Option<CudaFunction>)> {
        check_split(kernel)?;
        let mut names = kernel.split.segments.to_vec();
        if self.team.is_some() {
            names.push(SEGMENT_CROSSING);
        }
        let mut functions = self.functions(kernel, Barrier::MultiLaunch, threads, &names)?;
        let crossing = self.team.as_ref().and_then(|_| functions.pop());
        Ok((functions, crossing))
    }

    /// The functions `names` of the module for `kernel`, `barrier` and `threads`.
    fn functions(
        &self,
        kernel: &KernelBuild,
        barrier: Barrier,
        threads: u32,
        names: &[&'static str],
    ) -> Result<Vec<CudaFunction>> {
        let keys: Vec<FunctionKey> =
            names.iter().map(|&name| FunctionKey::new(name, kernel, barrier, threads)).collect();
        let cached: Option<Vec<CudaFunction>> = {
            let loaded = self.loaded();
            keys.iter().map(|key| loaded.get(key).cloned()).collect()
        };
        if let Some(functions) = cached {
            return Ok(functions);
        }
        // Compiling can take seconds, so the lock is not held; a racing thread at worst
        // loads the same module twice.
        let module = self.load(kernel, barrier, threads)?;
        let context = format!("loading kernel `{}`", kernel.name);
        let functions = names
            .iter()
            .map(|name| module.load_function(name).map_err(driver_error(context.as_str())))
            .collect::<Result<Vec<_>>>()?;
        let mut loaded = self.loaded();
        Ok(keys
            .into_iter()
            .zip(functions)
            .map(|(key, function)| loaded.entry(key).or_insert(function).clone())
            .collect())
    }

    fn load(&self, kernel: &KernelBuild, barrier: Barrier, threads: u32) -> Result<Arc<CudaModule>> {
        if barrier.descriptor().needs_cuda_headers {
            discover::toolkit()?.headers()?;
        }
        let arch = self.info.compute_capability;
        let mut compile = |source: &str| compile_cached(source, kernel.name, arch);
        let mut occupancy = |fitted: &Fitted| self.blocks_per_sm(kernel, barrier, &fitted.cubin, threads);
        let (alone, spanning) =
            fit_builds(kernel, barrier, threads, self.team.is_some(), &mut compile, &mut occupancy)?;
        let module = self.load_cubin(kernel, spanning.unwrap_or(alone).cubin)?;
        if let Some(team) = &self.team {
            team.write_record(&module, &self.stream)?;
        }
        Ok(module)
    }

    fn load_cubin(&self, kernel: &KernelBuild, cubin: Vec<u8>) -> Result<Arc<CudaModule>> {
        let context = format!("loading kernel `{}`", kernel.name);
        self.context.load_module(Ptx::from_binary(cubin)).map_err(driver_error(context))
    }

    /// The blocks per SM that `kernel`'s first function keeps resident compiled into `cubin`, a
    /// build for one GPU, with its static shared memory only: what [`fit_builds`] starts from
    /// (a build that spills is compiled again for at most as many; a PE of a team's for as many,
    /// so that the spanning barrier's code costs the team kernel no occupancy).
    fn blocks_per_sm(&self, kernel: &KernelBuild, barrier: Barrier, cubin: &[u8], threads: u32) -> Result<u32> {
        let name = match barrier.descriptor().launch_mode {
            LaunchMode::Split => kernel.split.segments.first().copied().ok_or_else(|| no_segments(kernel))?,
            LaunchMode::Cooperative | LaunchMode::Ordinary => kernel.symbol,
        };
        let context = format!("computing the occupancy of kernel `{}` on one GPU", kernel.name);
        let module = self.load_cubin(kernel, cubin.to_vec())?;
        let function = module.load_function(name).map_err(driver_error(context.as_str()))?;
        let blocks = function
            .occupancy_max_active_blocks_per_multiprocessor(threads, DYNAMIC_SHARED_BYTES as usize, None)
            .map_err(driver_error(context))?;
        Ok(blocks.clamp(1, MAX_BLOCKS_PER_SM))
    }

    /// This GPU's PE of a team, if it is one.
    pub(crate) fn team(&self) -> Option<&CudaTeam> {
        self.team.as_ref()
    }

    /// The configurations tuned for this GPU.
    pub(crate) fn configs(&self) -> &ConfigCache {
        &self.configs
    }

    /// A status word and barrier state of its own for one launch (or split run) until the
    /// returned value is dropped, after the launch has been waited for.
    pub(crate) fn take_scratch(&self) -> Result<TakenScratch<'_>> {
        self.scratch.take()
    }

    fn loaded(&self) -> std::sync::MutexGuard<'_, HashMap<FunctionKey, CudaFunction>> {
        // The map is valid after any panic: entries are inserted whole.
        self.functions.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::fmt::Debug for CudaGpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaGpu").field("info", &self.info).finish_non_exhaustive()
    }
}

/// The most blocks per SM any CUDA GPU keeps resident, which bounds the blocks a team kernel is
/// compiled for.
const MAX_BLOCKS_PER_SM: u32 = 32;

/// The driver's answer for a function a module lacks.
fn not_found() -> DriverError {
    DriverError(CUresult::CUDA_ERROR_NOT_FOUND)
}

/// Checks that the driver is installed and reports GPU `ordinal`, without opening it.
pub(crate) fn require_gpu(ordinal: usize) -> Result<()> {
    discover::require_driver()?;
    let count = device_count()?;
    if ordinal >= count {
        return Err(Error::NoSuchGpu { ordinal, count });
    }
    Ok(())
}

fn device_count() -> Result<usize> {
    match CudaContext::device_count() {
        Ok(count) => Ok(usize::try_from(count).unwrap_or(0)),
        Err(error) if error.0 == CUresult::CUDA_ERROR_NO_DEVICE => Ok(0),
        Err(error) => Err(driver_error("initialising the CUDA driver")(error)),
    }
}

fn query_info(context: &Arc<CudaContext>) -> Result<DeviceInfo> {
    let attribute = |attribute: CUdevice_attribute| {
        context
            .attribute(attribute)
            .map(|value| u32::try_from(value).unwrap_or(0))
            .map_err(driver_error(format!("querying {attribute:?}")))
    };
    let (major, minor) = context.compute_capability().map_err(driver_error("querying the compute capability"))?;
    Ok(DeviceInfo {
        name: context.name().map_err(driver_error("querying the device name"))?,
        ordinal: context.ordinal(),
        sm_count: attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        compute_capability: (u32::try_from(major).unwrap_or(0), u32::try_from(minor).unwrap_or(0)),
        cooperative_launch: attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)? != 0,
        max_threads_per_block: attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        max_shared_memory_per_block: attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
        max_shared_memory_per_block_optin: attribute(
            CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        )?,
        max_blocks_per_grid: attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
        total_memory: context.total_mem().map_err(driver_error("querying the memory size"))? as u64,
        driver_cuda_version: driver_cuda_version(),
    })
}

/// The CUDA version the driver supports, e.g. 13000 → (13, 0).
fn driver_cuda_version() -> Option<(u32, u32)> {
    let mut version: std::ffi::c_int = 0;
    // SAFETY: cuDriverGetVersion only writes the int it is given; the driver library is
    // loaded by the time a context exists.
    let status = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) };
    let version = u32::try_from(version).ok().filter(|_| status == CUresult::CUDA_SUCCESS)?;
    Some((version / 1000, version % 1000 / 10))
}
