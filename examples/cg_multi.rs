//! Conjugate gradients for the 2-D Poisson equation across the GPUs of this machine: every
//! iteration in one kernel, the dot products reduced across GPUs
//! (`gsync::kernels::cg_team`). One GPU against the team, each PE's rows of the solution
//! checked bit for bit against the one-GPU solution of the same system.
//!
//! ```text
//! cargo run --release --example cg_multi -- --gpus 2
//! ```

mod common;

use clap::Parser;
use gsync::kernels::cg_team::{cg_strip, solve_strips, solver};
use gsync::prelude::*;
use gsync::Team;
use std::process::ExitCode;
use std::time::Duration;

/// Times conjugate gradients on one GPU and across a team.
#[derive(Parser)]
struct Args {
    /// GPUs in the team, one process each.
    #[arg(long, default_value_t = 2)]
    gpus: u32,
    /// Grid sides (unknowns: m²).
    #[arg(long, value_delimiter = ',', default_values_t = [4096usize, 8192])]
    m: Vec<usize>,
    /// Iterations, three phases each.
    #[arg(long, default_value_t = 100)]
    iterations: u32,
    /// Timed repetitions after one warm-up; the median is reported.
    #[arg(long, default_value_t = 3)]
    reps: usize,
}

fn main() -> ExitCode {
    common::exit_code(run(&Args::parse()))
}

fn run(args: &Args) -> Result<(), common::AnyError> {
    Team::cuda(args.gpus)?.run(|gpu| {
        let alone = Gpu::cuda(gpu.pe() as usize)?;
        if gpu.pe() == 0 {
            println!(
                "# Conjugate gradients, {} iterations, {} and {} PEs (ms per run, median of {}; the team in the block size and barrier of the grid fastest on one GPU of six that fill half or all of each SM, with as many of its blocks as fit)\n",
                args.iterations,
                gpu.info().name,
                gpu.n_pes(),
                args.reps
            );
            println!(
                "| grid | 1 GPU (ms) | {} GPUs (ms) | speed-up | µs per iteration, team | split (ms) | split, graph (ms) | fused vs best split |",
                gpu.n_pes()
            );
            println!("|---|---:|---:|---:|---:|---:|---:|---:|");
        }
        for &m in &args.m {
            let b: Vec<f32> = (0..m * m).map(|i| ((i.wrapping_mul(7919)) % 1000) as f32 / 100.0 - 5.0).collect();
            let time = |on: &Gpu, launch: &Launch| {
                common::timed(args.reps, || solve_strips(on, launch, &b, m, args.iterations))
            };
            let fastest = common::fastest_grid(
                &alone,
                |shape| solver::cg_strips::max_coresident_blocks(&alone, shape),
                |launch| solve_strips(&alone, launch, &b, m, args.iterations),
            )?;
            let (one, tuned, whole) = time(&alone, &fastest)?;
            // The same block size and barrier; as many of the tuned blocks as a PE's kernel, which
            // holds the spanning barrier, can keep resident.
            let shape = Launch::new().threads(tuned.threads).barrier(tuned.barrier);
            let blocks = tuned.blocks.min(solver::cg_strips::max_coresident_blocks(gpu, &shape)?);
            let pinned = shape.blocks(blocks);
            let (first, mine, _) = cg_strip(m, gpu.pe(), gpu.n_pes());
            // One GPU ran the same kernel on the whole grid, in another configuration: the
            // dot products' order does not depend on it, so the rows must agree bit for bit.
            let want = &whole[first * m..(first + mine) * m];
            let team_time = |launch: &Launch| -> gsync::Result<Duration> {
                let (time, report, rows) = time(gpu, launch)?;
                assert!(
                    common::same_bits(&rows, want),
                    "PE {}: the team's rows ({}) differ from one GPU's solution at m = {m}",
                    gpu.pe(),
                    report.barrier
                );
                Ok(time)
            };
            let team = team_time(&pinned)?;
            // Split, each launch may have every block the GPU holds.
            let split = Launch::new().threads(tuned.threads).blocks(tuned.blocks).barrier(Barrier::MultiLaunch);
            let (split_stream, split_graph) = (team_time(&split)?, team_time(&split.graph(true))?);
            if gpu.pe() == 0 {
                let ms = |t: Duration| t.as_secs_f64() * 1e3;
                let (one_ms, team_ms) = (ms(one), ms(team));
                println!(
                    "| {m}² | {one_ms:.2} | {team_ms:.2} | {:.2}× | {:.1} | {:.2} | {:.2} | {:.2}× |",
                    one_ms / team_ms,
                    team_ms * 1e3 / f64::from(args.iterations),
                    ms(split_stream),
                    ms(split_graph),
                    ms(split_stream).min(ms(split_graph)) / team_ms
                );
            }
        }
        Ok(())
    })?;
    Ok(())
}
