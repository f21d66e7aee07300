//! Launches that return once queued (`submit`, `Pending`): many in flight at once, errors at
//! `wait()`, the split form, and a handle dropped unwaited; the same checks on the emulator and
//! on a GPU.

use std::time::Duration;

use gsync::prelude::*;

use crate::kernels::{countdown, reads_past_the_end, rotate_rounds, rotate_rounds_reference};

/// `n` words that differ from call to call by `seed`.
fn words(n: usize, seed: u32) -> Vec<u32> {
    (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) ^ seed).collect()
}

/// Eight launches queued at once on buffers of their own, waited for in reverse order: each
/// computes what it computes alone, so none shared another's status word or barrier state.
pub fn many_launches_in_flight_each_compute_their_own_result(gpu: &Gpu) {
    let (n, shift, rounds) = (4099, 5, 8);
    let inputs: Vec<Vec<u32>> = (0..8).map(|seed| words(n, seed)).collect();
    let mut buffers: Vec<(DeviceBuffer<u32>, DeviceBuffer<u32>)> =
        inputs.iter().map(|input| (gpu.upload(input).unwrap(), gpu.zeros::<u32>(n).unwrap())).collect();
    let launch = Launch::new().blocks(8).threads(128);
    let pending: Vec<Pending<'_>> = buffers
        .iter_mut()
        .map(|(a, b)| rotate_rounds::submit_with(gpu, &launch, a, b, shift, rounds).unwrap())
        .collect();
    for (i, pending) in pending.into_iter().enumerate().rev() {
        let report = pending.wait().unwrap_or_else(|error| panic!("launch {i}: {error}"));
        assert_eq!(report.config().blocks, 8);
    }
    for (i, ((a, _), input)) in buffers.iter().zip(&inputs).enumerate() {
        assert_eq!(gpu.download(a).unwrap(), rotate_rounds_reference(input, shift, rounds), "launch {i}");
    }
}

/// Launches back to back on one pair of buffers, each checked: runs of the same barrier and
/// settings (whose state the launch before prepares), a change of barrier, of watchdog and of
/// grid between them (whose state the host writes), queued and blocking launches mixed, and a
/// launch that fails in between (whose state is zeroed).
pub fn back_to_back_launches_stay_correct_across_barriers_settings_and_faults(gpu: &Gpu) {
    let (n, shift, rounds) = (6151, 7, 10);
    let start = words(n, 11);
    let expected = rotate_rounds_reference(&start, shift, rounds);
    let (mut a, mut b) = (gpu.upload(&start).unwrap(), gpu.zeros::<u32>(n).unwrap());
    let input = gpu.upload(&vec![1u32; 100]).unwrap();
    let mut out = gpu.zeros::<u32>(100).unwrap();
    let ilbs = Barrier::Ilbs { groups: None };
    let steps = [
        (Barrier::Lbs, 24, None),
        (Barrier::Lbs, 24, None),
        (Barrier::Lbs, 24, None),
        (ilbs, 24, None),
        (ilbs, 24, None),
        (ilbs, 40, None),
        (Barrier::Ulfs, 40, None),
        (Barrier::Ulfs, 40, Some(Duration::from_secs(5))),
        (Barrier::Lfs, 40, Some(Duration::from_secs(5))),
        (Barrier::Lfs, 40, Some(Duration::from_secs(5))),
        (Barrier::Relay, 32, None),
        (Barrier::Relay, 32, None),
        (Barrier::Lbs, 32, None),
    ];
    for (step, &(barrier, blocks, watchdog)) in steps.iter().enumerate() {
        let launch = Launch::new().blocks(blocks).threads(128).barrier(barrier).watchdog(watchdog);
        for round in 0..3 {
            gpu.write(&mut a, &start).unwrap();
            if round == 1 {
                rotate_rounds::submit_with(gpu, &launch, &mut a, &mut b, shift, rounds).unwrap().wait().unwrap();
            } else {
                rotate_rounds::launch_with(gpu, &launch, &mut a, &mut b, shift, rounds).unwrap();
            }
            let got = gpu.download(&a).unwrap();
            assert!(got == expected, "step {step} ({barrier}, {blocks} blocks), round {round}: wrong words");
        }
        if step % 4 == 1 {
            let faulty = Launch::new().blocks(blocks).threads(128).barrier(barrier).bounds_checks(true);
            let error = reads_past_the_end::launch_with(gpu, &faulty, &input, &mut out).expect_err("past the end");
            assert!(matches!(error, Error::OutOfBounds { .. }), "step {step}: {error}");
        }
    }
}

/// A launch that reads past the end returns its error at `wait()`, and the launches queued
/// beside it are not affected.
pub fn a_launch_error_surfaces_at_wait(gpu: &Gpu) {
    let n = 1000;
    let input = gpu.upload(&vec![1u32; n]).unwrap();
    let mut out = gpu.zeros::<u32>(n).unwrap();
    let (shift, rounds) = (3, 4);
    let start = words(n, 7);
    let (mut a, mut b) = (gpu.upload(&start).unwrap(), gpu.zeros::<u32>(n).unwrap());
    let launch = Launch::new().bounds_checks(true);
    let faulty = reads_past_the_end::submit_with(gpu, &launch, &input, &mut out).expect("queued");
    let fine = rotate_rounds::submit(gpu, &mut a, &mut b, shift, rounds).expect("queued");
    match faulty.wait() {
        Err(Error::OutOfBounds { array, index, .. }) => assert_eq!((array.as_str(), index), ("input", n as u64)),
        other => panic!("expected OutOfBounds at wait(), got {other:?}"),
    }
    fine.wait().expect("the launch beside it");
    assert_eq!(gpu.download(&a).unwrap(), rotate_rounds_reference(&start, shift, rounds));
}

/// The split form queues its segments the same way; a pending launch dropped unwaited has
/// finished when the buffers are free again.
pub fn split_and_dropped_launches_finish(gpu: &Gpu) {
    let (n, shift, rounds) = (2053, 11, 6);
    let start = words(n, 3);
    let expected = rotate_rounds_reference(&start, shift, rounds);
    for barrier in [Barrier::MultiLaunch, Barrier::default()] {
        let (mut a, mut b) = (gpu.upload(&start).unwrap(), gpu.zeros::<u32>(n).unwrap());
        let launch = Launch::new().blocks(6).threads(64).barrier(barrier);
        let pending = rotate_rounds::submit_with(gpu, &launch, &mut a, &mut b, shift, rounds).unwrap();
        drop(pending);
        assert_eq!(gpu.download(&a).unwrap(), expected, "{barrier}, dropped unwaited");
        let graph = launch.clone().barrier(Barrier::MultiLaunch).graph(true);
        let mut a = gpu.upload(&start).unwrap();
        let report = rotate_rounds::submit_with(gpu, &graph, &mut a, &mut b, shift, rounds).unwrap().wait().unwrap();
        assert_eq!(report.barrier, Barrier::MultiLaunch);
        assert_eq!(gpu.download(&a).unwrap(), expected, "split, replayed as a graph");
    }
}

/// Two streams of one GPU: launches queued on each run beside each other, on buffers that the
/// other stream allocated and filled, and each computes what it computes alone.
pub fn launches_on_two_streams_use_each_other_s_buffers(gpu: &Gpu) {
    let side = gpu.new_stream().expect("a second stream");
    let (n, shift, rounds) = (3001, 7, 10);
    let (first, second) = (words(n, 11), words(n, 12));
    // Each launch's input comes from the other stream.
    let (mut a1, mut b1) = (side.upload(&first).unwrap(), side.zeros::<u32>(n).unwrap());
    let (mut a2, mut b2) = (gpu.upload(&second).unwrap(), gpu.zeros::<u32>(n).unwrap());
    let launch = Launch::new().blocks(4).threads(128);
    let on_main = rotate_rounds::submit_with(gpu, &launch, &mut a1, &mut b1, shift, rounds).unwrap();
    let on_side = rotate_rounds::submit_with(&side, &launch, &mut a2, &mut b2, shift, rounds).unwrap();
    on_side.wait().unwrap();
    on_main.wait().unwrap();
    assert_eq!(side.download(&a1).unwrap(), rotate_rounds_reference(&first, shift, rounds), "main stream");
    assert_eq!(gpu.download(&a2).unwrap(), rotate_rounds_reference(&second, shift, rounds), "second stream");
}

/// Launches captured into a CUDA graph: every replay runs each of them again, in order; an
/// error of a captured launch surfaces at `replay()`; what a capture cannot record is refused.
/// On the emulator, a capture is refused with `WrongBackend`.
pub fn captured_launches_replay_in_order(gpu: &Gpu) {
    if gpu.backend() == Backend::Emulator {
        assert!(matches!(gpu.capture(), Err(Error::WrongBackend { .. })));
        return;
    }
    let (n, replays) = (2049, 5);
    let (first_input, second_input) = (words(n, 5), words(n, 6));
    let (mut a, mut b) = (gpu.upload(&first_input).unwrap(), gpu.zeros::<u32>(n).unwrap());
    let (mut c, mut d) = (gpu.upload(&second_input).unwrap(), gpu.zeros::<u32>(n).unwrap());
    let launch = Launch::new().blocks(4).threads(128).barrier(Barrier::Lbs);
    {
        let capture = gpu.capture().unwrap();
        let first = rotate_rounds::submit_with(capture.gpu(), &launch, &mut a, &mut b, 3, 2).unwrap();
        let second = rotate_rounds::submit_with(capture.gpu(), &launch, &mut c, &mut d, 4, 4).unwrap();
        let graph = capture.finish(vec![first, second]).unwrap();
        assert_eq!(graph.launches(), 2);
        for _ in 0..replays {
            graph.replay().unwrap();
        }
    }
    assert_eq!(gpu.download(&a).unwrap(), rotate_rounds_reference(&first_input, 3, 2 * replays));
    assert_eq!(gpu.download(&c).unwrap(), rotate_rounds_reference(&second_input, 4, 4 * replays));

    let input = gpu.upload(&vec![1u32; 1000]).unwrap();
    let mut out = gpu.zeros::<u32>(1000).unwrap();
    let checked = Launch::new().bounds_checks(true).blocks(2).threads(128);
    let capture = gpu.capture().unwrap();
    let faulty = reads_past_the_end::submit_with(capture.gpu(), &checked, &input, &mut out).unwrap();
    let graph = capture.finish(vec![faulty]).unwrap();
    match graph.replay() {
        Err(Error::OutOfBounds { array, .. }) => assert_eq!(array, "input"),
        other => panic!("expected OutOfBounds at replay(), got {other:?}"),
    }
    drop(graph);

    // A split run is recorded too, its segments replayed as its host code launched them.
    let split = launch.clone().barrier(Barrier::MultiLaunch);
    let (mut e, mut f) = (gpu.upload(&first_input).unwrap(), gpu.zeros::<u32>(n).unwrap());
    let (mut g, mut h) = (gpu.upload(&second_input).unwrap(), gpu.zeros::<u32>(n).unwrap());
    {
        let capture = gpu.capture().unwrap();
        let fused = rotate_rounds::submit_with(capture.gpu(), &launch, &mut e, &mut f, 3, 2).unwrap();
        let segments = rotate_rounds::submit_with(capture.gpu(), &split, &mut g, &mut h, 4, 4).unwrap();
        let graph = capture.finish(vec![fused, segments]).unwrap();
        for _ in 0..replays {
            graph.replay().unwrap();
        }
    }
    assert_eq!(gpu.download(&e).unwrap(), rotate_rounds_reference(&first_input, 3, 2 * replays), "fused");
    assert_eq!(gpu.download(&g).unwrap(), rotate_rounds_reference(&second_input, 4, 4 * replays), "split");
    // One whose host code reads the device to decide what to launch cannot be.
    let (mut flag, mut data) = (gpu.upload(&[2u32]).unwrap(), gpu.zeros::<u32>(64).unwrap());
    let capture = gpu.capture().unwrap();
    let reads = countdown::submit_with(capture.gpu(), &split, &mut flag, &mut data).map(drop);
    assert!(matches!(reads, Err(Error::Capture { .. })), "{reads:?}");
    let spoiled = capture.finish(Vec::new()).map(drop);
    assert!(matches!(spoiled, Err(Error::Capture { .. })), "a capture with a launch recorded in part: {spoiled:?}");

    let capture = gpu.capture().unwrap();
    let blocking = rotate_rounds::launch_with(capture.gpu(), &launch, &mut a, &mut b, 3, 2);
    assert!(matches!(blocking, Err(Error::Capture { .. })), "{blocking:?}");
    let blocking_split = rotate_rounds::launch_with(capture.gpu(), &split, &mut a, &mut b, 3, 2);
    assert!(matches!(blocking_split, Err(Error::Capture { .. })), "{blocking_split:?}");
    let copy = capture.gpu().upload(&[1u32]).map(drop);
    assert!(matches!(copy, Err(Error::Capture { .. })), "an upload on the capture's Gpu: {copy:?}");
    let _recorded = rotate_rounds::submit_with(capture.gpu(), &launch, &mut c, &mut d, 3, 2).unwrap();
    let missing = capture.finish(Vec::new()).map(drop);
    assert!(matches!(missing, Err(Error::Capture { .. })), "{missing:?}");
    // Once finished, the capture's Gpu runs what it is given.
    let (mut e, mut f) = (gpu.upload(&first_input).unwrap(), gpu.zeros::<u32>(n).unwrap());
    rotate_rounds::submit_with(capture.gpu(), &launch, &mut e, &mut f, 3, 2).unwrap().wait().unwrap();
    assert_eq!(gpu.download(&e).unwrap(), rotate_rounds_reference(&first_input, 3, 2));
}

/// A launch refused before it runs (here a block of 2048 threads) is refused by `submit`
/// itself, on either backend.
pub fn a_refused_launch_is_refused_by_submit(gpu: &Gpu) {
    let (mut a, mut b) = (gpu.zeros::<u32>(64).unwrap(), gpu.zeros::<u32>(64).unwrap());
    let launch = Launch::new().blocks(1).threads(2048);
    let refused = rotate_rounds::submit_with(gpu, &launch, &mut a, &mut b, 1, 2).map(drop);
    assert!(refused.as_ref().is_err_and(|error| error.kind() == gsync::ErrorKind::Configuration), "{refused:?}");
}

/// Two streams each queue fused launches of the largest co-resident grid under a software
/// barrier: run at once they would each be resident only in part and wait for each other's
/// blocks; they take turns, and each computes its result.
pub fn full_grids_on_two_streams_take_turns(gpu: &Gpu) {
    let side = gpu.new_stream().unwrap();
    // The emulator runs every grid at once, and its largest grid would take long on 2 cores.
    let emulated = gpu.backend() == Backend::Emulator;
    let (n, shift, rounds) = if emulated { (4096, 9, 4) } else { (1 << 16, 9, 40) };
    let input = words(n, 21);
    let launch = Launch::new().threads(256).barrier(Barrier::Lbs).watchdog(Some(std::time::Duration::from_secs(2)));
    let most = rotate_rounds::max_coresident_blocks(gpu, &launch).unwrap();
    let blocks = if emulated { most.min(16) } else { most };
    let launch = launch.blocks(blocks);
    let mut pairs: Vec<(DeviceBuffer<u32>, DeviceBuffer<u32>)> =
        (0..6).map(|_| (gpu.upload(&input).unwrap(), gpu.zeros::<u32>(n).unwrap())).collect();
    let pending: Vec<Pending<'_>> = pairs
        .iter_mut()
        .enumerate()
        .map(|(i, (a, b))| {
            let on = if i % 2 == 0 { gpu } else { &side };
            rotate_rounds::submit_with(on, &launch, a, b, shift, rounds).unwrap()
        })
        .collect();
    for (i, pending) in pending.into_iter().enumerate() {
        pending.wait().unwrap_or_else(|error| panic!("launch {i} of {blocks} blocks: {error}"));
    }
    let expected = rotate_rounds_reference(&input, shift, rounds);
    for (i, (a, _)) in pairs.iter().enumerate() {
        assert_eq!(gpu.download(a).unwrap(), expected, "launch {i}");
    }
}
