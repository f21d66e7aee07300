//! The launch path on a real GPU, with hand-written kernels shaped like `#[grid_phases]`
//! output. Ignored by default; run with `cargo test -p gsync-runtime -- --ignored` on a
//! machine with an NVIDIA GPU and NVRTC.

use gsync_runtime::{Error, Gpu, KernelArgs, KernelSpec, Launch};

/// Rotates `a` left by one element per round, through `b`. Every round reads elements other
/// blocks wrote in the round before, so it is only right if the grid barrier holds.
const ROTATE: &str = r#"
extern "C" __global__ void __launch_bounds__(GSYNC_BLOCK_SIZE) rotate(
    u32* __restrict__ a, unsigned long long a_len, u32* __restrict__ b, unsigned long long b_len,
    u32 rounds, unsigned int* gsync_barrier_state, gsync_status_t* gsync_status) {
    const u64 first = (u64)blockIdx.x * GSYNC_BLOCK_SIZE + threadIdx.x;
    const u64 stride = (u64)gridDim.x * GSYNC_BLOCK_SIZE;
    for (u32 round = 0; round < rounds; ++round) {
        for (u64 i = first; i < a_len; i += stride) b[i] = a[(i + 1) % a_len];
        gsync_grid_sync(gsync_barrier_state, gsync_status);
        for (u64 i = first; i < b_len; i += stride) a[i] = b[i];
        gsync_grid_sync(gsync_barrier_state, gsync_status);
    }
}
"#;

static ROTATE_KERNEL: KernelSpec = KernelSpec {
    name: "rotate",
    rust_signature: "fn rotate(a: &mut [u32], b: &mut [u32], rounds: u32)",
    checked_body: ROTATE,
    unchecked_body: ROTATE,
    bounds_checks: false,
    arrays: &["a", "b"],
    grid_syncs: 2,
    default_threads: 0,
};

/// Writes each scalar parameter into `out`, widened to 64 bits.
const SCALARS: &str = r#"
extern "C" __global__ void __launch_bounds__(GSYNC_BLOCK_SIZE) scalars(
    u64* __restrict__ out, unsigned long long out_len, u8 x, i16 y, bool z, f64 w, usize v, f32 f,
    unsigned int* gsync_barrier_state, gsync_status_t* gsync_status) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        out[0] = x;
        out[1] = (u64)(i64)y;
        out[2] = z ? 1 : 0;
        out[3] = (u64)__double_as_longlong(w);
        out[4] = v;
        out[5] = (u64)__float_as_uint(f);
        out[6] = out_len;
    }
    gsync_grid_sync(gsync_barrier_state, gsync_status);
}
"#;

static SCALARS_KERNEL: KernelSpec = KernelSpec {
    name: "scalars",
    rust_signature: "fn scalars(out: &mut [u64], x: u8, y: i16, z: bool, w: f64, v: usize, f: f32)",
    checked_body: SCALARS,
    unchecked_body: SCALARS,
    bounds_checks: false,
    arrays: &["out"],
    grid_syncs: 1,
    default_threads: 64,
};

/// Reads `a[a_len + 3]` through the prelude's bounds check, as a debug build would.
const OVERRUN: &str = r#"
extern "C" __global__ void __launch_bounds__(GSYNC_BLOCK_SIZE) overrun(
    const f32* __restrict__ a, unsigned long long a_len, f32* __restrict__ b,
    unsigned long long b_len, unsigned int* gsync_barrier_state, gsync_status_t* gsync_status) {
    gsync_grid_sync(gsync_barrier_state, gsync_status);
    if (blockIdx.x == 0 && threadIdx.x == 0 && gsync::in_bounds(0, b_len, gsync_status, 1u, 7u)) {
        b[0] = gsync::load(a, a_len, a_len + 3, gsync_status, 0u, 42u);
    }
}
"#;

static OVERRUN_KERNEL: KernelSpec = KernelSpec {
    name: "overrun",
    rust_signature: "fn overrun(a: &[f32], b: &mut [f32])",
    checked_body: OVERRUN,
    unchecked_body: OVERRUN,
    bounds_checks: true,
    arrays: &["a", "b"],
    grid_syncs: 1,
    default_threads: 0,
};

fn gpu() -> Gpu {
    Gpu::new(0).unwrap_or_else(|error| panic!("{error}"))
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
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
    let zeros = gpu.zeros::<i16>(33).expect("zeros");
    assert_eq!(gpu.download(&zeros).expect("download"), vec![0i16; 33]);
    let empty = gpu.upload::<u8>(&[]).expect("empty upload");
    assert!(empty.is_empty());
    assert_eq!(gpu.download(&empty).expect("empty download"), Vec::<u8>::new());
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_cooperative_launch_keeps_phases_apart_across_the_whole_grid() {
    let gpu = gpu();
    let info = gpu.info().clone();
    println!("{info:?}");
    let n = 1 << 20;
    let host: Vec<u32> = (0..n).collect();
    let mut a = gpu.upload(&host).expect("upload a");
    let mut b = gpu.zeros::<u32>(n as usize).expect("zeros b");
    let rounds = 37u32;
    let launch = Launch::new();
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
#[ignore = "needs an NVIDIA GPU"]
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
#[ignore = "needs an NVIDIA GPU"]
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
#[ignore = "needs an NVIDIA GPU"]
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
