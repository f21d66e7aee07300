//! LSD radix sort of unsigned words (`u32`, `u64`) as one fused kernel: per 8-bit digit, a
//! phase that counts the digit in each block's run of keys and a phase that moves every key to
//! its place, each separated from the next by `grid_sync()`. The barrier makes the offsets
//! plain sums: no block ever waits for another inside a phase.
//!
//! - **Runs.** Each block takes a run of consecutive keys (the keys split evenly among the
//!   blocks, at multiples of 32), the same run in every phase, in tiles of [`TILE`] keys (the
//!   run's last one partial).
//! - **Count phases** (one per byte, lowest first): every block counts the digit of each key
//!   of its run in shared memory (one counter set per warp; a warp whose 32 keys share the
//!   digit adds 32 once), then writes its 256 counts to `counts` and adds them into its
//!   group's sums (a group is [`GROUP`] consecutive blocks).
//! - **Scatter phases:** thread `d` of every block adds up where digit `d`'s keys of its run
//!   start: the keys of smaller digits (a block scan of the digit totals), then the earlier
//!   groups' sums and the earlier blocks of its own group, a few dozen loads, and where its
//!   run's keys of digit `d` end. Then the block walks its tiles from the last to the first
//!   (the count phase read the last ones most recently, so more of them are still in L2),
//!   each tile's keys of a digit placed just before the next tile's. Warp `w` holds the
//!   tile's `w`-th run of
//!   `32 × ITEMS` keys, lane `l` the keys `l`, `l + 32`, … of it, so that the warp's loads
//!   cover 128 contiguous bytes. The warps count their digits, a scan turns the counts into
//!   each warp's first place per digit in the tile sorted by digit, and a key's place there is
//!   that plus its rank among the warp's keys of the digit before it: `match_any` of the
//!   digit as a `u8` (eight ballots per key, many times faster on an H200 than the hardware's
//!   match of a wider value) finds the lanes that hold its digit, the lowest lane of each
//!   group moving the warp's place on by one shared atomic.
//!   The tile, sorted by digit in shared memory, goes out with consecutive threads writing
//!   consecutive places of each digit's run; thread `d` carries where its digit's keys of the
//!   tiles still to come end, from tile to tile, in a register. The next tile's keys are
//!   loaded while this one's are written.
//! - A pass whose digit every key shares (one digit's total is every key: the high bytes of
//!   small keys, say) moves no key relative to another: it copies the run as it is.
//! - Values, if any, follow their keys through shared memory, in a buffer of their own.
//!
//! The sort is stable: keys with equal digits keep their order in every pass (lanes in order
//! within a warp's step, steps in order, warps in order, tiles in order, runs in block order).
//! It reads every key twice per pass and writes it once; no block waits for another except at
//! the grid barriers, so it runs on any grid, fused or split into one launch per phase.
//! Indices are `u32`: a sort takes at most [`MAX_KEYS`] keys.
//!
//! ```
//! use gsync::kernels::radix::sort_words;
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
use crate::{Error, Gpu, KernelSpec, Launch, LaunchReport, Result};

/// The radix sort's kernels and the steps they share.
#[gsync::kernels]
mod lsd {
    /// Digits per pass: 8 bits.
    pub const RADIX: usize = 256;
    /// Keys each thread holds of a tile.
    pub const ITEMS: usize = 12;
    /// Threads per block: one per digit.
    pub const THREADS: usize = 256;
    /// Keys per tile.
    pub const TILE: usize = ITEMS * THREADS;
    /// Consecutive blocks whose counts are summed together, so that a block finds the keys of
    /// the blocks before it in a few dozen loads.
    pub const GROUP: u32 = 32;
    /// Warps per block.
    const WARPS: usize = THREADS / 32;
    /// Consecutive keys of a tile that each warp holds.
    const WARP_KEYS: usize = 32 * ITEMS;

    /// The digit of `key` from bit `shift` up.
    #[device]
    fn digit_of<K: Int>(key: K, shift: u32) -> u32 {
        ((key >> shift) as u32) & 255
    }

    /// Where the run of keys of block `block` starts among `n`: the blocks split the keys
    /// evenly, in order (block `b + 1`'s run starts where block `b`'s ends), at multiples of 32
    /// so that a warp's loads stay aligned; block `grid_dim()` starts at `n`.
    #[device]
    fn run_start(n: u32, block: u32) -> u32 {
        let mut start = n;
        if block < grid_dim() {
            start = ((block as u64 * n as u64) / grid_dim() as u64) as u32 & !31u32;
        }
        start
    }

    /// The sum of `value` over the threads of the block before this one (every thread of
    /// the block calls it, with the block size [`THREADS`]); `warp_totals` holds a word per
    /// warp.
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
        // The next call's writes wait for every thread's reads.
        sync_block();
        before + inclusive - value
    }

    /// Counts `digit` in the warp's counters (`warp_counts` from `at`): where the whole warp
    /// holds the one digit (sorted or alike keys), one add of 32 rather than 32 adds to one
    /// word. Every lane of the warp calls it.
    #[device]
    fn count_warp_digit(digit: u32, warp_counts: &mut [u32], at: u32) {
        if all(digit == shfl(digit, 0)) {
            if lane_id() == 0 {
                let _ = warp_counts.atomic_add(at + digit, 32);
            }
        } else {
            let _ = warp_counts.atomic_add(at + digit, 1);
        }
    }

    /// A count phase: the digit at bit `shift` of the keys of this block's run, counted in
    /// `warp_counts` (a set of [`RADIX`] per warp) and written to `counts`: the block's counts
    /// at `(pass · grid + block) · RADIX`, and added into its group's sums at
    /// `sums + (pass · groups + group) · RADIX`.
    #[device]
    fn count_run<K: Int>(keys: &[K], counts: &mut [u32], sums: u32, pass: u32, warp_counts: &mut [u32]) {
        let n = keys.len() as u32;
        let shift = 8 * pass;
        let d = thread_idx();
        for w in 0..WARPS {
            warp_counts[w * RADIX + d as usize] = 0;
        }
        sync_block();
        let begin = run_start(n, block_idx());
        let end = run_start(n, block_idx() + 1);
        let at = warp_id() * RADIX as u32;
        // Four chunks of four keys per thread at a time, each load of the block's threads
        // consecutive; rounds the whole block takes, so that the warp votes together.
        let first = begin / 4;
        let chunks = end / 4 - first;
        let step = 4 * THREADS as u32;
        let rounds = chunks / step;
        for r in 0..rounds {
            let c = first + r * step + thread_idx();
            let a = keys.load_chunk::<4>(c as usize);
            let b = keys.load_chunk::<4>((c + THREADS as u32) as usize);
            let e = keys.load_chunk::<4>((c + 2 * THREADS as u32) as usize);
            let f = keys.load_chunk::<4>((c + 3 * THREADS as u32) as usize);
            for j in 0..4 {
                count_warp_digit(digit_of(a[j], shift), warp_counts, at);
                count_warp_digit(digit_of(b[j], shift), warp_counts, at);
                count_warp_digit(digit_of(e[j], shift), warp_counts, at);
                count_warp_digit(digit_of(f[j], shift), warp_counts, at);
            }
        }
        for c in block_stride(first + rounds * step..end / 4) {
            let a = keys.load_chunk::<4>(c as usize);
            for j in 0..4 {
                let digit = digit_of(a[j], shift);
                let _ = warp_counts.atomic_add(at + digit, 1);
            }
        }
        for i in block_stride(4 * (end / 4)..end) {
            let digit = digit_of(keys[i as usize], shift);
            let _ = warp_counts.atomic_add(at + digit, 1);
        }
        sync_block();
        let mut total = 0u32;
        for w in 0..WARPS {
            total += warp_counts[w * RADIX + d as usize];
        }
        let blocks = grid_dim();
        counts[(pass * blocks + block_idx()) * RADIX as u32 + d] = total;
        if total != 0 {
            let group = pass * blocks.div_ceil(GROUP) + block_idx() / GROUP;
            let _ = counts.atomic_add(sums + group * RADIX as u32 + d, total);
        }
    }

    /// Keys `[begin, end)` of `src` (and, `with_values`, of `src_values`) copied to `dst`
    /// (`dst_values`) as they are, four at a time where `begin` and `end` allow.
    #[device]
    fn copy_run<K: Int>(
        src: &[K],
        dst: &mut [K],
        src_values: &[u32],
        dst_values: &mut [u32],
        with_values: bool,
        begin: u32,
        end: u32,
    ) {
        for c in block_stride(begin / 4..end / 4) {
            let chunk = src.load_chunk::<4>(c as usize);
            dst.store_chunk(c as usize, chunk);
            if with_values {
                let values = src_values.load_chunk::<4>(c as usize);
                dst_values.store_chunk(c as usize, values);
            }
        }
        for i in block_stride((4 * (end / 4)).max(begin)..end) {
            dst[i as usize] = src[i as usize];
            if with_values {
                dst_values[i as usize] = src_values[i as usize];
            }
        }
    }

    /// A scatter phase: the keys of this block's run of `src` (and, `with_values`, their
    /// values) to their places in `dst` (`dst_values`) by the digit at bit `8 · pass`, stably,
    /// from the counts the count phase left (see [`count_run`]); or, where every key has the
    /// same digit, a copy. `warp_counts`, `staged`, `staged_values`, `offsets` and
    /// `warp_totals` are the block's shared arrays.
    #[device]
    fn scatter_run<K: Int>(
        src: &[K],
        dst: &mut [K],
        src_values: &[u32],
        dst_values: &mut [u32],
        with_values: bool,
        counts: &[u32],
        sums: u32,
        pass: u32,
        warp_counts: &mut [u32],
        staged: &mut [K],
        staged_values: &mut [u32],
        offsets: &mut [u32],
        warp_totals: &mut [u32],
    ) {
        let n = src.len() as u32;
        let shift = 8 * pass;
        let d = thread_idx();
        let blocks = grid_dim();
        let groups = blocks.div_ceil(GROUP);
        let group = block_idx() / GROUP;
        // Digit d's keys in every block, and in the blocks before this one.
        let mut total = 0u32;
        let mut before = 0u32;
        for h in 0..groups {
            let sum = counts[sums + (pass * groups + h) * RADIX as u32 + d];
            total += sum;
            if h < group {
                before += sum;
            }
        }
        for b in group * GROUP..block_idx() {
            before += counts[(pass * blocks + b) * RADIX as u32 + d];
        }
        let own = counts[(pass * blocks + block_idx()) * RADIX as u32 + d];
        let start = block_exclusive_sum(total, warp_totals);
        offsets[d] = total;
        sync_block();
        // The same for every thread: whether the first key's digit is every key's.
        let shared_digit = n == 0 || offsets[digit_of(src[0], shift)] == n;
        sync_block();
        let begin = run_start(n, block_idx());
        let end = run_start(n, block_idx() + 1);
        if shared_digit {
            copy_run(src, dst, src_values, dst_values, with_values, begin, end);
        } else {
            scatter_tiles(
                src,
                dst,
                src_values,
                dst_values,
                with_values,
                shift,
                start + before + own,
                begin,
                end,
                warp_counts,
                staged,
                staged_values,
                offsets,
                warp_totals,
            );
        }
    }

    /// The digit of the key a thread holds at `index` of the keys, or [`RADIX`], a digit no
    /// key has, past the end (`n` keys).
    #[device]
    fn held_digit<K: Int>(key: K, shift: u32, index: u32, n: u32) -> u32 {
        let mut digit = RADIX as u32;
        if index < n {
            digit = digit_of(key, shift);
        }
        digit
    }

    /// The lanes of the warp whose `digit` is this lane's, among those where `valid` holds.
    /// (`match_any` of an 8-bit value is eight ballots, one per bit: the hardware's match
    /// instruction, which an H200 runs many times slower, held 60% of a profile's stall
    /// samples.) Every lane of the warp calls it.
    #[device]
    fn match_digit(digit: u32, valid: bool) -> u32 {
        ballot(valid) & match_any(digit as u8)
    }

    /// A tile sorted by digit (bits `shift` up) in `staged` (`valid` keys, and `with_values`
    /// their values in `staged_values`) out to `dst` (`dst_values`): each digit's run of the
    /// tile to `offsets[digit]` on, consecutive threads to consecutive places. A whole tile
    /// takes loops without branches, which the compiler unrolls, so that their loads overlap;
    /// the values go out after the keys, each finding its place again from its key.
    #[device]
    fn write_tile<K: Int>(
        dst: &mut [K],
        dst_values: &mut [u32],
        with_values: bool,
        shift: u32,
        valid: u32,
        staged: &[K],
        staged_values: &[u32],
        offsets: &[u32],
    ) {
        if valid == TILE as u32 {
            // Three places a third of a tile apart at a time, without branches, so that their
            // loads overlap (a loop the compiler does not unroll whole, which keeps fewer
            // registers).
            let third = (TILE / 3) as u32;
            for i in block_stride(0..third) {
                let a = staged[i];
                let b = staged[i + third];
                let c = staged[i + 2 * third];
                dst[(offsets[digit_of(a, shift)] + i) as usize] = a;
                dst[(offsets[digit_of(b, shift)] + i + third) as usize] = b;
                dst[(offsets[digit_of(c, shift)] + i + 2 * third) as usize] = c;
            }
            if with_values {
                for i in block_stride(0..third) {
                    let a = offsets[digit_of(staged[i], shift)] + i;
                    let b = offsets[digit_of(staged[i + third], shift)] + i + third;
                    let c = offsets[digit_of(staged[i + 2 * third], shift)] + i + 2 * third;
                    dst_values[a as usize] = staged_values[i];
                    dst_values[b as usize] = staged_values[i + third];
                    dst_values[c as usize] = staged_values[i + 2 * third];
                }
            }
        } else {
            // (A loop the compiler does not unroll whole, which keeps fewer registers.)
            for i in block_stride(0..valid) {
                let key = staged[i];
                let place = offsets[digit_of(key, shift)] + i;
                dst[place as usize] = key;
                if with_values {
                    dst_values[place as usize] = staged_values[i];
                }
            }
        }
    }

    /// [`scatter_run`] where the keys' digits differ: the tiles of keys `[begin, end)`, from
    /// the last to the first (the count phase read the last most recently, which leaves the
    /// most of them in L2), each sorted by digit (bits `shift` up) in shared memory and
    /// written out run by run. Digit `d`'s keys of the run end at `next` (thread `d`'s), which
    /// moves back by each tile's count of the digit.
    #[device]
    fn scatter_tiles<K: Int>(
        src: &[K],
        dst: &mut [K],
        src_values: &[u32],
        dst_values: &mut [u32],
        with_values: bool,
        shift: u32,
        next: u32,
        begin: u32,
        end: u32,
        warp_counts: &mut [u32],
        staged: &mut [K],
        staged_values: &mut [u32],
        offsets: &mut [u32],
        warp_totals: &mut [u32],
    ) {
        let d = thread_idx();
        let lane = lane_id();
        let at = warp_id() * RADIX as u32;
        let lanes_below = (1u32 << lane) - 1;
        let mut next = next;
        for w in 0..WARPS {
            warp_counts[w * RADIX + d as usize] = 0;
        }
        let mut held = [K::ZERO; ITEMS];
        let mut t = (end - begin).div_ceil(TILE as u32);
        let mut tile_begin = begin + t * TILE as u32;
        let warp_first = warp_id() * WARP_KEYS as u32 + lane;
        if t > 0 {
            tile_begin -= TILE as u32;
            for m in 0..ITEMS {
                let i = tile_begin + warp_first + 32 * m as u32;
                if i < end {
                    held[m] = src[i as usize];
                }
            }
        }
        sync_block();
        while t > 0 {
            t -= 1;
            let valid = (end - tile_begin).min(TILE as u32);
            let first = tile_begin + warp_first;
            // Each warp counts its keys' digits.
            for m in 0..ITEMS {
                let digit = held_digit(held[m], shift, first + 32 * m as u32, end);
                if digit < RADIX as u32 {
                    let _ = warp_counts.atomic_add(at + digit, 1);
                }
            }
            sync_block();
            // Thread d: the tile's keys of digit d start after those of smaller digits; each
            // warp's after those of the warps before it. Their places in `dst` end at `next`.
            let mut tile_count = 0u32;
            for w in 0..WARPS {
                tile_count += warp_counts[w * RADIX + d as usize];
            }
            let tile_start = block_exclusive_sum(tile_count, warp_totals);
            let mut place = tile_start;
            for w in 0..WARPS {
                let count = warp_counts[w * RADIX + d as usize];
                warp_counts[w * RADIX + d as usize] = place;
                place += count;
            }
            next -= tile_count;
            offsets[d] = next - tile_start;
            sync_block();
            // Each key to its place in the tile sorted by digit: its warp's first place for
            // the digit, moved on by the lanes before it that hold the digit.
            let mut places = [0u32; ITEMS];
            for m in 0..ITEMS {
                let valid = first + 32 * (m as u32) < end;
                let digit = digit_of(held[m], shift);
                let peers = match_digit(digit, valid);
                // (A lane past the end may have no peer: lane 0 then stands in as its leader.)
                let leader = peers.trailing_zeros() & 31;
                let mut base = 0u32;
                if lane == leader && valid {
                    base = warp_counts.atomic_add(at + digit, peers.count_ones());
                }
                places[m] = shfl(base, leader) + (peers & lanes_below).count_ones();
                if valid {
                    staged[places[m]] = held[m];
                }
            }
            // The values, loaded only now (they need no ranking), each to its key's place.
            if with_values {
                for m in 0..ITEMS {
                    let i = first + 32 * m as u32;
                    if i < end {
                        staged_values[places[m]] = src_values[i as usize];
                    }
                }
            }
            sync_block();
            // The next tile's keys are on their way while this one's go out.
            if t > 0 {
                tile_begin -= TILE as u32;
                for m in 0..ITEMS {
                    let i = tile_begin + warp_first + 32 * m as u32;
                    held[m] = src[i as usize];
                }
            }
            for w in 0..WARPS {
                warp_counts[w * RADIX + d as usize] = 0;
            }
            write_tile(dst, dst_values, with_values, shift, valid, staged, staged_values, offsets);
            // The next tile's writes to shared memory wait for this one's reads.
            sync_block();
        }
    }

    /// Sorts `keys` ascending, and with `with_values` the `values` along with them, stably;
    /// `alt` and `alt_values` (as long as `keys` and `values`) are the other side of each
    /// pass. `counts` takes [`count_words`](super::count_words)`(grid, 4)` words, whose
    /// group sums must be zero at launch. Blocks of [`THREADS`].
    #[grid_phases(threads = 256, blocks_per_sm = 3)]
    pub fn radix_sort_u32(
        mut keys: &mut [u32],
        mut alt: &mut [u32],
        mut values: &mut [u32],
        mut alt_values: &mut [u32],
        counts: &mut [u32],
        with_values: bool,
    ) {
        const PASSES: u32 = 4;
        assert!(BLOCK_SIZE == THREADS, "the radix sort takes blocks of 256 threads, one per digit");
        assert!(alt.len() == keys.len(), "radix_sort_u32's alt has the length of keys");
        assert!(
            !with_values || (values.len() == keys.len() && alt_values.len() == keys.len()),
            "radix_sort_u32's values have the length of keys"
        );
        let sums = PASSES * grid_dim() * RADIX as u32;
        assert!(
            counts.len() >= (sums + PASSES * grid_dim().div_ceil(GROUP) * RADIX as u32) as usize,
            "radix_sort_u32's counts take 4 × 256 words per block and per group: size them with radix::count_words"
        );
        let mut warp_counts = shared_array::<u32, { WARPS * RADIX }>();
        let mut staged = shared_array::<u32, TILE>();
        let mut staged_values = shared_array::<u32, TILE>();
        let mut offsets = shared_array::<u32, RADIX>();
        let mut warp_totals = shared_array::<u32, WARPS>();
        for pass in 0..PASSES {
            count_run(keys, counts, sums, pass, &mut warp_counts);
            grid_sync();
            scatter_run(
                keys,
                alt,
                values,
                alt_values,
                with_values,
                counts,
                sums,
                pass,
                &mut warp_counts,
                &mut staged,
                &mut staged_values,
                &mut offsets,
                &mut warp_totals,
            );
            if pass + 1 < PASSES {
                grid_sync();
            }
            std::mem::swap(&mut keys, &mut alt);
            std::mem::swap(&mut values, &mut alt_values);
        }
    }

    /// [`radix_sort_u32`] for `u64` keys: eight passes, `counts` of
    /// [`count_words`](super::count_words)`(grid, 8)` words.
    #[grid_phases(threads = 256, blocks_per_sm = 2)]
    pub fn radix_sort_u64(
        mut keys: &mut [u64],
        mut alt: &mut [u64],
        mut values: &mut [u32],
        mut alt_values: &mut [u32],
        counts: &mut [u32],
        with_values: bool,
    ) {
        const PASSES: u32 = 8;
        assert!(BLOCK_SIZE == THREADS, "the radix sort takes blocks of 256 threads, one per digit");
        assert!(alt.len() == keys.len(), "radix_sort_u64's alt has the length of keys");
        assert!(
            !with_values || (values.len() == keys.len() && alt_values.len() == keys.len()),
            "radix_sort_u64's values have the length of keys"
        );
        let sums = PASSES * grid_dim() * RADIX as u32;
        assert!(
            counts.len() >= (sums + PASSES * grid_dim().div_ceil(GROUP) * RADIX as u32) as usize,
            "radix_sort_u64's counts take 8 × 256 words per block and per group: size them with radix::count_words"
        );
        let mut warp_counts = shared_array::<u32, { WARPS * RADIX }>();
        let mut staged = shared_array::<u64, TILE>();
        let mut staged_values = shared_array::<u32, TILE>();
        let mut offsets = shared_array::<u32, RADIX>();
        let mut warp_totals = shared_array::<u32, WARPS>();
        for pass in 0..PASSES {
            count_run(keys, counts, sums, pass, &mut warp_counts);
            grid_sync();
            scatter_run(
                keys,
                alt,
                values,
                alt_values,
                with_values,
                counts,
                sums,
                pass,
                &mut warp_counts,
                &mut staged,
                &mut staged_values,
                &mut offsets,
                &mut warp_totals,
            );
            if pass + 1 < PASSES {
                grid_sync();
            }
            std::mem::swap(&mut keys, &mut alt);
            std::mem::swap(&mut values, &mut alt_values);
        }
    }
}

pub use lsd::{radix_sort_u32, radix_sort_u64, GROUP, ITEMS, RADIX, THREADS, TILE};

// A whole tile goes out in thirds, each a whole number of block-wide steps.
const _: () =
    assert!(TILE.is_multiple_of(3 * THREADS), "the write-out of a whole tile takes it in thirds of whole rounds");

/// The most keys one sort takes: the kernels index keys with 32-bit words.
pub const MAX_KEYS: usize = 1 << 31;

/// Tiles of `n` keys.
pub fn tiles(n: usize) -> usize {
    n.div_ceil(TILE)
}

/// The length of `counts` for a grid of `blocks` and `passes` digits: [`RADIX`] words per
/// pass for each block and for each group of [`GROUP`] blocks.
pub fn count_words(blocks: u32, passes: usize) -> usize {
    passes * RADIX * (blocks as usize + blocks.div_ceil(GROUP) as usize)
}

/// The unsigned words the radix kernels sort: `u32` (four digit passes) and `u64` (eight).
pub trait RadixWord: crate::DeviceScalar + Copy + Ord + std::ops::Not<Output = Self> {
    /// Digit passes: one per byte.
    const PASSES: usize;

    /// The kernel that sorts words of this width.
    fn kernel() -> &'static KernelSpec;

    /// The largest co-resident grid of [`kernel`](Self::kernel) for `launch`.
    fn max_coresident_blocks(gpu: &Gpu, launch: &Launch) -> Result<u32>;

    /// Launches [`kernel`](Self::kernel) on buffers sized as it asserts, with a new
    /// `scratch` ([`RadixScratch::new`]) each time: [`sort_words`] is the checked entry.
    #[allow(clippy::too_many_arguments)]
    fn launch_kernel(
        gpu: &Gpu,
        launch: &Launch,
        keys: &mut DeviceBuffer<Self>,
        alt: &mut DeviceBuffer<Self>,
        values: &mut DeviceBuffer<u32>,
        alt_values: &mut DeviceBuffer<u32>,
        scratch: &mut RadixScratch,
        with_values: bool,
    ) -> Result<LaunchReport>;
}

impl RadixWord for u32 {
    const PASSES: usize = 4;

    fn kernel() -> &'static KernelSpec {
        &radix_sort_u32::KERNEL
    }

    fn max_coresident_blocks(gpu: &Gpu, launch: &Launch) -> Result<u32> {
        radix_sort_u32::max_coresident_blocks(gpu, launch)
    }

    fn launch_kernel(
        gpu: &Gpu,
        launch: &Launch,
        keys: &mut DeviceBuffer<u32>,
        alt: &mut DeviceBuffer<u32>,
        values: &mut DeviceBuffer<u32>,
        alt_values: &mut DeviceBuffer<u32>,
        scratch: &mut RadixScratch,
        with_values: bool,
    ) -> Result<LaunchReport> {
        radix_sort_u32::launch_with(gpu, launch, keys, alt, values, alt_values, &mut scratch.counts, with_values)
    }
}

impl RadixWord for u64 {
    const PASSES: usize = 8;

    fn kernel() -> &'static KernelSpec {
        &radix_sort_u64::KERNEL
    }

    fn max_coresident_blocks(gpu: &Gpu, launch: &Launch) -> Result<u32> {
        radix_sort_u64::max_coresident_blocks(gpu, launch)
    }

    fn launch_kernel(
        gpu: &Gpu,
        launch: &Launch,
        keys: &mut DeviceBuffer<u64>,
        alt: &mut DeviceBuffer<u64>,
        values: &mut DeviceBuffer<u32>,
        alt_values: &mut DeviceBuffer<u32>,
        scratch: &mut RadixScratch,
        with_values: bool,
    ) -> Result<LaunchReport> {
        radix_sort_u64::launch_with(gpu, launch, keys, alt, values, alt_values, &mut scratch.counts, with_values)
    }
}

/// The radix sort's scratch: each block's digit counts of every pass, and each group's sums,
/// which must be zero at launch (a new scratch's are; a launch leaves them filled).
#[derive(Debug)]
pub struct RadixScratch {
    counts: DeviceBuffer<u32>,
}

impl RadixScratch {
    /// Scratch for a sort of words of type `W` on a grid of `blocks`.
    pub fn new<W: RadixWord>(gpu: &Gpu, blocks: u32) -> Result<RadixScratch> {
        Ok(RadixScratch { counts: gpu.zeros(count_words(blocks, W::PASSES))? })
    }
}

/// Sorts the words of `keys` ascending on `gpu`, in place, stably, and with `values` (as
/// many as keys) each value along with its key. The launch runs blocks of [`THREADS`]
/// threads (a launch naming another size is refused); one that names no grid runs the
/// largest co-resident grid, or one block per tile where there are fewer tiles.
///
/// Fails with [`Error::InvalidInput`] where `values` is not as long as `keys` or there are
/// more than [`MAX_KEYS`] keys.
pub fn sort_words<W: RadixWord>(
    gpu: &Gpu,
    launch: &Launch,
    keys: &mut DeviceBuffer<W>,
    values: Option<&mut DeviceBuffer<u32>>,
) -> Result<LaunchReport> {
    let n = keys.len();
    check_input(W::kernel().name, n, values.as_ref().map(|v| v.len()))?;
    if n == 0 {
        return Ok(LaunchReport::no_launch(launch.selected_barrier()));
    }
    let launch = shape(gpu, launch, W::kernel(), n)?;
    let with_values = values.is_some();
    let mut alt = gpu.zeros::<W>(n)?;
    let mut alt_values = gpu.zeros::<u32>(if with_values { n } else { 0 })?;
    let mut no_values = gpu.zeros::<u32>(0)?;
    let values = match values {
        Some(values) => values,
        None => &mut no_values,
    };
    let blocks = match launch.requested_blocks() {
        Some(blocks) => blocks,
        None => W::max_coresident_blocks(gpu, &launch)?,
    };
    check_grid(W::kernel().name, blocks, W::PASSES)?;
    let mut scratch = RadixScratch::new::<W>(gpu, blocks)?;
    W::launch_kernel(gpu, &launch, keys, &mut alt, values, &mut alt_values, &mut scratch, with_values)
}

/// Refuses inputs the kernels cannot sort: values not one per key, or too many keys.
pub(super) fn check_input(kernel: &str, n: usize, values: Option<usize>) -> Result<()> {
    if let Some(values) = values.filter(|&len| len != n) {
        let reason = format!("{n} keys but {values} values; give one value per key");
        return Err(Error::InvalidInput { kernel: kernel.to_owned(), reason });
    }
    if n > MAX_KEYS {
        let reason = format!("{n} keys, more than the {MAX_KEYS} one sort takes (it indexes keys with 32-bit words)");
        return Err(Error::InvalidInput { kernel: kernel.to_owned(), reason });
    }
    Ok(())
}

/// Refuses a grid whose counts the kernel could not index: [`count_words`] past `u32`'s range.
fn check_grid(kernel: &str, blocks: u32, passes: usize) -> Result<()> {
    let fits = |blocks: u32| count_words(blocks, passes) <= u32::MAX as usize;
    if fits(blocks) {
        return Ok(());
    }
    // Each block takes `passes × RADIX` words and each group of GROUP blocks as many again.
    let mut most = (u32::MAX as usize / (passes * RADIX) * GROUP as usize / (GROUP as usize + 1)) as u32;
    while !fits(most) {
        most -= 1;
    }
    let reason = format!(
        "a grid of {blocks} blocks needs {} words of digit counts, more than the kernel indexes with 32-bit \
         words; name at most {most} blocks (past one block per 32 keys, blocks only count nothing)",
        count_words(blocks, passes)
    );
    Err(Error::InvalidInput { kernel: kernel.to_owned(), reason })
}

/// `launch` with blocks of [`THREADS`] threads and, where it names no grid, the largest
/// co-resident grid capped at one block per tile; refuses a launch that names another block
/// size. (Never tuned: the kernel's group sums must be zero at launch, which a tuning run's
/// repeats would not keep.)
fn shape(gpu: &Gpu, launch: &Launch, kernel: &KernelSpec, n: usize) -> Result<Launch> {
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
    if launch.requested_blocks().is_some() {
        return Ok(launch);
    }
    super::grid_for_work(gpu, &launch, kernel, tiles(n))
}
