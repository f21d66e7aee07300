//! The record buffer of a profiled launch ([`Launch::profile`](crate::Launch::profile)):
//! allocated zeroed for each launch, passed as the fused kernel's last two parameters (the
//! buffer and its capacity), and read back into a [`PhaseProfile`].

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, LaunchArgs, PushKernelArg};

use crate::barrier::Barrier;
use crate::core::error::{Error, Result};
use crate::core::grid::Grid;
use crate::core::kernel::KernelSpec;
use crate::core::profile::{decode, record_words, PhaseProfile, ProfileClock};
use crate::cuda::{allocation_error, driver_error};

/// One launch's profile records on the device.
pub(crate) struct ProfileBuffer {
    records: CudaSlice<u64>,
    /// `grid_sync()` calls recorded per block; passed to the kernel by reference.
    capacity: u32,
    blocks: u32,
}

impl ProfileBuffer {
    /// Zeroed records for `grid`'s blocks, with room for `capacity` `grid_sync()` calls each.
    pub(crate) fn new(stream: &Arc<CudaStream>, grid: Grid, capacity: u32) -> Result<Self> {
        let words = record_words(capacity).checked_mul(grid.blocks as usize);
        let Some(words) = words.filter(|words| words.checked_mul(size_of::<u64>()).is_some()) else {
            return Err(Error::OutOfMemory { bytes: usize::MAX });
        };
        let records = stream.alloc_zeros::<u64>(words).map_err(allocation_error(words * size_of::<u64>()))?;
        Ok(ProfileBuffer { records, capacity, blocks: grid.blocks })
    }

    /// Appends the kernel's two profile parameters, after the scratch words.
    pub(crate) fn push_args<'a>(&'a self, builder: &mut LaunchArgs<'a>) {
        builder.arg(&self.records);
        builder.arg(&self.capacity);
    }

    /// Reads the records of a launch that has finished; `None` when the kernel recorded
    /// nothing (it has no profile hooks).
    pub(crate) fn read(
        &self,
        stream: &Arc<CudaStream>,
        kernel: &KernelSpec,
        barrier: Barrier,
    ) -> Result<Option<PhaseProfile>> {
        let mut words = vec![0u64; self.records.len()];
        let read = driver_error("reading the profile records");
        stream.memcpy_dtoh(&self.records, &mut words).and_then(|()| stream.synchronize()).map_err(read)?;
        let Some(blocks) = decode(&words, self.blocks, self.capacity) else {
            return Ok(None);
        };
        Ok(Some(PhaseProfile::new(kernel.name, barrier, ProfileClock::GlobalTimer, self.capacity, blocks)))
    }
}
