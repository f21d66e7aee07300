//! Every barrier on a real GPU: cross-block visibility under stress, the same
//! results from every barrier, the watchdog and the refusals before launch.

mod common;

use common::kernels::*;
use common::radix::RadixSort;
use gsync::prelude::*;
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::time::{Duration, Instant};

fn gpu() -> Gpu {
    Gpu::cuda(0).expect("a CUDA GPU")
}

fn rng() -> StdRng {
    let seed = rand::random();
    eprintln!("seed {seed}");
    StdRng::seed_from_u64(seed)
}

/// Every barrier, Auto and MultiLaunch included.
fn barriers() -> Vec<Barrier> {
    Barrier::ALL.to_vec()
}

/// Grids the stress covers for a block size: the research paper's 7 and 33
/// (one past a warp), 60, one block per SM, two per SM and the most that fit.
fn stress_grids(gpu: &Gpu, max: u32) -> Vec<u32> {
    let sms = gpu.info().sm_count;
    let mut grids: Vec<u32> = [7, 33, 60, sms, 2 * sms, max].into_iter().filter(|&g| g <= max).collect();
    grids.sort_unstable();
    grids.dedup();
    grids
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_barrier_makes_every_blocks_writes_visible_for_10000_phases() {
    let gpu = gpu();
    let phases = 10_000;
    let mut failures = Vec::new();
    for threads in [32u32, 256, 1024] {
        for barrier in barriers() {
            // Each barrier up to its own largest grid: the compiled kernels differ in
            // registers, and so in how many blocks fit.
            let fused = Launch::new().threads(threads).barrier(barrier);
            let max = visibility_stress::max_coresident_blocks(&gpu, &fused).unwrap();
            for blocks in stress_grids(&gpu, max) {
                if barrier == Barrier::Lfs && blocks > threads {
                    continue; // beyond LFS's limit: refused, see below
                }
                let launch = fused.clone().blocks(blocks);
                let half = (blocks * threads) as usize;
                let mut slots = gpu.upload(&vec![0u32; 2 * half]).unwrap();
                let mut errors = gpu.zeros::<u32>(1).unwrap();
                let report = visibility_stress::launch_with(&gpu, &launch, &mut slots, &mut errors, phases).unwrap();
                let wrong = gpu.download(&errors).unwrap()[0];
                let per_phase = report.gpu_time.as_secs_f64() * 1e6 / f64::from(phases);
                eprintln!("{barrier:>13} {blocks:>5} × {threads:>4}: {wrong} errors, {per_phase:.2} µs per phase");
                if wrong != 0 {
                    failures.push(format!("{barrier} {blocks}×{threads}: {wrong} stale reads"));
                }
                let last = gpu.download(&slots).unwrap();
                let p = phases - 1;
                let base = (p % 2) as usize * half;
                let expected = |b: u32, t: u32| (p.wrapping_mul(2654435761) ^ (b << 12) ^ t).wrapping_add(1);
                let unwritten =
                    (0..half).filter(|&i| last[base + i] != expected(i as u32 / threads, i as u32 % threads)).count();
                if unwritten != 0 {
                    failures.push(format!("{barrier} {blocks}×{threads}: {unwritten} slots not written last phase"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
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
            assert_eq!(gpu.download(&marker).unwrap()[0], 99, "{blocks} × {threads}");
        }
        // Without a block count, Auto runs the largest grid.
        let report = gsync::kernels::empty_phases::launch_with(&gpu, &auto, &mut marker, 10).unwrap();
        assert_eq!((report.blocks, report.barrier), (max, largest), "default grid of {threads}");
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

/// The largest co-resident grid of every block size under every barrier, on radix sorts whose
/// code right after `grid_sync()` uses `sync_block()` and full-warp shuffles. A barrier that
/// hands a warp back diverged makes the warp reach the next CTA barrier in pieces: on an H100
/// that faulted with an illegal instruction (ULFS, 2112 × 128) or sorted wrongly (ULFS,
/// 2640 × 32).
#[test]
#[ignore = "needs a CUDA GPU"]
fn every_barrier_hands_back_converged_warps_on_the_largest_grid_of_every_block_size() {
    let gpu = gpu();
    let mut rng = rng();
    let input: Vec<u32> = (0..1 << 20).map(|_| rng.gen()).collect();
    let mut expected = input.clone();
    expected.sort_unstable();
    let mut failures = Vec::new();
    'sorts: for sort in [RadixSort::EightBit, RadixSort::FourBit] {
        for threads in [32u32, 64, 128, 256, 512, 1024] {
            if threads > sort.max_threads() {
                continue;
            }
            for barrier in barriers() {
                let launch = Launch::new().threads(threads).barrier(barrier);
                let mut blocks = sort.max_coresident_blocks(&gpu, &launch).unwrap();
                if barrier == Barrier::Lfs {
                    blocks = blocks.min(threads); // LFS's own limit
                }
                let case = format!("{sort:?} {barrier} {blocks} × {threads}");
                match sort.sort(&gpu, &launch.blocks(blocks), &input) {
                    Ok(keys) if keys == expected => eprintln!("{case}: sorted"),
                    Ok(keys) => {
                        let wrong = keys.iter().zip(&expected).filter(|(a, b)| a != b).count();
                        failures.push(format!("{case}: {wrong} keys out of place"));
                    }
                    Err(error) => {
                        failures.push(format!("{case}: {error}"));
                        if gpu.zeros::<u32>(1).and_then(|b| gpu.download(&b)).is_err() {
                            failures.push("the GPU context is lost: the remaining cases did not run".into());
                            break 'sorts;
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
