//! One kernel across the GPUs of this machine: a team of PEs, one process per GPU, whose
//! `grid_sync()` spans them all. Checks what the language promises across GPUs, then times a
//! spanning phase boundary beside the same boundary on one GPU, in the same run.
//!
//! ```text
//! cargo run --release --example multi_gpu -- --gpus 2
//! ```
//!
//! Every check is verified on every PE; a failed one ends that PE's process, and the team with
//! it. Timings: a phase boundary costs (t(2P) − t(P)) / P of `empty_phases`, the median of
//! `--reps`, on each PE's GPU alone and across the team.

mod common;

use ::common::team::kernels::{gather_sum, reach_out, read_after_put, ring_sum, uneven_segments, visibility};
use ::common::team::signals::pass_on;
use ::common::team_ranges;
use clap::Parser;
use gsync::kernels::empty_phases;
use gsync::prelude::*;
use gsync::Team;
use std::process::ExitCode;

/// Checks and times a team of GPUs.
#[derive(Parser)]
struct Args {
    /// GPUs in the team, one process each.
    #[arg(long, default_value_t = 2)]
    gpus: u32,
    /// Elements per PE of the ring and gather checks.
    #[arg(long, default_value_t = 1 << 20)]
    n: usize,
    /// Phases of the visibility stress.
    #[arg(long, default_value_t = 10_000)]
    stress_phases: u32,
    /// Phases per timing (P); the second run uses 2P.
    #[arg(long, default_value_t = 2000)]
    phases: u32,
    /// Timings per figure; the median is printed.
    #[arg(long, default_value_t = 7)]
    reps: usize,
    /// Skip the timings.
    #[arg(long)]
    checks_only: bool,
    /// End with a PE that does not arrive in the split form (between two segments) instead
    /// of at a fused kernel's grid_sync(): either leaves the team broken, so a run checks one.
    #[arg(long)]
    split_failure: bool,
    /// End with a PE that never comes to a launch (PE 1 sleeps past the others' deadline)
    /// instead of one that stops inside a kernel.
    #[arg(long)]
    absent_pe: bool,
}

fn main() -> ExitCode {
    common::exit_code(run(&Args::parse()))
}

fn run(args: &Args) -> Result<(), common::AnyError> {
    // In the starting process this starts the PEs and waits; in each PE it runs the body.
    let team = Team::cuda(args.gpus)?.run(|gpu| {
        checks(gpu, args)?;
        if !args.checks_only {
            common::spanning_table(gpu, args.phases, args.reps, &[128, 256])?;
        }
        // Last: it leaves the PEs' crossing counts apart, which ends the team's use.
        if args.absent_pe {
            a_pe_that_never_launches(gpu)?;
        } else {
            a_pe_that_does_not_arrive(gpu, args.split_failure)?;
        }
        Ok(())
    });
    match team {
        // PE 1 came back after PE 0 had given up on it: its own end of the team finds PE 0
        // gone, an error, instead of a collective end that would wait for PE 0 forever.
        Err(Error::TeamFailed { detail, .. }) if args.absent_pe && detail.contains("PE 1 failed first") => {
            println!("PASS: the absent PE, back after PE 0 left, ends with an error instead of waiting: {detail}");
            Ok(())
        }
        outcome => Ok(outcome.map(drop)?),
    }
}

/// Prints a line from PE 0 only.
fn say(gpu: &Gpu, line: &str) {
    if gpu.pe() == 0 {
        println!("{line}");
    }
}

fn checks(gpu: &Gpu, args: &Args) -> gsync::Result<()> {
    let (pe, n_pes, n) = (gpu.pe(), gpu.n_pes(), args.n);
    say(gpu, &format!("# A team of {n_pes} PEs: {} and its peers", gpu.info().name));
    let start = |pe: u32| -> Vec<u32> { (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) ^ pe).collect() };
    // One round: every value moves to the next PE.
    let mut acc = gpu.symmetric_upload(&start(pe))?;
    let mut inbox = gpu.symmetric_zeros::<u32>(n)?;
    ring_sum::launch(gpu, &mut acc, &mut inbox, 1)?;
    assert_eq!(gpu.download(&acc)?, start((pe + n_pes - 1) % n_pes), "PE {pe}: one round of the ring");
    // n_pes more rounds: back where each began, one round on.
    ring_sum::launch(gpu, &mut acc, &mut inbox, n_pes)?;
    assert_eq!(gpu.download(&acc)?, start((pe + n_pes - 1) % n_pes), "PE {pe}: n_pes rounds of the ring");
    say(gpu, &format!("PASS: put and the spanning grid_sync() move {n} values around the ring"));
    for graph in [false, true] {
        // The split form: a launch per segment on every PE, crossing between them.
        let split = Launch::new().barrier(Barrier::MultiLaunch).graph(graph);
        ring_sum::launch_with(gpu, &split, &mut acc, &mut inbox, 2)?;
        assert_eq!(gpu.download(&acc)?, start((pe + 3 * n_pes - 3) % n_pes), "PE {pe}: the split ring");
        // Each value is 3 PEs on; these rounds take it back to 1 PE on, where the fused
        // rounds left it, for the checks below.
        let back = (n_pes - 2 % n_pes) % n_pes;
        ring_sum::launch_with(gpu, &split, &mut acc, &mut inbox, back)?;
    }
    assert_eq!(gpu.download(&acc)?, start((pe + n_pes - 1) % n_pes), "PE {pe}: the split rounds");
    say(gpu, "PASS: the split form (stream launches, and a CUDA graph) moves the values around the ring");

    let mine: Vec<u64> = (0..n as u64).map(|i| i * u64::from(pe + 1)).collect();
    let values = gpu.symmetric_upload(&mine)?;
    let mut sums = gpu.zeros::<u64>(n)?;
    gather_sum::launch(gpu, &values, &mut sums)?;
    let factor = u64::from(n_pes * (n_pes + 1) / 2);
    assert_eq!(gpu.download(&sums)?, (0..n as u64).map(|i| i * factor).collect::<Vec<_>>(), "PE {pe}: get");
    say(gpu, "PASS: get reads every PE's part");

    let blocks = gpu.info().sm_count;
    let mut stamps = gpu.symmetric_zeros::<u32>((n_pes * blocks) as usize)?;
    let mut misses = gpu.zeros::<u32>(1)?;
    let launch = Launch::new().blocks(blocks).threads(256);
    for launch in [launch.clone(), launch.barrier(Barrier::MultiLaunch)] {
        let report = visibility::launch_with(gpu, &launch, &mut stamps, &mut misses, args.stress_phases)?;
        assert_eq!(gpu.download(&misses)?[0], 0, "PE {pe}: a phase missed another PE's write ({})", report.barrier);
        say(
            gpu,
            &format!(
                "PASS: {} phases of {blocks} x 256 on every PE ({}), each seeing every PE's writes of the phase before",
                args.stress_phases, report.barrier
            ),
        );
    }

    let mut a = gpu.symmetric_zeros::<u32>(4)?;
    let error = reach_out::launch(gpu, &mut a, n_pes).expect_err("a PE out of the team");
    assert!(matches!(error, Error::NoSuchPe { .. }), "PE {pe}: {error}");
    say(gpu, &format!("PASS: a PE out of the team is a typed error: {error}"));

    let mut plain = gpu.zeros::<u32>(4)?;
    let error = reach_out::launch(gpu, &mut plain, 0).expect_err("not symmetric");
    assert!(matches!(error, Error::NotSymmetric { .. }), "PE {pe}: {error}");
    say(gpu, &format!("PASS: a plain buffer for a #[symmetric] parameter is refused: {error}"));

    let mut inbox = gpu.symmetric_zeros::<u32>(4096)?;
    let mut flags = gpu.symmetric_zeros::<u64>(1)?;
    let mut out = gpu.zeros::<u32>(4096)?;
    for round in 1..=100u64 {
        pass_on::launch_with(gpu, &Launch::new().blocks(2).threads(256), &mut inbox, &mut flags, &mut out, round)?;
        let from = (pe + n_pes - 1) % n_pes;
        assert_eq!(
            gpu.download(&out)?,
            (0..4096u32).map(|i| i * 10 + from).collect::<Vec<_>>(),
            "PE {pe}: round {round}"
        );
    }
    say(gpu, "PASS: 100 rounds of put, then signal and wait, hand 4096 values to the next PE without a grid barrier");

    // gpu_sync(): each PE waits for its own blocks, as many times as it calls it (PE p makes
    // p more rounds than PE 0), fused and split; then one spanning grid_sync().
    for barrier in [Barrier::Auto, Barrier::MultiLaunch] {
        ::common::team::local_rounds_match_the_cpu(gpu, barrier, &Launch::new())?;
    }
    say(gpu, "PASS: gpu_sync() rounds that differ between PEs, then a spanning grid_sync() (fused and split)");

    // Split runs cross at every grid_sync() whatever segments each PE launched between them,
    // and a host read after one sees the other PEs' puts.
    for barrier in [Barrier::Auto, Barrier::MultiLaunch] {
        let launch = Launch::new().barrier(barrier);
        let mut a = gpu.symmetric_zeros::<u32>(4096)?;
        let mut inbox = gpu.symmetric_zeros::<u32>(4096)?;
        uneven_segments::launch_with(gpu, &launch, &mut a, &mut inbox)?;
        let sent = |p: u32| if p == 0 { 11 } else { 10 };
        assert!(gpu.download(&a)?.iter().all(|&v| v == sent(pe)), "PE {pe}, {barrier}: its own part");
        let from = (pe + n_pes - 1) % n_pes;
        assert!(gpu.download(&inbox)?.iter().all(|&v| v == sent(from)), "PE {pe}, {barrier}: PE {from}'s part");
        let mut work = gpu.zeros::<u32>(1 << 20)?;
        let mut out = gpu.zeros::<u32>(4096)?;
        let mut inbox = gpu.symmetric_zeros::<u32>(4)?;
        read_after_put::launch_with(gpu, &launch, &mut inbox, &mut work, &mut out)?;
        assert!(gpu.download(&out)?.iter().all(|&v| v == 7), "PE {pe}, {barrier}: a read after grid_sync()");
    }
    say(gpu, "PASS: PEs that launch different segments cross at every grid_sync(), and a host read after one sees the puts (fused and split)");

    // Ranges: put_range of every block to the next PE (fused and split), half precision bit
    // for bit, and a halo exchange by put_range_signal and waits alone, no grid barrier.
    for barrier in [Barrier::Auto, Barrier::MultiLaunch] {
        team_ranges::ring_ranges_match_the_cpu(gpu, barrier, |pe| {
            (0..3000u32).map(|i| f32::from_bits(i.wrapping_mul(2_654_435_761) ^ pe)).collect::<Vec<f32>>()
        })?;
        team_ranges::ring_ranges_match_the_cpu(gpu, barrier, |pe| {
            (0..3000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ u64::from(pe)).collect::<Vec<u64>>()
        })?;
        team_ranges::shared_tiles_reach_the_next_pe(gpu, barrier)?;
    }
    team_ranges::half_ranges_keep_their_bits(gpu)?;
    let (cells, w, steps) = (4096usize, 32usize, 300u32);
    let line: Vec<u32> =
        (0..n_pes as usize * cells + 2 * w).map(|i| (i as u32).wrapping_mul(2_654_435_761) >> 8).collect();
    let expected = team_ranges::halo_steps_reference(&line, w, steps);
    let mine = team_ranges::halo_steps_on(gpu, &line, cells, w, steps)?;
    let first = w + pe as usize * cells;
    assert_eq!(mine, expected[first..first + cells], "PE {pe}: the halo exchange by signals");
    say(
        gpu,
        &format!(
            "PASS: put_range rings of f32 and u64 and shared tiles (fused and split), f16 bits, and {steps} halo \
             exchanges by put_range_signal without a grid barrier"
        ),
    );

    // A PE's build is compiled for the blocks per SM its GPU alone keeps of the same kernel, or
    // fewer where that would make it spill more than the one-GPU build (gsync-runtime's
    // cuda/fit.rs); the launch's co-residency is the driver's answer for the build loaded.
    let alone = Gpu::cuda(pe as usize)?;
    for threads in [256, 512, 1024] {
        let shape = Launch::new().threads(threads);
        let (team, one) = (
            gsync::kernels::cg_team::solver::cg_strips::max_coresident_blocks(gpu, &shape)?,
            gsync::kernels::cg_team::solver::cg_strips::max_coresident_blocks(&alone, &shape)?,
        );
        say(gpu, &format!("cg_strips, {threads} threads: {team} blocks resident on the team, {one} alone"));
        let (team, one) = (
            gsync::kernels::heat_team::heat_strips::max_coresident_blocks(gpu, &shape)?,
            gsync::kernels::heat_team::heat_strips::max_coresident_blocks(&alone, &shape)?,
        );
        say(gpu, &format!("heat_strips, {threads} threads: {team} blocks resident on the team, {one} alone"));
    }

    // PE 1 asks for a grid that cannot be co-resident: no PE launches.
    let blocks = if pe == 1 { 1 << 20 } else { 1 };
    let error = ring_sum::launch_with(gpu, &Launch::new().blocks(blocks), &mut acc, &mut inbox, 1)
        .expect_err("refused on PE 1");
    let expected = if pe == 1 {
        matches!(error, Error::GridTooLarge { .. })
    } else {
        matches!(error, Error::TeamRefused { pe: 1, .. })
    };
    assert!(expected, "PE {pe}: {error}");
    say(gpu, &format!("PASS: a grid refused on PE 1 runs on no PE: PE 0 says: {error}"));
    Ok(())
}

/// PE 1 stops after 3 phases, every other PE waits at its 4th `grid_sync()` (or, `split`, at
/// the crossing before its 4th segment): the watchdog ends their launches with an error
/// naming PE 1, in about the limit.
fn a_pe_that_does_not_arrive(gpu: &Gpu, split: bool) -> gsync::Result<()> {
    let pe = gpu.pe();
    let limit = std::time::Duration::from_millis(200);
    let mut launch = Launch::new().blocks(gpu.info().sm_count).watchdog(Some(limit));
    if split {
        launch = launch.barrier(Barrier::MultiLaunch);
    }
    let mut marker = gpu.zeros::<u32>(1)?;
    let phases = if pe == 1 { 3 } else { 5 };
    // Every other PE crosses with PE 1 three times, then waits for it.
    let started = std::time::Instant::now();
    let outcome = empty_phases::launch_with(gpu, &launch, &mut marker, phases);
    let took = started.elapsed();
    match (pe, outcome) {
        (1, Ok(_)) => {}
        (_, Err(error @ Error::PeNotArrived { pe: 1, .. })) => {
            assert!(took < limit * 10, "PE {pe} gave up after {took:?}");
            let form = if split { "split" } else { "fused" };
            say(gpu, &format!("PASS ({form}): PE 0 gave up after {took:.0?} (watchdog {limit:?}): {error}"));
        }
        (pe, outcome) => panic!("PE {pe}: {outcome:?}"),
    }
    Ok(())
}

/// PE 1 does not come to a launch until well past the others' deadline: every other PE's
/// launch fails with `Error::TeamTimedOut` in about the deadline, launching nothing.
fn a_pe_that_never_launches(gpu: &Gpu) -> gsync::Result<()> {
    let deadline = std::time::Duration::from_millis(300);
    if gpu.pe() == 1 {
        std::thread::sleep(deadline * 6);
        return Ok(());
    }
    let mut marker = gpu.zeros::<u32>(1)?;
    let started = std::time::Instant::now();
    let outcome = empty_phases::launch_with(gpu, &Launch::new().deadline(Some(deadline)), &mut marker, 4);
    let took = started.elapsed();
    match outcome {
        Err(error @ Error::TeamTimedOut { .. }) => {
            assert!(took < deadline * 5, "PE {} gave up after {took:?}", gpu.pe());
            // The agreement's reduction stays queued on this GPU's stream, waiting for PE 1:
            // nothing more is asked of this GPU.
            say(
                gpu,
                &format!(
                    "PASS: a PE that never launches: PE 0 gave up after {took:.0?} (deadline {deadline:?}): {error}"
                ),
            );
            Ok(())
        }
        outcome => panic!("PE {}: {outcome:?}", gpu.pe()),
    }
}
