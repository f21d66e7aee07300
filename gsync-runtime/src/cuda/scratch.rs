//! The device words every launch passes its kernel, reused from launch to launch: the barrier
//! state, whose header line holds the launch's settings and its status words. A GPU keeps a
//! pool of them, one per launch in flight ([`ScratchPool`]), so that launches queued together
//! share no word.
//!
//! A scratch holds two barrier states, which its fused launches use in turn: each launch
//! writes, at its start, the other state's header line and zeroed counters
//! (`gsync_next_launch`), so that the next launch with the same barrier and settings is queued
//! without a copy. A launch that differs, or follows a failed one, has its state written by the
//! host: the header line with one copy, and the counters that only grow during a launch (the
//! barrier's `launch_words`) zeroed; flags carry the launch's sequence number, so stale ones
//! never match. A state is zeroed whole only when a launch failed (a timed-out barrier leaves
//! the abort flag set), when the next launch uses another barrier, whose words overlap, when
//! nothing is known of it, and for every replay of a launch captured into a graph.
//!
//! A launch's status words lie in its state's header line, written with it.

use std::ffi::c_void;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex, PoisonError};

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    result as driver, CudaEvent, CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchArgs, PushKernelArg,
};
use gsync_contract::TrailingParam;

use crate::barrier::{Barrier, LaunchHeader, LINE_WORDS, STATUS_WORD};
use crate::core::error::Result;
use crate::core::grid::Grid;
use crate::core::status::{DeviceStatus, STATUS_WORDS};
use crate::cuda::{allocation_error, driver_error};

/// Blocks per SM that the first barrier state is sized for: the most any GPU of compute
/// capability 7.5 to 10 keeps resident.
const SIZED_BLOCKS_PER_SM: u32 = 32;

/// What a barrier state holds between launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Condition {
    /// Zeros: ready for any barrier.
    Zeroed,
    /// What a successful launch with this barrier (by name) left: ready for the same barrier
    /// once its header and counters are written.
    ReadyFor(&'static str),
    /// Ready for the launch described, whose header and counters the launch before it wrote.
    Prepared(Prepared),
    /// Anything: a launch failed or is under way.
    Unknown,
}

impl Condition {
    /// Whether a launch with `barrier` may start from this state once its header and counters
    /// are written.
    fn ready_for(self, barrier: &str) -> bool {
        match self {
            Condition::Zeroed => true,
            Condition::ReadyFor(ready) => ready == barrier,
            Condition::Prepared(prepared) => prepared.barrier == barrier,
            Condition::Unknown => false,
        }
    }
}

/// A launch's barrier state as it starts: its barrier, its header, and the words written
/// for it (the header line, then zeros).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Prepared {
    barrier: &'static str,
    header: LaunchHeader,
    words: usize,
}

/// How a fused launch uses its scratch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Chaining {
    /// The launch writes the next one's state at its start.
    PrepareNext,
    /// The host writes every launch's state: a launch on a PE of a team.
    HostWrites,
    /// Recorded into a graph: every replay zeroes and writes the whole state.
    Captured,
}

/// `gsync_next_launch_t` (see the prelude), passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct NextLaunch {
    state: u64,
    words: u32,
    line: [u32; LINE_WORDS],
}

// SAFETY: plain words laid out as the prelude's `gsync_next_launch_t`: a pointer, a count and
// the line, 144 bytes with the tail padding both languages add.
unsafe impl DeviceRepr for NextLaunch {}

impl NextLaunch {
    /// Nothing to prepare.
    const NONE: NextLaunch = NextLaunch { state: 0, words: 0, line: [0; LINE_WORDS] };
}

/// One of a scratch's two barrier states.
struct BarrierState {
    words: CudaSlice<u32>,
    /// The device address, which every launch passes: taken once per allocation, since
    /// asking a slice of a context that tracks events (one given to `Gpu::from_cudarc`) waits
    /// for and records its events, which graph capture refuses.
    address: u64,
    condition: Condition,
}

impl BarrierState {
    fn zeroed(stream: &Arc<CudaStream>, words: usize) -> Result<Self> {
        let words = zeroed_words(stream, words)?;
        Ok(BarrierState { address: device_address(&words), words, condition: Condition::Zeroed })
    }

    fn status_address(&self) -> u64 {
        self.address + (STATUS_WORD * size_of::<u32>()) as u64
    }
}

/// The launch under way with a scratch: the state it uses and what it prepares in the other.
#[derive(Clone, Copy, Debug, Default)]
struct Launched {
    state: usize,
    prepared: Option<Prepared>,
}

/// The barrier states and status words of one launch at a time.
pub(crate) struct LaunchScratch {
    states: [BarrierState; 2],
    /// The state the next launch uses.
    current: usize,
    launched: Launched,
    /// What the kernel is passed, as the trailing parameters: the launch's state, its status
    /// words, and what it prepares for the next launch.
    state_address: u64,
    status_address: u64,
    next: NextLaunch,
    /// The last launch's sequence number.
    sequence: u32,
    /// Page-locked host memory that the status words are copied into.
    status_copy: PinnedWords<STATUS_WORDS>,
    /// Page-locked memory the header line is copied from.
    header_copy: PinnedWords<LINE_WORDS>,
    /// The events that time each launch, made once.
    timing: (CudaEvent, CudaEvent),
    /// Recorded after a queued copy of the status words, so that waiting for it waits for
    /// the copy alone, not for the launches queued after it.
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
    /// [`SIZED_BLOCKS_PER_SM`] blocks per SM of a GPU with `sm_count` SMs: the states are
    /// ready for any barrier.
    ///
    /// Sizing them once keeps the barrier words at two addresses for the life of the GPU.
    /// Where a hot counter lies decides how far its L2 slice is from the SMs that poll it,
    /// which moves a phase boundary by up to 0.15 µs on an H200: a state that grew, and so
    /// moved, from one barrier to the next would give each barrier a placement of its own.
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
        let states = [BarrierState::zeroed(stream, words)?, BarrierState::zeroed(stream, words)?];
        Ok(LaunchScratch {
            state_address: states[0].address,
            status_address: states[0].status_address(),
            states,
            current: 0,
            launched: Launched::default(),
            next: NextLaunch::NONE,
            sequence: 0,
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

    /// Prepares a launch with a device barrier, on the stream: the state it uses large enough
    /// and clean for `barrier`, with its header (the barrier's watchdog, the spin-waits'
    /// `spin_watchdog_ns` and the launch's `deadline_ns`), its status words zeroed and its
    /// per-launch counters; nothing to write when the launch before prepared it. A launch
    /// that `chaining` lets prepares the other state for the next launch like it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn prepare(
        &mut self,
        stream: &Arc<CudaStream>,
        barrier: Barrier,
        grid: Grid,
        watchdog_ns: u64,
        spin_watchdog_ns: u64,
        deadline_ns: u64,
        chaining: Chaining,
    ) -> Result<()> {
        let name = barrier.name();
        let words = (barrier.descriptor().state_words)(grid.blocks, grid.threads).max(LINE_WORDS);
        self.reserve(stream, words)?;
        let per_launch = (barrier.descriptor().launch_words)(grid.blocks, grid.groups).clamp(LINE_WORDS, words);
        let header = LaunchHeader {
            sequence: self.next_sequence(),
            watchdog_ns,
            groups: grid.groups,
            spin_watchdog_ns,
            deadline_ns,
        };
        let used = self.current;
        let wanted = Prepared { barrier: name, header, words: per_launch };
        let captured = chaining == Chaining::Captured;
        let condition = self.states[used].condition;
        if captured || condition != Condition::Prepared(wanted) {
            let address = self.states[used].address;
            if captured || !condition.ready_for(name) {
                zero_words(stream, address, self.states[used].words.len())
                    .map_err(driver_error("zeroing the barrier state"))?;
            }
            self.write_line(stream, address, header)?;
            if per_launch > LINE_WORDS {
                let counters = address + (LINE_WORDS * size_of::<u32>()) as u64;
                zero_words(stream, counters, per_launch - LINE_WORDS)
                    .map_err(driver_error("zeroing the barrier counters"))?;
            }
        }
        self.states[used].condition = Condition::Unknown;
        let other = 1 - used;
        let next = (chaining == Chaining::PrepareNext && self.states[other].condition.ready_for(name)).then(|| {
            let header = LaunchHeader { sequence: sequence_after(header.sequence), ..header };
            Prepared { barrier: name, header, words: per_launch }
        });
        self.next = match next {
            Some(next) => {
                self.states[other].condition = Condition::Unknown;
                self.current = other;
                NextLaunch {
                    state: self.states[other].address,
                    words: u32::try_from(next.words).unwrap_or(u32::MAX),
                    line: next.header.to_words(),
                }
            }
            None => NextLaunch::NONE,
        };
        self.launched = Launched { state: used, prepared: next };
        self.state_address = self.states[used].address;
        self.status_address = self.states[used].status_address();
        Ok(())
    }

    /// Prepares a split run: writes a header for the segments' spin-waits
    /// (`spin_watchdog_ns`, the abort flag) and, on a PE of a team, for the crossings between
    /// them (`watchdog_ns`), with the status words zeroed. Segments use no other barrier
    /// state, so what the state holds for the next fused launch does not change, but for its
    /// header. Each segment's loops also stop at the launch's `deadline_ns`.
    pub(crate) fn prepare_split(
        &mut self,
        stream: &Arc<CudaStream>,
        watchdog_ns: u64,
        spin_watchdog_ns: u64,
        deadline_ns: u64,
    ) -> Result<()> {
        let header =
            LaunchHeader { sequence: self.next_sequence(), watchdog_ns, groups: 0, spin_watchdog_ns, deadline_ns };
        let state = &mut self.states[self.current];
        if let Condition::Prepared(prepared) = state.condition {
            state.condition = Condition::ReadyFor(prepared.barrier);
        }
        let address = state.address;
        self.state_address = address;
        self.status_address = state.status_address();
        self.next = NextLaunch::NONE;
        self.write_line(stream, address, header)
    }

    /// Grows both states to at least `words`, zeroed, once the launch stream is done with the
    /// old ones (a zeroing after a failed launch may be queued there, and the old words are
    /// freed on the allocating stream).
    fn reserve(&mut self, stream: &Arc<CudaStream>, words: usize) -> Result<()> {
        if self.states[0].words.len() >= words {
            return Ok(());
        }
        stream.synchronize().map_err(driver_error("allocating the barrier state"))?;
        self.states =
            [BarrierState::zeroed(&self.alloc_stream, words)?, BarrierState::zeroed(&self.alloc_stream, words)?];
        self.alloc_stream.synchronize().map_err(driver_error("allocating the barrier state"))
    }

    /// Writes the header line at `address`, on the stream, from page-locked memory: the copy
    /// is queued and the words are not touched again before the launch has been waited for.
    fn write_line(&mut self, stream: &Arc<CudaStream>, address: u64, header: LaunchHeader) -> Result<()> {
        *self.header_copy.as_mut_array() = header.to_words();
        // SAFETY: the barrier state holds at least a line; the page-locked words outlive the
        // copy, since this scratch is reused only after its launch was waited for.
        unsafe { driver::memcpy_htod_async(address, &self.header_copy.as_array()[..], stream.cu_stream()) }
            .map_err(driver_error("writing the barrier header"))
    }

    /// The status words that the last [`queue_status_copy`](Self::queue_status_copy) copied,
    /// decoded, for a caller that has waited for the stream.
    pub(crate) fn status_copy(&self) -> DeviceStatus {
        DeviceStatus::from_words(self.status_copy.as_array())
    }

    /// The status words of the launch prepared last, read back at once, for a caller that has
    /// waited for the launch (a copy on the legacy stream: gsync's streams do not wait for it,
    /// nor it for them; a blocking stream given to `Gpu::from_cudarc` makes it wait for that
    /// stream's work).
    pub(crate) fn read_status_now(&self) -> Result<DeviceStatus> {
        // SAFETY: the launch that wrote the status words is over; the copy has landed when
        // the call returns.
        copied_status(|words| unsafe { driver::memcpy_dtoh_sync(words, self.status_address) })
    }

    /// The events that time a launch with this scratch, recorded around it.
    pub(crate) fn timing(&self) -> &(CudaEvent, CudaEvent) {
        &self.timing
    }

    /// Records how the fused launch prepared last ended, with `barrier`. After an error its
    /// state is zeroed at once; if even that fails, the next launch tries again.
    pub(crate) fn settle(&mut self, stream: &Arc<CudaStream>, barrier: Barrier, succeeded: bool) {
        let Launched { state: used, prepared } = std::mem::take(&mut self.launched);
        let other = 1 - used;
        if succeeded {
            self.states[used].condition = Condition::ReadyFor(barrier.name());
            if let Some(prepared) = prepared {
                self.states[other].condition = Condition::Prepared(prepared);
            }
            return;
        }
        let state = &mut self.states[used];
        state.condition = if zero_words(stream, state.address, state.words.len()).is_ok() {
            Condition::Zeroed
        } else {
            Condition::Unknown
        };
        // The kernel may have written the other state's header and counters, nothing else.
        if let Some(prepared) = prepared {
            self.states[other].condition = Condition::ReadyFor(prepared.barrier);
        }
    }

    /// Waits for the stream and reads the status word.
    pub(crate) fn read_status(&mut self, stream: &Arc<CudaStream>) -> Result<DeviceStatus> {
        self.queue_status_copy(stream)?;
        self.read_status_copy()
    }

    /// Copies the status words to the host behind the work queued on the stream so far, and
    /// returns them once it has landed: a copy into pageable memory, which the driver makes
    /// before it returns, at less cost than a page-locked copy and an event to wait for.
    pub(crate) fn read_status_behind(&self, stream: &Arc<CudaStream>) -> Result<DeviceStatus> {
        // SAFETY: the status words hold `STATUS_WORDS` words; the copy into pageable memory
        // has completed when the call returns.
        copied_status(|words| unsafe { driver::memcpy_dtoh_async(words, self.status_address, stream.cu_stream()) })
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
                TrailingParam::BarrierState => builder.arg(&self.state_address),
                TrailingParam::Status => builder.arg(&self.status_address),
                TrailingParam::NextLaunch => builder.arg(&self.next),
            };
        }
    }

    fn next_sequence(&mut self) -> u32 {
        self.sequence = sequence_after(self.sequence);
        self.sequence
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

/// The status words that `copy` brings back into host memory, decoded.
fn copied_status(
    copy: impl FnOnce(&mut [u32]) -> std::result::Result<(), cudarc::driver::DriverError>,
) -> Result<DeviceStatus> {
    let mut words = [0u32; STATUS_WORDS];
    copy(&mut words[..]).map_err(driver_error("reading the status word"))?;
    Ok(DeviceStatus::from_words(&words))
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
    fn the_next_launch_is_laid_out_as_the_prelude_declares_it() {
        assert_eq!(size_of::<NextLaunch>(), 144, "a pointer, a count, a line, and tail padding");
        assert_eq!(std::mem::offset_of!(NextLaunch, words), 8);
        assert_eq!(std::mem::offset_of!(NextLaunch, line), 12);
        let prelude = include_str!("../core/prelude.cuh");
        assert!(
            prelude.contains("struct gsync_next_launch_t {\n    u32* state;\n    u32 words;\n    u32 line[32];\n};")
        );
        assert_eq!(LINE_WORDS, 32);
    }

    #[test]
    fn a_state_is_ready_for_a_barrier_that_left_it_or_prepared_it() {
        let header = LaunchHeader::default();
        let prepared = Condition::Prepared(Prepared { barrier: "lbs", header, words: 64 });
        assert!(prepared.ready_for("lbs") && !prepared.ready_for("ulfs"));
        assert!(Condition::Zeroed.ready_for("ulfs"));
        assert!(Condition::ReadyFor("lfs").ready_for("lfs") && !Condition::ReadyFor("lfs").ready_for("lbs"));
        assert!(!Condition::Unknown.ready_for("lbs"));
    }

    #[test]
    fn sequence_numbers_count_up_and_skip_zero_when_they_wrap() {
        assert_eq!(sequence_after(0), 1);
        assert_eq!(sequence_after(41), 42);
        assert_eq!(sequence_after(u32::MAX), 1);
    }
}
