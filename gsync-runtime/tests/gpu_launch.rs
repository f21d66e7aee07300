//! The launch path on a real GPU, with hand-written kernels shaped like `#[grid_phases]`
//! output. Ignored by default; run with `cargo test -p gsync-runtime -- --ignored` on a
//! machine with an NVIDIA GPU and NVRTC.

use std::time::{Duration, Instant};

use gsync_runtime::__private::{Axes, KernelArgs, SplitSpec};
use gsync_runtime::{Backend, Barrier, Error, Gpu, KernelSpec, Launch};

/// Rotates `a` left by one element per round, through `b`. Every round reads elements other
/// blocks wrote in the round before, so it is only right if the grid barrier holds.
const ROTATE: &str = r#"
extern "C" __global__ void __launch_bounds__(GSYNC_BLOCK_SIZE) rotate(
    u32* __restrict__ a, unsigned long long a_len, u32* __restrict__ b, unsigned long long b_len,
    u32 rounds, u32* __restrict__ gsync_barrier_state, gsync_status_t* __restrict__ gsync_status, const gsync_next_launch_t gsync_next_launch) {
    gsync::prepare_next_launch(gsync_next_launch);
    gsync_barrier_t gsync_barrier = gsync_barrier_begin(gsync_barrier_state);
    const u64 first = (u64)blockIdx.x * GSYNC_BLOCK_SIZE + threadIdx.x;
    const u64 stride = (u64)gridDim.x * GSYNC_BLOCK_SIZE;
    for (u32 round = 0; round < rounds; ++round) {
        for (u64 i = first; i < a_len; i += stride) b[i] = a[(i + 1) % a_len];
        gsync_grid_sync(gsync_barrier, gsync_status);
        for (u64 i = first; i < b_len; i += stride) a[i] = b[i];
        gsync_grid_sync(gsync_barrier, gsync_status);
    }
}
"#;

static ROTATE_KERNEL: KernelSpec = KernelSpec {
    name: "rotate",
    symbol: "rotate",
    rust_signature: "fn rotate(a: &mut [u32], b: &mut [u32], rounds: u32)",
    checked_body: ROTATE,
    unchecked_body: ROTATE,
    bounds_checks: false,
    profile: false,
    arrays: &["a", "b"],
    grid_syncs: 2,
    default_threads: 0,
    blocks_per_sm: 0,
    split: SplitSpec::NONE,
    assertions: &[],
    axes: Axes::NONE,
    refused_block_sizes: &[],
};

/// Writes each scalar parameter into `out`, widened to 64 bits.
const SCALARS: &str = r#"
extern "C" __global__ void __launch_bounds__(GSYNC_BLOCK_SIZE) scalars(
    u64* __restrict__ out, unsigned long long out_len, u8 x, i16 y, bool z, f64 w, usize v, f32 f,
    u32* __restrict__ gsync_barrier_state, gsync_status_t* __restrict__ gsync_status, const gsync_next_launch_t gsync_next_launch) {
    gsync::prepare_next_launch(gsync_next_launch);
    gsync_barrier_t gsync_barrier = gsync_barrier_begin(gsync_barrier_state);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        out[0] = x;
        out[1] = (u64)(i64)y;
        out[2] = z ? 1 : 0;
        out[3] = (u64)__double_as_longlong(w);
        out[4] = v;
        out[5] = (u64)__float_as_uint(f);
        out[6] = out_len;
    }
    gsync_grid_sync(gsync_barrier, gsync_status);
}
"#;

static SCALARS_KERNEL: KernelSpec = KernelSpec {
    name: "scalars",
    symbol: "scalars",
    rust_signature: "fn scalars(out: &mut [u64], x: u8, y: i16, z: bool, w: f64, v: usize, f: f32)",
    checked_body: SCALARS,
    unchecked_body: SCALARS,
    bounds_checks: false,
    profile: false,
    arrays: &["out"],
    grid_syncs: 1,
    default_threads: 64,
    blocks_per_sm: 0,
    split: SplitSpec::NONE,
    assertions: &[],
    axes: Axes::NONE,
    refused_block_sizes: &[],
};

/// Reads `a[a_len + 3]` through the prelude's bounds check, as a debug build would.
const OVERRUN: &str = r#"
extern "C" __global__ void __launch_bounds__(GSYNC_BLOCK_SIZE) overrun(
    const f32* __restrict__ a, unsigned long long a_len, f32* __restrict__ b,
    unsigned long long b_len, u32* __restrict__ gsync_barrier_state, gsync_status_t* __restrict__ gsync_status, const gsync_next_launch_t gsync_next_launch) {
    gsync::prepare_next_launch(gsync_next_launch);
    gsync_barrier_t gsync_barrier = gsync_barrier_begin(gsync_barrier_state);
    gsync_grid_sync(gsync_barrier, gsync_status);
    if (blockIdx.x == 0 && threadIdx.x == 0 && gsync::in_bounds(0, b_len, gsync_status, 1u, 7u)) {
        b[0] = gsync::load(a, a_len, a_len + 3, gsync_status, 0u, 42u);
    }
}
"#;

static OVERRUN_KERNEL: KernelSpec = KernelSpec {
    name: "overrun",
    symbol: "overrun",
    rust_signature: "fn overrun(a: &[f32], b: &mut [f32])",
    checked_body: OVERRUN,
    unchecked_body: OVERRUN,
    bounds_checks: true,
    profile: false,
    arrays: &["a", "b"],
    grid_syncs: 1,
    default_threads: 0,
    blocks_per_sm: 0,
    split: SplitSpec::NONE,
    assertions: &[],
    axes: Axes::NONE,
    refused_block_sizes: &[],
};

fn gpu() -> Gpu {
    Gpu::cuda(0).unwrap_or_else(|error| panic!("{error}"))
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn buffers_round_trip_and_check_lengths() {
    let gpu = gpu();
    let host: Vec<f64> = (0..1000).map(|i| f64::from(i) * 0.5).collect();
    let mut buffer = gpu.upload(&host).expect("upload");
    assert_eq!(gpu.download(&buffer).expect("download"), host);
    let doubled: Vec<f64> = host.iter().map(|x| x * 2.0).collect();
    gpu.write(&mut buffer, &doubled).expect("write");
    let mut out = vec![0.0; 1000];
    gpu.download_into(&buffer, &mut out).expect("download_into");
    assert_eq!(out, doubled);
    let mismatch = gpu.write(&mut buffer, &doubled[..10]);
    assert!(matches!(mismatch, Err(Error::LengthMismatch { device: 1000, host: 10 })));
    gpu.fill_zeros(&mut buffer).expect("fill_zeros");
    assert_eq!(gpu.download(&buffer).expect("download"), vec![0.0; 1000]);
    let zeros = gpu.zeros::<i16>(33).expect("zeros");
    assert_eq!(gpu.download(&zeros).expect("download"), vec![0i16; 33]);
    let mut empty = gpu.upload::<u8>(&[]).expect("empty upload");
    assert!(empty.is_empty());
    gpu.fill_zeros(&mut empty).expect("zeroing an empty buffer");
    assert_eq!(gpu.download(&empty).expect("empty download"), Vec::<u8>::new());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn buffers_and_calls_of_the_other_backend_are_typed_errors() {
    let gpu = gpu();
    assert_eq!(gpu.backend(), Backend::Cuda);
    let emulator = Gpu::emulator();
    let cuda_buffer = gpu.upload(&[1u32, 2, 3]).expect("upload");
    let mut emulator_buffer = emulator.upload(&[1u32, 2, 3]).expect("upload");
    let mismatch = |error: Error, buffer: Backend, on: Backend| {
        assert!(
            matches!(error, Error::BufferBackendMismatch { buffer: b, gpu: g } if b == buffer && g == on),
            "{error}"
        );
    };
    mismatch(cuda_buffer.emu().expect_err("a CUDA buffer"), Backend::Cuda, Backend::Emulator);
    mismatch(emulator.download(&cuda_buffer).expect_err("a CUDA buffer"), Backend::Cuda, Backend::Emulator);
    mismatch(gpu.download(&emulator_buffer).expect_err("an emulator buffer"), Backend::Emulator, Backend::Cuda);
    mismatch(
        gpu.write(&mut emulator_buffer, &[4, 5, 6]).expect_err("an emulator buffer"),
        Backend::Emulator,
        Backend::Cuda,
    );
    mismatch(gpu.fill_zeros(&mut emulator_buffer).expect_err("an emulator buffer"), Backend::Emulator, Backend::Cuda);
    let mut b = gpu.zeros::<u32>(3).expect("zeros");
    let mut args = KernelArgs::new();
    args.slice_mut(&mut emulator_buffer);
    args.slice_mut(&mut b);
    args.scalar(1u32);
    // SAFETY: the launch is refused before the arguments are used.
    let refused = unsafe { gpu.launch_kernel(&ROTATE_KERNEL, &Launch::new(), args) }.expect_err("an emulator buffer");
    mismatch(refused, Backend::Emulator, Backend::Cuda);
    let emulated = gpu.emulate(&ROTATE_KERNEL, &Launch::new(), || (), |_, _: &()| Box::pin(async {}));
    let error = emulated.expect_err("CUDA has no emulator");
    assert!(matches!(error, Error::WrongBackend { what: "Gpu::emulate", backend: Backend::Cuda }), "{error}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_cooperative_launch_keeps_phases_apart_across_the_whole_grid() {
    let gpu = gpu();
    let info = gpu.info().clone();
    println!("{info:?}");
    let (major, _) = info.driver_cuda_version.expect("the driver reports its CUDA version");
    assert!(major >= 12, "a driver for CUDA 12 or newer: {info:?}");
    let n = 1 << 20;
    let host: Vec<u32> = (0..n).collect();
    let mut a = gpu.upload(&host).expect("upload a");
    let mut b = gpu.zeros::<u32>(n as usize).expect("zeros b");
    let rounds = 37u32;
    // A launch that names its block size gets the largest co-resident grid.
    let launch = Launch::new().threads(256);
    let max = gpu.max_coresident_blocks(&ROTATE_KERNEL, &launch).expect("occupancy");
    assert!(max >= info.sm_count, "at least one block per SM");
    let mut args = KernelArgs::new();
    args.slice_mut(&mut a);
    args.slice_mut(&mut b);
    args.scalar(rounds);
    // SAFETY: the arguments match `rotate`'s parameters.
    let report = unsafe { gpu.launch_kernel(&ROTATE_KERNEL, &launch, args) }.expect("launch");
    println!("{report:?}, max co-resident {max}");
    assert_eq!((report.blocks, report.threads), (max, 256));
    assert!(report.gpu_time.as_nanos() > 0);
    let mut expected = host;
    expected.rotate_left(rounds as usize);
    assert!(gpu.download(&a).expect("download") == expected);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn scalars_reach_the_kernel_with_their_values() {
    let gpu = gpu();
    let mut out = gpu.zeros::<u64>(8).expect("zeros");
    let mut args = KernelArgs::new();
    args.slice_mut(&mut out);
    args.scalar(0xabu8);
    args.scalar(-3i16);
    args.scalar(true);
    args.scalar(-1.5f64);
    args.scalar(usize::MAX - 1);
    args.scalar(0.25f32);
    let launch = Launch::new().blocks(3);
    // SAFETY: the arguments match `scalars`' parameters.
    let report = unsafe { gpu.launch_kernel(&SCALARS_KERNEL, &launch, args) }.expect("launch");
    assert_eq!((report.blocks, report.threads), (3, 64));
    let out = gpu.download(&out).expect("download");
    assert_eq!(out[..7], [0xab, (-3i64) as u64, 1, (-1.5f64).to_bits(), u64::MAX - 1, u64::from(0.25f32.to_bits()), 8]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_out_of_bounds_read_is_reported_with_array_index_and_line() {
    let gpu = gpu();
    let a = gpu.upload(&[1.0f32; 5]).expect("upload");
    let mut b = gpu.zeros::<f32>(1).expect("zeros");
    for _ in 0..2 {
        let mut args = KernelArgs::new();
        args.slice(&a);
        args.slice_mut(&mut b);
        // SAFETY: the arguments match `overrun`'s parameters.
        let result = unsafe { gpu.launch_kernel(&OVERRUN_KERNEL, &Launch::new(), args) };
        let Err(Error::OutOfBounds { kernel, array, index, len, line }) = result else {
            panic!("expected OutOfBounds, got {result:?}");
        };
        assert_eq!((kernel.as_str(), array.as_str()), ("overrun", "a"));
        assert_eq!((index, len, line), (8, 5, 42));
    }
    assert_eq!(gpu.download(&b).expect("download"), [0.0], "the read yields 0");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn launches_that_cannot_be_co_resident_are_refused_before_running() {
    let gpu = gpu();
    let mut out = gpu.zeros::<u64>(8).expect("zeros");
    let launch = Launch::new().threads(128);
    let max = gpu.max_coresident_blocks(&SCALARS_KERNEL, &launch).expect("occupancy");
    let attempts = [
        (launch.clone().blocks(max + 1), "too many blocks"),
        (Launch::new().threads(4096), "too many threads"),
        (Launch::new().threads(0), "no threads"),
        (Launch::new().blocks(0), "no blocks"),
    ];
    for (launch, what) in attempts {
        let mut args = KernelArgs::new();
        args.slice_mut(&mut out);
        for _ in 0..6 {
            args.scalar(0u64);
        }
        // SAFETY: the arguments match `scalars`' parameters in size.
        let result = unsafe { gpu.launch_kernel(&SCALARS_KERNEL, &launch, args) };
        let error = result.expect_err(what);
        println!("{what}: {error}");
        match what {
            "too many blocks" => assert!(
                matches!(error, Error::GridTooLarge { requested, max: m, .. } if requested == max + 1 && m == max)
            ),
            "no blocks" => assert!(matches!(error, Error::EmptyGrid { .. })),
            _ => assert!(matches!(error, Error::InvalidBlockSize { .. })),
        }
    }
}

/// Each phase, one thread of every block (a different one each phase) writes a value derived
/// from the phase into the block's slot; after the barrier every block checks every slot. Two
/// slot arrays alternate, so a block may check phase p while faster blocks already write
/// phase p + 1. Mismatches are counted in `errors[0]`; the first is described in
/// `errors[1..5]` (phase, checking block, slot, value seen).
const PHASES: &str = r#"
__device__ __forceinline__ u32 phase_value(u32 phase, u32 block) { return phase * 65536u + block; }

extern "C" __global__ void __launch_bounds__(GSYNC_BLOCK_SIZE) phases(
    u32* __restrict__ slots, unsigned long long slots_len, u32* __restrict__ errors,
    unsigned long long errors_len, u32 rounds, bool check,
    u32* __restrict__ gsync_barrier_state, gsync_status_t* __restrict__ gsync_status, const gsync_next_launch_t gsync_next_launch) {
    gsync::prepare_next_launch(gsync_next_launch);
    gsync_barrier_t gsync_barrier = gsync_barrier_begin(gsync_barrier_state);
    const u32 blocks = gridDim.x;
    for (u32 phase = 1; phase <= rounds; ++phase) {
        u32* slot = slots + (phase & 1u) * blocks;
        if (threadIdx.x == phase % GSYNC_BLOCK_SIZE) slot[blockIdx.x] = phase_value(phase, blockIdx.x);
        gsync_grid_sync(gsync_barrier, gsync_status);
        if (!check) continue;
        for (u32 b = threadIdx.x; b < blocks; b += GSYNC_BLOCK_SIZE) {
            const u32 seen = slot[b];
            if (seen != phase_value(phase, b) && atomicAdd(&errors[0], 1u) == 0u) {
                errors[1] = phase;
                errors[2] = blockIdx.x;
                errors[3] = b;
                errors[4] = seen;
            }
        }
    }
}
"#;

static PHASES_KERNEL: KernelSpec = KernelSpec {
    name: "phases",
    symbol: "phases",
    rust_signature: "fn phases(slots: &mut [u32], errors: &mut [u32], rounds: u32, check: bool)",
    checked_body: PHASES,
    unchecked_body: PHASES,
    bounds_checks: false,
    profile: false,
    arrays: &["slots", "errors"],
    grid_syncs: 1,
    default_threads: 0,
    blocks_per_sm: 0,
    split: SplitSpec::NONE,
    assertions: &[],
    axes: Axes::NONE,
    refused_block_sizes: &[],
};

/// The device barriers, and Auto, which becomes one of them.
fn device_barriers() -> impl Iterator<Item = Barrier> {
    Barrier::DEVICE.iter().copied().chain([Barrier::Auto])
}

/// Runs `phases` and returns the report and the error words.
fn run_phases(
    gpu: &Gpu,
    launch: &Launch,
    blocks: u32,
    rounds: u32,
    check: bool,
) -> gsync_runtime::Result<(Duration, [u32; 5])> {
    let mut slots = gpu.zeros::<u32>(2 * blocks as usize)?;
    let mut errors = gpu.zeros::<u32>(5)?;
    let mut args = KernelArgs::new();
    args.slice_mut(&mut slots);
    args.slice_mut(&mut errors);
    args.scalar(rounds);
    args.scalar(check);
    // SAFETY: the arguments match `phases`' parameters.
    let report = unsafe { gpu.launch_kernel(&PHASES_KERNEL, launch, args) }?;
    let errors = gpu.download(&errors)?;
    Ok((report.gpu_time, [errors[0], errors[1], errors[2], errors[3], errors[4]]))
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_device_barrier_keeps_ten_thousand_phases_apart_on_every_grid() {
    let gpu = gpu();
    let rounds = 10_000;
    println!("{:?}", gpu.info());
    println!("{:<12} {:>6} {:>7} {:>12}", "barrier", "blocks", "threads", "us/barrier");
    for threads in [32, 256, 1024] {
        for barrier in device_barriers() {
            let launch = Launch::new().threads(threads).barrier(barrier);
            let max = gpu.max_coresident_blocks(&PHASES_KERNEL, &launch).expect("occupancy");
            for blocks in [7, 33, gpu.info().sm_count, max] {
                let launch = launch.clone().blocks(blocks);
                if barrier == Barrier::Lfs && blocks > threads {
                    let error = run_phases(&gpu, &launch, blocks, rounds, true).expect_err("over the LFS limit");
                    assert!(matches!(error, Error::BarrierBlockLimit { max, .. } if max == threads), "{error}");
                    continue;
                }
                let (_, errors) = run_phases(&gpu, &launch, blocks, rounds, true)
                    .unwrap_or_else(|error| panic!("{barrier}, {blocks} x {threads}: {error}"));
                assert_eq!(errors, [0; 5], "{barrier}, {blocks} x {threads}: [count, phase, block, slot, seen]");
                let (time, _) = run_phases(&gpu, &launch, blocks, rounds, false).expect("timing run");
                let per_barrier = time.as_secs_f64() * 1e6 / f64::from(rounds);
                println!("{:<12} {blocks:>6} {threads:>7} {per_barrier:>12.2}", barrier.to_string());
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_profiled_launch_of_a_kernel_without_profile_hooks_runs_and_reports_no_profile() {
    let gpu = gpu();
    let blocks = 7;
    let mut slots = gpu.zeros::<u32>(2 * blocks as usize).expect("zeros");
    let mut errors = gpu.zeros::<u32>(5).expect("zeros");
    let mut args = KernelArgs::new();
    args.slice_mut(&mut slots);
    args.slice_mut(&mut errors);
    args.scalar(100u32);
    args.scalar(true);
    let launch = Launch::new().blocks(blocks).threads(64).barrier(Barrier::Lbs).profile(true);
    // SAFETY: the arguments match `phases`' parameters; the profile's trailing two are the
    // runtime's, and a kernel that declares none ignores them.
    let report = unsafe { gpu.launch_kernel(&PHASES_KERNEL, &launch, args) }.expect("the launch runs");
    assert_eq!(gpu.download(&errors).expect("download"), [0; 5]);
    assert!(report.profile.is_none(), "a hand-written kernel records nothing: {:?}", report.profile);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn ilbs_works_with_any_group_count_from_one_to_the_block_count() {
    let gpu = gpu();
    let blocks = 2 * gpu.info().sm_count;
    for groups in [1, 2, 3, 7, blocks - 1, blocks] {
        let launch = Launch::new().threads(64).blocks(blocks).barrier(Barrier::Ilbs { groups: Some(groups) });
        let (_, errors) = run_phases(&gpu, &launch, blocks, 2_000, true).unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(errors, [0; 5], "{groups} groups");
    }
    let launch = Launch::new().blocks(blocks).barrier(Barrier::Ilbs { groups: Some(blocks + 1) });
    let error = run_phases(&gpu, &launch, blocks, 1, true).expect_err("more groups than blocks");
    assert!(matches!(error, Error::InvalidBarrier { .. }), "{error}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn ulfs_spans_a_three_level_tree_of_one_warp_blocks() {
    let gpu = gpu();
    let launch = Launch::new().threads(32).barrier(Barrier::Ulfs);
    let max = gpu.max_coresident_blocks(&PHASES_KERNEL, &launch).expect("occupancy");
    println!("{max} co-resident blocks of 32 threads");
    // More than 32 * 32 blocks needs a level of slots above the groups of groups.
    assert!(max > 32 * 32, "this GPU cannot hold a three-level ULFS tree");
    let (_, errors) = run_phases(&gpu, &launch.blocks(max), max, 10_000, true).expect("launch");
    assert_eq!(errors, [0; 5]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_impossible_grid_times_out_in_about_the_limit_and_the_next_launch_works() {
    let gpu = gpu();
    let limit = Duration::from_millis(300);
    for barrier in [Barrier::Lbs, Barrier::Lfs, Barrier::Ilbs { groups: None }, Barrier::Ulfs, Barrier::Relay] {
        // LFS needs at most one block per thread, so it gets the largest block.
        let threads = if barrier == Barrier::Lfs { 1024 } else { 256 };
        let launch = Launch::new().threads(threads).barrier(barrier).watchdog(Some(limit));
        let max = gpu.max_coresident_blocks(&PHASES_KERNEL, &launch).expect("occupancy (and compiles)");
        let blocks = if barrier == Barrier::Lfs { threads } else { 4 * max };
        assert!(blocks > max, "{barrier}: {blocks} blocks fit");
        let mut slots = gpu.zeros::<u32>(2 * blocks as usize).expect("zeros");
        let mut errors = gpu.zeros::<u32>(5).expect("zeros");
        let mut args = KernelArgs::new();
        args.slice_mut(&mut slots);
        args.slice_mut(&mut errors);
        args.scalar(3u32);
        args.scalar(false);
        let started = Instant::now();
        // SAFETY: the arguments match `phases`' parameters; the watchdog is on.
        let result = unsafe { gpu.launch_kernel_oversubscribed(&PHASES_KERNEL, &launch.clone().blocks(blocks), args) };
        let waited = started.elapsed();
        println!("{barrier}: {blocks} blocks (max {max}) gave up after {waited:?}");
        let error = result.expect_err("an impossible grid cannot pass a barrier");
        println!("{error}");
        let Error::BarrierTimeout { barrier: name, phase, block, limit: reported, .. } = &error else {
            panic!("{barrier}: expected BarrierTimeout, got {error}");
        };
        assert_eq!((name.as_str(), *phase, *reported), (barrier.to_string().as_str(), 1, limit));
        assert!(*block < blocks);
        assert!(waited < 2 * limit, "{barrier}: {waited:?} for a limit of {limit:?}");
        // The runtime cleaned the barrier state: a possible grid runs right after.
        let (_, errors) = run_phases(&gpu, &launch.clone().blocks(max.min(threads)), max.min(threads), 1_000, true)
            .unwrap_or_else(|error| panic!("{barrier} after a timeout: {error}"));
        assert_eq!(errors, [0; 5]);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_driver_refuses_a_cooperative_grid_that_cannot_be_co_resident() {
    let gpu = gpu();
    let launch = Launch::new().threads(256).barrier(Barrier::Cooperative);
    let max = gpu.max_coresident_blocks(&PHASES_KERNEL, &launch).expect("occupancy");
    let mut slots = gpu.zeros::<u32>(2 * (max + 1) as usize).expect("zeros");
    let mut errors = gpu.zeros::<u32>(5).expect("zeros");
    let mut args = KernelArgs::new();
    args.slice_mut(&mut slots);
    args.slice_mut(&mut errors);
    args.scalar(1u32);
    args.scalar(false);
    // SAFETY: the arguments match `phases`' parameters; the driver refuses the launch.
    let result = unsafe { gpu.launch_kernel_oversubscribed(&PHASES_KERNEL, &launch.blocks(max + 1), args) };
    let error = result.expect_err("too large for a cooperative launch");
    assert!(matches!(error, Error::Driver { .. }), "{error}");
    // The refusal leaves the GPU usable.
    let (_, errors) = run_phases(&gpu, &Launch::new().blocks(4), 4, 10, true).expect("launch");
    assert_eq!(errors, [0; 5]);
}

/// A split kernel: `count_down` decrements `counter[0]` and adds 1 to every element of
/// `data` per round, while the host's `while counter[0] != 0` drives it; `finish` doubles.
const COUNT_DOWN: &str = r#"
extern "C" __global__ void __launch_bounds__(GSYNC_BLOCK_SIZE) count_down_segment_0(
    u32* __restrict__ data, unsigned long long data_len, u32* __restrict__ counter,
    unsigned long long counter_len, u32* __restrict__ gsync_barrier_state,
    gsync_status_t* __restrict__ gsync_status, const gsync_next_launch_t gsync_next_launch) {
    gsync::prepare_next_launch(gsync_next_launch);
    const u64 i = (u64)blockIdx.x * GSYNC_BLOCK_SIZE + threadIdx.x;
    if (i < data_len) data[i] += 1u;
    if (i == 0) counter[0] -= 1u;
}
extern "C" __global__ void __launch_bounds__(GSYNC_BLOCK_SIZE) count_down_segment_1(
    u32* __restrict__ data, unsigned long long data_len, u32* __restrict__ counter,
    unsigned long long counter_len, const u32 factor, u32* __restrict__ gsync_barrier_state,
    gsync_status_t* __restrict__ gsync_status, const gsync_next_launch_t gsync_next_launch) {
    gsync::prepare_next_launch(gsync_next_launch);
    const u64 i = (u64)blockIdx.x * GSYNC_BLOCK_SIZE + threadIdx.x;
    if (i < data_len) data[i] *= factor;
}
"#;

static COUNT_DOWN_KERNEL: KernelSpec = KernelSpec {
    name: "count_down",
    symbol: "count_down",
    rust_signature: "fn count_down(data: &mut [u32], counter: &mut [u32])",
    checked_body: "",
    unchecked_body: "",
    bounds_checks: false,
    profile: false,
    arrays: &["data", "counter"],
    grid_syncs: 2,
    default_threads: 128,
    blocks_per_sm: 0,
    split: SplitSpec {
        checked_body: COUNT_DOWN,
        unchecked_body: COUNT_DOWN,
        segments: &["count_down_segment_0", "count_down_segment_1"],
        error: None,
        reads_device: true,
    },
    assertions: &[],
    axes: Axes::NONE,
    refused_block_sizes: &[],
};

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_split_kernel_runs_segment_by_segment_under_host_control_flow() {
    let gpu = gpu();
    let n = 100_000usize;
    let mut data = gpu.zeros::<u32>(n).expect("zeros");
    let mut counter = gpu.upload(&[25u32]).expect("upload");
    let launch = Launch::new().barrier(Barrier::MultiLaunch).blocks(n.div_ceil(128) as u32);
    let mut run = gpu.begin_split(&COUNT_DOWN_KERNEL, &launch, &[]).expect("begin");
    assert_eq!((run.blocks(), run.threads()), (n.div_ceil(128) as u32, 128));
    let mut rounds = 0;
    while run.read(&counter, 0, "counter", 3).expect("read") != 0 {
        let mut args = KernelArgs::new();
        args.slice_mut(&mut data);
        args.slice_mut(&mut counter);
        // SAFETY: the arguments match segment 0's parameters.
        unsafe { run.launch(0, args) }.expect("segment 0");
        rounds += 1;
    }
    let mut args = KernelArgs::new();
    args.slice_mut(&mut data);
    args.slice_mut(&mut counter);
    args.scalar(2u32);
    // SAFETY: the arguments match segment 1's parameters.
    unsafe { run.launch(1, args) }.expect("segment 1");
    let report = run.finish().expect("finish");
    println!("{rounds} rounds: {report:?}");
    assert_eq!(rounds, 25);
    assert_eq!(report.barrier, Barrier::MultiLaunch);
    assert!(report.gpu_time > Duration::ZERO);
    assert!(gpu.download(&data).expect("download").iter().all(|&x| x == 50));

    let mut run = gpu.begin_split(&COUNT_DOWN_KERNEL, &launch, &[]).expect("begin");
    let error = run.read(&counter, 1, "counter", 9).expect_err("out of bounds");
    assert!(matches!(error, Error::OutOfBounds { index: 1, len: 1, line: 9, .. }), "{error}");
    drop(run);

    let default =
        gpu.begin_split(&COUNT_DOWN_KERNEL, &Launch::new().barrier(Barrier::MultiLaunch), &[]).expect("begin");
    let max = gpu.max_coresident_blocks(&COUNT_DOWN_KERNEL, &Launch::new().barrier(Barrier::MultiLaunch)).expect("max");
    assert_eq!(
        default.blocks(),
        max,
        "the default grid is the co-resident maximum of the segment holding the fewest blocks"
    );
    drop(default);

    let unsplit = KernelSpec {
        split: SplitSpec { error: Some("`x` (line 4) lives across a grid_sync()"), ..COUNT_DOWN_KERNEL.split },
        ..COUNT_DOWN_KERNEL
    };
    let error = gpu.begin_split(&unsplit, &launch, &[]).expect_err("cannot split");
    assert!(matches!(&error, Error::CannotSplit { reason, .. } if reason.contains("line 4")), "{error}");
}

/// Traps in block 0 before the first `grid_sync()`: a sticky error, after which the driver
/// fails every call on the context.
const TRAP: &str = r#"
extern "C" __global__ void __launch_bounds__(GSYNC_BLOCK_SIZE) trap(
    u32* __restrict__ out, unsigned long long out_len,
    u32* __restrict__ gsync_barrier_state, gsync_status_t* __restrict__ gsync_status, const gsync_next_launch_t gsync_next_launch) {
    gsync::prepare_next_launch(gsync_next_launch);
    gsync_barrier_t gsync_barrier = gsync_barrier_begin(gsync_barrier_state);
    if (blockIdx.x == 0 && threadIdx.x == 0) asm volatile("trap;");
    gsync_grid_sync(gsync_barrier, gsync_status);
    if (threadIdx.x == 0 && blockIdx.x < out_len) out[blockIdx.x] = 1u;
}
"#;

static TRAP_KERNEL: KernelSpec = KernelSpec {
    name: "trap",
    symbol: "trap",
    rust_signature: "fn trap(out: &mut [u32])",
    checked_body: TRAP,
    unchecked_body: TRAP,
    bounds_checks: false,
    profile: false,
    arrays: &["out"],
    grid_syncs: 1,
    default_threads: 32,
    blocks_per_sm: 0,
    split: SplitSpec::NONE,
    assertions: &[],
    axes: Axes::NONE,
    refused_block_sizes: &[],
};

/// Set in the child process that runs the context-loss test, which must not share its
/// context with the other tests of this binary.
const LOSE_CONTEXT: &str = "GSYNC_TEST_LOSE_CONTEXT";

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_sticky_error_loses_the_context_and_every_later_call_and_new_gpu_says_which_launch() {
    if std::env::var_os(LOSE_CONTEXT).is_none() {
        // The primary context is shared by the whole process: lose it in a process of its own.
        let name = "a_sticky_error_loses_the_context_and_every_later_call_and_new_gpu_says_which_launch";
        let status = std::process::Command::new(std::env::current_exe().expect("this test binary"))
            .args(["--exact", name, "--ignored", "--nocapture", "--test-threads=1"])
            .env(LOSE_CONTEXT, "1")
            .status()
            .expect("run the test in a child process");
        assert!(status.success(), "the child process failed: {status}");
        return;
    }
    let gpu = gpu();
    let mut out = gpu.zeros::<u32>(4).expect("zeros");
    let launch = Launch::new().blocks(2).barrier(Barrier::Lbs);
    let mut args = KernelArgs::new();
    args.slice_mut(&mut out);
    // SAFETY: the arguments match `trap`'s parameters; the kernel traps on purpose.
    let first = unsafe { gpu.launch_kernel(&TRAP_KERNEL, &launch, args) }.expect_err("the kernel traps");
    println!("{first}");
    let Error::ContextLost { gpu: ordinal, launch: lost_by, .. } = &first else {
        panic!("expected ContextLost, got {first}");
    };
    assert_eq!(*ordinal, 0);
    assert_eq!(lost_by, "kernel `trap` (2 blocks x 32 threads, barrier lbs)");
    let message = first.to_string();
    assert!(message.contains("restart the process"), "{message}");

    // Every later call on this Gpu says the same: an allocation, a download, the occupancy
    // of a kernel not loaded yet, a launch, a split run.
    let same = |error: Error, what: &str| assert_eq!(error.to_string(), message, "{what}");
    same(gpu.zeros::<u32>(1 << 20).expect_err("allocation"), "allocation");
    same(gpu.download(&out).expect_err("download"), "download");
    same(gpu.max_coresident_blocks(&SCALARS_KERNEL, &Launch::new()).expect_err("occupancy"), "occupancy");
    let mut args = KernelArgs::new();
    args.slice_mut(&mut out);
    // SAFETY: the arguments match `trap`'s parameters.
    same(unsafe { gpu.launch_kernel(&TRAP_KERNEL, &launch, args) }.expect_err("launch"), "launch");
    let split = Launch::new().barrier(Barrier::MultiLaunch);
    same(gpu.begin_split(&COUNT_DOWN_KERNEL, &split, &[]).expect_err("split run"), "split run");

    // A second Gpu of the device while the first still holds the context: lost as well.
    let second = Gpu::cuda(0).expect_err("the context is still lost");
    assert!(matches!(&second, Error::ContextLost { launch, .. } if launch.contains("kernel `trap`")), "{second}");

    // Nor does dropping everything bring it back: on an H100 with driver 580 the driver keeps
    // the error for the process, as CUDA documents for these errors, and a new Gpu says so.
    drop(out);
    drop(gpu);
    let reopened = Gpu::cuda(0).expect_err("the driver keeps the error for the process");
    assert!(matches!(&reopened, Error::ContextLost { launch, .. } if launch.contains("kernel `trap`")), "{reopened}");
    let fallback = Gpu::new(0).expect_err("Gpu::new reports the loss instead of falling back to the emulator");
    assert!(matches!(fallback, Error::ContextLost { .. }), "{fallback}");
}

/// 64 KiB of static shared memory: more than any GPU gives one block without opting in.
const BIG_TILE: &str = r#"
extern "C" __global__ void __launch_bounds__(GSYNC_BLOCK_SIZE) big_tile(
    f32* __restrict__ out, unsigned long long out_len,
    u32* __restrict__ gsync_barrier_state, gsync_status_t* __restrict__ gsync_status, const gsync_next_launch_t gsync_next_launch) {
    gsync::prepare_next_launch(gsync_next_launch);
    __shared__ f32 tile[16384];
    gsync_barrier_t gsync_barrier = gsync_barrier_begin(gsync_barrier_state);
    tile[threadIdx.x] = 1.0f;
    __syncthreads();
    gsync_grid_sync(gsync_barrier, gsync_status);
    if (threadIdx.x < out_len) out[threadIdx.x] = tile[(threadIdx.x + 1u) % GSYNC_BLOCK_SIZE];
}
"#;

static BIG_TILE_KERNEL: KernelSpec = KernelSpec {
    name: "big_tile",
    symbol: "big_tile",
    rust_signature: "fn big_tile(out: &mut [f32])",
    checked_body: BIG_TILE,
    unchecked_body: BIG_TILE,
    bounds_checks: false,
    profile: false,
    arrays: &["out"],
    grid_syncs: 1,
    default_threads: 64,
    blocks_per_sm: 0,
    split: SplitSpec::NONE,
    assertions: &[],
    axes: Axes::NONE,
    refused_block_sizes: &[],
};

#[test]
#[ignore = "needs a CUDA GPU"]
fn too_much_shared_memory_is_a_typed_resource_error_at_launch() {
    let gpu = gpu();
    let mut out = gpu.zeros::<f32>(64).expect("zeros");
    let mut args = KernelArgs::new();
    args.slice_mut(&mut out);
    let launch = Launch::new().blocks(1).barrier(Barrier::Lbs);
    // SAFETY: the arguments match `big_tile`'s parameters; it is refused before running.
    let error = unsafe { gpu.launch_kernel(&BIG_TILE_KERNEL, &launch, args) }.expect_err("too much shared memory");
    println!("{error}");
    assert!(
        matches!(&error, Error::KernelResources { resource: gsync_runtime::Resource::SharedMemory, .. }),
        "{error}"
    );
    // The GPU is still usable.
    let (_, errors) = run_phases(&gpu, &Launch::new().blocks(2), 2, 5, true).expect("launch");
    assert_eq!(errors, [0; 5]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn grids_beyond_the_hardware_limit_are_typed_errors_stating_it() {
    let gpu = gpu();
    let max_grid = gpu.info().max_blocks_per_grid;
    assert_eq!(max_grid, i32::MAX as u32, "gridDim.x of every GPU since compute capability 3.0");
    let mut out = gpu.zeros::<u64>(8).expect("zeros");
    for blocks in [u32::MAX, max_grid + 1] {
        let mut args = KernelArgs::new();
        args.slice_mut(&mut out);
        for _ in 0..6 {
            args.scalar(0u64);
        }
        let launch = Launch::new().blocks(blocks).barrier(Barrier::Ulfs).watchdog(Some(Duration::from_millis(100)));
        // SAFETY: the arguments match `scalars`' parameters in size; the grid is refused.
        let error = unsafe { gpu.launch_kernel_oversubscribed(&SCALARS_KERNEL, &launch, args) }.expect_err("too large");
        println!("{error}");
        assert!(
            matches!(error, Error::TooManyBlocks { requested, max, .. } if requested == blocks && max == max_grid),
            "{error}"
        );
        let split = Launch::new().blocks(blocks).barrier(Barrier::MultiLaunch);
        let error = gpu.begin_split(&COUNT_DOWN_KERNEL, &split, &[]).expect_err("too large");
        assert!(matches!(error, Error::TooManyBlocks { max, .. } if max == max_grid), "{error}");
        // A fused launch refuses it earlier, for co-residency.
        let fused = Launch::new().blocks(blocks);
        let mut args = KernelArgs::new();
        args.slice_mut(&mut out);
        for _ in 0..6 {
            args.scalar(0u64);
        }
        // SAFETY: as above.
        let error = unsafe { gpu.launch_kernel(&SCALARS_KERNEL, &fused, args) }.expect_err("not co-resident");
        assert!(matches!(error, Error::GridTooLarge { .. }), "{error}");
    }
    // A million blocks, one launch per phase: a grid the GPU runs.
    let n = 1_000_000usize * 128;
    let mut data = gpu.zeros::<u32>(n).expect("zeros");
    let mut counter = gpu.upload(&[1u32]).expect("upload");
    let split = Launch::new().blocks(1_000_000).barrier(Barrier::MultiLaunch);
    let mut run = gpu.begin_split(&COUNT_DOWN_KERNEL, &split, &[]).expect("a million blocks");
    let mut args = KernelArgs::new();
    args.slice_mut(&mut data);
    args.slice_mut(&mut counter);
    // SAFETY: the arguments match segment 0's parameters.
    unsafe { run.launch(0, args) }.expect("segment 0");
    run.finish().expect("finish");
    assert!(gpu.download(&data).expect("download").iter().all(|&x| x == 1));
}
