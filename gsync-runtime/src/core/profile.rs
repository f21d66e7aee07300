//! A per-phase profile of one launch ([`Launch::profile`](crate::Launch::profile)): per
//! block, when it started, arrived at and left each `grid_sync()`, and ended; the per-phase
//! figures derived from those times; and their export as a Chrome trace and as a table.
//!
//! On a GPU the kernel writes the times into a buffer of `u64` words, one region of
//! [`record_words`] words per block (`profile.cuh` writes it, [`decode`] reads it):
//!
//! | word | what |
//! |---|---|
//! | 0 | `grid_sync()` calls the block passed, recorded or not |
//! | 1 | the block's start |
//! | 2 | the block's end |
//! | 3 + 2k | when it arrived at `grid_sync()` number k (0-based) |
//! | 4 + 2k | when it left that `grid_sync()` |
//!
//! with room for `capacity` `grid_sync()` calls. The emulator keeps the same records on the
//! host ([`BlockRecorder`]).

use std::fmt;
use std::io::{self, Write};
use std::time::Duration;

use serde_json::json;

use crate::barrier::Barrier;

/// How many `grid_sync()` calls a profile records per block unless the launch says
/// ([`Launch::profile_phases`](crate::Launch::profile_phases)).
pub const DEFAULT_PROFILE_PHASES: u32 = 1024;

/// Words before a block's barrier records: calls passed, start, end.
const HEADER_WORDS: usize = 3;
const PASSED: usize = 0;
const START: usize = 1;
const END: usize = 2;

/// Phases listed by [`PhaseProfile`]'s `Display`: all of them up to this many, else the
/// slowest this many.
const LISTED_PHASES: usize = 10;

/// The `u64` words of one block's region for `capacity` recorded `grid_sync()` calls.
pub(crate) fn record_words(capacity: u32) -> usize {
    HEADER_WORDS + 2 * capacity as usize
}

/// The clock a profile's times come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProfileClock {
    /// The GPU's global timer (`%globaltimer`), in nanoseconds; its resolution is the
    /// GPU's (on some GPUs it advances in steps of about a microsecond).
    GlobalTimer,
    /// The host's monotonic clock (`std::time::Instant`), on the emulator.
    HostWallTime,
}

impl fmt::Display for ProfileClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ProfileClock::GlobalTimer => "the GPU's global timer",
            ProfileClock::HostWallTime => "host wall time",
        })
    }
}

/// One block's pass through one `grid_sync()`, in nanoseconds after the profile's origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarrierVisit {
    /// When the block arrived: its slowest thread had finished the phase.
    pub arrive: u64,
    /// When the block left: the barrier had let it go.
    pub leave: u64,
}

impl BarrierVisit {
    /// How long the block waited in the barrier.
    pub fn wait(&self) -> u64 {
        self.leave.saturating_sub(self.arrive)
    }
}

/// One block's timeline, in nanoseconds after the profile's origin (the earliest start).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockTimeline {
    /// The block's index in the grid.
    pub block: u32,
    /// When the block started.
    pub start: u64,
    /// When its last thread ended.
    pub end: u64,
    /// Its recorded `grid_sync()` calls, in order: at most the launch's capacity.
    pub visits: Vec<BarrierVisit>,
    /// The `grid_sync()` calls it passed, recorded or not.
    pub grid_syncs: u64,
}

impl BlockTimeline {
    /// When the block began phase `phase`: its start, or when it left the barrier before.
    fn phase_start(&self, phase: usize) -> u64 {
        match phase.checked_sub(1) {
            None => self.start,
            Some(before) => self.visits.get(before).map_or(self.end, |visit| visit.leave),
        }
    }

    /// When the block finished phase `phase`: its arrival at the barrier after, or its end.
    fn phase_end(&self, phase: usize) -> u64 {
        self.visits.get(phase).map_or(self.end, |visit| visit.arrive)
    }
}

/// The barrier that ends a phase, over all blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarrierFigures {
    /// From the last block's arrival to the last block's leave: what the barrier itself cost
    /// once every block was there.
    pub latency: Duration,
    /// The blocks' mean wait, from their own arrival to their own leave.
    pub mean_wait: Duration,
    /// The longest wait of a block.
    pub max_wait: Duration,
    /// When the last block arrived, in nanoseconds after the origin.
    pub last_arrival: u64,
    /// When the last block left, in nanoseconds after the origin.
    pub last_leave: u64,
}

/// One phase, over all blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhaseFigures {
    /// The phase's index: phase k ends at `grid_sync()` number k (0-based), the last one at
    /// the kernel's end.
    pub phase: u32,
    /// The phase's share of the kernel's time: from the last block's leave of the barrier
    /// before (for phase 0, the kernel's start) to the last block's arrival at the barrier
    /// after (for the last phase, the kernel's end). Spans and barrier latencies add up to
    /// the kernel's time.
    pub span: Duration,
    /// The slowest block's work in the phase: the longest time from a block's own start of
    /// the phase to its own arrival.
    pub slowest_work: Duration,
    /// The block that did it.
    pub slowest_block: u32,
    /// The barrier that ends the phase; `None` for the last phase, which the kernel's end
    /// ends.
    pub barrier: Option<BarrierFigures>,
}

/// What a profiled launch recorded: per block, when it started, arrived at and left each
/// `grid_sync()`, and ended; and per phase, the figures derived from those times.
///
/// Times are nanoseconds after the earliest block's start. Phase k runs from a block's start
/// (k = 0) or its leave of `grid_sync()` number k − 1 to its arrival at `grid_sync()` number
/// k, or its end for the last phase. A block records its arrival after a block barrier, so it
/// is that of its slowest thread. When a block passed more `grid_sync()` calls than the
/// launch's capacity ([`Launch::profile_phases`](crate::Launch::profile_phases)), the later
/// ones are not recorded: the profile is [truncated](Self::is_truncated), its figures end at
/// the last recorded barrier, and [`unrecorded`](Self::unrecorded) is the time after it.
#[derive(Clone, Debug)]
pub struct PhaseProfile {
    kernel: String,
    barrier: Barrier,
    clock: ProfileClock,
    capacity: u32,
    blocks: Vec<BlockTimeline>,
    phases: Vec<PhaseFigures>,
    truncated: bool,
    total: Duration,
    unrecorded: Duration,
}

impl PhaseProfile {
    /// The profile of `blocks`, whose times may start anywhere: they are shifted so that the
    /// earliest start is 0.
    pub(crate) fn new(
        kernel: &str,
        barrier: Barrier,
        clock: ProfileClock,
        capacity: u32,
        mut blocks: Vec<BlockTimeline>,
    ) -> Self {
        let origin = blocks.iter().map(|block| block.start).min().unwrap_or(0);
        for block in &mut blocks {
            block.start -= origin;
            block.end = block.end.saturating_sub(origin);
            for visit in &mut block.visits {
                visit.arrive = visit.arrive.saturating_sub(origin);
                visit.leave = visit.leave.saturating_sub(origin);
            }
        }
        let truncated = blocks.iter().any(|block| block.grid_syncs > u64::from(capacity));
        let (phases, unrecorded) = phase_figures(&blocks, truncated);
        let end = blocks.iter().map(|block| block.end).max().unwrap_or(0);
        PhaseProfile {
            kernel: kernel.to_owned(),
            barrier,
            clock,
            capacity,
            blocks,
            phases,
            truncated,
            total: Duration::from_nanos(end),
            unrecorded,
        }
    }

    /// The kernel's name.
    pub fn kernel(&self) -> &str {
        &self.kernel
    }

    /// The barrier that ran.
    pub fn barrier(&self) -> Barrier {
        self.barrier
    }

    /// The clock the times come from.
    pub fn clock(&self) -> ProfileClock {
        self.clock
    }

    /// The most `grid_sync()` calls recorded per block.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Every block's timeline, by block index.
    pub fn blocks(&self) -> &[BlockTimeline] {
        &self.blocks
    }

    /// The recorded phases, in order.
    pub fn phases(&self) -> &[PhaseFigures] {
        &self.phases
    }

    /// Whether a block passed more `grid_sync()` calls than were recorded.
    pub fn is_truncated(&self) -> bool {
        self.truncated
    }

    /// The most `grid_sync()` calls a block passed, recorded or not.
    pub fn grid_syncs(&self) -> u64 {
        self.blocks.iter().map(|block| block.grid_syncs).max().unwrap_or(0)
    }

    /// From the earliest block's start to the latest block's end.
    pub fn total(&self) -> Duration {
        self.total
    }

    /// When truncated, the time after the last recorded barrier (its last leave to the
    /// kernel's end); zero otherwise.
    pub fn unrecorded(&self) -> Duration {
        self.unrecorded
    }

    /// The sum of the phases' spans: the kernel's time outside barrier latencies.
    pub fn total_span(&self) -> Duration {
        self.phases.iter().map(|phase| phase.span).sum()
    }

    /// The sum of the barriers' latencies (last arrival to last leave).
    pub fn total_barrier_latency(&self) -> Duration {
        self.phases.iter().filter_map(|phase| phase.barrier).map(|barrier| barrier.latency).sum()
    }

    /// The share of the blocks' time spent waiting in barriers, averaged over blocks: 0 to 1.
    pub fn mean_wait_share(&self) -> f64 {
        let (mut waiting, mut lived) = (0u128, 0u128);
        for block in &self.blocks {
            waiting += block.visits.iter().map(|visit| u128::from(visit.wait())).sum::<u128>();
            lived += u128::from(block.end.saturating_sub(block.start));
        }
        if lived == 0 {
            0.0
        } else {
            waiting as f64 / lived as f64
        }
    }

    /// Writes the profile as a Chrome trace: JSON in the Trace Event Format, which Perfetto
    /// (ui.perfetto.dev) and `chrome://tracing` open. One track per block, with a "work"
    /// slice per phase and a "barrier" slice per `grid_sync()`; times in microseconds.
    pub fn write_chrome_trace(&self, out: impl Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        let other = json!({
            "kernel": self.kernel,
            "barrier": self.barrier.to_string(),
            "clock": self.clock.to_string(),
            "blocks": self.blocks.len(),
            "grid_syncs": self.grid_syncs(),
            "truncated": self.truncated,
        });
        write!(out, "{{\"displayTimeUnit\":\"ns\",\"otherData\":")?;
        serde_json::to_writer(&mut out, &other)?;
        writeln!(out, ",\"traceEvents\":[")?;
        let name = format!("{} ({} barrier)", self.kernel, self.barrier);
        serde_json::to_writer(&mut out, &json!({"name": "process_name", "ph": "M", "pid": 1, "args": {"name": name}}))?;
        for block in &self.blocks {
            let tid = block.block;
            let label = format!("block {tid}");
            writeln!(out, ",")?;
            serde_json::to_writer(
                &mut out,
                &json!({"name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": {"name": label}}),
            )?;
            writeln!(out, ",")?;
            serde_json::to_writer(
                &mut out,
                &json!({"name": "thread_sort_index", "ph": "M", "pid": 1, "tid": tid, "args": {"sort_index": tid}}),
            )?;
            let mut from = block.start;
            for (index, visit) in block.visits.iter().enumerate() {
                slice(&mut out, "work", tid, from, visit.arrive, json!({"phase": index}))?;
                slice(&mut out, "barrier", tid, visit.arrive, visit.leave, json!({"grid_sync": index}))?;
                from = visit.leave;
            }
            if block.grid_syncs > block.visits.len() as u64 {
                let args = json!({"grid_syncs": block.grid_syncs - block.visits.len() as u64});
                slice(&mut out, "unrecorded", tid, from, block.end, args)?;
            } else {
                slice(&mut out, "work", tid, from, block.end, json!({"phase": block.visits.len()}))?;
            }
        }
        write!(out, "\n]}}\n")?;
        out.flush()
    }

    /// Writes one line per phase, in columns: its span, its slowest block's work, and the
    /// barrier after it (latency, mean and longest wait), in microseconds.
    pub fn write_table(&self, mut out: impl Write) -> io::Result<()> {
        writeln!(out, "{}", table_header())?;
        for phase in &self.phases {
            writeln!(out, "{}", table_row(phase))?;
        }
        if self.truncated {
            writeln!(out, "(not recorded after barrier {}: {})", self.phases.len(), readable(self.unrecorded))?;
        }
        Ok(())
    }
}

/// One complete ("X") event of a Chrome trace, after a separator.
fn slice(out: &mut impl Write, name: &str, tid: u32, from: u64, to: u64, args: serde_json::Value) -> io::Result<()> {
    let event = json!({
        "name": name,
        "cat": name,
        "ph": "X",
        "pid": 1,
        "tid": tid,
        "ts": from as f64 / 1e3,
        "dur": to.saturating_sub(from) as f64 / 1e3,
        "args": args,
    });
    writeln!(out, ",")?;
    serde_json::to_writer(out, &event)?;
    Ok(())
}

/// The figures of every phase the blocks recorded completely, and the time after the last
/// recorded barrier when `truncated`.
fn phase_figures(blocks: &[BlockTimeline], truncated: bool) -> (Vec<PhaseFigures>, Duration) {
    let recorded = blocks.iter().map(|block| block.visits.len()).min().unwrap_or(0);
    let last = if truncated { recorded } else { recorded + 1 };
    let mut phases = Vec::with_capacity(last);
    // The last leave of the barrier before the phase: the kernel's start for phase 0.
    let mut last_leave = blocks.iter().map(|block| block.start).min().unwrap_or(0);
    for phase in 0..last {
        let (mut slowest_work, mut slowest_block, mut last_arrival) = (0, 0, 0);
        for block in blocks {
            let end = block.phase_end(phase);
            let work = end.saturating_sub(block.phase_start(phase));
            if work > slowest_work {
                (slowest_work, slowest_block) = (work, block.block);
            }
            last_arrival = last_arrival.max(end);
        }
        let span = last_arrival.saturating_sub(last_leave);
        let barrier = (phase < recorded).then(|| barrier_figures(blocks, phase, last_arrival));
        if let Some(barrier) = barrier {
            last_leave = barrier.last_leave;
        }
        phases.push(PhaseFigures {
            phase: u32::try_from(phase).unwrap_or(u32::MAX),
            span: Duration::from_nanos(span),
            slowest_work: Duration::from_nanos(slowest_work),
            slowest_block,
            barrier,
        });
    }
    let unrecorded = if truncated {
        let end = blocks.iter().map(|block| block.end).max().unwrap_or(0);
        Duration::from_nanos(end.saturating_sub(last_leave))
    } else {
        Duration::ZERO
    };
    (phases, unrecorded)
}

/// The figures of `grid_sync()` number `index`, which every block recorded.
fn barrier_figures(blocks: &[BlockTimeline], index: usize, last_arrival: u64) -> BarrierFigures {
    let visits = blocks.iter().map(|block| block.visits[index]);
    let last_leave = visits.clone().map(|visit| visit.leave).max().unwrap_or(last_arrival);
    let waits: u128 = visits.clone().map(|visit| u128::from(visit.wait())).sum();
    let max_wait = visits.map(|visit| visit.wait()).max().unwrap_or(0);
    let mean_wait = u64::try_from(waits / blocks.len().max(1) as u128).unwrap_or(u64::MAX);
    BarrierFigures {
        latency: Duration::from_nanos(last_leave.saturating_sub(last_arrival)),
        mean_wait: Duration::from_nanos(mean_wait),
        max_wait: Duration::from_nanos(max_wait),
        last_arrival,
        last_leave,
    }
}

/// A duration to the nanosecond, in µs below a millisecond, else in ms or s.
fn readable(duration: Duration) -> String {
    let ns = duration.as_nanos() as f64;
    if ns < 1e6 {
        format!("{:.3} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.3} ms", ns / 1e6)
    } else {
        format!("{:.3} s", ns / 1e9)
    }
}

fn table_header() -> String {
    format!(
        "{:>7} {:>12} {:>14} {:>8} {:>12} {:>12} {:>12}",
        "phase", "span µs", "slowest µs", "block", "barrier µs", "mean wait µs", "max wait µs"
    )
}

fn table_row(phase: &PhaseFigures) -> String {
    let us = |duration: Duration| format!("{:.3}", duration.as_nanos() as f64 / 1e3);
    let (latency, mean, max) = match phase.barrier {
        Some(barrier) => (us(barrier.latency), us(barrier.mean_wait), us(barrier.max_wait)),
        None => ("-".to_owned(), "-".to_owned(), "-".to_owned()),
    };
    format!(
        "{:>7} {:>12} {:>14} {:>8} {:>12} {:>12} {:>12}",
        phase.phase,
        us(phase.span),
        us(phase.slowest_work),
        phase.slowest_block,
        latency,
        mean,
        max
    )
}

/// A summary: the kernel's time split into phases and barriers, then every phase, or the
/// slowest ones when there are many.
impl fmt::Display for PhaseProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total = self.total.as_nanos().max(1) as f64;
        let share = |duration: Duration| 100.0 * duration.as_nanos() as f64 / total;
        writeln!(
            f,
            "profile of `{}` ({} barrier, {}): {} blocks, {} grid_sync() calls, {} phases recorded{}",
            self.kernel,
            self.barrier,
            self.clock,
            self.blocks.len(),
            self.grid_syncs(),
            self.phases.len(),
            if self.truncated { format!(" (truncated at {} per block)", self.capacity) } else { String::new() },
        )?;
        let (spans, barriers) = (self.total_span(), self.total_barrier_latency());
        write!(
            f,
            "kernel {} = phases {} ({:.1}%) + barriers {} ({:.1}%)",
            readable(self.total),
            readable(spans),
            share(spans),
            readable(barriers),
            share(barriers),
        )?;
        if self.truncated {
            write!(f, " + not recorded {} ({:.1}%)", readable(self.unrecorded), share(self.unrecorded))?;
        }
        writeln!(f)?;
        writeln!(f, "blocks wait in barriers {:.1}% of their time on average", 100.0 * self.mean_wait_share())?;
        let mut listed: Vec<&PhaseFigures> = self.phases.iter().collect();
        if listed.len() > LISTED_PHASES {
            listed.sort_by_key(|phase| {
                std::cmp::Reverse(phase.span + phase.barrier.map_or(Duration::ZERO, |b| b.latency))
            });
            listed.truncate(LISTED_PHASES);
            writeln!(f, "the {LISTED_PHASES} slowest phases (span + barrier):")?;
        }
        writeln!(f, "{}", table_header())?;
        for (index, phase) in listed.iter().enumerate() {
            if index + 1 == listed.len() {
                write!(f, "{}", table_row(phase))?;
            } else {
                writeln!(f, "{}", table_row(phase))?;
            }
        }
        Ok(())
    }
}

/// The records of a profiled GPU launch, `blocks` regions of [`record_words`]`(capacity)`
/// words, as timelines in the GPU's timer's nanoseconds; `None` when a block recorded no
/// start, which a kernel without the profile hooks (one not generated by `#[grid_phases]`)
/// leaves.
pub(crate) fn decode(words: &[u64], blocks: u32, capacity: u32) -> Option<Vec<BlockTimeline>> {
    let stride = record_words(capacity);
    if words.len() < stride * blocks as usize {
        return None;
    }
    words
        .chunks_exact(stride)
        .take(blocks as usize)
        .zip(0..blocks)
        .map(|(region, block)| {
            if region[START] == 0 {
                return None;
            }
            let passed = region[PASSED];
            let recorded = passed.min(u64::from(capacity)) as usize;
            let visits = region[HEADER_WORDS..]
                .chunks_exact(2)
                .take(recorded)
                .map(|pair| BarrierVisit { arrive: pair[0], leave: pair[1] })
                .collect();
            Some(BlockTimeline { block, start: region[START], end: region[END], visits, grid_syncs: passed })
        })
        .collect()
}

/// One block's records on the host, taken the way the device takes them: what the emulator
/// records for a block, with the same capacity and truncation.
#[derive(Clone, Debug)]
pub(crate) struct BlockRecorder {
    capacity: u32,
    started: Option<u64>,
    end: u64,
    visits: Vec<BarrierVisit>,
    passed: u64,
}

impl BlockRecorder {
    /// A block that has not started, which records at most `capacity` `grid_sync()` calls.
    pub(crate) fn new(capacity: u32) -> Self {
        BlockRecorder { capacity, started: None, end: 0, visits: Vec::new(), passed: 0 }
    }

    /// The block runs again at `now`: its start, or its leave of the barrier it waited in.
    pub(crate) fn resume(&mut self, now: u64) {
        if self.started.is_none() {
            self.started = Some(now);
            return;
        }
        if self.passed < u64::from(self.capacity) {
            if let Some(visit) = self.visits.last_mut() {
                visit.leave = now;
            }
        }
        self.passed += 1;
    }

    /// The block arrived at a `grid_sync()` at `now`.
    pub(crate) fn arrive(&mut self, now: u64) {
        if self.passed < u64::from(self.capacity) {
            self.visits.push(BarrierVisit { arrive: now, leave: now });
        }
    }

    /// The block's last thread ended at `now`.
    pub(crate) fn finish(&mut self, now: u64) {
        self.end = now;
    }

    /// The block's timeline, as block `block`.
    pub(crate) fn timeline(self, block: u32) -> BlockTimeline {
        let start = self.started.unwrap_or(self.end);
        BlockTimeline { block, start, end: self.end.max(start), visits: self.visits, grid_syncs: self.passed }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One block's records: (start, end, [(arrive, leave)], calls passed).
    type Records<'a> = (u64, u64, &'a [(u64, u64)], u64);

    /// Block regions as the device writes them.
    fn words(capacity: u32, blocks: &[Records<'_>]) -> Vec<u64> {
        let stride = record_words(capacity);
        let mut words = vec![0u64; stride * blocks.len()];
        for (region, (start, end, visits, passed)) in words.chunks_exact_mut(stride).zip(blocks) {
            region[PASSED] = *passed;
            region[START] = *start;
            region[END] = *end;
            for (pair, (arrive, leave)) in region[HEADER_WORDS..].chunks_exact_mut(2).zip(visits.iter()) {
                pair[0] = *arrive;
                pair[1] = *leave;
            }
        }
        words
    }

    /// Two blocks, two barriers, at times chosen so that every figure is known:
    /// block 0: start 1000, work to 1100, leaves 1150, work to 1400, leaves 1420, ends 1500;
    /// block 1: start 1010, work to 1140, leaves 1160, work to 1300, leaves 1410, ends 1600.
    fn two_blocks() -> PhaseProfile {
        let records =
            words(4, &[(1000, 1500, &[(1100, 1150), (1400, 1420)], 2), (1010, 1600, &[(1140, 1160), (1300, 1410)], 2)]);
        let blocks = decode(&records, 2, 4).expect("both blocks recorded");
        PhaseProfile::new("k", Barrier::Lbs, ProfileClock::GlobalTimer, 4, blocks)
    }

    #[test]
    fn a_block_region_has_a_header_and_two_words_per_barrier() {
        assert_eq!(record_words(0), 3);
        assert_eq!(record_words(1024), 3 + 2048);
        let records = words(2, &[(5, 90, &[(10, 20), (30, 40)], 2), (6, 80, &[(11, 21)], 7)]);
        let blocks = decode(&records, 2, 2).expect("decodes");
        assert_eq!(blocks[0].visits, [BarrierVisit { arrive: 10, leave: 20 }, BarrierVisit { arrive: 30, leave: 40 }]);
        assert_eq!((blocks[0].block, blocks[0].start, blocks[0].end, blocks[0].grid_syncs), (0, 5, 90, 2));
        // Seven calls passed with room for two: two are read, none past the region.
        assert_eq!(blocks[1].visits.len(), 2);
        assert_eq!((blocks[1].block, blocks[1].grid_syncs), (1, 7));
    }

    #[test]
    fn records_without_a_start_or_too_short_decode_to_nothing() {
        let mut records = words(1, &[(5, 90, &[(10, 20)], 1), (6, 80, &[(11, 21)], 1)]);
        assert!(decode(&records, 3, 1).is_none(), "a buffer too short for the grid");
        records[record_words(1) + START] = 0;
        assert!(decode(&records, 2, 1).is_none(), "block 1 never recorded its start");
    }

    #[test]
    fn phase_figures_follow_from_the_times() {
        let profile = two_blocks();
        assert_eq!(profile.blocks()[1].start, 10, "times start at the earliest block's start");
        assert_eq!(profile.total(), Duration::from_nanos(600));
        let phases = profile.phases();
        assert_eq!(phases.len(), 3);
        let ns = Duration::from_nanos;
        // Phase 0: block 0 works 100 ns, block 1 130 ns; the last arrival is at 140.
        assert_eq!((phases[0].span, phases[0].slowest_work, phases[0].slowest_block), (ns(140), ns(130), 1));
        let barrier = phases[0].barrier.expect("a barrier ends phase 0");
        // Waits 50 and 20; the last leave, 160, comes 20 ns after the last arrival.
        assert_eq!((barrier.latency, barrier.mean_wait, barrier.max_wait), (ns(20), ns(35), ns(50)));
        assert_eq!((barrier.last_arrival, barrier.last_leave), (140, 160));
        // Phase 1: block 0 works 1150→1400 (250), block 1 1160→1300 (140); span 160→400.
        assert_eq!((phases[1].span, phases[1].slowest_work, phases[1].slowest_block), (ns(240), ns(250), 0));
        let barrier = phases[1].barrier.expect("a barrier ends phase 1");
        assert_eq!((barrier.latency, barrier.mean_wait, barrier.max_wait), (ns(20), ns(65), ns(110)));
        // The last phase ends at the kernel's end: 420 → 600.
        assert_eq!((phases[2].span, phases[2].slowest_work, phases[2].slowest_block), (ns(180), ns(190), 1));
        assert_eq!(phases[2].barrier, None);
        assert!(!profile.is_truncated());
        assert_eq!(profile.total_span() + profile.total_barrier_latency(), profile.total());
        // Waits 50 + 20 + 20 + 110 = 200 ns of 500 + 590 ns lived.
        assert!((profile.mean_wait_share() - 200.0 / 1090.0).abs() < 1e-12);
    }

    #[test]
    fn a_truncated_profile_ends_its_figures_at_the_last_recorded_barrier() {
        // Capacity 1, three calls passed: the second and third are only counted.
        let records = words(1, &[(100, 900, &[(200, 250)], 3), (100, 1000, &[(220, 260)], 3)]);
        let blocks = decode(&records, 2, 1).expect("decodes");
        let profile = PhaseProfile::new("k", Barrier::Lbs, ProfileClock::GlobalTimer, 1, blocks);
        assert!(profile.is_truncated());
        assert_eq!(profile.grid_syncs(), 3);
        assert_eq!(profile.phases().len(), 1, "only phase 0 ends at a recorded barrier");
        assert_eq!(profile.unrecorded(), Duration::from_nanos(1000 - 260));
        assert_eq!(profile.total_span() + profile.total_barrier_latency() + profile.unrecorded(), profile.total());
        assert!(profile.to_string().contains("truncated at 1 per block"), "{profile}");
        let mut table = Vec::new();
        profile.write_table(&mut table).expect("writes to memory");
        assert!(String::from_utf8_lossy(&table).contains("not recorded after barrier 1: 0.740 µs"));
    }

    #[test]
    fn the_recorder_keeps_the_device_s_layout_and_capacity() {
        let mut recorder = BlockRecorder::new(2);
        recorder.resume(10);
        for (arrive, leave) in [(20, 30), (40, 50), (60, 70)] {
            recorder.arrive(arrive);
            recorder.resume(leave);
        }
        recorder.finish(80);
        let timeline = recorder.timeline(3);
        assert_eq!((timeline.block, timeline.start, timeline.end, timeline.grid_syncs), (3, 10, 80, 3));
        assert_eq!(timeline.visits, [BarrierVisit { arrive: 20, leave: 30 }, BarrierVisit { arrive: 40, leave: 50 }]);
        let mut none = BlockRecorder::new(0);
        none.resume(1);
        none.arrive(2);
        none.resume(3);
        none.finish(4);
        assert_eq!(none.timeline(0).visits, []);
    }

    #[test]
    fn the_chrome_trace_is_json_with_a_track_per_block() {
        let profile = two_blocks();
        let mut trace = Vec::new();
        profile.write_chrome_trace(&mut trace).expect("writes to memory");
        let trace: serde_json::Value = serde_json::from_slice(&trace).expect("valid JSON");
        let events = trace["traceEvents"].as_array().expect("an event array");
        let slices: Vec<&serde_json::Value> = events.iter().filter(|event| event["ph"] == "X").collect();
        // Per block: three work slices and two barrier slices.
        assert_eq!(slices.len(), 10);
        for event in &slices {
            assert!(event["dur"].as_f64().expect("a duration") >= 0.0, "{event}");
        }
        let names = events.iter().filter(|event| event["name"] == "thread_name").count();
        assert_eq!(names, 2);
        let barrier = slices
            .iter()
            .find(|event| event["name"] == "barrier" && event["tid"] == 1 && event["args"]["grid_sync"] == 1)
            .expect("block 1's second barrier");
        // 1300 → 1410 ns, after the origin at 1000: 0.3 µs for 0.11 µs.
        assert!((barrier["ts"].as_f64().unwrap() - 0.3).abs() < 1e-9, "{barrier}");
        assert!((barrier["dur"].as_f64().unwrap() - 0.11).abs() < 1e-9, "{barrier}");
        assert_eq!(trace["otherData"]["kernel"], "k");
    }

    #[test]
    fn the_summary_lists_few_phases_and_the_slowest_of_many() {
        let profile = two_blocks();
        let summary = profile.to_string();
        assert!(summary.contains("kernel 0.600 µs = phases 0.560 µs (93.3%) + barriers 0.040 µs (6.7%)"), "{summary}");
        assert_eq!(summary.lines().count(), 3 + 1 + 3, "{summary}");
        // Fifty phases of 10 ns and one of 1 µs: the long one heads the list.
        let visits: Vec<(u64, u64)> =
            (0..50).map(|i| 100 + 20 * i + if i >= 7 { 1000 } else { 0 }).map(|t| (t, t + 10)).collect();
        let records = words(64, &[(100, 3000, &visits, 50)]);
        let blocks = decode(&records, 1, 64).expect("decodes");
        let profile = PhaseProfile::new("many", Barrier::Relay, ProfileClock::HostWallTime, 64, blocks);
        let summary = profile.to_string();
        assert!(summary.contains("the 10 slowest phases"), "{summary}");
        let first_row = summary.lines().nth(5).expect("a first row");
        assert!(first_row.trim_start().starts_with("7 "), "{summary}");
        let mut table = Vec::new();
        profile.write_table(&mut table).expect("writes to memory");
        assert_eq!(String::from_utf8_lossy(&table).lines().count(), 1 + 51);
    }
}
