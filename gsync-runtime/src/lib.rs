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
//! On a GPU, the code `#[grid_phases]` generates does the equivalent of:
//!
//! ```no_run
//! # fn main() -> gsync_runtime::Result<()> {
//! use gsync_runtime::{Barrier, Gpu, KernelArgs, KernelSpec, Launch, SplitSpec};
//! # static SMOOTH: KernelSpec = KernelSpec {
//! #     name: "smooth", symbol: "smooth", rust_signature: "fn smooth(a: &mut [f32], rounds: u32)",
//! #     checked_body: "", unchecked_body: "", bounds_checks: true, arrays: &["a"],
//! #     grid_syncs: 1, default_threads: 0, split: SplitSpec::NONE,
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
//! kernel body, compiled as async Rust with one future per thread, through [`Gpu::emulate`]:
//!
//! ```
//! # fn main() -> gsync_runtime::Result<()> {
//! use gsync_runtime::{EmuSlice, Gpu, KernelSpec, Launch, SplitSpec, ThreadCtx};
//! # static DOUBLE: KernelSpec = KernelSpec {
//! #     name: "double", symbol: "double", rust_signature: "fn double(a: &mut [u32])",
//! #     checked_body: "", unchecked_body: "", bounds_checks: true, arrays: &["a"],
//! #     grid_syncs: 1, default_threads: 0, split: SplitSpec::NONE,
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
//! Follow one kernel through the modules in this order: [`KernelSpec`] (what the macro emits,
//! and its CUDA source), [`Barrier`] (the `grid_sync()` implementations, each a CUDA fragment
//! with its memory-order argument), [`compile`] and its disk cache, [`Gpu`] (device, buffers,
//! loaded kernels), [`Launch`] (the configuration), then the launch: [`Gpu::launch_kernel`]
//! (the grid and co-residency checks, the per-launch barrier header, the watchdog's verdict)
//! or, for [`Barrier::MultiLaunch`], [`Gpu::begin_segments`] and a [`SegmentRun`]. CUDA
//! libraries are found by [`toolkit`]. On the emulator: [`ThreadCtx`] (a thread and its await
//! points), [`EmuSlice`] (memory), then [`Gpu::emulate`] (blocks and the grid on host threads);
//! a split kernel runs through the same [`SegmentRun`], each segment's body an [`EmuSegmentFn`].

mod barrier;
mod buffer;
mod cache;
mod compile;
mod cuda_gpu;
mod discover;
mod emu;
mod error;
mod fused;
mod gpu;
mod health;
mod kernel;
mod launch;
mod plan;
mod scratch;
mod segments;
mod status;

#[cfg(test)]
mod test_support;

pub use barrier::{Barrier, BarrierDescriptor, LaunchMode, ParseBarrierError};
pub use buffer::{DeviceBuffer, DeviceScalar, KernelScalar};
pub use compile::{compile, nvrtc_version, Compiled};
pub use discover::{toolkit, Toolkit};
pub use emu::{EmuScalar, EmuSegment, EmuSegmentFn, EmuSlice, Shuffle, ShuffleScalar, ThreadCtx};
pub use error::{Error, Resource, Result};
pub use gpu::{Backend, DeviceInfo, Gpu};
pub use kernel::{KernelArgs, KernelSpec, SplitSpec, DEFAULT_THREADS};
pub use launch::{Launch, LaunchReport, DEFAULT_WATCHDOG};
pub use segments::SegmentRun;
