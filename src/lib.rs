//! # gsync
//!
//! Write a multi-phase GPU algorithm as one Rust function, separate its
//! phases with `grid_sync()`, and run it as ONE fused CUDA kernel whose
//! phases are separated by a grid-wide barrier.
//!
//! ```no_run
//! use gsync::prelude::*;
//!
//! /// `rounds` steps of a 3-point smoothing, ping-ponging between `a` and `b`.
//! #[grid_phases]
//! fn smooth(a: &mut [f32], b: &mut [f32], rounds: u32) {
//!     let n = a.len() as u32;
//!     for r in 0..rounds {
//!         for i in grid_stride(1..n - 1) {
//!             if r % 2 == 0 {
//!                 b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;
//!             } else {
//!                 a[i] = (b[i - 1] + b[i] + b[i + 1]) / 3.0;
//!             }
//!         }
//!         grid_sync(); // every block sees the whole round before the next one starts
//!     }
//! }
//!
//! # fn main() -> gsync::Result<()> {
//! let input: Vec<f32> = (0..4096).map(|i| (i % 7) as f32).collect();
//! let gpu = Gpu::new(0)?;
//! let (mut a, mut b) = (gpu.upload(&input)?, gpu.zeros::<f32>(input.len())?);
//! smooth::launch(&gpu, &mut a, &mut b, 100)?;
//! smooth::launch_with(&gpu, &Launch::new().blocks(60).threads(32), &mut a, &mut b, 100)?;
//! println!("{}", smooth::cuda_source());
//! # Ok(())
//! # }
//! ```
//!
//! Without a GPU, [`Gpu::new`] runs the same kernel on the CPU emulator, and
//! [`Gpu::emulator`] asks for it outright: every example in these docs that runs, runs there.
//!
//! The language is described in [docs/dsl.md] (every construct, builtin, type rule and static
//! check, and what each becomes in CUDA). The kernel body is never compiled as host
//! Rust: its builtins (`grid_sync()`, `global_id()`, `shfl(v, lane)`, …) are documented in
//! [`dsl`], as items that host code cannot call, and `use gsync::prelude::*` brings their
//! names into scope. [`kernels`](mod@kernels) holds ready-made kernels: sorts, scans,
//! alignment, the heat equation and conjugate gradients, on one GPU or a [`Team`].
//!
//! The code `#[grid_phases]` generates names gsync through one hidden module,
//! `gsync::__private`; the public items here are what a user calls.
//!
//! # Requirements
//!
//! Rust 1.88 or newer. CUDA is bound through [cudarc] 0.19, which loads the NVIDIA driver
//! (`libcuda.so.1`) and NVRTC when a program first needs them: building (and documenting)
//! gsync needs neither a CUDA toolkit nor a GPU. To run kernels on a GPU, the driver and
//! NVRTC 12 or 13 with the CUDA headers, from a toolkit or NVIDIA's pip wheels; where they
//! are looked for is said under [`toolkit`]. Linux only.
//!
//! gsync works beside other libraries built on cudarc 0.19, the version it re-exports as
//! `gsync::cudarc`: [`Gpu::from_cudarc`] runs on their context and stream,
//! [`Gpu::adopt_cudarc`] and [`Gpu::release_cudarc`] move a `CudaSlice` into a
//! [`DeviceBuffer`] and back without a copy, and the `unsafe` [`Gpu::borrow_device_ptr`] wraps
//! any library's device memory by address. On the emulator, [`Gpu::adopt_vec`] and
//! [`Gpu::release_vec`] do the same with host vectors.
//!
//! [docs/dsl.md]: https://github.com/gsync-rs/gsync/blob/main/docs/dsl.md
//! [cudarc]: https://crates.io/crates/cudarc

// Lets the crate's own modules use `#[grid_phases]`, whose expansion names `::gsync`.
extern crate self as gsync;

/// Turns a function into a fused multi-phase kernel: one CUDA kernel whose phases, separated
/// by `grid_sync()`, are separated by a grid-wide barrier, with the same kernel for the CPU
/// emulator and, where it can be split, one launch per phase.
///
/// The function is replaced by a module of the same name: `launch(&gpu, args…)` (the
/// configuration tuned on the first launch), `launch_with(&gpu, &launch, args…)`,
/// `launch_config`, `max_coresident_blocks` and `cuda_source()`. A `&[T]` parameter takes a
/// `&DeviceBuffer<T>`, a `&mut [T]` a `&mut DeviceBuffer<T>`, a scalar its value. The language
/// is described in [docs/dsl.md](https://github.com/gsync-rs/gsync/blob/main/docs/dsl.md).
///
/// ```
/// use gsync::prelude::*;
///
/// /// `out` is `a + b` in reverse: each thread reads what others wrote before the barrier.
/// #[grid_phases]
/// fn add_reversed(a: &mut [u32], b: &[u32], out: &mut [u32]) {
///     let n = a.len();
///     for i in grid_stride(0..n) {
///         a[i] = a[i] + b[i];
///     }
///     grid_sync();
///     for i in grid_stride(0..n) {
///         out[i] = a[n - 1 - i];
///     }
/// }
///
/// # fn main() -> gsync::Result<()> {
/// let gpu = Gpu::emulator(); // or Gpu::new(0)
/// let mut a = gpu.upload(&[1u32, 2, 3, 4, 5])?;
/// let b = gpu.upload(&[10u32; 5])?;
/// let mut out = gpu.zeros::<u32>(5)?;
/// add_reversed::launch(&gpu, &mut a, &b, &mut out)?;
/// assert_eq!(gpu.download(&out)?, [15, 14, 13, 12, 11]);
/// let launch = Launch::new().blocks(2).threads(32).barrier(Barrier::MultiLaunch);
/// add_reversed::launch_with(&gpu, &launch, &mut a, &b, &mut out)?;
/// assert_eq!(gpu.download(&out)?, [25, 24, 23, 22, 21]);
/// assert!(add_reversed::cuda_source().contains("__global__"));
/// # Ok(())
/// # }
/// ```
pub use gsync_macros::grid_phases;

/// A module of kernels and the `#[device]` functions and `const`s they share; kernels and
/// device functions may be generic over the element type ([`Num`], [`Int`], [`Float`]), and a
/// generic kernel's module launches it for the element type of its arguments.
///
/// ```
/// # fn main() -> gsync::Result<()> {
/// #[gsync::kernels]
/// mod reductions {
///     const SCALE: f32 = 2.0;
///
///     #[device]
///     fn strided_sum<T: Num>(a: &[T]) -> T {
///         let mut sum = T::ZERO;
///         for i in grid_stride(0..a.len()) {
///             sum = sum + a[i];
///         }
///         sum
///     }
///
///     #[grid_phases]
///     pub fn total<T: Float>(a: &[T], out: &mut [T]) {
///         let mine = strided_sum(a);
///         out.atomic_add(0, mine);
///     }
///
///     #[grid_phases]
///     pub fn scaled(a: &mut [f32]) {
///         for i in grid_stride(0..a.len()) {
///             a[i] = a[i] * SCALE;
///         }
///     }
/// }
///
/// use gsync::Gpu;
/// let gpu = Gpu::emulator(); // or Gpu::new(0)
/// let mut a = gpu.upload(&[1.0f32, 2.0, 3.0, 4.0])?;
/// reductions::scaled::launch(&gpu, &mut a)?;
/// let mut sum = gpu.zeros::<f32>(1)?;
/// reductions::total::launch(&gpu, &a, &mut sum)?; // f64 buffers would run it for f64
/// assert_eq!(gpu.download(&sum)?, [20.0]);
/// # Ok(())
/// # }
/// ```
pub use gsync_macros::kernels;

/// A function of a [`kernels`](macro@kernels) module that its kernels call (the example is
/// there): inlined at each call, and checked through the call for barriers that some threads
/// could skip.
pub use gsync_macros::device;
pub use gsync_runtime::*;

/// What generated code names, and nothing else reaches it by; not a public API.
#[doc(hidden)]
pub use gsync_runtime::__private;

pub mod dsl;
mod elements;
pub mod kernels;

pub use elements::{Float, Int, Num};

/// The block size as a constant, in kernels: threads per block (`x · y · z` of a 2-D or 3-D
/// block) as a `usize`, usable in `const` items and as the length of shared and local arrays
/// (`shared_array::<f32, { 2 * BLOCK_SIZE }>()`). Each block size is compiled on its own, so
/// on the GPU it is a compile-time constant; see `docs/dsl.md`.
///
/// Host code has no block size: this placeholder only brings the name into scope, and using
/// it as a number outside a kernel does not compile. A `const` of a `#[gsync::kernels]`
/// module computed from it exists in the module's kernels only.
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug)]
pub struct BLOCK_SIZE;

/// Everything a kernel author needs: the attribute, the runtime's types and the names of the
/// kernel language's builtins.
pub mod prelude {
    pub use crate::dsl::*;
    pub use crate::BLOCK_SIZE;
    pub use crate::{bf16, f16};
    pub use crate::{device, grid_phases};
    pub use crate::{Backend, Barrier, Capture, DeviceBuffer, Error, Gpu, Graph, Launch, LaunchReport, Pending};
    pub use crate::{Float, Int, Num};
}
