//! Inclusive prefix sums of `u32` keys (wrapping), two ways: a single pass with decoupled
//! look-back, where each tile learns the sum of all before it from its predecessors' published
//! states (`store_relaxed`, `load_relaxed`, `wait_until`), and three phases separated by
//! `grid_sync()` (tile sums, a scan of the tile sums, the tiles again with their prefixes).
//!
//! Both cut the keys into tiles of [`TILE`] keys. A block loads a tile into shared memory with
//! coalesced reads, each thread sums a run of consecutive keys, the runs' sums are scanned
//! across the block with warp shuffles, and the runs are scanned again from their prefixes
//! and stored with coalesced writes. The block size must be a multiple of 32 that divides
//! [`TILE`] (256 by default).

use crate::prelude::*;
use crate::{Gpu, Launch, LaunchReport, Result};

/// Tiles of `n` keys: the length of the three-phase scan's `tile_sums`.
pub fn tiles(n: usize) -> usize {
    n.div_ceil(TILE).max(1)
}

/// The length of the single-pass scan's `states` for `n` keys: [`STATE_STRIDE`] words per tile.
pub fn state_words(n: usize) -> usize {
    tiles(n) * STATE_STRIDE
}

/// The scans' kernels and the tile steps they share.
#[gsync::kernels]
mod kernels {
    /// Keys per tile.
    pub const TILE: usize = 8192;

    /// `u64` words of `states` per tile in the single pass: tile `k`'s state is word `k ·
    /// STATE_STRIDE`, alone in its L2 line (128 bytes). Packed sixteen to a line, the states
    /// that every waiting block polls share a few lines, and the publishing stores queue
    /// behind those polls (a stride of 64 bytes measured the same as 128; docs/results.md).
    pub const STATE_STRIDE: usize = 16;

    /// Keys each thread loads, sums and stores per tile.
    const ITEMS: usize = TILE / BLOCK_SIZE;
    /// Shared words of a tile: one padding word per 32, so that a thread's run of
    /// consecutive keys spreads over the banks.
    const PADDED: usize = TILE + TILE / 32;

    /// A tile's state in the single pass (the high 32 bits of its state word): its own sum
    /// is published (the low 32 bits). The word carries its value with its state, so it is
    /// read and written relaxed: nothing else is published with it.
    const AGGREGATE: u64 = 1;
    /// A tile's state: the sum of every key up to its end is published (low word).
    const PREFIX: u64 = 2;

    /// Where key `i` of a tile lives in shared memory.
    #[device]
    fn slot(i: usize) -> usize {
        i + (i >> 5)
    }

    /// Where key `m` of thread `t`'s run lives: the run's keys are `slot(t · ITEMS) + m +
    /// m / 32`, since `ITEMS` (a power of two) either divides 32 or is a multiple of it.
    #[device]
    fn run_slot(m: usize) -> usize {
        slot(thread_idx() as usize * ITEMS) + m + (m >> 5)
    }

    /// Where this thread's `m`-th coalesced key of a tile (key `m · BLOCK_SIZE + t`) lives:
    /// `BLOCK_SIZE` is a multiple of 32, so the padding splits the same way.
    #[device]
    fn striped_slot(m: usize) -> usize {
        slot(thread_idx() as usize) + m * (BLOCK_SIZE + BLOCK_SIZE / 32)
    }

    /// Key `m` of this thread's coalesced share of the tile at `base` (key `base + m ·
    /// BLOCK_SIZE + thread_idx()`), 0 past the end of `keys`.
    #[device]
    fn striped_key(keys: &[u32], base: usize, m: usize) -> u32 {
        let g = base + m * BLOCK_SIZE + thread_idx() as usize;
        if g < keys.len() {
            keys[g]
        } else {
            0
        }
    }

    /// Copies the tile of `keys` at `base` (zeros past the end) into `data`: each thread
    /// issues its [`ITEMS`] coalesced loads before it stores any, so that they are all in
    /// flight at once. `data` must not be read before this: callers order it after the
    /// last reads of the previous tile with a `sync_block()`.
    #[device]
    fn load_tile(keys: &[u32], base: usize, data: &mut [u32]) {
        let mut v = [0u32; ITEMS];
        for m in 0..ITEMS {
            v[m] = striped_key(keys, base, m);
        }
        for m in 0..ITEMS {
            data[striped_slot(m)] = v[m];
        }
        sync_block();
    }

    /// The sum of this thread's run: the [`ITEMS`] consecutive keys of the tile from
    /// `thread_idx() · ITEMS`.
    #[device]
    fn run_sum(data: &[u32]) -> u32 {
        let mut sum = 0u32;
        for m in 0..ITEMS {
            sum = sum.wrapping_add(data[run_slot(m)]);
        }
        sum
    }

    /// What the runs of the threads before this one add up to (an exclusive scan of `sum`
    /// across the block: within the warp by shuffles, then over the earlier warps' totals,
    /// which lane 31 of each warp leaves in `warp_sums`). `warp_sums` must not be written
    /// again before a `sync_block()`.
    #[device]
    fn runs_before(sum: u32, warp_sums: &mut [u32]) -> u32 {
        let lane = lane_id();
        let warp = warp_id();
        let mut inclusive = sum;
        for s in 0..5u32 {
            let up = shfl_up(inclusive, 1 << s);
            if lane >= 1 << s {
                inclusive = inclusive.wrapping_add(up);
            }
        }
        if lane == 31 {
            warp_sums[warp as usize] = inclusive;
        }
        sync_block();
        let mut before = inclusive.wrapping_sub(sum);
        for w in 0..warp {
            before = before.wrapping_add(warp_sums[w as usize]);
        }
        before
    }

    /// The sum of every thread's `sum` in the block, for every thread. `warp_sums` must not
    /// be written again before a `sync_block()`.
    #[device]
    fn block_sum(sum: u32, warp_sums: &mut [u32]) -> u32 {
        let total = warp_total(sum);
        if lane_id() == 0 {
            warp_sums[warp_id() as usize] = total;
        }
        sync_block();
        tile_total(warp_sums)
    }

    /// The tile's total, once every warp's total is in `warp_sums`.
    #[device]
    fn tile_total(warp_sums: &[u32]) -> u32 {
        let mut total = 0u32;
        for w in 0..(BLOCK_SIZE / 32) {
            total = total.wrapping_add(warp_sums[w]);
        }
        total
    }

    /// The sum of `value` over the warp, in every lane.
    #[device]
    fn warp_total(value: u32) -> u32 {
        let mut total = value;
        for s in 0..5u32 {
            total = total.wrapping_add(shfl_xor(total, 16 >> s));
        }
        total
    }

    /// Replaces this thread's run in `data` with its running sums from `start` (the sum of
    /// everything before the run): inclusive sums, or with `inclusive` false exclusive ones.
    /// Then stores the tile at `base` of `out`, coalesced (the part below `out.len()`).
    /// `data` must not be written again before a `sync_block()`.
    #[device]
    fn store_tile(data: &mut [u32], start: u32, inclusive: bool, out: &mut [u32], base: usize) {
        let t = thread_idx() as usize;
        let mut running = start;
        for m in 0..ITEMS {
            let p = run_slot(m);
            let key = data[p];
            data[p] = if inclusive { running.wrapping_add(key) } else { running };
            running = running.wrapping_add(key);
        }
        sync_block();
        let n = out.len();
        if base + TILE <= n {
            for m in 0..ITEMS {
                out[base + m * BLOCK_SIZE + t] = data[striped_slot(m)];
            }
        } else {
            for m in 0..ITEMS {
                let g = base + m * BLOCK_SIZE + t;
                if g < n {
                    out[g] = data[striped_slot(m)];
                }
            }
        }
    }

    /// Warp 0's part of the single pass for tile `tile`, whose warps' totals are in
    /// `warp_sums`: publishes the tile's sum (`AGGREGATE`; `PREFIX` for tile 0) in its state
    /// word (`states[tile · STATE_STRIDE]`), sums the tiles before it and publishes its
    /// inclusive prefix; returns the tiles' sum before it, in every lane. Lane `l` reads
    /// tile `end − 1 − l` of a window of 32 ending at `end`; where a tile has published
    /// nothing yet, its lane waits for it. The nearest `PREFIX` in the window (a lane past
    /// tile 0 counts as a prefix of 0) ends the look-back: the lanes up to it add their
    /// sums. Without one the window moves 32 tiles back.
    #[device]
    fn look_back(states: &mut [u64], tile: usize, warp_sums: &[u32]) -> u32 {
        let lane = lane_id();
        let own = if (lane as usize) < BLOCK_SIZE / 32 { warp_sums[lane as usize] } else { 0 };
        let aggregate = warp_total(own);
        let mut exclusive = 0u32;
        if tile == 0 {
            if lane == 0 {
                states.store_relaxed(0, (PREFIX << 32) | aggregate as u64);
            }
        } else {
            if lane == 0 {
                states.store_relaxed(tile * STATE_STRIDE, (AGGREGATE << 32) | aggregate as u64);
            }
            let mut end = tile;
            loop {
                let mut state = PREFIX << 32;
                if (lane as usize) < end {
                    let j = (end - 1 - lane as usize) * STATE_STRIDE;
                    state = states.load_relaxed(j);
                    if state >> 32 == 0 {
                        wait_until(|| states.load_relaxed(j) >> 32 != 0);
                        state = states.load_relaxed(j);
                    }
                }
                let prefixes = ballot(state >> 32 == PREFIX);
                let nearest = prefixes.trailing_zeros();
                let counted = if lane <= nearest { state as u32 } else { 0 };
                exclusive = exclusive.wrapping_add(warp_total(counted));
                if prefixes != 0 {
                    break;
                }
                end -= 32;
            }
            if lane == 0 {
                states.store_relaxed(tile * STATE_STRIDE, (PREFIX << 32) | exclusive.wrapping_add(aggregate) as u64);
            }
        }
        exclusive
    }

    /// The single pass. Blocks take tiles in the order they ask for them (an atomic ticket,
    /// `tickets[0]`, never the block index: a block that takes a tile has every earlier tile's
    /// block running, which is what makes waiting for them safe). Once the block has its
    /// tile's sum, warp 0 publishes it in the tile's state word (`1 << 32 | sum`) and looks
    /// back over the tiles before it ([`look_back`]), then publishes the tile's inclusive
    /// prefix (`2 << 32 | prefix`). `states` ([`STATE_STRIDE`] words per tile, see
    /// [`state_words`](super::state_words)) and `tickets` (one) must be zero at launch. The
    /// block size must be a multiple of 32 that divides [`TILE`].
    #[grid_phases(threads = 256)]
    pub fn scan_lookback(keys: &[u32], out: &mut [u32], states: &mut [u64], tickets: &mut [u32]) {
        let tiles = keys.len().div_ceil(TILE);
        assert!(
            states.len() >= tiles * STATE_STRIDE,
            "scan_lookback's states take STATE_STRIDE words per tile: size them with scan::state_words"
        );
        let mut data = shared_array::<u32, PADDED>();
        let mut warp_sums = shared_array::<u32, 32>();
        // [0]: the tile; [1]: the sum of the tiles before it.
        let mut share = shared_array::<u32, 2>();
        loop {
            if thread_idx() == 0 {
                share[0] = tickets.atomic_add(0, 1);
            }
            // Also orders the last tile's reads of `data` before the next tile's writes.
            sync_block();
            let tile = share[0] as usize;
            if tile >= tiles {
                break;
            }
            let base = tile * TILE;
            load_tile(keys, base, &mut data);
            let before = runs_before(run_sum(&data), &mut warp_sums);
            if warp_id() == 0 {
                let exclusive = look_back(states, tile, &warp_sums);
                if lane_id() == 0 {
                    share[1] = exclusive;
                }
            }
            sync_block();
            store_tile(&mut data, share[1].wrapping_add(before), true, out, base);
        }
    }

    /// The three phases: every block sums its tiles (tile `block_idx() + k × grid_dim()`) into
    /// `tile_sums`; block 0 scans `tile_sums` into each tile's exclusive prefix; every block
    /// scans its tiles again from their prefixes. `tile_sums` has one element per tile (see
    /// [`tiles`](super::tiles)). The block size must be a multiple of 32 that divides [`TILE`].
    #[grid_phases(threads = 256)]
    pub fn scan_three_phase(keys: &[u32], out: &mut [u32], tile_sums: &mut [u32]) {
        let tiles = keys.len().div_ceil(TILE);
        let mut data = shared_array::<u32, PADDED>();
        let mut warp_sums = shared_array::<u32, 32>();
        // Phase 1: the tiles' sums.
        let mut tile = block_idx() as usize;
        while tile < tiles {
            load_tile(keys, tile * TILE, &mut data);
            let total = block_sum(run_sum(&data), &mut warp_sums);
            if thread_idx() == 0 {
                tile_sums[tile] = total;
            }
            sync_block();
            tile += grid_dim() as usize;
        }
        grid_sync();
        // Phase 2: block 0 turns the tile sums into exclusive prefixes, a tile of them at a time.
        if block_idx() == 0 {
            let mut carry = 0u32;
            let mut chunk = 0usize;
            while chunk < tiles {
                load_tile(tile_sums, chunk, &mut data);
                let sum = run_sum(&data);
                let before = runs_before(sum, &mut warp_sums);
                let total = tile_total(&warp_sums);
                store_tile(&mut data, carry.wrapping_add(before), false, tile_sums, chunk);
                carry = carry.wrapping_add(total);
                chunk += TILE;
                sync_block();
            }
        }
        grid_sync();
        // Phase 3: the tiles again, each from its prefix.
        let mut tile = block_idx() as usize;
        while tile < tiles {
            load_tile(keys, tile * TILE, &mut data);
            let sum = run_sum(&data);
            let before = runs_before(sum, &mut warp_sums);
            store_tile(&mut data, tile_sums[tile].wrapping_add(before), true, out, tile * TILE);
            tile += grid_dim() as usize;
            sync_block();
        }
    }
}

pub use kernels::{scan_lookback, scan_three_phase, STATE_STRIDE, TILE};

/// The inclusive prefix sums of `keys` on the CPU, wrapping: the reference.
pub fn scan_reference(keys: &[u32]) -> Vec<u32> {
    keys.iter()
        .scan(0u32, |sum, &k| {
            *sum = sum.wrapping_add(k);
            Some(*sum)
        })
        .collect()
}

/// The single-pass scan's scratch: the tiles' states and the ticket counter, zeroed before
/// every launch by [`ScanScratch::launch`].
#[derive(Debug)]
pub struct ScanScratch {
    states: DeviceBuffer<u64>,
    tickets: DeviceBuffer<u32>,
}

impl ScanScratch {
    /// Scratch for scans of up to `n` keys.
    pub fn new(gpu: &Gpu, n: usize) -> Result<ScanScratch> {
        Ok(ScanScratch { states: gpu.zeros(state_words(n))?, tickets: gpu.zeros(1)? })
    }

    /// Zeroes the scratch (outside the timed launch) and runs [`scan_lookback`] on `keys`
    /// (at most the `n` keys the scratch was made for) into `out`, with `launch` (its
    /// threads a multiple of 32 that divides [`TILE`]). A launch that names no grid runs on
    /// a GPU the largest co-resident grid, or one block per tile where there are fewer
    /// tiles: blocks take tiles until none is left, so every resident block keeps loads in
    /// flight, and a block that would find no tile is not launched. (It is never tuned: a
    /// tuning run repeats the launch on the same scratch, whose ticket counter the first run
    /// used up.)
    pub fn launch(
        &mut self,
        gpu: &Gpu,
        launch: &Launch,
        keys: &DeviceBuffer<u32>,
        out: &mut DeviceBuffer<u32>,
    ) -> Result<LaunchReport> {
        gpu.fill_zeros(&mut self.states)?;
        gpu.fill_zeros(&mut self.tickets)?;
        let launch = match (launch.requested_blocks(), gpu.backend()) {
            (None, Backend::Cuda) => {
                let coresident = scan_lookback::max_coresident_blocks(gpu, launch)?;
                let work = u32::try_from(tiles(keys.len())).unwrap_or(u32::MAX);
                launch.clone().blocks(coresident.min(work))
            }
            _ => launch.clone(),
        };
        scan_lookback::launch_with(gpu, &launch, keys, out, &mut self.states, &mut self.tickets)
    }
}
