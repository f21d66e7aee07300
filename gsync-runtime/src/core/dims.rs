//! Multi-dimensional launch shapes: a block's or grid's extent per axis, and what a kernel
//! reads of it. `shape_check` keeps a launch's shapes within CUDA's limits and the kernel's
//! meaning.

use std::fmt;

use gsync_contract::MAX_BLOCK_SIZE;

/// The most threads a block may have along x, y and z on every CUDA GPU.
pub const MAX_BLOCK_DIM: Dim3 = Dim3::new(MAX_BLOCK_SIZE, MAX_BLOCK_SIZE, 64);

/// The most blocks a grid may have along x, y and z on every CUDA GPU.
pub const MAX_GRID_DIM: Dim3 = Dim3::new(i32::MAX as u32, 65535, 65535);

/// The extent of a block (threads) or a grid (blocks) along x, y and z, as CUDA's `dim3`.
///
/// ```
/// use gsync_runtime::Dim3;
/// assert_eq!(Dim3::from(256), Dim3::new(256, 1, 1));
/// assert_eq!(Dim3::from((32, 8)), Dim3::new(32, 8, 1));
/// assert_eq!(Dim3::from((8, 8, 4)).count(), 256);
/// assert_eq!(Dim3::new(32, 8, 1).to_string(), "32 × 8 × 1");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// Extent along x, the fastest-varying axis of the linear index.
    pub x: u32,
    /// Extent along y.
    pub y: u32,
    /// Extent along z.
    pub z: u32,
}

impl Dim3 {
    /// `x × y × z`.
    pub const fn new(x: u32, y: u32, z: u32) -> Dim3 {
        Dim3 { x, y, z }
    }

    /// A one-dimensional extent: `n × 1 × 1`.
    pub const fn linear(n: u32) -> Dim3 {
        Dim3::new(n, 1, 1)
    }

    /// Threads or blocks in all: `x · y · z` (64 bits wide, so that it never overflows).
    pub const fn count(self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }

    /// Whether y and z are 1.
    pub const fn is_linear(self) -> bool {
        self.y == 1 && self.z == 1
    }

    /// `(x, y, z)`, as the driver takes it.
    pub const fn tuple(self) -> (u32, u32, u32) {
        (self.x, self.y, self.z)
    }
}

impl From<u32> for Dim3 {
    fn from(x: u32) -> Dim3 {
        Dim3::linear(x)
    }
}

impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Dim3 {
        Dim3::new(x, y, 1)
    }
}

impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Dim3 {
        Dim3::new(x, y, z)
    }
}

impl fmt::Display for Dim3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} × {} × {}", self.x, self.y, self.z)
    }
}

/// What a kernel reads of its shape, and the block sizes it refuses: the macro records them
/// in [`KernelSpec::axes`](crate::KernelSpec::axes) and
/// [`KernelSpec::refused_block_sizes`](crate::KernelSpec::refused_block_sizes); both are facts
/// of the contract between the macro and the runtime, defined in `gsync-contract`.
pub use gsync_contract::{Axes, RefusedBlockSizes};
