//! Every way the runtime can fail, each with a message that says what to do about it.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::core::device::Backend;

/// The result type of every fallible runtime call.
pub type Result<T> = std::result::Result<T, Error>;

/// The error of a library below the runtime (the CUDA driver, NVRTC, the dynamic loader),
/// kept as the source of an [`Error`].
pub type SourceError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// An error of the gsync runtime.
///
/// Each message says what went wrong and what to do about it; [`Error::kind`] sorts the
/// variants into domains for callers that handle a whole domain alike.
///
/// ```
/// use gsync_runtime::{Error, ErrorKind, Gpu, Team};
/// let gpu = Gpu::emulator();
/// let buffer = gpu.zeros::<u32>(4).unwrap();
/// let error = gpu.download_into(&buffer, &mut [0u32; 3]).unwrap_err();
/// assert!(matches!(error, Error::LengthMismatch { .. }));
/// assert_eq!(error.kind(), ErrorKind::Memory);
/// let error = Team::emulated(0).unwrap_err();
/// assert_eq!(error.kind(), ErrorKind::Configuration);
/// println!("{error}");
/// ```
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum Error {
    // ---- Installation: the driver, the GPU, NVRTC and the CUDA headers.
    /// The NVIDIA driver library (`libcuda`) could not be loaded.
    #[error(
        "the NVIDIA driver library was not found (tried {}); install the NVIDIA driver \
         (it provides libcuda.so.1) on a machine with an NVIDIA GPU",
        searched.join(", ")
    )]
    DriverNotFound {
        /// The library names that were tried.
        searched: Vec<String>,
    },

    /// The requested GPU ordinal does not exist.
    #[error(
        "there is no GPU {ordinal}: the driver reports {count} GPU(s); \
         use an ordinal below {count} (nvidia-smi lists them)"
    )]
    NoSuchGpu {
        /// The ordinal that was asked for.
        ordinal: usize,
        /// How many GPUs the driver reports.
        count: usize,
    },

    /// No NVRTC library was found in any of the searched places.
    #[error(
        "NVRTC (the CUDA runtime compiler) was not found; searched:\n{}\n\
         install it with `pip install nvidia-cuda-nvrtc nvidia-cuda-runtime nvidia-cuda-cccl` \
         (then add that site-packages directory to PYTHONPATH), or set CUDA_HOME \
         (or GSYNC_CUDA_ROOT) to a CUDA toolkit",
        bullet_list(searched)
    )]
    NvrtcNotFound {
        /// The directories that were searched for the library.
        searched: Vec<PathBuf>,
    },

    /// NVRTC was found but the CUDA headers its kernels include were not.
    #[error(
        "the CUDA header `{header}` was not found; searched:\n{}\n\
         install the headers with `pip install nvidia-cuda-runtime nvidia-cuda-cccl` next to NVRTC, \
         or set CUDA_HOME (or GSYNC_CUDA_ROOT) to a full CUDA toolkit",
        bullet_list(searched)
    )]
    CudaHeadersNotFound {
        /// The header that is missing, as the source or NVRTC names it.
        header: String,
        /// The directories that were searched for the headers.
        searched: Vec<PathBuf>,
    },

    /// A CUDA library was found on disk but could not be loaded.
    #[error(
        "could not load {}: {source}; check that it is a CUDA library for this platform, \
         or point GSYNC_CUDA_ROOT at another CUDA installation",
        path.display()
    )]
    LibraryLoad {
        /// The library file.
        path: PathBuf,
        /// Why the dynamic loader refused it.
        source: SourceError,
    },

    /// A CUDA library found on disk is not a whole shared library (truncated or damaged), so
    /// loading it could crash the process; it was not loaded.
    #[error(
        "{} is damaged: {problem}; reinstall it (for NVIDIA's wheels, \
         `pip install --force-reinstall nvidia-cuda-nvrtc`), or point GSYNC_CUDA_ROOT (or CUDA_HOME) \
         at another CUDA installation",
        path.display()
    )]
    DamagedLibrary {
        /// The library file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },

    /// The NVRTC library found is not one the CUDA bindings can use.
    #[error(
        "{} is not a CUDA 12 or 13 NVRTC (its soname is not libnvrtc.so.13 or .12); \
         install CUDA 13's NVRTC (`pip install nvidia-cuda-nvrtc==13.*`) or point \
         GSYNC_CUDA_ROOT at a CUDA 13 toolkit",
        path.display()
    )]
    UnsupportedNvrtc {
        /// The library file.
        path: PathBuf,
    },

    // ---- Compilation of a kernel's CUDA.
    /// NVRTC rejected a kernel's CUDA source.
    #[error(
        "NVRTC could not compile kernel `{kernel}`; if the kernel comes from #[grid_phases], \
         this is a bug in gsync: please report it with this message.\n\
         --- NVRTC log ---\n{log}\n--- CUDA source ---\n{source_with_line_numbers}"
    )]
    Compile {
        /// The kernel's name.
        kernel: String,
        /// NVRTC's diagnostics.
        log: String,
        /// The source that was compiled, with line numbers matching the log.
        source_with_line_numbers: String,
    },

    /// An NVRTC call other than the compilation itself failed.
    #[error("NVRTC failed while {context}: {source}; check the NVRTC installation")]
    Nvrtc {
        /// What the runtime was doing.
        context: String,
        /// NVRTC's result code.
        source: SourceError,
    },

    /// A kernel needs more of a per-block or per-thread resource than the GPU has; NVRTC
    /// (its assembler, ptxas) refused to compile it.
    #[error(
        "kernel `{kernel}` needs more {resource} than the GPU allows: {detail}; {}\n\
         --- NVRTC log ---\n{log}",
        resource.advice()
    )]
    KernelResources {
        /// The kernel's name.
        kernel: String,
        /// The resource that ran out.
        resource: Resource,
        /// The line of NVRTC's log that says so.
        detail: String,
        /// NVRTC's whole log.
        log: String,
    },

    // ---- The launch configuration, refused before anything runs.
    /// The block size is zero or larger than the GPU allows.
    #[error(
        "kernel `{kernel}` cannot run with {threads} threads per block: \
         this GPU allows 1 to {max}; pass a block size in that range to Launch::threads"
    )]
    InvalidBlockSize {
        /// The kernel's name.
        kernel: String,
        /// The requested threads per block.
        threads: u32,
        /// The GPU's limit.
        max: u32,
    },

    /// The grid has no blocks.
    #[error("kernel `{kernel}` cannot run with 0 blocks; pass at least 1 to Launch::blocks")]
    EmptyGrid {
        /// The kernel's name.
        kernel: String,
    },

    /// More blocks were requested than can be resident on the GPU at once.
    #[error(
        "kernel `{kernel}` asks for {requested} blocks of {threads} threads, but only {max} can be \
         resident at once ({blocks_per_sm} per SM x {sm_count} SMs), and a grid barrier needs every \
         block resident; launch at most {max} blocks (leave Launch::blocks unset to get the \
         maximum) or use fewer threads per block"
    )]
    GridTooLarge {
        /// The kernel's name.
        kernel: String,
        /// The requested number of blocks.
        requested: u32,
        /// The most blocks that can be co-resident.
        max: u32,
        /// Co-resident blocks per SM for this kernel and block size.
        blocks_per_sm: u32,
        /// The GPU's SM count.
        sm_count: u32,
        /// Threads per block.
        threads: u32,
    },

    /// More blocks were requested than the device launches in one grid at all.
    #[error(
        "kernel `{kernel}` asks for {requested} blocks of {threads} threads, but {device} \
         launches at most {max} blocks of {threads} threads in one grid ({why}); launch at most \
         {max} blocks"
    )]
    TooManyBlocks {
        /// The kernel's name.
        kernel: String,
        /// The requested number of blocks.
        requested: u32,
        /// Threads per block.
        threads: u32,
        /// The most blocks the device launches at this block size.
        max: u32,
        /// The device, e.g. "GPU `NVIDIA H100`" or "the CPU emulator".
        device: String,
        /// Where the limit comes from.
        why: String,
    },

    /// More blocks were requested than the barrier's algorithm supports.
    #[error(
        "kernel `{kernel}` asks for {requested} blocks, but barrier `{barrier}` supports at most \
         {max} at this block size; launch fewer blocks or choose another barrier"
    )]
    BarrierBlockLimit {
        /// The kernel's name.
        kernel: String,
        /// The barrier's name.
        barrier: &'static str,
        /// The requested number of blocks.
        requested: u32,
        /// The barrier's limit.
        max: u32,
    },

    /// The barrier cannot be used with this grid, e.g. an ILBS group count out of range.
    #[error("kernel `{kernel}` cannot use barrier `{barrier}`: {reason}")]
    InvalidBarrier {
        /// The kernel's name.
        kernel: String,
        /// The barrier, as `Display` writes it.
        barrier: String,
        /// Why, and what to do instead.
        reason: String,
    },

    /// The GPU cannot launch cooperative kernels, which the chosen barrier needs.
    #[error(
        "GPU `{gpu}` does not support cooperative launches, which barrier `{barrier}` needs; \
         use a GPU of compute capability 6.0 or newer without MPS restrictions"
    )]
    CooperativeLaunchUnsupported {
        /// The GPU's name.
        gpu: String,
        /// The barrier that needs it.
        barrier: &'static str,
    },

    /// A kernel uses more shared memory per block than the GPU gives one block.
    #[error(
        "kernel `{kernel}` needs {bytes} bytes of shared memory per block, but GPU `{gpu}` gives a \
         block at most {max} bytes; make the kernel's shared arrays smaller (their sizes add up)"
    )]
    SharedMemoryLimit {
        /// The kernel's name.
        kernel: String,
        /// Shared memory one block of the kernel needs: static, plus dynamic.
        bytes: u64,
        /// The GPU's per-block limit.
        max: u64,
        /// The GPU's name.
        gpu: String,
    },

    /// The kernel cannot run with [`Barrier::MultiLaunch`](crate::Barrier::MultiLaunch).
    #[error(
        "kernel `{kernel}` cannot run as one launch per phase (barrier `multi-launch`): {reason}; \
         use a device barrier such as Barrier::Cooperative for this kernel"
    )]
    CannotSplit {
        /// The kernel's name.
        kernel: String,
        /// Why it cannot be split.
        reason: String,
    },

    // ---- Buffers and backends.
    /// A host slice and a device buffer differ in length.
    #[error(
        "the device buffer has {device} elements but the host slice has {host}; \
         use slices of equal length"
    )]
    LengthMismatch {
        /// The device buffer's length.
        device: usize,
        /// The host slice's length.
        host: usize,
    },

    /// A library kernel's input does not fit it: lengths that differ where they must agree,
    /// or more elements than the kernel takes.
    #[error("kernel `{kernel}` cannot take this input: {reason}")]
    InvalidInput {
        /// The kernel's name.
        kernel: String,
        /// What is wrong and what to do.
        reason: String,
    },

    /// The GPU ran out of memory.
    #[error("the GPU is out of memory allocating {bytes} bytes; free buffers or use smaller inputs")]
    OutOfMemory {
        /// The size of the failed allocation.
        bytes: usize,
    },

    /// A kernel argument lives on a different GPU than the one launching.
    #[error(
        "kernel `{kernel}` was launched on GPU {launch_gpu} with a buffer of GPU {buffer_gpu}; \
         create the buffer with the Gpu that launches the kernel"
    )]
    BufferOnOtherGpu {
        /// The kernel's name.
        kernel: String,
        /// The ordinal of the GPU that owns the buffer.
        buffer_gpu: usize,
        /// The ordinal of the GPU that launches.
        launch_gpu: usize,
    },

    /// A buffer of one backend was used with a [`Gpu`](crate::Gpu) of the other.
    #[error(
        "a buffer of the {buffer} backend was used with a {gpu} Gpu; create buffers with the Gpu \
         that uses them"
    )]
    BufferBackendMismatch {
        /// The backend that holds the buffer.
        buffer: Backend,
        /// The backend of the [`Gpu`](crate::Gpu) it was used with.
        gpu: Backend,
    },

    /// A call that needs one backend was made on a [`Gpu`](crate::Gpu) of the other.
    #[error("{what} is not available on a {backend} Gpu; {}", backend_hint(*backend))]
    WrongBackend {
        /// The call, e.g. "Gpu::launch_kernel".
        what: &'static str,
        /// The backend of the [`Gpu`](crate::Gpu) it was called on.
        backend: Backend,
    },

    /// Memory of another CUDA context was handed to a [`Gpu`](crate::Gpu), whose kernels
    /// could not reach it.
    #[error(
        "{what} was given memory of a CUDA context of GPU {memory_gpu}, not of this Gpu's context \
         (GPU {gpu}); allocate it on the Gpu's own context (Gpu::cuda_stream), or open the Gpu over \
         the other library's context and stream with Gpu::from_cudarc"
    )]
    ForeignContext {
        /// The call, e.g. "Gpu::adopt_cudarc".
        what: &'static str,
        /// The ordinal of the GPU whose context holds the memory.
        memory_gpu: usize,
        /// The ordinal of the [`Gpu`](crate::Gpu) it was given to.
        gpu: usize,
    },

    /// A buffer whose memory gsync does not own was asked to hand it over
    /// ([`Gpu::release_cudarc`](crate::Gpu::release_cudarc), [`Gpu::release_vec`](crate::Gpu::release_vec)).
    #[error(
        "the buffer holds {memory}, so it cannot hand it over; release only buffers that gsync \
         allocated or adopted, and copy this one's elements instead (Gpu::download)"
    )]
    NotOwned {
        /// What the buffer holds instead.
        memory: &'static str,
    },

    /// A stream given to [`Gpu::from_cudarc`](crate::Gpu::from_cudarc) cannot carry gsync's work.
    #[error("Gpu::from_cudarc cannot run on the stream given: {reason}")]
    UnsupportedStream {
        /// Why, and what to pass instead.
        reason: &'static str,
    },

    /// A launch or call that a CUDA graph capture ([`Gpu::capture`](crate::Gpu::capture))
    /// cannot record, or a capture used the wrong way.
    #[error("a CUDA graph capture cannot do this: {reason}")]
    Capture {
        /// What was asked, and what to do instead.
        reason: String,
    },

    /// [`Gpu::new_stream`](crate::Gpu::new_stream) on a PE of a team, whose PEs must launch
    /// the same kernels in one order.
    #[error(
        "a PE of a team has one stream: its PEs must launch the same kernels in the same order, which \
         several streams per PE would not keep; queue the launches on the PE's Gpu itself (`submit`)"
    )]
    TeamStream,

    // ---- Teams: several GPUs (or emulated GPUs) running one kernel together.
    /// A team was asked for that cannot exist.
    #[error("cannot form a team: {reason}")]
    InvalidTeam {
        /// What is wrong and what to do.
        reason: String,
    },

    /// The PEs of a team are not at the same collective step: every PE must launch the same
    /// kernels and allocate the same symmetric buffers, in the same order.
    #[error(
        "the PEs of the team disagree: PE {pe} {doing}, while PE {other_pe} {other_doing}; every PE must \
         launch the same kernels and allocate the same symmetric buffers (same element type and \
         length) in the same order, and every block of every PE must reach the same grid_sync() calls"
    )]
    TeamMismatch {
        /// One PE.
        pe: u32,
        /// What it does.
        doing: String,
        /// A PE that does something else.
        other_pe: u32,
        /// What that one does.
        other_doing: String,
    },

    /// A PE did not reach a collective step that the others wait at within the limit.
    #[error(
        "PE {pe} did not arrive within {waited:?} (missing: PE {}) while the others waited: one {doing}; \
         make every PE launch the same kernels and allocate the same symmetric buffers, or raise the \
         limit with Launch::watchdog if a PE is just slow",
        missing.iter().map(u32::to_string).collect::<Vec<_>>().join(", PE ")
    )]
    PeNotArrived {
        /// The first PE that did not arrive.
        pe: u32,
        /// Every PE that did not arrive.
        missing: Vec<u32>,
        /// What the waiting PE was doing.
        doing: String,
        /// How long the others waited.
        waited: Duration,
    },

    /// A PE left the team (its program returned, failed or died) while others waited for it.
    #[error(
        "PE {pe} left the team while another PE {doing}; a PE that fails or returns early \
         fails every collective step of its team; see PE {pe}'s own error"
    )]
    PeLeft {
        /// The PE that left.
        pe: u32,
        /// What the waiting PE was doing.
        doing: String,
    },

    /// The PEs of a team of GPUs did not all reach a collective step within the limit: one
    /// never made the call the others made (which one, NVSHMEM's collectives do not say).
    #[error(
        "the team did not meet within {waited:?} while this PE {doing}: a PE has not made the same \
         call; every PE must launch the same kernels and allocate the same symmetric buffers in the \
         same order; the team is of no further use: end every PE"
    )]
    TeamTimedOut {
        /// What this PE was doing.
        doing: String,
        /// How long it waited.
        waited: Duration,
    },

    /// An earlier launch of this team failed, which leaves the PEs' spanning-barrier state
    /// apart: no later launch or symmetric allocation of the team may run.
    #[error(
        "the team is broken: {cause}; its PEs' barrier state no longer agrees, so no later launch or \
         symmetric allocation runs; end every PE and start a new team"
    )]
    TeamBroken {
        /// The failure that broke it.
        cause: String,
    },

    /// Another PE of the team failed a launch that this PE took part in; this PE's outputs of
    /// the launch are not to be trusted.
    #[error("PE {pe} failed launch `{kernel}`, which every PE of the team ran: {error}")]
    PeFailed {
        /// The PE that failed.
        pe: u32,
        /// The kernel's name.
        kernel: String,
        /// That PE's error.
        error: String,
    },

    /// A PE's launch was refused before it ran, so no PE of the team ran it.
    #[error("launch `{kernel}` was refused on PE {pe}, so no PE ran it: {reason}")]
    TeamRefused {
        /// The kernel's name.
        kernel: String,
        /// The PE that refused it.
        pe: u32,
        /// Its reason.
        reason: String,
    },

    /// A buffer that is not symmetric was passed for a `#[symmetric]` parameter of a launch
    /// on a team.
    #[error(
        "kernel `{kernel}`: `{param}` is a #[symmetric] parameter, but its buffer is not symmetric; \
         allocate it on every PE with Gpu::symmetric_zeros or Gpu::symmetric_upload"
    )]
    NotSymmetric {
        /// The kernel's name.
        kernel: String,
        /// The parameter.
        param: String,
    },

    /// A kernel addressed a PE that is not in its team.
    #[error(
        "kernel `{kernel}`: PE {pe} is out of the team: `{array}` on line {line} was addressed on PE \
         {pe}, but the team has {n_pes} PE(s), numbered from 0; the access was skipped"
    )]
    NoSuchPe {
        /// The kernel's name.
        kernel: String,
        /// The symmetric slice accessed.
        array: String,
        /// The PE named.
        pe: u64,
        /// The team's size.
        n_pes: u32,
        /// The Rust source line of the access.
        line: u32,
    },

    // ---- Faults a kernel reported while it ran.
    /// A kernel indexed a slice out of bounds (debug builds check every access).
    #[error(
        "kernel `{kernel}`: index out of bounds: the len of `{array}` is {len} but the index is \
         {index} (line {line}); the access was skipped and the kernel ran on, so the outputs are \
         not to be trusted"
    )]
    OutOfBounds {
        /// The kernel's name.
        kernel: String,
        /// The name of the slice.
        array: String,
        /// The index used.
        index: u64,
        /// The slice's length.
        len: u64,
        /// The Rust source line of the access.
        line: u32,
    },

    /// An async copy's source changed while the copy was in flight, between the thread's
    /// `copy_chunk_async` and its `wait_async_copies()`: a GPU may copy the old element or the
    /// new one. Only the emulator sees it (there the copy landed the old one).
    #[error(
        "kernel `{kernel}`: element {index} of `{array}` changed while an async copy from it \
         (line {line}) was in flight, so a GPU may copy the old value or the new one; change a \
         copy's source only after the issuing thread's wait_async_copies() (from another thread, \
         after a barrier that follows that wait), or copy from a buffer the phase does not write"
    )]
    AsyncCopySourceWritten {
        /// The kernel's name.
        kernel: String,
        /// The name of the copy's source slice.
        array: String,
        /// The element that changed.
        index: u64,
        /// The Rust source line of the copy.
        line: u32,
    },

    /// A loop's `step_by` step was 0 at run time. Rust would panic; the loop ran no
    /// iteration instead (a literal 0 is a compile error).
    #[error(
        "kernel `{kernel}`: `step_by(0)` at line {line}: a step must be positive; the loop ran no \
         iteration and the kernel ran on, so the outputs are not to be trusted"
    )]
    ZeroStep {
        /// The kernel's name.
        kernel: String,
        /// The Rust source line of the step.
        line: u32,
    },

    /// An `assert!` (or `assert_eq!`, `assert_ne!`, or a `debug_` form) in a kernel failed.
    /// The first failure of the launch is reported. Where no `grid_sync()` could follow
    /// it, the failing thread ended there, as a panic ends a Rust thread; before a
    /// `grid_sync()`, it ran on to it, and the whole grid ended there.
    #[error(
        "kernel `{kernel}` panicked at line {line}: {message}{values}; the thread stopped there, or, \
         before a grid_sync(), the whole grid at that grid_sync(), so the outputs are not to be trusted"
    )]
    AssertionFailed {
        /// The kernel's name.
        kernel: String,
        /// The Rust source line of the assertion.
        line: u32,
        /// Rust's panic message: the user's message or ``assertion failed: <condition>``.
        message: String,
        /// For `assert_eq!` and `assert_ne!`: `"; left: 3, right: 4"`; else empty.
        values: String,
    },

    /// A block waited longer than the watchdog limit in a software grid barrier.
    #[error(
        "kernel `{kernel}`: barrier `{barrier}` timed out: block {block} waited more than {limit:?} \
         in grid_sync() number {phase} of the launch; the grid was probably not co-resident \
         (more blocks than fit on the GPU at once) or a thread skipped a grid_sync(); every block \
         stopped at its next barrier, so the outputs are not to be trusted; if the phase is \
         legitimately slow, raise the limit with Launch::watchdog(Some(duration)) or disable it \
         with Launch::watchdog(None)"
    )]
    BarrierTimeout {
        /// The kernel's name.
        kernel: String,
        /// The barrier, as `Display` writes it.
        barrier: String,
        /// Which `grid_sync()` of the launch, counting from 1, the block waited in.
        phase: u32,
        /// The block that gave up first.
        block: u32,
        /// The watchdog limit.
        limit: Duration,
    },

    /// A launch ran longer than its watchdog limit without reaching a grid barrier or its end.
    #[error(
        "kernel `{kernel}`: block {block} ran more than {limit:?} without reaching grid_sync() \
         number {phase} or the end of the kernel (barrier `{barrier}`); a loop probably never \
         ends (a flag no thread changes, a counter that never reaches its bound); every thread \
         stopped at its next loop iteration, so the outputs are not to be trusted; if the phase \
         is legitimately slow, raise the limit with Launch::watchdog(Some(duration)) or disable \
         it with Launch::watchdog(None)"
    )]
    KernelTimeout {
        /// The kernel's name.
        kernel: String,
        /// The barrier, as `Display` writes it.
        barrier: String,
        /// Which `grid_sync()` of the launch, counting from 1, the block had not reached.
        phase: u32,
        /// A block that ran too long.
        block: u32,
        /// The watchdog limit.
        limit: Duration,
    },

    /// A launch ran longer than its deadline ([`Launch::deadline`](crate::Launch::deadline)),
    /// start to end, and was stopped.
    #[error(
        "kernel `{kernel}` ran longer than its deadline of {limit:?} and was stopped in phase {phase} \
         (after {passed} grid_sync() calls); a loop probably never ends (one whose every iteration \
         passes grid_sync(), or a counter that never reaches its bound); the outputs hold whatever the \
         kernel wrote before it stopped; if the launch is legitimately long, raise the limit with \
         Launch::deadline(Some(duration)) or lift it with Launch::deadline(None)",
        passed = phase.saturating_sub(1)
    )]
    DeadlineExceeded {
        /// The kernel's name.
        kernel: String,
        /// The phase the launch had reached, counting from 1: one more than the `grid_sync()`
        /// calls it had passed.
        phase: u32,
        /// The deadline.
        limit: Duration,
    },

    /// A spin-wait (`wait_until`, or a `with_lock` waiting for its lock) waited longer than
    /// the watchdog limit: the memory it waits on never changed as it needed.
    #[error(
        "kernel `{kernel}`: the spin-wait at line {line} waited more than {limit:?} in block {block} \
         (`wait_until` or `with_lock`); no thread made its condition true (a flag nobody sets, a \
         lock nobody gives back, a block waiting for one that is not running); the wait was \
         abandoned (a `with_lock` body skipped) and the kernel ran on, so the outputs are not to \
         be trusted; if the wait is legitimately long, raise the limit with \
         Launch::watchdog(Some(duration)) or disable it with Launch::watchdog(None)"
    )]
    SpinTimeout {
        /// The kernel's name.
        kernel: String,
        /// The Rust source line of the spin-wait.
        line: u32,
        /// The block that gave up first.
        block: u32,
        /// The watchdog limit.
        limit: Duration,
    },

    /// The emulator found threads that can never meet: a barrier not every thread reaches.
    #[error(
        "kernel `{kernel}` can never finish: in block {block}, {detail}; on a GPU it would hang \
         or time out. Every unfinished thread of a block must reach the same sync_block() or \
         warp shuffle, and every block each grid_sync()"
    )]
    EmulatorDeadlock {
        /// The kernel's name.
        kernel: String,
        /// A block that cannot go on.
        block: u32,
        /// Where its threads wait.
        detail: String,
    },

    /// Threads or blocks of an emulated launch disagree on how many barriers they pass: on a
    /// GPU the barriers would pair up wrongly or hang.
    #[error(
        "kernel `{kernel}` calls {barrier} a different number of times in different threads: \
         {first} while {second}; every thread of a block must make the same sync_block() calls, \
         and every thread of the grid the same grid_sync() calls (a value that decides a loop or \
         branch around them was read while another thread changed it?). On a GPU this hangs or \
         pairs barriers wrongly"
    )]
    BarrierMismatch {
        /// The kernel's name.
        kernel: String,
        /// `"grid_sync()"` or `"sync_block()"`.
        barrier: &'static str,
        /// One side, e.g. "thread 3 of block 0 waits at its call number 4".
        first: String,
        /// The other side, e.g. "thread 0 of block 0 finished after 3 calls".
        second: String,
    },

    /// The kernel reported a fault code this runtime does not know.
    #[error(
        "kernel `{kernel}` reported device fault code {code}; this is a bug in gsync: \
         please report it"
    )]
    DeviceFault {
        /// The kernel's name.
        kernel: String,
        /// The status word's code.
        code: u32,
    },

    // ---- The CUDA driver and context.
    /// A CUDA driver call failed.
    #[error("CUDA driver error while {context}: {source}")]
    Driver {
        /// What the runtime was doing.
        context: String,
        /// The driver's result code.
        source: SourceError,
    },

    /// The CUDA context of a GPU was lost: a kernel hit a sticky error (an illegal address or
    /// instruction, a trap, ...), after which the driver fails every call on the context.
    #[error(
        "the CUDA context of GPU {gpu} is lost: {launch} failed with {source}, an error after which \
         the driver refuses all further work on this GPU in this process; every later call on this \
         Gpu returns this error, and so does opening the GPU again in this process (the driver \
         keeps the error until the process ends): restart the process to use the GPU again. \
         The kernel probably accessed memory it does not own: run it with \
         Launch::bounds_checks(true), or on the emulator (Gpu::emulator()), to find the access"
    )]
    ContextLost {
        /// The GPU's ordinal.
        gpu: usize,
        /// The launch that lost the context, e.g. "kernel `smooth` (60 blocks x 32 threads,
        /// barrier ulfs)".
        launch: String,
        /// The driver's sticky error.
        source: SourceError,
    },

    /// The length of a kernel's shared slice (`shared_slice::<T>(len)`) could not be computed
    /// for a launch: its expression overflowed or divided by zero, evaluated as Rust evaluates
    /// it (checked), or the slices' bytes together overflowed.
    #[error(
        "kernel `{kernel}`: the length of shared slice `{slice}` (line {line}) cannot be computed for \
         blocks of {threads} threads: {reason}; pass arguments for which it fits its type"
    )]
    SharedSliceLength {
        /// The kernel's name.
        kernel: String,
        /// The shared slice's Rust name.
        slice: String,
        /// The Rust line of its declaration.
        line: u32,
        /// The block size it was computed for.
        threads: u32,
        /// What went wrong, e.g. "`*` overflows `u32`".
        reason: String,
    },

    /// A kernel's shared slices need more dynamic shared memory per block than the GPU lets a
    /// block opt into, beside the kernel's static shared arrays.
    #[error(
        "kernel `{kernel}` asks for {dynamic} bytes of dynamic shared memory per block of {threads} \
         threads (its shared slices), on top of {static_bytes} bytes of shared arrays, but GPU `{gpu}` \
         gives a block at most {max} bytes; make the shared slices shorter (smaller length arguments, \
         or fewer threads per block where their lengths grow with block_dim())"
    )]
    DynamicSharedMemoryLimit {
        /// The kernel's name.
        kernel: String,
        /// Dynamic shared memory one block asks for: the shared slices, laid out.
        dynamic: u64,
        /// The kernel's static shared memory per block.
        static_bytes: u64,
        /// The most shared memory a block can have, static and dynamic together (the
        /// device's opt-in maximum).
        max: u64,
        /// The block size.
        threads: u32,
        /// The GPU's name.
        gpu: String,
    },

    /// The launch's block or grid shape does not fit CUDA's limits or the kernel: an axis of
    /// 0 or past its limit, a 2-D or 3-D shape for a kernel that reads no per-axis index, or
    /// no shape for a kernel that reads one.
    #[error("kernel `{kernel}` cannot run in this launch shape: {reason}")]
    InvalidShape {
        /// The kernel's name.
        kernel: String,
        /// What is wrong and what to do.
        reason: String,
    },

    /// The kernel sizes constants or arrays by `BLOCK_SIZE`, and they do not work out at this
    /// block size.
    #[error(
        "kernel `{kernel}` cannot run with {threads} threads per block: {reason}; pass a block size for which \
         it can to Launch::threads"
    )]
    RefusedBlockSize {
        /// The kernel's name.
        kernel: String,
        /// The block size.
        threads: u32,
        /// What fails at this block size.
        reason: String,
    },

    // ---- Multi-GPU teams: NVSHMEM, nvJitLink and the processes of a team.
    /// A part of NVSHMEM (its host library, device library, headers or bootstrap plugin) was
    /// not found.
    #[error(
        "NVSHMEM's {what} was not found; searched:\n{}\n\
         install NVSHMEM 3.8 with `pip install 'nvidia-nvshmem-cu13==3.8.0'` (then add that \
         site-packages directory to PYTHONPATH), or set GSYNC_NVSHMEM_DIR to a folder holding \
         NVSHMEM's include/ and lib/",
        bullet_list(searched)
    )]
    NvshmemNotFound {
        /// The missing piece, e.g. "host library (lib/libnvshmem_host.so.3)".
        what: String,
        /// The places that were searched.
        searched: Vec<PathBuf>,
    },

    /// The NVSHMEM found is not the release gsync is built for, or its headers and host
    /// library come from different releases.
    #[error(
        "NVSHMEM in {} is not usable: {problem}; gsync needs NVSHMEM {required} with headers and \
         host library of the same release: install it with `pip install 'nvidia-nvshmem-cu13==3.8.0'` \
         or point GSYNC_NVSHMEM_DIR at such an installation",
        dir.display()
    )]
    NvshmemVersion {
        /// The NVSHMEM folder that was found.
        dir: PathBuf,
        /// The release gsync needs, e.g. "3.8".
        required: String,
        /// What differs, e.g. "the headers are 3.8.0 but libnvshmem_host.so.3 is 3.7.1".
        problem: String,
    },

    /// nvJitLink (`libnvJitLink.so.13`), which links a team kernel with NVSHMEM's device
    /// library, was not found, or is older than the NVRTC that compiles the kernel.
    #[error(
        "nvJitLink (libnvJitLink.so.13) is not usable: {problem}; searched:\n{}\n\
         install it next to NVRTC with `pip install 'nvidia-nvjitlink==13.0.*'`, or set CUDA_HOME \
         (or GSYNC_CUDA_ROOT) to a CUDA 13 toolkit",
        bullet_list(searched)
    )]
    NvJitLinkUnavailable {
        /// Why it cannot be used, e.g. "not found" or "version 13.0 is older than NVRTC 13.1".
        problem: String,
        /// The directories that were searched.
        searched: Vec<PathBuf>,
    },

    /// nvJitLink could not link a team kernel with NVSHMEM's device library.
    #[error(
        "nvJitLink could not link kernel `{kernel}` with NVSHMEM's device library ({call} returned \
         {result}); an NVSHMEM function the kernel calls may be missing from libnvshmem_device.a, or \
         nvJitLink may be older than the CUDA that built that library (install \
         `nvidia-nvjitlink==13.0.*` or newer)\n--- nvJitLink log ---\n{log}"
    )]
    Link {
        /// The kernel's name.
        kernel: String,
        /// The nvJitLink call that failed.
        call: &'static str,
        /// nvJitLink's result code.
        result: i32,
        /// nvJitLink's error and info logs.
        log: String,
    },

    /// An NVSHMEM host call failed.
    #[error(
        "NVSHMEM failed while {context} ({call} returned {status}); run again with \
         NVSHMEM_DEBUG=INFO for NVSHMEM's own account, and check that every PE of the team runs \
         and reaches the same call"
    )]
    Nvshmem {
        /// What the runtime was doing.
        context: String,
        /// The NVSHMEM function.
        call: &'static str,
        /// Its status code (or -1 for a null pointer).
        status: i32,
    },

    /// A PE of a team waited in vain for PE 0's unique id in the rendezvous file.
    #[error(
        "PE {pe} waited {waited:?} for PE 0 to write NVSHMEM's unique id to {}: {problem}; start \
         PE 0 of the same team with the same rendezvous file (run_local does both), or give the \
         team longer to start",
        path.display()
    )]
    TeamRendezvous {
        /// The PE that waited.
        pe: u32,
        /// The rendezvous file.
        path: PathBuf,
        /// How long it waited.
        waited: Duration,
        /// What it found, e.g. "the file does not exist".
        problem: String,
    },

    /// A team's environment variables are missing or malformed, or a PE was asked for that
    /// the team does not have.
    #[error("the team's settings are invalid: {variable}={value:?}: {reason}")]
    TeamSettings {
        /// The variable or argument, e.g. "GSYNC_TEAM_PE".
        variable: String,
        /// Its value.
        value: String,
        /// What is wrong and what to do.
        reason: String,
    },

    /// A module was registered with NVSHMEM that holds no NVSHMEM device state, so its
    /// NVSHMEM calls would read an uninitialised state.
    #[error(
        "module `{module}` has no NVSHMEM device state (`{symbol}` is missing): it was not linked \
         with NVSHMEM's device library, or calls no NVSHMEM function; build it with \
         nvshmem::link_kernel, or do not register it"
    )]
    NotAnNvshmemModule {
        /// The module, as the caller named it.
        module: String,
        /// The missing symbol.
        symbol: &'static str,
    },

    /// The PEs of a team called a collective with different arguments.
    #[error(
        "the PEs of the team called {call} with different arguments: {detail}; every PE must \
         make the same collective calls with the same sizes, in the same order"
    )]
    CollectiveMismatch {
        /// The collective.
        call: &'static str,
        /// What differed.
        detail: String,
    },

    /// A launcher started another number of processes than the team the program asks for:
    /// under a launcher each process is one PE.
    #[error(
        "{launcher} started {launched} process(es) ({size_var}={launched}), but the program asks for a team of \
         {asked} (Team::cuda({asked})): under a launcher each process is one PE; start {asked} processes \
         (`{command}`), or make the program ask for {launched}; to have gsync start the {asked} PEs itself on \
         this node instead, set GSYNC_TEAM_LAUNCHER=none"
    )]
    LaunchSizeMismatch {
        /// The launcher, e.g. "Open MPI's mpirun".
        launcher: &'static str,
        /// The variable that holds its number of processes.
        size_var: &'static str,
        /// How many processes it started.
        launched: u32,
        /// The team size the program asks for.
        asked: u32,
        /// The command that starts `asked` processes with it.
        command: String,
    },

    /// NVSHMEM numbered this process otherwise than whoever started it.
    #[error(
        "NVSHMEM made this process PE {nvshmem_pe} of {nvshmem_n_pes}, but {started_by} started it as PE {pe} of \
         {n_pes}: {fix}"
    )]
    PeNumberMismatch {
        /// Who started the process: "gsync's run_local" or a launcher.
        started_by: &'static str,
        /// Its PE, as started.
        pe: u32,
        /// The team's size, as started.
        n_pes: u32,
        /// Its PE, as NVSHMEM numbered it.
        nvshmem_pe: i32,
        /// The team's size, as NVSHMEM counted it.
        nvshmem_n_pes: i32,
        /// What to set.
        fix: String,
    },

    /// NVSHMEM's own bootstrap failed to start a PE that a launcher started.
    #[error(
        "NVSHMEM could not start PE {pe} of {n_pes} under {launcher} through its bootstrap ({bootstrap}; \
         nvshmemx_hostlib_init_attr returned {status}): {fix}; run again with NVSHMEM_DEBUG=INFO for NVSHMEM's \
         own account"
    )]
    LauncherBootstrap {
        /// The launcher, e.g. "Slurm's srun".
        launcher: &'static str,
        /// The PE, as the launcher numbered it.
        pe: u32,
        /// The team's size, as the launcher counted it.
        n_pes: u32,
        /// NVSHMEM's bootstrap settings, e.g. "NVSHMEM_BOOTSTRAP=MPI".
        bootstrap: String,
        /// What `nvshmemx_hostlib_init_attr` returned.
        status: i32,
        /// The settings that reach the launcher's processes.
        fix: &'static str,
    },

    /// A PE process of a local team could not be started, or one of them failed.
    #[error("the local team of {n_pes} PEs failed: {detail}; see each PE's output above for its error")]
    TeamFailed {
        /// The team's size.
        n_pes: u32,
        /// Which PE failed first and how each PE ended.
        detail: String,
    },
}

/// A per-block or per-thread resource that a kernel can exceed at compile time.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    /// Static shared memory (`__shared__` arrays, the DSL's shared arrays).
    SharedMemory,
    /// Per-thread local memory (the DSL's per-thread arrays).
    LocalMemory,
    /// Registers per thread.
    Registers,
    /// The kernel's parameter space (its arguments).
    Parameters,
}

impl Resource {
    /// What to change in the kernel.
    fn advice(self) -> &'static str {
        match self {
            Resource::SharedMemory => {
                "make the kernel's shared arrays smaller: together they must fit in 48 KiB (49152 bytes)"
            }
            Resource::LocalMemory => "make the kernel's per-thread arrays smaller, or move them to a buffer",
            Resource::Registers => {
                "launch fewer threads per block (Launch::threads) or split the work into simpler phases"
            }
            Resource::Parameters => "pass fewer or smaller arguments; large data belongs in a buffer",
        }
    }
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Resource::SharedMemory => "shared memory",
            Resource::LocalMemory => "local memory",
            Resource::Registers => "registers",
            Resource::Parameters => "parameter space",
        })
    }
}

/// The domains of [`Error`], for callers that handle a whole domain alike.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Something is not installed: the driver, a GPU, NVRTC, the CUDA headers.
    Installation,
    /// A kernel's CUDA did not compile.
    Compilation,
    /// The launch configuration was refused before anything ran, or the call needs the other
    /// backend.
    Configuration,
    /// A buffer does not fit the call (its length, its GPU, its backend), or memory ran out.
    Memory,
    /// The kernel reported a fault while it ran; its outputs are not to be trusted.
    KernelFault,
    /// The CUDA driver failed, or the GPU's context is lost.
    Driver,
}

impl Error {
    /// The domain of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::DriverNotFound { .. }
            | Error::NoSuchGpu { .. }
            | Error::NvrtcNotFound { .. }
            | Error::CudaHeadersNotFound { .. }
            | Error::LibraryLoad { .. }
            | Error::DamagedLibrary { .. }
            | Error::UnsupportedNvrtc { .. } => ErrorKind::Installation,
            Error::Compile { .. } | Error::Nvrtc { .. } | Error::KernelResources { .. } => ErrorKind::Compilation,
            Error::InvalidBlockSize { .. }
            | Error::EmptyGrid { .. }
            | Error::GridTooLarge { .. }
            | Error::TooManyBlocks { .. }
            | Error::BarrierBlockLimit { .. }
            | Error::InvalidBarrier { .. }
            | Error::CooperativeLaunchUnsupported { .. }
            | Error::SharedMemoryLimit { .. }
            | Error::CannotSplit { .. }
            | Error::WrongBackend { .. }
            | Error::SharedSliceLength { .. }
            | Error::DynamicSharedMemoryLimit { .. }
            | Error::InvalidShape { .. }
            | Error::RefusedBlockSize { .. }
            | Error::InvalidTeam { .. }
            | Error::TeamMismatch { .. }
            | Error::TeamRefused { .. }
            | Error::LaunchSizeMismatch { .. }
            | Error::PeNumberMismatch { .. }
            | Error::LauncherBootstrap { .. }
            | Error::UnsupportedStream { .. }
            | Error::TeamStream
            | Error::Capture { .. } => ErrorKind::Configuration,
            Error::LengthMismatch { .. }
            | Error::InvalidInput { .. }
            | Error::OutOfMemory { .. }
            | Error::BufferOnOtherGpu { .. }
            | Error::BufferBackendMismatch { .. }
            | Error::NotSymmetric { .. }
            | Error::ForeignContext { .. }
            | Error::NotOwned { .. } => ErrorKind::Memory,
            Error::OutOfBounds { .. }
            | Error::AsyncCopySourceWritten { .. }
            | Error::ZeroStep { .. }
            | Error::AssertionFailed { .. }
            | Error::BarrierTimeout { .. }
            | Error::KernelTimeout { .. }
            | Error::DeadlineExceeded { .. }
            | Error::SpinTimeout { .. }
            | Error::EmulatorDeadlock { .. }
            | Error::BarrierMismatch { .. }
            | Error::DeviceFault { .. }
            | Error::PeNotArrived { .. }
            | Error::TeamTimedOut { .. }
            | Error::TeamBroken { .. }
            | Error::PeLeft { .. }
            | Error::PeFailed { .. }
            | Error::NoSuchPe { .. } => ErrorKind::KernelFault,
            Error::Driver { .. } | Error::ContextLost { .. } => ErrorKind::Driver,
            Error::NvshmemNotFound { .. } | Error::NvshmemVersion { .. } | Error::NvJitLinkUnavailable { .. } => {
                ErrorKind::Installation
            }
            Error::Link { .. } => ErrorKind::Compilation,
            Error::TeamSettings { .. } | Error::NotAnNvshmemModule { .. } | Error::CollectiveMismatch { .. } => {
                ErrorKind::Configuration
            }
            Error::Nvshmem { .. } | Error::TeamRendezvous { .. } | Error::TeamFailed { .. } => ErrorKind::Driver,
        }
    }
}

/// What to do when a call needs the other backend.
fn backend_hint(backend: Backend) -> &'static str {
    match backend {
        Backend::Emulator => {
            "kernels from #[grid_phases] run on the emulator through their own launch functions; \
             open a CUDA GPU with Gpu::cuda to launch CUDA code"
        }
        Backend::Cuda => "open the emulator with Gpu::emulator() to run kernels on the CPU",
    }
}

fn bullet_list(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "  (no candidate directories)".to_owned();
    }
    let lines: Vec<String> = paths.iter().map(|path| format!("  {}", path.display())).collect();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvrtc_not_found_lists_searched_paths_and_the_fix() {
        let error = Error::NvrtcNotFound { searched: vec![PathBuf::from("/opt/a/lib64"), PathBuf::from("/opt/b/lib")] };
        let message = error.to_string();
        assert!(message.contains("  /opt/a/lib64\n  /opt/b/lib"), "{message}");
        assert!(message.contains("pip install nvidia-cuda-nvrtc"), "{message}");
        assert!(message.contains("CUDA_HOME"), "{message}");
    }

    #[test]
    fn grid_too_large_states_the_limit_and_the_fix() {
        let error = Error::GridTooLarge {
            kernel: "smooth".into(),
            requested: 500,
            max: 264,
            blocks_per_sm: 2,
            sm_count: 132,
            threads: 256,
        };
        let message = error.to_string();
        assert!(message.contains("only 264 can be resident"), "{message}");
        assert!(message.contains("2 per SM x 132 SMs"), "{message}");
        assert!(message.contains("launch at most 264 blocks"), "{message}");
    }

    #[test]
    fn a_barrier_timeout_names_barrier_phase_cause_and_fix() {
        let error = Error::BarrierTimeout {
            kernel: "smooth".into(),
            barrier: "ulfs".into(),
            phase: 3,
            block: 17,
            limit: Duration::from_millis(250),
        };
        let message = error.to_string();
        assert!(message.contains("barrier `ulfs` timed out"), "{message}");
        assert!(message.contains("block 17 waited more than 250ms in grid_sync() number 3"), "{message}");
        assert!(message.contains("not co-resident") && message.contains("skipped a grid_sync()"), "{message}");
        assert!(message.contains("Launch::watchdog(None)"), "{message}");
        assert_eq!(error.kind(), ErrorKind::KernelFault);
    }

    #[test]
    fn a_boxed_source_stays_reachable() {
        let error = Error::Nvrtc { context: "creating a program".into(), source: "NVRTC_ERROR_OUT_OF_MEMORY".into() };
        let source = std::error::Error::source(&error).expect("a source");
        assert_eq!(source.to_string(), "NVRTC_ERROR_OUT_OF_MEMORY");
        assert_eq!(error.kind(), ErrorKind::Compilation);
    }
}
