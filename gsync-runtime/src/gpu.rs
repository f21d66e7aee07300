//! A GPU as kernels see it: a CUDA device, or the CPU emulator standing in for one. With
//! [`DeviceBuffer`] and [`SplitRun`], this is the only code that picks a backend: every
//! method matches on it once and hands the work to `cuda` or `emu`.

use std::fmt;
use std::sync::{Arc, Once};

use crate::barrier::{AutoTable, LaunchMode};
use crate::buffer::{DeviceBuffer, DeviceScalar, Memory};
use crate::core::args::KernelArgs;
use crate::core::config::LaunchConfig;
use crate::core::device::{Backend, DeviceInfo};
use crate::core::dynamic_shared::DynamicShared;
use crate::core::error::{Error, ErrorKind, Result};
use crate::core::grid::CoResidency;
use crate::core::kernel::KernelSpec;
use crate::core::launch::{Launch, LaunchReport};
use crate::core::plan::{resolve, Device, LaunchPlan};
use crate::core::tune;
use crate::cuda::args::check_buffers;
use crate::cuda::nvshmem::TeamEnv;
use crate::cuda::team::CudaTeam;
use crate::cuda::{self, require_gpu, CudaBuffer, CudaGpu, CudaSplitRun};
use crate::emu::{self, EmuLaunch, EmuSegmentFn, EmuSlice, EmuSplitRun, Emulator, ThreadCtx, ThreadFuture};
use crate::pending::Pending;
use crate::private::KernelForms;
use crate::split::{Runner, SplitRun};

/// One GPU, or the CPU emulator standing in for one: where buffers live and kernels run.
///
/// On CUDA, its work goes to its stream, in order; every call that returns data waits for it.
/// [`Gpu::new_stream`] opens more streams on the same GPU.
///
/// ```
/// # fn main() -> gsync_runtime::Result<()> {
/// use gsync_runtime::{Backend, Gpu};
/// // `Gpu::new(0)` opens the first CUDA GPU, or the emulator where there is none.
/// let gpu = Gpu::emulator();
/// assert_eq!(gpu.backend(), Backend::Emulator);
/// let mut a = gpu.upload(&[1.0f32, 2.0, 3.0])?;
/// let b = gpu.zeros::<f32>(3)?;
/// gpu.write(&mut a, &[4.0, 5.0, 6.0])?;
/// assert_eq!(gpu.download(&a)?, [4.0, 5.0, 6.0]);
/// assert_eq!(gpu.download(&b)?, [0.0; 3]);
/// println!("{} SMs", gpu.info().sm_count);
/// # Ok(()) }
/// ```
///
/// Kernels run on it through the functions `#[grid_phases]` generates
/// (`kernel::launch(&gpu, …)`), see the `gsync` crate.
pub struct Gpu {
    device: Engine,
}

/// The backend's own state.
enum Engine {
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
        Gpu { device: Engine::Emulator(Emulator::new()) }
    }

    /// The emulated GPU of PE `pe` of the team that meets at `rendezvous`.
    pub(crate) fn emulated_pe(pe: u32, rendezvous: std::sync::Arc<emu::team::Rendezvous>) -> Gpu {
        Gpu { device: Engine::Emulator(Emulator::member(pe, rendezvous)) }
    }

    /// Where this GPU runs kernels.
    pub fn backend(&self) -> Backend {
        match self.device {
            Engine::Cuda(_) => Backend::Cuda,
            Engine::Emulator(_) => Backend::Emulator,
        }
    }

    /// The PE this GPU is in its team (see [`Team`](crate::Team)): 0 for a GPU in no team.
    pub fn pe(&self) -> u32 {
        match &self.device {
            Engine::Emulator(emulator) => emulator.team().map_or(0, |member| member.pe()),
            Engine::Cuda(cuda) => cuda.team().map_or(0, CudaTeam::pe),
        }
    }

    /// The number of PEs of this GPU's team: 1 for a GPU in no team.
    pub fn n_pes(&self) -> u32 {
        match &self.device {
            Engine::Emulator(emulator) => emulator.team().map_or(1, |member| member.n_pes()),
            Engine::Cuda(cuda) => cuda.team().map_or(1, CudaTeam::n_pes),
        }
    }

    /// A symmetric buffer of `len` zeros: one on every PE of the team, the same length and
    /// type everywhere, which kernels reach on any PE through a `#[symmetric]` parameter
    /// (`a.put(pe, i, v)`, `a.get(pe, i)`). Collective: every PE allocates its symmetric
    /// buffers in the same order, with the same element type and length, or every PE fails
    /// with [`Error::TeamMismatch`]. On a GPU in no team, a buffer of a team of one.
    pub fn symmetric_zeros<T: DeviceScalar>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        self.symmetric(len, None)
    }

    /// [`symmetric_zeros`](Self::symmetric_zeros) holding a copy of `host` on this PE (each
    /// PE passes its own elements, of the same length).
    pub fn symmetric_upload<T: DeviceScalar>(&self, host: &[T]) -> Result<DeviceBuffer<T>> {
        self.symmetric(host.len(), Some(host))
    }

    /// Ends this GPU's part in its team with the team's last collective step, after which
    /// NVSHMEM is finalised with every PE; an error when a peer left the team instead or made
    /// another collective call. Nothing on a GPU in no team or on the emulator.
    pub(crate) fn end_team(&self) -> Result<()> {
        match &self.device {
            Engine::Cuda(cuda) => cuda.team().map_or(Ok(()), |team| team.farewell()),
            Engine::Emulator(_) => Ok(()),
        }
    }

    /// Leaves this GPU's team without finalising NVSHMEM with its peers when it is dropped.
    pub(crate) fn abandon_team(&self) {
        if let Engine::Cuda(cuda) = &self.device {
            if let Some(team) = cuda.team() {
                team.abandon();
            }
        }
    }

    /// A symmetric buffer of `len` elements: `host`'s, or zeros.
    fn symmetric<T: DeviceScalar>(&self, len: usize, host: Option<&[T]>) -> Result<DeviceBuffer<T>> {
        let memory = match &self.device {
            Engine::Emulator(emulator) => {
                let local = host.map_or_else(|| EmuSlice::zeroed(len), EmuSlice::from_host);
                match emulator.team() {
                    Some(member) => Memory::EmuSymmetric(emu::allocate_symmetric(member, local)?),
                    None => Memory::Emulator(local),
                }
            }
            Engine::Cuda(cuda) => Memory::Cuda(match (cuda.team(), host) {
                (Some(team), host) => {
                    // NVSHMEM's allocation is zeroed.
                    let mut buffer = CudaBuffer::symmetric_zeros(cuda, team, len)?;
                    if let Some(host) = host {
                        buffer.write(cuda, host)?;
                    }
                    buffer
                }
                (None, Some(host)) => CudaBuffer::upload(cuda, host)?,
                (None, None) => CudaBuffer::zeros(cuda, len)?,
            }),
        };
        Ok(DeviceBuffer::new(memory))
    }

    /// What this GPU is and what it can do.
    pub fn info(&self) -> &DeviceInfo {
        match &self.device {
            Engine::Cuda(cuda) => cuda.info(),
            Engine::Emulator(emulator) => emulator.info(),
        }
    }

    /// Copies `host` into a new device buffer.
    pub fn upload<T: DeviceScalar>(&self, host: &[T]) -> Result<DeviceBuffer<T>> {
        let memory = match &self.device {
            Engine::Cuda(cuda) => Memory::Cuda(CudaBuffer::upload(cuda, host)?),
            Engine::Emulator(_) => Memory::Emulator(EmuSlice::from_host(host)),
        };
        Ok(DeviceBuffer::new(memory))
    }

    /// A new device buffer of `len` zeros.
    pub fn zeros<T: DeviceScalar>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let memory = match &self.device {
            Engine::Cuda(cuda) => Memory::Cuda(CudaBuffer::zeros(cuda, len)?),
            Engine::Emulator(_) => Memory::Emulator(EmuSlice::zeroed(len)),
        };
        Ok(DeviceBuffer::new(memory))
    }

    /// Copies a device buffer into a new vector.
    pub fn download<T: DeviceScalar>(&self, buffer: &DeviceBuffer<T>) -> Result<Vec<T>> {
        let mut host = vec![T::default(); buffer.len()];
        self.download_into(buffer, &mut host)?;
        Ok(host)
    }

    /// Copies a device buffer into `out`, which must have the buffer's length.
    pub fn download_into<T: DeviceScalar>(&self, buffer: &DeviceBuffer<T>, out: &mut [T]) -> Result<()> {
        match &self.device {
            Engine::Cuda(cuda) => {
                let memory = buffer.cuda()?;
                buffer.check_length(out.len())?;
                memory.download(cuda, out)
            }
            Engine::Emulator(_) => {
                let slice = buffer.emu()?;
                buffer.check_length(out.len())?;
                slice.copy_to(out);
                Ok(())
            }
        }
    }

    /// Overwrites a device buffer with `host`, which must have the buffer's length.
    pub fn write<T: DeviceScalar>(&self, buffer: &mut DeviceBuffer<T>, host: &[T]) -> Result<()> {
        match &self.device {
            Engine::Cuda(cuda) => {
                buffer.check_length(host.len())?;
                buffer.cuda_mut()?.write(cuda, host)
            }
            Engine::Emulator(_) => {
                let slice = buffer.emu()?;
                buffer.check_length(host.len())?;
                slice.copy_from(host);
                Ok(())
            }
        }
    }

    /// Sets every element of a device buffer to zero, keeping its length, without a copy from
    /// the host (a memset on the GPU).
    pub fn fill_zeros<T: DeviceScalar>(&self, buffer: &mut DeviceBuffer<T>) -> Result<()> {
        match &self.device {
            Engine::Cuda(cuda) => buffer.cuda_mut()?.fill_zeros(cuda),
            Engine::Emulator(_) => {
                buffer.emu()?.fill_zeros();
                Ok(())
            }
        }
    }

    /// The table [`Barrier::Auto`](crate::Barrier::Auto) chooses barriers from on this GPU, and
    /// where it came from ([`AutoTable::source`]): gsync's own for the GPU's generation
    /// (Hopper), else one calibrated on this GPU, read from the cache (beside the kernel
    /// cache, see `GSYNC_CACHE_DIR`) or, on first use, measured now in about a second. Every
    /// Auto launch's report says which row chose its barrier ([`LaunchReport::auto`]).
    ///
    /// ```no_run
    /// # fn main() -> gsync_runtime::Result<()> {
    /// let gpu = gsync_runtime::Gpu::new(0)?;
    /// let table = gpu.auto_table()?;
    /// println!("{}", table.source());
    /// for (blocks_per_sm, barrier) in table.rows() {
    ///     println!("up to {blocks_per_sm} blocks per SM: {barrier}");
    /// }
    /// # Ok(()) }
    /// ```
    pub fn auto_table(&self) -> Result<Arc<AutoTable>> {
        match &self.device {
            Engine::Cuda(cuda) => cuda.health().guard(|| cuda::calibrate::auto_table(cuda)),
            Engine::Emulator(emulator) => emulator.auto_table(),
        }
    }

    /// Measures Auto's table on this GPU now (about a second: every device barrier's
    /// `grid_sync()` at grids of 1 to 32 blocks per SM), keeps it in the cache and uses it for
    /// this GPU's Auto launches from now on, also where gsync has a table for the GPU's
    /// generation. [`Error::WrongBackend`] on the emulator, whose host timing says nothing of a
    /// GPU's; [`Error::InvalidTeam`] on a PE of a team; [`Error::Capture`] while capturing.
    ///
    /// ```no_run
    /// # fn main() -> gsync_runtime::Result<()> {
    /// let gpu = gsync_runtime::Gpu::cuda(0)?;
    /// let table = gpu.calibrate_auto()?;
    /// println!("{}", table.source()); // the table calibrated on this GPU now, kept in …
    /// # Ok(()) }
    /// ```
    pub fn calibrate_auto(&self) -> Result<Arc<AutoTable>> {
        let cuda = self.require_cuda("Gpu::calibrate_auto")?;
        cuda.health().guard(|| cuda::calibrate::calibrate_auto(cuda))
    }

    /// The most blocks of `kernel` that can be resident at once with `launch`'s block size and
    /// barrier: the driver's occupancy for the compiled kernel times the SM count. For
    /// [`Barrier::MultiLaunch`](crate::Barrier::MultiLaunch), that of the segment kernel
    /// holding the fewest (and [`Error::CannotSplit`] for a kernel that cannot be split, on
    /// either backend). On the emulator, whose blocks all exist at once, its grid limit: 2^20
    /// threads, at most 2^14 blocks.
    pub fn max_coresident_blocks(&self, kernel: &KernelSpec, launch: &Launch) -> Result<u32> {
        self.max_coresident_blocks_with(kernel, launch, &DynamicShared::none())
    }

    /// [`max_coresident_blocks`](Self::max_coresident_blocks) for a call whose shared slices
    /// `shared` describes: their bytes at `launch`'s block size lower the occupancy, and
    /// slices that do not fit a block fail with [`Error::DynamicSharedMemoryLimit`] (on the
    /// emulator too, against its opt-in maximum). The module `#[grid_phases]` generates for a
    /// kernel with shared slices calls this with the call's arguments.
    pub fn max_coresident_blocks_with(
        &self,
        kernel: &KernelSpec,
        launch: &Launch,
        shared: &DynamicShared,
    ) -> Result<u32> {
        match &self.device {
            Engine::Cuda(cuda) => {
                cuda.health().guard(|| resolve::max_coresident_blocks(&**cuda, kernel, launch, shared))
            }
            Engine::Emulator(emulator) => resolve::max_coresident_blocks(emulator, kernel, launch, shared),
        }
    }

    /// The configuration — blocks × threads × barrier — that a launch of `kernel` with
    /// `launch` runs when its longest buffer has `len` elements, known before anything is
    /// allocated: for a kernel whose buffers' sizes depend on the grid (per-block partial
    /// results, a histogram per block), size them from this.
    ///
    /// A launch that names its grid or block size runs them (the other defaulting to the
    /// largest co-resident grid, or the kernel's block size). One that names neither runs
    /// the configuration tuned for the kernel, this GPU and the size class of `len` if there is
    /// one (remembered on disk); otherwise this returns the heuristic's configuration
    /// ([`ConfigChoice::Heuristic`](crate::ConfigChoice::Heuristic)), and asking fixes it:
    /// until the process ends, such launches for that size class run it instead of tuning.
    /// The size class is that of the longest buffer the launch gets: where a buffer sized from
    /// the answer may be the longest, launch with [`Launch::config`], which pins a
    /// configuration whatever the size class. On the emulator, its default grid: 4 blocks per
    /// host core, within the barrier's limit; a split barrier's grid is the largest
    /// co-resident one of its segment holding the fewest blocks on a GPU.
    pub fn launch_config(&self, kernel: &KernelSpec, launch: &Launch, len: usize) -> Result<LaunchConfig> {
        self.launch_config_with(kernel, launch, len, &DynamicShared::none())
    }

    /// [`launch_config`](Self::launch_config) for a call whose shared slices `shared`
    /// describes: their bytes decide the occupancy, and the remembered configuration is the
    /// one for their size. The module `#[grid_phases]` generates for a kernel with shared
    /// slices calls this with the call's arguments.
    pub fn launch_config_with(
        &self,
        kernel: &KernelSpec,
        launch: &Launch,
        len: usize,
        shared: &DynamicShared,
    ) -> Result<LaunchConfig> {
        match &self.device {
            Engine::Cuda(cuda) => cuda.health().guard(|| tune::promise(&**cuda, kernel, launch, len, shared)),
            Engine::Emulator(emulator) => tune::promise(emulator, kernel, launch, len, shared),
        }
    }

    /// Runs `kernel` once and waits for it.
    ///
    /// Fails before launching when the grid cannot be co-resident (a grid barrier would hang)
    /// or the barrier cannot serve it; after, with [`Error::OutOfBounds`] when a
    /// bounds-checked kernel indexed a slice out of bounds, and with
    /// [`Error::BarrierTimeout`] when a software barrier waited past the launch's watchdog.
    /// [`Barrier::MultiLaunch`](crate::Barrier::MultiLaunch) runs through
    /// [`Gpu::begin_split`] instead. CUDA only: on the emulator, kernels run through
    /// [`Gpu::emulate`], and this fails with [`Error::WrongBackend`].
    ///
    /// # Safety
    /// `args` must match the kernel's C parameter list (the code `#[grid_phases]` generates
    /// guarantees it), and every buffer the kernel writes must be passed with
    /// [`KernelArgs::slice_mut`]: tuning runs candidates on copies of those only.
    pub unsafe fn launch_kernel(
        &self,
        kernel: &KernelSpec,
        launch: &Launch,
        args: KernelArgs<'_>,
    ) -> Result<LaunchReport> {
        let cuda = self.require_cuda("Gpu::launch_kernel")?;
        // SAFETY: the caller vouches for `args`.
        unsafe { launch_fused(cuda, kernel, launch, &args, CoResidency::Required) }
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
    pub unsafe fn launch_kernel_oversubscribed(
        &self,
        kernel: &KernelSpec,
        launch: &Launch,
        args: KernelArgs<'_>,
    ) -> Result<LaunchReport> {
        let cuda = self.require_cuda("Gpu::launch_kernel_oversubscribed")?;
        // SAFETY: the caller vouches for `args` and accepts the risk.
        unsafe { launch_fused(cuda, kernel, launch, &args, CoResidency::Waived) }
    }

    /// Runs a kernel on the emulator: `make_shared` builds one block's shared memory, `body`
    /// one thread's future; the emulator body `#[grid_phases]` generates runs the same way
    /// (through `Gpu::run`). On a CUDA [`Gpu`] this fails with [`Error::WrongBackend`].
    ///
    /// The grid has `launch`'s blocks, by default 4 per host core (the emulator's `sm_count`);
    /// blocks have `launch`'s threads, by default the kernel's, from 1 to 1024. Each block's
    /// threads run as futures polled in turn on one host thread, each until it awaits
    /// [`ThreadCtx::sync_block`], [`ThreadCtx::grid_sync`] or [`ThreadCtx::shuffle`], or
    /// finishes; blocks run in parallel on the host's cores from one `grid_sync()` to the
    /// next. Every device [`Barrier`](crate::Barrier) means this same grid barrier. Threads
    /// that can never meet fail the launch with [`Error::EmulatorDeadlock`] at once, and
    /// threads that disagree on the number of barrier calls with [`Error::BarrierMismatch`].
    /// A block that runs one phase longer than [`Launch::watchdog`] fails it with
    /// [`Error::KernelTimeout`], whatever the barrier. A split kernel
    /// ([`Barrier::MultiLaunch`](crate::Barrier::MultiLaunch)) runs through
    /// [`Gpu::begin_split`] instead, one such launch per segment.
    ///
    /// Every thread of the grid lives from start to end, so a grid has at most 2^20 threads
    /// and 2^14 blocks; more fail with [`Error::TooManyBlocks`] before anything is allocated.
    ///
    /// Fails after the run with [`Error::OutOfBounds`] for the first access out of bounds
    /// ([`EmuSlice`](crate::__private::EmuSlice) checks every access, whatever the build profile).
    /// `gpu_time` in the report is the wall time of the emulation. A panic in `body`'s
    /// futures (or `make_shared`) resumes on the calling thread once every block has stopped.
    pub fn emulate<S, MakeShared, Body>(
        &self,
        kernel: &KernelSpec,
        launch: &Launch,
        make_shared: MakeShared,
        body: Body,
    ) -> Result<LaunchReport>
    where
        S: Sync,
        MakeShared: Fn() -> S,
        Body: for<'a> Fn(&'a ThreadCtx<'a>, &'a S) -> ThreadFuture<'a> + Sync,
    {
        match &self.device {
            Engine::Emulator(emulator) => {
                EmuLaunch::new(emulator, kernel, launch, DynamicShared::none()).run(make_shared, body)
            }
            Engine::Cuda(_) => Err(Error::WrongBackend { what: "Gpu::emulate", backend: Backend::Cuda }),
        }
    }

    /// Starts a split run of `kernel`: resolves the grid like a fused launch (by default the
    /// largest co-resident grid of the segment holding the fewest blocks; larger grids are
    /// allowed, since each segment is a launch of its own), compiles and loads the segment kernels once, and
    /// zeroes the status word.
    ///
    /// Fails with [`Error::CannotSplit`] when the kernel has no split version. On the
    /// emulator, the same checks and errors; the default grid is the emulator's, and each
    /// segment launch runs the segment's body from `emulated` (by segment number) as a grid of
    /// its own. A CUDA GPU runs the compiled segment kernels and ignores `emulated`.
    pub fn begin_split(
        &self,
        kernel: &KernelSpec,
        launch: &Launch,
        emulated: &'static [EmuSegmentFn],
    ) -> Result<SplitRun<'_>> {
        self.begin_split_with(kernel, launch, emulated, &DynamicShared::none())
    }

    /// [`begin_split`](Self::begin_split) for a call whose shared slices `shared` describes:
    /// laid out once for the run's block size, they are every segment's dynamic shared memory
    /// (new in each launch, as a segment's shared arrays are), and their bytes lower the
    /// occupancy of the default grid.
    pub fn begin_split_with(
        &self,
        kernel: &KernelSpec,
        launch: &Launch,
        emulated: &'static [EmuSegmentFn],
        shared: &DynamicShared,
    ) -> Result<SplitRun<'_>> {
        self.begin_split_as(kernel, launch, emulated, shared, false)
    }

    /// [`begin_split_with`](Self::begin_split_with); a run that `records` may be recorded into
    /// the capture of this `Gpu` (see [`SplitRun::record`]).
    fn begin_split_as(
        &self,
        kernel: &KernelSpec,
        launch: &Launch,
        emulated: &'static [EmuSegmentFn],
        shared: &DynamicShared,
        records: bool,
    ) -> Result<SplitRun<'_>> {
        let runner = match &self.device {
            Engine::Cuda(cuda) => Runner::Cuda(cuda.health().guard(|| {
                let plan = resolve::split(&**cuda, kernel, launch, shared);
                CudaSplitRun::begin(cuda, kernel, launch, plan, records)
            })?),
            Engine::Emulator(emulator) => Runner::Emulator(EmuSplitRun::begin(
                emulator,
                kernel,
                launch,
                resolve::split(emulator, kernel, launch, shared),
                emulated,
            )?),
        };
        Ok(SplitRun::new(runner, kernel.name, launch.deadline_limit()))
    }

    /// Runs one call of a `#[grid_phases]` kernel: the split form for a split barrier, else
    /// the fused form, compiled for the device or run on the emulator. Grids that cannot be
    /// co-resident are refused unless `co_residency` waives the check. For generated code.
    ///
    /// # Safety
    /// `forms` must have been generated for `kernel` (their C parameters match), and with
    /// [`CoResidency::Waived`] the caller accepts that a software barrier may wait until its
    /// watchdog, or forever without one.
    #[doc(hidden)]
    pub unsafe fn run(
        &self,
        kernel: &KernelSpec,
        launch: &Launch,
        co_residency: CoResidency,
        forms: &mut dyn KernelForms,
    ) -> Result<LaunchReport> {
        if launch.selected_barrier().descriptor().launch_mode == LaunchMode::Split {
            return self.split_run(kernel, launch, forms, false)?.finish();
        }
        match &self.device {
            // The plan is made now; a refused one fails where the generated body first asks.
            Engine::Emulator(emulator) => {
                let shared = forms.dynamic_shared();
                forms.emulate(EmuLaunch::new(emulator, kernel, launch, shared))
            }
            // SAFETY: `KernelForms` promises arguments that match the C parameters of the
            // kernel it was generated for, which the caller vouches is `kernel`.
            Engine::Cuda(cuda) => unsafe { launch_fused(cuda, kernel, launch, &fused_args(forms), co_residency) },
        }
    }

    /// The split form of one call, its host code run: every segment launched, not waited for.
    fn split_run(
        &self,
        kernel: &KernelSpec,
        launch: &Launch,
        forms: &mut dyn KernelForms,
        records: bool,
    ) -> Result<SplitRun<'_>> {
        let shared = forms.dynamic_shared();
        let mut run = self.begin_split_as(kernel, launch, forms.emulated_segments(), &shared, records)?;
        forms.run_split(&mut run)?;
        Ok(run)
    }

    /// The same GPU with a stream of its own: launches and copies through the returned `Gpu`
    /// are ordered among themselves and run beside this one's, sharing the context, the
    /// compiled kernels and the tuned configurations. Fused launches are the exception: each
    /// is sized to have the whole GPU to itself (its grid barriers wait for every block), so
    /// once a GPU has several streams each fused launch waits for the one queued before it on
    /// any of them; split launches and copies overlap. Buffers of either may be passed to the
    /// other's launches: every copy and allocation returns once it has landed, and a launch
    /// queued with `submit` borrows its buffers until it is waited for, so no buffer is
    /// touched on two streams at once.
    ///
    /// On the emulator, another handle to the same emulator (its launches run when queued).
    /// On a PE of a team, [`Error::TeamStream`]: the PEs must launch in one order.
    ///
    /// ```
    /// # fn main() -> gsync_runtime::Result<()> {
    /// use gsync_runtime::Gpu;
    /// let gpu = Gpu::new(0)?;
    /// let side = gpu.new_stream()?;
    /// let (a, b) = (gpu.upload(&[1u32, 2, 3])?, side.zeros::<u32>(3)?);
    /// assert_eq!((side.download(&a)?, gpu.download(&b)?), (vec![1, 2, 3], vec![0, 0, 0]));
    /// # Ok(())
    /// # }
    /// ```
    pub fn new_stream(&self) -> Result<Gpu> {
        match &self.device {
            Engine::Cuda(cuda) => Ok(Gpu::over(cuda.with_new_stream()?)),
            Engine::Emulator(emulator) if emulator.team().is_some() => Err(Error::TeamStream),
            Engine::Emulator(emulator) => Ok(Gpu { device: Engine::Emulator(emulator.another_stream()) }),
        }
    }

    /// Queues one call of a `#[grid_phases]` kernel, as [`run`](Self::run) runs it, and
    /// returns without waiting where the backend can (see [`Pending`]). For generated code.
    ///
    /// # Safety
    /// As [`run`](Self::run); and the buffers `forms` borrows must stay borrowed for `'a`, as
    /// the generated `submit` functions' signatures make them.
    #[doc(hidden)]
    pub unsafe fn submit<'a>(
        &'a self,
        kernel: &KernelSpec,
        launch: &Launch,
        co_residency: CoResidency,
        forms: &mut dyn KernelForms,
    ) -> Result<Pending<'a>> {
        let split = launch.selected_barrier().descriptor().launch_mode == LaunchMode::Split;
        let cuda = match &self.device {
            // A split run replayed as a graph records its segments until its end, which would
            // leave the stream capturing while the launch is pending: it runs at once.
            Engine::Cuda(cuda) if cuda.team().is_none() && !(split && launch.replays_graph()) => &**cuda,
            // SAFETY: the caller vouches for `forms`.
            _ => return ran_at_once(unsafe { self.run(kernel, launch, co_residency, forms) }),
        };
        if split {
            if !cuda.capturing() {
                return Ok(Pending::split(self.split_run(kernel, launch, forms, true)?));
            }
            // Under a capture the run's launches are recorded, to run when the graph replays; a
            // run that fails part way leaves launches in the capture whose buffers it no
            // longer borrows, so the capture is spoiled.
            let recorded = self.split_run(kernel, launch, forms, true).and_then(SplitRun::record);
            if recorded.is_err() {
                cuda.poison_capture();
            }
            return Ok(Pending::split(recorded?));
        }
        // Nothing is measured while a capture records: the configuration is the remembered
        // one or the heuristic's.
        let launch = &launch.clone().tune(!cuda.capturing() && launch.tunes());
        let args = fused_args(forms);
        cuda.health().guard(|| {
            // SAFETY: `KernelForms` promises arguments that match the C parameters of the
            // kernel it was generated for, which the caller vouches is `kernel`.
            let plan = unsafe { plan_alone(cuda, kernel, launch, &args, co_residency) }?;
            // SAFETY: as above; the caller keeps the buffers borrowed for `'a`, which the
            // pending launch lives no longer than.
            Ok(Pending::fused(unsafe { cuda::fused::submit(cuda, plan, &args) }?))
        })
    }

    /// The CUDA GPU, or [`Error::WrongBackend`] saying that `what` needs one.
    pub(crate) fn require_cuda(&self, what: &'static str) -> Result<&CudaGpu> {
        match &self.device {
            Engine::Cuda(cuda) => Ok(cuda),
            Engine::Emulator(_) => Err(Error::WrongBackend { what, backend: Backend::Emulator }),
        }
    }

    fn open_cuda(ordinal: usize) -> Result<Gpu> {
        Ok(Gpu::over(CudaGpu::open(ordinal)?))
    }

    /// The `Gpu` of an opened CUDA GPU.
    pub(crate) fn over(cuda: CudaGpu) -> Gpu {
        Gpu { device: Engine::Cuda(Box::new(cuda)) }
    }

    /// CUDA GPU `env.gpu` as the PE of this process in the team `env` describes.
    pub(crate) fn cuda_pe(env: &TeamEnv) -> Result<Gpu> {
        require_gpu(env.gpu as usize).map_err(|error| env.explain_missing_gpu(error))?;
        Ok(Gpu { device: Engine::Cuda(Box::new(CudaGpu::open_pe(env)?)) })
    }
}

impl fmt::Debug for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gpu").field("backend", &self.backend()).field("info", self.info()).finish_non_exhaustive()
    }
}

/// One fused launch on a CUDA GPU: the buffers checked, the plan made (its configuration
/// tuned where it is open), then run by the backend.
///
/// # Safety
/// `args` must match the kernel's C parameter list, and name every buffer the kernel writes
/// with [`KernelArgs::slice_mut`].
unsafe fn launch_fused(
    cuda: &CudaGpu,
    kernel: &KernelSpec,
    launch: &Launch,
    args: &KernelArgs<'_>,
    co_residency: CoResidency,
) -> Result<LaunchReport> {
    cuda.refuse_capturing("a blocking launch (`submit` records one)")?;
    cuda.health().guard(|| {
        let Some(team) = cuda.team() else {
            // SAFETY: the caller vouches for `args`.
            let plan = unsafe { plan_alone(cuda, kernel, launch, args, co_residency) }?;
            // SAFETY: as above; the plan is of `kernel`.
            return unsafe { cuda::fused::launch(cuda, plan, args) };
        };
        // On a team, every PE runs what it planned alone (tuning would time candidates that
        // span the team), and none launches unless every PE can: whatever refuses the launch
        // here is agreed on before any PE launches.
        let launch = launch.clone().tune(false);
        // SAFETY: the caller vouches for `args`.
        let plan = check_buffers(cuda, kernel, args)
            .and_then(|()| unsafe { tune::plan(cuda, kernel, &launch, args, co_residency) });
        // PEs start apart by whatever host work each does in between: the deadline bounds that.
        let agreed = team.agree_to_launch(kernel.name, plan.is_err(), launch.deadline_limit());
        let ran = match (agreed, plan) {
            (Err(error), _) | (_, Err(error)) => Err(error),
            (Ok(Some(pe)), Ok(_)) => {
                let reason = format!("see PE {pe}'s own error");
                Err(Error::TeamRefused { kernel: kernel.name.to_owned(), pe, reason })
            }
            // SAFETY: as above; the plan is of `kernel`.
            (Ok(None), Ok(plan)) => unsafe { cuda::fused::launch(cuda, plan, args) },
        };
        team.settle(ran)
    })
}

/// One call's fused-kernel arguments, with its shared slices.
fn fused_args(forms: &mut dyn KernelForms) -> KernelArgs<'_> {
    let shared = forms.dynamic_shared();
    let mut args = KernelArgs::new();
    forms.push_args(&mut args);
    args.dynamic_shared(shared);
    args
}

/// The plan of a fused launch on a GPU in no team: its buffers checked, its configuration
/// tuned where it is open.
///
/// # Safety
/// `args` must match the kernel's C parameter list.
unsafe fn plan_alone(
    cuda: &CudaGpu,
    kernel: &KernelSpec,
    launch: &Launch,
    args: &KernelArgs<'_>,
    co_residency: CoResidency,
) -> Result<LaunchPlan> {
    check_buffers(cuda, kernel, args)?;
    // SAFETY: the caller vouches for `args`.
    unsafe { tune::plan(cuda, kernel, launch, args, co_residency) }
}

/// A launch that ran to its end when it was submitted, as a [`Pending`] launch: a refusal
/// (configuration, memory, compilation, installation) is returned at once, as a launch that
/// is queued returns it, and a fault while it ran at `wait()`.
fn ran_at_once<'a>(outcome: Result<LaunchReport>) -> Result<Pending<'a>> {
    match outcome {
        Err(error) if !matches!(error.kind(), ErrorKind::KernelFault | ErrorKind::Driver) => Err(error),
        outcome => Ok(Pending::finished(outcome)),
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
    use crate::cuda::discover;

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
