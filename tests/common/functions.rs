//! Device functions, generic kernels and module constants: kernels of a
//! `#[gsync::kernels]` module, their CPU references and the checks the
//! emulator and GPU tests share.

use super::checks::{random_vec, rng, Scale};
use gsync::prelude::*;
use rand::Rng;

#[gsync::kernels]
pub mod kernels {
    /// Threads per block of the kernels here.
    pub const THREADS: usize = 256;
    const HALF: usize = THREADS / 2;
    /// The partial sums per block a kernel keeps, derived from other constants.
    pub const LANES: u32 = (HALF as u32) >> 6;

    /// The block's sum of `v`, through `tile` (one slot per thread): every
    /// thread gets it. Block-wide: `sync_block()` inside.
    #[device]
    fn block_sum<T: Num>(tile: &mut [T], v: T) -> T {
        let t = thread_idx() as usize;
        tile[t] = v;
        sync_block();
        let mut width = HALF;
        while width > 0 {
            if t < width {
                tile[t] = tile[t] + tile[t + width];
            }
            sync_block();
            width /= 2;
        }
        let total = tile[0];
        sync_block();
        total
    }

    /// The sum of a grid-stride slice, per thread.
    #[device]
    fn strided_sum<T: Num>(a: &[T]) -> T {
        let mut sum = T::ZERO;
        for i in grid_stride(0..a.len()) {
            sum = sum + a[i];
        }
        sum
    }

    /// Sums `a` into `total[0]` through per-block partials, for every element type.
    #[grid_phases(threads = 256)]
    pub fn reduce<T: Num>(a: &[T], partial: &mut [T], total: &mut [T]) {
        let mut tile = shared_array::<T, THREADS>();
        let mine = strided_sum(a);
        let block = block_sum(&mut tile, mine);
        if thread_idx() == 0 {
            partial[block_idx() as usize] = block;
        }
        grid_sync();
        if global_id() == 0 {
            let mut sum = T::ZERO;
            for b in 0..grid_dim() as usize {
                sum = sum + partial[b];
            }
            total[0] = sum;
        }
    }

    /// The first index at or after `from` whose element is `value`, or `a.len()`.
    #[device]
    fn find_from(a: &[u32], from: usize, value: u32) -> usize {
        if from >= a.len() {
            return a.len();
        }
        for i in from..a.len() {
            if a[i] == value {
                return i;
            }
        }
        a.len()
    }

    /// Whether `a[i]` is even; reads `a[i]`, so `i` must be in bounds.
    #[device]
    fn even_at(a: &[u32], i: usize) -> bool {
        a[i] % 2 == 0
    }

    /// For each `i`: the distance to the next `value` in `a`, if `a[i]` is even
    /// and `i + 1` is in bounds with an even element too; else `u32::MAX`.
    #[grid_phases]
    pub fn next_match(a: &[u32], out: &mut [u32], value: u32) {
        for i in grid_stride(0..a.len()) {
            // `even_at(a, i + 1)` may only run where `i + 1 < a.len()`.
            let pair = even_at(a, i) && i + 1 < a.len() && even_at(a, i + 1);
            let next = if pair { find_from(a, i, value) } else { a.len() };
            out[i] = if next < a.len() { (next - i) as u32 } else { u32::MAX };
        }
    }

    /// One round: `b[i] = a[i] + a[i + 1]` (cyclic), then a grid barrier.
    #[device]
    fn pair_sums(a: &[u32], b: &mut [u32]) {
        let n = a.len();
        for i in grid_stride(0..n) {
            b[i] = a[i].wrapping_add(a[(i + 1) % n]);
        }
        grid_sync();
    }

    /// Whether the run should go on: reads a counter every thread sees alike.
    #[device]
    fn rounds_left(done: &[u32], rounds: u32) -> bool {
        done[0] < rounds
    }

    /// Replaces `run`'s elements with their running sums, in place, and returns
    /// the total; `weights[r]` scales element `r` first. Called with a thread's
    /// own arrays.
    #[device]
    fn running_sums(run: &mut [u32], weights: &[u32]) -> u32 {
        let mut total = 0u32;
        for r in 0..4 {
            total = total.wrapping_add(run[r].wrapping_mul(weights[r]));
            run[r] = total;
        }
        total
    }

    /// Each thread's four keys from `keys[4 · global_id()]`, weighted by their
    /// position plus one and summed as they go, through local arrays that a
    /// device function updates: `out` gets the running sums, `totals` the total.
    #[grid_phases(threads = 64)]
    pub fn local_running_sums(keys: &[u32], out: &mut [u32], totals: &mut [u32]) {
        let g = global_id() as usize;
        if 4 * g + 3 < keys.len() {
            let mut run = [0u32; 4];
            let weights = [1u32, 2, 3, 4];
            for r in 0..4 {
                run[r] = keys[4 * g + r];
            }
            let total = running_sums(&mut run, &weights);
            for r in 0..4 {
                out[4 * g + r] = run[r];
            }
            totals[g] = total;
        }
    }

    /// `rounds` rounds of pair sums, ping-ponging between `a` and `b` through a
    /// device function that holds the barrier; the loop's condition calls one too.
    #[grid_phases]
    pub fn pair_rounds(a: &mut [u32], b: &mut [u32], done: &mut [u32], rounds: u32) {
        while rounds_left(done, rounds) {
            if done[0] % 2 == 0 {
                pair_sums(a, b);
            } else {
                pair_sums(b, a);
            }
            if global_id() == 0 {
                done[0] += 1;
            }
            grid_sync();
        }
    }
}

/// The wrapping sum the kernels compute, for integers; floats are exact here
/// (small integers), so the order of additions does not matter.
pub trait Element: kernels::reduce::Element + gsync::Num + std::fmt::Debug {
    fn from_small(v: u8) -> Self;
    fn add(self, other: Self) -> Self;
}

macro_rules! elements {
    ($($t:ty: $from:expr, $add:expr;)*) => {$(
        impl Element for $t {
            fn from_small(v: u8) -> Self {
                $from(v)
            }
            fn add(self, other: Self) -> Self {
                $add(self, other)
            }
        }
    )*};
}

elements! {
    u8: |v| v, u8::wrapping_add;
    i8: |v| v as i8, i8::wrapping_add;
    u16: |v| v as u16, u16::wrapping_add;
    i16: |v| v as i16, i16::wrapping_add;
    u32: |v| v as u32, u32::wrapping_add;
    i32: |v| v as i32, i32::wrapping_add;
    u64: |v| v as u64, u64::wrapping_add;
    i64: |v| v as i64, i64::wrapping_add;
    f32: |v| v as f32, |a, b| a + b;
    f64: |v| v as f64, |a, b| a + b;
}

fn reduce_one<T: Element>(gpu: &Gpu, n: usize) {
    let mut rng = rng();
    let input: Vec<T> = (0..n).map(|_| T::from_small(rng.gen_range(0..8))).collect();
    let expected = input.iter().fold(T::ZERO, |s, &x| s.add(x));
    let a = gpu.upload(&input).unwrap();
    let max = kernels::reduce::max_coresident_blocks::<T>(gpu, &Launch::new()).unwrap();
    let blocks = max.min(37);
    let mut partial = gpu.zeros::<T>(blocks as usize).unwrap();
    let mut total = gpu.zeros::<T>(1).unwrap();
    kernels::reduce::launch_with(gpu, &Launch::new().blocks(blocks), &a, &mut partial, &mut total).unwrap();
    assert_eq!(gpu.download(&total).unwrap()[0], expected, "{}", std::any::type_name::<T>());
}

pub fn a_generic_kernel_reduces_every_element_type(gpu: &Gpu, scale: Scale) {
    let n = scale.pick(1_000_003, 20_011);
    reduce_one::<u8>(gpu, n);
    reduce_one::<i8>(gpu, n);
    reduce_one::<u16>(gpu, n);
    reduce_one::<i16>(gpu, n);
    reduce_one::<u32>(gpu, n);
    reduce_one::<i32>(gpu, n);
    reduce_one::<u64>(gpu, n);
    reduce_one::<i64>(gpu, n);
    reduce_one::<f32>(gpu, n);
    reduce_one::<f64>(gpu, n);
}

fn next_match_reference(a: &[u32], value: u32) -> Vec<u32> {
    (0..a.len())
        .map(|i| {
            let pair = a[i].is_multiple_of(2) && i + 1 < a.len() && a[i + 1].is_multiple_of(2);
            let next = if pair { (i..a.len()).find(|&j| a[j] == value).unwrap_or(a.len()) } else { a.len() };
            if next < a.len() {
                (next - i) as u32
            } else {
                u32::MAX
            }
        })
        .collect()
}

pub fn device_functions_return_early_and_short_circuit(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let n = scale.pick(20_000, 2_000);
    let input: Vec<u32> = (0..n).map(|_| rng.gen_range(0..50)).collect();
    let a = gpu.upload(&input).unwrap();
    let mut out = gpu.zeros::<u32>(n).unwrap();
    // Bounds checks on: a call hoisted out of `&&` would read past the end.
    let launch = Launch::new().bounds_checks(true);
    kernels::next_match::launch_with(gpu, &launch, &a, &mut out, 7).unwrap();
    assert_eq!(gpu.download(&out).unwrap(), next_match_reference(&input, 7));
}

fn pair_rounds_reference(a: &[u32], rounds: u32) -> Vec<u32> {
    let mut x = a.to_vec();
    for _ in 0..rounds {
        x = (0..x.len()).map(|i| x[i].wrapping_add(x[(i + 1) % x.len()])).collect();
    }
    x
}

pub fn a_device_function_holds_a_grid_barrier(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let n = scale.pick(300_007, 5_003);
    let input: Vec<u32> = random_vec(&mut rng, n);
    for barrier in [Barrier::Auto, Barrier::MultiLaunch] {
        for rounds in [0u32, 1, 6, 7] {
            let mut a = gpu.upload(&input).unwrap();
            let mut b = gpu.zeros::<u32>(n).unwrap();
            let mut done = gpu.zeros::<u32>(1).unwrap();
            let launch = Launch::new().barrier(barrier);
            kernels::pair_rounds::launch_with(gpu, &launch, &mut a, &mut b, &mut done, rounds).unwrap();
            let result = gpu.download(if rounds % 2 == 0 { &a } else { &b }).unwrap();
            assert_eq!(result, pair_rounds_reference(&input, rounds), "{barrier}, {rounds} rounds");
        }
    }
}

pub fn a_device_function_updates_a_threads_own_arrays(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let threads = scale.pick(10_007, 333);
    let keys: Vec<u32> = random_vec(&mut rng, 4 * threads);
    let (mut expected_out, mut expected_totals) = (Vec::new(), Vec::new());
    for chunk in keys.chunks(4) {
        let mut total = 0u32;
        for (r, &k) in chunk.iter().enumerate() {
            total = total.wrapping_add(k.wrapping_mul(r as u32 + 1));
            expected_out.push(total);
        }
        expected_totals.push(total);
    }
    let dkeys = gpu.upload(&keys).unwrap();
    let mut out = gpu.zeros::<u32>(keys.len()).unwrap();
    let mut totals = gpu.zeros::<u32>(threads).unwrap();
    let launch = Launch::new().blocks(threads.div_ceil(64) as u32).bounds_checks(true);
    kernels::local_running_sums::launch_with(gpu, &launch, &dkeys, &mut out, &mut totals).unwrap();
    assert_eq!(gpu.download(&out).unwrap(), expected_out);
    assert_eq!(gpu.download(&totals).unwrap(), expected_totals);
}

pub fn module_constants_reach_the_kernels() {
    assert_eq!(kernels::LANES, 2);
    assert_eq!(kernels::reduce::__f32::KERNEL.default_threads, 256);
}
