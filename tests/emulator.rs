//! Every GPU test's kernel on the CPU emulator, against the same CPU
//! references (`common::checks`), at small sizes: kernel semantics are
//! checked on every machine, GPU or not.

use common::checks::{self, Scale};
use common::radix::RadixSort;
use gsync::prelude::*;

/// An emulator test per shared check.
macro_rules! on_the_emulator {
    ($($check:ident),* $(,)?) => {$(
        #[test]
        fn $check() {
            checks::$check(&Gpu::emulator(), Scale::Small);
        }
    )*};
}

common::with_every_check!(on_the_emulator);

#[test]
fn the_emulator_refuses_a_write_to_a_copy_s_source_in_flight() {
    checks::the_emulator_refuses_a_write_to_a_copy_s_source_in_flight(&Gpu::emulator());
}

#[test]
fn the_emulator_shows_a_copy_in_flight_as_neither_old_nor_new() {
    checks::the_emulator_shows_a_copy_in_flight_as_neither_old_nor_new(&Gpu::emulator());
}

#[test]
fn an_out_of_bounds_read_returns_a_typed_error() {
    checks::an_out_of_bounds_read_returns_a_typed_error(&Gpu::emulator());
}

#[test]
fn unary_receivers_match_rust() {
    checks::unary_receivers_match_rust(&Gpu::emulator(), Barrier::Cooperative);
}

#[test]
fn deep_expressions_match_the_cpu() {
    checks::deep_expressions_match_the_cpu(&Gpu::emulator());
}

#[test]
fn a_zero_step_returns_a_typed_error() {
    checks::a_zero_step_returns_a_typed_error(&Gpu::emulator(), Barrier::Cooperative);
}

#[test]
fn every_barrier_choice_means_the_same_barrier_on_the_cpu() {
    for &barrier in Barrier::ALL {
        checks::control_flow_read_from_device_memory(&Gpu::emulator(), Scale::Small, barrier);
    }
}

#[test]
fn barriers_keep_their_grid_limits_on_the_cpu() {
    let gpu = Gpu::emulator();
    let mut marker = gpu.zeros::<u32>(1).unwrap();
    let launch = |barrier| Launch::new().barrier(barrier).threads(32);
    let result = gsync::kernels::empty_phases::launch_with(&gpu, &launch(Barrier::Lfs).blocks(33), &mut marker, 2);
    assert!(matches!(result, Err(Error::BarrierBlockLimit { requested: 33, max: 32, .. })), "{result:?}");
    let six = Barrier::Ilbs { groups: Some(6) };
    let result = gsync::kernels::empty_phases::launch_with(&gpu, &launch(six).blocks(5), &mut marker, 2);
    assert!(matches!(result, Err(Error::InvalidBarrier { .. })), "{result:?}");
    for (barrier, blocks) in [(Barrier::Lfs, 32), (six, 6)] {
        gsync::kernels::empty_phases::launch_with(&gpu, &launch(barrier).blocks(blocks), &mut marker, 2).unwrap();
    }
}

#[test]
fn radix_sorts_with_many_phases_sort_under_every_barrier() {
    let gpu = Gpu::emulator();
    let mut rng = checks::rng();
    let input: Vec<u32> = checks::random_vec(&mut rng, 3001);
    let mut expected = input.clone();
    expected.sort_unstable();
    for sort in [RadixSort::EightBit, RadixSort::FourBit] {
        for &barrier in Barrier::ALL {
            let launch = Launch::new().threads(64).blocks(7).barrier(barrier);
            assert_eq!(sort.sort(&gpu, &launch, &input).unwrap(), expected, "{sort:?} {barrier}");
        }
    }
}

#[test]
fn multi_launch_runs_the_split_kernel_with_the_results_of_the_fused_one() {
    checks::split_and_fused_runs_agree(&Gpu::emulator(), Scale::Small);
}

#[test]
fn a_split_kernel_keeps_no_shared_memory_from_one_segment_to_the_next() {
    use common::kernels::rereads_shared_memory_after_the_barrier as rereads;
    let gpu = Gpu::emulator();
    let mut out = gpu.zeros::<u32>(64).unwrap();
    let launch = Launch::new().blocks(2).threads(32);
    rereads::launch_with(&gpu, &launch, &mut out).unwrap();
    let fused: Vec<u32> = (0..64).map(|i| if i % 32 == 0 { 1 } else { 7 }).collect();
    assert_eq!(gpu.download(&out).unwrap(), fused);
    rereads::launch_with(&gpu, &launch.barrier(Barrier::MultiLaunch), &mut out).unwrap();
    // On a GPU the lanes that do not write read garbage; here, a fresh zeroed array.
    let split: Vec<u32> = (0..64).map(|i| u32::from(i % 32 == 0)).collect();
    assert_eq!(gpu.download(&out).unwrap(), split);
}

#[test]
fn a_kernel_that_cannot_be_split_returns_cannot_split_under_multi_launch() {
    checks::a_kernel_that_cannot_be_split_is_refused_under_multi_launch(&Gpu::emulator());
}

#[test]
fn hoisted_thread_indices_split_and_match_the_cpu() {
    for barrier in [Barrier::Cooperative, Barrier::MultiLaunch] {
        checks::hoisted_indices_match_the_cpu(&Gpu::emulator(), Scale::Small, barrier);
    }
}

/// Every thread loops forever, with no `grid_sync()` in the kernel.
#[grid_phases]
fn endless_loop(out: &mut [u32]) {
    if global_id() == 0 {
        out[0] = 1;
    }
    loop {}
}

/// Block 1 loops forever while the others wait for it at `grid_sync()`.
#[grid_phases]
fn endless_loop_in_one_block(out: &mut [u32]) {
    if block_idx() == 1 {
        loop {}
    }
    grid_sync();
    if global_id() == 0 {
        out[0] = 1;
    }
}

/// Every thread spins on a flag that no thread sets.
#[grid_phases]
fn wait_for_a_flag(flag: &[u32], out: &mut [u32]) {
    while flag[0] == 0 {}
    grid_sync();
    if global_id() == 0 {
        out[0] = flag[0];
    }
}

#[test]
fn endless_loops_end_with_a_kernel_timeout_under_every_barrier() {
    let gpu = Gpu::emulator();
    let flag = gpu.zeros::<u32>(1).unwrap();
    let mut out = gpu.zeros::<u32>(1).unwrap();
    let limit = std::time::Duration::from_millis(100);
    for &barrier in Barrier::ALL {
        let launch = Launch::new().blocks(4).threads(32).barrier(barrier).watchdog(Some(limit));
        type Run<'a> = Box<dyn Fn(&mut DeviceBuffer<u32>) -> gsync::Result<LaunchReport> + 'a>;
        let runs: [(&str, u32, Run<'_>); 3] = [
            ("loop {} without grid_sync", 1, Box::new(|out| endless_loop::launch_with(&gpu, &launch, out))),
            ("loop {} in one block", 1, Box::new(|out| endless_loop_in_one_block::launch_with(&gpu, &launch, out))),
            ("a spin on a flag", 1, Box::new(|out| wait_for_a_flag::launch_with(&gpu, &launch, &flag, out))),
        ];
        for (case, phase, run) in runs {
            let started = std::time::Instant::now();
            let result = run(&mut out);
            let took = started.elapsed();
            let Err(Error::KernelTimeout { phase: reported, limit: reported_limit, barrier: name, .. }) = &result
            else {
                panic!("{barrier}, {case}: expected KernelTimeout, got {result:?}");
            };
            // Auto's error names the barrier it resolved to.
            let ran = if barrier == Barrier::Auto { name.parse().unwrap_or(Barrier::Auto) } else { barrier };
            assert!(Barrier::DEVICE.contains(&ran) || ran == Barrier::MultiLaunch, "{barrier}, {case}: {name}");
            assert_eq!((*reported, *reported_limit, name.as_str()), (phase, limit, ran.to_string().as_str()));
            assert!(took < std::time::Duration::from_secs(2), "{barrier}, {case}: {took:?}");
        }
    }
}

/// A convergence loop with a race: thread 0 clears `changed` at the start of a round while
/// other threads may not yet have read it to decide whether the round before was the last.
/// Threads then disagree on the number of `grid_sync()` calls: a hang or barriers that pair
/// up wrongly on a GPU.
#[grid_phases]
fn racy_convergence(changed: &mut [u32], rounds: &mut [u32]) {
    loop {
        if global_id() == 0 {
            changed[0] = 0;
        }
        grid_sync();
        if global_id() == 0 && rounds[0] < 3 {
            rounds[0] += 1;
            changed[0] = 1;
        }
        grid_sync();
        if changed[0] == 0 {
            break;
        }
    }
}

#[test]
fn threads_that_disagree_on_the_grid_sync_count_are_a_typed_error_naming_both_counts() {
    let gpu = Gpu::emulator();
    for blocks in [1, 4] {
        let mut changed = gpu.zeros::<u32>(1).unwrap();
        let mut rounds = gpu.zeros::<u32>(1).unwrap();
        let launch = Launch::new().blocks(blocks).threads(32);
        let result = racy_convergence::launch_with(&gpu, &launch, &mut changed, &mut rounds);
        let Err(Error::BarrierMismatch { barrier, first, second, .. }) = &result else {
            panic!("{blocks} blocks: expected BarrierMismatch, got {result:?}");
        };
        assert_eq!(*barrier, "grid_sync()");
        assert!(first.contains("waits at its grid_sync() number 3"), "{first}");
        assert!(second.contains("finished after 2 grid_sync() calls"), "{second}");
    }
}

#[test]
fn grids_beyond_the_emulator_s_limit_are_typed_errors_not_an_abort() {
    let gpu = Gpu::emulator();
    let mut marker = gpu.zeros::<u32>(1).unwrap();
    for &barrier in Barrier::ALL {
        for blocks in [u32::MAX, 1_000_000] {
            let launch = Launch::new().blocks(blocks).threads(256).barrier(barrier);
            let result = gsync::kernels::empty_phases::launch_with(&gpu, &launch, &mut marker, 2);
            match result {
                Err(Error::TooManyBlocks { requested, max: 4096, .. }) => assert_eq!(requested, blocks),
                Err(Error::BarrierBlockLimit { max: 256, .. }) if barrier == Barrier::Lfs => {}
                other => panic!("{barrier}, {blocks} blocks: expected TooManyBlocks, got {other:?}"),
            }
        }
    }
}

#[test]
fn a_spin_wait_nobody_ends_times_out_with_its_line() {
    for barrier in [Barrier::Cooperative, Barrier::Lbs, Barrier::MultiLaunch] {
        checks::a_spin_wait_nobody_ends_times_out_with_its_line(&Gpu::emulator(), barrier);
    }
}

/// The emulator lets other threads run at every ordered access, so the classic broken lock
/// (test with an acquire load, then set with a release store) lets two threads into the
/// critical section, and updates get lost, on every run: the test above would catch a lock
/// built that way.
#[test]
fn a_test_then_set_lock_loses_updates_on_the_emulator() {
    let gpu = Gpu::emulator();
    let (mut flag, mut counters) = (gpu.zeros::<u32>(1).unwrap(), gpu.zeros::<u32>(2).unwrap());
    let rounds = 10;
    let launch = Launch::new().blocks(1).threads(64);
    checks::test_then_set_increments::launch_with(&gpu, &launch, &mut flag, &mut counters, rounds).unwrap();
    let counters = gpu.download(&counters).unwrap();
    assert_eq!(counters[1], 64 * rounds, "every thread went through the section");
    assert!(counters[0] < 64 * rounds, "the broken lock let threads in together: {counters:?}");
}

#[test]
fn rounding_half_precision_through_f32_is_correct_rounding() {
    common::half_checks::rounding_through_f32_is_correct_rounding();
}

#[test]
fn a_2d_transpose_through_a_shared_tile_matches_the_cpu() {
    for barrier in [Barrier::Cooperative, Barrier::MultiLaunch] {
        common::dims::a_2d_transpose_through_a_shared_tile_matches_the_cpu(&Gpu::emulator(), barrier);
    }
}

#[test]
fn a_3d_grid_maps_its_indices_like_cuda() {
    common::dims::a_3d_grid_maps_its_indices_like_cuda(&Gpu::emulator());
}

#[test]
fn grid_sync_in_a_3d_grid_waits_for_every_block() {
    for &barrier in Barrier::ALL {
        common::dims::grid_sync_in_a_3d_grid_waits_for_every_block(&Gpu::emulator(), barrier, (2, 3, 2), 5);
    }
}

#[test]
fn a_block_size_constant_sizes_shared_memory_at_every_block_size() {
    common::dims::a_block_size_constant_sizes_shared_memory_at_every_block_size(&Gpu::emulator());
}

#[test]
fn a_block_size_that_overflows_shared_memory_is_refused() {
    common::dims::a_block_size_that_overflows_shared_memory_is_refused(&Gpu::emulator());
}

#[test]
fn shapes_beyond_the_limits_are_typed_errors() {
    common::dims::shapes_beyond_the_limits_are_typed_errors(&Gpu::emulator());
}

#[test]
fn many_launches_in_flight_each_compute_their_own_result() {
    common::pending::many_launches_in_flight_each_compute_their_own_result(&Gpu::emulator());
}

#[test]
fn back_to_back_launches_stay_correct_across_barriers_settings_and_faults() {
    common::pending::back_to_back_launches_stay_correct_across_barriers_settings_and_faults(&Gpu::emulator());
}

#[test]
fn a_launch_error_surfaces_at_wait() {
    common::pending::a_launch_error_surfaces_at_wait(&Gpu::emulator());
}

#[test]
fn split_and_dropped_launches_finish() {
    common::pending::split_and_dropped_launches_finish(&Gpu::emulator());
}

#[test]
fn launches_on_two_streams_use_each_other_s_buffers() {
    common::pending::launches_on_two_streams_use_each_other_s_buffers(&Gpu::emulator());
}

#[test]
fn captured_launches_replay_in_order() {
    common::pending::captured_launches_replay_in_order(&Gpu::emulator());
}

#[test]
fn a_refused_launch_is_refused_by_submit() {
    common::pending::a_refused_launch_is_refused_by_submit(&Gpu::emulator());
}

#[test]
fn full_grids_on_two_streams_take_turns() {
    common::pending::full_grids_on_two_streams_take_turns(&Gpu::emulator());
}

#[test]
fn an_auto_launch_says_which_row_of_which_table_chose_its_barrier() {
    let gpu = Gpu::emulator();
    let mut marker = gpu.zeros::<u32>(1).unwrap();
    let report = gsync::kernels::empty_phases::launch_with(&gpu, &Launch::new().blocks(4), &mut marker, 3).unwrap();
    let why = report.auto.expect("an Auto launch says why");
    assert_eq!(why.barrier, report.barrier);
    assert!(matches!(why.source, gsync::AutoSource::Measured { .. }), "{why}");
    assert!(
        why.to_string().starts_with(&format!("Auto ran {}: the fastest for grids of up to", report.barrier)),
        "{why}"
    );
    let named = Launch::new().blocks(4).barrier(Barrier::Ulfs);
    let report = gsync::kernels::empty_phases::launch_with(&gpu, &named, &mut marker, 3).unwrap();
    assert!(report.auto.is_none(), "a named barrier needs no reason");
    assert_eq!(gpu.auto_table().unwrap().source(), &why.source);
    let error = gpu.calibrate_auto().expect_err("the emulator's timing says nothing of a GPU's");
    assert!(matches!(error, Error::WrongBackend { what: "Gpu::calibrate_auto", .. }), "{error}");
}
