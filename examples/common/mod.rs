//! What the examples share: how they exit, which barriers `--barrier` names,
//! the launch their options describe, the median of their timed runs, and the head start
//! that keeps a launch's submission out of its time.
#![allow(dead_code)] // each example uses what it needs

use gsync::{Barrier, Error, Launch};
use std::process::ExitCode;
use std::time::Duration;

pub mod head_start;

/// Any error an example reports before exiting.
pub type AnyError = Box<dyn std::error::Error>;

/// Prints an error and exits with failure, or exits with success.
pub fn exit_code(result: Result<(), AnyError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The median of `times` (the upper one of an even count); `None` when there are none.
pub fn median(mut times: Vec<Duration>) -> Option<Duration> {
    times.sort();
    times.get(times.len() / 2).copied()
}

/// The barriers `--barrier` names: one, several separated by commas, or with
/// `all` every barrier plus ILBS with the research paper's 6 groups.
pub fn barriers(arg: &str) -> Result<Vec<Barrier>, AnyError> {
    if arg == "all" {
        let mut all = Barrier::ALL.to_vec();
        all.push(Barrier::Ilbs { groups: Some(6) });
        Ok(all)
    } else {
        Ok(arg.split(',').map(str::parse).collect::<Result<_, _>>()?)
    }
}

/// Runs `run` once to warm up, then `reps` times: the median of the timed runs' GPU times,
/// and the last run's report and output (`Duration::ZERO` when `reps` is 0).
pub fn timed<T>(
    reps: usize,
    mut run: impl FnMut() -> gsync::Result<(T, gsync::LaunchReport)>,
) -> gsync::Result<(Duration, gsync::LaunchReport, T)> {
    let (mut output, mut report) = run()?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        (output, report) = run()?;
        times.push(report.gpu_time);
    }
    Ok((median(times).unwrap_or_default(), report, output))
}

/// Whether `a` and `b` hold the same floats, bit for bit.
pub fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Whether `e` is a barrier refusing this grid (LFS beyond its block size,
/// ILBS with more groups than blocks): a row to report, not a failure.
pub fn barrier_refused(e: &(dyn std::error::Error + 'static)) -> bool {
    matches!(e.downcast_ref::<Error>(), Some(Error::BarrierBlockLimit { .. } | Error::InvalidBarrier { .. }))
}

/// A launch with `barrier` and, where given, the grid and block size.
pub fn launch(barrier: Barrier, blocks: Option<u32>, threads: Option<u32>) -> Launch {
    let mut launch = Launch::new().barrier(barrier);
    if let Some(b) = blocks {
        launch = launch.blocks(b);
    }
    if let Some(t) = threads {
        launch = launch.threads(t);
    }
    launch
}

/// `n` pseudo-random floats in [0, 1) from a fixed xorshift sequence: the same input on every
/// run and machine.
pub fn xorshift_floats(n: usize) -> Vec<f32> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect()
}

/// µs per phase boundary of `empty_phases` under `launch` on `gpu` (alone or a PE of a team):
/// the median over `reps` of (t(2P) − t(P)) / P, the last phase's write checked; and the
/// barrier that ran.
pub fn boundary(
    gpu: &gsync::Gpu,
    launch: &Launch,
    marker: &mut gsync::DeviceBuffer<u32>,
    phases: u32,
    reps: usize,
) -> gsync::Result<(f64, Barrier)> {
    use gsync::kernels::empty_phases;
    let ran = empty_phases::launch_with(gpu, launch, marker, phases)?.barrier;
    let mut samples = Vec::with_capacity(reps);
    for _ in 0..reps {
        let short = empty_phases::launch_with(gpu, launch, marker, phases)?.gpu_time;
        let long = empty_phases::launch_with(gpu, launch, marker, 2 * phases)?.gpu_time;
        samples.push((long.as_secs_f64() - short.as_secs_f64()) * 1e6 / f64::from(phases));
    }
    assert_eq!(gpu.download(marker)?[0], 2 * phases - 1, "the last phase's write");
    samples.sort_by(f64::total_cmp);
    Ok((samples[samples.len() / 2], ran))
}

/// On every PE of a team: one phase boundary on the PE's GPU alone beside the same boundary
/// spanning the team, in the same run, for grids of 1, SMs and 2 × SMs blocks of each of
/// `threads`, under the cooperative barrier, the counter barriers and the split form (launched
/// on the stream, and replayed as a CUDA graph); PE 0 prints the table.
pub fn spanning_table(gpu: &gsync::Gpu, phases: u32, reps: usize, threads: &[u32]) -> gsync::Result<()> {
    let alone = gsync::Gpu::cuda(gpu.pe() as usize)?;
    let sms = gpu.info().sm_count;
    let lead = gpu.pe() == 0;
    if lead {
        println!(
            "\n## One phase boundary (µs, median of {reps}): {} alone, and spanning {} PEs\n",
            gpu.info().name,
            gpu.n_pes()
        );
        println!("| blocks x threads | barrier | one GPU | spanning | spanning - one GPU |");
        println!("|---|---|---:|---:|---:|");
    }
    let mut marker_alone = alone.zeros::<u32>(1)?;
    let mut marker = gpu.zeros::<u32>(1)?;
    for &threads in threads {
        for blocks in [1, sms, 2 * sms] {
            let forms = [
                (Barrier::Cooperative, false),
                (Barrier::Relay, false),
                (Barrier::Lbs, false),
                (Barrier::MultiLaunch, false),
                (Barrier::MultiLaunch, true),
            ];
            for (barrier, graph) in forms {
                let launch = Launch::new().barrier(barrier).blocks(blocks).threads(threads).graph(graph);
                let (one, _) = boundary(&alone, &launch, &mut marker_alone, phases, reps)?;
                let (span, _) = boundary(gpu, &launch, &mut marker, phases, reps)?;
                let form = if graph { format!("{barrier}, graph") } else { barrier.to_string() };
                if lead {
                    println!("| {blocks} x {threads} | {form} | {one:.2} | {span:.2} | {:.2} |", span - one);
                }
            }
        }
    }
    Ok(())
}

/// Grids a benchmark's one-GPU baseline tries, as (threads per block, blocks per SM): every
/// SM full (2048 threads) or half full, in blocks of 256 to 1024 threads.
const SWEPT_GRIDS: [(u32, u32); 6] = [(256, 8), (512, 4), (1024, 2), (256, 4), (512, 2), (1024, 1)];

/// The fastest of [`SWEPT_GRIDS`] on `gpu` for `run` (a warm-up, then one timed run each),
/// each capped at the grid that `max_blocks` says stays co-resident, the barrier `Auto` picks
/// for it: a deterministic baseline, where the first launch's tuning would stop at its time
/// budget, which compilation eats into. Grids that cannot run here are skipped.
pub fn fastest_grid<T>(
    gpu: &gsync::Gpu,
    max_blocks: impl Fn(&Launch) -> gsync::Result<u32>,
    mut run: impl FnMut(&Launch) -> gsync::Result<(T, gsync::LaunchReport)>,
) -> gsync::Result<Launch> {
    let mut best: Option<(Duration, Launch)> = None;
    for (threads, per_sm) in SWEPT_GRIDS {
        let shape = Launch::new().threads(threads);
        let blocks = match max_blocks(&shape) {
            Ok(max) => (per_sm * gpu.info().sm_count).min(max),
            Err(error) if error.kind() == gsync::ErrorKind::Configuration => continue,
            Err(error) => return Err(error),
        };
        let launch = shape.blocks(blocks);
        let measured = run(&launch).and_then(|_| run(&launch));
        match measured {
            Ok((_, report)) => {
                let pinned = launch.barrier(report.barrier);
                if best.as_ref().is_none_or(|(time, _)| report.gpu_time < *time) {
                    best = Some((report.gpu_time, pinned));
                }
            }
            Err(error) if error.kind() == gsync::ErrorKind::Configuration => continue,
            Err(error) => return Err(error),
        }
    }
    Ok(best.map_or_else(Launch::new, |(_, launch)| launch))
}
