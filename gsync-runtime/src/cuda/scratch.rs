//! The device words every launch passes its kernel, reused from launch to launch: the status
//! word, and the barrier state with its per-launch header.
//!
//! On the success path the barrier state is cleaned only where a barrier needs it: before each
//! launch the host writes the header and zeroes the counters that only grow during a launch
//! (the barrier's `launch_words`), and flags carry the launch's sequence number, so stale
//! ones never match. The whole state is zeroed only when a launch failed (a timed-out
//! barrier leaves the abort flag set) or when the next launch uses another barrier, whose
//! words overlap.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, LaunchArgs, PushKernelArg};
use gsync_contract::TrailingParam;

use crate::barrier::{Barrier, LaunchHeader, LINE_WORDS};
use crate::core::error::Result;
use crate::core::grid::Grid;
use crate::core::status::{DeviceStatus, STATUS_WORDS};
use crate::cuda::{allocation_error, driver_error};

/// Blocks per SM that the first barrier state is sized for: the most any GPU of compute
/// capability 7.5 to 10 keeps resident.
const SIZED_BLOCKS_PER_SM: u32 = 32;

/// What the barrier state holds between launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Condition {
    /// Zeros: ready for any barrier.
    Zeroed,
    /// What a successful launch with this barrier (by name) left: ready for the same barrier.
    ReadyFor(&'static str),
    /// Anything: a launch failed or is under way.
    Unknown,
}

/// The status word and barrier state of one GPU.
pub(crate) struct LaunchScratch {
    status: CudaSlice<u32>,
    barrier_state: CudaSlice<u32>,
    /// The two slices' device addresses, which every launch passes: taken once per
    /// allocation, since asking a slice of a context that tracks events (one given to
    /// `Gpu::from_cudarc`) waits for and records its events, which graph capture refuses.
    status_address: u64,
    barrier_state_address: u64,
    /// The last launch's sequence number.
    sequence: u32,
    condition: Condition,
}

impl LaunchScratch {
    /// Zeroed words, enough for every device barrier on the grids of up to
    /// [`SIZED_BLOCKS_PER_SM`] blocks per SM of a GPU with `sm_count` SMs: the state is ready
    /// for any barrier.
    ///
    /// Sizing it once keeps the barrier words at one address for the life of the GPU. Where a
    /// hot counter lies decides how far its L2 slice is from the SMs that poll it, which moves
    /// a phase boundary by up to 0.15 µs on an H200: a state that grew, and so moved, from one
    /// barrier to the next would give each barrier a placement of its own.
    pub(crate) fn new(stream: &Arc<CudaStream>, sm_count: u32) -> Result<Self> {
        let blocks = sm_count.saturating_mul(SIZED_BLOCKS_PER_SM);
        let words = Barrier::DEVICE
            .iter()
            .map(|barrier| (barrier.descriptor().state_words)(blocks, 32))
            .fold(LINE_WORDS, usize::max);
        let (status, barrier_state) = (zeroed_words(stream, STATUS_WORDS)?, zeroed_words(stream, words)?);
        Ok(LaunchScratch {
            status_address: device_address(&status),
            barrier_state_address: device_address(&barrier_state),
            status,
            barrier_state,
            sequence: 0,
            condition: Condition::Zeroed,
        })
    }

    /// Prepares a launch with a device barrier, on the stream: zeroes the status word, makes
    /// the barrier state large enough and clean for `barrier`, writes its header (with the
    /// barrier's watchdog, the spin-waits' `spin_watchdog_ns` and the launch's `deadline_ns`) and zeroes its per-launch
    /// counters.
    pub(crate) fn prepare(
        &mut self,
        stream: &Arc<CudaStream>,
        barrier: Barrier,
        grid: Grid,
        watchdog_ns: u64,
        spin_watchdog_ns: u64,
        deadline_ns: u64,
    ) -> Result<()> {
        let name = barrier.name();
        let words = (barrier.descriptor().state_words)(grid.blocks, grid.threads).max(LINE_WORDS);
        if self.barrier_state.len() < words {
            self.barrier_state = zeroed_words(stream, words)?;
            self.barrier_state_address = device_address(&self.barrier_state);
            self.condition = Condition::Zeroed;
        }
        if !matches!(self.condition, Condition::Zeroed) && self.condition != Condition::ReadyFor(name) {
            stream.memset_zeros(&mut self.barrier_state).map_err(driver_error("zeroing the barrier state"))?;
        }
        self.condition = Condition::Unknown;
        let header = LaunchHeader {
            sequence: self.next_sequence(),
            watchdog_ns,
            groups: grid.groups,
            spin_watchdog_ns,
            deadline_ns,
        };
        self.write_header(stream, header)?;
        let per_launch = (barrier.descriptor().launch_words)(grid.blocks, grid.groups).min(words);
        if per_launch > LINE_WORDS {
            let mut counters = self.barrier_state.slice_mut(LINE_WORDS..per_launch);
            stream.memset_zeros(&mut counters).map_err(driver_error("zeroing the barrier counters"))?;
        }
        self.zero_status(stream)
    }

    /// Prepares a split run: zeroes the status word and writes a header for the segments'
    /// spin-waits (`spin_watchdog_ns`, the abort flag) and, on a PE of a team, for the
    /// crossings between them (`watchdog_ns`). Segments use no other barrier state, so what
    /// the state holds for the next fused launch does not change.
    /// Each segment's loops also stop at the launch's `deadline_ns`.
    pub(crate) fn prepare_split(
        &mut self,
        stream: &Arc<CudaStream>,
        watchdog_ns: u64,
        spin_watchdog_ns: u64,
        deadline_ns: u64,
    ) -> Result<()> {
        let header =
            LaunchHeader { sequence: self.next_sequence(), watchdog_ns, groups: 0, spin_watchdog_ns, deadline_ns };
        self.write_header(stream, header)?;
        self.zero_status(stream)
    }

    /// Writes the header line, on the stream.
    fn write_header(&mut self, stream: &Arc<CudaStream>, header: LaunchHeader) -> Result<()> {
        // From pageable memory the copy is staged before it returns, so the array may go.
        let mut line = self.barrier_state.slice_mut(..LINE_WORDS);
        stream.memcpy_htod(&header.to_words()[..], &mut line).map_err(driver_error("writing the barrier header"))
    }

    /// Records how a launch with `barrier` ended. After an error the barrier state is zeroed
    /// at once; if even that fails, the next launch tries again.
    pub(crate) fn settle(&mut self, stream: &Arc<CudaStream>, barrier: Barrier, succeeded: bool) {
        self.condition = if succeeded {
            Condition::ReadyFor(barrier.name())
        } else if stream.memset_zeros(&mut self.barrier_state).is_ok() {
            Condition::Zeroed
        } else {
            Condition::Unknown
        };
    }

    /// Waits for the stream and reads the status word.
    pub(crate) fn read_status(&self, stream: &Arc<CudaStream>) -> Result<DeviceStatus> {
        let mut words = [0u32; STATUS_WORDS];
        let read = driver_error("reading the status word");
        stream.memcpy_dtoh(&self.status, &mut words).and_then(|()| stream.synchronize()).map_err(read)?;
        Ok(DeviceStatus::from_words(&words))
    }

    /// Appends the trailing parameters of every generated kernel, in the contract's order.
    pub(crate) fn push_trailing_args<'a>(&'a self, builder: &mut LaunchArgs<'a>) {
        for param in gsync_contract::TRAILING_PARAMS {
            match param {
                TrailingParam::BarrierState => builder.arg(&self.barrier_state_address),
                TrailingParam::Status => builder.arg(&self.status_address),
            };
        }
    }

    fn next_sequence(&mut self) -> u32 {
        self.sequence = sequence_after(self.sequence);
        self.sequence
    }

    fn zero_status(&mut self, stream: &Arc<CudaStream>) -> Result<()> {
        stream.memset_zeros(&mut self.status).map_err(driver_error("zeroing the status word"))
    }
}

/// The device address of `slice`'s first element.
fn device_address(slice: &CudaSlice<u32>) -> u64 {
    let (address, _record) = slice.device_ptr(slice.stream());
    address
}

/// The sequence number after `sequence`: never 0, so that zeroed slots match no launch.
fn sequence_after(sequence: u32) -> u32 {
    sequence.wrapping_add(1).max(1)
}

fn zeroed_words(stream: &Arc<CudaStream>, words: usize) -> Result<CudaSlice<u32>> {
    stream.alloc_zeros::<u32>(words).map_err(allocation_error(words * size_of::<u32>()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_numbers_count_up_and_skip_zero_when_they_wrap() {
        assert_eq!(sequence_after(0), 1);
        assert_eq!(sequence_after(41), 42);
        assert_eq!(sequence_after(u32::MAX), 1);
    }
}
