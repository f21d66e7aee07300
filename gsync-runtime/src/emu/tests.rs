//! Hand-written emulated kernels, shaped like the code `#[grid_phases]` generates: each block
//! gets a `Memory` value holding views of the launch's buffers and its own shared arrays, and
//! each thread is an `async move` block borrowing `ctx` and `memory`.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use crate::barrier::Barrier;
use crate::buffer::DeviceBuffer;
use crate::core::args::KernelArgs;
use crate::core::dims::Axes;
use crate::core::error::{Error, Result};
use crate::core::kernel::{KernelSpec, SplitSpec};
use crate::core::launch::{Launch, LaunchReport};
use crate::core::profile::ProfileClock;
use crate::emu::{EmuSlice, Shuffle, ThreadCtx};
use crate::gpu::Gpu;

/// A kernel description with no CUDA, for the emulator only.
const fn spec(name: &'static str, arrays: &'static [&'static str]) -> KernelSpec {
    KernelSpec {
        name,
        symbol: name,
        rust_signature: "",
        checked_body: "",
        unchecked_body: "",
        bounds_checks: true,
        profile: false,
        arrays,
        grid_syncs: 1,
        default_threads: 0,
        blocks_per_sm: 0,
        split: SplitSpec::NONE,
        assertions: &[],
        axes: Axes::NONE,
        refused_block_sizes: &[],
    }
}

/// The grid-stride indices of `ctx`'s thread below `n`, with a wide counter as on the device.
fn grid_stride(ctx: &ThreadCtx<'_>, n: usize) -> impl Iterator<Item = u64> {
    (u64::from(ctx.global_id())..n as u64).step_by(ctx.grid_size() as usize)
}

static ROTATE: KernelSpec = spec("rotate", &["a", "b"]);

/// Rotates `a` left by one element per round, through `b`. Every round reads elements other
/// blocks wrote in the round before, so it is only right if the grid barrier holds.
fn rotate(
    gpu: &Gpu,
    launch: &Launch,
    a: &mut DeviceBuffer<u32>,
    b: &mut DeviceBuffer<u32>,
    rounds: u32,
) -> Result<LaunchReport> {
    let a: &EmuSlice<u32> = a.emu()?;
    let b: &EmuSlice<u32> = b.emu()?;
    struct Memory<'g> {
        a: &'g EmuSlice<u32>,
        b: &'g EmuSlice<u32>,
        _kernel: PhantomData<&'g ()>,
    }
    gpu.emulate(
        &ROTATE,
        launch,
        || Memory { a, b, _kernel: PhantomData },
        |ctx: &ThreadCtx<'_>, memory: &Memory<'_>| {
            Box::pin(async move {
                let n = memory.a.len();
                for _ in 0..rounds {
                    for i in grid_stride(ctx, n) {
                        let next = memory.a.load((i + 1) % n as u64, ctx, 0, 10);
                        memory.b.store(i, next, ctx, 1, 10);
                    }
                    ctx.grid_sync().await;
                    for i in grid_stride(ctx, n) {
                        memory.a.store(i, memory.b.load(i, ctx, 1, 12), ctx, 0, 12);
                    }
                    ctx.grid_sync().await;
                }
            })
        },
    )
}

#[test]
fn grid_stride_phases_see_every_block_s_writes_of_the_phase_before() {
    let gpu = Gpu::emulator();
    let input: Vec<u32> = (0..1000).map(|i| i * 7 + 1).collect();
    for (launch, rounds) in
        [(Launch::new().blocks(7).threads(32), 13), (Launch::new(), 3), (Launch::new().blocks(1), 5)]
    {
        let mut a = gpu.upload(&input).expect("upload");
        let mut b = gpu.zeros::<u32>(input.len()).expect("zeros");
        rotate(&gpu, &launch, &mut a, &mut b, rounds).expect("the launch runs");
        let mut expected = input.clone();
        expected.rotate_left(rounds as usize);
        assert_eq!(gpu.download(&a).expect("download"), expected, "{launch:?}");
    }
}

#[test]
fn a_profile_records_every_block_at_every_grid_sync_in_order() {
    let gpu = Gpu::emulator();
    let input: Vec<u32> = (0..500).collect();
    let rounds = 4;
    let run = |launch: &Launch| {
        let mut a = gpu.upload(&input).expect("upload");
        let mut b = gpu.zeros::<u32>(input.len()).expect("zeros");
        let report = rotate(&gpu, launch, &mut a, &mut b, rounds).expect("the launch runs");
        (report, gpu.download(&a).expect("download"))
    };
    let launch = Launch::new().blocks(5).threads(32);
    let (plain, expected) = run(&launch);
    assert!(plain.profile.is_none(), "no profile unless asked for");
    let (report, result) = run(&launch.clone().profile(true));
    assert_eq!(result, expected, "a profiled run computes the same");
    let profile = report.profile.expect("a profile");
    let grid_syncs = 2 * rounds as usize;
    assert_eq!((profile.blocks().len(), profile.phases().len()), (5, grid_syncs + 1));
    assert_eq!(profile.clock(), ProfileClock::HostWallTime);
    assert!(!profile.is_truncated());
    for block in profile.blocks() {
        assert_eq!((block.visits.len(), block.grid_syncs), (grid_syncs, grid_syncs as u64));
        let mut times = vec![block.start];
        times.extend(block.visits.iter().flat_map(|visit| [visit.arrive, visit.leave]));
        times.push(block.end);
        assert!(times.is_sorted(), "block {}: {times:?}", block.block);
    }
    for k in 0..grid_syncs {
        let last_arrival = profile.blocks().iter().map(|block| block.visits[k].arrive).max().unwrap();
        let first_leave = profile.blocks().iter().map(|block| block.visits[k].leave).min().unwrap();
        assert!(first_leave >= last_arrival, "grid_sync {k}: a block left before every block arrived");
    }
    assert_eq!(profile.total_span() + profile.total_barrier_latency(), profile.total());
    assert!(profile.total() <= report.gpu_time, "{:?} > {:?}", profile.total(), report.gpu_time);
    assert!(profile.phases().iter().all(|phase| phase.slowest_work <= profile.total()));
    assert!(profile.to_string().contains("5 blocks, 8 grid_sync() calls, 9 phases recorded"), "{profile}");
}

#[test]
fn a_profile_past_its_capacity_is_truncated_and_the_run_unharmed() {
    let gpu = Gpu::emulator();
    let input: Vec<u32> = (0..300).collect();
    let mut a = gpu.upload(&input).expect("upload");
    let mut b = gpu.zeros::<u32>(input.len()).expect("zeros");
    let launch = Launch::new().blocks(3).threads(32).profile(true).profile_phases(3);
    let report = rotate(&gpu, &launch, &mut a, &mut b, 5).expect("the launch runs");
    let mut expected = input.clone();
    expected.rotate_left(5);
    assert_eq!(gpu.download(&a).expect("download"), expected);
    let profile = report.profile.expect("a profile");
    assert!(profile.is_truncated());
    assert_eq!((profile.capacity(), profile.grid_syncs(), profile.phases().len()), (3, 10, 3));
    assert!(profile.blocks().iter().all(|block| block.visits.len() == 3));
    assert!(profile.unrecorded() > Duration::ZERO);
    assert_eq!(profile.total_span() + profile.total_barrier_latency() + profile.unrecorded(), profile.total());
    let none = Launch::new().blocks(3).threads(32).profile(true).profile_phases(0);
    let report = rotate(&gpu, &none, &mut a, &mut b, 1).expect("the launch runs");
    let profile = report.profile.expect("a profile");
    assert!(profile.is_truncated() && profile.phases().is_empty(), "{profile}");
}

static BLOCK_SUMS: KernelSpec = spec("block_sums", &["input", "sums", "total", "tile"]);

/// Each block sums its 128 elements in shared memory, halving with a `sync_block()` per step;
/// after a `grid_sync()`, thread 0 of block 0 adds up the block sums.
fn block_sums(
    gpu: &Gpu,
    input: &DeviceBuffer<u32>,
    sums: &mut DeviceBuffer<u32>,
    total: &mut DeviceBuffer<u64>,
) -> Result<LaunchReport> {
    let (input, sums, total) = (input.emu()?, sums.emu()?, total.emu()?);
    struct Memory<'g> {
        input: &'g EmuSlice<u32>,
        sums: &'g EmuSlice<u32>,
        total: &'g EmuSlice<u64>,
        tile: EmuSlice<u32>,
    }
    let launch = Launch::new().blocks(input.len().div_ceil(128) as u32).threads(128);
    gpu.emulate(
        &BLOCK_SUMS,
        &launch,
        || Memory { input, sums, total, tile: EmuSlice::zeroed(128) },
        |ctx: &ThreadCtx<'_>, memory: &Memory<'_>| {
            Box::pin(async move {
                let (t, i) = (u64::from(ctx.thread_idx()), u64::from(ctx.global_id()));
                let value = if i < memory.input.len() as u64 { memory.input.load(i, ctx, 0, 1) } else { 0 };
                memory.tile.store(t, value, ctx, 3, 2);
                ctx.sync_block().await;
                let mut stride = u64::from(ctx.block_dim() / 2);
                while stride > 0 {
                    if t < stride {
                        let sum = memory.tile.load(t, ctx, 3, 3).wrapping_add(memory.tile.load(t + stride, ctx, 3, 3));
                        memory.tile.store(t, sum, ctx, 3, 3);
                    }
                    ctx.sync_block().await;
                    stride /= 2;
                }
                if t == 0 {
                    memory.sums.store(u64::from(ctx.block_idx()), memory.tile.load(0, ctx, 3, 4), ctx, 1, 4);
                }
                ctx.grid_sync().await;
                if ctx.global_id() == 0 {
                    let mut sum = 0u64;
                    for block in 0..u64::from(ctx.grid_dim()) {
                        sum += u64::from(memory.sums.load(block, ctx, 1, 5));
                    }
                    memory.total.store(0, sum, ctx, 2, 5);
                }
            })
        },
    )
}

#[test]
fn a_shared_memory_reduction_with_sync_block_sums_each_block_and_the_grid() {
    let gpu = Gpu::emulator();
    let input: Vec<u32> = (0..1100u32).map(|i| i.wrapping_mul(2_654_435_761) >> 8).collect();
    let blocks = input.len().div_ceil(128);
    let device_input = gpu.upload(&input).expect("upload");
    let mut sums = gpu.zeros::<u32>(blocks).expect("zeros");
    let mut total = gpu.zeros::<u64>(1).expect("zeros");
    let report = block_sums(&gpu, &device_input, &mut sums, &mut total).expect("the launch runs");
    assert_eq!((report.blocks, report.threads), (blocks as u32, 128));
    let expected: Vec<u32> =
        input.chunks(128).map(|chunk| chunk.iter().fold(0u32, |a, &b| a.wrapping_add(b))).collect();
    assert_eq!(gpu.download(&sums).expect("download"), expected);
    let expected_total: u64 = expected.iter().map(|&sum| u64::from(sum)).sum();
    assert_eq!(gpu.download(&total).expect("download"), [expected_total]);
}

static SHUFFLES: KernelSpec = spec("shuffles", &["out", "sums"]);

/// Per thread: the four shuffles of `v = 3 * global_id + 1` (up 3, down 5, xor 17, idx 37)
/// into `out`, and a warp sum by xor butterfly of `f64`, `i64`, `bool` and `usize` values
/// into `sums`, through back-to-back shuffles.
fn shuffles(
    gpu: &Gpu,
    launch: &Launch,
    out: &mut DeviceBuffer<u32>,
    sums: &mut DeviceBuffer<f64>,
) -> Result<LaunchReport> {
    let (out, sums) = (out.emu()?, sums.emu()?);
    struct Memory<'g> {
        out: &'g EmuSlice<u32>,
        sums: &'g EmuSlice<f64>,
    }
    gpu.emulate(
        &SHUFFLES,
        launch,
        || Memory { out, sums },
        |ctx: &ThreadCtx<'_>, memory: &Memory<'_>| {
            Box::pin(async move {
                let id = u64::from(ctx.global_id());
                let v = ctx.global_id() * 3 + 1;
                let up = ctx.shuffle(Shuffle::Up, v, 3).await;
                let down = ctx.shuffle(Shuffle::Down, v, 5).await;
                let xor = ctx.shuffle(Shuffle::Xor, v, 17).await;
                let idx = ctx.shuffle(Shuffle::Idx, v, 37).await;
                for (k, value) in [up, down, xor, idx].into_iter().enumerate() {
                    memory.out.store(4 * id + k as u64, value, ctx, 0, 1);
                }
                let (mut float, mut signed, mut any, mut wide) =
                    (f64::from(v) * 0.5, -i64::from(v), v == 7, v as usize);
                let mut mask = 16;
                while mask > 0 {
                    float += ctx.shuffle(Shuffle::Xor, float, mask).await;
                    signed += ctx.shuffle(Shuffle::Xor, signed, mask).await;
                    any |= ctx.shuffle(Shuffle::Xor, any, mask).await;
                    wide += ctx.shuffle(Shuffle::Xor, wide, mask).await;
                    mask /= 2;
                }
                for (k, value) in [float, signed as f64, f64::from(u8::from(any)), wide as f64].into_iter().enumerate()
                {
                    memory.sums.store(4 * id + k as u64, value, ctx, 1, 2);
                }
            })
        },
    )
}

/// What lane `lane` of a warp of `lanes` lanes reads, by the CUDA semantics with width 32:
/// the source lane's value if it exists, else the own one.
fn shuffle_reference(values: &[u32], lane: usize, source: Option<usize>) -> u32 {
    source.filter(|&source| source < values.len()).map_or(values[lane], |source| values[source])
}

#[test]
fn shuffles_follow_cuda_semantics_in_full_and_partial_warps() {
    let gpu = Gpu::emulator();
    let (blocks, threads) = (2, 48);
    let total = blocks * threads;
    let mut out = gpu.zeros::<u32>(4 * total).expect("zeros");
    let mut sums = gpu.zeros::<f64>(4 * total).expect("zeros");
    shuffles(&gpu, &Launch::new().blocks(blocks as u32).threads(threads as u32), &mut out, &mut sums).expect("runs");
    let (out, sums) = (gpu.download(&out).expect("download"), gpu.download(&sums).expect("download"));
    for id in 0..total {
        let (block, thread) = (id / threads, id % threads);
        let (warp_start, lane) = (block * threads + thread / 32 * 32, thread % 32);
        let lanes = (threads - thread / 32 * 32).min(32);
        let values: Vec<u32> = (warp_start..warp_start + lanes).map(|id| id as u32 * 3 + 1).collect();
        let expected = [
            shuffle_reference(&values, lane, lane.checked_sub(3)),
            shuffle_reference(&values, lane, Some(lane + 5).filter(|&source| source < 32)),
            shuffle_reference(&values, lane, Some(lane ^ 17)),
            shuffle_reference(&values, lane, Some(37 % 32)),
        ];
        assert_eq!(out[4 * id..4 * id + 4], expected, "thread {thread} of block {block}");
        if lanes == 32 {
            let sum: u32 = values.iter().sum();
            let expected =
                [f64::from(sum) * 0.5, -f64::from(sum), f64::from(u8::from(values.contains(&7))), f64::from(sum)];
            assert_eq!(sums[4 * id..4 * id + 4], expected, "thread {thread} of block {block}");
        }
    }
}

static ATOMICS: KernelSpec = spec("atomics", &["ints", "floats", "small", "olds"]);

/// Every thread hits the same few elements with every atomic.
///
/// `ints`: 0 counter (add 1), 1 sum of -id (add), 2 min and 3 max of `id - 100`, 4 exchange
/// target, 5 compare-and-swap claim, 6 claim winners, 7 counter by compare-and-swap loop.
/// `floats`: 0 f32-exact sum of 0.5, as f64 bits in 1 the f64 sum of 0.25. `small`: u8 counter
/// that wraps, then min and max. `olds`: what each thread's exchange returned.
fn atomics(gpu: &Gpu, launch: &Launch, bufs: &mut AtomicBuffers) -> Result<LaunchReport> {
    let (ints, floats, wide, small, olds) =
        (bufs.ints.emu()?, bufs.floats.emu()?, bufs.wide.emu()?, bufs.small.emu()?, bufs.olds.emu()?);
    struct Memory<'g> {
        ints: &'g EmuSlice<i64>,
        floats: &'g EmuSlice<f32>,
        wide: &'g EmuSlice<f64>,
        small: &'g EmuSlice<u8>,
        olds: &'g EmuSlice<i64>,
    }
    gpu.emulate(
        &ATOMICS,
        launch,
        || Memory { ints, floats, wide, small, olds },
        |ctx: &ThreadCtx<'_>, m: &Memory<'_>| {
            Box::pin(async move {
                let id = i64::from(ctx.global_id());
                m.ints.atomic_add(0, 1, Relaxed, ctx, 0, 1);
                m.ints.atomic_add(1, -id, Relaxed, ctx, 0, 2);
                m.ints.atomic_min(2, id - 100, Relaxed, ctx, 0, 3);
                m.ints.atomic_max(3, id - 100, Relaxed, ctx, 0, 4);
                let old = m.ints.atomic_exch(4, id + 1, Relaxed, ctx, 0, 5);
                m.olds.store(id as u64, old, ctx, 3, 5);
                if m.ints.atomic_cas(5, 0, id + 1, Relaxed, ctx, 0, 6) == 0 {
                    m.ints.atomic_add(6, 1, Relaxed, ctx, 0, 6);
                }
                let mut seen = m.ints.load(7, ctx, 0, 7);
                loop {
                    let old = m.ints.atomic_cas(7, seen, seen + 1, Relaxed, ctx, 0, 7);
                    if old == seen {
                        break;
                    }
                    seen = old;
                }
                m.floats.atomic_add(0, 0.5, Relaxed, ctx, 1, 8);
                m.wide.atomic_add(0, 0.25, Relaxed, ctx, 2, 8);
                m.small.atomic_add(0, 1, Relaxed, ctx, 2, 9);
                ctx.grid_sync().await;
                m.small.atomic_min(1, m.small.load(0, ctx, 2, 10).wrapping_add(id as u8), Relaxed, ctx, 2, 10);
                m.small.atomic_max(2, id as u8, Relaxed, ctx, 2, 11);
            })
        },
    )
}

/// The buffers of [`atomics`].
struct AtomicBuffers {
    ints: DeviceBuffer<i64>,
    floats: DeviceBuffer<f32>,
    wide: DeviceBuffer<f64>,
    small: DeviceBuffer<u8>,
    olds: DeviceBuffer<i64>,
}

#[test]
fn atomics_from_many_threads_on_many_host_threads_lose_no_update() {
    let gpu = Gpu::emulator();
    let (blocks, threads) = (8u32, 96u32);
    let n = i64::from(blocks * threads);
    let mut bufs = AtomicBuffers {
        ints: gpu.upload(&[0, 0, i64::MAX, i64::MIN, 0, 0, 0, 0]).expect("upload"),
        floats: gpu.zeros(1).expect("zeros"),
        wide: gpu.zeros(1).expect("zeros"),
        small: gpu.upload(&[0, u8::MAX, 0]).expect("upload"),
        olds: gpu.zeros(n as usize).expect("zeros"),
    };
    atomics(&gpu, &Launch::new().blocks(blocks).threads(threads), &mut bufs).expect("the launch runs");
    let ints = gpu.download(&bufs.ints).expect("download");
    assert_eq!(ints[..4], [n, -(n * (n - 1) / 2), -100, n - 1 - 100]);
    assert_eq!(ints[6], 1, "exactly one compare-and-swap claims the slot");
    assert!((1..=n).contains(&ints[5]));
    assert_eq!(ints[7], n, "the compare-and-swap loop counts every thread");
    let mut exchanged = gpu.download(&bufs.olds).expect("download");
    exchanged.push(ints[4]);
    exchanged.sort_unstable();
    assert_eq!(exchanged, (0..=n).collect::<Vec<_>>(), "every exchanged value is seen exactly once");
    assert_eq!(gpu.download(&bufs.floats).expect("download"), [n as f32 * 0.5]);
    assert_eq!(gpu.download(&bufs.wide).expect("download"), [n as f64 * 0.25]);
    // 768 increments of a u8 wrap to 0; the min of 0 + (id as u8) is 0, the max 255.
    assert_eq!(gpu.download(&bufs.small).expect("download"), [0, 0, 255]);
}

static OVERRUN: KernelSpec = spec("overrun", &["a", "b"]);

#[test]
fn an_out_of_bounds_read_fails_the_launch_with_array_index_len_and_line() {
    let gpu = Gpu::emulator();
    let a = gpu.upload(&[1.0f32; 4]).expect("upload");
    let b = gpu.upload(&[5.0f32; 2]).expect("upload");
    let (a_view, b_view) = (a.emu().expect("emulator"), b.emu().expect("emulator"));
    struct Memory<'g> {
        a: &'g EmuSlice<f32>,
        b: &'g EmuSlice<f32>,
    }
    let result = gpu.emulate(
        &OVERRUN,
        &Launch::new().blocks(3).threads(32),
        || Memory { a: a_view, b: b_view },
        |ctx: &ThreadCtx<'_>, memory: &Memory<'_>| {
            Box::pin(async move {
                ctx.grid_sync().await;
                if ctx.global_id() == 0 {
                    let beyond = memory.a.len() as u64 + 3;
                    memory.b.store(0, memory.a.load(beyond, ctx, 0, 42), ctx, 1, 42);
                }
            })
        },
    );
    let error = result.expect_err("out of bounds");
    let Error::OutOfBounds { kernel, array, index, len, line } = &error else { panic!("{error}") };
    assert_eq!((kernel.as_str(), array.as_str(), *index, *len, *line), ("overrun", "a", 7, 4, 42));
    assert_eq!(gpu.download(&b).expect("download"), [0.0, 5.0], "the read gave zero and the kernel ran on");
}

static MISUSE: KernelSpec = spec("misuse", &[]);

/// Runs `thread` as every thread of a 2-block grid of 64 threads, and returns the error.
fn misuse<F>(thread: F) -> Error
where
    F: for<'a> Fn(&'a ThreadCtx<'a>) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> + Sync,
{
    let gpu = Gpu::emulator();
    let result = gpu.emulate(&MISUSE, &Launch::new().blocks(2).threads(64), || (), |ctx, _: &()| thread(ctx));
    result.expect_err("the threads can never meet")
}

#[test]
fn half_a_block_at_sync_block_and_half_at_grid_sync_is_a_deadlock_not_a_hang() {
    let error = misuse(|ctx| {
        Box::pin(async move {
            if ctx.thread_idx() < 32 {
                ctx.sync_block().await;
            } else {
                ctx.grid_sync().await;
            }
        })
    });
    let Error::EmulatorDeadlock { kernel, detail, .. } = &error else { panic!("{error}") };
    assert_eq!(kernel, "misuse");
    assert!(detail.contains("32 at sync_block() (first: thread 0), 32 at grid_sync() (first: thread 32)"), "{detail}");
    assert!(error.to_string().contains("on a GPU it would hang"), "{error}");
}

#[test]
fn a_block_that_finishes_while_the_others_wait_at_grid_sync_is_a_mismatch_naming_both_counts() {
    let error = misuse(|ctx| {
        Box::pin(async move {
            ctx.grid_sync().await;
            if ctx.block_idx() == 1 {
                return;
            }
            ctx.grid_sync().await;
        })
    });
    let Error::BarrierMismatch { barrier, first, second, .. } = &error else { panic!("{error}") };
    assert_eq!(*barrier, "grid_sync()");
    assert_eq!(first, "block 0 waits at grid_sync() number 2");
    assert_eq!(second, "block 1 finished after 1 grid_sync() calls");
    assert!(error.to_string().contains("On a GPU this hangs"), "{error}");
}

#[test]
fn threads_of_one_block_that_disagree_on_grid_sync_calls_are_a_mismatch() {
    // In every block, thread 5 leaves the loop a round early, as when a convergence flag is
    // read by some threads after another cleared it: no block finishes early as a whole.
    let error = misuse(|ctx| {
        Box::pin(async move {
            for round in 0..3 {
                if round == 2 && ctx.thread_idx() == 5 {
                    break;
                }
                ctx.grid_sync().await;
            }
        })
    });
    let Error::BarrierMismatch { barrier, first, second, .. } = &error else { panic!("{error}") };
    assert_eq!(*barrier, "grid_sync()");
    assert!(first.starts_with("thread 0 of block ") && first.ends_with("waits at its grid_sync() number 3"), "{first}");
    assert!(
        second.starts_with("thread 5 of block ") && second.ends_with("finished after 2 grid_sync() calls"),
        "{second}"
    );
}

#[test]
fn a_thread_that_finishes_before_a_sync_block_its_block_reaches_is_a_mismatch() {
    // Thread 0 pairs its extra sync_block() with the others' only one, then waits alone.
    let error = misuse(|ctx| {
        Box::pin(async move {
            if ctx.thread_idx() == 0 {
                ctx.sync_block().await;
            }
            ctx.sync_block().await;
        })
    });
    let Error::BarrierMismatch { barrier, first, second, .. } = &error else { panic!("{error}") };
    assert_eq!(*barrier, "sync_block()");
    assert!(
        first.starts_with("thread 0 of block ") && first.ends_with("waits at its sync_block() number 2"),
        "{first}"
    );
    assert!(
        second.starts_with("thread 1 of block ") && second.ends_with("finished after 1 sync_block() calls"),
        "{second}"
    );
}

#[test]
fn half_a_warp_at_a_shuffle_and_half_at_sync_block_is_a_deadlock() {
    let error = misuse(|ctx| {
        Box::pin(async move {
            if ctx.lane_id() < 16 {
                ctx.shuffle(Shuffle::Xor, 1u32, 1).await;
            }
            ctx.sync_block().await;
        })
    });
    let Error::EmulatorDeadlock { detail, .. } = &error else { panic!("{error}") };
    assert!(detail.contains("at a warp shuffle (first: thread 0)"), "{detail}");
}

#[test]
fn awaiting_a_foreign_future_is_an_error_not_a_hang() {
    let error = misuse(|_| Box::pin(std::future::pending::<()>()));
    let Error::EmulatorDeadlock { detail, .. } = &error else { panic!("{error}") };
    assert!(detail.contains("thread 0 awaited something other than"), "{detail}");
}

static EARLY_EXIT: KernelSpec = spec("early_exit", &["out"]);

#[test]
fn threads_that_finish_after_the_last_barrier_need_not_wait() {
    let gpu = Gpu::emulator();
    let out = gpu.zeros::<u32>(64).expect("zeros");
    let view = out.emu().expect("emulator");
    let launch = Launch::new().blocks(2).threads(64);
    let ran = gpu.emulate(
        &EARLY_EXIT,
        &launch,
        || view,
        |ctx: &ThreadCtx<'_>, out: &&EmuSlice<u32>| {
            Box::pin(async move {
                out.store(u64::from(ctx.thread_idx()), 1, ctx, 0, 1);
                ctx.sync_block().await;
                ctx.grid_sync().await;
                if ctx.thread_idx() % 2 == 1 {
                    return;
                }
                let neighbour = out.load(u64::from((ctx.thread_idx() + 2) % 64), ctx, 0, 2);
                out.store(u64::from(ctx.thread_idx()), neighbour + 1, ctx, 0, 3);
            })
        },
    );
    ran.expect("every thread meets every barrier");
    let got = gpu.download(&out).expect("download");
    assert!(got.iter().enumerate().all(|(i, &x)| if i % 2 == 0 { x >= 2 } else { x == 1 }), "{got:?}");
}

#[test]
#[should_panic(expected = "a thread panicked")]
fn a_panicking_thread_panics_the_caller_instead_of_hanging_the_workers() {
    let gpu = Gpu::emulator();
    let _ = gpu.emulate(
        &MISUSE,
        &Launch::new().blocks(8).threads(32),
        || (),
        |ctx: &ThreadCtx<'_>, _: &()| {
            Box::pin(async move {
                ctx.grid_sync().await;
                if ctx.global_id() == 77 {
                    panic!("a thread panicked");
                }
                ctx.grid_sync().await;
            })
        },
    );
}

static PHASES: KernelSpec = spec("phases", &["counts"]);

#[test]
fn every_barrier_means_the_same_grid_barrier_and_the_report_says_what_ran() {
    let gpu = Gpu::emulator();
    for &barrier in Barrier::ALL {
        let counts = gpu.zeros::<u32>(2).expect("zeros");
        let view = counts.emu().expect("emulator");
        let launch = Launch::new().barrier(barrier);
        let report = gpu
            .emulate(
                &PHASES,
                &launch,
                || view,
                |ctx: &ThreadCtx<'_>, counts: &&EmuSlice<u32>| {
                    Box::pin(async move {
                        counts.atomic_add(0, 1, Relaxed, ctx, 0, 1);
                        ctx.grid_sync().await;
                        // Every thread sees every arrival of the phase before.
                        if counts.load(0, ctx, 0, 2) == ctx.grid_size() {
                            counts.atomic_add(1, 1, Relaxed, ctx, 0, 2);
                        }
                    })
                },
            )
            .expect("the launch runs");
        let grid = gpu.info().sm_count * 4 * 256;
        assert_eq!(gpu.download(&counts).expect("download"), [grid, grid], "{barrier}");
        // Auto reports the barrier its table gives the emulator's grid of 4 blocks per "SM".
        let ran = if barrier == Barrier::Auto { Barrier::Lbs } else { barrier };
        assert_eq!((report.blocks, report.threads, report.barrier), (gpu.info().sm_count * 4, 256, ran));
    }
}

#[test]
fn block_sizes_outside_1_to_1024_and_empty_grids_are_refused() {
    let gpu = Gpu::emulator();
    fn body<'a>(_: &'a ThreadCtx<'a>, _: &'a ()) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(async {})
    }
    for threads in [0, 1025] {
        let error = gpu.emulate(&MISUSE, &Launch::new().threads(threads), || (), body).expect_err("invalid");
        assert!(matches!(error, Error::InvalidBlockSize { max: 1024, .. }), "{error}");
    }
    let error = gpu.emulate(&MISUSE, &Launch::new().blocks(0), || (), body).expect_err("empty");
    assert!(matches!(error, Error::EmptyGrid { .. }), "{error}");
    assert!(gpu.emulate(&MISUSE, &Launch::new().threads(1024).blocks(3), || (), body).is_ok());
}

#[test]
fn cuda_launch_paths_on_the_emulator_are_typed_errors() {
    let gpu = Gpu::emulator();
    let wrong = |error: Error, call: &str| {
        assert!(matches!(&error, Error::WrongBackend { what, .. } if *what == call), "{error}");
    };
    // SAFETY: nothing is launched: the emulator refuses before reading the arguments.
    wrong(
        unsafe { gpu.launch_kernel(&MISUSE, &Launch::new(), KernelArgs::new()) }.expect_err("CUDA only"),
        "Gpu::launch_kernel",
    );
    // SAFETY: as above.
    let oversubscribed = unsafe { gpu.launch_kernel_oversubscribed(&MISUSE, &Launch::new(), KernelArgs::new()) };
    wrong(oversubscribed.expect_err("CUDA only"), "Gpu::launch_kernel_oversubscribed");
    let split = gpu.begin_split(&MISUSE, &Launch::new().barrier(Barrier::MultiLaunch), &[]);
    assert!(matches!(split, Err(Error::CannotSplit { .. })), "{split:?}");
    assert_eq!(gpu.max_coresident_blocks(&MISUSE, &Launch::new()).ok(), Some(4096), "2^20 threads of 256");
    assert_eq!(gpu.max_coresident_blocks(&MISUSE, &Launch::new().threads(32)).ok(), Some(16384), "2^14 blocks");
    let error = gpu.max_coresident_blocks(&MISUSE, &Launch::new().threads(2048)).expect_err("too many threads");
    assert!(matches!(error, Error::InvalidBlockSize { .. }), "{error}");
}

static BITONIC: KernelSpec = spec("bitonic", &["keys"]);

/// Sorts `keys` (a power of two long) ascending: one grid-stride compare-exchange pass and
/// one `grid_sync()` per bitonic step.
fn bitonic(gpu: &Gpu, launch: &Launch, keys: &mut DeviceBuffer<u32>) -> Result<LaunchReport> {
    let keys = keys.emu()?;
    struct Memory<'g> {
        keys: &'g EmuSlice<u32>,
    }
    gpu.emulate(
        &BITONIC,
        launch,
        || Memory { keys },
        |ctx: &ThreadCtx<'_>, m: &Memory<'_>| {
            Box::pin(async move {
                let n = m.keys.len() as u64;
                let mut k = 2;
                while k <= n {
                    let mut j = k / 2;
                    while j > 0 {
                        for i in grid_stride(ctx, n as usize) {
                            let l = i ^ j;
                            if l > i {
                                let (a, b) = (m.keys.load(i, ctx, 0, 1), m.keys.load(l, ctx, 0, 1));
                                if (a > b) == (i & k == 0) {
                                    m.keys.store(i, b, ctx, 0, 2);
                                    m.keys.store(l, a, ctx, 0, 2);
                                }
                            }
                        }
                        ctx.grid_sync().await;
                        j /= 2;
                    }
                    k *= 2;
                }
            })
        },
    )
}

#[test]
fn a_bitonic_sort_sorts() {
    let gpu = Gpu::emulator();
    let input: Vec<u32> = (0..4096u32).map(|i| i.wrapping_mul(2_654_435_761).rotate_left(13)).collect();
    let mut keys = gpu.upload(&input).expect("upload");
    bitonic(&gpu, &Launch::new().blocks(5).threads(64), &mut keys).expect("the launch runs");
    let mut sorted = input;
    sorted.sort_unstable();
    assert_eq!(gpu.download(&keys).expect("download"), sorted);
}

/// The emulator's speed target: run with
/// `cargo test --release -p gsync-runtime -- --ignored --nocapture a_million_key_bitonic`.
#[test]
#[ignore = "a benchmark; run in release mode"]
fn a_million_key_bitonic_sort_takes_seconds() {
    let gpu = Gpu::emulator();
    let input: Vec<u32> = (0..1u32 << 20).map(|i| i.wrapping_mul(2_654_435_761).rotate_left(13)).collect();
    let mut keys = gpu.upload(&input).expect("upload");
    let report = bitonic(&gpu, &Launch::new(), &mut keys).expect("the launch runs");
    eprintln!(
        "2^20 keys: {:?} on {} cores ({} blocks of {} threads)",
        report.gpu_time,
        gpu.info().sm_count,
        report.blocks,
        report.threads
    );
    let mut sorted = input;
    sorted.sort_unstable();
    assert_eq!(gpu.download(&keys).expect("download"), sorted);
}

#[test]
fn grids_beyond_the_emulator_s_limit_are_refused_with_it_under_every_barrier() {
    let gpu = Gpu::emulator();
    let mut barriers = Barrier::ALL.to_vec();
    barriers.push(Barrier::Ilbs { groups: Some(3) });
    for barrier in barriers {
        for (blocks, threads, max) in [(u32::MAX, 256, 4096), (1_000_000, 32, 16384), (1025, 1024, 1024)] {
            let launch = Launch::new().blocks(blocks).threads(threads).barrier(barrier);
            let started = std::time::Instant::now();
            let error = gpu.emulate(&MISUSE, &launch, || (), |_, _: &()| Box::pin(async {})).expect_err("too large");
            assert!(started.elapsed() < std::time::Duration::from_secs(1), "refused before allocating");
            if barrier == Barrier::Lfs {
                // LFS's own limit, one block per thread, comes first.
                assert!(matches!(error, Error::BarrierBlockLimit { .. }), "{error}");
                continue;
            }
            let Error::TooManyBlocks { requested, threads: t, max: m, device, .. } = &error else {
                panic!("{barrier}: expected TooManyBlocks, got {error}");
            };
            assert_eq!((*requested, *t, *m, device.as_str()), (blocks, threads, max, "the CPU emulator"), "{barrier}");
            let message = error.to_string();
            assert!(message.contains(&format!("launch at most {max} blocks")), "{message}");
            assert!(message.contains("1048576 threads"), "{message}");
        }
        // The largest grid runs.
        let launch = Launch::new().blocks(4096).threads(256).barrier(barrier);
        if barrier != Barrier::Lfs {
            gpu.emulate(&MISUSE, &launch, || (), |_, _: &()| Box::pin(async {})).expect("at the limit");
        }
    }
}

static ENDLESS: KernelSpec = spec("endless", &["flag"]);

/// Runs `thread` as every thread of a 4-block grid of 32 threads under a 100 ms watchdog,
/// and returns the error and how long the launch took.
fn endless<F>(thread: F) -> (Error, std::time::Duration)
where
    F: for<'a> Fn(&'a ThreadCtx<'a>, &'a EmuSlice<u32>) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> + Sync,
{
    let gpu = Gpu::emulator();
    let flag = gpu.zeros::<u32>(1).expect("zeros");
    let view = flag.emu().expect("emulator");
    let launch = Launch::new()
        .blocks(4)
        .threads(32)
        .barrier(Barrier::Ulfs)
        .watchdog(Some(std::time::Duration::from_millis(100)));
    let started = std::time::Instant::now();
    let result = gpu.emulate(&ENDLESS, &launch, || view, |ctx, flag: &&EmuSlice<u32>| thread(ctx, flag));
    (result.expect_err("the watchdog stops it"), started.elapsed())
}

#[test]
fn an_endless_loop_ends_with_a_kernel_timeout_in_about_the_watchdog_limit() {
    // Generated code checks ctx.stopped() at the top of every loop iteration.
    /// Whether a thread still spins.
    type Spins = fn(&ThreadCtx<'_>, &EmuSlice<u32>) -> bool;
    let cases: [(&str, u32, Spins); 3] = [
        ("a loop without grid_sync", 1, |_, _| true),
        ("a spin on a flag no thread sets, in block 2 only", 2, |ctx, flag| {
            ctx.block_idx() == 2 && flag.load(0, ctx, 0, 7) == 0
        }),
        ("a loop in thread 3 of block 1 only", 1, |ctx, _| ctx.block_idx() == 1 && ctx.thread_idx() == 3),
    ];
    for (case, phase, spins) in cases {
        let (error, took) = endless(move |ctx, flag| {
            Box::pin(async move {
                if phase == 2 {
                    ctx.grid_sync().await;
                }
                while spins(ctx, flag) {
                    if ctx.stopped() {
                        return;
                    }
                }
                ctx.grid_sync().await;
            })
        });
        let Error::KernelTimeout { kernel, barrier, phase: reported, limit, .. } = &error else {
            panic!("{case}: expected KernelTimeout, got {error}");
        };
        assert_eq!((kernel.as_str(), barrier.as_str(), *reported), ("endless", "ulfs", phase), "{case}");
        assert_eq!(*limit, std::time::Duration::from_millis(100));
        assert!(took < std::time::Duration::from_secs(2), "{case}: {took:?}");
        assert!(error.to_string().contains("Launch::watchdog(None)"), "{error}");
    }
}

#[test]
fn without_a_watchdog_a_long_phase_runs_to_its_end() {
    let gpu = Gpu::emulator();
    let flag = gpu.zeros::<u32>(1).expect("zeros");
    let view = flag.emu().expect("emulator");
    let launch = Launch::new().blocks(2).threads(32).watchdog(None);
    gpu.emulate(
        &ENDLESS,
        &launch,
        || view,
        |ctx: &ThreadCtx<'_>, flag: &&EmuSlice<u32>| {
            Box::pin(async move {
                let until = std::time::Instant::now() + std::time::Duration::from_millis(5);
                while std::time::Instant::now() < until {
                    if ctx.stopped() {
                        return;
                    }
                }
                flag.atomic_add(0, 1, Relaxed, ctx, 0, 1);
            })
        },
    )
    .expect("no watchdog, no timeout");
    assert_eq!(gpu.download(&flag).expect("download"), [64]);
}
