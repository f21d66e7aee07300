//! The 2-D heat equation across the GPUs of this machine: each PE steps a strip of the field
//! and hands its edge rows to its neighbours by put-with-signal, one `gpu_sync()` per step
//! (`gsync::kernels::heat_team`). Strong scaling (one field, 1 GPU against the team) and weak
//! scaling (the field's cells grown with the team), every team result checked bit for bit
//! against the same kernel on one GPU. Beside the fused team, the same kernel split across the
//! team (a launch per step on every PE, launched on the stream and replayed as a CUDA graph).
//!
//! ```text
//! cargo run --release --example heat_multi -- --gpus 2
//! ```

mod common;

use clap::Parser;
use gsync::kernels::heat_team::{heat_strips, run_strips, strip};
use gsync::prelude::*;
use gsync::Team;
use std::process::ExitCode;
use std::time::Duration;

/// Times the heat equation on one GPU and across a team.
#[derive(Parser)]
struct Args {
    /// GPUs in the team, one process each.
    #[arg(long, default_value_t = 2)]
    gpus: u32,
    /// Field sides of the strong-scaling rows.
    #[arg(long, value_delimiter = ',', default_values_t = [4096usize, 8192, 16384])]
    n: Vec<usize>,
    /// One GPU's field sides of the weak-scaling rows (the team's field has about n_pes
    /// times the cells).
    #[arg(long, value_delimiter = ',', default_values_t = [4096usize, 8192])]
    weak: Vec<usize>,
    /// Time steps, one phase each.
    #[arg(long, default_value_t = 200)]
    steps: u32,
    /// Timed repetitions after one warm-up; the median is reported.
    #[arg(long, default_value_t = 3)]
    reps: usize,
}

const R: f32 = 0.2;

fn main() -> ExitCode {
    common::exit_code(run(&Args::parse()))
}

fn run(args: &Args) -> Result<(), common::AnyError> {
    Team::cuda(args.gpus)?.run(|gpu| {
        let alone = Gpu::cuda(gpu.pe() as usize)?;
        if gpu.pe() == 0 {
            println!("# Heat equation, {} steps, {} and {} PEs (ms per run, median of {}; the team in the grid fastest on one GPU of six that fill half or all of each SM)\n", args.steps, gpu.info().name, gpu.n_pes(), args.reps);
            println!(
                "| scaling | field | 1 GPU (ms) | {} GPUs (ms) | speed-up | efficiency | split (ms) | split, graph (ms) | fused vs best split |",
                gpu.n_pes()
            );
            println!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
        }
        for &n in &args.n {
            let times = compare(gpu, &alone, n, n, args)?;
            report(gpu, "strong", n, n, &times);
        }
        for &n in &args.weak {
            // The team's field has about n_pes times the cells of one GPU's.
            let grown = ((n as f64) * f64::from(gpu.n_pes()).sqrt()).round() as usize & !1;
            let times = compare(gpu, &alone, n, grown, args)?;
            report(gpu, "weak", n, grown, &times);
        }
        Ok(())
    })?;
    Ok(())
}

/// Median run times of one comparison.
struct Times {
    /// The kernel on one GPU.
    one: Duration,
    /// Fused across the team.
    team: Duration,
    /// Split across the team, launched on the stream, and replayed as a CUDA graph.
    split: Duration,
    split_graph: Duration,
}

fn report(gpu: &Gpu, scaling: &str, n_one: usize, n_team: usize, times: &Times) {
    if gpu.pe() != 0 {
        return;
    }
    let ms = |t: Duration| t.as_secs_f64() * 1e3;
    let (one_ms, team_ms) = (ms(times.one), ms(times.team));
    let field = if n_one == n_team { format!("{n_one}²") } else { format!("{n_one}² / {n_team}²") };
    let speedup = one_ms / team_ms;
    let efficiency = match scaling {
        "strong" => speedup / f64::from(gpu.n_pes()),
        _ => speedup,
    };
    let best_split = ms(times.split).min(ms(times.split_graph));
    println!(
        "| {scaling} | {field} | {one_ms:.2} | {team_ms:.2} | {speedup:.2}× | {:.0}% | {:.2} | {:.2} | {:.2}× |",
        efficiency * 100.0,
        ms(times.split),
        ms(times.split_graph),
        best_split / team_ms
    );
}

/// The kernel on this PE's GPU alone on an `n_one` field, and across the team on an `n_team`
/// field in the configuration fastest on the GPU alone (`common::fastest_grid`), fused and split; every team run's strip
/// checked bit for bit against the one-GPU run of the same field.
fn compare(gpu: &Gpu, alone: &Gpu, n_one: usize, n_team: usize, args: &Args) -> gsync::Result<Times> {
    let field = |n: usize| -> Vec<f32> { (0..n * n).map(|i| ((i.wrapping_mul(7919)) % 1000) as f32 / 10.0).collect() };
    let time = |on: &Gpu, launch: &Launch, n: usize, input: &[f32]| {
        common::timed(args.reps, || run_strips(on, launch, input, n, args.steps, R))
    };
    let input = field(n_one);
    let fastest = common::fastest_grid(
        alone,
        |shape| heat_strips::max_coresident_blocks(alone, shape),
        |launch| run_strips(alone, launch, &input, n_one, args.steps, R),
    )?;
    let (one, tuned, _) = time(alone, &fastest, n_one, &input)?;
    // The team keeps as many blocks resident as one GPU (checked by multi_gpu); the bound
    // only guards the pinned grid.
    let shape = Launch::new().threads(tuned.threads).barrier(tuned.barrier);
    let pinned = shape.clone().blocks(tuned.blocks.min(heat_strips::max_coresident_blocks(gpu, &shape)?));
    let input = if n_team == n_one { input } else { field(n_team) };
    // The same field on this GPU alone: this PE's strip must match it bit for bit.
    let (whole, _) = run_strips(alone, &pinned, &input, n_team, args.steps, R)?;
    let s = strip(n_team, gpu.pe(), gpu.n_pes())?;
    let want = &whole[(s.first - 1) * n_team..(s.first - 1 + s.mine) * n_team];
    let team_time = |launch: &Launch| -> gsync::Result<Duration> {
        let (time, report, rows) = time(gpu, launch, n_team, &input)?;
        assert!(
            common::same_bits(&rows, want),
            "PE {}: the team's strip ({}) differs from one GPU's result at n = {n_team}",
            gpu.pe(),
            report.barrier
        );
        Ok(time)
    };
    let team = team_time(&pinned)?;
    let split = pinned.clone().barrier(Barrier::MultiLaunch);
    let (split_stream, split_graph) = (team_time(&split)?, team_time(&split.graph(true))?);
    Ok(Times { one, team, split: split_stream, split_graph })
}
