//! Kernels on a real GPU, the quick tier: each checked against its CPU reference on random
//! input (the checks in `common::checks`, shared with the emulator tests), every library
//! kernel among them, plus what only a GPU shows: the race without a barrier, the
//! co-residency refusal, and the emulator agreeing with the GPU bit for bit. The checks that
//! sweep block sizes, barriers and tile shapes are in `full_gpu_kernels.rs`.
//! Run with `bash .gpu/run.sh tests` on a CUDA machine (see README).

use common::checks::{self, random_vec, rng, Scale};
use common::kernels::*;
use common::{cuda_gpu as gpu, on_the_gpu};
use gsync::prelude::*;

common::with_quick_checks!(on_the_gpu);

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_out_of_bounds_read_returns_a_typed_error() {
    checks::an_out_of_bounds_read_returns_a_typed_error(&gpu());
}

/// Under Auto; `full_gpu_kernels.rs` runs it under every barrier.
#[test]
#[ignore = "needs a CUDA GPU"]
fn unary_receivers_match_rust() {
    checks::unary_receivers_match_rust(&gpu(), Barrier::Auto);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn deep_expressions_match_the_cpu() {
    checks::deep_expressions_match_the_cpu(&gpu());
}

/// Under Auto; `full_gpu_kernels.rs` runs it under every barrier.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_zero_step_returns_a_typed_error() {
    checks::a_zero_step_returns_a_typed_error(&gpu(), Barrier::Auto);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn without_the_barrier_the_same_phases_race() {
    let gpu = gpu();
    let mut rng = rng();
    let rounds = 1000;
    let max = rotate_rounds_without_barrier::max_coresident_blocks(&gpu, &Launch::new()).unwrap();
    let threads = Launch::new().threads_for(&rotate_rounds_without_barrier::KERNEL);
    let n = (max * threads) as usize * 3 + 17;
    let input: Vec<u32> = random_vec(&mut rng, n);
    let shift = threads * 5 + 3;
    let mut a = gpu.upload(&input).unwrap();
    let mut b = gpu.zeros::<u32>(n).unwrap();
    rotate_rounds_without_barrier::launch(&gpu, &mut a, &mut b, shift, rounds).unwrap();
    let result = gpu.download(&a).unwrap();
    let expected = rotate_rounds_reference(&input, shift, rounds);
    let wrong = result.iter().zip(&expected).filter(|(x, y)| x != y).count();
    eprintln!("without grid_sync(): {wrong} of {n} elements wrong after {rounds} phases on {max} blocks");
    assert!(wrong > 0, "the race went unobserved: this test shows the barrier is what makes the result right");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_emulator_and_the_gpu_agree_bit_for_bit() {
    let (gpu, emu) = (gpu(), Gpu::emulator());
    let mut rng = rng();
    let n = 20_011;
    let input: Vec<u32> = random_vec(&mut rng, n);
    let floats: Vec<f32> = random_vec(&mut rng, n);
    let launch = Launch::new().blocks(33).threads(64);
    let run = |g: &Gpu| {
        let di = g.upload(&input).unwrap();
        let (mut a, mut b, mut out) = (g.zeros(n).unwrap(), g.zeros(n).unwrap(), g.zeros(n).unwrap());
        three_phases::launch_with(g, &launch, &di, &mut a, &mut b, &mut out).unwrap();
        let (mut ra, mut rb) = (g.upload(&input).unwrap(), g.zeros::<u32>(n).unwrap());
        rotate_rounds::launch_with(g, &launch, &mut ra, &mut rb, 999, 31).unwrap();
        let (mut fa, mut fb) = (g.upload(&floats).unwrap(), g.zeros::<f32>(n).unwrap());
        gsync::kernels::smooth::launch_with(g, &launch, &mut fa, &mut fb, 21).unwrap();
        let (fx, fy) =
            (g.upload(&floats).unwrap(), g.upload(&floats[..n].iter().rev().copied().collect::<Vec<_>>()).unwrap());
        let (mut fo, mut fi) = (g.zeros::<f32>(n).unwrap(), g.zeros::<i32>(n).unwrap());
        arith_f32::launch_with(g, &launch, &fx, &fy, &mut fo, &mut fi).unwrap();
        (
            g.download(&out).unwrap(),
            g.download(&rb).unwrap(),
            g.download(&fb).unwrap().iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            g.download(&fo).unwrap().iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            g.download(&fi).unwrap(),
        )
    };
    let (on_gpu, on_cpu) = (run(&gpu), run(&emu));
    assert_eq!(on_gpu.0, on_cpu.0, "three_phases");
    assert_eq!(on_gpu.1, on_cpu.1, "rotate_rounds");
    assert_eq!(on_gpu.2, on_cpu.2, "smooth (f32 + and /, bit for bit)");
    let differing = on_gpu.3.iter().zip(&on_cpu.3).filter(|(a, b)| a != b).count();
    eprintln!("arith_f32: {differing} of {n} results differ in bits (sqrt and fmin/fmax are exact on both)");
    assert_eq!(differing, 0, "arith_f32");
    assert_eq!(on_gpu.4, on_cpu.4, "float-to-int casts");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_over_large_grid_is_refused_before_launch() {
    let gpu = gpu();
    let max = rotate_rounds::max_coresident_blocks(&gpu, &Launch::new()).unwrap();
    let (mut a, mut b) = (gpu.zeros::<u32>(1024).unwrap(), gpu.zeros::<u32>(1024).unwrap());
    let error =
        rotate_rounds::launch_with(&gpu, &Launch::new().blocks(max + 1), &mut a, &mut b, 1, 10).expect_err("too large");
    match &error {
        Error::GridTooLarge { requested, max: limit, .. } => assert_eq!((*requested, *limit), (max + 1, max)),
        other => panic!("expected GridTooLarge, got {other:?}"),
    }
    eprintln!("{error}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn hoisted_thread_indices_split_and_match_the_cpu_under_multi_launch() {
    let gpu = gpu();
    for barrier in [Barrier::MultiLaunch, Barrier::Cooperative] {
        checks::hoisted_indices_match_the_cpu(&gpu, Scale::Full, barrier);
    }
    checks::split_and_fused_runs_agree(&gpu, Scale::Full);
    checks::a_kernel_that_cannot_be_split_is_refused_under_multi_launch(&gpu);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_truncated_profile_records_its_capacity_and_counts_the_rest() {
    let gpu = gpu();
    let (rounds, blocks, threads, shift, spin) = (40u32, 33u32, 128u32, 389u32, 100u32);
    let n = (blocks * threads) as usize * 2 + 17;
    let input: Vec<u32> = random_vec(&mut rng(), n);
    let mut a = gpu.upload(&input).unwrap();
    let mut b = gpu.zeros::<u32>(n).unwrap();
    let mut slow = gpu.zeros::<u32>(rounds as usize).unwrap();
    let launch = Launch::new().blocks(blocks).threads(threads).profile(true).profile_phases(5);
    let report = one_slow_block::launch_with(&gpu, &launch, &mut a, &mut b, &mut slow, shift, spin).unwrap();
    assert_eq!(gpu.download(&a).unwrap(), rotate_rounds_reference(&input, shift, rounds));
    assert_eq!(gpu.download(&slow).unwrap(), one_slow_block_reference(rounds, spin));
    let profile = report.profile.expect("a profile");
    assert!(profile.is_truncated());
    assert_eq!((profile.grid_syncs(), profile.phases().len()), (u64::from(rounds), 5));
    for block in profile.blocks() {
        assert_eq!((block.visits.len(), block.grid_syncs), (5, u64::from(rounds)), "block {}", block.block);
        assert!(block.visits.last().is_some_and(|visit| visit.leave <= block.end), "block {}", block.block);
    }
    assert_eq!(profile.total_span() + profile.total_barrier_latency() + profile.unrecorded(), profile.total());
    eprintln!("{profile}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_spin_wait_nobody_ends_times_out_with_its_line_under_every_barrier() {
    let gpu = gpu();
    for &barrier in Barrier::ALL {
        checks::a_spin_wait_nobody_ends_times_out_with_its_line(&gpu, barrier);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn shared_slices_lower_co_residency_and_a_grid_that_no_longer_fits_is_refused() {
    use common::shared_slice_kernels::tile_sums;
    let gpu = gpu();
    let n = 1 << 16;
    let di = gpu.upload(&vec![1u32; n]).unwrap();
    let (mut sums, mut total) = (gpu.zeros::<u64>(n).unwrap(), gpu.zeros::<u64>(1).unwrap());
    let launch = Launch::new().threads(256).barrier(Barrier::Lbs);
    let small = tile_sums::max_coresident_blocks(&gpu, &launch, &di, &sums, &total, 256).unwrap();
    // 40000 × 5 bytes: one block of them per SM at most.
    let large = tile_sums::max_coresident_blocks(&gpu, &launch, &di, &sums, &total, 40_000).unwrap();
    assert!(large < small, "{large} blocks with large slices, {small} with small ones");
    assert_eq!(large, gpu.info().sm_count, "one 200 KB block per SM");
    tile_sums::launch_with(&gpu, &launch.clone().blocks(small), &di, &mut sums, &mut total, 256).unwrap();
    let error = tile_sums::launch_with(&gpu, &launch.clone().blocks(small), &di, &mut sums, &mut total, 40_000)
        .expect_err("not co-resident with the large slices");
    assert!(
        matches!(error, Error::GridTooLarge { requested, max, .. } if requested == small && max == large),
        "{error}"
    );
    // The largest co-resident grid runs them, past 48 KiB, and the default launch tunes for them.
    tile_sums::launch_with(&gpu, &launch.clone().blocks(large), &di, &mut sums, &mut total, 40_000).unwrap();
    assert_eq!(gpu.download(&total).unwrap(), [n as u64 + ((n as u64) << 40)]);
    let report = tile_sums::launch(&gpu, &di, &mut sums, &mut total, 40_000).unwrap();
    assert!(report.blocks <= gpu.info().sm_count, "{report:?}");
    assert_eq!(gpu.download(&total).unwrap(), [n as u64 + ((n as u64) << 40)]);
}

/// Under Auto; `full_gpu_kernels.rs` runs it under every barrier.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_2d_transpose_through_a_shared_tile_matches_the_cpu() {
    common::dims::a_2d_transpose_through_a_shared_tile_matches_the_cpu(&gpu(), Barrier::Auto);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_3d_grid_maps_its_indices_like_cuda() {
    common::dims::a_3d_grid_maps_its_indices_like_cuda(&gpu());
}

/// 64 blocks in a 4 × 4 × 4 grid (within LFS's limit of one block per thread of a block of
/// 64): a barrier that counted the blocks along x only would let rounds overtake each other.
#[test]
#[ignore = "needs a CUDA GPU"]
fn grid_sync_in_a_3d_grid_waits_for_every_block_under_every_barrier() {
    let gpu = gpu();
    for &barrier in Barrier::ALL {
        common::dims::grid_sync_in_a_3d_grid_waits_for_every_block(&gpu, barrier, (4, 4, 4), 301);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_block_size_constant_sizes_shared_memory_at_every_block_size() {
    common::dims::a_block_size_constant_sizes_shared_memory_at_every_block_size(&gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_block_size_that_overflows_shared_memory_is_refused() {
    common::dims::a_block_size_that_overflows_shared_memory_is_refused(&gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn shapes_beyond_the_limits_are_typed_errors() {
    common::dims::shapes_beyond_the_limits_are_typed_errors(&gpu());
}

/// A kernel whose second phase alone holds a 40 KB shared array: its split form's first segment
/// fits many more blocks per SM than its second.
#[grid_phases(threads = 256)]
fn late_shared_sum(a: &mut [u32], sums: &mut [u32]) {
    for i in grid_stride(0..a.len()) {
        a[i] += 1;
    }
    grid_sync();
    let mut staged = shared_array::<u32, 10240>();
    let t = thread_idx() as usize;
    for k in 0..40 {
        staged[k * 256 + t] = k as u32;
    }
    sync_block();
    if t == 0 {
        let mut total = 0u32;
        for k in 0..10240 {
            total += staged[k];
        }
        sums[block_idx() as usize] = total;
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_split_kernels_co_resident_grid_is_its_least_occupied_segments() {
    // Its first segment alone would hold twice as many blocks per SM as its second, whose
    // 40 KB of shared memory hold it to as few blocks as the fused kernel: the split form's
    // co-resident grid is the second segment's, and its default grid runs.
    let gpu = gpu();
    let split = Launch::new().barrier(Barrier::MultiLaunch);
    let split_max = late_shared_sum::max_coresident_blocks(&gpu, &split).unwrap();
    let fused_max = late_shared_sum::max_coresident_blocks(&gpu, &Launch::new().barrier(Barrier::Lbs)).unwrap();
    let sms = gpu.info().sm_count;
    assert!(split_max <= fused_max && split_max <= 5 * sms, "split {split_max}, fused {fused_max}, {sms} SMs");
    let mut a = gpu.upload(&vec![1u32; 100_000]).unwrap();
    let mut sums = gpu.zeros::<u32>(split_max as usize).unwrap();
    let report = late_shared_sum::launch_with(&gpu, &split, &mut a, &mut sums).unwrap();
    assert!(report.blocks <= split_max, "{} blocks", report.blocks);
    assert!(gpu.download(&a).unwrap().iter().all(|&x| x == 2));
    let expected: u32 = (0..10240u32).map(|k| k / 256).sum();
    assert!(gpu.download(&sums).unwrap().iter().all(|&s| s == expected));
}
