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
//! The language is described in `docs/dsl.md`. The kernel body is never compiled as host
//! Rust: its builtins (`grid_sync()`, `global_id()`, `shfl(v, lane)`, …) are documented in
//! [`dsl`], as items that host code cannot call, and `use gsync::prelude::*` brings their
//! names into scope.
//!
//! The code `#[grid_phases]` generates names gsync through one hidden module,
//! `gsync::__private`; the public items here are what a user calls.

// Lets the crate's own modules use `#[grid_phases]`, whose expansion names `::gsync`.
extern crate self as gsync;

pub use gsync_macros::{device, grid_phases, kernels};
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
    pub use crate::{Backend, Barrier, DeviceBuffer, Error, Gpu, Launch, LaunchReport};
    pub use crate::{Float, Int, Num};
}
