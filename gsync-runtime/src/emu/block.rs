//! One block of an emulated launch: its threads as futures polled round-robin on one host
//! thread, the barriers between them (`sync_block`, warp shuffles) and the end of its part of
//! a grid phase (every thread at `grid_sync`, or finished).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Waker};

use crate::emu::thread::{ThreadCtx, Wait};
use crate::emu::warp::{BlockSync, WARP_SIZE};

/// One emulated thread: the kernel body's future, boxed once per launch.
pub type ThreadFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// How a block's part of a grid phase ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PhaseEnd {
    /// Every thread waits at `grid_sync()`; released, they go on next phase.
    AtGridSync,
    /// Every thread waits at `gpu_sync()`: as [`AtGridSync`](Self::AtGridSync), but the
    /// grid's blocks meet without the team.
    AtGpuSync,
    /// Every thread has finished.
    Finished,
    /// Some threads spin-wait for memory that other blocks may change: the block runs
    /// again, in the same phase, after the others had a turn.
    Spinning,
}

/// Rounds a block runs with threads that only yield (ordered accesses) before it hands its
/// worker to the other blocks: a thread that polls a flag in a loop of acquire loads waits
/// for another block as a `wait_until` does.
const YIELD_ROUNDS_PER_TURN: u32 = 64;

/// Why a block's threads can never go on.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Stuck {
    /// They wait at different barriers, or for something else: where.
    Deadlock(String),
    /// They disagree on how many times they called `barrier`, which on a GPU hangs or pairs
    /// barriers wrongly: one thread's side, and another's.
    Mismatch { barrier: &'static str, first: String, second: String },
}

/// One block's threads between polls.
pub(crate) struct BlockRun<'a> {
    /// The unfinished threads' futures, by thread index; `None` once finished.
    threads: Vec<Option<ThreadFuture<'a>>>,
    unfinished: usize,
    /// Scratch for the census of waiting threads, one entry per warp.
    warps: Vec<WarpCensus>,
}

impl<'a> BlockRun<'a> {
    /// A block of the given threads, none started yet.
    pub(crate) fn new(threads: Vec<ThreadFuture<'a>>) -> Self {
        let warps = vec![WarpCensus::default(); threads.len().div_ceil(WARP_SIZE as usize)];
        BlockRun { unfinished: threads.len(), threads: threads.into_iter().map(Some).collect(), warps }
    }

    /// Runs the threads until every unfinished one waits at `grid_sync()` or all have
    /// finished, releasing block barriers and warp exchanges as they complete. `ctxs` are the
    /// threads' contexts, by thread index, and `sync` the block's shuffle slots.
    pub(crate) fn run_phase(&mut self, ctxs: &[ThreadCtx<'_>], sync: &BlockSync) -> Result<PhaseEnd, Stuck> {
        let mut cx = Context::from_waker(Waker::noop());
        // A parked block's spinning threads test their conditions again.
        self.wake(ctxs, &[Wait::Yield, Wait::Spin]);
        let mut yield_rounds = 0;
        loop {
            self.poll_runnable(ctxs, &mut cx)?;
            if self.unfinished == 0 {
                return Ok(PhaseEnd::Finished);
            }
            let census = self.census(ctxs);
            if self.release_warps(ctxs, sync) {
                continue;
            }
            let (yielding, spinning) = (census.count(Wait::Yield), census.count(Wait::Spin));
            if yielding + spinning > 0 {
                yield_rounds += 1;
                if yielding > 0 && yield_rounds < YIELD_ROUNDS_PER_TURN {
                    // Spinning threads test their conditions again too.
                    self.wake(ctxs, &[Wait::Yield, Wait::Spin]);
                    continue;
                }
                // Parked, they still say where they wait, for a timeout's message.
                return Ok(PhaseEnd::Spinning);
            }
            let at_block = census.count(Wait::Block) == self.unfinished;
            let at_grid = [Wait::Grid, Wait::Gpu].into_iter().find(|&wait| census.count(wait) == self.unfinished);
            if at_block || at_grid.is_some() {
                // A thread that finished while the rest of its block goes on to a barrier made
                // fewer calls of it: on a GPU, barriers that pair up wrongly or a hang. One that
                // ended at a failed assertion has exited, which a block barrier lets pass, as
                // PTX's does; the grid ends at the next grid_sync() in that case.
                let wait = at_grid.unwrap_or(Wait::Block);
                if self.unfinished < self.threads.len() && !(at_block && self.only_failed_finished(ctxs)) {
                    return Err(self.finished_before(ctxs, wait));
                }
                self.release_all(ctxs);
                if at_block {
                    continue;
                }
                // Released now, they pass the barrier at their first poll of the next phase.
                return Ok(if wait == Wait::Gpu { PhaseEnd::AtGpuSync } else { PhaseEnd::AtGridSync });
            }
            return Err(Stuck::Deadlock(census.describe()));
        }
    }

    /// Polls every runnable thread once: each runs to its next await point or its end.
    fn poll_runnable(&mut self, ctxs: &[ThreadCtx<'_>], cx: &mut Context<'_>) -> Result<(), Stuck> {
        for (thread, (slot, ctx)) in self.threads.iter_mut().zip(ctxs).enumerate() {
            let Some(future) = slot else { continue };
            if ctx.waiting() != Wait::Running {
                continue;
            }
            if future.as_mut().poll(cx).is_ready() {
                *slot = None;
                self.unfinished -= 1;
            } else if ctx.waiting() == Wait::Running {
                return Err(Stuck::Deadlock(format!(
                    "thread {thread} awaited something other than sync_block(), grid_sync(), a warp \
                     shuffle or a spin-wait, which the emulator cannot wait for"
                )));
            }
        }
        Ok(())
    }

    /// Counts the unfinished threads by where they wait, per block and per warp.
    fn census(&mut self, ctxs: &[ThreadCtx<'_>]) -> Census {
        let mut census = Census::default();
        self.warps.fill(WarpCensus::default());
        for (thread, (slot, ctx)) in self.threads.iter().zip(ctxs).enumerate() {
            if slot.is_none() {
                continue;
            }
            let wait = ctx.waiting();
            census.add(wait, thread);
            let warp = &mut self.warps[thread / WARP_SIZE as usize];
            let lane = 1 << (thread % WARP_SIZE as usize);
            warp.unfinished |= lane;
            if wait == Wait::Warp {
                warp.waiting |= lane;
            }
        }
        census
    }

    /// Releases every warp whose unfinished lanes all wait at a shuffle; whether any was.
    fn release_warps(&self, ctxs: &[ThreadCtx<'_>], sync: &BlockSync) -> bool {
        let mut released = false;
        for (warp, census) in self.warps.iter().enumerate() {
            if census.waiting == 0 || census.waiting != census.unfinished {
                continue;
            }
            let first = warp * WARP_SIZE as usize;
            sync.warp(first as u32).release(census.waiting);
            for (lane, ctx) in ctxs.iter().enumerate().skip(first).take(WARP_SIZE as usize) {
                if census.waiting & (1 << (lane - first)) != 0 {
                    ctx.release();
                }
            }
            released = true;
        }
        released
    }

    /// The mismatch of a block some of whose threads finished while the rest wait at
    /// `wait`: `sync_block()`, `grid_sync()` or `gpu_sync()`.
    fn finished_before(&self, ctxs: &[ThreadCtx<'_>], wait: Wait) -> Stuck {
        let waiting = self.threads.iter().zip(ctxs).find(|(slot, _)| slot.is_some()).map(|(_, ctx)| ctx);
        let finished = self.threads.iter().zip(ctxs).find(|(slot, _)| slot.is_none()).map(|(_, ctx)| ctx);
        let (Some(waiting), Some(finished)) = (waiting, finished) else {
            return Stuck::Deadlock("its threads neither all finished nor all wait at one barrier".to_owned());
        };
        let at_block = wait == Wait::Block;
        let calls = |ctx: &ThreadCtx<'_>| if at_block { ctx.block_syncs() } else { ctx.grid_syncs() };
        let barrier = match wait {
            Wait::Block => "sync_block()",
            Wait::Gpu => "gpu_sync()",
            _ => "grid_sync()",
        };
        Stuck::Mismatch {
            barrier,
            first: format!("{} waits at its {barrier} number {}", who(waiting), calls(waiting)),
            second: format!("{} finished after {} {barrier} calls", who(finished), calls(finished)),
        }
    }

    /// Whether every finished thread ended at a failed assertion.
    fn only_failed_finished(&self, ctxs: &[ThreadCtx<'_>]) -> bool {
        self.threads.iter().zip(ctxs).all(|(slot, ctx)| slot.is_some() || ctx.has_failed())
    }

    /// Makes the unfinished threads that wait in one of `waits` runnable again.
    fn wake(&self, ctxs: &[ThreadCtx<'_>], waits: &[Wait]) {
        for (slot, ctx) in self.threads.iter().zip(ctxs) {
            if slot.is_some() && waits.contains(&ctx.waiting()) {
                ctx.release();
            }
        }
    }

    /// Releases every unfinished thread from its barrier.
    fn release_all(&self, ctxs: &[ThreadCtx<'_>]) {
        for (slot, ctx) in self.threads.iter().zip(ctxs) {
            if slot.is_some() {
                ctx.release();
            }
        }
    }
}

/// A thread, for messages: "thread 3 of block 0".
fn who(ctx: &ThreadCtx<'_>) -> String {
    format!("thread {} of block {}", ctx.thread_idx(), ctx.block_idx())
}

/// One warp's unfinished lanes and those of them waiting at a shuffle, a bit per lane.
#[derive(Clone, Copy, Debug, Default)]
struct WarpCensus {
    unfinished: u32,
    waiting: u32,
}

/// The unfinished threads of a block by where they wait: how many, and the first of each.
#[derive(Debug, Default)]
struct Census {
    /// Indexed by `Wait as usize`: (count, first thread).
    waits: [(usize, usize); 7],
}

impl Census {
    fn add(&mut self, wait: Wait, thread: usize) {
        let (count, first) = &mut self.waits[wait as usize];
        if *count == 0 {
            *first = thread;
        }
        *count += 1;
    }

    fn count(&self, wait: Wait) -> usize {
        self.waits[wait as usize].0
    }

    /// Where the threads wait, for a deadlock message.
    fn describe(&self) -> String {
        let places = [
            (Wait::Block, "sync_block()"),
            (Wait::Grid, "grid_sync()"),
            (Wait::Gpu, "gpu_sync()"),
            (Wait::Warp, "a warp shuffle"),
        ];
        let parts: Vec<String> = places
            .iter()
            .filter_map(|&(wait, place)| {
                let (count, first) = self.waits[wait as usize];
                (count > 0).then(|| format!("{count} at {place} (first: thread {first})"))
            })
            .collect();
        format!("its unfinished threads wait at different barriers: {}", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_census_describes_every_place_threads_wait() {
        let mut census = Census::default();
        for thread in 0..3 {
            census.add(Wait::Block, thread);
        }
        census.add(Wait::Grid, 7);
        assert_eq!(
            census.describe(),
            "its unfinished threads wait at different barriers: 3 at sync_block() (first: thread 0), \
             1 at grid_sync() (first: thread 7)"
        );
    }
}
