//! Test kernels, each with the CPU reference it is checked against.

use gsync::prelude::*;

/// One phase: `y = alpha * x + y`.
#[grid_phases]
pub fn saxpy(alpha: f32, x: &[f32], y: &mut [f32]) {
    for i in grid_stride(0..y.len()) {
        y[i] = alpha * x[i] + y[i];
    }
}

pub fn saxpy_reference(alpha: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    x.iter().zip(y).map(|(x, y)| alpha * x + y).collect()
}

/// Three fixed phases, each reading what other blocks wrote in the one before.
#[grid_phases]
pub fn three_phases(input: &[u32], a: &mut [u32], b: &mut [u32], out: &mut [u32]) {
    let n = input.len();
    for i in grid_stride(0..n) {
        a[i] = input[i].wrapping_mul(2654435761) ^ (i as u32);
    }
    grid_sync();
    for i in grid_stride(0..n) {
        b[i] = a[n - 1 - i].rotate_left(7) + a[i];
    }
    grid_sync();
    for i in grid_stride(0..n) {
        out[i] = b[(i + n / 2) % n] ^ a[(i * 7919) % n];
    }
}

pub fn three_phases_reference(input: &[u32]) -> Vec<u32> {
    let n = input.len();
    let a: Vec<u32> = (0..n).map(|i| input[i].wrapping_mul(2654435761) ^ (i as u32)).collect();
    let b: Vec<u32> = (0..n).map(|i| a[n - 1 - i].rotate_left(7).wrapping_add(a[i])).collect();
    (0..n).map(|i| b[(i + n / 2) % n] ^ a[(i * 7919) % n]).collect()
}

/// `rounds` phases; in each, every element moves `shift` places (to another
/// block) and grows by one, so a phase that misses another block's writes
/// leaves a wrong value behind.
#[grid_phases]
pub fn rotate_rounds(a: &mut [u32], b: &mut [u32], shift: u32, rounds: u32) {
    let n = a.len() as u32;
    for r in 0..rounds {
        for i in grid_stride(0..n) {
            let from = (i + shift) % n;
            if r % 2 == 0 {
                b[i] = a[from] + 1;
            } else {
                a[i] = b[from] + 1;
            }
        }
        grid_sync();
    }
}

/// The same kernel with the barrier left out: a race, for showing the barrier matters.
#[grid_phases]
pub fn rotate_rounds_without_barrier(a: &mut [u32], b: &mut [u32], shift: u32, rounds: u32) {
    let n = a.len() as u32;
    for r in 0..rounds {
        for i in grid_stride(0..n) {
            let from = (i + shift) % n;
            if r % 2 == 0 {
                b[i] = a[from] + 1;
            } else {
                a[i] = b[from] + 1;
            }
        }
    }
}

/// Returns the array holding the result after `rounds` (see `smooth_reference`).
pub fn rotate_rounds_reference(input: &[u32], shift: u32, rounds: u32) -> Vec<u32> {
    let n = input.len();
    let shift = shift as usize % n.max(1);
    let mut v = input.to_vec();
    for _ in 0..rounds {
        v = (0..n).map(|i| v[(i + shift) % n].wrapping_add(1)).collect();
    }
    v
}

/// `rotate_rounds` with one slow block per round: in round `r`, block `r % grid_dim()`
/// first runs `spin` steps of a linear congruential generator from `r` and stores the result
/// in `slow[r]`, so that every other block waits for it at the round's barrier. The rounds
/// are `slow.len()`.
#[grid_phases(threads = 128)]
pub fn one_slow_block(a: &mut [u32], b: &mut [u32], slow: &mut [u32], shift: u32, spin: u32) {
    let n = a.len() as u32;
    let rounds = slow.len() as u32;
    for r in 0..rounds {
        if block_idx() == r % grid_dim() {
            let mut x = r;
            for s in 0..spin {
                x = x * 1664525 + 1013904223 + s;
            }
            if thread_idx() == 0 {
                slow[r] = x;
            }
        }
        for i in grid_stride(0..n) {
            let from = (i + shift) % n;
            if r % 2 == 0 {
                b[i] = a[from] + 1;
            } else {
                a[i] = b[from] + 1;
            }
        }
        grid_sync();
    }
}

/// What `one_slow_block` stores in `slow`.
pub fn one_slow_block_reference(rounds: u32, spin: u32) -> Vec<u32> {
    (0..rounds)
        .map(|r| (0..spin).fold(r, |x, s| x.wrapping_mul(1664525).wrapping_add(1013904223).wrapping_add(s)))
        .collect()
}

/// Block sums in shared memory with `sync_block()`, then a grid-wide total
/// of the partial sums after `grid_sync()`.
#[grid_phases(threads = 256)]
pub fn block_sums(input: &[u32], partial: &mut [u32], total: &mut [u64]) {
    let mut tile = shared_array::<u32, 256>();
    let t = thread_idx();
    let mut acc = 0u32;
    for i in grid_stride(0..input.len()) {
        acc = acc.wrapping_add(input[i]);
    }
    tile[t] = acc;
    sync_block();
    let mut width = block_dim() / 2;
    while width > 0 {
        if t < width {
            tile[t] = tile[t].wrapping_add(tile[t + width]);
        }
        sync_block();
        width /= 2;
    }
    if t == 0 {
        partial[block_idx()] = tile[0];
    }
    grid_sync();
    if global_id() == 0 {
        let mut sum = 0u64;
        for b in 0..grid_dim() {
            sum += partial[b] as u64;
        }
        total[0] = sum;
    }
}

/// Atomics on slice elements: a histogram, extremes, exchange and compare-and-swap.
#[grid_phases]
pub fn atomics(values: &[i32], histogram: &mut [u32], extremes: &mut [i32], last: &mut [u32], claims: &mut [u32]) {
    let bins = histogram.len() as u32;
    for i in grid_stride(0..values.len()) {
        let v = values[i];
        histogram.atomic_add(((v % bins as i32 + bins as i32) % bins as i32) as u32, 1);
        extremes.atomic_min(0, v);
        extremes.atomic_max(1, v);
        last.atomic_exch(0, 7);
        // Each slot is claimed by exactly one element through compare-and-swap.
        let slot = (v as u32) % claims.len() as u32;
        claims.atomic_cas(slot, 0, i as u32 + 1);
    }
}

/// Warp shuffles: per-warp sums by `shfl_down`, butterfly maxima by
/// `shfl_xor`, inclusive prefix sums by `shfl_up`, broadcast by `shfl`.
#[grid_phases(threads = 128)]
pub fn warp_ops(input: &[u32], sums: &mut [u32], maxima: &mut [u32], scans: &mut [u32], broadcast: &mut [u32]) {
    let n = input.len() as u32;
    let rounds = (n + grid_size() - 1) / grid_size();
    for r in 0..rounds {
        let i = r * grid_size() + global_id();
        let v = if i < n { input[i] } else { 0 };
        let mut sum = v;
        let mut offset = 16u32;
        while offset > 0 {
            sum = sum.wrapping_add(shfl_down(sum, offset));
            offset /= 2;
        }
        let mut max = v;
        let mut mask = 1u32;
        while mask < 32 {
            max = max.max(shfl_xor(max, mask));
            mask *= 2;
        }
        let mut scan = v;
        let mut d = 1u32;
        while d < 32 {
            let up = shfl_up(scan, d);
            if lane_id() >= d {
                scan = scan.wrapping_add(up);
            }
            d *= 2;
        }
        let first = shfl(v, 0);
        if i < n {
            scans[i] = scan;
            broadcast[i] = first;
            if lane_id() == 0 {
                sums[i / 32] = sum;
                maxima[i / 32] = max;
            }
        }
    }
}

/// CPU reference of `warp_ops` (warps of 32 consecutive elements, the tail
/// padded with zeros): (sums, maxima, scans, broadcast).
pub fn warp_ops_reference(input: &[u32]) -> (Vec<u32>, Vec<u32>, Vec<u32>, Vec<u32>) {
    let warps = input.len().div_ceil(32);
    let (mut sums, mut maxima) = (vec![0; warps], vec![0; warps]);
    let (mut scans, mut broadcast) = (vec![0; input.len()], vec![0; input.len()]);
    for w in 0..warps {
        let lanes: Vec<u32> = (0..32).map(|l| input.get(w * 32 + l).copied().unwrap_or(0)).collect();
        sums[w] = lanes.iter().fold(0u32, |a, &b| a.wrapping_add(b));
        maxima[w] = lanes.iter().copied().max().unwrap_or(0);
        let mut acc = 0u32;
        for (l, &x) in lanes.iter().enumerate() {
            acc = acc.wrapping_add(x);
            if let Some(slot) = scans.get_mut(w * 32 + l) {
                *slot = acc;
                broadcast[w * 32 + l] = lanes[0];
            }
        }
    }
    (sums, maxima, scans, broadcast)
}

/// A kernel whose every thread reads one element past the end: in a build
/// with bounds checks the launch reports it instead of reading stray memory.
#[grid_phases]
pub fn reads_past_the_end(input: &[u32], out: &mut [u32]) {
    for i in grid_stride(0..out.len()) {
        out[i] = input[i + 1];
    }
    grid_sync();
    for i in grid_stride(0..out.len()) {
        out[i] += 1;
    }
}

/// Stamps one kernel per scalar type exercising Rust's wrapping arithmetic,
/// shifts, bit operations, division and casts at that type's own width.
macro_rules! scalar_kernel {
    ($name:ident, $reference:ident, $t:ident) => {
        /// Integer arithmetic at the width of the element type.
        #[grid_phases]
        pub fn $name(a: &[$t], b: &[$t], out: &mut [$t], wide: &mut [i64], from_float: &mut [$t], floats: &[f32]) {
            for i in grid_stride(0..out.len()) {
                let x = a[i];
                let y = b[i];
                let mixed = x * y + x - (y ^ (x >> 3u32)) + (x << 5u32);
                let divided = if y != 0 { x / y + x % y } else { x };
                out[i] = mixed.wrapping_add(divided) | (!x & y);
                wide[i] = x as i64 - y as i64;
                from_float[i] = floats[i] as $t;
            }
        }

        /// CPU reference for the kernel above: (out, wide, from_float).
        pub fn $reference(a: &[$t], b: &[$t], floats: &[f32]) -> (Vec<$t>, Vec<i64>, Vec<$t>) {
            let mut out = Vec::new();
            let mut wide = Vec::new();
            let mut from_float = Vec::new();
            for i in 0..a.len() {
                let (x, y) = (a[i], b[i]);
                let mixed =
                    x.wrapping_mul(y).wrapping_add(x).wrapping_sub(y ^ (x >> 3u32)).wrapping_add(x.wrapping_shl(5));
                let divided = if y != 0 { x.wrapping_div(y).wrapping_add(x.wrapping_rem(y)) } else { x };
                out.push(mixed.wrapping_add(divided) | (!x & y));
                wide.push((x as i64).wrapping_sub(y as i64));
                from_float.push(floats[i] as $t);
            }
            (out, wide, from_float)
        }
    };
}

scalar_kernel!(arith_u8, arith_u8_reference, u8);
scalar_kernel!(arith_i8, arith_i8_reference, i8);
scalar_kernel!(arith_u16, arith_u16_reference, u16);
scalar_kernel!(arith_i16, arith_i16_reference, i16);
scalar_kernel!(arith_u32, arith_u32_reference, u32);
scalar_kernel!(arith_i32, arith_i32_reference, i32);
scalar_kernel!(arith_u64, arith_u64_reference, u64);
scalar_kernel!(arith_i64, arith_i64_reference, i64);

/// Float arithmetic at both widths: IEEE operations must match the CPU bit for bit.
macro_rules! float_kernel {
    ($name:ident, $reference:ident, $t:ident) => {
        /// Float arithmetic, methods and casts at one width.
        #[grid_phases]
        pub fn $name(a: &[$t], b: &[$t], out: &mut [$t], as_int: &mut [i32]) {
            for i in grid_stride(0..out.len()) {
                let x = a[i];
                let y = b[i];
                out[i] = (x * y + x / (y.abs() + 1.0)).sqrt() - x.min(y) + y.max(x) * 0.5;
                as_int[i] = (x * 1000.0) as i32;
            }
        }

        /// CPU reference for the kernel above.
        pub fn $reference(a: &[$t], b: &[$t]) -> (Vec<$t>, Vec<i32>) {
            a.iter()
                .zip(b)
                .map(|(&x, &y)| ((x * y + x / (y.abs() + 1.0)).sqrt() - x.min(y) + y.max(x) * 0.5, (x * 1000.0) as i32))
                .unzip()
        }
    };
}

float_kernel!(arith_f32, arith_f32_reference, f32);
float_kernel!(arith_f64, arith_f64_reference, f64);

/// The cross-block visibility stress: in phase `p` every thread writes a
/// value derived from `(p, block, thread)` into its slot of one of two
/// ping-pong halves; after `grid_sync()` every thread checks a slot of another
/// block. Any write the barrier failed to make visible is counted in `errors[0]`.
#[grid_phases]
pub fn visibility_stress(slots: &mut [u32], errors: &mut [u32], phases: u32) {
    let blocks = grid_dim();
    let threads = block_dim();
    let half = blocks * threads;
    for p in 0..phases {
        let base = (p % 2) * half;
        slots[base + block_idx() * threads + thread_idx()] =
            (p.wrapping_mul(2654435761) ^ (block_idx() << 12) ^ thread_idx()).wrapping_add(1);
        grid_sync();
        let other = (block_idx() + 1 + p % blocks) % blocks;
        let lane = (thread_idx() + p) % threads;
        if slots[base + other * threads + lane] != (p.wrapping_mul(2654435761) ^ (other << 12) ^ lane).wrapping_add(1) {
            errors.atomic_add(0, 1);
        }
    }
}

/// Host-visible control flow read from device memory: counts `flag[0]` down
/// to zero, one round of increments per count. Split, the host reads the flag.
#[grid_phases]
pub fn countdown(flag: &mut [u32], data: &mut [u32]) {
    while flag[0] != 0 {
        for i in grid_stride(0..data.len()) {
            data[i] += 1;
        }
        grid_sync();
        if global_id() == 0 {
            flag[0] -= 1;
        }
        grid_sync();
    }
}

/// A kernel that keeps per-thread state across a barrier (a value read from
/// memory before it, used after it): fine fused, and impossible to split into
/// launches.
#[grid_phases]
pub fn keeps_a_thread_value_across_the_barrier(data: &mut [u32]) {
    let i = global_id();
    let mut kept = 0u32;
    if i < data.len() as u32 {
        kept = data[i];
        data[i] = 0;
    }
    grid_sync();
    if i < data.len() as u32 {
        data[i] = kept + 1;
    }
}

/// CUDA style: a thread's lane, warp and block, and its warp's slot, computed
/// once at the top and used in every phase; split, each segment recomputes
/// them. `per_warp[slot]` gathers the warp's grid-stride share of `input`;
/// then each round adds another warp's value to `out[slot]` and updates that
/// value, with `from` defined in the round and used across its barrier.
#[grid_phases]
pub fn hoisted_indices(input: &[u32], per_warp: &mut [u32], out: &mut [u32], rounds: u32) {
    let lane = lane_id();
    let warp = thread_idx() / 32;
    let b = block_idx();
    let warps = (block_dim() + 31) / 32;
    let slot = b * warps + warp;
    let slots = grid_dim() * warps;
    for i in grid_stride(0..input.len()) {
        per_warp.atomic_add(slot, input[i]);
    }
    grid_sync();
    for r in 0..rounds {
        let from = (slot + r + 1) % slots;
        if lane == 0 {
            out[slot] = out[slot].wrapping_add(per_warp[from]);
        }
        grid_sync();
        if lane == 0 {
            per_warp[from] = per_warp[from].wrapping_mul(3).wrapping_add(warp + 1);
        }
        grid_sync();
    }
}

/// `(per_warp, out)` after `hoisted_indices` on a grid of `blocks` × `threads`.
pub fn hoisted_indices_reference(input: &[u32], blocks: u32, threads: u32, rounds: u32) -> (Vec<u32>, Vec<u32>) {
    let warps = threads.div_ceil(32) as usize;
    let slots = blocks as usize * warps;
    let (grid, threads) = (blocks as usize * threads as usize, threads as usize);
    let mut per_warp = vec![0u32; slots];
    for (i, &x) in input.iter().enumerate() {
        let g = i % grid;
        let slot = g / threads * warps + g % threads / 32;
        per_warp[slot] = per_warp[slot].wrapping_add(x);
    }
    let mut out = vec![0u32; slots];
    for r in 0..rounds as usize {
        let from = |slot: usize| (slot + r + 1) % slots;
        for (slot, o) in out.iter_mut().enumerate() {
            *o = o.wrapping_add(per_warp[from(slot)]);
        }
        for slot in 0..slots {
            let value = &mut per_warp[from(slot)];
            *value = value.wrapping_mul(3).wrapping_add((slot % warps) as u32 + 1);
        }
    }
    (per_warp, out)
}

/// Reads, after the barrier, a shared array its second phase only partly
/// rewrites. Fused, lanes other than 0 read the 7 of the first phase. The split
/// accepts it (the phase's first access writes the array), but no shared
/// memory survives a kernel boundary: on a GPU those lanes read garbage, on the
/// emulator the zeros of a fresh array.
#[grid_phases]
pub fn rereads_shared_memory_after_the_barrier(out: &mut [u32]) {
    let mut tile = shared_array::<u32, 32>();
    tile[lane_id()] = 7;
    grid_sync();
    if lane_id() == 0 {
        tile[0] = 1;
    }
    sync_block();
    let i = global_id();
    if i < out.len() as u32 {
        out[i] = tile[lane_id()];
    }
}

/// Phases with no per-thread work at all; split, one empty launch.
#[grid_phases]
pub fn no_thread_work(rounds: u32) {
    for _ in 0..rounds {
        grid_sync();
    }
}

/// Unary operators, casts and negative literals as method receivers, and a
/// float negated twice: what the emitters must parenthesize. `rounds` is
/// computed on the host under `MultiLaunch`.
#[grid_phases(threads = 32)]
pub fn receivers(x: f64, y: f32, n: i32, floats: &mut [f64], ints: &mut [u32]) {
    let rounds = (-0.0f64).exp() as u32 * 2;
    for _ in 0..rounds {
        if global_id() == 0 {
            ints[8] += 1;
        }
        grid_sync();
    }
    if global_id() == 0 {
        floats[0] = (-0.0f64).exp();
        floats[1] = (-x).exp();
        floats[2] = -(-x);
        floats[3] = -(-0.5f64 as f64);
        floats[4] = (-(x as f32)).abs() as f64;
        floats[5] = (-0.0f64).signum();
        ints[0] = (-0.0f32).to_bits();
        ints[1] = (-y).to_bits();
        ints[2] = (!n).count_ones();
        ints[3] = (-n).abs() as u32;
        ints[4] = (n as u32).leading_zeros();
        ints[5] = (-(-y)).to_bits();
        ints[6] = (-2147483648i32).count_ones();
        ints[7] = (-(0.0f32)).to_bits();
    }
}

/// CPU reference of `receivers`: (floats, ints).
pub fn receivers_reference(x: f64, y: f32, n: i32) -> (Vec<f64>, Vec<u32>) {
    let floats = vec![(-0.0f64).exp(), (-x).exp(), -(-x), -(-0.5f64), (-(x as f32)).abs() as f64, (-0.0f64).signum()];
    let ints = vec![
        (-0.0f32).to_bits(),
        (-y).to_bits(),
        (!n).count_ones(),
        n.wrapping_neg().wrapping_abs() as u32,
        (n as u32).leading_zeros(),
        (-(-y)).to_bits(),
        i32::MIN.count_ones(),
        (-(0.0f32)).to_bits(),
        2,
    ];
    (floats, ints)
}

/// The Rust line of the `step_by` in `stepped`, for the error it reports.
pub const STEPPED_LINE: u32 = line!() + 6;

/// A per-thread loop whose step is read from memory: 0 is a fault.
#[grid_phases(threads = 64)]
pub fn stepped(steps: &[u32], out: &mut [u32]) {
    for i in grid_stride(0..out.len()) {
        for j in (0..10usize).step_by(steps[0] as usize) {
            out[i] += j as u32 + 1;
        }
    }
}

/// The Rust line of the `step_by` in `stepped_phases`.
pub const STEPPED_PHASES_LINE: u32 = line!() + 6;

/// Phases in a loop whose step is a parameter: host control flow under
/// `MultiLaunch`, where 0 is a fault too.
#[grid_phases(threads = 64)]
pub fn stepped_phases(out: &mut [u32], step: usize, rounds: usize) {
    for _ in (0..rounds).step_by(step) {
        for i in grid_stride(0..out.len()) {
            out[i] += 1;
        }
        grid_sync();
    }
}

/// Every kernel of the test suite and the library, for the NVRTC check.
pub fn all() -> Vec<&'static gsync::KernelSpec> {
    vec![
        &saxpy::KERNEL,
        &three_phases::KERNEL,
        &rotate_rounds::KERNEL,
        &rotate_rounds_without_barrier::KERNEL,
        &one_slow_block::KERNEL,
        &block_sums::KERNEL,
        &atomics::KERNEL,
        &warp_ops::KERNEL,
        &receivers::KERNEL,
        &stepped::KERNEL,
        &stepped_phases::KERNEL,
        &super::deep::deep_expressions::KERNEL,
        &reads_past_the_end::KERNEL,
        &visibility_stress::KERNEL,
        &countdown::KERNEL,
        &keeps_a_thread_value_across_the_barrier::KERNEL,
        &super::radix::radix_sort_8bit::KERNEL,
        &super::radix::radix_sort_4bit::KERNEL,
        &super::shared_slice_kernels::tile_sums::KERNEL,
        &super::shared_slice_kernels::writes_past_a_shared_slice::KERNEL,
        &hoisted_indices::KERNEL,
        &rereads_shared_memory_after_the_barrier::KERNEL,
        &no_thread_work::KERNEL,
        &arith_u8::KERNEL,
        &arith_i8::KERNEL,
        &arith_u16::KERNEL,
        &arith_i16::KERNEL,
        &arith_u32::KERNEL,
        &arith_i32::KERNEL,
        &arith_u64::KERNEL,
        &arith_i64::KERNEL,
        &arith_f32::KERNEL,
        &arith_f64::KERNEL,
        &super::fused_int::fused_i32::KERNEL,
        &super::fused_int::fused_u32::KERNEL,
        &gsync::kernels::smooth::KERNEL,
        &gsync::kernels::empty_phases::KERNEL,
        &gsync::kernels::bitonic::bitonic_sort::KERNEL,
        &gsync::kernels::smith_waterman::smith_waterman::KERNEL,
        &gsync::kernels::smith_waterman::smith_waterman_stripes::KERNEL,
        &gsync::kernels::bitonic::sort_keys::KERNEL,
        &gsync::kernels::radix::radix_sort_u32::KERNEL,
        &gsync::kernels::radix::radix_sort_u64::KERNEL,
        &gsync::kernels::onesweep::onesweep_u32::KERNEL,
        &gsync::kernels::onesweep::onesweep_u64::KERNEL,
        &gsync::kernels::heat::heat_global::KERNEL,
        &gsync::kernels::heat::heat_resident::KERNEL,
        &gsync::kernels::heat::heat_columns::KERNEL,
        &super::functions::kernels::next_match::KERNEL,
        &super::dims::transpose_twice::KERNEL,
        &super::dims::grid_ids::KERNEL,
        &super::dims::neighbour_rounds::KERNEL,
        &super::dims::sized_block_sums::KERNEL,
        &super::dims::wide_tile::KERNEL,
        &super::dims::per_warp::warp_counts::KERNEL,
        &super::functions::kernels::pair_rounds::KERNEL,
        &super::functions::kernels::local_running_sums::KERNEL,
        &super::functions::kernels::reduce::__u8::KERNEL,
        &super::functions::kernels::reduce::__i16::KERNEL,
        &super::functions::kernels::reduce::__u64::KERNEL,
        &super::functions::kernels::reduce::__f32::KERNEL,
        &super::functions::kernels::reduce::__f64::KERNEL,
        &super::half_checks::f16_ops::KERNEL,
        &super::half_checks::bf16_ops::KERNEL,
        &super::half_checks::f16_stencil::KERNEL,
        &super::half_checks::bf16_dot::KERNEL,
    ]
    .into_iter()
    .chain(super::warp_kernels::all())
    .chain(super::communication::communication_kernels())
    .chain(super::swaps::swap_kernels())
    .chain(super::chunks::chunk_kernels())
    .chain(super::async_copies::async_copy_kernels())
    .collect()
}
