//! The emulator as the launch plan sees it (`core::plan::Device`): every grid within its block
//! limit runs at once, by default [`BLOCKS_PER_CORE`] blocks per host core, and nothing is tuned.

use crate::core::device::DeviceInfo;
use crate::core::dynamic_shared::{check_dynamic_shared, SharedLayout};
use crate::core::error::Result;
use crate::core::grid::Residency;
use crate::core::plan::{Device, KernelVariant};
use crate::emu::{max_grid_blocks, Emulator, MAX_GRID_BLOCKS, MAX_GRID_THREADS};

/// Blocks per host core in an emulated grid when the launch does not say.
pub(crate) const BLOCKS_PER_CORE: u32 = 4;

impl Device for Emulator {
    fn info(&self) -> &DeviceInfo {
        Emulator::info(self)
    }

    /// The default grid, after refusing, as a GPU does, shared slices beyond the opt-in
    /// maximum beside the kernel's static shared arrays.
    fn residency(&self, variant: &KernelVariant, shared: &SharedLayout) -> Result<Residency> {
        check_dynamic_shared(&variant.build, self.info(), variant.threads, shared.static_bytes, shared)?;
        Ok(Residency { blocks_per_sm: BLOCKS_PER_CORE, sm_count: Emulator::info(self).sm_count })
    }

    fn runs_every_grid(&self) -> bool {
        true
    }

    fn block_limit(&self, threads: u32) -> u32 {
        max_grid_blocks(threads)
    }

    fn block_limit_reason(&self) -> (String, String) {
        let why = format!(
            "it keeps every thread of a grid alive from start to end: at most {MAX_GRID_THREADS} threads and \
             {MAX_GRID_BLOCKS} blocks"
        );
        ("the CPU emulator".to_owned(), why)
    }
}
