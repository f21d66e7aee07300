//! Compiling CUDA source to a CUBIN with NVRTC. Needs NVRTC, not a GPU.

use std::ffi::{c_char, CString};
use std::path::PathBuf;

use cudarc::nvrtc::result::{self as nvrtc, NvrtcError};
use cudarc::nvrtc::sys;

use crate::core::error::{Error, Resource, Result};
use crate::cuda::discover::{self, Toolkit};

/// A kernel compiled for one GPU architecture.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The CUBIN, loadable with `cuModuleLoadData` on a GPU of the target architecture.
    pub cubin: Vec<u8>,
    /// NVRTC's log (warnings); empty when it had nothing to say.
    pub log: String,
    /// What ptxas reported of the CUBIN's functions; zero for one that nvJitLink linked.
    pub usage: Usage,
}

/// What ptxas reported of a CUBIN's functions: its `-v` report, which [`compile`] asks for and
/// keeps out of the log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// The most registers any kernel of the CUBIN uses.
    pub registers: u32,
    /// Bytes of register spill stores and loads over all its functions: values that did not
    /// fit in the registers ptxas allowed itself and went to local memory.
    pub spill_bytes: u64,
}

/// Compiles `source` for compute capability `arch` (e.g. `(9, 0)` for `sm_90`).
///
/// `kernel_name` names the kernel in errors. Floating-point contraction is off so that results
/// match Rust on the CPU bit for bit. Needs NVRTC (see [`toolkit`](crate::toolkit)), not a GPU:
///
/// ```
/// use gsync_runtime::{compile, ErrorKind};
/// let source = r#"extern "C" __global__ void k(int* x) { x[threadIdx.x] = 1; }"#;
/// match compile(source, "k", (8, 0)) {
///     Ok(compiled) => assert!(!compiled.cubin.is_empty()),
///     Err(error) => assert_eq!(error.kind(), ErrorKind::Installation, "{error}"),
/// }
/// // A source NVRTC refuses is an error whose message holds NVRTC's log.
/// if gsync_runtime::toolkit().is_ok() {
///     let error = compile("not CUDA", "k", (8, 0)).map(|_| ()).unwrap_err();
///     assert_eq!(error.kind(), ErrorKind::Compilation);
/// }
/// ```
pub fn compile(source: &str, kernel_name: &str, arch: (u32, u32)) -> Result<Compiled> {
    let toolkit = discover::toolkit()?;
    let search = toolkit.header_search();
    with_match_by_sign_fallback(options(toolkit, arch), |options| {
        let (cubin, log, usage) = match run_nvrtc(source, kernel_name, options, search, Output::Cubin) {
            Ok(compiled) => compiled,
            // With ptxas's report asked for, NVRTC 13.0's log of a kernel that ptxas refuses
            // holds the report but not ptxas's error: the error comes from compiling without it.
            Err(_) => {
                let quiet: Vec<String> = options.iter().filter(|option| *option != PTXAS_REPORT).cloned().collect();
                run_nvrtc(source, kernel_name, &quiet, search, Output::Cubin)?
            }
        };
        Ok(Compiled { cubin, log, usage })
    })
}

/// The NVRTC option under which the prelude's `match_any` of values of at most 8 bits tests
/// each bit at the sign rather than by a mask (see `match_low_bits` in `prelude.cuh`).
const MATCH_BY_SIGN: &str = "-DGSYNC_MATCH_BY_SIGN";

/// Builds with `options`, and where ptxas failed to allocate predicates (its error C7600,
/// which the mask tests' gathered predicates cause in some kernels), builds again with
/// [`MATCH_BY_SIGN`] added; any other outcome is the first build's. A second build that fails
/// too says in its log that it was the second.
pub(crate) fn with_match_by_sign_fallback<T>(
    options: Vec<String>,
    build: impl Fn(&[String]) -> Result<T>,
) -> Result<T> {
    match build(&options) {
        Err(Error::Compile { log, .. } | Error::Link { log, .. }) if log.contains("(C7600)") => {
            let by_sign: Vec<String> = options.into_iter().chain([MATCH_BY_SIGN.to_owned()]).collect();
            build(&by_sign).map_err(|mut error| {
                if let Error::Compile { log, .. } | Error::Link { log, .. } = &mut error {
                    log.insert_str(0, RETRY_NOTE);
                }
                error
            })
        }
        built => built,
    }
}

/// What the log of a failed second build ([`with_match_by_sign_fallback`]) starts with.
const RETRY_NOTE: &str = "(ptxas ran out of predicate registers (C7600) on the first build; this is the \
second, with -DGSYNC_MATCH_BY_SIGN)\n";

/// What [`run_nvrtc`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Output {
    /// A CUBIN for the `sm_XY` the options name.
    Cubin,
    /// LTO-IR (the options name a `compute_XY` and `-dlto`), for nvJitLink to link.
    LtoIr,
}

/// Compiles `source` with `options` into `output`, NVRTC's log without ptxas's `-v` report and
/// what that report says, classifying a failure by the log; `header_search` is what a missing
/// header's error says was searched.
pub(crate) fn run_nvrtc(
    source: &str,
    kernel_name: &str,
    options: &[String],
    header_search: &[PathBuf],
    output: Output,
) -> Result<(Vec<u8>, String, Usage)> {
    let source_c = CString::new(source).map_err(|nul| Error::Compile {
        kernel: kernel_name.to_owned(),
        log: format!("the source contains a NUL byte at offset {}", nul.nul_position()),
        source_with_line_numbers: number_lines(source),
    })?;
    // With NUL bytes removed the name is always a valid C string.
    let program_name = CString::new(format!("{}.cu", kernel_name.replace('\0', ""))).unwrap_or_default();
    let program = Program::create(&source_c, &program_name)?;
    let compiled = compile_with_stack(&program, options);
    let (log, usage) = ptxas_report(&program.log()?);
    match compiled {
        Ok(()) => {
            let image = match output {
                Output::Cubin => program.cubin()?,
                Output::LtoIr => program.lto_ir()?,
            };
            Ok((image, log, usage))
        }
        Err(NvrtcError(sys::nvrtcResult::NVRTC_ERROR_COMPILATION)) => Err(match classify(&log) {
            Failure::MissingHeader(header) => Error::CudaHeadersNotFound { header, searched: header_search.to_vec() },
            Failure::Resources(resource, detail) => {
                Error::KernelResources { kernel: kernel_name.to_owned(), resource, detail, log }
            }
            Failure::Code => {
                Error::Compile { kernel: kernel_name.to_owned(), log, source_with_line_numbers: number_lines(source) }
            }
        }),
        Err(error) => Err(nvrtc_error("compiling")(error)),
    }
}

/// `log` without ptxas's `-v` report (its `ptxas info` lines and their `ptxas  .` details), and
/// what the report says: lines such as `ptxas info    : Used 40 registers, …` and
/// `ptxas         .     24 bytes stack frame, 28 bytes spill stores, 60 bytes spill loads`.
fn ptxas_report(log: &str) -> (String, Usage) {
    let mut usage = Usage::default();
    let mut kept = Vec::new();
    for line in log.lines() {
        let Some(rest) = line.strip_prefix("ptxas").map(str::trim_start) else {
            kept.push(line);
            continue;
        };
        let numbers = |what: &str| -> Option<u64> {
            let at = rest.find(what)?;
            rest[..at].trim_end().rsplit(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
        };
        if let Some(rest) = rest.strip_prefix("info") {
            if let Some(registers) = rest.contains("Used ").then(|| numbers(" registers")).flatten() {
                usage.registers = usage.registers.max(u32::try_from(registers).unwrap_or(u32::MAX));
            }
        } else if rest.starts_with('.') {
            usage.spill_bytes +=
                numbers(" bytes spill stores").unwrap_or(0) + numbers(" bytes spill loads").unwrap_or(0);
        } else {
            kept.push(line);
        }
    }
    (kept.join("\n"), usage)
}

/// Why NVRTC refused a source, read from its log.
#[derive(Debug, PartialEq, Eq)]
enum Failure {
    /// A header the source includes was not found (a CUDA installation without its headers).
    MissingHeader(String),
    /// The kernel needs more of a resource than the GPU has; the log line that says so.
    Resources(Resource, String),
    /// Anything else: the code itself.
    Code,
}

/// Classifies a failed compilation by NVRTC's log. The texts are NVRTC's and ptxas's, e.g.
/// `catastrophic error: cannot open source file "cuda_runtime.h"` and `ptxas error   : Entry
/// function 'k' uses too much shared data (0x10000 bytes, 0xc000 max)`.
fn classify(log: &str) -> Failure {
    for line in log.lines() {
        for marker in ["cannot open source file \"", "could not open source file \""] {
            if let Some(at) = line.find(marker) {
                let rest = &line[at + marker.len()..];
                let header = rest.split('"').next().unwrap_or(rest);
                return Failure::MissingHeader(header.to_owned());
            }
        }
    }
    for line in log.lines() {
        if let Some(resource) = resource_of(line) {
            return Failure::Resources(resource, line.trim().to_owned());
        }
    }
    Failure::Code
}

/// The resource a line of the log says the kernel exceeds, if it says so.
fn resource_of(line: &str) -> Option<Resource> {
    let lower = line.to_ascii_lowercase();
    if lower.contains("parameter space overflowed") {
        return Some(Resource::Parameters);
    }
    if !lower.contains("ptxas") || !(lower.contains("too much") || lower.contains("too many")) {
        return None;
    }
    if lower.contains("shared") {
        Some(Resource::SharedMemory)
    } else if lower.contains("local") || lower.contains("stack") {
        Some(Resource::LocalMemory)
    } else if lower.contains("register") {
        Some(Resource::Registers)
    } else if lower.contains("param") {
        Some(Resource::Parameters)
    } else {
        None
    }
}

/// Stack for NVRTC's front end, which recurses once per nesting level of an expression: a
/// kernel's deep expressions (thousands of `i8` additions are as many nested helper calls)
/// would overflow a test thread's 2 MiB, or a small main thread. Reserved, not committed.
const NVRTC_STACK: usize = 256 << 20;

/// Runs NVRTC on `program` on a thread of its own with [`NVRTC_STACK`] of stack.
fn compile_with_stack(program: &Program, options: &[String]) -> std::result::Result<(), NvrtcError> {
    /// The program handle, used by one thread at a time (NVRTC allows any thread).
    struct Handle(sys::nvrtcProgram);
    // SAFETY: the handle moves to the compiling thread, which the scope joins before
    // `program` can be used or dropped again.
    unsafe impl Send for Handle {}
    let handle = Handle(program.0);
    std::thread::scope(|scope| {
        let compile = move || {
            let handle = handle;
            // SAFETY: the program is live: `program` outlives this scope.
            unsafe { nvrtc::compile_program(handle.0, options) }
        };
        match std::thread::Builder::new().name("nvrtc".into()).stack_size(NVRTC_STACK).spawn_scoped(scope, compile) {
            Ok(thread) => thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            // No thread to be had: compile on this one.
            // SAFETY: as above; no other thread has the handle.
            Err(_) => unsafe { nvrtc::compile_program(program.0, options) },
        }
    })
}

/// The version of the NVRTC that [`compile`] uses, as (major, minor).
pub fn nvrtc_version() -> Result<(i32, i32)> {
    discover::toolkit()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: both pointers are valid for writes; the library is loaded by `toolkit()`.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }.result().map_err(nvrtc_error("querying its version"))?;
    Ok((major, minor))
}

/// Asks ptxas for its report of registers and spills, read into [`Compiled::usage`].
const PTXAS_REPORT: &str = "--ptxas-options=-v";

/// The NVRTC options for an architecture; part of the disk cache key.
pub(crate) fn options(toolkit: &Toolkit, (major, minor): (u32, u32)) -> Vec<String> {
    let mut options = options_for_target(toolkit, format!("--gpu-architecture=sm_{major}{minor}"));
    options.push(PTXAS_REPORT.to_owned());
    options
}

/// The NVRTC options with `target` (a `--gpu-architecture` option) first, then the fixed ones
/// and the toolkit's include directories.
pub(crate) fn options_for_target(toolkit: &Toolkit, target: String) -> Vec<String> {
    let fixed = [
        target,
        "-std=c++17".to_owned(),
        // Rust never contracts a * b + c into an fma; neither may the device.
        "--fmad=false".to_owned(),
        "-default-device".to_owned(),
    ];
    let includes = toolkit.include_dirs().iter().map(|dir| format!("-I{}", dir.display()));
    fixed.into_iter().chain(includes).collect()
}

/// `source` with each line prefixed by its 1-based number, as NVRTC's log counts them.
pub(crate) fn number_lines(source: &str) -> String {
    let width = source.lines().count().max(1).to_string().len();
    source.lines().enumerate().map(|(index, line)| format!("{:>width$} | {line}\n", index + 1)).collect()
}

fn nvrtc_error(context: &str) -> impl FnOnce(NvrtcError) -> Error + '_ {
    move |source| Error::Nvrtc { context: context.to_owned(), source: Box::new(source) }
}

/// An NVRTC program, destroyed on drop.
struct Program(sys::nvrtcProgram);

impl Program {
    fn create(source: &CString, name: &CString) -> Result<Self> {
        nvrtc::create_program(source, Some(name)).map(Program).map_err(nvrtc_error("creating a program"))
    }

    fn log(&self) -> Result<String> {
        // SAFETY: the program is live.
        let raw = unsafe { nvrtc::get_program_log(self.0) }.map_err(nvrtc_error("reading the log"))?;
        Ok(c_chars_to_string(&raw).trim_end().to_owned())
    }

    /// The CUBIN. cudarc's checked layer only offers PTX, which the driver would JIT again at
    /// load time; a CUBIN for the exact architecture loads directly, so we use the raw calls.
    fn cubin(&self) -> Result<Vec<u8>> {
        let mut size = 0usize;
        // SAFETY: the program is live and compiled; `size` is valid for writes.
        unsafe { sys::nvrtcGetCUBINSize(self.0, &mut size) }.result().map_err(nvrtc_error("sizing the CUBIN"))?;
        let mut cubin = vec![0u8; size];
        // SAFETY: `cubin` has the `size` bytes NVRTC asked for.
        unsafe { sys::nvrtcGetCUBIN(self.0, cubin.as_mut_ptr().cast::<c_char>()) }
            .result()
            .map_err(nvrtc_error("reading the CUBIN"))?;
        Ok(cubin)
    }

    /// The LTO-IR of a program compiled with `-dlto`, which cudarc's checked layer lacks.
    fn lto_ir(&self) -> Result<Vec<u8>> {
        let mut size = 0usize;
        // SAFETY: the program is live and compiled; `size` is valid for writes.
        unsafe { sys::nvrtcGetLTOIRSize(self.0, &mut size) }.result().map_err(nvrtc_error("sizing the LTO-IR"))?;
        let mut ir = vec![0u8; size];
        // SAFETY: `ir` has the `size` bytes NVRTC asked for.
        unsafe { sys::nvrtcGetLTOIR(self.0, ir.as_mut_ptr().cast::<c_char>()) }
            .result()
            .map_err(nvrtc_error("reading the LTO-IR"))?;
        Ok(ir)
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by `create_program` and destroyed only here. A failure would only
        // leak the program, so it is ignored.
        let _ = unsafe { nvrtc::destroy_program(self.0) };
    }
}

fn c_chars_to_string(raw: &[c_char]) -> String {
    let bytes: Vec<u8> = raw.iter().map(|&c| c as u8).take_while(|&b| b != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::barrier::Barrier;
    use crate::core::dims::Axes;
    use crate::core::kernel::{KernelSpec, SplitSpec};
    use crate::cuda::discover::nvrtc_or_skip;

    /// A failure to allocate predicates (C7600) is built again with the sign-tested
    /// `match_any`, once; any other failure, and a success, are the first build's.
    #[test]
    fn only_running_out_of_predicates_builds_again_by_sign() {
        let failure = |log: &str| Error::Compile {
            kernel: "k".to_owned(),
            log: log.to_owned(),
            source_with_line_numbers: String::new(),
        };
        let out_of_predicates =
            "ptxas fatal   : (C7600) Register allocation failed with register count of '7'. Compile the program with a higher register target";
        let builds = std::cell::RefCell::new(Vec::new());
        let built = with_match_by_sign_fallback(vec!["-a".to_owned()], |options| {
            builds.borrow_mut().push(options.to_vec());
            if options.iter().any(|option| option == MATCH_BY_SIGN) {
                Ok(7)
            } else {
                Err(failure(out_of_predicates))
            }
        });
        assert_eq!(built.ok(), Some(7));
        assert_eq!(*builds.borrow(), [vec!["-a".to_owned()], vec!["-a".to_owned(), MATCH_BY_SIGN.to_owned()]]);

        for fails in [true, false] {
            let calls = std::cell::Cell::new(0);
            let built = with_match_by_sign_fallback(vec![], |_| {
                calls.set(calls.get() + 1);
                if fails {
                    Err(failure("error: identifier \"x\" is undefined"))
                } else {
                    Ok(3)
                }
            });
            assert_eq!(calls.get(), 1);
            assert_eq!(built.is_ok(), !fails);
        }
        // A second build that fails is that build's error, saying it was the second.
        let calls = std::cell::Cell::new(0);
        let built = with_match_by_sign_fallback(vec![], |options| {
            calls.set(calls.get() + 1);
            Err::<(), _>(failure(if options.is_empty() { out_of_predicates } else { "by sign" }))
        });
        assert_eq!(calls.get(), 2);
        match built {
            Err(Error::Compile { log, .. }) => assert_eq!(log, format!("{RETRY_NOTE}by sign")),
            other => panic!("{other:?}"),
        }
    }

    const GRID_KERNEL: &str = r#"
#include <cooperative_groups.h>
extern "C" __global__ void __launch_bounds__(128) step(float* out, unsigned long long n) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = out[i] * 2.0f + 1.0f;
    cooperative_groups::this_grid().sync();
}
"#;

    #[test]
    fn number_lines_aligns_numbers_to_the_widest() {
        let source = (1..=10).map(|n| format!("l{n}\n")).collect::<String>();
        let numbered = number_lines(&source);
        assert!(numbered.starts_with(" 1 | l1\n"), "{numbered}");
        assert!(numbered.ends_with("10 | l10\n"), "{numbered}");
    }

    #[test]
    fn ptxas_report_gives_registers_and_spills_and_leaves_the_rest_of_the_log() {
        let log = "x.cu(3): warning #177-D: variable \"v\" was declared but never referenced\n\
                   ptxas info    : 95 bytes gmem\n\
                   ptxas info    : Compiling entry function 'k_' for 'sm_90'\n\
                   ptxas info    : Function properties for k_\n\
                   ptxas         .     24 bytes stack frame, 28 bytes spill stores, 60 bytes spill loads\n\
                   ptxas info    : Used 32 registers, used 1 barriers, 24 bytes cumulative stack size\n\
                   ptxas info    : Function properties for _Z4coldv\n\
                   ptxas         .     8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n\
                   ptxas info    : Compiling entry function 'k2_' for 'sm_90'\n\
                   ptxas info    : Used 40 registers, used 1 barriers\n\
                   ptxas warning : Stack size for entry function 'k_' cannot be statically determined";
        let (kept, usage) = ptxas_report(log);
        assert_eq!(usage, Usage { registers: 40, spill_bytes: 96 });
        assert_eq!(
            kept,
            "x.cu(3): warning #177-D: variable \"v\" was declared but never referenced\n\
             ptxas warning : Stack size for entry function 'k_' cannot be statically determined"
        );
        assert_eq!(ptxas_report(""), (String::new(), Usage::default()));
    }

    #[test]
    fn compiles_a_grid_kernel_to_cubin_for_sm80_and_sm90() {
        if !nvrtc_or_skip() {
            return;
        }
        for arch in [(8, 0), (9, 0)] {
            let compiled =
                compile(GRID_KERNEL, "step", arch).unwrap_or_else(|error| panic!("sm_{}{}: {error}", arch.0, arch.1));
            assert_eq!(&compiled.cubin[..4], b"\x7fELF", "a CUBIN is an ELF file");
        }
    }

    /// A body shaped like `#[grid_phases]` output: user parameters, then the two trailing ones
    /// and the profile's, the barrier context opened first and passed to every `grid_sync()`,
    /// and the profile hooks at the start, around each `grid_sync()` and at the end.
    const HALVE: &str = r#"
extern "C" __global__ void __launch_bounds__(GSYNC_BLOCK_SIZE) halve(
    f32* __restrict__ a, unsigned long long a_len, u32 rounds,
    u32* __restrict__ gsync_barrier_state, gsync_status_t* __restrict__ gsync_status, const gsync_next_launch_t gsync_next_launch
    GSYNC_PROFILE_PARAMETERS) {
    gsync::prepare_next_launch(gsync_next_launch);
    GSYNC_PROFILE_BEGIN();
    gsync_barrier_t gsync_barrier = gsync_barrier_begin(gsync_barrier_state);
    const u64 i = (u64)blockIdx.x * GSYNC_BLOCK_SIZE + threadIdx.x;
    for (u32 round = 0; round < rounds; ++round) {
        if (gsync::in_bounds(i, a_len, gsync_status, 0u, 4u)) a[i] = a[i] * 0.5f;
        GSYNC_PROFILE_ARRIVE();
        gsync_grid_sync(gsync_barrier, gsync_status);
        GSYNC_PROFILE_LEAVE();
    }
    GSYNC_PROFILE_END();
}
"#;

    /// A kernel without `grid_sync()` whose threads return early, each recording its end.
    const CLAMP: &str = r#"
extern "C" __global__ void __launch_bounds__(GSYNC_BLOCK_SIZE) clamp(
    f32* __restrict__ a, unsigned long long a_len,
    u32* __restrict__ gsync_barrier_state, gsync_status_t* __restrict__ gsync_status, const gsync_next_launch_t gsync_next_launch
    GSYNC_PROFILE_PARAMETERS) {
    gsync::prepare_next_launch(gsync_next_launch);
    GSYNC_PROFILE_BEGIN();
    const u64 i = (u64)blockIdx.x * GSYNC_BLOCK_SIZE + threadIdx.x;
    if (i >= a_len) {
        GSYNC_PROFILE_EXIT();
        return;
    }
    a[i] = fminf(a[i], 1.0f);
    GSYNC_PROFILE_EXIT();
}
"#;

    /// The same kernel split at its `grid_sync()`: the loop runs on the host, which launches
    /// segment 0 once per round; segment 1 is a no-op tail, to show several kernels per body.
    const HALVE_SPLIT: &str = r#"
extern "C" __global__ void __launch_bounds__(GSYNC_BLOCK_SIZE) halve_segment_0(
    f32* __restrict__ a, unsigned long long a_len, const u32 rounds,
    u32* __restrict__ gsync_barrier_state, gsync_status_t* __restrict__ gsync_status, const gsync_next_launch_t gsync_next_launch) {
    gsync::prepare_next_launch(gsync_next_launch);
    const u64 i = (u64)blockIdx.x * GSYNC_BLOCK_SIZE + threadIdx.x;
    if (gsync::in_bounds(i, a_len, gsync_status, 0u, 4u)) a[i] = a[i] * 0.5f;
}
extern "C" __global__ void __launch_bounds__(GSYNC_BLOCK_SIZE) halve_segment_1(
    f32* __restrict__ a, unsigned long long a_len, const u32 rounds,
    u32* __restrict__ gsync_barrier_state, gsync_status_t* __restrict__ gsync_status, const gsync_next_launch_t gsync_next_launch) {
    gsync::prepare_next_launch(gsync_next_launch);
}
"#;

    const HALVE_KERNEL: KernelSpec = KernelSpec {
        name: "halve",
        symbol: "halve",
        rust_signature: "fn halve(a: &mut [f32], rounds: u32)",
        checked_body: HALVE,
        unchecked_body: HALVE,
        bounds_checks: true,
        profile: false,
        arrays: &["a"],
        grid_syncs: 1,
        default_threads: 0,
        blocks_per_sm: 0,
        split: SplitSpec {
            checked_body: HALVE_SPLIT,
            unchecked_body: HALVE_SPLIT,
            segments: &["halve_segment_0", "halve_segment_1"],
            error: None,
            reads_device: false,
        },
        assertions: &[],
        axes: Axes::NONE,
        refused_block_sizes: &[],
    };

    #[test]
    fn an_assembled_kernel_compiles_with_every_barrier_for_sm80_and_sm90() {
        if !nvrtc_or_skip() {
            return;
        }
        for &barrier in Barrier::ALL.iter().filter(|&&barrier| barrier != Barrier::Auto) {
            for arch in [(8, 0), (9, 0)] {
                let source = HALVE_KERNEL.source(barrier, 128);
                if let Err(error) = compile(&source, HALVE_KERNEL.name, arch) {
                    panic!("{barrier} on sm_{}{}: {error}", arch.0, arch.1);
                }
            }
        }
    }

    #[test]
    fn a_profiled_kernel_compiles_with_every_device_barrier_for_sm80_and_sm90() {
        if !nvrtc_or_skip() {
            return;
        }
        let profiled = KernelSpec { profile: true, ..HALVE_KERNEL };
        for &barrier in Barrier::DEVICE {
            for arch in [(8, 0), (9, 0)] {
                let source = profiled.source(barrier, 128);
                assert!(source.contains("%%globaltimer"), "{barrier}: the recording is in the unit");
                let compiled = compile(&source, profiled.name, arch)
                    .unwrap_or_else(|error| panic!("{barrier} on sm_{}{}: {error}", arch.0, arch.1));
                assert_eq!(compiled.log, "", "{barrier} on sm_{}{}", arch.0, arch.1);
            }
        }
        let clamp = KernelSpec { checked_body: CLAMP, unchecked_body: CLAMP, grid_syncs: 0, ..profiled };
        for profile in [true, false] {
            let source = KernelSpec { profile, ..clamp }.source(Barrier::Lbs, 64);
            if let Err(error) = compile(&source, "clamp", (9, 0)) {
                panic!("profile {profile}: {error}");
            }
        }
    }

    #[test]
    fn software_barriers_compile_at_the_extreme_block_sizes() {
        if !nvrtc_or_skip() {
            return;
        }
        // One thread per block takes ULFS's strided gathering path and gives Relay a one-lane
        // first warp, 33 a partial second warp; 1024 is the largest block.
        for barrier in [Barrier::Lbs, Barrier::Lfs, Barrier::Ilbs { groups: None }, Barrier::Ulfs, Barrier::Relay] {
            for threads in [1, 33, 1024] {
                let source = HALVE_KERNEL.source(barrier, threads);
                if let Err(error) = compile(&source, HALVE_KERNEL.name, (9, 0)) {
                    panic!("{barrier} with {threads} threads: {error}");
                }
            }
        }
    }

    #[test]
    fn software_barriers_compile_without_warnings() {
        if !nvrtc_or_skip() {
            return;
        }
        for barrier in [Barrier::Lbs, Barrier::Lfs, Barrier::Ilbs { groups: None }, Barrier::Ulfs, Barrier::Relay] {
            let compiled = compile(&HALVE_KERNEL.source(barrier, 256), HALVE_KERNEL.name, (9, 0))
                .unwrap_or_else(|error| panic!("{barrier}: {error}"));
            assert_eq!(compiled.log, "", "{barrier}");
        }
    }

    #[test]
    fn a_syntax_error_returns_the_log_and_numbered_source() {
        if !nvrtc_or_skip() {
            return;
        }
        let source = "extern \"C\" __global__ void broken() {\n    int x = ;\n}\n";
        let Err(Error::Compile { kernel, log, source_with_line_numbers }) = compile(source, "broken", (8, 0)) else {
            panic!("expected a compile error");
        };
        assert_eq!(kernel, "broken");
        assert!(log.contains("broken.cu(2)"), "log names the line: {log}");
        assert!(source_with_line_numbers.contains("2 |     int x = ;"));
    }

    /// Logs as NVRTC 13.0 writes them (the header and shared-memory ones were captured from it).
    const MISSING_HEADER_LOG: &str = "/opt/cuda/include/cooperative_groups.h(55): catastrophic error: \
        cannot open source file \"cooperative_groups/details/info.h\"\n  #include \
        \"cooperative_groups/details/info.h\"\n\n1 catastrophic error detected in the compilation of \
        \"k.cu\".\nCompilation terminated.";
    const SHARED_LOG: &str = "ptxas error   : Entry function 'k' uses too much shared data (0x10000 bytes, 0xc000 max)";
    const PARAMETER_LOG: &str =
        "k.cu(1): Error: Formal parameter space overflowed (40008 bytes required, max 32764 bytes allowed) in function k";

    #[test]
    fn failures_are_classified_by_the_log() {
        assert_eq!(classify(MISSING_HEADER_LOG), Failure::MissingHeader("cooperative_groups/details/info.h".into()));
        let older = "k.cu(1): catastrophic error: could not open source file \"cuda_runtime.h\" (no directories in search list)";
        assert_eq!(classify(older), Failure::MissingHeader("cuda_runtime.h".into()));
        assert_eq!(classify(SHARED_LOG), Failure::Resources(Resource::SharedMemory, SHARED_LOG.into()));
        assert_eq!(classify(PARAMETER_LOG), Failure::Resources(Resource::Parameters, PARAMETER_LOG.into()));
        let local = "ptxas error   : Entry function 'k' uses too much local data (0x100000 bytes, 0x80000 max)";
        assert_eq!(classify(local), Failure::Resources(Resource::LocalMemory, local.into()));
        let registers = "ptxas error   : Entry function 'k' uses too many registers (300, 255 max)";
        assert_eq!(classify(registers), Failure::Resources(Resource::Registers, registers.into()));
        let syntax =
            "broken.cu(2): error: expected an expression\n\n1 error detected in the compilation of \"broken.cu\".";
        assert_eq!(classify(syntax), Failure::Code);
    }

    #[test]
    fn too_much_shared_memory_is_a_resource_error_with_advice_not_a_bug() {
        if !nvrtc_or_skip() {
            return;
        }
        let source = "extern \"C\" __global__ void big(float* out) {\n    __shared__ float tile[16384];\n    \
                      tile[threadIdx.x] = 1.0f;\n    __syncthreads();\n    out[threadIdx.x] = tile[(threadIdx.x + 1) % 16384];\n}\n";
        let error = compile(source, "big", (9, 0)).expect_err("64 KiB of static shared memory");
        let Error::KernelResources { kernel, resource, detail, .. } = &error else {
            panic!("expected KernelResources, got {error}");
        };
        assert_eq!((kernel.as_str(), *resource), ("big", Resource::SharedMemory));
        assert!(detail.contains("uses too much shared data"), "{detail}");
        let message = error.to_string();
        assert!(message.contains("48 KiB") && !message.contains("bug in gsync"), "{message}");
    }

    #[test]
    fn a_header_nvrtc_cannot_open_is_a_missing_header_not_a_bug() {
        if !nvrtc_or_skip() {
            return;
        }
        let source = "#include <gsync_no_such_header.h>\nextern \"C\" __global__ void k() {}\n";
        let error = compile(source, "k", (9, 0)).expect_err("no such header");
        let Error::CudaHeadersNotFound { header, .. } = &error else {
            panic!("expected CudaHeadersNotFound, got {error}");
        };
        assert_eq!(header, "gsync_no_such_header.h");
        assert!(error.to_string().contains("pip install nvidia-cuda-runtime"), "{error}");
    }

    #[test]
    fn reports_the_nvrtc_version() {
        if !nvrtc_or_skip() {
            return;
        }
        let (major, _) = nvrtc_version().expect("NVRTC answers");
        assert!(major >= 12, "NVRTC {major}");
    }
}
