//! What one phase boundary costs under every barrier: a benchmark, not a test.
//!
//! ```text
//! cargo run --release --example barrier_cost
//! ```
//!
//! The kernel `empty_phases` runs P nearly empty phases; a boundary costs
//! (t(2P) − t(P)) / P, which cancels the launch itself. Each figure is the
//! median of `--reps` measurements after a warm-up, all variants in one run.

mod common;

use clap::Parser;
use common::AnyError;
use gsync::kernels::empty_phases;
use gsync::prelude::*;
use std::process::ExitCode;

/// Measures the cost of one phase boundary per barrier and grid.
#[derive(Parser)]
struct Args {
    /// Phases per measurement (P); the second run uses 2P.
    #[arg(long, default_value_t = 1000)]
    phases: u32,
    /// Measurements per figure; the median is printed.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Measure only the research paper's setting (32 threads, 7…60 blocks).
    #[arg(long)]
    paper_only: bool,
}

fn main() -> ExitCode {
    common::exit_code(run(&Args::parse()))
}

/// The variants compared: every barrier, and MultiLaunch replayed as a CUDA graph.
fn variants() -> Vec<(String, Launch)> {
    let barriers = [
        Barrier::Cooperative,
        Barrier::Lbs,
        Barrier::Lfs,
        Barrier::Ilbs { groups: None },
        Barrier::Ulfs,
        Barrier::MultiLaunch,
    ];
    let mut v: Vec<(String, Launch)> =
        barriers.into_iter().map(|b| (b.to_string(), Launch::new().barrier(b))).collect();
    v.push(("multi-launch graph".to_string(), Launch::new().barrier(Barrier::MultiLaunch).graph(true)));
    v
}

fn run(args: &Args) -> Result<(), AnyError> {
    let gpu = Gpu::cuda(0)?; // a benchmark of GPU barriers: no emulator fallback
    let info = gpu.info();
    println!("# Cost of one phase boundary (µs, median of {}), {}, {} SMs", args.reps, info.name, info.sm_count);
    let paper: Vec<u32> = (7..=60).collect();
    table(&gpu, args, 32, &paper)?;
    if !args.paper_only {
        let max = empty_phases::max_coresident_blocks(&gpu, &Launch::new().threads(256))?;
        let sms = info.sm_count;
        let mut grids: Vec<u32> = vec![sms / 4, sms / 2, sms, 2 * sms, 4 * sms, max];
        grids.retain(|&g| g >= 1 && g <= max);
        grids.dedup();
        table(&gpu, args, 256, &grids)?;
    }
    Ok(())
}

fn table(gpu: &Gpu, args: &Args, threads: u32, grids: &[u32]) -> Result<(), AnyError> {
    println!("\n## {threads} threads per block\n");
    let variants = variants();
    let names: Vec<&str> = variants.iter().map(|(name, _)| name.as_str()).collect();
    println!("| blocks | {} |", names.join(" | "));
    println!("|---:|{}", "---:|".repeat(variants.len()));
    let mut marker = gpu.zeros::<u32>(1)?;
    for &blocks in grids {
        let mut cells = Vec::new();
        for (_, variant) in &variants {
            let launch = variant.clone().threads(threads).blocks(blocks);
            // LFS waits with one thread of the master block per block.
            if launch.selected_barrier() == Barrier::Lfs && blocks > threads {
                cells.push("–".to_string());
                continue;
            }
            cells.push(format!("{:.2}", boundary_cost(gpu, &launch, &mut marker, args)?));
        }
        println!("| {blocks} | {} |", cells.join(" | "));
    }
    Ok(())
}

/// Median over `reps` of (t(2P) − t(P)) / P, in microseconds.
fn boundary_cost(gpu: &Gpu, launch: &Launch, marker: &mut DeviceBuffer<u32>, args: &Args) -> Result<f64, AnyError> {
    let p = args.phases;
    empty_phases::launch_with(gpu, launch, marker, p)?; // warm-up: compile, load, first touch
    let mut samples = Vec::with_capacity(args.reps);
    for _ in 0..args.reps {
        let short = empty_phases::launch_with(gpu, launch, marker, p)?.gpu_time;
        let long = empty_phases::launch_with(gpu, launch, marker, 2 * p)?.gpu_time;
        samples.push((long.as_secs_f64() - short.as_secs_f64()) * 1e6 / f64::from(p));
    }
    let last = gpu.download(marker)?[0];
    if last != 2 * p - 1 {
        return Err(format!("{}: the last phase wrote {last}, not {}", launch.selected_barrier(), 2 * p - 1).into());
    }
    samples.sort_by(f64::total_cmp);
    Ok(samples[samples.len() / 2])
}
