//! Every barrier on a real GPU, the quick tier: cross-block visibility over a thousand
//! phases on a few grids, the same results from every barrier, warps handed back converged,
//! the watchdog and the refusals before launch. `full_gpu_barriers.rs` sweeps every block
//! size and grid.

use common::barrier_checks;
use common::checks::rng;
use common::cuda_gpu as gpu;
use common::kernels::*;
use common::radix::RadixSort;
use gsync::prelude::*;
use gsync::AutoSource;
use rand::Rng;
use std::time::{Duration, Instant};

/// Every barrier, Auto and MultiLaunch included.
fn barriers() -> Vec<Barrier> {
    Barrier::ALL.to_vec()
}

/// A grid one past a warp of blocks, and the largest.
fn two_grids(_: &Gpu, max: u32) -> Vec<u32> {
    vec![33.min(max), max]
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_barrier_makes_every_blocks_writes_visible_for_1000_phases() {
    barrier_checks::every_barrier_makes_every_blocks_writes_visible(&gpu(), 1000, &[256], two_grids);
}

/// The block sizes of the two failures the full sweep found (ULFS, 2112 × 128 and 2640 × 32).
#[test]
#[ignore = "needs a CUDA GPU"]
fn every_barrier_hands_back_converged_warps_on_the_largest_grid() {
    barrier_checks::every_barrier_hands_back_converged_warps_on_the_largest_grid(
        &gpu(),
        &[RadixSort::EightBit],
        &[32, 128],
    );
}

/// What the kernels of the comparison computed; floats as bits.
#[derive(PartialEq)]
struct Outputs {
    three_phases: Vec<u32>,
    rotated: Vec<u32>,
    smoothed_bits: Vec<u32>,
    total: u64,
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_barrier_gives_bit_identical_results() {
    let gpu = gpu();
    let mut rng = rng();
    let n = 200_003;
    let input: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
    let floats: Vec<f32> = (0..n).map(|_| rng.gen()).collect();
    // Small enough that no block's partial sum wraps, so the total is grid-independent.
    let small: Vec<u32> = (0..n).map(|_| rng.gen_range(0..1000)).collect();
    let di = gpu.upload(&input).unwrap();
    let ds = gpu.upload(&small).unwrap();
    let mut reference: Option<Outputs> = None;
    for barrier in barriers() {
        for blocks in [33u32, 60] {
            let launch = Launch::new().threads(64).blocks(blocks).barrier(barrier);
            let (mut a, mut b, mut out) = (gpu.zeros(n).unwrap(), gpu.zeros(n).unwrap(), gpu.zeros(n).unwrap());
            three_phases::launch_with(&gpu, &launch, &di, &mut a, &mut b, &mut out).unwrap();
            let (mut ra, mut rb) = (gpu.upload(&input).unwrap(), gpu.zeros::<u32>(n).unwrap());
            rotate_rounds::launch_with(&gpu, &launch, &mut ra, &mut rb, 1000, 101).unwrap();
            let (mut fa, mut fb) = (gpu.upload(&floats).unwrap(), gpu.zeros::<f32>(n).unwrap());
            gsync::kernels::smooth::launch_with(&gpu, &launch, &mut fa, &mut fb, 51).unwrap();
            let mut partial = gpu.zeros::<u32>(blocks as usize).unwrap();
            let mut total = gpu.zeros::<u64>(1).unwrap();
            block_sums::launch_with(
                &gpu,
                &Launch::new().blocks(blocks).barrier(barrier),
                &ds,
                &mut partial,
                &mut total,
            )
            .unwrap();
            let got = Outputs {
                three_phases: gpu.download(&out).unwrap(),
                rotated: gpu.download(&rb).unwrap(),
                smoothed_bits: gpu.download(&fb).unwrap().iter().map(|x| x.to_bits()).collect(),
                total: gpu.download(&total).unwrap()[0],
            };
            assert_eq!(got.three_phases, three_phases_reference(&input), "{barrier}, {blocks} blocks");
            assert_eq!(got.rotated, rotate_rounds_reference(&input, 1000, 101), "{barrier}, {blocks} blocks");
            assert_eq!(got.total, small.iter().map(|&x| u64::from(x)).sum::<u64>(), "{barrier}, {blocks} blocks");
            match &reference {
                None => reference = Some(got),
                Some(r) => assert!(*r == got, "{barrier}, {blocks} blocks: not bit-identical to {}", barriers()[0]),
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_watchdog_ends_an_impossible_launch_with_a_typed_error() {
    let gpu = gpu();
    let limit = Duration::from_secs(1);
    // 1024 threads per block: twice the co-resident grid is still within LFS's
    // limit of one block per thread, so every software barrier can be tried. Relay
    // runs LBS's kernel there (2 blocks per SM), and its own per-SM kernel with 256
    // threads (16 blocks per SM).
    let cases = [
        (Barrier::Lbs, 1024),
        (Barrier::Lfs, 1024),
        (Barrier::Ilbs { groups: None }, 1024),
        (Barrier::Ulfs, 1024),
        (Barrier::Relay, 1024),
        (Barrier::Relay, 256),
    ];
    for (barrier, threads) in cases {
        let fused = Launch::new().threads(threads).barrier(barrier);
        let max = rotate_rounds::max_coresident_blocks(&gpu, &fused).unwrap();
        let launch = fused.clone().blocks(2 * max).watchdog(Some(limit));
        let (mut a, mut b) = (gpu.zeros::<u32>(1 << 16).unwrap(), gpu.zeros::<u32>(1 << 16).unwrap());
        let started = Instant::now();
        // SAFETY: deliberately not co-resident; the watchdog must end it.
        let result = unsafe { rotate_rounds::launch_oversubscribed(&gpu, &launch, &mut a, &mut b, 7, 10) };
        let took = started.elapsed();
        eprintln!("{barrier}: {} × {threads} (max {max}) ended after {took:?}: {result:?}", 2 * max);
        match result {
            Err(Error::BarrierTimeout { .. }) => {}
            other => panic!("{barrier}: expected BarrierTimeout, got {other:?}"),
        }
        assert!(took < limit * 3, "{barrier}: returned after {took:?}");
        // The barrier state is usable again afterwards.
        rotate_rounds::launch_with(&gpu, &fused, &mut a, &mut b, 7, 10).unwrap();
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn auto_runs_the_barrier_of_its_table_and_says_which() {
    let gpu = gpu();
    let sms = gpu.info().sm_count;
    let mut marker = gpu.zeros::<u32>(1).unwrap();
    // The largest grid of 32 threads has 32 blocks per SM, of 256 threads 8.
    for (threads, largest) in [(32u32, Barrier::Relay), (256, Barrier::Ilbs { groups: None })] {
        let auto = Launch::new().threads(threads);
        let max = gsync::kernels::empty_phases::max_coresident_blocks(&gpu, &auto).unwrap();
        let ilbs = Barrier::Ilbs { groups: None };
        let cases = [(7, Barrier::Lbs), (4 * sms, Barrier::Lbs), (4 * sms + 1, ilbs), (max, largest)];
        for (blocks, expected) in cases {
            let report =
                gsync::kernels::empty_phases::launch_with(&gpu, &auto.clone().blocks(blocks), &mut marker, 100)
                    .unwrap();
            assert_eq!(report.barrier, expected, "{blocks} × {threads}");
            let why = report.auto.as_ref().expect("an Auto launch says why");
            assert_eq!(why.barrier, expected);
            assert!(matches!(why.source, AutoSource::Measured { .. }), "Hopper's own table: {why}");
            assert_eq!(gpu.download(&marker).unwrap()[0], 99, "{blocks} × {threads}");
        }
        // Without a block count, Auto runs the largest grid.
        let report = gsync::kernels::empty_phases::launch_with(&gpu, &auto, &mut marker, 10).unwrap();
        assert_eq!((report.blocks, report.barrier), (max, largest), "default grid of {threads}");
    }
}

/// Auto's calibration, as a GPU without a table of its generation runs it on first use: every
/// grid gets a barrier, within about a second (plus compiling the kernels the first time), and
/// the Auto launches after it run the calibrated table's choice and say so.
#[test]
#[ignore = "needs a CUDA GPU"]
fn calibrating_auto_measures_a_table_that_later_launches_use_and_name() {
    let gpu = gpu();
    let started = Instant::now();
    let table = gpu.calibrate_auto().unwrap();
    let took = started.elapsed();
    let rows: Vec<(u32, Barrier)> = table.rows().collect();
    eprintln!("calibrated in {took:?}: {rows:?}; {}", table.source());
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert_eq!(rows.last().map(|row| row.0), Some(u32::MAX), "the table covers every grid");
    assert!(matches!(table.source(), AutoSource::Calibrated { .. }), "{}", table.source());
    assert_eq!(gpu.auto_table().unwrap(), table, "the GPU uses it from now on");
    let sms = gpu.info().sm_count;
    let mut marker = gpu.zeros::<u32>(1).unwrap();
    for blocks_per_sm in [1, 4, 16] {
        let launch = Launch::new().threads(64).blocks(blocks_per_sm * sms);
        let report = gsync::kernels::empty_phases::launch_with(&gpu, &launch, &mut marker, 50).unwrap();
        let expected = rows.iter().find(|row| blocks_per_sm <= row.0).map(|row| row.1);
        assert_eq!(Some(report.barrier), expected, "{blocks_per_sm} blocks per SM");
        let why = report.auto.expect("an Auto launch says why");
        assert!(matches!(why.source, AutoSource::Calibrated { .. }), "{why}");
        assert_eq!(gpu.download(&marker).unwrap()[0], 49);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn impossible_barrier_choices_are_refused_before_launch() {
    let gpu = gpu();
    let (mut a, mut b) = (gpu.zeros::<u32>(4096).unwrap(), gpu.zeros::<u32>(4096).unwrap());
    let lfs = Launch::new().threads(32).blocks(33).barrier(Barrier::Lfs);
    let e = rotate_rounds::launch_with(&gpu, &lfs, &mut a, &mut b, 1, 10).expect_err("LFS beyond the block size");
    eprintln!("{e}");
    assert!(matches!(e, Error::BarrierBlockLimit { .. }), "{e:?}");
    let no_groups = Launch::new().barrier(Barrier::Ilbs { groups: Some(0) });
    let e = rotate_rounds::launch_with(&gpu, &no_groups, &mut a, &mut b, 1, 10).expect_err("ILBS with no groups");
    eprintln!("{e}");
    assert!(matches!(e, Error::InvalidBarrier { .. }), "{e:?}");
    let split = Launch::new().barrier(Barrier::MultiLaunch);
    let e = keeps_a_thread_value_across_the_barrier::launch_with(&gpu, &split, &mut a).expect_err("cannot split");
    eprintln!("{e}");
    assert!(matches!(&e, Error::CannotSplit { reason, .. } if reason.contains("`kept`")), "{e:?}");
    // Fused, the same kernel is fine.
    keeps_a_thread_value_across_the_barrier::launch_with(&gpu, &Launch::new().barrier(Barrier::Lbs), &mut a).unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn control_flow_read_from_device_memory_works_under_every_barrier() {
    let gpu = gpu();
    let mut rng = rng();
    let n = 100_000;
    let data: Vec<u32> = (0..n).map(|_| rng.gen_range(0..1_000_000)).collect();
    let rounds = rng.gen_range(5..50u32);
    for barrier in barriers() {
        eprintln!("{barrier}: counting down from {rounds}");
        let mut flag = gpu.upload(&[rounds]).unwrap();
        let mut d = gpu.upload(&data).unwrap();
        countdown::launch_with(&gpu, &Launch::new().barrier(barrier), &mut flag, &mut d).unwrap();
        let expected: Vec<u32> = data.iter().map(|x| x + rounds).collect();
        assert_eq!(gpu.download(&d).unwrap(), expected, "{barrier}");
        assert_eq!(gpu.download(&flag).unwrap(), vec![0], "{barrier}");
    }
    // The host reads the flag, so the run cannot be captured as a graph.
    let mut flag = gpu.upload(&[1u32]).unwrap();
    let mut d = gpu.upload(&data).unwrap();
    let graph = Launch::new().barrier(Barrier::MultiLaunch).graph(true);
    let e = countdown::launch_with(&gpu, &graph, &mut flag, &mut d).expect_err("reads device memory");
    assert!(matches!(e, Error::InvalidBarrier { .. }), "{e:?}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_split_kernel_replays_as_a_cuda_graph() {
    let gpu = gpu();
    let mut rng = rng();
    let n = 100_000;
    let input: Vec<f32> = (0..n).map(|_| rng.gen()).collect();
    let launch = Launch::new().barrier(Barrier::MultiLaunch).graph(true);
    for rounds in [1u32, 2, 100] {
        let mut a = gpu.upload(&input).unwrap();
        let mut b = gpu.zeros::<f32>(n).unwrap();
        gsync::kernels::smooth::launch_with(&gpu, &launch, &mut a, &mut b, rounds).unwrap();
        let result = gpu.download(if rounds.is_multiple_of(2) { &a } else { &b }).unwrap();
        let expected = gsync::kernels::smooth_reference(&input, rounds);
        assert!(result.iter().zip(&expected).all(|(x, y)| x.to_bits() == y.to_bits()), "rounds {rounds}");
    }
}
