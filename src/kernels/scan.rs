//! Inclusive prefix sums of `u32` keys (wrapping), two ways: a single pass with decoupled
//! look-back, where each tile learns the sum of all before it from its predecessors' published
//! states (`store_release`, `load_acquire`, `wait_until`), and three phases separated by
//! `grid_sync()` (tile sums, a scan of the tile sums, the tiles again with their prefixes).
//!
//! Both cut the keys into tiles of [`TILE`] keys. A block loads a tile into shared memory with
//! coalesced reads, each thread sums a run of consecutive keys, the runs' sums are scanned
//! across the block with warp shuffles, and the runs are scanned again from their prefixes
//! and stored with coalesced writes. The block size must be a multiple of 32 that divides
//! [`TILE`] (256 by default).

use crate::prelude::*;
use crate::{Gpu, Launch, LaunchReport, Result};

/// Keys per tile.
pub const TILE: usize = 4096;

/// Tiles of `n` keys: the length of the single-pass scan's `states`, and of the three-phase
/// scan's `tile_sums`.
pub fn tiles(n: usize) -> usize {
    n.div_ceil(TILE).max(1)
}

/// The single pass. Blocks take tiles in the order they ask for them (an atomic ticket,
/// `tickets[0]`, never the block index: a block that takes a tile has every earlier tile's
/// block running, which is what makes waiting for them safe). A block publishes its tile's
/// sum in `states[tile]` (`1 << 32 | sum`, released), then looks back over the tiles before
/// it, a window of one tile per thread at a time, each thread waiting until its tile has
/// published; the nearest tile that has published its inclusive prefix (`2 << 32 | prefix`)
/// ends the look-back, and the block publishes its own. `states` (one per tile, see
/// [`tiles`]) and `tickets` (one) must be zero at launch.
#[grid_phases(threads = 256)]
pub fn scan_lookback(keys: &[u32], out: &mut [u32], states: &mut [u64], tickets: &mut [u32]) {
    const TILE: usize = 4096;
    const AGGREGATE: u64 = 1;
    const PREFIX: u64 = 2;
    let n = keys.len();
    let tiles = n.div_ceil(TILE);
    // The tile, one padding word per 32 so that a thread's run of keys spreads over the banks.
    let mut data = shared_array::<u32, 4224>();
    let mut warp_sums = shared_array::<u32, 32>();
    // [0]: the tile; [1]: the look-back window's nearest prefix; [2]: the window's sum.
    let mut share = shared_array::<u32, 3>();
    let t = thread_idx();
    let lane = lane_id();
    let warp = t / 32;
    let warps = block_dim() / 32;
    let items = (TILE as u32).div_ceil(block_dim());
    let first = min(t * items, TILE as u32);
    let last = min(first + items, TILE as u32);
    loop {
        if t == 0 {
            share[0] = tickets.atomic_add(0, 1);
        }
        sync_block();
        let tile = share[0] as usize;
        if tile >= tiles {
            break;
        }
        let base = tile * TILE;
        for i in block_stride(0..TILE as u32) {
            let g = base + i as usize;
            data[(i + (i >> 5)) as usize] = if g < n { keys[g] } else { 0 };
        }
        sync_block();
        // The thread's run, then an exclusive scan of the runs across the block.
        let mut sum = 0u32;
        for i in first..last {
            sum = sum.wrapping_add(data[(i + (i >> 5)) as usize]);
        }
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
        let own = if lane < warps { warp_sums[lane as usize] } else { 0 };
        let mut warps_inclusive = own;
        for s in 0..5u32 {
            let up = shfl_up(warps_inclusive, 1 << s);
            if lane >= 1 << s {
                warps_inclusive = warps_inclusive.wrapping_add(up);
            }
        }
        let before_warp = shfl(warps_inclusive, warp).wrapping_sub(shfl(own, warp));
        let aggregate = shfl(warps_inclusive, warps - 1);
        let mut running = before_warp.wrapping_add(inclusive).wrapping_sub(sum);
        if t == 0 {
            states.store_release(tile, (AGGREGATE << 32) | aggregate as u64);
        }
        // Look back: thread t reads the tile `t + 1` before the window's end.
        let mut exclusive = 0u32;
        let mut end = tile;
        loop {
            if t == 0 {
                share[1] = block_dim();
                share[2] = 0;
            }
            sync_block();
            // Before tile 0, the prefix is 0.
            let mut state = PREFIX << 32;
            if (t as usize) < end {
                let j = end - 1 - t as usize;
                wait_until(|| states.load_acquire(j) >> 32 != 0);
                state = states.load_acquire(j);
            }
            if state >> 32 == PREFIX {
                let _ = share.atomic_min(1, t);
            }
            sync_block();
            let nearest = share[1];
            if t <= nearest {
                let _ = share.atomic_add(2, state as u32);
            }
            sync_block();
            exclusive = exclusive.wrapping_add(share[2]);
            if nearest < block_dim() {
                break;
            }
            end -= block_dim() as usize;
            sync_block();
        }
        if t == 0 {
            states.store_release(tile, (PREFIX << 32) | exclusive.wrapping_add(aggregate) as u64);
        }
        running = running.wrapping_add(exclusive);
        for i in first..last {
            let p = (i + (i >> 5)) as usize;
            running = running.wrapping_add(data[p]);
            data[p] = running;
        }
        sync_block();
        for i in block_stride(0..TILE as u32) {
            let g = base + i as usize;
            if g < n {
                out[g] = data[(i + (i >> 5)) as usize];
            }
        }
        sync_block();
    }
}

/// The three phases: every block sums its tiles (tile `block_idx() + k × grid_dim()`) into
/// `tile_sums`; block 0 scans `tile_sums` into each tile's exclusive prefix; every block scans
/// its tiles again from their prefixes. `tile_sums` has one element per tile (see [`tiles`]).
#[grid_phases(threads = 256)]
pub fn scan_three_phase(keys: &[u32], out: &mut [u32], tile_sums: &mut [u32]) {
    const TILE: usize = 4096;
    let n = keys.len();
    let tiles = n.div_ceil(TILE);
    let mut data = shared_array::<u32, 4224>();
    let mut warp_sums = shared_array::<u32, 32>();
    let t = thread_idx();
    let lane = lane_id();
    let warp = t / 32;
    let warps = block_dim() / 32;
    let items = (TILE as u32).div_ceil(block_dim());
    let first = min(t * items, TILE as u32);
    let last = min(first + items, TILE as u32);
    // Phase 1: the tiles' sums.
    let mut tile = block_idx() as usize;
    while tile < tiles {
        let base = tile * TILE;
        let mut sum = 0u32;
        for i in block_stride(0..TILE as u32) {
            let g = base + i as usize;
            if g < n {
                sum = sum.wrapping_add(keys[g]);
            }
        }
        for s in 0..5u32 {
            sum = sum.wrapping_add(shfl_xor(sum, 16 >> s));
        }
        if lane == 0 {
            warp_sums[warp as usize] = sum;
        }
        sync_block();
        if t == 0 {
            let mut total = 0u32;
            for w in 0..warps {
                total = total.wrapping_add(warp_sums[w as usize]);
            }
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
            for i in block_stride(0..TILE as u32) {
                let g = chunk + i as usize;
                data[(i + (i >> 5)) as usize] = if g < tiles { tile_sums[g] } else { 0 };
            }
            sync_block();
            let mut sum = 0u32;
            for i in first..last {
                sum = sum.wrapping_add(data[(i + (i >> 5)) as usize]);
            }
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
            let own = if lane < warps { warp_sums[lane as usize] } else { 0 };
            let mut warps_inclusive = own;
            for s in 0..5u32 {
                let up = shfl_up(warps_inclusive, 1 << s);
                if lane >= 1 << s {
                    warps_inclusive = warps_inclusive.wrapping_add(up);
                }
            }
            let before_warp = shfl(warps_inclusive, warp).wrapping_sub(shfl(own, warp));
            let aggregate = shfl(warps_inclusive, warps - 1);
            // Exclusive: each prefix leaves its own tile's sum out.
            let mut running = carry.wrapping_add(before_warp).wrapping_add(inclusive).wrapping_sub(sum);
            for i in first..last {
                let p = (i + (i >> 5)) as usize;
                let own_sum = data[p];
                data[p] = running;
                running = running.wrapping_add(own_sum);
            }
            sync_block();
            for i in block_stride(0..TILE as u32) {
                let g = chunk + i as usize;
                if g < tiles {
                    tile_sums[g] = data[(i + (i >> 5)) as usize];
                }
            }
            sync_block();
            carry = carry.wrapping_add(aggregate);
            chunk += TILE;
        }
    }
    grid_sync();
    // Phase 3: the tiles again, each from its prefix.
    let mut tile = block_idx() as usize;
    while tile < tiles {
        let base = tile * TILE;
        for i in block_stride(0..TILE as u32) {
            let g = base + i as usize;
            data[(i + (i >> 5)) as usize] = if g < n { keys[g] } else { 0 };
        }
        sync_block();
        let mut sum = 0u32;
        for i in first..last {
            sum = sum.wrapping_add(data[(i + (i >> 5)) as usize]);
        }
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
        let own = if lane < warps { warp_sums[lane as usize] } else { 0 };
        let mut warps_inclusive = own;
        for s in 0..5u32 {
            let up = shfl_up(warps_inclusive, 1 << s);
            if lane >= 1 << s {
                warps_inclusive = warps_inclusive.wrapping_add(up);
            }
        }
        let before_warp = shfl(warps_inclusive, warp).wrapping_sub(shfl(own, warp));
        let mut running = tile_sums[tile].wrapping_add(before_warp).wrapping_add(inclusive).wrapping_sub(sum);
        for i in first..last {
            let p = (i + (i >> 5)) as usize;
            running = running.wrapping_add(data[p]);
            data[p] = running;
        }
        sync_block();
        for i in block_stride(0..TILE as u32) {
            let g = base + i as usize;
            if g < n {
                out[g] = data[(i + (i >> 5)) as usize];
            }
        }
        sync_block();
        tile += grid_dim() as usize;
    }
}

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
    zeros: Vec<u64>,
}

impl ScanScratch {
    /// Scratch for scans of up to `n` keys.
    pub fn new(gpu: &Gpu, n: usize) -> Result<ScanScratch> {
        let zeros = vec![0u64; tiles(n)];
        Ok(ScanScratch { states: gpu.upload(&zeros)?, tickets: gpu.zeros(1)?, zeros })
    }

    /// Zeroes the scratch (outside the timed launch) and runs [`scan_lookback`] on `keys`
    /// (at most the `n` keys the scratch was made for) into `out`, with `launch` (its
    /// threads a multiple of 32 that divides [`TILE`]). A launch that names no grid runs on
    /// a GPU the largest co-resident grid: blocks take tiles until none is left, so every
    /// resident block keeps loads in flight. (It is never tuned: a tuning run repeats the
    /// launch on the same scratch, whose ticket counter the first run used up.)
    pub fn launch(
        &mut self,
        gpu: &Gpu,
        launch: &Launch,
        keys: &DeviceBuffer<u32>,
        out: &mut DeviceBuffer<u32>,
    ) -> Result<LaunchReport> {
        gpu.write(&mut self.states, &self.zeros)?;
        gpu.write(&mut self.tickets, &[0])?;
        let launch = match (launch.requested_blocks(), gpu.backend()) {
            (None, Backend::Cuda) => {
                let blocks = scan_lookback::max_coresident_blocks(gpu, launch)?;
                launch.clone().blocks(blocks)
            }
            _ => launch.clone(),
        };
        scan_lookback::launch_with(gpu, &launch, keys, out, &mut self.states, &mut self.tickets)
    }
}
