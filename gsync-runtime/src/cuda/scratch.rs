//! The device words every launch passes its kernel, reused from launch to launch: the status
//! word, and the barrier state with its per-launch header. A GPU keeps a pool of them, one per
//! launch in flight ([`ScratchPool`]), so that launches queued together share no word.
//!
//! On the success path the barrier state is cleaned only where a barrier needs it: before each
//! launch the host writes the header and zeroes the counters that only grow during a launch
//! (the barrier's `launch_words`), and flags carry the launch's sequence number, so stale
//! ones never match. The whole state is zeroed only when a launch failed (a timed-out
//! barrier leaves the abort flag set) or when the next launch uses another barrier, whose
//! words overlap.

use std::ffi::c_void;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex, PoisonError};

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{result as driver, CudaEvent, CudaSlice, CudaStream, DevicePtr, LaunchArgs, PushKernelArg};
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
    /// Owns the status words, which launches reach through `status_address`.
    _status: CudaSlice<u32>,
    barrier_state: CudaSlice<u32>,
    /// The two slices' device addresses, which every launch passes: taken once per
    /// allocation, since asking a slice of a context that tracks events (one given to
    /// `Gpu::from_cudarc`) waits for and records its events, which graph capture refuses.
    status_address: u64,
    barrier_state_address: u64,
    /// The last launch's sequence number.
    sequence: u32,
    condition: Condition,
    /// Page-locked host memory that the status words are copied into, queued right after the
    /// launch, so that a launch in flight is read without waiting for later work on the stream.
    status_copy: PinnedWords<STATUS_WORDS>,
    /// Page-locked memory the header line is copied from.
    header_copy: PinnedWords<LINE_WORDS>,
    /// The events that time each launch, made once.
    timing: (CudaEvent, CudaEvent),
    /// Recorded after the status words' copy, so that waiting for a launch waits for it
    /// alone, not for the launches queued after it.
    copied: CudaEvent,
    /// The stream that allocates the words: the launch stream's, or, for a stream being
    /// captured into a graph (which must not allocate), the stream of the GPU it came from.
    alloc_stream: Arc<CudaStream>,
}

/// `N` words of page-locked host memory, freed on drop: a copy from or into them is queued
/// without staging, and returns at once.
struct PinnedWords<const N: usize> {
    words: *mut [u32; N],
}

// SAFETY: the words are plain host memory, owned by this value; the driver reads or writes them
// only through copies that its owner queued and waits for before it touches them again.
unsafe impl<const N: usize> Send for PinnedWords<N> {}

impl<const N: usize> PinnedWords<N> {
    fn zeroed() -> Result<Self> {
        // SAFETY: a fresh allocation of the words, which the driver page-locks.
        let words = unsafe { driver::malloc_host(size_of::<[u32; N]>(), 0) }
            .map_err(driver_error("allocating page-locked memory for the launch words"))?
            .cast::<[u32; N]>();
        // SAFETY: `words` is valid for a write of the array, before any read.
        unsafe { words.write([0; N]) };
        Ok(PinnedWords { words })
    }

    fn as_array(&self) -> &[u32; N] {
        // SAFETY: initialised when allocated; no copy into the words is in flight while they
        // are borrowed (their owner waits for the stream first).
        unsafe { &*self.words }
    }

    fn as_mut_array(&mut self) -> &mut [u32; N] {
        // SAFETY: as above, and `&mut self` is the only borrow.
        unsafe { &mut *self.words }
    }
}

impl<const N: usize> Drop for PinnedWords<N> {
    fn drop(&mut self) {
        // SAFETY: allocated by `malloc_host`; its owner waited for every copy into it.
        let _ = unsafe { driver::free_host(self.words.cast::<c_void>()) };
    }
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
        let scratch = LaunchScratch::allocate(stream, sm_count)?;
        stream.synchronize().map_err(driver_error("allocating the launch words"))?;
        Ok(scratch)
    }

    fn allocate(stream: &Arc<CudaStream>, sm_count: u32) -> Result<Self> {
        let blocks = sm_count.saturating_mul(SIZED_BLOCKS_PER_SM);
        let words = Barrier::DEVICE
            .iter()
            .map(|barrier| (barrier.descriptor().state_words)(blocks, 32))
            .fold(LINE_WORDS, usize::max);
        let (status, barrier_state) = (zeroed_words(stream, STATUS_WORDS)?, zeroed_words(stream, words)?);
        Ok(LaunchScratch {
            status_address: device_address(&status),
            barrier_state_address: device_address(&barrier_state),
            _status: status,
            barrier_state,
            sequence: 0,
            condition: Condition::Zeroed,
            status_copy: PinnedWords::zeroed()?,
            header_copy: PinnedWords::zeroed()?,
            timing: (timing_event(stream)?, timing_event(stream)?),
            copied: stream
                .context()
                .new_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))
                .map_err(driver_error("creating an event"))?,
            alloc_stream: stream.clone(),
        })
    }

    /// Prepares a launch with a device barrier, on the stream: zeroes the status word, makes
    /// the barrier state large enough and clean for `barrier`, writes its header (with the
    /// barrier's watchdog, the spin-waits' `spin_watchdog_ns` and the launch's `deadline_ns`) and zeroes its per-launch
    /// counters.
    /// A launch captured into a graph (`captured`) zeroes the whole state every time it is
    /// replayed, since each replay writes the same header.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn prepare(
        &mut self,
        stream: &Arc<CudaStream>,
        barrier: Barrier,
        grid: Grid,
        watchdog_ns: u64,
        spin_watchdog_ns: u64,
        deadline_ns: u64,
        captured: bool,
    ) -> Result<()> {
        let name = barrier.name();
        let words = (barrier.descriptor().state_words)(grid.blocks, grid.threads).max(LINE_WORDS);
        if self.barrier_state.len() < words {
            self.barrier_state = zeroed_words(&self.alloc_stream, words)?;
            self.alloc_stream.synchronize().map_err(driver_error("allocating the barrier state"))?;
            self.barrier_state_address = device_address(&self.barrier_state);
            self.condition = Condition::Zeroed;
        }
        let stale = !matches!(self.condition, Condition::Zeroed) && self.condition != Condition::ReadyFor(name);
        if captured || stale {
            zero_words(stream, self.barrier_state_address, self.barrier_state.len())
                .map_err(driver_error("zeroing the barrier state"))?;
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
            let counters = self.barrier_state_address + (LINE_WORDS * size_of::<u32>()) as u64;
            zero_words(stream, counters, per_launch - LINE_WORDS)
                .map_err(driver_error("zeroing the barrier counters"))?;
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

    /// Writes the header line, on the stream, from page-locked memory: the copy is queued and
    /// the words are not touched again before the launch has been waited for.
    fn write_header(&mut self, stream: &Arc<CudaStream>, header: LaunchHeader) -> Result<()> {
        *self.header_copy.as_mut_array() = header.to_words();
        // SAFETY: the barrier state holds at least a line; the page-locked words outlive the
        // copy, since this scratch is reused only after its launch was waited for.
        unsafe {
            driver::memcpy_htod_async(self.barrier_state_address, &self.header_copy.as_array()[..], stream.cu_stream())
        }
        .map_err(driver_error("writing the barrier header"))
    }

    /// The status words that the last [`queue_status_copy`](Self::queue_status_copy) copied,
    /// decoded, for a caller that has waited for the stream.
    pub(crate) fn status_copy(&self) -> DeviceStatus {
        DeviceStatus::from_words(self.status_copy.as_array())
    }

    /// The events that time a launch with this scratch, recorded around it.
    pub(crate) fn timing(&self) -> &(CudaEvent, CudaEvent) {
        &self.timing
    }

    /// Records how a launch with `barrier` ended. After an error the barrier state is zeroed
    /// at once; if even that fails, the next launch tries again.
    pub(crate) fn settle(&mut self, stream: &Arc<CudaStream>, barrier: Barrier, succeeded: bool) {
        self.condition = if succeeded {
            Condition::ReadyFor(barrier.name())
        } else if zero_words(stream, self.barrier_state_address, self.barrier_state.len()).is_ok() {
            Condition::Zeroed
        } else {
            Condition::Unknown
        };
    }

    /// Waits for the stream and reads the status word.
    pub(crate) fn read_status(&mut self, stream: &Arc<CudaStream>) -> Result<DeviceStatus> {
        self.queue_status_copy(stream)?;
        self.read_status_copy()
    }

    /// Queues the copy of the status words to the host, behind the work queued so far, and
    /// the event that [`read_status_copy`](Self::read_status_copy) waits for.
    pub(crate) fn queue_status_copy(&mut self, stream: &Arc<CudaStream>) -> Result<()> {
        self.queue_captured_status_copy(stream)?;
        self.copied.record(stream).map_err(driver_error("reading the status word"))
    }

    /// Waits for the copy that [`queue_status_copy`](Self::queue_status_copy) queued, then
    /// decodes the status words.
    pub(crate) fn read_status_copy(&self) -> Result<DeviceStatus> {
        self.copied.synchronize().map_err(driver_error("reading the status word"))?;
        Ok(self.status_copy())
    }

    /// Queues the copy of the status words alone, for a launch recorded into a graph, whose
    /// replay is waited for before the words are read.
    pub(crate) fn queue_captured_status_copy(&mut self, stream: &Arc<CudaStream>) -> Result<()> {
        let words = &mut self.status_copy.as_mut_array()[..];
        // SAFETY: the copy lands in page-locked words this scratch owns, which are read only
        // once the copy has been waited for.
        unsafe { driver::memcpy_dtoh_async(words, self.status_address, stream.cu_stream()) }
            .map_err(driver_error("reading the status word"))
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
        zero_words(stream, self.status_address, STATUS_WORDS).map_err(driver_error("zeroing the status word"))
    }
}

/// The scratch of every launch of one stream: one is taken for each launch and comes back when
/// the launch has been waited for, so that launches in flight together never share one. A
/// launch after the last one finished gets the same scratch back, whose barrier words then
/// keep their address (see [`LaunchScratch::new`]).
pub(crate) struct ScratchPool {
    idle: Mutex<Vec<LaunchScratch>>,
    sm_count: u32,
    /// The stream that allocates new scratches (see `LaunchScratch::alloc_stream`).
    alloc_stream: Arc<CudaStream>,
}

impl ScratchPool {
    /// A pool holding one scratch, made now on `alloc_stream`, which makes every later one.
    pub(crate) fn new(alloc_stream: &Arc<CudaStream>, sm_count: u32) -> Result<Self> {
        let first = LaunchScratch::new(alloc_stream, sm_count)?;
        Ok(ScratchPool { idle: Mutex::new(vec![first]), sm_count, alloc_stream: alloc_stream.clone() })
    }

    /// A scratch for one launch: the one last given back, or a new one.
    pub(crate) fn take(&self) -> Result<TakenScratch<'_>> {
        let stream = &self.alloc_stream;
        // The vector is valid after any panic: scratches are pushed and popped whole.
        let idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner).pop();
        let scratch = match idle {
            Some(scratch) => scratch,
            None => LaunchScratch::new(stream, self.sm_count)?,
        };
        // Boxed, so that a split run holding it stays small.
        Ok(TakenScratch { scratch: Some(Box::new(scratch)), pool: self })
    }
}

/// A scratch taken from a [`ScratchPool`], given back when dropped.
pub(crate) struct TakenScratch<'p> {
    scratch: Option<Box<LaunchScratch>>,
    pool: &'p ScratchPool,
}

impl Deref for TakenScratch<'_> {
    type Target = LaunchScratch;

    fn deref(&self) -> &LaunchScratch {
        self.scratch.as_ref().expect("present until dropped")
    }
}

impl DerefMut for TakenScratch<'_> {
    fn deref_mut(&mut self) -> &mut LaunchScratch {
        self.scratch.as_mut().expect("present until dropped")
    }
}

impl Drop for TakenScratch<'_> {
    fn drop(&mut self) {
        if let Some(scratch) = self.scratch.take() {
            self.pool.idle.lock().unwrap_or_else(PoisonError::into_inner).push(*scratch);
        }
    }
}

/// Zeroes `words` words at `address`, on `stream`, through the driver: cudarc's memset of a
/// slice would wait for and record the slice's events in a context that tracks them (one
/// given to `Gpu::from_cudarc`), which a stream under capture refuses.
fn zero_words(stream: &CudaStream, address: u64, words: usize) -> std::result::Result<(), cudarc::driver::DriverError> {
    // SAFETY: `address` holds at least `words` words of this scratch, on the stream's context.
    unsafe { driver::memset_d8_async(address, 0, words * size_of::<u32>(), stream.cu_stream()) }
}

/// An event that records time, for [`LaunchScratch::timing`].
fn timing_event(stream: &Arc<CudaStream>) -> Result<CudaEvent> {
    stream.context().new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(driver_error("creating a timing event"))
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
