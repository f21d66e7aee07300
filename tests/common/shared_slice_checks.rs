//! Shared slices against their CPU reference, and the errors of slices that cannot be laid
//! out, shared by the GPU tests and the emulator tests.

use super::checks::{random_vec, rng, Scale};
use super::shared_slice_kernels::*;
use gsync::prelude::*;

pub fn shared_slices_sized_at_launch_sum_tiles_of_every_length(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let n = match scale {
        Scale::Full => 1_000_003,
        Scale::Small => 40_009,
    };
    let input: Vec<u32> = random_vec(&mut rng, n).into_iter().map(|v: u32| v >> 8).collect();
    let di = gpu.upload(&input).unwrap();
    // 12288 u32 tiles take 48 KiB, 16384 more than a block gets without opting in.
    for (tile, threads) in [(1usize, 32u32), (100, 64), (1000, 256), (12_288, 256), (16_384, 128)] {
        for barrier in [Barrier::Auto, Barrier::MultiLaunch] {
            let tiles = n.div_ceil(tile);
            let (mut sums, mut total) = (gpu.zeros::<u64>(tiles).unwrap(), gpu.zeros::<u64>(1).unwrap());
            let launch = Launch::new().threads(threads).barrier(barrier);
            tile_sums::launch_with(gpu, &launch, &di, &mut sums, &mut total, tile as u32)
                .unwrap_or_else(|e| panic!("tile {tile}, {threads} threads, {barrier}: {e}"));
            let (expected, expected_total) = tile_sums_reference(&input, tile);
            assert_eq!(gpu.download(&sums).unwrap(), expected, "tile {tile}, {threads} threads, {barrier}");
            assert_eq!(gpu.download(&total).unwrap(), [expected_total], "tile {tile}, {threads} threads, {barrier}");
        }
    }
}

pub fn shared_slices_beyond_the_device_or_their_type_are_typed_errors(gpu: &Gpu, _scale: Scale) {
    let di = gpu.upload(&[1u32; 64]).unwrap();
    let (mut sums, mut total) = (gpu.zeros::<u64>(64).unwrap(), gpu.zeros::<u64>(1).unwrap());
    for barrier in [Barrier::Auto, Barrier::MultiLaunch] {
        let launch = Launch::new().threads(256).barrier(barrier);
        // 50000 × (4 + 1) bytes: more than the 227 KiB a block can opt into.
        let error = tile_sums::launch_with(gpu, &launch, &di, &mut sums, &mut total, 50_000).expect_err("too large");
        assert!(
            matches!(&error, Error::DynamicSharedMemoryLimit { dynamic, threads: 256, .. } if *dynamic > 227 * 1024),
            "{barrier}: {error}"
        );
        assert!(error.to_string().contains("make the shared slices shorter"), "{error}");
        let error =
            tile_sums::launch_with(gpu, &launch, &di, &mut sums, &mut total, u32::MAX - 3).expect_err("overflows");
        assert!(
            matches!(&error, Error::SharedSliceLength { slice, threads: 256, .. } if slice == "parity"),
            "{barrier}: {error}"
        );
        assert!(error.to_string().contains("`+` overflows `u32`"), "{error}");
    }
    let error = tile_sums::max_coresident_blocks(gpu, &Launch::new().threads(256), &di, &sums, &total, 50_000)
        .expect_err("too large");
    assert!(matches!(error, Error::DynamicSharedMemoryLimit { .. }), "{error}");
    let shape = tile_sums::launch_config(gpu, &Launch::new().threads(256), &di, &sums, &total, 1000).unwrap();
    assert_eq!(shape.threads, 256);
}

pub fn an_index_past_a_shared_slice_is_caught(gpu: &Gpu, _scale: Scale) {
    let mut out = gpu.zeros::<u32>(1).unwrap();
    let launch = Launch::new().threads(64).blocks(2).bounds_checks(true);
    writes_past_a_shared_slice::launch_with(gpu, &launch, &mut out, 64).unwrap();
    let error = writes_past_a_shared_slice::launch_with(gpu, &launch, &mut out, 40).expect_err("past the end");
    assert!(matches!(&error, Error::OutOfBounds { array, len: 40, .. } if array == "s"), "{error}");
}
