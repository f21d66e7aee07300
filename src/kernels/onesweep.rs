//! LSD radix sort of unsigned words (`u32`, `u64`), Onesweep style, as one fused kernel (the
//! look-back form of [`radix`](super::radix), which counts each pass's digits in a phase of
//! its own instead, and which [`sort`](super::sort) runs from its radix sizes on, faster there
//! on an H200):
//! a first phase counts every digit position's histogram at once, and then one phase per
//! 8-bit digit, each separated from the next by `grid_sync()`, ranks tiles of keys in
//! registers and shared memory and scatters them to where the digit puts them. Inside a
//! digit phase, no grid barrier: each tile learns how many keys of each digit the tiles
//! before it hold by decoupled look-back (as [`scan`](super::scan)'s single pass does), so
//! a phase reads and writes every key once.
//!
//! - **Histograms** (phase 1): every block counts the digits of its keys in shared memory,
//!   all digit positions at once, and adds its counts into its copy of `hist` (block `b`
//!   into copy `b % HIST_COPIES` of `PASSES × 256` words, zero at launch: the blocks' atomics
//!   queue on 16 times as many words); it also zeroes the look-back states of every digit
//!   phase.
//! - **Digit phases** (one per byte, lowest first): block `b` takes tiles `b`, `b + grid`,
//!   … of [`TILE`] keys. Warp `w` of the block holds the tile's `w`-th run of
//!   `32 × ITEMS` keys, lane `l` the keys `l`, `l + 32`, … of it, so that the warp's loads
//!   cover 128 contiguous bytes. The last tile is padded with the largest key, whose digit
//!   is the last in every pass, so that every tile ranks whole: the padding ranks after
//!   every key of the tile and never goes out. A key's rank among the tile's keys of its
//!   digit comes from the lanes holding the same digit (`match_any` of the digit as a `u8`,
//!   which the GPU runs as one ballot per bit) and the warp's running count of that digit in
//!   shared memory, which the lowest lane of each group moves on by one shared atomic; the
//!   warps' counts are then scanned across the block. Each thread owns one
//!   digit: it publishes the tile's count of its digit in the tile's state word for that
//!   digit as soon as it has it. Keys (and values) then go to their ranks in shared memory,
//!   the tile sorted by digit, which needs no other tile, and the loads of the block's next
//!   tile are issued; only then does the thread wait for the tiles before it (`wait_until`)
//!   until one has published its inclusive prefix, reading their state words two at a time,
//!   and publish its own, while those loads are in flight. From shared memory each digit's keys go out to
//!   `digit start + tiles before + rank`, a contiguous run.
//! - A phase whose digit every key shares (the histogram holds all `n` keys in one bin: the
//!   high bytes of small keys, say) moves no key relative to another: it copies the keys
//!   (and values) as they are, without ranking or look-back.
//! - Values, if any, follow their keys through shared memory, in a buffer of their own. With
//!   `u32` keys they never pass through registers: the block issues async copies of the
//!   tile's values into the buffer, in the tile's order, 16 bytes each, as the tile starts,
//!   and they land while the keys rank and the look-back waits; staging a key records where its value is
//!   (`origins`), and the tile's values go out gathered from there. Loaded after the rank and
//!   staged through registers, they had waited on their loads once a tile and held 20
//!   registers (on an H200, 2^24 pairs 581–583 µs against 568–569 µs, keys 462–464 against 453,
//!   2^26 pairs 2,143–2,145 against 2,090–2,093, one run). `u64` keys keep the register path
//!   (see `gathers_values`).
//!
//! **Tiles and registers.** A tile holds 24 keys per thread, 6,144 in all. Keys in flight
//! per SM decide the large sorts: on an H200, 24 keys per thread against 20 took 2^24 keys
//! from 433–434 µs to 416 and 2^26 keys from 1,577–1,578 to 1,480–1,487 (2^24 pairs from
//! 541–543 to 539–541, 2^26 pairs from 2,017–2,029 to 1,987–1,992), and lost at 2^20 (keys
//! 70.5–73.7 against 69.1–70.9, pairs 83.2–87.1 against 79.7–81.4; one call, two rounds). With `u64` keys 24 lost 2% at 2^24 pairs and
//! 7–10% at 2^20 (pairs 172–173 against 158–159 µs; keys at 2^24 the same), which the
//! kernels share for want of a tile size per key type. Earlier, with the values in registers,
//! 16 keys per thread took 491 µs at 2^24, 18 took 479, 20 467 and 22 472.
//! The kernels ask for their blocks per SM (`blocks_per_sm`), which their split forms'
//! segments keep too: ptxas (CUDA 13, sm_90, bounds checks off) gives `onesweep_u32` 80
//! registers, 3 blocks of 256 per SM, spilling 156 bytes under LBS, and `onesweep_u64` 128,
//! 2 blocks, spilling 316 (their split segments none). To keep few values live, two ranks
//! share a register (20 keys per thread spilled 668 bytes with a register per rank, 196 with
//! two: 2^24 keys 497 → 467 µs, in runs where 16 keys with a register per rank took 517),
//! indices are `u32`, each digit is computed again from its key rather than held, and the
//! passes run two to a trip of the kernel's loop, each naming its source and destination buffers, rather than
//! swapping them after each pass (the swapped buffers' addresses and lengths stayed live in
//! registers: 56 bytes spilled, and 2^24 pairs took 772 µs against 746). With the rest of a
//! block's shared arrays, a tile's staged values (`u32` keys) or staged keys (`u64` keys)
//! would exceed the 48 KiB that static shared arrays may take: they are a shared slice.
//!
//! The sort is stable: keys with equal digits keep their order in every phase (lanes in
//! order within a warp's step, steps in order, warps in order, tiles in order).
//!
//! **Co-residency.** A block waits only for tiles with lower numbers, which blocks with
//! lower indices, or itself earlier, hold: every block of a fused grid is resident, so every
//! tile it waits for is being worked on. Blocks loop over tiles, so any number of keys runs
//! on the co-resident grid. The split form's blocks wait the same way: its grid is at most
//! the largest resident in every segment (its default; a larger one is refused), and its
//! segments keep the fused kernel's blocks per SM. The state words carry a count of 30 bits: a sort takes fewer than
//! 2^30 keys ([`MAX_KEYS`]).
//!
//! ```
//! use gsync::kernels::onesweep::sort_words;
//! use gsync::{Gpu, Launch};
//!
//! # fn main() -> gsync::Result<()> {
//! let gpu = Gpu::emulator(); // or Gpu::new(0)
//! let input: Vec<u32> = (0..5000u32).map(|i| i.wrapping_mul(2654435761)).collect();
//! let mut keys = gpu.upload(&input)?;
//! sort_words(&gpu, &Launch::new(), &mut keys, None)?;
//! let mut expected = input.clone();
//! expected.sort_unstable();
//! assert_eq!(gpu.download(&keys)?, expected);
//! # Ok(())
//! # }
//! ```

use crate::prelude::*;
use crate::{Error, Gpu, KernelSpec, Launch, LaunchConfig, LaunchReport, Result};

/// The radix sort's kernels and the steps they share.
#[gsync::kernels]
mod lsd_lookback {
    /// Digits per pass: 8 bits.
    pub const RADIX: usize = 256;
    /// Keys each thread holds of a tile: even, for their ranks travel two to a register, and
    /// few enough that a rank among a warp's `32 × ITEMS` keys fits in 16 bits.
    pub const ITEMS: usize = 24;
    /// Threads per block: one per digit.
    pub const THREADS: usize = 256;
    /// Keys per tile.
    pub const TILE: usize = ITEMS * THREADS;
    /// Warps per block.
    const WARPS: usize = THREADS / 32;
    /// Consecutive keys of a tile that each warp holds.
    const WARP_KEYS: usize = 32 * ITEMS;
    /// Copies of the histograms in `hist`: block `b` adds into copy `b % HIST_COPIES`, so that
    /// the blocks' atomics spread over as many words (and L2 slices) instead of queueing on
    /// one set.
    pub const HIST_COPIES: usize = 16;

    /// A tile's state word for a digit (the top two bits): the tile's own count of the digit
    /// is published (the low 30 bits). The word carries its value with its state, so it is
    /// read and written relaxed.
    const AGGREGATE: u32 = 1 << 30;
    /// A state word's flag: the count of the digit in every tile up to this one's end is
    /// published.
    const PREFIX: u32 = 2 << 30;
    /// The flag bits of a state word.
    const FLAGS: u32 = 3 << 30;
    /// The count bits of a state word.
    const COUNT: u32 = (1 << 30) - 1;

    /// The digit of `key` from bit `shift` up.
    #[device]
    fn digit_of<K: Int>(key: K, shift: u32) -> u32 {
        ((key >> shift) as u32) & 255
    }

    /// The sum of `value` over the threads of the block before this one (every thread of
    /// the block calls it, with the block size [`THREADS`]); `warp_totals` holds a word per
    /// warp. Two calls need a `sync_block()` between them: the second's writes to
    /// `warp_totals` wait for the first's reads.
    #[device]
    fn block_exclusive_sum(value: u32, warp_totals: &mut [u32]) -> u32 {
        let lane = lane_id();
        let mut inclusive = value;
        for s in 0..5u32 {
            let up = shfl_up(inclusive, 1 << s);
            if lane >= 1 << s {
                inclusive += up;
            }
        }
        if lane == 31 {
            warp_totals[warp_id() as usize] = inclusive;
        }
        sync_block();
        let mut before = 0u32;
        for w in 0..warp_id() {
            before += warp_totals[w as usize];
        }
        before + inclusive - value
    }

    /// Counts each of `key`'s `passes` digits in `counts` (digit `d` of byte `p` at
    /// `p · RADIX + d`).
    #[device]
    fn count_key<K: Int>(key: K, counts: &mut [u32], passes: u32) {
        for p in 0..passes {
            let bin = p as usize * RADIX + digit_of(key, 8 * p) as usize;
            let _ = counts.atomic_add(bin, 1);
        }
    }

    /// Chunks of four keys each thread of the histogram phase loads before it counts them: one
    /// at a time left the phase waiting on its loads (on an H200, 2^24 keys: 39.5 µs, four at
    /// a time 36.2).
    const HIST_LOADS: usize = 4;

    /// Phase 1: zeroes `states`, and adds the counts of every digit of every position
    /// (`passes` bytes from the lowest) of `keys` into the block's copy of the histograms in
    /// `hist` (digit `d` of byte `p` in copy `c` at `(c · passes + p) · RADIX + d`), through
    /// the block's counts in shared memory (`counts`).
    #[device]
    fn count_digits<K: Int>(keys: &[K], hist: &mut [u32], states: &mut [u32], counts: &mut [u32], passes: u32) {
        for i in grid_stride(0..states.len()) {
            states[i] = 0;
        }
        let bins = passes as usize * RADIX;
        for i in block_stride(0..bins) {
            counts[i] = 0;
        }
        sync_block();
        // Four keys per load where they fill a chunk, HIST_LOADS chunks in flight per thread
        // (each a grid apart), then the rest one by one.
        let chunks = keys.len() / 4;
        let step = grid_size() as usize;
        let mut c = global_id() as usize;
        while c + (HIST_LOADS - 1) * step < chunks {
            let mut loaded = [K::ZERO; 4 * HIST_LOADS];
            for j in 0..HIST_LOADS {
                let chunk = keys.load_chunk::<4>(c + j * step);
                for k in 0..4 {
                    loaded[4 * j + k] = chunk[k];
                }
            }
            for m in 0..4 * HIST_LOADS {
                count_key(loaded[m], counts, passes);
            }
            c += HIST_LOADS * step;
        }
        while c < chunks {
            let chunk = keys.load_chunk::<4>(c);
            for j in 0..4 {
                count_key(chunk[j], counts, passes);
            }
            c += step;
        }
        for i in grid_stride(4 * chunks..keys.len()) {
            count_key(keys[i], counts, passes);
        }
        sync_block();
        let copy = (block_idx() as usize % HIST_COPIES) * bins;
        for i in block_stride(0..bins) {
            let count = counts[i];
            if count != 0 {
                let _ = hist.atomic_add(copy + i, count);
            }
        }
    }

    /// The keys whose byte `pass` is `digit`: the sum of the [`HIST_COPIES`] copies of the
    /// histograms in `hist` (of `passes` bytes each).
    #[device]
    fn digit_total(hist: &[u32], passes: u32, pass: u32, digit: u32) -> u32 {
        let mut total = 0u32;
        for c in 0..HIST_COPIES as u32 {
            total += hist[(c * passes + pass) * RADIX as u32 + digit];
        }
        total
    }

    /// Publishes tile `tile`'s count of digit `d`, `total`, in its state word of this pass
    /// (`states` from `region`): as the inclusive prefix for the first tile, which has none
    /// before it, else as the tile's own count.
    #[device]
    fn publish_count(states: &mut [u32], region: u32, tile: u32, d: u32, total: u32) {
        let flag = if tile == 0 { PREFIX } else { AGGREGATE };
        states.store_relaxed(region + tile * RADIX as u32 + d, flag | total);
    }

    /// State words a look-back reads at once.
    const LOOK_BACK: usize = 2;

    /// Tile `tile`'s count of digit `d` before it (over every earlier tile), from the state
    /// words of this pass (`states` from `region`), once the tile has published its own count
    /// `total` ([`publish_count`]): adds the earlier tiles' counts from the nearest one back,
    /// waiting for each to publish, until one has published its inclusive prefix; then
    /// publishes its own. The words are read [`LOOK_BACK`] at a time, loaded together: every
    /// tile of a round reaches its look-back at once, and a walk one word per round trip to L2
    /// took 15.6 words on average at 2^24 keys (on an H200, tiles of 4,096 keys, one run:
    /// 2^20 keys 73–75 µs one word at a time, 66–69 four at a time; 2^24 keys 529–532 and
    /// 522–524; eight at a time was slower than one from 2^22 keys, 560–564 at 2^24). With
    /// tiles of 5,120 keys, two at a time beat four from 2^24 keys in two runs (2^24 keys
    /// 464–467 against 466–468 µs, 2^26 pairs 2,132–2,155 against 2,167–2,195) and lost at
    /// 2^20 (66.8 against 65.5–65.9). With the mask-tested `match_any` and the values'
    /// 16-byte copies, four were as fast for keys (2^24 keys 431–433 against 433–434 µs) and
    /// slower for pairs (550–552 against 541–543).
    #[device]
    fn look_back(states: &mut [u32], region: u32, tile: u32, d: u32, total: u32) -> u32 {
        let mut exclusive = 0u32;
        if tile > 0 {
            // Tiles before `unread` are still to be read; tile 0 publishes its prefix.
            let mut unread = tile;
            let mut found = false;
            while !found {
                let mut words = [0u32; LOOK_BACK];
                for j in 0..LOOK_BACK as u32 {
                    if j < unread {
                        words[j as usize] = states.load_relaxed(region + (unread - 1 - j) * RADIX as u32 + d);
                    }
                }
                for j in 0..LOOK_BACK as u32 {
                    if !found && j < unread {
                        let at = region + (unread - 1 - j) * RADIX as u32 + d;
                        let mut state = words[j as usize];
                        if state & FLAGS == 0 {
                            wait_until(|| states.load_relaxed(at) & FLAGS != 0);
                            state = states.load_relaxed(at);
                        }
                        exclusive += state & COUNT;
                        found = state & FLAGS == PREFIX;
                    }
                }
                unread -= unread.min(LOOK_BACK as u32);
            }
            states.store_relaxed(region + tile * RADIX as u32 + d, PREFIX | (exclusive + total));
        }
        exclusive
    }

    /// The place in the tile of this thread's key `m`: its rank among its warp's keys of its
    /// digit (the 16-bit half `m % 2` of `ranks[m / 2]`) plus the warp's offset for that digit,
    /// `counts[bin]`.
    #[device]
    fn place_in_tile(ranks: &[u32], m: usize, counts: &[u32], bin: u32) -> u32 {
        ((ranks[m / 2] >> (16 * (m % 2)) as u32) & 0xffff) + counts[bin]
    }

    /// The keys this thread holds of tile `t` (its first at `in_tile`), every 32nd: `src`'s,
    /// and past its end the largest key, whose digit is the last in every pass, so that the
    /// tile's padding ranks after every key of it.
    #[device]
    fn load_tile<K: Int>(src: &[K], held: &mut [K], t: u32, in_tile: u32) {
        let n = src.len() as u32;
        for m in 0..ITEMS {
            let i = t * TILE as u32 + in_tile + 32 * m as u32;
            if i < n {
                held[m] = src[i];
            } else {
                held[m] = !K::ZERO;
            }
        }
    }

    /// Issues async copies of tile `t`'s values from `src` into `into`, in the tile's order,
    /// 16 bytes at a time (each thread every `THREADS`th chunk of four); a chunk that crosses
    /// `src`'s end goes value by value, and nothing past the end is copied (those keys are
    /// the padding, which never goes out).
    #[device]
    fn fetch_values(src: &[u32], into: &mut [u32], t: u32) {
        let n = src.len() as u32;
        let tile_chunks = t * (TILE / 4) as u32;
        for j in 0..TILE / 4 / THREADS {
            let c = thread_idx() + (j * THREADS) as u32;
            let i = 4 * (tile_chunks + c);
            if i + 4 <= n {
                into.copy_chunk_async::<4>(c, src, tile_chunks + c);
            } else {
                for k in 0..4u32 {
                    if i + k < n {
                        into.copy_chunk_async::<1>(4 * c + k, src, i + k);
                    }
                }
            }
        }
    }

    /// Whether the values of `K` keys reach shared memory by async copies in the tile's order
    /// and go out gathered through `origins` (`u32`), or pass through registers to their keys'
    /// places (`u64`, where the gather spilled 524 bytes at 128 registers against 80).
    #[device]
    fn gathers_values<K: Int>() -> bool {
        K::BITS == 32
    }

    /// Where in `staged_values` the value of the key at `i` of the sorted tile is: where its
    /// thread copied it ([`gathers_values`]), or `i`.
    #[device]
    fn value_at<K: Int>(origins: &[u16], i: u32) -> u32 {
        let mut at = i;
        if gathers_values::<K>() {
            at = origins[i] as u32;
        }
        at
    }

    /// A pass whose digit every key shares moves no key relative to the others: the keys of
    /// `src` (and, `with_values`, the values) are copied to `dst` as they are, in chunks of
    /// four, and the rest one by one.
    #[device]
    fn copy_pass<K: Int>(src: &[K], dst: &mut [K], src_values: &[u32], dst_values: &mut [u32], with_values: bool) {
        let n = src.len();
        let chunks = n / 4;
        for c in grid_stride(0..chunks) {
            let chunk = src.load_chunk::<4>(c);
            dst.store_chunk(c, chunk);
            if with_values {
                let values = src_values.load_chunk::<4>(c);
                dst_values.store_chunk(c, values);
            }
        }
        for i in grid_stride(4 * chunks..n) {
            dst[i] = src[i];
            if with_values {
                dst_values[i] = src_values[i];
            }
        }
    }

    /// One digit phase: the keys of `src` (and, `with_values`, the values of `src_values`)
    /// into `dst` (`dst_values`) ordered by digit `pass` (bits `8 · pass` up), stably; or,
    /// where every key has the same digit (`hist` says so), a plain copy. `counts`,
    /// `staged`, `staged_values`, `origins`, `offsets` and `warp_totals` are the block's shared arrays.
    #[device]
    fn scatter_pass<K: Int>(
        src: &[K],
        dst: &mut [K],
        src_values: &[u32],
        dst_values: &mut [u32],
        with_values: bool,
        hist: &[u32],
        passes: u32,
        states: &mut [u32],
        pass: u32,
        counts: &mut [u32],
        staged: &mut [K],
        staged_values: &mut [u32],
        origins: &mut [u16],
        offsets: &mut [u32],
        warp_totals: &mut [u32],
    ) {
        let n = src.len();
        let shift = 8 * pass;
        // The same for every thread: whether the first key's digit is every key's.
        let mut shared_digit = n == 0;
        if n > 0 {
            shared_digit = digit_total(hist, passes, pass, digit_of(src[0], shift)) as usize == n;
        }
        if shared_digit {
            copy_pass(src, dst, src_values, dst_values, with_values);
        } else {
            rank_and_scatter(
                src,
                dst,
                src_values,
                dst_values,
                with_values,
                hist,
                passes,
                states,
                pass,
                counts,
                staged,
                staged_values,
                origins,
                offsets,
                warp_totals,
            );
        }
    }

    /// [`scatter_pass`] where the keys' digits differ: tile by tile, each key's rank among the
    /// tile's keys of its digit, the tiles before it by look-back, the tile sorted by digit in
    /// shared memory and each digit's run out to its place. Indices are `u32` (a sort takes
    /// fewer than 2^30 keys), which keeps each in one register.
    #[device]
    fn rank_and_scatter<K: Int>(
        src: &[K],
        dst: &mut [K],
        src_values: &[u32],
        dst_values: &mut [u32],
        with_values: bool,
        hist: &[u32],
        passes: u32,
        states: &mut [u32],
        pass: u32,
        counts: &mut [u32],
        staged: &mut [K],
        staged_values: &mut [u32],
        origins: &mut [u16],
        offsets: &mut [u32],
        warp_totals: &mut [u32],
    ) {
        let n = src.len() as u32;
        let tiles = n.div_ceil(TILE as u32);
        let shift = 8 * pass;
        let region = pass * tiles * RADIX as u32;
        // This thread's digit: where its keys start in the sorted order.
        let d = thread_idx();
        let start = block_exclusive_sum(digit_total(hist, passes, pass, d), warp_totals);
        let lane = lane_id();
        let warp_counts = warp_id() * RADIX as u32;
        let lanes_below = (1u32 << lane) - 1;
        for v in 0..WARPS {
            counts[(v * RADIX) as u32 + d] = 0;
        }
        sync_block();
        // This thread's first key of a tile, from the tile's first: the warp's run, then the lane.
        let in_tile = warp_id() * WARP_KEYS as u32 + lane;
        let mut t = block_idx();
        // The keys this thread holds of tile `t`, every 32nd from its first: every load is issued
        // before any is used, so that they are in flight together.
        let mut held = [K::ZERO; ITEMS];
        load_tile(src, &mut held, t, in_tile);
        while t < tiles {
            let base = t * TILE as u32;
            let valid = (n - base).min(TILE as u32);
            let first = base + in_tile;
            // The tile's values go straight to shared memory, in the tile's order, while the
            // keys rank and wait: the last tile's reads of `staged_values` ended at the barrier
            // that closed its loop.
            if with_values && gathers_values::<K>() {
                fetch_values(src_values, staged_values, t);
            }
            // Rank: each key's place among the warp's keys of its digit. The digit is computed
            // again from the key where it is needed, and two ranks (below the warp's 32 × ITEMS
            // keys, 16 bits each) share a register, which keeps fewer values live.
            let mut ranks = [0u32; ITEMS / 2];
            for m in 0..ITEMS {
                let digit = digit_of(held[m], shift);
                let peers = match_any(digit as u8);
                let leader = peers.trailing_zeros();
                let mut before = 0u32;
                if lane == leader {
                    before = counts.atomic_add(warp_counts + digit, peers.count_ones());
                }
                let rank = shfl(before, leader) + (peers & lanes_below).count_ones();
                if m % 2 == 0 {
                    ranks[m / 2] = rank;
                } else {
                    ranks[m / 2] |= rank << 16;
                }
            }
            sync_block();
            // Thread d: the tile's count of digit d goes out first, for the tiles after this one
            // to read; then the warps' counts of the digit become their offsets within the
            // digit, and then within the tile.
            let mut total = 0u32;
            for v in 0..WARPS {
                total += counts[(v * RADIX) as u32 + d];
            }
            if d == RADIX as u32 - 1 {
                // The last tile's padding is not its keys' (no tile reads this count, but it
                // stays within the state word's 30 bits).
                total -= TILE as u32 - valid;
            }
            publish_count(states, region, t, d, total);
            let below = block_exclusive_sum(total, warp_totals);
            let mut before = below;
            for v in 0..WARPS {
                let count = counts[(v * RADIX) as u32 + d];
                counts[(v * RADIX) as u32 + d] = before;
                before += count;
            }
            sync_block();
            // The tile, sorted by digit, into shared memory, each key at its rank plus its
            // warp's offset for its digit, and where its value is, or the values (loaded all
            // at once) likewise ([`gathers_values`]). This
            // needs no other tile, so it comes before the look-back, during which the registers
            // hold only the block's next tile, on its way.
            for m in 0..ITEMS {
                let place = place_in_tile(ranks, m, counts, warp_counts + digit_of(held[m], shift));
                staged[place] = held[m];
                if with_values && gathers_values::<K>() {
                    origins[place] = (in_tile + 32 * m as u32) as u16;
                }
            }
            if with_values && !gathers_values::<K>() {
                let mut values = [0u32; ITEMS];
                for m in 0..ITEMS {
                    let i = first + 32 * m as u32;
                    if i < n {
                        values[m] = src_values[i];
                    }
                }
                for m in 0..ITEMS {
                    staged_values[place_in_tile(ranks, m, counts, warp_counts + digit_of(held[m], shift))] = values[m];
                }
            }
            // The block's next tile is loaded now, to arrive while this one waits for its
            // look-back and goes out.
            let next = t + grid_dim();
            if next < tiles {
                load_tile(src, &mut held, next, in_tile);
            }
            let exclusive = look_back(states, region, t, d, total);
            offsets[d] = start + exclusive - below;
            if with_values && gathers_values::<K>() {
                wait_async_copies();
            }
            sync_block();
            // The next tile's counts start from zero; its ranking waits at the barrier below.
            for v in 0..WARPS {
                counts[(v * RADIX) as u32 + d] = 0;
            }
            write_tile(dst, dst_values, with_values, shift, valid, staged, staged_values, origins, offsets);
            // The next tile's writes to shared memory wait for this one's reads.
            sync_block();
            t = next;
        }
    }

    /// A tile sorted by digit (bits `shift` up) in `staged` (`valid` keys, and `with_values`
    /// their values in `staged_values`) out to `dst` (`dst_values`): each digit's run to
    /// `offsets[digit]` on, consecutive threads to consecutive places; the values after the
    /// keys, each finding its place again from its key, and itself where
    /// [`value_at`] says (through `origins`). A whole tile takes loops of a fixed
    /// count without a bound to test; the last, partial one a loop up to `valid`.
    #[device]
    fn write_tile<K: Int>(
        dst: &mut [K],
        dst_values: &mut [u32],
        with_values: bool,
        shift: u32,
        valid: u32,
        staged: &[K],
        staged_values: &[u32],
        origins: &[u16],
        offsets: &[u32],
    ) {
        if valid == TILE as u32 {
            for k in 0..ITEMS as u32 {
                let i = k * THREADS as u32 + thread_idx();
                let key = staged[i];
                dst[offsets[digit_of(key, shift)] + i] = key;
            }
            if with_values {
                for k in 0..ITEMS as u32 {
                    let i = k * THREADS as u32 + thread_idx();
                    dst_values[offsets[digit_of(staged[i], shift)] + i] = staged_values[value_at::<K>(origins, i)];
                }
            }
        } else {
            for i in block_stride(0..valid) {
                let key = staged[i];
                dst[offsets[digit_of(key, shift)] + i] = key;
            }
            if with_values {
                for i in block_stride(0..valid) {
                    dst_values[offsets[digit_of(staged[i], shift)] + i] = staged_values[value_at::<K>(origins, i)];
                }
            }
        }
    }

    /// Digit passes `2 · pair` (from `keys` into `alt`) and `2 · pair + 1` (back), with the
    /// grid barrier between them: each pass names its source and destination, where swapping
    /// the buffers after each pass kept their addresses and lengths live in registers (a spill).
    /// The other arguments are [`scatter_pass`]'s.
    #[device]
    fn scatter_pair<K: Int>(
        keys: &mut [K],
        alt: &mut [K],
        values: &mut [u32],
        alt_values: &mut [u32],
        with_values: bool,
        hist: &[u32],
        passes: u32,
        states: &mut [u32],
        pair: u32,
        counts: &mut [u32],
        staged: &mut [K],
        staged_values: &mut [u32],
        origins: &mut [u16],
        offsets: &mut [u32],
        warp_totals: &mut [u32],
    ) {
        scatter_pass(
            keys,
            alt,
            values,
            alt_values,
            with_values,
            hist,
            passes,
            states,
            2 * pair,
            counts,
            staged,
            staged_values,
            origins,
            offsets,
            warp_totals,
        );
        grid_sync();
        scatter_pass(
            alt,
            keys,
            alt_values,
            values,
            with_values,
            hist,
            passes,
            states,
            2 * pair + 1,
            counts,
            staged,
            staged_values,
            origins,
            offsets,
            warp_totals,
        );
    }

    /// Sorts `keys` ascending, and with `with_values` the `values` along with them, stably;
    /// `alt` and `alt_values` (as long as `keys` and `values`) are the other side of each
    /// pass. `hist` takes `4 × RADIX × HIST_COPIES` words, zero at launch; `states` at least `4 × RADIX`
    /// words per tile (see [`state_words`](super::state_words)). Blocks of [`THREADS`]. Its
    /// tile's staged values and their origins are in dynamic shared memory, sized 0 without
    /// values: a sort of keys alone takes 33 KiB a block, of pairs 69 KiB (three blocks fit an
    /// H100's or H200's 228 KiB per SM, two an A100's 164).
    #[grid_phases(threads = 256, blocks_per_sm = 3)]
    pub fn onesweep_u32(
        keys: &mut [u32],
        alt: &mut [u32],
        values: &mut [u32],
        alt_values: &mut [u32],
        hist: &mut [u32],
        states: &mut [u32],
        with_values: bool,
    ) {
        const PASSES: u32 = 4;
        assert!(BLOCK_SIZE == THREADS, "the radix sort takes blocks of 256 threads, one per digit");
        assert!(alt.len() == keys.len(), "onesweep_u32's alt has the length of keys");
        assert!(
            !with_values || (values.len() == keys.len() && alt_values.len() == keys.len()),
            "onesweep_u32's values have the length of keys"
        );
        assert!(
            hist.len() >= PASSES as usize * RADIX * HIST_COPIES,
            "onesweep_u32's hist takes 4 × 256 words per copy, 16 copies"
        );
        assert!(
            states.len() >= PASSES as usize * RADIX * keys.len().div_ceil(TILE),
            "onesweep_u32's states take 4 × 256 words per tile: size them with onesweep::state_words"
        );
        let mut counts = shared_array::<u32, { WARPS * RADIX }>();
        let mut staged = shared_array::<u32, TILE>();
        let mut staged_values = shared_slice::<u32>(if with_values { TILE } else { 0 });
        let mut origins = shared_slice::<u16>(if with_values { TILE } else { 0 });
        let mut offsets = shared_array::<u32, RADIX>();
        let mut warp_totals = shared_array::<u32, WARPS>();
        count_digits(keys, hist, states, &mut counts, PASSES);
        grid_sync();
        for pair in 0..PASSES / 2 {
            scatter_pair(
                keys,
                alt,
                values,
                alt_values,
                with_values,
                hist,
                PASSES,
                states,
                pair,
                &mut counts,
                &mut staged,
                &mut staged_values,
                &mut origins,
                &mut offsets,
                &mut warp_totals,
            );
            if 2 * pair + 2 < PASSES {
                grid_sync();
            }
        }
    }

    /// [`onesweep_u32`] for `u64` keys: eight passes, `hist` of `8 × RADIX × HIST_COPIES` words and
    /// `states` of `8 × RADIX` words per tile. Its tile of keys is staged in
    /// dynamic shared memory: with the other arrays it exceeds the 48 KiB a block's static
    /// shared arrays may take. A block takes 81 KiB: two fit an H100's or H200's 228 KiB per
    /// SM, but only one an A100's 164 (each block also reserves 1 KiB), where tiles of 5,120
    /// keys (69 KiB) fitted two.
    #[grid_phases(threads = 256, blocks_per_sm = 2)]
    pub fn onesweep_u64(
        keys: &mut [u64],
        alt: &mut [u64],
        values: &mut [u32],
        alt_values: &mut [u32],
        hist: &mut [u32],
        states: &mut [u32],
        with_values: bool,
    ) {
        const PASSES: u32 = 8;
        assert!(BLOCK_SIZE == THREADS, "the radix sort takes blocks of 256 threads, one per digit");
        assert!(alt.len() == keys.len(), "onesweep_u64's alt has the length of keys");
        assert!(
            !with_values || (values.len() == keys.len() && alt_values.len() == keys.len()),
            "onesweep_u64's values have the length of keys"
        );
        assert!(
            hist.len() >= PASSES as usize * RADIX * HIST_COPIES,
            "onesweep_u64's hist takes 8 × 256 words per copy, 16 copies"
        );
        assert!(
            states.len() >= PASSES as usize * RADIX * keys.len().div_ceil(TILE),
            "onesweep_u64's states take 8 × 256 words per tile: size them with onesweep::state_words"
        );
        let mut counts = shared_array::<u32, { WARPS * RADIX }>();
        let mut staged = shared_slice::<u64>(TILE);
        let mut staged_values = shared_array::<u32, TILE>();
        // `u64` keys' values pass through registers (`gathers_values`).
        let mut origins = shared_slice::<u16>(0);
        let mut offsets = shared_array::<u32, RADIX>();
        let mut warp_totals = shared_array::<u32, WARPS>();
        count_digits(keys, hist, states, &mut counts, PASSES);
        grid_sync();
        for pair in 0..PASSES / 2 {
            scatter_pair(
                keys,
                alt,
                values,
                alt_values,
                with_values,
                hist,
                PASSES,
                states,
                pair,
                &mut counts,
                &mut staged,
                &mut staged_values,
                &mut origins,
                &mut offsets,
                &mut warp_totals,
            );
            if 2 * pair + 2 < PASSES {
                grid_sync();
            }
        }
    }
}

pub use lsd_lookback::{onesweep_u32, onesweep_u64, HIST_COPIES, ITEMS, RADIX, THREADS, TILE};

// The ranks travel two to a register: an even count of them, each below 2^16.
const _: () = assert!(ITEMS.is_multiple_of(2) && 32 * ITEMS <= 1 << 16);
// A tile's values travel in chunks of four, the same count from every thread.
const _: () = assert!(TILE.is_multiple_of(4 * THREADS));

/// The most keys one sort takes: the look-back state words count in 30 bits.
pub const MAX_KEYS: usize = (1 << 30) - 1;

/// Tiles of `n` keys.
pub fn tiles(n: usize) -> usize {
    n.div_ceil(TILE)
}

/// The length of `states` for `n` keys of `passes` digits: [`RADIX`] words per tile and pass.
pub fn state_words(n: usize, passes: usize) -> usize {
    (tiles(n) * passes * RADIX).max(1)
}

/// The unsigned words the look-back kernels sort: `u32` (four digit passes) and `u64` (eight).
pub trait OnesweepWord: super::radix::RadixWord {
    /// The kernel that sorts words of this width.
    fn onesweep_kernel() -> &'static KernelSpec;

    /// The largest co-resident grid of [`onesweep_kernel`](Self::onesweep_kernel) for `launch`.
    fn onesweep_max_coresident_blocks(gpu: &Gpu, launch: &Launch) -> Result<u32>;

    /// The configuration a launch of [`onesweep_kernel`](Self::onesweep_kernel) with `launch`
    /// runs (see [`Gpu::launch_config`]).
    fn onesweep_launch_config(gpu: &Gpu, launch: &Launch) -> Result<LaunchConfig>;

    /// Launches [`onesweep_kernel`](Self::onesweep_kernel) on buffers sized as it asserts, with a new
    /// `scratch` ([`OnesweepScratch::new`]) each time: [`sort_words`] is the checked entry.
    #[allow(clippy::too_many_arguments)]
    fn launch_onesweep(
        gpu: &Gpu,
        launch: &Launch,
        keys: &mut DeviceBuffer<Self>,
        alt: &mut DeviceBuffer<Self>,
        values: &mut DeviceBuffer<u32>,
        alt_values: &mut DeviceBuffer<u32>,
        scratch: &mut OnesweepScratch,
        with_values: bool,
    ) -> Result<LaunchReport>;
}

impl OnesweepWord for u32 {
    fn onesweep_kernel() -> &'static KernelSpec {
        &onesweep_u32::KERNEL
    }

    // The kernel's staged values are a shared slice of constant length: empty buffers stand in
    // for the call's, whose lengths it does not depend on.
    fn onesweep_max_coresident_blocks(gpu: &Gpu, launch: &Launch) -> Result<u32> {
        let words = gpu.zeros::<u32>(0)?;
        onesweep_u32::max_coresident_blocks(gpu, launch, &words, &words, &words, &words, &words, &words, false)
    }

    fn onesweep_launch_config(gpu: &Gpu, launch: &Launch) -> Result<LaunchConfig> {
        let words = gpu.zeros::<u32>(0)?;
        onesweep_u32::launch_config(gpu, launch, &words, &words, &words, &words, &words, &words, false)
    }

    fn launch_onesweep(
        gpu: &Gpu,
        launch: &Launch,
        keys: &mut DeviceBuffer<u32>,
        alt: &mut DeviceBuffer<u32>,
        values: &mut DeviceBuffer<u32>,
        alt_values: &mut DeviceBuffer<u32>,
        scratch: &mut OnesweepScratch,
        with_values: bool,
    ) -> Result<LaunchReport> {
        let OnesweepScratch { hist, states } = scratch;
        onesweep_u32::launch_with(gpu, launch, keys, alt, values, alt_values, hist, states, with_values)
    }
}

impl OnesweepWord for u64 {
    fn onesweep_kernel() -> &'static KernelSpec {
        &onesweep_u64::KERNEL
    }

    // The kernel's staged tile is a shared slice of constant length: empty buffers stand in for
    // the call's, whose lengths it does not depend on.
    fn onesweep_max_coresident_blocks(gpu: &Gpu, launch: &Launch) -> Result<u32> {
        let (words, counts) = (gpu.zeros::<u64>(0)?, gpu.zeros::<u32>(0)?);
        onesweep_u64::max_coresident_blocks(gpu, launch, &words, &words, &counts, &counts, &counts, &counts, false)
    }

    fn onesweep_launch_config(gpu: &Gpu, launch: &Launch) -> Result<LaunchConfig> {
        let (words, counts) = (gpu.zeros::<u64>(0)?, gpu.zeros::<u32>(0)?);
        onesweep_u64::launch_config(gpu, launch, &words, &words, &counts, &counts, &counts, &counts, false)
    }

    fn launch_onesweep(
        gpu: &Gpu,
        launch: &Launch,
        keys: &mut DeviceBuffer<u64>,
        alt: &mut DeviceBuffer<u64>,
        values: &mut DeviceBuffer<u32>,
        alt_values: &mut DeviceBuffer<u32>,
        scratch: &mut OnesweepScratch,
        with_values: bool,
    ) -> Result<LaunchReport> {
        let OnesweepScratch { hist, states } = scratch;
        onesweep_u64::launch_with(gpu, launch, keys, alt, values, alt_values, hist, states, with_values)
    }
}

/// The radix sort's scratch: the digit histograms, which must be zero at launch (a new
/// scratch's are; a launch leaves them filled), and the look-back states, which the kernel
/// zeroes itself.
#[derive(Debug)]
pub struct OnesweepScratch {
    hist: DeviceBuffer<u32>,
    states: DeviceBuffer<u32>,
}

impl OnesweepScratch {
    /// Scratch for sorts of up to `n` words of type `W`.
    pub fn new<W: OnesweepWord>(gpu: &Gpu, n: usize) -> Result<OnesweepScratch> {
        Ok(OnesweepScratch {
            hist: gpu.zeros(W::PASSES * RADIX * HIST_COPIES)?,
            states: gpu.zeros(state_words(n, W::PASSES))?,
        })
    }
}

/// Sorts the words of `keys` ascending on `gpu`, in place, stably, and with `values` (as
/// many as keys) each value along with its key. The launch runs blocks of [`THREADS`]
/// threads (a launch naming another size is refused); one that names no grid runs the
/// largest co-resident grid, or one block per tile where there are fewer tiles.
///
/// Fails with [`Error::InvalidInput`] where `values` is not as long as `keys` or there are
/// more than [`MAX_KEYS`] keys.
pub fn sort_words<W: OnesweepWord>(
    gpu: &Gpu,
    launch: &Launch,
    keys: &mut DeviceBuffer<W>,
    values: Option<&mut DeviceBuffer<u32>>,
) -> Result<LaunchReport> {
    let n = keys.len();
    check_input(W::onesweep_kernel().name, n, values.as_ref().map(|v| v.len()))?;
    if n == 0 {
        return Ok(LaunchReport::no_launch(launch.selected_barrier()));
    }
    let launch = shape::<W>(gpu, launch, n)?;
    let with_values = values.is_some();
    let mut alt = gpu.zeros::<W>(n)?;
    let mut alt_values = gpu.zeros::<u32>(if with_values { n } else { 0 })?;
    let mut no_values = gpu.zeros::<u32>(0)?;
    let values = match values {
        Some(values) => values,
        None => &mut no_values,
    };
    let mut scratch = OnesweepScratch::new::<W>(gpu, n)?;
    W::launch_onesweep(gpu, &launch, keys, &mut alt, values, &mut alt_values, &mut scratch, with_values)
}

/// Refuses inputs the kernels cannot sort: values not one per key, or too many keys.
fn check_input(kernel: &str, n: usize, values: Option<usize>) -> Result<()> {
    if n > MAX_KEYS {
        let reason = format!("{n} keys, more than the {MAX_KEYS} one sort takes (its tiles count in 30 bits)");
        return Err(Error::InvalidInput { kernel: kernel.to_owned(), reason });
    }
    super::radix::check_input(kernel, n, values)
}

/// `launch` with blocks of [`THREADS`] threads and, where it names no grid, the largest
/// co-resident grid capped at one block per tile; refuses a launch that names another block
/// size, or a split launch that names a grid its segments cannot hold at once. (Never tuned: the kernel's histograms must be zero at launch, which a tuning run's
/// repeats would not keep.)
fn shape<W: OnesweepWord>(gpu: &Gpu, launch: &Launch, n: usize) -> Result<Launch> {
    let kernel = W::onesweep_kernel();
    match launch.requested_threads() {
        Some(threads) if threads as usize != THREADS => {
            return Err(Error::RefusedBlockSize {
                kernel: kernel.name.to_owned(),
                threads,
                reason: "its threads own one digit each of 256".to_owned(),
            })
        }
        _ => {}
    }
    let launch = launch.clone().threads(THREADS as u32);
    if let Some(blocks) = launch.requested_blocks() {
        if launch.selected_barrier() == Barrier::MultiLaunch {
            let resident = W::onesweep_max_coresident_blocks(gpu, &launch)?;
            if blocks > resident {
                let reason = format!(
                    "its split form's blocks wait for the tiles of the blocks before them, so its grid \
                     must be resident in every segment: launch at most {resident} blocks (leave \
                     Launch::blocks unset to get them), not {blocks}"
                );
                return Err(Error::InvalidInput { kernel: kernel.name.to_owned(), reason });
            }
        }
        return Ok(launch);
    }
    // A block waits for the tiles of the blocks before it, in every digit pass, so the split
    // form's passes need their whole grid resident as the fused kernel does: its default grid
    // is the largest resident in every segment.
    super::grid_for_work_with(&launch, kernel, tiles(n), |shape| W::onesweep_launch_config(gpu, shape))
}
