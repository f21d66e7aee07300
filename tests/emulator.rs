//! Every GPU test's kernel on the CPU emulator, against the same CPU
//! references (`common::checks`), at small sizes: kernel semantics are
//! checked on every machine, GPU or not.

mod common;

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
fn an_out_of_bounds_read_returns_a_typed_error() {
    checks::an_out_of_bounds_read_returns_a_typed_error(&Gpu::emulator());
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
