//! What a GPU is, and which backend runs it.

use std::fmt;

/// What a GPU is and what it can do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The device's name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// The CUDA ordinal.
    pub ordinal: usize,
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Compute capability as (major, minor); kernels are compiled for exactly this.
    pub compute_capability: (u32, u32),
    /// Whether the device supports cooperative launches.
    pub cooperative_launch: bool,
    /// The most threads a block may have.
    pub max_threads_per_block: u32,
    /// Shared memory available to one block, in bytes.
    pub max_shared_memory_per_block: u32,
    /// The most shared memory one block can opt into, static and dynamic together, in bytes
    /// (`CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`: 227 KiB on an H100 or H200);
    /// what a kernel's shared slices can take beyond `max_shared_memory_per_block`.
    pub max_shared_memory_per_block_optin: u32,
    /// The most blocks one grid may have (`gridDim.x`). On the emulator, which keeps every
    /// thread of a grid alive at once, the most for blocks of up to 64 threads: larger blocks
    /// allow fewer (2^20 threads in all).
    pub max_blocks_per_grid: u32,
    /// Device memory, in bytes.
    pub total_memory: u64,
    /// The newest CUDA version the installed driver supports, as (major, minor)
    /// (`cuDriverGetVersion`); `None` on the emulator.
    pub driver_cuda_version: Option<(u32, u32)>,
}

/// Where a [`Gpu`](crate::Gpu) runs kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// An NVIDIA GPU, through the CUDA driver.
    Cuda,
    /// The CPU emulator: every thread a task on the host, with GPU semantics.
    Emulator,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Cuda => "CUDA",
            Backend::Emulator => "CPU emulator",
        })
    }
}
