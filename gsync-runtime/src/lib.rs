//! The runtime of gsync: it turns a kernel that `#[grid_phases]` generated into a running
//! launch, with a grid barrier of the caller's choice at every `grid_sync()`.
//!
//! Compiling needs NVRTC but no GPU, so generated CUDA can be checked anywhere:
//!
//! ```
//! let source = r#"extern "C" __global__ void twice(float* x) { x[threadIdx.x] *= 2.0f; }"#;
//! match gsync_runtime::compile(source, "twice", (9, 0)) {
//!     Ok(compiled) => assert!(!compiled.cubin.is_empty()),
//!     // Without NVRTC the error says how to install it.
//!     Err(error) => eprintln!("{error}"),
//! }
//! ```
//!
//! On a GPU, the code `#[grid_phases]` generates does the equivalent of the following. It
//! names the runtime through the hidden module `__private` alone, which re-exports what the
//! public root leaves out (the argument list, the kernel description's parts, the emulator's
//! thread):
//!
//! ```no_run
//! # fn main() -> gsync_runtime::Result<()> {
//! use gsync_runtime::__private::{Axes, KernelArgs, SplitSpec};
//! use gsync_runtime::{Barrier, Gpu, KernelSpec, Launch};
//! # static SMOOTH: KernelSpec = KernelSpec {
//! #     name: "smooth", symbol: "smooth", rust_signature: "fn smooth(a: &mut [f32], rounds: u32)",
//! #     checked_body: "", unchecked_body: "", bounds_checks: true, profile: false, arrays: &["a"],
//! #     grid_syncs: 1, default_threads: 0, blocks_per_sm: 0, split: SplitSpec::NONE, assertions: &[], axes: Axes::NONE,
//! #     refused_block_sizes: &[],
//! # };
//! let gpu = Gpu::cuda(0)?;
//! let mut a = gpu.upload(&[1.0f32; 1024])?;
//! let mut args = KernelArgs::new();
//! args.slice_mut(&mut a);
//! args.scalar(10u32);
//! // SAFETY: the arguments match `smooth`'s parameters.
//! let launch = Launch::new().barrier(Barrier::Ulfs);
//! let report = unsafe { gpu.launch_kernel(&SMOOTH, &launch, args) }?;
//! println!("{} blocks of {} threads in {:?}", report.blocks, report.threads, report.gpu_time);
//! let a = gpu.download(&a)?;
//! # Ok(()) }
//! ```
//!
//! Without a GPU, [`Gpu::new`] falls back to the CPU emulator, and the generated code runs the
//! kernel body, compiled as async Rust with one future per thread, the way [`Gpu::emulate`]
//! does:
//!
//! ```
//! # fn main() -> gsync_runtime::Result<()> {
//! use gsync_runtime::__private::{Axes, EmuSlice, SplitSpec, ThreadCtx};
//! use gsync_runtime::{Gpu, KernelSpec, Launch};
//! # static DOUBLE: KernelSpec = KernelSpec {
//! #     name: "double", symbol: "double", rust_signature: "fn double(a: &mut [u32])",
//! #     checked_body: "", unchecked_body: "", bounds_checks: true, profile: false, arrays: &["a"],
//! #     grid_syncs: 1, default_threads: 0, blocks_per_sm: 0, split: SplitSpec::NONE, assertions: &[], axes: Axes::NONE,
//! #     refused_block_sizes: &[],
//! # };
//! let gpu = Gpu::emulator();
//! let a = gpu.upload(&[1u32, 2, 3])?;
//! // Each block's memory: the launch's buffers and the block's shared arrays.
//! struct Memory<'g> { a: &'g EmuSlice<u32> }
//! let a_view = a.emu()?;
//! gpu.emulate(&DOUBLE, &Launch::new().blocks(2).threads(32), || Memory { a: a_view },
//!     |ctx: &ThreadCtx<'_>, memory: &Memory<'_>| Box::pin(async move {
//!         let i = u64::from(ctx.global_id());
//!         let value = if i < 3 { memory.a.load(i, ctx, 0, 1) } else { 0 };
//!         ctx.grid_sync().await; // every thread has read before any writes
//!         if i < 3 { memory.a.store(2 - i, 2 * value, ctx, 0, 2) }
//!     }))?;
//! assert_eq!(gpu.download(&a)?, [6, 4, 2]);
//! # Ok(()) }
//! ```
//!
//! CUDA is bound through [cudarc](https://crates.io/crates/cudarc) 0.19, with its
//! `dynamic-loading` feature: the driver and NVRTC are loaded when first needed, so building
//! and documenting the crate need no CUDA toolkit. Rust 1.88 or newer.
//!
//! The crate is layered; each layer imports only those below it:
//!
//! 1. `barrier`: the grid barriers as data, each a CUDA fragment with its descriptor;
//! 2. `core`: what every backend shares, with no backend in it: device facts, element types
//!    and argument slots, the kernel description and its CUDA source, [`Launch`] and
//!    [`LaunchReport`], a launch's [`PhaseProfile`], the launch plan (one launch resolved once,
//!    behind the `Device` trait each backend implements) and the tuner of its
//!    [`LaunchConfig`], the status word, [`Error`];
//! 3. the backends: `cuda` (the only importer of the CUDA bindings, cudarc 0.19: context, memory, fused and split
//!    launches, occupancy, NVRTC discovery, compilation and its disk cache) and `emu` (the
//!    CPU emulator and the DSL's host arithmetic);
//! 4. [`Gpu`], [`DeviceBuffer`] and `SplitRun`: the only code that picks a backend.
//!
//! Follow one kernel in this order: [`KernelSpec`] (what the macro emits, and its CUDA
//! source), [`Barrier`] (the `grid_sync()` implementations), [`compile`] and its disk cache,
//! [`Gpu`] (device, buffers), [`Launch`] (what a launch asks for), then the launch:
//! [`Gpu::launch_kernel`] (the plan: grid and co-residency checks; then the per-launch barrier
//! header, the watchdog's verdict) or, for [`Barrier::MultiLaunch`], [`Gpu::begin_split`] and a
//! `SplitRun`. Generated code enters through one hidden method, `Gpu::run`, which picks
//! the form. CUDA libraries are found by [`toolkit`]. On the emulator: `ThreadCtx` (a
//! thread and its await points), `EmuSlice` (memory), then [`Gpu::emulate`] (blocks and the
//! grid on host threads); a split kernel runs through the same `SplitRun`, each segment's
//! body an `EmuSegmentFn`. Those, and everything else generated code names, are in the
//! hidden module `__private`; the facts the macro and the runtime must agree on ([`KernelSpec`]'s
//! axes and refused block sizes, the half precision marker, the trailing C parameters, the
//! block-size bound) are defined once, in the `gsync-contract` crate both depend on.

mod barrier;
mod buffer;
mod core;
mod cuda;
mod emu;
mod gpu;
mod graph;
mod interop;
mod pending;
mod split;
mod team;

/// What the code `#[grid_phases]` generates names, and nothing else reaches it by: every
/// type, function and constant it uses, re-exported. Not a public API: its contents change
/// with the macro, which spells the path (`::gsync::__private`) in one place.
#[doc(hidden)]
pub mod __private {
    pub use crate::private::*;
}
mod private;

#[cfg(test)]
mod contract_tests;
#[cfg(test)]
mod test_support;

pub use crate::core::{
    Backend, BarrierFigures, BarrierVisit, BlockTimeline, ConfigChoice, DeviceInfo, Dim3, Error, ErrorKind, KernelSpec,
    Launch, LaunchConfig, LaunchReport, PhaseFigures, PhaseProfile, ProfileClock, Resource, Result, SizeClass,
    SourceError, DEFAULT_DEADLINE, DEFAULT_PROFILE_PHASES, DEFAULT_THREADS, DEFAULT_WATCHDOG, MAX_BLOCK_DIM,
    MAX_GRID_DIM, TUNE_VAR, TUNING_BUDGET,
};
pub use barrier::{AutoChoice, AutoSource, AutoTable, Barrier, BarrierDescriptor, LaunchMode, ParseBarrierError};
pub use buffer::{DeviceBuffer, DeviceScalar};
pub use cuda::compile::{compile, nvrtc_version, Compiled, Usage};
pub use cuda::discover::{toolkit, Toolkit};
/// The CUDA bindings the runtime is built on, cudarc 0.19: the types of [`Gpu::from_cudarc`],
/// [`Gpu::adopt_cudarc`] and [`Gpu::release_cudarc`], as their own crate, so that a caller's
/// cudarc is this one.
pub use cudarc;
pub use gpu::Gpu;
pub use graph::{Capture, Graph};
/// Half precision, IEEE binary16 and bfloat16, from the `half` crate: element types of device
/// buffers and kernels (see docs/dsl.md, "Half precision").
pub use half::{bf16, f16};
pub use pending::Pending;
pub use team::Team;
