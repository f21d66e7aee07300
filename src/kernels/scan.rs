//! Inclusive prefix sums of `u32` keys (wrapping), two ways: a single pass with decoupled
//! look-back, where each tile learns the sum of all before it from its predecessors' published
//! states (`store_relaxed`, `load_relaxed`, `wait_until`), and three phases separated by
//! `grid_sync()` (tile sums, a scan of the tile sums, the tiles again with their prefixes).
//!
//! Both cut the keys into tiles of [`TILE`] keys, and each thread of a block holds
//! `TILE / BLOCK_SIZE` keys of a tile (in registers at the default 256 threads, 32 keys; at 32
//! or 64 threads the 256 or 128 keys spill to local memory): warp `w` takes the tile's `w`-th run of
//! consecutive keys and moves it in chunks of [`CHUNK`] keys, 16 bytes (`load_chunk`,
//! `store_chunk`), the 32 lanes' chunks side by side. The chunks' sums are scanned across the
//! lanes with shuffles, the warps' totals across the block. The block size must be a multiple
//! of 32 that divides [`TILE`] (256 by default); the kernels assert it.
//!
//! ```
//! use gsync::kernels::scan::{scan_reference, scan_three_phase, tiles, ScanScratch};
//! use gsync::{Gpu, Launch};
//!
//! # fn main() -> gsync::Result<()> {
//! let gpu = Gpu::emulator(); // or Gpu::new(0)
//! let keys: Vec<u32> = (0..5000u32).map(|i| i.wrapping_mul(2654435761)).collect();
//! let input = gpu.upload(&keys)?;
//! let mut out = gpu.zeros::<u32>(keys.len())?;
//! // The single pass, with its scratch.
//! let mut scratch = ScanScratch::new(&gpu, keys.len())?;
//! scratch.launch(&gpu, &Launch::new(), &input, &mut out)?;
//! assert_eq!(gpu.download(&out)?, scan_reference(&keys));
//! // The three phases.
//! let mut tile_sums = gpu.zeros::<u32>(tiles(keys.len()))?;
//! scan_three_phase::launch(&gpu, &input, &mut out, &mut tile_sums)?;
//! assert_eq!(gpu.download(&out)?, scan_reference(&keys));
//! # Ok(())
//! # }
//! ```

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
    /// behind those polls (a stride of 64 bytes measured the same as 128; docs/journal.md).
    pub const STATE_STRIDE: usize = 16;

    /// Keys moved in one access: 16 bytes.
    pub const CHUNK: usize = 4;
    /// Keys of a tile each thread holds.
    const ITEMS: usize = TILE / BLOCK_SIZE;
    /// Chunks of a tile each thread holds.
    const CHUNKS: usize = ITEMS / CHUNK;
    /// Consecutive keys of a tile that each warp holds.
    const WARP_KEYS: usize = 32 * ITEMS;

    /// A tile's state in the single pass (the high 32 bits of its state word): its own sum
    /// is published (the low 32 bits). The word carries its value with its state, so it is
    /// read and written relaxed: nothing else is published with it.
    const AGGREGATE: u64 = 1;
    /// A tile's state: the sum of every key up to its end is published (low word).
    const PREFIX: u64 = 2;

    /// The first chunk of keys this thread holds of the tile at `base`: warp `w` holds the
    /// tile's keys from `w · WARP_KEYS`, its lane `l` the chunks `m · 32 + l` of them (`m <
    /// CHUNKS`), so that each of a warp's loads and stores covers 512 contiguous bytes.
    #[device]
    fn first_chunk(base: usize) -> usize {
        (base + warp_id() as usize * WARP_KEYS) / CHUNK + lane_id() as usize
    }

    /// This thread's keys of the tile at `base` into `held` (chunk `m` at `m · CHUNK`), zeros
    /// past the end of `keys`.
    #[device]
    fn load_chunks(keys: &[u32], base: usize, held: &mut [u32]) {
        let first = first_chunk(base);
        if base + TILE <= keys.len() {
            for m in 0..CHUNKS {
                let chunk = keys.load_chunk::<CHUNK>(first + m * 32);
                for j in 0..CHUNK {
                    held[m * CHUNK + j] = chunk[j];
                }
            }
        } else {
            for m in 0..CHUNKS {
                for j in 0..CHUNK {
                    let g = (first + m * 32) * CHUNK + j;
                    held[m * CHUNK + j] = if g < keys.len() { keys[g] } else { 0 };
                }
            }
        }
    }

    /// For each of this thread's chunks in `held`, what the keys of the tile before it add up
    /// to, less the sum of the tiles before (`before[m]`): one scan of the chunks' sums across
    /// the lanes per chunk, then the warps' totals, which lane 0 of each warp leaves in
    /// `warp_sums` (read again by the single pass's look-back). `warp_sums` must not be written
    /// again before a `sync_block()`.
    #[device]
    fn chunks_before(held: &[u32], before: &mut [u32], warp_sums: &mut [u32]) {
        let lane = lane_id();
        let mut warp_total = 0u32;
        for m in 0..CHUNKS {
            let mut own = 0u32;
            for j in 0..CHUNK {
                own = own.wrapping_add(held[m * CHUNK + j]);
            }
            let mut inclusive = own;
            for s in 0..5u32 {
                let up = shfl_up(inclusive, 1 << s);
                if lane >= 1 << s {
                    inclusive = inclusive.wrapping_add(up);
                }
            }
            before[m] = warp_total.wrapping_add(inclusive.wrapping_sub(own));
            warp_total = warp_total.wrapping_add(shfl(inclusive, 31));
        }
        if lane == 0 {
            warp_sums[warp_id() as usize] = warp_total;
        }
        sync_block();
        let mut warps_before = 0u32;
        for w in 0..warp_id() {
            warps_before = warps_before.wrapping_add(warp_sums[w as usize]);
        }
        for m in 0..CHUNKS {
            before[m] = before[m].wrapping_add(warps_before);
        }
    }

    /// Stores the running sums of this thread's keys of the tile at `base` (`held`, each
    /// chunk `m` from `start` plus `before[m]`): inclusive sums, or with `inclusive` false
    /// exclusive ones; the part below `out.len()`.
    #[device]
    fn store_chunks(out: &mut [u32], base: usize, held: &[u32], before: &[u32], start: u32, inclusive: bool) {
        let first = first_chunk(base);
        let whole = base + TILE <= out.len();
        for m in 0..CHUNKS {
            let mut sums = [0u32; CHUNK];
            let mut running = start.wrapping_add(before[m]);
            for j in 0..CHUNK {
                let key = held[m * CHUNK + j];
                sums[j] = if inclusive { running.wrapping_add(key) } else { running };
                running = running.wrapping_add(key);
            }
            if whole {
                out.store_chunk(first + m * 32, sums);
            } else {
                for j in 0..CHUNK {
                    let g = (first + m * 32) * CHUNK + j;
                    if g < out.len() {
                        out[g] = sums[j];
                    }
                }
            }
        }
    }

    /// The sum of the tile, once [`chunks_before`] has left every warp's total in `warp_sums`.
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
    /// back over the tiles before it (`look_back`), then publishes the tile's inclusive
    /// prefix (`2 << 32 | prefix`). `states` ([`STATE_STRIDE`] words per tile, see
    /// [`state_words`](super::state_words)) and `tickets` (one) must be zero at launch. The
    /// block size must be a multiple of 32 that divides [`TILE`].
    #[grid_phases(threads = 256)]
    pub fn scan_lookback(keys: &[u32], out: &mut [u32], states: &mut [u64], tickets: &mut [u32]) {
        assert!(
            TILE % BLOCK_SIZE == 0 && BLOCK_SIZE % 32 == 0,
            "the scans take a block size that is a multiple of 32 and divides scan::TILE, 8192"
        );
        let tiles = keys.len().div_ceil(TILE);
        assert!(
            states.len() >= tiles * STATE_STRIDE,
            "scan_lookback's states take STATE_STRIDE words per tile: size them with scan::state_words"
        );
        let mut warp_sums = shared_array::<u32, 32>();
        // [0]: the tile; [1]: the sum of the tiles before it.
        let mut share = shared_array::<u32, 2>();
        loop {
            if thread_idx() == 0 {
                share[0] = tickets.atomic_add(0, 1);
            }
            // Also orders the last tile's reads of `warp_sums` and `share` before this one's writes.
            sync_block();
            let tile = share[0] as usize;
            if tile >= tiles {
                break;
            }
            let base = tile * TILE;
            let mut held = [0u32; ITEMS];
            let mut before = [0u32; CHUNKS];
            load_chunks(keys, base, &mut held);
            chunks_before(&held, &mut before, &mut warp_sums);
            if warp_id() == 0 {
                let exclusive = look_back(states, tile, &warp_sums);
                if lane_id() == 0 {
                    share[1] = exclusive;
                }
            }
            sync_block();
            store_chunks(out, base, &held, &before, share[1], true);
        }
    }

    /// The three phases: every block sums its tiles (tile `block_idx() + k × grid_dim()`) into
    /// `tile_sums`; block 0 scans `tile_sums` into each tile's exclusive prefix, a tile of them
    /// at a time; every block scans its tiles again from their prefixes. `tile_sums` has one
    /// element per tile (see [`tiles`](super::tiles)). The block size must be a multiple of 32
    /// that divides [`TILE`].
    #[grid_phases(threads = 256)]
    pub fn scan_three_phase(keys: &[u32], out: &mut [u32], tile_sums: &mut [u32]) {
        assert!(
            TILE % BLOCK_SIZE == 0 && BLOCK_SIZE % 32 == 0,
            "the scans take a block size that is a multiple of 32 and divides scan::TILE, 8192"
        );
        let tiles = keys.len().div_ceil(TILE);
        let mut warp_sums = shared_array::<u32, 32>();
        // Phase 1: the tiles' sums.
        let mut tile = block_idx() as usize;
        while tile < tiles {
            let mut held = [0u32; ITEMS];
            load_chunks(keys, tile * TILE, &mut held);
            let mut sum = 0u32;
            for i in 0..ITEMS {
                sum = sum.wrapping_add(held[i]);
            }
            let total = warp_total(sum);
            if lane_id() == 0 {
                warp_sums[warp_id() as usize] = total;
            }
            sync_block();
            if thread_idx() == 0 {
                tile_sums[tile] = tile_total(&warp_sums);
            }
            sync_block();
            tile += grid_dim() as usize;
        }
        grid_sync();
        // Phase 2: block 0 turns the tile sums into exclusive prefixes.
        if block_idx() == 0 {
            let mut carry = 0u32;
            let mut chunk = 0usize;
            while chunk < tiles {
                let mut held = [0u32; ITEMS];
                let mut before = [0u32; CHUNKS];
                load_chunks(tile_sums, chunk, &mut held);
                chunks_before(&held, &mut before, &mut warp_sums);
                store_chunks(tile_sums, chunk, &held, &before, carry, false);
                carry = carry.wrapping_add(tile_total(&warp_sums));
                chunk += TILE;
                sync_block();
            }
        }
        grid_sync();
        // Phase 3: the tiles again, each from its prefix.
        let mut tile = block_idx() as usize;
        while tile < tiles {
            let mut held = [0u32; ITEMS];
            let mut before = [0u32; CHUNKS];
            load_chunks(keys, tile * TILE, &mut held);
            chunks_before(&held, &mut before, &mut warp_sums);
            store_chunks(out, tile * TILE, &held, &before, tile_sums[tile], true);
            tile += grid_dim() as usize;
            sync_block();
        }
    }
}

pub use kernels::{scan_lookback, scan_three_phase, CHUNK, STATE_STRIDE, TILE};

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
