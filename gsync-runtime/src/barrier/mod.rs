//! Grid barriers: how `grid_sync()` is implemented on the device.
//!
//! A barrier is data, not a branch in code generation: each one is a [`BarrierDescriptor`]
//! holding its CUDA fragment (one `.cuh` file next to this module, with its correctness
//! argument) and the facts the launcher needs. Adding a barrier means adding a variant, a
//! fragment and a descriptor; nothing else changes.

use std::fmt;

/// Which grid barrier a kernel's `grid_sync()` calls use.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Barrier {
    /// CUDA's cooperative groups `grid.sync()`, with a cooperative launch.
    #[default]
    Cooperative,
}

impl Barrier {
    /// Every barrier this runtime implements.
    pub const ALL: &'static [Barrier] = &[Barrier::Cooperative];

    /// What the runtime needs to know to compile and launch with this barrier.
    pub fn descriptor(&self) -> &'static BarrierDescriptor {
        match self {
            Barrier::Cooperative => &COOPERATIVE,
        }
    }

    /// The barrier's short name, as used in messages and generated source.
    pub fn name(&self) -> &'static str {
        self.descriptor().name
    }
}

impl fmt::Display for Barrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How the kernel must be launched for its barrier to be correct.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LaunchMode {
    /// `cuLaunchCooperativeKernel`: the driver guarantees that all blocks are co-resident.
    Cooperative,
    /// `cuLaunchKernel`: the runtime's co-residency check is the only guarantee.
    Ordinary,
}

/// Everything the runtime knows about one barrier.
#[derive(Debug)]
pub struct BarrierDescriptor {
    /// Short name, e.g. `"cooperative"`.
    pub name: &'static str,
    /// How kernels using this barrier are launched.
    pub launch_mode: LaunchMode,
    /// CUDA text defining `gsync_grid_sync(unsigned int*, gsync_status_t*)`.
    pub cuda_fragment: &'static str,
    /// Device words of barrier state needed for a grid of `blocks` x `threads`.
    pub state_words: fn(blocks: u32, threads: u32) -> usize,
    /// The algorithm's own limit on blocks for a block size; `None` when unlimited.
    pub max_blocks: fn(threads: u32) -> Option<u32>,
    /// Whether the fragment includes CUDA toolkit headers.
    pub needs_cuda_headers: bool,
}

static COOPERATIVE: BarrierDescriptor = BarrierDescriptor {
    name: "cooperative",
    launch_mode: LaunchMode::Cooperative,
    cuda_fragment: include_str!("cooperative.cuh"),
    state_words: |_, _| 0,
    max_blocks: |_| None,
    needs_cuda_headers: true,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fragment_defines_the_grid_sync_entry_point() {
        for barrier in Barrier::ALL {
            let fragment = barrier.descriptor().cuda_fragment;
            assert!(
                fragment.contains(
                    "void gsync_grid_sync(unsigned int* gsync_barrier_state, \
                     gsync_status_t* gsync_status)"
                ),
                "barrier {barrier} lacks gsync_grid_sync"
            );
        }
    }

    #[test]
    fn cooperative_is_the_default_and_needs_a_cooperative_launch() {
        let descriptor = Barrier::default().descriptor();
        assert_eq!(descriptor.name, "cooperative");
        assert_eq!(descriptor.launch_mode, LaunchMode::Cooperative);
        assert!(descriptor.cuda_fragment.contains("#include <cooperative_groups.h>"));
        assert_eq!((descriptor.max_blocks)(1024), None);
    }
}
