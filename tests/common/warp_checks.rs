//! Warp-uniform control, warp votes, `match`, float atomic min/max and `assert!`, each
//! against its CPU reference, shared by the GPU tests and the emulator tests.

use super::checks::{random_vec, rng, Scale};
use super::warp_kernels::*;
use gsync::prelude::*;
use gsync::ErrorKind;
use rand::Rng;

fn pick(scale: Scale, full: usize, small: usize) -> usize {
    match scale {
        Scale::Full => full,
        Scale::Small => small,
    }
}

pub fn a_two_level_block_scan_runs_shuffles_in_warp_zero_only(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    // 80 threads: a partial last warp of 16 lanes.
    for threads in [256u32, 96, 80, 1024] {
        for n in [1usize, 31, 1000, pick(scale, 1_000_003, 20_011)] {
            let input: Vec<u32> = random_vec(&mut rng, n);
            let di = gpu.upload(&input).unwrap();
            let mut out = gpu.zeros::<u32>(n).unwrap();
            let launch = Launch::new().threads(threads).blocks(7);
            block_scan::launch_with(gpu, &launch, &di, &mut out).unwrap();
            assert_eq!(
                gpu.download(&out).unwrap(),
                block_scan_reference(&input, threads as usize),
                "{threads} threads, n {n}"
            );
        }
    }
}

/// `match_any` of 8-bit values and of `bool`s (ballots, one per bit) and of 16-bit ones (the
/// hardware's match) against the CPU, in whole warps and in a block's partial last warp.
pub fn match_any_of_narrow_values_matches_the_cpu(gpu: &Gpu, _scale: Scale) {
    let mut rng = rng();
    for threads in [128u32, 80, 33] {
        let blocks = 5u32;
        let n = (threads * blocks) as usize;
        // Low bytes that differ from another lane's in one bit, for every bit: runs of 8 lanes
        // draw from 0, 1 << k, 0xff and 0xff ^ 1 << k, k moving on from run to run; few values,
        // so that warps hold many equal ones, and high bits that differ where the low byte
        // agrees.
        let values: Vec<u32> = (0..n)
            .map(|i| {
                let bit = 1u32 << (i / 8 % 8);
                let byte = [0, bit, 0xff, 0xff ^ bit][rng.gen_range(0..4)];
                rng.gen_range(0..4u32) << 16 | rng.gen_range(0..3u32) << 8 | byte
            })
            .collect();
        let dv = gpu.upload(&values).unwrap();
        let mut lanes = gpu.zeros::<u32>(4 * n).unwrap();
        narrow_matches::launch_with(gpu, &Launch::new().threads(threads).blocks(blocks), &dv, &mut lanes).unwrap();
        assert_eq!(
            gpu.download(&lanes).unwrap(),
            narrow_matches_reference(&values, threads as usize),
            "{threads} threads"
        );
    }
}

pub fn a_stable_radix_rank_is_one_match_and_a_popcount(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    for threads in [128u32, 64] {
        for n in [5usize, 64, 1000, pick(scale, 300_007, 10_007)] {
            // Few distinct digits, so that warps hold many equal ones.
            let keys: Vec<u32> = (0..n).map(|_| rng.gen_range(0..6u32) << 4 | rng.gen_range(0..16)).collect();
            for shift in [0u32, 4] {
                let dk = gpu.upload(&keys).unwrap();
                let (mut ranks, mut peers) = (gpu.zeros::<u32>(n).unwrap(), gpu.zeros::<u32>(n).unwrap());
                let mut votes = gpu.zeros::<u32>(n.div_ceil(32)).unwrap();
                let launch = Launch::new().threads(threads).blocks(3);
                warp_rank::launch_with(gpu, &launch, &dk, shift, &mut ranks, &mut peers, &mut votes).unwrap();
                let (er, ep, ev) = warp_rank_reference(&keys, shift);
                assert_eq!(gpu.download(&ranks).unwrap(), er, "ranks, {threads} threads, n {n}, shift {shift}");
                assert_eq!(gpu.download(&peers).unwrap(), ep, "peers, {threads} threads, n {n}, shift {shift}");
                assert_eq!(gpu.download(&votes).unwrap(), ev, "votes, {threads} threads, n {n}, shift {shift}");
            }
        }
    }
}

pub fn float_atomic_max_and_min_skip_nan_and_order_signed_zeros(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let specials = [f32::NAN, -0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY, -f32::NAN];
    let n = pick(scale, 1_000_003, 10_007);
    let random: Vec<f32> =
        (0..n).map(|i| if i % 97 == 0 { specials[i / 97 % 6] } else { rng.gen_range(-1e6..1e6) }).collect();
    let cases = [random, vec![f32::NAN, -0.0, 0.0, f32::NAN, -0.0], vec![-0.0, -0.0], vec![f32::NAN]];
    for values in cases {
        let wide: Vec<f64> = values.iter().map(|&v| f64::from(v) * 3.0).collect();
        let blocks = 5u32;
        let (dv, dw) = (gpu.upload(&values).unwrap(), gpu.upload(&wide).unwrap());
        let mut extremes = gpu.upload(&[f32::NAN, f32::NAN]).unwrap();
        let mut wide_extremes = gpu.upload(&[f64::NAN, f64::NAN]).unwrap();
        let mut block_extremes = gpu.zeros::<f32>(2 * blocks as usize).unwrap();
        let launch = Launch::new().blocks(blocks).threads(128);
        float_extremes::launch_with(gpu, &launch, &dv, &dw, &mut extremes, &mut wide_extremes, &mut block_extremes)
            .unwrap();
        let fold32 = |max: bool, init: f32, vs: &[f32]| {
            vs.iter().fold(init, |c, &v| float_extreme(c, v, max, f32::is_nan, f32::is_sign_negative))
        };
        let fold64 = |max: bool, vs: &[f64]| {
            vs.iter().fold(f64::NAN, |c, &v| float_extreme(c, v, max, f64::is_nan, f64::is_sign_negative))
        };
        let bits32 = |v: &[f32]| v.iter().map(|x| if x.is_nan() { u32::MAX } else { x.to_bits() }).collect::<Vec<_>>();
        let bits64 = |v: &[f64]| v.iter().map(|x| if x.is_nan() { u64::MAX } else { x.to_bits() }).collect::<Vec<_>>();
        let got = gpu.download(&extremes).unwrap();
        assert_eq!(
            bits32(&got),
            bits32(&[fold32(true, f32::NAN, &values), fold32(false, f32::NAN, &values)]),
            "{values:?}"
        );
        let got = gpu.download(&wide_extremes).unwrap();
        assert_eq!(bits64(&got), bits64(&[fold64(true, &wide), fold64(false, &wide)]));
        // Each block's shared extremes cover its grid-stride share of the values.
        let got = gpu.download(&block_extremes).unwrap();
        let grid = (blocks * 128) as usize;
        for b in 0..blocks as usize {
            let mine: Vec<f32> =
                values.iter().enumerate().filter(|(i, _)| (i % grid) / 128 == b).map(|(_, &v)| v).collect();
            let expected = [fold32(true, f32::NAN, &mine), fold32(false, f32::NAN, &mine)];
            assert_eq!(bits32(&got[2 * b..2 * b + 2]), bits32(&expected), "block {b}");
        }
    }
}

pub fn match_on_integers_and_bools_matches_rust(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let n = pick(scale, 100_003, 5_003);
    let special = [0, 1, 2, 3, 4, 99, 100, 1000, -1, -9, -10, i32::MIN, i32::MAX];
    let values: Vec<i32> =
        (0..n).map(|i| if i % 3 == 0 { special[i / 3 % special.len()] } else { rng.gen_range(-2000..2000) }).collect();
    let dv = gpu.upload(&values).unwrap();
    let (mut classes, mut flags) = (gpu.zeros::<u32>(n).unwrap(), gpu.zeros::<u32>(n).unwrap());
    classify::launch_with(gpu, &Launch::new(), &dv, &mut classes, &mut flags).unwrap();
    let (ec, ef) = classify_reference(&values);
    assert_eq!(gpu.download(&classes).unwrap(), ec);
    assert_eq!(gpu.download(&flags).unwrap(), ef);
}

/// Every barrier, the split form included, with a failure and without.
pub fn a_failed_assert_returns_its_message_and_line(gpu: &Gpu, scale: Scale) {
    let n = pick(scale, 100_000, 3_000);
    let mut input: Vec<u32> = (0..n as u32).map(|i| i % 7).collect();
    let mut out = gpu.zeros::<u32>(n).unwrap();
    checked_copy::launch(gpu, &gpu.upload(&input).unwrap(), &mut out).unwrap();
    assert_eq!(gpu.download(&out).unwrap(), input);
    input[n / 2] = 13;
    let error = checked_copy::launch(gpu, &gpu.upload(&input).unwrap(), &mut out).expect_err("13 fails");
    match &error {
        Error::AssertionFailed { kernel, line, message, values } => {
            assert_eq!(
                (kernel.as_str(), message.as_str(), values.as_str()),
                ("checked_copy", "thirteen is unlucky", "")
            );
            assert!(*line > 0);
        }
        other => panic!("expected AssertionFailed, got {other:?}"),
    }
    eprintln!("{error}");
    assert_eq!(error.kind(), ErrorKind::KernelFault);
}

pub fn a_thread_that_fails_an_assert_leaves_its_block_barrier(gpu: &Gpu, scale: Scale) {
    let n = pick(scale, 64 * 1000, 64 * 40);
    let mut input: Vec<u32> = (0..n as u32).map(|i| i % 100).collect();
    let mut sums = gpu.zeros::<u32>(n / 64).unwrap();
    checked_block_sums::launch_with(
        gpu,
        &Launch::new().blocks((n / 64) as u32),
        &gpu.upload(&input).unwrap(),
        &mut sums,
    )
    .unwrap();
    let expected: Vec<u32> = input.chunks(64).map(|c| c.iter().sum()).collect();
    assert_eq!(gpu.download(&sums).unwrap(), expected);
    input[70] = 5000;
    let launch = Launch::new().blocks((n / 64) as u32);
    let error = checked_block_sums::launch_with(gpu, &launch, &gpu.upload(&input).unwrap(), &mut sums)
        .expect_err("5000 fails the assertion");
    assert!(
        matches!(&error, Error::AssertionFailed { message, .. } if message == "assertion failed: v < 1000"),
        "{error:?}"
    );
}

pub fn a_failed_assert_eq_stops_the_grid_at_the_next_grid_sync(gpu: &Gpu, scale: Scale) {
    let n = pick(scale, 100_000, 2_000);
    let values: Vec<i32> = (0..n as i32).map(|i| i % 11 - 5).collect();
    let sum = values.iter().fold(0i32, |a, &b| a.wrapping_add(b));
    let dv = gpu.upload(&values).unwrap();
    let doubled: Vec<i32> = values.iter().map(|v| v * 2).collect();
    let barriers = [Barrier::Cooperative, Barrier::Lbs, Barrier::Relay, Barrier::MultiLaunch];
    for barrier in barriers {
        let mut out = gpu.zeros::<i32>(n).unwrap();
        let launch = Launch::new().barrier(barrier).blocks(4).threads(128);
        checked_phases::launch_with(gpu, &launch, &dv, &mut out, sum, i32::MIN).unwrap();
        let plus_one: Vec<i32> = doubled.iter().map(|v| v + 1).collect();
        assert_eq!(gpu.download(&out).unwrap(), plus_one, "{barrier}");
        let error = checked_phases::launch_with(gpu, &launch, &dv, &mut out, sum + 1, i32::MIN).expect_err("wrong sum");
        match &error {
            Error::AssertionFailed { message, values, .. } => {
                assert_eq!(message, "assertion `left == right` failed: the doubled values do not add up", "{barrier}");
                assert_eq!(values, &format!("; left: {}, right: {}", sum * 2, (sum + 1) * 2), "{barrier}");
            }
            other => panic!("{barrier}: expected AssertionFailed, got {other:?}"),
        }
        // The grid stopped at the grid_sync() after the failure: the last phase never ran.
        assert_eq!(gpu.download(&out).unwrap(), doubled, "{barrier}");
    }
}

pub fn debug_asserts_follow_the_bounds_check_setting(gpu: &Gpu, _scale: Scale) {
    let values: Vec<i32> = (0..1000).collect();
    let sum = values.iter().sum::<i32>();
    let dv = gpu.upload(&values).unwrap();
    let mut out = gpu.zeros::<i32>(values.len()).unwrap();
    let forbidden = 2 * 500 + 1;
    let unchecked = Launch::new().bounds_checks(false);
    checked_phases::launch_with(gpu, &unchecked, &dv, &mut out, sum, forbidden).unwrap();
    let checked = Launch::new().bounds_checks(true);
    let error = checked_phases::launch_with(gpu, &checked, &dv, &mut out, sum, forbidden).expect_err("debug check");
    assert!(
        matches!(&error, Error::AssertionFailed { message, values, .. }
            if message == "assertion `left != right` failed" && values == "; left: 1001, right: 1001"),
        "{error:?}"
    );
}
