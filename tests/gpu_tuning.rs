//! Launch configurations on a real GPU: tuning runs its candidates on copies (the caller's data is
//! written once), remembers the winner in memory and on disk, can be switched off, and the
//! shape query answers exactly what the launch then runs.
//! Run with `bash .gpu/run.sh tests` on a CUDA machine (see README).

use common::tuning::{add_one, block_reverse, block_sums, sum};
use gsync::prelude::*;
use gsync::ConfigChoice;

fn input(n: usize) -> Vec<u32> {
    (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) >> 7).collect()
}

/// One test, so that the cache directory is set before any GPU is opened and no other test
/// of this binary tunes the same kernels.
#[test]
#[ignore = "needs a CUDA GPU"]
fn tuning_writes_the_caller_s_data_once_and_remembers_the_winner() {
    let cache = std::env::temp_dir().join(format!("gsync-tuning-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    std::env::set_var("GSYNC_CACHE_DIR", &cache);
    std::env::remove_var(gsync::TUNE_VAR);

    let gpu = common::cuda_gpu();
    let n = 1 << 20;
    let original = input(n);
    let mut data = gpu.upload(&original).expect("upload");
    let mut staging = gpu.zeros::<u32>(n).expect("staging");
    let first = add_one::launch(&gpu, &mut data, &mut staging).expect("tunes and runs");
    let ConfigChoice::Tuned { candidates, took } = first.choice else {
        panic!("the first launch tunes: {:?}", first.choice);
    };
    assert!(candidates >= 2, "a handful of configurations: {candidates}");
    eprintln!("tuned add_one in {took:?} over {candidates} configurations: {}", first.config());
    let once: Vec<u32> = original.iter().map(|x| x + 1).collect();
    assert_eq!(gpu.download(&data).expect("download"), once, "the candidates ran on copies");

    let second = add_one::launch(&gpu, &mut data, &mut staging).expect("runs");
    assert_eq!((second.choice, second.config()), (ConfigChoice::Remembered, first.config()));
    let reopened = common::cuda_gpu();
    let mut fresh = reopened.upload(&original).expect("upload");
    let mut fresh_staging = reopened.zeros::<u32>(n).expect("staging");
    let third = add_one::launch(&reopened, &mut fresh, &mut fresh_staging).expect("runs");
    assert_eq!((third.choice, third.config()), (ConfigChoice::Remembered, first.config()), "read back from disk");
    assert_eq!(reopened.download(&fresh).expect("download"), once);

    // Off: the heuristic, which the query then answers too.
    let off = Launch::new().tune(false);
    let small = input(3000);
    let mut data = gpu.upload(&small).expect("upload");
    let mut staging = gpu.zeros::<u32>(small.len()).expect("staging");
    let report = add_one::launch_with(&gpu, &off, &mut data, &mut staging).expect("runs");
    assert_eq!(report.choice, ConfigChoice::Heuristic);
    let answered = gpu.launch_config(&add_one::KERNEL, &off, small.len()).expect("a shape");
    assert_eq!(report.config(), answered);
    assert_eq!(report.threads, 1024, "the largest block size that fits, one block per SM");
    assert_eq!(report.blocks, gpu.info().sm_count);

    // A launch that names its block size keeps the largest co-resident grid, as before tuning.
    let named = Launch::new().threads(256);
    let report = add_one::launch_with(&gpu, &named, &mut data, &mut staging).expect("runs");
    let max = add_one::max_coresident_blocks(&gpu, &named).expect("occupancy");
    assert_eq!((report.blocks, report.threads, report.choice), (max, 256, ConfigChoice::Default));

    // A grid-dependent buffer sized from the query, with tuning on: the launch keeps the promise.
    for len in [1 << 16, 1 << 22] {
        let values = input(len);
        let shape = gpu.launch_config(&block_sums::KERNEL, &Launch::new(), len).expect("a shape");
        let device_input = gpu.upload(&values).expect("upload");
        let mut partials = gpu.zeros::<u32>(shape.blocks as usize).expect("partials");
        let mut total = gpu.zeros::<u32>(1).expect("total");
        let report = block_sums::launch(&gpu, &device_input, &mut partials, &mut total).expect("runs");
        assert_eq!(report.config(), shape, "2^{}", len.ilog2());
        assert_eq!(gpu.download(&total).expect("download"), [sum(&values)]);
    }

    // A kernel whose shared array assumes 256 threads keeps them, whatever the tuner tries.
    let data = input(1 << 16);
    let mut device = gpu.upload(&data).expect("upload");
    let report = block_reverse::launch(&gpu, &mut device).expect("runs");
    assert_eq!(report.threads, 256);
    let expected: Vec<u32> = data.chunks(256).flat_map(|chunk| chunk.iter().rev().copied()).collect();
    assert_eq!(gpu.download(&device).expect("download"), expected);
    let _ = std::fs::remove_dir_all(&cache);
}
