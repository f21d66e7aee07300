//! Each kernel's check against its CPU reference on random input (see [`rng`]),
//! shared by the GPU tests and the emulator tests so that both backends are
//! held to the same references.

#[allow(unused_imports)] // the async-copy checks, under the same path
pub use super::async_copies::{
    an_async_copy_past_the_end_is_out_of_bounds, async_copies_of_every_width_move_every_element,
    async_copies_stage_tiles_while_the_block_works, the_emulator_refuses_a_write_to_a_copy_s_source_in_flight,
    the_emulator_shows_a_copy_in_flight_as_neither_old_nor_new,
};
#[allow(unused_imports)] // the chunk checks, under the same path
pub use super::chunks::{
    a_chunk_past_the_end_is_out_of_bounds, a_generic_kernel_moves_chunks_of_every_element_type,
    chunks_of_every_width_move_every_element, chunks_of_four_keys_match_the_cpu,
    chunks_pass_through_functions_and_swaps,
};
#[allow(unused_imports)] // the point-to-point communication checks, under the same path
pub use super::communication::*;
#[allow(unused_imports)] // the device-function checks, under the same path
pub use super::functions::{
    a_device_function_holds_a_grid_barrier, a_device_function_updates_a_threads_own_arrays,
    a_generic_kernel_reduces_every_element_type, device_functions_return_early_and_short_circuit,
};
#[allow(unused_imports)] // the fused integer builtins' check, under the same path
pub use super::fused_int::fused_integer_builtins_wrap_their_sums_like_plain_rust;
#[allow(unused_imports)] // the half precision checks, under the same path
pub use super::half_checks::{
    a_bf16_dot_product_with_shuffles_and_atomics_matches_the_cpu, an_f16_stencil_with_f32_accumulation_matches_the_cpu,
    f16_and_bf16_match_the_half_crate_bit_for_bit,
};
#[allow(unused_imports)] // the heat-equation checks, under the same path
pub use super::heat_checks::*;
use super::kernels::*;
#[allow(unused_imports)] // the shared-slice checks, under the same path
pub use super::shared_slice_checks::*;
#[allow(unused_imports)] // the sorts' checks, under the same path
pub use super::sort_checks::{
    the_library_sort_keeps_one_order_across_its_kernels, the_radix_sort_copies_the_digits_every_key_shares,
    the_radix_sort_keeps_the_largest_keys_of_a_partial_tile, the_radix_sort_runs_any_grid_over_many_tiles,
    the_radix_sort_runs_under_every_barrier, the_radix_sort_sorts_every_key_type_stably,
    the_sorts_refuse_inputs_they_cannot_take,
};
#[allow(unused_imports)] // the Smith-Waterman checks, under the same path
pub use super::sw_checks::*;
#[allow(unused_imports)] // the slice-swap checks, under the same path
pub use super::swaps::{
    a_ping_pong_loop_swaps_its_slices, a_swap_among_thread_work_is_not_split, scalars_swap_per_thread,
    swapped_slices_carry_their_lengths,
};
#[allow(unused_imports)] // the warp, match, float-atomic and assert checks, under the same path
pub use super::warp_checks::*;
use gsync::prelude::*;
use rand::{rngs::StdRng, Rng, SeedableRng};

/// How big the inputs and grids of a check are.
#[derive(Clone, Copy)]
pub enum Scale {
    /// Real GPU sizes, up to the largest co-resident grid.
    Full,
    /// Sizes the CPU emulator finishes in a moment.
    Small,
}

impl Scale {
    pub fn pick(self, full: usize, small: usize) -> usize {
        match self {
            Scale::Full => full,
            Scale::Small => small,
        }
    }

    /// Grids worth covering: small odd ones, one block per SM, and the most
    /// blocks that can be co-resident (the emulator has no such limit).
    fn grids(self, gpu: &Gpu, max: u32) -> Vec<u32> {
        let mut g = match self {
            Scale::Full => vec![1, 7, 33, gpu.info().sm_count, max],
            Scale::Small => vec![1, 7, 33],
        };
        g.retain(|&b| b >= 1 && b <= max);
        g.dedup();
        g
    }
}

/// The variable that draws other random inputs, as in the macro crate's random kernels.
pub const SEED_VAR: &str = "GSYNC_RANDOM_SEED";

/// The inputs' seed when the environment names none: every run checks the same inputs.
pub const DEFAULT_SEED: u64 = 0x6773_796e_6374;

/// The seed of the random inputs: `GSYNC_RANDOM_SEED=<n>` if set, else [`DEFAULT_SEED`].
pub fn seed() -> u64 {
    match std::env::var(SEED_VAR) {
        Ok(value) => value.trim().parse().unwrap_or_else(|_| panic!("{SEED_VAR}={value:?} is no u64")),
        Err(_) => DEFAULT_SEED,
    }
}

/// A generator of the random inputs, from [`seed`], which it prints (a failing test shows it;
/// `GSYNC_RANDOM_SEED=<n>` reruns with it or draws others).
pub fn rng() -> StdRng {
    let seed = seed();
    eprintln!("seed {seed} ({SEED_VAR}=<n> draws other inputs)");
    StdRng::seed_from_u64(seed)
}

pub fn random_vec<T>(rng: &mut StdRng, n: usize) -> Vec<T>
where
    rand::distributions::Standard: rand::distributions::Distribution<T>,
{
    (0..n).map(|_| rng.gen()).collect()
}

pub fn saxpy_matches_the_cpu(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let n = scale.pick(1_000_003, 10_007);
    let (x, y): (Vec<f32>, Vec<f32>) = (random_vec(&mut rng, n), random_vec(&mut rng, n));
    let alpha = rng.gen::<f32>();
    let dx = gpu.upload(&x).unwrap();
    let mut dy = gpu.upload(&y).unwrap();
    let report = saxpy::launch(gpu, alpha, &dx, &mut dy).unwrap();
    assert_eq!(gpu.download(&dy).unwrap(), saxpy_reference(alpha, &x, &y));
    eprintln!("saxpy: {} blocks × {} threads, {:?}", report.blocks, report.threads, report.gpu_time);
}

pub fn fixed_phases_pass_data_between_blocks(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let sizes = match scale {
        Scale::Full => vec![1usize, 1000, 65_537, 1 << 20],
        Scale::Small => vec![1usize, 1000, 5_003],
    };
    for n in sizes {
        let input: Vec<u32> = random_vec(&mut rng, n);
        let di = gpu.upload(&input).unwrap();
        let mut a = gpu.upload(&vec![u32::MAX; n]).unwrap();
        let mut b = gpu.upload(&vec![u32::MAX; n]).unwrap();
        let mut out = gpu.upload(&vec![0xdead_beefu32; n]).unwrap();
        let max = three_phases::max_coresident_blocks(gpu, &Launch::new()).unwrap();
        for blocks in scale.grids(gpu, max) {
            three_phases::launch_with(gpu, &Launch::new().blocks(blocks), &di, &mut a, &mut b, &mut out).unwrap();
            assert_eq!(gpu.download(&out).unwrap(), three_phases_reference(&input), "n {n}, {blocks} blocks");
        }
    }
}

pub fn many_phases_each_see_every_blocks_writes(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let rounds = scale.pick(1000, 50) as u32;
    for threads in [32, 256, 1024] {
        let launch = Launch::new().threads(threads);
        let max = rotate_rounds::max_coresident_blocks(gpu, &launch).unwrap();
        for blocks in scale.grids(gpu, max) {
            let n = match scale {
                Scale::Full => (max * threads) as usize * 3 + 17,
                Scale::Small => (blocks * threads) as usize * 2 + 17,
            };
            let input: Vec<u32> = random_vec(&mut rng, n);
            let shift = threads * 5 + 3; // always lands in another block's range
            let mut a = gpu.upload(&input).unwrap();
            let mut b = gpu.zeros::<u32>(n).unwrap();
            let report =
                rotate_rounds::launch_with(gpu, &launch.clone().blocks(blocks), &mut a, &mut b, shift, rounds).unwrap();
            let result = gpu.download(if rounds.is_multiple_of(2) { &a } else { &b }).unwrap();
            let expected = rotate_rounds_reference(&input, shift, rounds);
            let wrong = result.iter().zip(&expected).filter(|(x, y)| x != y).count();
            assert_eq!(wrong, 0, "{blocks} blocks × {threads} threads: {wrong} of {n} wrong");
            eprintln!(
                "{rounds} phases, {blocks} blocks × {threads} threads: {:?} ({:.2} µs per phase)",
                report.gpu_time,
                report.gpu_time.as_secs_f64() * 1e6 / f64::from(rounds)
            );
        }
    }
}

/// Under every device barrier, a profiled run of `one_slow_block` computes what an unprofiled
/// one does, and its profile shows what a grid barrier guarantees: no block leaves
/// `grid_sync()` number k before every block has arrived at it. Without the barrier, the
/// blocks that wait for each round's slow block would leave before it arrives.
pub fn a_profile_shows_every_barrier_holding_every_block(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let rounds = scale.pick(100, 12) as u32;
    let spin = scale.pick(20_000, 50) as u32;
    let threads = 128;
    let max = one_slow_block::max_coresident_blocks(gpu, &Launch::new().threads(threads)).unwrap();
    // LFS serves at most as many blocks as a block has threads.
    let blocks = max.min(scale.pick(threads as usize, 7) as u32);
    let n = (blocks * threads) as usize * 2 + 17;
    let input: Vec<u32> = random_vec(&mut rng, n);
    let shift = threads * 3 + 5;
    let expected = (rotate_rounds_reference(&input, shift, rounds), one_slow_block_reference(rounds, spin));
    let run = |launch: &Launch| {
        let mut a = gpu.upload(&input).unwrap();
        let mut b = gpu.zeros::<u32>(n).unwrap();
        let mut slow = gpu.zeros::<u32>(rounds as usize).unwrap();
        let report = one_slow_block::launch_with(gpu, launch, &mut a, &mut b, &mut slow, shift, spin).unwrap();
        let result = gpu.download(if rounds.is_multiple_of(2) { &a } else { &b }).unwrap();
        (report, (result, gpu.download(&slow).unwrap()))
    };
    for &barrier in Barrier::ALL.iter().filter(|&&barrier| barrier != Barrier::MultiLaunch) {
        let launch = Launch::new().blocks(blocks).threads(threads).barrier(barrier);
        let (plain, plain_result) = run(&launch);
        assert!(plain.profile.is_none(), "{barrier}: no profile unless asked for");
        assert!(plain_result == expected, "{barrier}: the unprofiled run is wrong");
        let (report, result) = run(&launch.clone().profile(true));
        assert!(result == expected, "{barrier}: the profiled run is wrong");
        let profile = report.profile.unwrap_or_else(|| panic!("{barrier}: no profile"));
        assert_eq!((profile.blocks().len(), profile.phases().len()), (blocks as usize, rounds as usize + 1));
        assert!(!profile.is_truncated(), "{barrier}");
        for block in profile.blocks() {
            assert_eq!(block.visits.len(), rounds as usize, "{barrier}, block {}", block.block);
            let mut times = vec![block.start];
            times.extend(block.visits.iter().flat_map(|visit| [visit.arrive, visit.leave]));
            times.push(block.end);
            assert!(times.is_sorted(), "{barrier}, block {}: its times go back: {times:?}", block.block);
        }
        for k in 0..rounds as usize {
            let (last, arrived) =
                profile.blocks().iter().map(|block| (block.visits[k].arrive, block.block)).max().unwrap();
            let (first, left) =
                profile.blocks().iter().map(|block| (block.visits[k].leave, block.block)).min().unwrap();
            assert!(
                first >= last,
                "{barrier}: block {left} left grid_sync() {k} at {first} ns, before block {arrived} arrived at {last} ns"
            );
        }
        assert_eq!(profile.total_span() + profile.total_barrier_latency(), profile.total(), "{barrier}");
        if matches!(scale, Scale::Full) {
            // Tens of microseconds of spinning make each round's slow block the slowest.
            for phase in &profile.phases()[..rounds as usize] {
                assert_eq!(phase.slowest_block, phase.phase % blocks, "{barrier}, phase {}", phase.phase);
            }
        }
        eprintln!("{profile}");
    }
}

pub fn the_library_smoothing_kernel_matches_the_cpu_bit_for_bit(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let n = scale.pick(100_000, 5_000);
    let input: Vec<f32> = random_vec(&mut rng, n);
    for rounds in [1, 2, 101] {
        let mut a = gpu.upload(&input).unwrap();
        let mut b = gpu.zeros::<f32>(n).unwrap();
        gsync::kernels::smooth::launch_with(gpu, &Launch::new().blocks(60).threads(32), &mut a, &mut b, rounds)
            .unwrap();
        let result = gpu.download(if rounds.is_multiple_of(2) { &a } else { &b }).unwrap();
        let expected = gsync::kernels::smooth_reference(&input, rounds);
        assert!(result.iter().zip(&expected).all(|(x, y)| x.to_bits() == y.to_bits()), "rounds {rounds}");
    }
}

pub fn shared_memory_block_sums_and_a_grid_total(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let n = scale.pick(3_000_001, 50_001);
    let input: Vec<u32> = (0..n).map(|_| rng.gen_range(0..1000)).collect();
    let di = gpu.upload(&input).unwrap();
    let max = block_sums::max_coresident_blocks(gpu, &Launch::new()).unwrap();
    for blocks in scale.grids(gpu, max) {
        let mut partial = gpu.upload(&vec![u32::MAX; blocks as usize]).unwrap();
        let mut total = gpu.zeros::<u64>(1).unwrap();
        block_sums::launch_with(gpu, &Launch::new().blocks(blocks), &di, &mut partial, &mut total).unwrap();
        let expected: u64 = input.iter().map(|&x| x as u64).sum();
        assert_eq!(gpu.download(&total).unwrap()[0], expected, "{blocks} blocks");
    }
}

pub fn atomics_add_min_max_exchange_and_compare_and_swap(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let n = scale.pick(500_000, 20_000);
    let values: Vec<i32> = random_vec(&mut rng, n);
    let bins = 97u32;
    let slots = 4096usize;
    let dv = gpu.upload(&values).unwrap();
    let mut histogram = gpu.zeros::<u32>(bins as usize).unwrap();
    let mut extremes = gpu.upload(&[i32::MAX, i32::MIN]).unwrap();
    let mut last = gpu.zeros::<u32>(1).unwrap();
    let mut claims = gpu.zeros::<u32>(slots).unwrap();
    atomics::launch(gpu, &dv, &mut histogram, &mut extremes, &mut last, &mut claims).unwrap();
    let mut expected = vec![0u32; bins as usize];
    for v in &values {
        expected[v.rem_euclid(bins as i32) as usize] += 1;
    }
    assert_eq!(gpu.download(&histogram).unwrap(), expected);
    let ext = gpu.download(&extremes).unwrap();
    assert_eq!(ext, vec![*values.iter().min().unwrap(), *values.iter().max().unwrap()]);
    assert_eq!(gpu.download(&last).unwrap(), vec![7]);
    let claims = gpu.download(&claims).unwrap();
    for (slot, &c) in claims.iter().enumerate() {
        let mapped = values.iter().any(|&v| (v as u32) as usize % slots == slot);
        assert_eq!(c != 0, mapped, "slot {slot}");
        if c != 0 {
            assert_eq!((values[c as usize - 1] as u32) as usize % slots, slot);
        }
    }
}

pub fn warp_shuffles_reduce_scan_and_broadcast(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    for n in [32usize, 1000, scale.pick(100_003, 10_003)] {
        let input: Vec<u32> = random_vec(&mut rng, n);
        let warps = n.div_ceil(32);
        let di = gpu.upload(&input).unwrap();
        let (mut sums, mut maxima) = (gpu.zeros::<u32>(warps).unwrap(), gpu.zeros::<u32>(warps).unwrap());
        let (mut scans, mut broadcast) = (gpu.zeros::<u32>(n).unwrap(), gpu.zeros::<u32>(n).unwrap());
        warp_ops::launch(gpu, &di, &mut sums, &mut maxima, &mut scans, &mut broadcast).unwrap();
        let (es, em, esc, eb) = warp_ops_reference(&input);
        assert_eq!(gpu.download(&sums).unwrap(), es, "sums, n {n}");
        assert_eq!(gpu.download(&maxima).unwrap(), em, "maxima, n {n}");
        assert_eq!(gpu.download(&scans).unwrap(), esc, "scans, n {n}");
        assert_eq!(gpu.download(&broadcast).unwrap(), eb, "broadcast, n {n}");
    }
}

/// Floats that exercise saturation and NaN in casts, mixed with ordinary values.
fn awkward_floats(rng: &mut StdRng, n: usize) -> Vec<f32> {
    let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e30, -1e30, 300.7, -200.2, 65535.9, -0.9, 0.0];
    (0..n).map(|i| if i % 3 == 0 { specials[i / 3 % specials.len()] } else { rng.gen_range(-1e5..1e5) }).collect()
}

/// One check per integer type: wrapping arithmetic at the type's own width.
macro_rules! int_check {
    ($check:ident, $kernel:ident, $reference:ident, $t:ty) => {
        pub fn $check(gpu: &Gpu, scale: Scale) {
            let mut rng = rng();
            let n = scale.pick(10_007, 2_003);
            let a: Vec<$t> = random_vec(&mut rng, n);
            let mut b: Vec<$t> = random_vec(&mut rng, n);
            b[0] = 0 as $t; // the `y != 0` branch
            let floats = awkward_floats(&mut rng, n);
            let (da, db, df) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap(), gpu.upload(&floats).unwrap());
            let mut out = gpu.zeros::<$t>(n).unwrap();
            let mut wide = gpu.zeros::<i64>(n).unwrap();
            let mut from_float = gpu.zeros::<$t>(n).unwrap();
            $kernel::launch(gpu, &da, &db, &mut out, &mut wide, &mut from_float, &df).unwrap();
            let (eo, ew, ef) = $reference(&a, &b, &floats);
            assert_eq!(gpu.download(&out).unwrap(), eo);
            assert_eq!(gpu.download(&wide).unwrap(), ew);
            assert_eq!(gpu.download(&from_float).unwrap(), ef);
        }
    };
}

int_check!(u8_arithmetic_wraps_at_8_bits, arith_u8, arith_u8_reference, u8);
int_check!(i8_arithmetic_wraps_at_8_bits, arith_i8, arith_i8_reference, i8);
int_check!(u16_arithmetic_wraps_at_16_bits, arith_u16, arith_u16_reference, u16);
int_check!(i16_arithmetic_wraps_at_16_bits, arith_i16, arith_i16_reference, i16);
int_check!(u32_arithmetic_wraps_at_32_bits, arith_u32, arith_u32_reference, u32);
int_check!(i32_arithmetic_wraps_at_32_bits, arith_i32, arith_i32_reference, i32);
int_check!(u64_arithmetic_wraps_at_64_bits, arith_u64, arith_u64_reference, u64);
int_check!(i64_arithmetic_wraps_at_64_bits, arith_i64, arith_i64_reference, i64);

/// One check per float type: IEEE arithmetic bit for bit, methods, casts.
macro_rules! float_check {
    ($check:ident, $kernel:ident, $reference:ident, $t:ty) => {
        pub fn $check(gpu: &Gpu, scale: Scale) {
            let mut rng = rng();
            let n = scale.pick(10_007, 2_003);
            let a: Vec<$t> = (0..n).map(|_| rng.gen_range(-1e3..1e3)).collect();
            let b: Vec<$t> = (0..n).map(|_| rng.gen_range(-1e3..1e3)).collect();
            let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
            let mut out = gpu.zeros::<$t>(n).unwrap();
            let mut as_int = gpu.zeros::<i32>(n).unwrap();
            $kernel::launch(gpu, &da, &db, &mut out, &mut as_int).unwrap();
            let (eo, ei) = $reference(&a, &b);
            let got = gpu.download(&out).unwrap();
            for (i, (g, e)) in got.iter().zip(&eo).enumerate() {
                assert!(g.to_bits() == e.to_bits() || (g.is_nan() && e.is_nan()), "element {i}: {g} vs {e}");
            }
            assert_eq!(gpu.download(&as_int).unwrap(), ei);
        }
    };
}

float_check!(f32_arithmetic_matches_the_cpu_bit_for_bit, arith_f32, arith_f32_reference, f32);
float_check!(f64_arithmetic_matches_the_cpu_bit_for_bit, arith_f64, arith_f64_reference, f64);

pub fn an_out_of_bounds_read_returns_a_typed_error(gpu: &Gpu) {
    let n = 1000;
    let input = gpu.upload(&vec![1u32; n]).unwrap();
    let mut out = gpu.zeros::<u32>(n).unwrap();
    let launch = Launch::new().bounds_checks(true);
    let error = reads_past_the_end::launch_with(gpu, &launch, &input, &mut out).expect_err("index n is out of bounds");
    match &error {
        Error::OutOfBounds { array, index, len, line, .. } => {
            assert_eq!((array.as_str(), *index, *len), ("input", n as u64, n as u64));
            assert!(*line > 0);
        }
        other => panic!("expected OutOfBounds, got {other:?}"),
    }
    eprintln!("{error}");
    // The faulty reads yielded zero and the kernel still ran its second phase.
    let out = gpu.download(&out).unwrap();
    assert_eq!(out[n - 1], 1);
    assert!(out[..n - 1].iter().all(|&x| x == 2));
}

pub fn control_flow_read_from_device_memory(gpu: &Gpu, scale: Scale, barrier: Barrier) {
    let mut rng = rng();
    let n = scale.pick(100_000, 5_000);
    let data: Vec<u32> = (0..n).map(|_| rng.gen_range(0..1_000_000)).collect();
    let rounds = rng.gen_range(5..50u32);
    let mut flag = gpu.upload(&[rounds]).unwrap();
    let mut d = gpu.upload(&data).unwrap();
    countdown::launch_with(gpu, &Launch::new().barrier(barrier), &mut flag, &mut d).unwrap();
    let expected: Vec<u32> = data.iter().map(|x| x + rounds).collect();
    assert_eq!(gpu.download(&d).unwrap(), expected, "{barrier}");
    assert_eq!(gpu.download(&flag).unwrap(), vec![0], "{barrier}");
}

/// Bitonic sort of every key type, order and awkward length, with and
/// without values, against the standard library's sort.
pub fn bitonic_sorts_like_the_standard_library(gpu: &Gpu, scale: Scale) {
    use gsync::kernels::bitonic::sort;
    let mut rng = rng();
    let lengths = match scale {
        Scale::Full => vec![0usize, 1, 2, 3, 1000, 2048, 2049, 65_536, 100_003, 1 << 20],
        Scale::Small => vec![0usize, 1, 2, 3, 1000, 2048, 2049, 9_001],
    };
    for n in lengths {
        let launch = Launch::new();
        let keys: Vec<u32> = (0..n)
            .map(|_| rng.gen_range(0..(n as u32 / 2).max(1)) * 97 + u32::from(n % 5 == 0) * 0xffff_0000)
            .collect();
        for descending in [false, true] {
            let mut expected = keys.clone();
            expected.sort_unstable();
            if descending {
                expected.reverse();
            }
            let got = sort(gpu, &launch, &keys, None, descending).unwrap();
            assert_eq!(got.keys, expected, "u32, n {n}, descending {descending}");
            // Small tiles cross many more phases: checked on small inputs.
            for tile in [2, 64, 512].into_iter().filter(|_| n <= 3000) {
                let got = gsync::kernels::bitonic::sort_in_tiles(gpu, &launch, &keys, None, descending, tile).unwrap();
                assert_eq!(got.keys, expected, "u32, n {n}, descending {descending}, tile {tile}");
            }
        }
        // Key-value pairs: equal keys keep their order, so the result is the stable sort's.
        let values: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
        let got = sort(gpu, &launch, &keys, Some(&values), false).unwrap();
        let mut pairs: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
        pairs.sort_by_key(|p| p.0);
        assert_eq!(got.keys, pairs.iter().map(|p| p.0).collect::<Vec<_>>(), "pairs, n {n}");
        assert_eq!(got.values, pairs.iter().map(|p| p.1).collect::<Vec<_>>(), "pairs, n {n}");
        // f32 in total order, NaNs last in both directions.
        let floats: Vec<f32> = (0..n)
            .map(|i| match i % 11 {
                0 => f32::NAN,
                1 => -0.0,
                2 => f32::NEG_INFINITY,
                _ => rng.gen_range(-1e6..1e6),
            })
            .collect();
        for descending in [false, true] {
            let got = sort(gpu, &launch, &floats, None, descending).unwrap();
            let mut expected = floats.clone();
            expected.sort_by(|a, b| if descending { b.total_cmp(a) } else { a.total_cmp(b) });
            let nans = expected.iter().filter(|x| x.is_nan()).count();
            expected.retain(|x| !x.is_nan());
            let got_bits: Vec<u32> = got.keys[..n - nans].iter().map(|x| x.to_bits()).collect();
            assert_eq!(got_bits, expected.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), "f32, n {n}");
            assert!(got.keys[n - nans..].iter().all(|x| x.is_nan()), "NaNs last, n {n}");
        }
    }
}

/// The key sort (`sort_keys`) on every block size it runs, with stages whose distances
/// across tiles take more than one chunk phase, more chunks than blocks, and every barrier;
/// block sizes its layouts cannot use are refused.
pub fn the_key_sort_runs_every_block_size_and_chunking(gpu: &Gpu, scale: Scale) {
    use gsync::kernels::bitonic::{key_phases, sort, KEYS_PER_THREAD};
    let mut rng = rng();
    for threads in [32u32, 64, 128, 256, 512] {
        let tile = KEYS_PER_THREAD * threads as usize;
        let most = tile.ilog2() - 5;
        // One tile; then enough tiles that the last stage's distances across tiles take two
        // chunk phases (on the emulator for the smallest tiles only: 2^14 keys).
        let mut lengths = vec![tile - 5, (tile << most) + 3];
        if matches!(scale, Scale::Small) && threads > 32 {
            lengths = vec![tile - 5, 4 * tile + 1];
        }
        for n in lengths {
            let keys: Vec<u32> = (0..n).map(|_| rng.gen_range(0..(n as u32).max(2))).collect();
            let mut expected = keys.clone();
            expected.sort_unstable();
            for blocks in [None, Some(3)] {
                let mut launch = Launch::new().threads(threads).profile(true);
                if let Some(blocks) = blocks {
                    launch = launch.blocks(blocks);
                }
                let got = sort(gpu, &launch, &keys, None, false).unwrap();
                assert!(got.keys == expected, "{threads} threads, {n} keys, {blocks:?} blocks");
                let barriers = got.report.profile.as_ref().map(|p| p.grid_syncs());
                assert_eq!(barriers, Some(u64::from(key_phases(n, threads)) - 1), "{threads} threads, {n} keys");
            }
        }
    }
    let keys: Vec<u32> = (0..20_000).map(|_| rng.gen()).collect();
    let mut expected = keys.clone();
    expected.sort_unstable();
    for &barrier in Barrier::ALL {
        let launch = Launch::new().threads(32).blocks(8).barrier(barrier);
        assert!(sort(gpu, &launch, &keys, None, false).unwrap().keys == expected, "{barrier}");
    }
    for threads in [16u32, 96, 1024] {
        let error = sort(gpu, &Launch::new().threads(threads), &keys, None, false).unwrap_err();
        assert!(matches!(error, Error::RefusedBlockSize { threads: t, .. } if t == threads), "{threads}: {error}");
    }
    let mut direct = gpu.upload(&[0u32; 1536]).unwrap();
    let error =
        gsync::kernels::bitonic::sort_keys::launch_with(gpu, &Launch::new().threads(96), &mut direct).unwrap_err();
    assert!(matches!(error, Error::RefusedBlockSize { threads: 96, .. }), "{error}");
}

/// Bitonic sort under every barrier, with more tiles than blocks (each
/// block loops over tiles) and, on a GPU, more tiles than the largest
/// co-resident grid; and with the largest tiles.
pub fn bitonic_sorts_under_every_barrier_with_more_tiles_than_blocks(gpu: &Gpu, scale: Scale) {
    use gsync::kernels::bitonic::{sort_in_tiles, TILE};
    let mut rng = rng();
    // Full: 16,384 tiles of 64 keys on 32-thread blocks, against at most 4,224 co-resident blocks.
    let (n, tile, blocks) = match scale {
        Scale::Full => (1usize << 20, 64, None),
        Scale::Small => (5000, 64, Some(3)),
    };
    let keys: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
    let mut expected = keys.clone();
    expected.sort_unstable();
    let mut barriers = Barrier::ALL.to_vec();
    barriers.push(Barrier::Ilbs { groups: Some(2) });
    for barrier in barriers {
        let mut launch = Launch::new().barrier(barrier).threads(32);
        if let Some(blocks) = blocks {
            launch = launch.blocks(blocks);
        }
        let got = sort_in_tiles(gpu, &launch, &keys, None, false, tile).unwrap();
        assert_eq!(got.keys, expected, "{barrier}");
        if matches!(scale, Scale::Full) && barrier != Barrier::Lfs {
            let resident = gsync::kernels::bitonic::bitonic_sort::max_coresident_blocks(gpu, &launch).unwrap();
            assert!((n / tile) as u32 > resident, "{} tiles, {resident} co-resident blocks", n / tile);
        }
    }
    // Tiles in registers (block sizes that are powers of two, one to eight keys per thread)
    // and in shared memory (other block sizes, more keys per thread).
    let keys: Vec<u32> = (0..3000).map(|_| rng.gen_range(0..5000)).collect();
    let mut expected = keys.clone();
    expected.sort_unstable();
    for threads in [32u32, 64, 96, 256] {
        for tile in [32usize, 64, 256, 1024, 4096] {
            let launch = Launch::new().threads(threads).blocks(2);
            let got = sort_in_tiles(gpu, &launch, &keys, None, false, tile).unwrap();
            assert_eq!(got.keys, expected, "{threads} threads, {tile}-key tiles");
        }
    }
    // The largest tiles: keys alone, and key-value pairs (clamped to their own limit).
    let keys: Vec<u32> = (0..3 * TILE).map(|_| rng.gen_range(0..1000)).collect();
    let values: Vec<u32> = (0..keys.len() as u32).collect();
    let mut pairs: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    pairs.sort_by_key(|p| p.0);
    let launch = Launch::new().blocks(2);
    let got = sort_in_tiles(gpu, &launch, &keys, None, false, TILE).unwrap();
    assert_eq!(got.keys, pairs.iter().map(|p| p.0).collect::<Vec<_>>(), "keys alone, {TILE}-key tiles");
    let got = sort_in_tiles(gpu, &launch, &keys, Some(&values), false, TILE).unwrap();
    assert_eq!(got.values, pairs.iter().map(|p| p.1).collect::<Vec<_>>(), "pairs, {TILE}-key tiles requested");
}

/// The CUDA-style kernel whose lane, warp, block and slot are computed once
/// at the top, under `barrier`; split, every segment recomputes them.
pub fn hoisted_indices_match_the_cpu(gpu: &Gpu, scale: Scale, barrier: Barrier) {
    let mut rng = rng();
    let input: Vec<u32> = random_vec(&mut rng, scale.pick(1 << 20, 10_007));
    let rounds = rng.gen_range(1..6u32);
    let di = gpu.upload(&input).unwrap();
    // 80 threads: a partial last warp.
    for threads in [32u32, 80, 256] {
        let launch = Launch::new().threads(threads).barrier(barrier);
        let max = hoisted_indices::max_coresident_blocks(gpu, &launch.clone().barrier(Barrier::Cooperative)).unwrap();
        for blocks in scale.grids(gpu, max) {
            let slots = (blocks * threads.div_ceil(32)) as usize;
            let (mut per_warp, mut out) = (gpu.zeros::<u32>(slots).unwrap(), gpu.zeros::<u32>(slots).unwrap());
            hoisted_indices::launch_with(gpu, &launch.clone().blocks(blocks), &di, &mut per_warp, &mut out, rounds)
                .unwrap();
            let (per_warp_expected, out_expected) = hoisted_indices_reference(&input, blocks, threads, rounds);
            let context = format!("{barrier}, {blocks} blocks × {threads} threads, {rounds} rounds");
            assert_eq!(gpu.download(&per_warp).unwrap(), per_warp_expected, "{context}");
            assert_eq!(gpu.download(&out).unwrap(), out_expected, "{context}");
        }
    }
}

/// Splittable kernels give the same bits under MultiLaunch as fused, and a
/// kernel without per-thread work runs split too.
pub fn split_and_fused_runs_agree(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let n = scale.pick(1 << 20, 5_003);
    let input: Vec<u32> = random_vec(&mut rng, n);
    let floats: Vec<f32> = (0..n).map(|_| rng.gen()).collect();
    let rounds = rng.gen_range(2..20u32);
    let run = |barrier: Barrier| {
        let launch = Launch::new().blocks(7).threads(64).barrier(barrier);
        let di = gpu.upload(&input).unwrap();
        let (mut a, mut b) = (gpu.zeros::<u32>(n).unwrap(), gpu.zeros::<u32>(n).unwrap());
        let mut out = gpu.zeros::<u32>(n).unwrap();
        three_phases::launch_with(gpu, &launch, &di, &mut a, &mut b, &mut out).unwrap();
        let (mut fa, mut fb) = (gpu.upload(&floats).unwrap(), gpu.zeros::<f32>(n).unwrap());
        gsync::kernels::smooth::launch_with(gpu, &launch, &mut fa, &mut fb, rounds).unwrap();
        let report = no_thread_work::launch_with(gpu, &launch, rounds).unwrap();
        assert_eq!(report.barrier, barrier);
        let smoothed = gpu.download(if rounds.is_multiple_of(2) { &fa } else { &fb }).unwrap();
        (gpu.download(&out).unwrap(), smoothed.iter().map(|x| x.to_bits()).collect::<Vec<u32>>())
    };
    let fused = run(Barrier::Cooperative);
    assert_eq!(fused.0, three_phases_reference(&input));
    assert!(run(Barrier::MultiLaunch) == fused, "split and fused runs differ");
}

/// Per-thread state across a barrier: MultiLaunch refuses the kernel before
/// launching, naming the variable and the grid_sync(); fused, it runs.
pub fn a_kernel_that_cannot_be_split_is_refused_under_multi_launch(gpu: &Gpu) {
    let data: Vec<u32> = (0..1000).collect();
    let mut d = gpu.upload(&data).unwrap();
    let split = Launch::new().barrier(Barrier::MultiLaunch);
    let kernel = &keeps_a_thread_value_across_the_barrier::KERNEL;
    let refused = |result: gsync::Result<_>| match result {
        Err(Error::CannotSplit { kernel, reason }) => {
            assert_eq!(kernel, "keeps_a_thread_value_across_the_barrier");
            assert!(reason.contains("`kept`") && reason.contains("lives across the grid_sync() at line "), "{reason}");
        }
        other => panic!("expected CannotSplit, got {other:?}"),
    };
    refused(keeps_a_thread_value_across_the_barrier::launch_with(gpu, &split, &mut d).map(drop));
    // SAFETY: refused before anything runs.
    refused(unsafe { keeps_a_thread_value_across_the_barrier::launch_oversubscribed(gpu, &split, &mut d) }.map(drop));
    refused(gpu.max_coresident_blocks(kernel, &split).map(drop));
    refused(gpu.begin_split(kernel, &split, &[]).map(drop));
    assert_eq!(gpu.download(&d).unwrap(), data, "nothing ran");
    keeps_a_thread_value_across_the_barrier::launch_with(gpu, &Launch::new(), &mut d).unwrap();
    assert_eq!(gpu.download(&d).unwrap(), data.iter().map(|x| x + 1).collect::<Vec<_>>());
}

/// Unary operators and casts as method receivers agree with Rust, under `barrier`.
pub fn unary_receivers_match_rust(gpu: &Gpu, barrier: Barrier) {
    let (x, y, n) = (0.75f64, -1.5f32, -12345i32);
    let mut floats = gpu.zeros::<f64>(6).unwrap();
    let mut ints = gpu.zeros::<u32>(9).unwrap();
    let launch = Launch::new().barrier(barrier);
    receivers::launch_with(gpu, &launch, x, y, n, &mut floats, &mut ints).unwrap();
    let (expected_floats, expected_ints) = receivers_reference(x, y, n);
    let floats: Vec<u64> = gpu.download(&floats).unwrap().iter().map(|f| f.to_bits()).collect();
    let expected_floats: Vec<u64> = expected_floats.iter().map(|f| f.to_bits()).collect();
    // `exp` may differ in the last bits between CUDA and the host's libm: the rest is exact.
    assert_eq!(floats[0], expected_floats[0], "(-0.0f64).exp() under {barrier}");
    assert!(floats[1].abs_diff(expected_floats[1]) <= 2, "(-x).exp() under {barrier}");
    assert_eq!(floats[2..], expected_floats[2..], "under {barrier}");
    assert_eq!(gpu.download(&ints).unwrap(), expected_ints, "under {barrier}");
}

/// `step_by` with a run-time step: a positive one steps as in Rust; 0 runs no iteration
/// and fails the launch with `Error::ZeroStep` naming the line, in per-thread code and in
/// the phases' own loop, under `barrier`.
pub fn a_zero_step_returns_a_typed_error(gpu: &Gpu, barrier: Barrier) {
    let launch = Launch::new().barrier(barrier).blocks(2);
    let n = 300;
    let mut out = gpu.zeros::<u32>(n).unwrap();
    stepped::launch_with(gpu, &launch, &gpu.upload(&[3u32]).unwrap(), &mut out).unwrap();
    assert_eq!(gpu.download(&out).unwrap(), vec![1 + 4 + 7 + 10; n], "under {barrier}");

    let mut out = gpu.zeros::<u32>(n).unwrap();
    let zero = gpu.upload(&[0u32]).unwrap();
    let error = stepped::launch_with(gpu, &launch, &zero, &mut out).expect_err("a zero step");
    assert!(
        matches!(&error, Error::ZeroStep { kernel, line } if kernel == "stepped" && *line == STEPPED_LINE),
        "under {barrier}: {error:?}"
    );
    assert!(error.to_string().contains("step_by(0)"), "{error}");
    assert_eq!(gpu.download(&out).unwrap(), vec![0; n], "no iteration ran under {barrier}");

    let mut out = gpu.zeros::<u32>(n).unwrap();
    stepped_phases::launch_with(gpu, &launch, &mut out, 2, 7).unwrap();
    assert_eq!(gpu.download(&out).unwrap(), vec![4; n], "under {barrier}");
    let error = stepped_phases::launch_with(gpu, &launch, &mut out, 0, 7).expect_err("a zero step");
    assert!(
        matches!(&error, Error::ZeroStep { kernel, line } if kernel == "stepped_phases" && *line == STEPPED_PHASES_LINE),
        "under {barrier}: {error:?}"
    );
    assert_eq!(gpu.download(&out).unwrap(), vec![4; n], "no iteration ran under {barrier}");
}

/// Sums of 3000 terms and expressions nested hundreds of levels deep compute what Rust does.
pub fn deep_expressions_match_the_cpu(gpu: &Gpu) {
    use super::deep::*;
    let (x, y, z, w) = (7u32, 0.1f32, -5i32, 3i8);
    let mut ints = gpu.zeros::<u32>(5).unwrap();
    let mut floats = gpu.zeros::<f32>(1).unwrap();
    let mut signed = gpu.zeros::<i32>(1).unwrap();
    let mut bytes = gpu.zeros::<i8>(1).unwrap();
    deep_expressions::launch(gpu, x, y, z, w, &mut ints, &mut floats, &mut signed, &mut bytes).unwrap();
    let (expected_ints, expected_floats, expected_signed, expected_bytes) = deep_expressions_reference(x, y, z, w);
    assert_eq!(gpu.download(&ints).unwrap(), expected_ints);
    let floats: Vec<u32> = gpu.download(&floats).unwrap().iter().map(|f| f.to_bits()).collect();
    assert_eq!(floats, expected_floats.iter().map(|f| f.to_bits()).collect::<Vec<_>>());
    assert_eq!(gpu.download(&signed).unwrap(), expected_signed);
    assert_eq!(gpu.download(&bytes).unwrap(), expected_bytes);
}
