//! Point-to-point communication: kernels with acquire loads, release stores, ordered
//! atomics, `wait_until` and `with_lock`, and the checks shared by the emulator, GPU and
//! NVRTC tests.

use super::checks::{random_vec, rng, Scale};
use gsync::kernels::scan::{self, scan_three_phase, ScanScratch};
use gsync::prelude::*;
use rand::Rng;
use std::time::Duration;

/// Every block writes its stripe of `data`, publishes it with a release store of its flag,
/// waits for the next block's flag and copies that block's stripe: message passing between
/// blocks of one phase, with no `grid_sync()`.
#[grid_phases(threads = 64)]
pub fn pass_to_the_left(data: &mut [u32], flags: &mut [u32], out: &mut [u32], round: u32) {
    let b = block_idx() as usize;
    let next = (b + 1) % grid_dim() as usize;
    let width = block_dim() as usize;
    data[b * width + thread_idx() as usize] = (b as u32 * 1000 + thread_idx()) ^ round;
    sync_block();
    if thread_idx() == 0 {
        flags.store_release(b, round);
    }
    wait_until(|| flags.load_acquire(next) == round);
    out[b * width + thread_idx() as usize] = data[next * width + thread_idx() as usize];
}

/// Every thread adds 1 to counter `(global_id() + r) % counters.len()`, `rounds` times, with
/// a plain read and write under that counter's lock, and keeps `twice` at twice the counter:
/// a lost update or a torn pair shows. `occupancy[0]` counts the threads inside a critical
/// section and `occupancy[1]` keeps the most there ever were: 1 with one lock.
#[grid_phases(threads = 64)]
pub fn locked_increments(
    locks: &mut [u32],
    counters: &mut [u32],
    twice: &mut [u32],
    occupancy: &mut [u32],
    rounds: u32,
) {
    let slots = counters.len() as u32;
    for r in 0..rounds {
        let slot = ((global_id() + r) % slots) as usize;
        locks.with_lock(slot, || {
            let seen = counters[slot];
            let inside = occupancy.atomic_add(0, 1, Ordering::AcqRel) + 1;
            let _ = occupancy.atomic_max(1, inside);
            counters[slot] = seen + 1;
            twice[slot] = 2 * (seen + 1);
            let _ = occupancy.atomic_add(0, u32::MAX, Ordering::AcqRel);
        });
    }
}

/// The classic broken lock: test, then set, with a separate acquire load and release store.
/// Two threads can both see the lock free and both enter.
#[grid_phases(threads = 64)]
pub fn test_then_set_increments(flag: &mut [u32], counters: &mut [u32], rounds: u32) {
    for _ in 0..rounds {
        wait_until(|| flag.load_acquire(0) == 0);
        flag.store_release(0, 1);
        let seen = counters[0];
        // Another ordered access inside the section, where the emulator lets others run.
        let _ = counters.atomic_add(1, 1, Ordering::AcqRel);
        counters[0] = seen + 1;
        flag.store_release(0, 0);
    }
}

/// Atomics with every ordering, and acquire loads of every width.
#[grid_phases]
pub fn ordered_atomics(counts: &mut [u64], extremes: &mut [i32], sums: &mut [f32], bytes: &mut [u8], out: &mut [u32]) {
    for i in grid_stride(0..out.len()) {
        let _ = counts.atomic_add(0, 1, Ordering::Relaxed);
        let _ = counts.atomic_add(1, 1, Ordering::Acquire);
        let _ = counts.atomic_add(2, 1, Ordering::Release);
        let _ = counts.atomic_add(3, 1, Ordering::AcqRel);
        let _ = counts.atomic_add(4, 1, Ordering::SeqCst);
        let _ = extremes.atomic_min(0, i as i32, Ordering::AcqRel);
        let _ = extremes.atomic_max(1, i as i32, Ordering::SeqCst);
        let _ = sums.atomic_add(0, 0.5, Ordering::Release);
        let _ = extremes.atomic_cas(2, 0, 7, Ordering::AcqRel);
        let _ = extremes.atomic_exch(3, 9, Ordering::Acquire);
        out[i] = bytes.load_acquire(i % bytes.len()) as u32;
    }
}

/// A spin-wait that nothing ends: the watchdog must report it with its line.
#[grid_phases(threads = 32)]
pub fn waits_forever(flags: &mut [u32], out: &mut [u32]) {
    if thread_idx() == 0 {
        out[block_idx() as usize] = 1;
    }
    wait_until(|| flags.load_acquire(0) == 1);
    out[block_idx() as usize] = 2;
}

/// The line of the `wait_until` in [`waits_forever`].
pub const WAITS_FOREVER_LINE: u32 = line!() - 5;

/// The kernels here, for the NVRTC test.
pub fn communication_kernels() -> Vec<&'static gsync::KernelSpec> {
    vec![
        &pass_to_the_left::KERNEL,
        &locked_increments::KERNEL,
        &test_then_set_increments::KERNEL,
        &ordered_atomics::KERNEL,
        &waits_forever::KERNEL,
        &scan::scan_lookback::KERNEL,
        &scan::scan_three_phase::KERNEL,
    ]
}

/// Blocks wait for one another's release stores, round after round, on every grid size.
pub fn blocks_pass_messages_with_release_and_acquire(gpu: &Gpu, scale: Scale) {
    let grids = match scale {
        Scale::Full => vec![2, gpu.info().sm_count, 4 * gpu.info().sm_count],
        Scale::Small => vec![2, 5, 33],
    };
    for blocks in grids {
        let n = blocks as usize * 64;
        let (mut data, mut flags, mut out) =
            (gpu.zeros::<u32>(n).unwrap(), gpu.zeros::<u32>(blocks as usize).unwrap(), gpu.zeros::<u32>(n).unwrap());
        let launch = Launch::new().blocks(blocks);
        for round in 1..=3u32 {
            pass_to_the_left::launch_with(gpu, &launch, &mut data, &mut flags, &mut out, round).unwrap();
            let expected: Vec<u32> = (0..n)
                .map(|i| {
                    let (b, t) = (i / 64, (i % 64) as u32);
                    let next = (b + 1) % blocks as usize;
                    (next as u32 * 1000 + t) ^ round
                })
                .collect();
            assert_eq!(gpu.download(&out).unwrap(), expected, "{blocks} blocks, round {round}");
        }
    }
}

/// Many blocks contend for a few locks and lose no update.
pub fn many_blocks_contending_for_a_lock_lose_no_update(gpu: &Gpu, scale: Scale) {
    let (blocks, rounds) = match scale {
        // The lock is not fair: a thread may wait while all the others take it, so the whole
        // run (169,000 critical sections on one lock on an H200) stays inside the launch's
        // 5 s spin watchdog.
        Scale::Full => (4 * gpu.info().sm_count, 5u32),
        Scale::Small => (16, 20),
    };
    for slots in [1usize, 3] {
        let threads = blocks as usize * 64;
        let mut locks = gpu.zeros::<u32>(slots).unwrap();
        let (mut counters, mut twice) = (gpu.zeros::<u32>(slots).unwrap(), gpu.zeros::<u32>(slots).unwrap());
        let mut occupancy = gpu.zeros::<u32>(2).unwrap();
        let launch = Launch::new().blocks(blocks);
        locked_increments::launch_with(gpu, &launch, &mut locks, &mut counters, &mut twice, &mut occupancy, rounds)
            .unwrap();
        if slots == 1 {
            assert_eq!(gpu.download(&occupancy).unwrap(), vec![0, 1], "one thread at a time held the lock");
        }
        let mut expected = vec![0u32; slots];
        for g in 0..threads as u32 {
            for r in 0..rounds {
                expected[((g + r) % slots as u32) as usize] += 1;
            }
        }
        let counters = gpu.download(&counters).unwrap();
        assert_eq!(counters, expected, "{slots} lock(s), {blocks} blocks");
        let doubled: Vec<u32> = expected.iter().map(|c| 2 * c).collect();
        assert_eq!(gpu.download(&twice).unwrap(), doubled, "{slots} lock(s)");
        assert_eq!(gpu.download(&locks).unwrap(), vec![0; slots], "every lock was given back");
    }
}

/// Every ordering of every atomic gives the relaxed atomic's result, and acquire loads read
/// narrow elements.
pub fn atomics_take_every_memory_ordering(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let n = match scale {
        Scale::Full => 1_000_000,
        Scale::Small => 5_000,
    };
    let bytes: Vec<u8> = random_vec(&mut rng, 251);
    let mut counts = gpu.zeros::<u64>(5).unwrap();
    let mut extremes = gpu.upload(&[i32::MAX, i32::MIN, 0, 0]).unwrap();
    let mut sums = gpu.zeros::<f32>(1).unwrap();
    let mut dbytes = gpu.upload(&bytes).unwrap();
    let mut out = gpu.zeros::<u32>(n).unwrap();
    ordered_atomics::launch(gpu, &mut counts, &mut extremes, &mut sums, &mut dbytes, &mut out).unwrap();
    assert_eq!(gpu.download(&counts).unwrap(), vec![n as u64; 5]);
    assert_eq!(gpu.download(&extremes).unwrap(), vec![0, n as i32 - 1, 7, 9]);
    assert_eq!(gpu.download(&sums).unwrap(), vec![n as f32 * 0.5]);
    let expected: Vec<u32> = (0..n).map(|i| u32::from(bytes[i % bytes.len()])).collect();
    assert_eq!(gpu.download(&out).unwrap(), expected);
}

/// A spin-wait nothing ends fails the launch with `Error::SpinTimeout` naming its line, in
/// about the watchdog's limit, and the device can launch again afterwards.
pub fn a_spin_wait_nobody_ends_times_out_with_its_line(gpu: &Gpu, barrier: Barrier) {
    let mut flags = gpu.zeros::<u32>(1).unwrap();
    let mut out = gpu.zeros::<u32>(4).unwrap();
    let limit = Duration::from_millis(200);
    let launch = Launch::new().blocks(4).barrier(barrier).watchdog(Some(limit));
    let started = std::time::Instant::now();
    let error = waits_forever::launch_with(gpu, &launch, &mut flags, &mut out).expect_err("a timeout");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert!(
        matches!(&error, Error::SpinTimeout { kernel, line, limit: l, .. }
            if kernel == "waits_forever" && *line == WAITS_FOREVER_LINE && *l == limit),
        "under {barrier}: {error:?}"
    );
    assert!(error.to_string().contains("Launch::watchdog"), "{error}");
    gpu.write(&mut flags, &[1]).unwrap();
    waits_forever::launch_with(gpu, &launch, &mut flags, &mut out).unwrap();
    assert_eq!(gpu.download(&out).unwrap(), vec![2; 4]);
}

/// The single pass's look-back walks back over windows of 32 tiles while none of them has its
/// prefix. The launch starts at ticket `skip`, as if blocks had already taken the tiles before
/// it and published their sums (`1 << 32 | sum`) but no prefix, except tile 0's
/// (`2 << 32 | sum`): the first tile's look-back must cross 19 windows of sums to reach
/// it, and the keys from that tile on must be scanned exactly.
pub fn the_look_back_crosses_windows_of_sums(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    // Warp 0 looks back over 32 tiles at a time whatever the block size; 32 and 256 threads
    // give each thread different keys (256 and 32 per tile).
    let (tiles, skip) = match scale {
        Scale::Full => (700, 600),
        Scale::Small => (610, 600),
    };
    let n = tiles * scan::TILE - 5;
    let keys: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
    let expected = scan::scan_reference(&keys);
    let mut states = vec![0u64; scan::state_words(n)];
    for (i, tile) in keys.chunks(scan::TILE).take(skip).enumerate() {
        let state = if i == 0 { 2 << 32 } else { 1 << 32 };
        states[i * scan::STATE_STRIDE] = state | u64::from(tile.iter().fold(0u32, |a, &k| a.wrapping_add(k)));
    }
    let dkeys = gpu.upload(&keys).unwrap();
    let from = skip * scan::TILE;
    for threads in [32, 256] {
        let most = scan::scan_lookback::max_coresident_blocks(gpu, &Launch::new().threads(threads)).unwrap();
        for blocks in [1, 7, most.min(tiles as u32)] {
            let mut dstates = gpu.upload(&states).unwrap();
            let mut tickets = gpu.upload(&[skip as u32]).unwrap();
            let mut out = gpu.zeros::<u32>(n).unwrap();
            let launch = Launch::new().threads(threads).blocks(blocks);
            scan::scan_lookback::launch_with(gpu, &launch, &dkeys, &mut out, &mut dstates, &mut tickets).unwrap();
            let what = format!("tiles {skip}… of {tiles} on {blocks} blocks of {threads}");
            assert!(gpu.download(&out).unwrap()[from..] == expected[from..], "{what}");
        }
    }
}

/// The single pass refuses `states` sized one word per tile (the layout before
/// [`scan::STATE_STRIDE`]) with its assertion, instead of reading and writing past them.
pub fn the_single_pass_refuses_states_of_one_word_per_tile(gpu: &Gpu, scale: Scale) {
    let n = match scale {
        Scale::Full => 100 * scan::TILE,
        Scale::Small => 10 * scan::TILE,
    };
    let keys = gpu.upload(&vec![1u32; n]).unwrap();
    let mut out = gpu.zeros::<u32>(n).unwrap();
    let mut states = gpu.zeros::<u64>(scan::tiles(n)).unwrap();
    let mut tickets = gpu.zeros::<u32>(1).unwrap();
    let launch = Launch::new().blocks(4);
    let error = scan::scan_lookback::launch_with(gpu, &launch, &keys, &mut out, &mut states, &mut tickets)
        .expect_err("one state word per tile is too few");
    assert!(
        matches!(&error, Error::AssertionFailed { kernel, message, .. }
            if kernel == "scan_lookback" && message.contains("scan::state_words")),
        "{error:?}"
    );
}

/// Both scans match the CPU's on sizes around the tile and on several grids; the
/// three-phase scan also split into launches.
pub fn both_scans_match_the_cpu(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let sizes = match scale {
        // 2^26 + 5 keys: more tile sums than a tile, so that block 0 scans them a whole tile at a
        // time, with a carry, in the three-phase scan's second phase.
        Scale::Full => vec![1, scan::TILE - 1, scan::TILE, scan::TILE + 1, 1 << 20, (1 << 24) + 17, (1 << 26) + 5],
        Scale::Small => vec![1, 100, scan::TILE, 3 * scan::TILE + 5, 40_000, 40 * scan::TILE + 3],
    };
    let grids = match scale {
        Scale::Full => vec![None, Some(1), Some(gpu.info().sm_count)],
        Scale::Small => vec![None, Some(1), Some(3), Some(48)],
    };
    for n in sizes {
        let keys: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
        let expected = scan::scan_reference(&keys);
        let dkeys = gpu.upload(&keys).unwrap();
        let mut out = gpu.zeros::<u32>(n).unwrap();
        let mut scratch = ScanScratch::new(gpu, n).unwrap();
        let mut tile_sums = gpu.zeros::<u32>(scan::tiles(n)).unwrap();
        // Other block sizes change the keys each thread takes (64 at 128 threads, 8 at 1024).
        let launches = grids.iter().map(|blocks| blocks.map_or_else(Launch::new, |b| Launch::new().blocks(b))).chain([
            Launch::new().threads(32).blocks(5),
            Launch::new().threads(64),
            Launch::new().threads(128),
            Launch::new().threads(512).blocks(3),
            Launch::new().threads(1024).blocks(2),
        ]);
        for launch in launches {
            let blocks = launch.requested_blocks();
            let report = scratch.launch(gpu, &launch, &dkeys, &mut out).unwrap();
            assert!(gpu.download(&out).unwrap() == expected, "single pass, n {n}, {blocks:?} blocks, {launch:?}");
            if blocks.is_none() && gpu.backend() == Backend::Cuda {
                // A block beyond the tiles would find no work: it is not launched.
                assert!(
                    report.blocks as usize <= scan::tiles(n),
                    "n {n}: {} blocks for {} tiles",
                    report.blocks,
                    scan::tiles(n)
                );
            }
            gpu.write(&mut out, &vec![0; n]).unwrap();
            scan_three_phase::launch_with(gpu, &launch, &dkeys, &mut out, &mut tile_sums).unwrap();
            assert!(gpu.download(&out).unwrap() == expected, "three phases, n {n}, {blocks:?} blocks, {launch:?}");
            gpu.write(&mut out, &vec![0; n]).unwrap();
        }
        for threads in [64, 256] {
            let split = Launch::new().barrier(Barrier::MultiLaunch).threads(threads);
            scan_three_phase::launch_with(gpu, &split, &dkeys, &mut out, &mut tile_sums).unwrap();
            assert!(gpu.download(&out).unwrap() == expected, "three phases split, n {n}, {threads} threads");
        }
    }
    let mut out = gpu.zeros::<u32>(100).unwrap();
    let mut tile_sums = gpu.zeros::<u32>(1).unwrap();
    let error = scan_three_phase::launch_with(
        gpu,
        &Launch::new().threads(96),
        &gpu.upload(&[1u32; 100]).unwrap(),
        &mut out,
        &mut tile_sums,
    )
    .expect_err("96 threads do not divide the tile");
    assert!(
        matches!(&error, Error::AssertionFailed { message, .. } if message.contains("multiple of 32")),
        "{error:?}"
    );
}
