//! The library's sorts on a real GPU at sizes the emulator cannot reach: both radix sorts of
//! `u32` keys and pairs at 2^16, 2^20 and 2^24, of the other key types at 2^20, and
//! `kernels::sort` and `sort_pairs` on both sides of their crossovers to the radix sort. The
//! checks at small sizes, shared with the emulator, run in `gpu_kernels.rs` and
//! `full_gpu_kernels.rs`.
//! Run with `bash .gpu/run.sh tests` on a CUDA machine (see README).

use common::cuda_gpu as gpu;
use common::sort_checks::check_key_type;
use gsync::kernels::{onesweep, radix, SortKernel, RADIX_KEYS_FROM, RADIX_PAIRS_FROM};
use gsync::prelude::*;

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_radix_sort_sorts_u32_keys_and_pairs_up_to_2_pow_24() {
    let (gpu, lengths) = (gpu(), [1 << 16, (1 << 20) + 1, 1 << 24]);
    check_key_type::<u32>(&gpu, &lengths, SortKernel::Radix, &Launch::new());
    check_key_type::<u32>(&gpu, &lengths, SortKernel::Onesweep, &Launch::new());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_radix_sort_sorts_every_other_key_type_at_2_pow_20() {
    let (gpu, launch, lengths) = (gpu(), Launch::new(), [(1 << 20) + 5]);
    for kernel in [SortKernel::Radix, SortKernel::Onesweep] {
        check_key_type::<i32>(&gpu, &lengths, kernel, &launch);
        check_key_type::<f32>(&gpu, &lengths, kernel, &launch);
        check_key_type::<u64>(&gpu, &lengths, kernel, &launch);
        check_key_type::<i64>(&gpu, &lengths, kernel, &launch);
        check_key_type::<f64>(&gpu, &lengths, kernel, &launch);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_library_sort_changes_kernel_at_the_crossover_of_keys_and_of_pairs() {
    let gpu = gpu();
    let lengths = [RADIX_PAIRS_FROM - 1, RADIX_PAIRS_FROM, RADIX_KEYS_FROM - 1, RADIX_KEYS_FROM];
    check_key_type::<f32>(&gpu, &lengths, SortKernel::Fastest, &Launch::new());
    let keys: Vec<u32> = (0..RADIX_KEYS_FROM as u32).rev().collect();
    let below = gsync::kernels::sort(&gpu, &Launch::new(), &keys[1..], false).unwrap();
    let at = gsync::kernels::sort(&gpu, &Launch::new(), &keys, false).unwrap();
    let bitonic_threads = gsync::kernels::bitonic::default_threads(RADIX_KEYS_FROM - 1);
    assert_eq!(below.report.threads, bitonic_threads, "keys below their crossover, the bitonic sort");
    assert_eq!(at.report.threads as usize, radix::THREADS, "keys from their crossover on, the radix sort");
    assert!(at.keys.windows(2).all(|w| w[0] <= w[1]) && below.keys.windows(2).all(|w| w[0] <= w[1]));
    let (keys, values) = (&keys[..RADIX_PAIRS_FROM], &(0..RADIX_PAIRS_FROM as u32).collect::<Vec<_>>()[..]);
    let below = gsync::kernels::sort_pairs(&gpu, &Launch::new(), &keys[1..], &values[1..], false).unwrap();
    let at = gsync::kernels::sort_pairs(&gpu, &Launch::new(), keys, values, false).unwrap();
    let bitonic_threads = gsync::kernels::bitonic::default_shape(RADIX_PAIRS_FROM - 1).1;
    assert_ne!(bitonic_threads as usize, radix::THREADS, "the two kernels tell apart by their block size");
    assert_eq!(below.report.threads, bitonic_threads, "pairs below their crossover, the bitonic sort");
    assert_eq!(at.report.threads as usize, radix::THREADS, "pairs from their crossover on, the radix sort");
    assert!(at.keys.windows(2).all(|w| w[0] <= w[1]) && below.keys.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_radix_sort_runs_on_the_co_resident_grid_and_no_more_blocks_than_tiles() {
    let gpu = gpu();
    let resident = radix::radix_sort_u32::max_coresident_blocks(&gpu, &Launch::new().threads(256)).unwrap();
    for n in [radix::TILE * 3, 1 << 24] {
        let mut keys = gpu.upload(&(0..n as u32).rev().collect::<Vec<_>>()).unwrap();
        let report = radix::sort_words(&gpu, &Launch::new(), &mut keys, None).unwrap();
        let expected = resident.min(radix::tiles(n) as u32);
        assert_eq!(report.blocks, expected, "n {n}: {resident} co-resident blocks, {} tiles", radix::tiles(n));
        assert_eq!(gpu.download(&keys).unwrap(), (0..n as u32).collect::<Vec<_>>(), "n {n}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_split_look_back_sort_runs_a_grid_resident_in_every_segment() {
    // A block of a digit pass waits for the tiles of the blocks before it: the split form's
    // grid must be resident in each of its segments, the digit passes' as well as the
    // histograms' (a spin-wait timeout at 2^22 keys when a segment held fewer blocks than the
    // grid), for keys of both widths.
    let gpu = gpu();
    let split = Launch::new().barrier(Barrier::MultiLaunch).threads(256);
    let keys: Vec<u32> = (0..1u32 << 22).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let resident = <u32 as onesweep::OnesweepWord>::onesweep_max_coresident_blocks(&gpu, &split).unwrap();
    for graph in [false, true] {
        let launch = Launch::new().barrier(Barrier::MultiLaunch).graph(graph);
        let sorted = gsync::kernels::sort_with(&gpu, &launch, &keys, None, false, SortKernel::Onesweep).unwrap();
        assert!(sorted.report.blocks <= resident, "{} blocks, {resident} resident", sorted.report.blocks);
        assert!(sorted.keys.windows(2).all(|w| w[0] <= w[1]), "graph: {graph}");
    }
    // A named split grid larger than that would wait for blocks that never run: refused.
    let too_many = Launch::new().barrier(Barrier::MultiLaunch).blocks(resident + 1);
    let refused = gsync::kernels::sort_with(&gpu, &too_many, &keys, None, false, SortKernel::Onesweep);
    assert!(matches!(refused, Err(gsync::Error::InvalidInput { .. })), "{:?}", refused.map(|s| s.report.blocks));
    let wide: Vec<u64> = keys.iter().map(|&k| (k as u64) << 29 | k as u64).collect();
    let launch = Launch::new().barrier(Barrier::MultiLaunch);
    let sorted = gsync::kernels::sort_with(&gpu, &launch, &wide, None, false, SortKernel::Onesweep).unwrap();
    assert!(sorted.keys.windows(2).all(|w| w[0] <= w[1]), "u64");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_split_counting_sort_runs_more_blocks_than_fit_at_once() {
    // No block of the counting sort waits for another inside a phase: its split form runs a grid
    // three times the fused kernel's resident one.
    let gpu = gpu();
    let resident = radix::radix_sort_u32::max_coresident_blocks(&gpu, &Launch::new().threads(256)).unwrap();
    let keys: Vec<u32> = (0..1u32 << 22).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let mut expected = keys.clone();
    expected.sort_unstable();
    let launch = Launch::new().barrier(Barrier::MultiLaunch).blocks(3 * resident);
    let sorted = gsync::kernels::sort_with(&gpu, &launch, &keys, None, false, SortKernel::Radix).unwrap();
    assert_eq!(sorted.report.blocks, 3 * resident);
    assert!(sorted.keys == expected, "{} blocks", sorted.report.blocks);
}
