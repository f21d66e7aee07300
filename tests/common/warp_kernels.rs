//! Kernels of warp-uniform control, warp votes, `match`, float atomic min/max and
//! `assert!`, each with its CPU reference.

use gsync::prelude::*;

/// An inclusive scan of each tile of `block_dim()` elements, in two levels: every warp
/// scans its 32 values with shuffles, warp 0 alone scans the warps' totals (shuffles under
/// `if warp == 0`), and every thread adds the total of the warps before its own. Any
/// block size, a partial last warp included.
#[grid_phases(threads = 256)]
pub fn block_scan(input: &[u32], output: &mut [u32]) {
    let mut totals = shared_array::<u32, 32>();
    let n = input.len();
    let t = thread_idx();
    let lane = t % 32;
    let warp = t / 32;
    let warps = (block_dim() + 31) / 32;
    let tile = block_dim() as usize;
    let tiles = n.div_ceil(tile);
    for first in (block_idx() as usize..tiles).step_by(grid_dim() as usize) {
        let i = first * tile + t as usize;
        let mut v = if i < n { input[i] } else { 0 };
        let mut d = 1u32;
        while d < 32 {
            let up = shfl_up(v, d);
            if lane >= d {
                v = v.wrapping_add(up);
            }
            d *= 2;
        }
        if lane == 31 || t == block_dim() - 1 {
            totals[warp as usize] = v;
        }
        sync_block();
        if warp == 0 {
            let mut s = if lane < warps { totals[lane as usize] } else { 0 };
            let mut d = 1u32;
            while d < 32 {
                let up = shfl_up(s, d);
                if lane >= d {
                    s = s.wrapping_add(up);
                }
                d *= 2;
            }
            if lane < warps {
                totals[lane as usize] = s;
            }
        }
        sync_block();
        if warp > 0 {
            v = v.wrapping_add(totals[warp as usize - 1]);
        }
        if i < n {
            output[i] = v;
        }
        sync_block();
    }
}

/// `block_scan`'s result: the inclusive scan of each `tile` elements.
pub fn block_scan_reference(input: &[u32], tile: usize) -> Vec<u32> {
    let mut out = Vec::with_capacity(input.len());
    for chunk in input.chunks(tile) {
        let mut acc = 0u32;
        out.extend(chunk.iter().map(|&x| {
            acc = acc.wrapping_add(x);
            acc
        }));
    }
    out
}

/// The rank step of a stable radix sort, per warp of 32 consecutive keys: each key's rank
/// among the keys of its warp with the same 4-bit digit before it (one `match_any` and a
/// popcount), and how many share its digit; per warp, the keys with digit 0 (`ballot`),
/// and whether some key has digit 15 (`any`) and every key a digit below 8 (`all`). Keys
/// past the end take digit 16. Needs a block size that is a multiple of 32.
#[grid_phases(threads = 128)]
pub fn warp_rank(keys: &[u32], shift: u32, ranks: &mut [u32], peers: &mut [u32], votes: &mut [u32]) {
    let n = keys.len();
    let warps_per_block = block_dim() / 32;
    let first = block_idx() * warps_per_block + warp_id();
    let lane = lane_id();
    for w in (first as usize..n.div_ceil(32)).step_by((grid_dim() * warps_per_block) as usize) {
        let i = w * 32 + lane as usize;
        let digit = if i < n { (keys[i] >> shift) & 15 } else { 16 };
        let same = match_any(digit);
        let zeros = ballot(digit == 0);
        let high = any(digit == 15);
        let low = all(digit < 8);
        if i < n {
            ranks[i] = (same & ((1u32 << lane) - 1)).count_ones();
            peers[i] = same.count_ones();
        }
        if lane == 0 {
            votes[w] = zeros.count_ones() | (high as u32) << 8 | (low as u32) << 9;
        }
    }
}

/// `warp_rank`'s result: (ranks, peers, votes).
pub fn warp_rank_reference(keys: &[u32], shift: u32) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let n = keys.len();
    let warps = n.div_ceil(32);
    let digit = |i: usize| if i < n { (keys[i] >> shift) & 15 } else { 16 };
    let (mut ranks, mut peers, mut votes) = (vec![0; n], vec![0; n], vec![0; warps]);
    for w in 0..warps {
        let digits: Vec<u32> = (0..32).map(|l| digit(w * 32 + l)).collect();
        for l in 0..32 {
            if let Some(rank) = ranks.get_mut(w * 32 + l) {
                *rank = digits[..l].iter().filter(|&&d| d == digits[l]).count() as u32;
                peers[w * 32 + l] = digits.iter().filter(|&&d| d == digits[l]).count() as u32;
            }
        }
        let zeros = digits.iter().filter(|&&d| d == 0).count() as u32;
        let high = digits.contains(&15) as u32;
        let low = digits.iter().all(|&d| d < 8) as u32;
        votes[w] = zeros | high << 8 | low << 9;
    }
    (ranks, peers, votes)
}

/// `match_any` of narrow values, which the GPU builds from one ballot per bit: each thread
/// writes the lanes of its warp whose low byte of `values` equals its own (as `u8`, and as
/// `i8`), whose lowest bit does (as `bool`), and whose low 16 bits do (`u16`, the hardware's
/// match), four words per thread. Every thread of the grid takes part: `values` has one
/// word per thread.
#[grid_phases]
pub fn narrow_matches(values: &[u32], lanes: &mut [u32]) {
    let i = global_id() as usize;
    let v = values[i];
    lanes[4 * i] = match_any(v as u8);
    lanes[4 * i + 1] = match_any(v as i8);
    lanes[4 * i + 2] = match_any(v & 1 == 1);
    lanes[4 * i + 3] = match_any(v as u16);
}

/// `narrow_matches`' result for blocks of `threads`: per thread, the lanes of its warp (the
/// block's threads in runs of 32, the last run possibly shorter) that agree on each width.
pub fn narrow_matches_reference(values: &[u32], threads: usize) -> Vec<u32> {
    let mut lanes = vec![0u32; 4 * values.len()];
    for (i, &v) in values.iter().enumerate() {
        let block = i / threads * threads;
        let warp = block + (i - block) / 32 * 32;
        let end = (warp + 32).min(block + threads);
        for (lane, &w) in values[warp..end].iter().enumerate() {
            for (k, mask) in [0xff, 0xff, 1, 0xffff].into_iter().enumerate() {
                if w & mask == v & mask {
                    lanes[4 * i + k] |= 1 << lane;
                }
            }
        }
    }
    lanes
}

/// Float `atomic_max`/`atomic_min` on slices (`extremes[0]`, `extremes[1]`, and the same
/// for `f64`) and on a shared array, whose per-block results go into `block_extremes`.
#[grid_phases]
pub fn float_extremes(
    values: &[f32],
    wide: &[f64],
    extremes: &mut [f32],
    wide_extremes: &mut [f64],
    block_extremes: &mut [f32],
) {
    let mut tile = shared_array::<f32, 2>();
    if thread_idx() == 0 {
        tile[0] = f32::NAN;
        tile[1] = f32::NAN;
    }
    sync_block();
    for i in grid_stride(0..values.len()) {
        let v = values[i];
        extremes.atomic_max(0, v);
        extremes.atomic_min(1, v);
        tile.atomic_max(0, v);
        tile.atomic_min(1, v);
    }
    for i in grid_stride(0..wide.len()) {
        wide_extremes.atomic_max(0, wide[i]);
        let _ = wide_extremes.atomic_min(1, wide[i]);
    }
    sync_block();
    if thread_idx() == 0 {
        let b = block_idx() as usize;
        block_extremes[2 * b] = tile[0];
        block_extremes[2 * b + 1] = tile[1];
    }
}

/// The order of `atomic_max`: Rust's `max` (a NaN yields to the other operand) with -0.0
/// below +0.0; `max` false gives `atomic_min`'s.
pub fn float_extreme<F: Copy + PartialOrd>(
    current: F,
    v: F,
    max: bool,
    nan: fn(F) -> bool,
    negative: fn(F) -> bool,
) -> F {
    if nan(v) {
        return current;
    }
    if nan(current) {
        return v;
    }
    let (a, b) = if max { (current, v) } else { (v, current) };
    if a < b || (a == b && negative(a) && !negative(b)) {
        v
    } else {
        current
    }
}

/// Classifies each value with `match` as a statement and as a value: integer literals,
/// `a | b`, inclusive and half-open ranges, `const`s and `bool` scrutinees.
#[grid_phases]
pub fn classify(values: &[i32], classes: &mut [u32], flags: &mut [u32]) {
    const LIMIT: i32 = 1000;
    for i in grid_stride(0..values.len()) {
        let v = values[i];
        let class = match v {
            0 => 1,
            1 | 2 | 3 => 2,
            -9..=-1 => 3,
            4..100 => 4,
            LIMIT => 5,
            i32::MIN..=-10 => 6,
            _ => 7,
        };
        classes[i] = class;
        match v % 4 {
            0 => flags[i] = 10,
            1 | -1 => {
                let twice = v.wrapping_mul(2);
                flags[i] = (twice & 0xff) as u32;
            }
            _ => {
                flags[i] = match v > 0 {
                    true => 20,
                    false => 30,
                }
            }
        }
    }
}

/// `classify`'s result: (classes, flags).
pub fn classify_reference(values: &[i32]) -> (Vec<u32>, Vec<u32>) {
    const LIMIT: i32 = 1000;
    let classes = values
        .iter()
        .map(|&v| match v {
            0 => 1,
            1..=3 => 2,
            -9..=-1 => 3,
            4..100 => 4,
            LIMIT => 5,
            i32::MIN..=-10 => 6,
            _ => 7,
        })
        .collect();
    let flags = values
        .iter()
        .map(|&v| match v % 4 {
            0 => 10,
            1 | -1 => (v.wrapping_mul(2) & 0xff) as u32,
            _ if v > 0 => 20,
            _ => 30,
        })
        .collect();
    (classes, flags)
}

/// Copies `input`, asserting that no value is 13.
#[grid_phases]
pub fn checked_copy(input: &[u32], output: &mut [u32]) {
    for i in grid_stride(0..input.len()) {
        assert!(input[i] != 13, "thirteen is unlucky");
        output[i] = input[i];
    }
}

/// Sums each block's values in shared memory; a value of 1000 or more fails an assertion
/// before the `sync_block()`, which the rest of the block then passes without the thread.
#[grid_phases(threads = 64)]
pub fn checked_block_sums(input: &[u32], sums: &mut [u32]) {
    let mut tile = shared_array::<u32, 64>();
    let t = thread_idx() as usize;
    let i = global_id() as usize;
    let v = if i < input.len() { input[i] } else { 0 };
    assert!(v < 1000);
    tile[t] = v;
    sync_block();
    if t == 0 {
        let mut s = 0u32;
        for k in 0..64 {
            s = s.wrapping_add(tile[k]);
        }
        sums[block_idx() as usize] = s;
    }
}

/// Three phases: doubles `values` into `output`, checks in one thread that the sum is
/// `2 * expected` (an `assert_eq!` before a `grid_sync()`: a failure stops the grid
/// there), then adds 1 to every element, which a `debug_assert_ne!` checks is not
/// `forbidden`.
#[grid_phases]
pub fn checked_phases(values: &[i32], output: &mut [i32], expected: i32, forbidden: i32) {
    let n = values.len();
    for i in grid_stride(0..n) {
        output[i] = values[i].wrapping_mul(2);
    }
    grid_sync();
    if global_id() == 0 {
        let mut sum = 0i32;
        for i in 0..n {
            sum = sum.wrapping_add(output[i]);
        }
        assert_eq!(sum, expected.wrapping_mul(2), "the doubled values do not add up");
    }
    grid_sync();
    for i in grid_stride(0..n) {
        output[i] += 1;
        debug_assert_ne!(output[i], forbidden);
    }
}

/// The kernels of this file.
pub fn all() -> Vec<&'static gsync::KernelSpec> {
    vec![
        &block_scan::KERNEL,
        &warp_rank::KERNEL,
        &float_extremes::KERNEL,
        &classify::KERNEL,
        &checked_copy::KERNEL,
        &checked_block_sums::KERNEL,
        &checked_phases::KERNEL,
    ]
}
