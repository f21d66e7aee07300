//! The launch-shape query and the shape a launch reports, on the CPU emulator (CI): the query
//! answers before anything is allocated, with the emulator's real default grid, and a launch
//! runs exactly what it answered.

use common::tuning::{add_one, block_reverse, block_sums, sum};
use gsync::prelude::*;
use gsync::{ConfigChoice, LaunchConfig};

fn input(n: usize) -> Vec<u32> {
    (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) >> 7).collect()
}

#[test]
fn the_emulator_s_shape_is_its_real_default_grid() {
    let gpu = Gpu::emulator();
    let shape = gpu.launch_config(&block_sums::KERNEL, &Launch::new(), 4096).expect("a shape");
    assert_eq!(shape.blocks, 4 * gpu.info().sm_count, "4 blocks per host core");
    assert_eq!(shape.threads, gsync::DEFAULT_THREADS);
    assert_ne!(shape.barrier, Barrier::Auto, "the barrier is resolved");
    let lfs = gpu.launch_config(&block_sums::KERNEL, &Launch::new().barrier(Barrier::Lfs).threads(2), 4096);
    assert_eq!(lfs.map(|shape| shape.blocks).ok(), Some(2), "within the barrier's limit");
}

#[test]
fn buffers_sized_from_the_query_fit_the_launch() {
    let gpu = Gpu::emulator();
    let data = input(5000);
    for launch in [Launch::new(), Launch::new().blocks(3), Launch::new().threads(32).barrier(Barrier::Ulfs)] {
        let shape = gpu.launch_config(&block_sums::KERNEL, &launch, data.len()).expect("a shape");
        let device_input = gpu.upload(&data).expect("upload");
        let mut partials = gpu.zeros::<u32>(shape.blocks as usize).expect("partials");
        let mut total = gpu.zeros::<u32>(1).expect("total");
        let report =
            block_sums::launch_with(&gpu, &launch, &device_input, &mut partials, &mut total).expect("fits the grid");
        assert_eq!(report.config(), shape, "{launch:?}");
        assert_eq!(gpu.download(&total).expect("download"), [sum(&data)]);
    }
}

#[test]
fn a_buffer_sized_for_a_smaller_grid_is_caught_not_written_past() {
    let gpu = Gpu::emulator();
    let shape = gpu.launch_config(&block_sums::KERNEL, &Launch::new(), 100).expect("a shape");
    let device_input = gpu.upload(&input(100)).expect("upload");
    let mut partials = gpu.zeros::<u32>(shape.blocks as usize - 1).expect("partials");
    let mut total = gpu.zeros::<u32>(1).expect("total");
    let error = block_sums::launch(&gpu, &device_input, &mut partials, &mut total).expect_err("one slot short");
    assert!(matches!(error, Error::OutOfBounds { .. }), "{error}");
}

#[test]
fn a_pinned_shape_runs_as_given_and_says_so() {
    let gpu = Gpu::emulator();
    let shape = LaunchConfig { blocks: 5, threads: 64, barrier: Barrier::Lbs };
    let mut data = gpu.upload(&input(1000)).expect("upload");
    let mut staging = gpu.zeros::<u32>(1000).expect("staging");
    let report = add_one::launch_with(&gpu, &Launch::new().config(shape), &mut data, &mut staging).expect("runs");
    assert_eq!((report.config(), report.choice), (shape, ConfigChoice::Requested));
    let report = add_one::launch(&gpu, &mut data, &mut staging).expect("runs");
    assert_eq!(report.choice, ConfigChoice::Default, "the emulator does not tune");
    let expected: Vec<u32> = input(1000).iter().map(|x| x + 2).collect();
    assert_eq!(gpu.download(&data).expect("download"), expected);
}

#[test]
fn a_split_run_s_shape_is_the_one_it_runs() {
    let gpu = Gpu::emulator();
    let split = Launch::new().barrier(Barrier::MultiLaunch);
    let shape = gpu.launch_config(&add_one::KERNEL, &split, 1000).expect("a shape");
    let mut data = gpu.upload(&input(1000)).expect("upload");
    let mut staging = gpu.zeros::<u32>(1000).expect("staging");
    let report = add_one::launch_with(&gpu, &split, &mut data, &mut staging).expect("runs");
    assert_eq!(report.config(), shape);
}

#[test]
fn a_kernel_that_may_assume_its_block_size_keeps_the_default() {
    assert_eq!(block_reverse::KERNEL.default_threads, gsync::DEFAULT_THREADS, "shared arrays pin it");
    assert_eq!(add_one::KERNEL.default_threads, 0, "grid-stride loops leave it to the tuner");
    let gpu = Gpu::emulator();
    let data = input(4 * 256);
    let mut device = gpu.upload(&data).expect("upload");
    block_reverse::launch(&gpu, &mut device).expect("runs");
    let expected: Vec<u32> = data.chunks(256).flat_map(|chunk| chunk.iter().rev().copied()).collect();
    assert_eq!(gpu.download(&device).expect("download"), expected);
}
