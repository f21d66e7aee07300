//! Repeated 3-point smoothing as one fused kernel: `--rounds` phases
//! separated by `grid_sync()`, verified against the CPU bit for bit.
//!
//! ```text
//! cargo run --release --example smooth -- --n 1000000 --rounds 1000
//! ```

mod common;

use clap::Parser;
use gsync::kernels::{smooth, smooth_reference};
use gsync::prelude::*;
use std::process::ExitCode;

/// Smooths random data on the GPU and checks the result on the CPU.
#[derive(Parser)]
struct Args {
    /// Number of elements (default 2^20 on a GPU, 2^14 on the CPU emulator).
    #[arg(long)]
    n: Option<usize>,
    /// Number of smoothing rounds, one phase each (default 1000 on a GPU, 100 on the emulator).
    #[arg(long)]
    rounds: Option<u32>,
    /// Blocks in the grid (default: tuned on the first launch).
    #[arg(long)]
    blocks: Option<u32>,
    /// Threads per block (default: tuned on the first launch).
    #[arg(long)]
    threads: Option<u32>,
    /// How phases are separated: auto, cooperative, lbs, lfs, ilbs, ilbs:G, ulfs, relay or multi-launch.
    #[arg(long, default_value = "auto")]
    barrier: Barrier,
    /// Timed repetitions after one warm-up launch; the median is reported.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Print the generated CUDA and exit.
    #[arg(long)]
    print_cuda: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.print_cuda {
        println!("{}", smooth::cuda_source());
        return ExitCode::SUCCESS;
    }
    common::exit_code(run(&args))
}

fn run(args: &Args) -> Result<(), common::AnyError> {
    let gpu = Gpu::new(0)?; // falls back to the CPU emulator without a CUDA GPU
    let info = gpu.info();
    let emulated = gpu.backend() == Backend::Emulator;
    if emulated {
        println!("{} ({} cores)", info.name, info.sm_count);
    } else {
        println!(
            "{} ({} SMs, sm_{}{})",
            info.name, info.sm_count, info.compute_capability.0, info.compute_capability.1
        );
    }
    let n = args.n.unwrap_or(if emulated { 1 << 14 } else { 1 << 20 });
    let rounds = args.rounds.unwrap_or(if emulated { 100 } else { 1000 });

    let input = common::xorshift_floats(n);

    let launch = common::launch(args.barrier, args.blocks, args.threads);
    let mut times = Vec::new();
    let mut result = Vec::new();
    for rep in 0..=args.reps {
        let mut a = gpu.upload(&input)?;
        let mut b = gpu.upload(&vec![0.0f32; n])?;
        let report = smooth::launch_with(&gpu, &launch, &mut a, &mut b, rounds)?;
        if rep == 0 {
            println!("grid: {} blocks × {} threads, barrier: {}", report.blocks, report.threads, report.barrier);
            result = gpu.download(if rounds.is_multiple_of(2) { &a } else { &b })?;
        } else {
            times.push(report.gpu_time);
        }
    }
    let expected = smooth_reference(&input, rounds);
    if let Some(i) = (0..n).find(|&i| result[i].to_bits() != expected[i].to_bits()) {
        return Err(format!("mismatch at index {i}: GPU {} vs CPU {}", result[i], expected[i]).into());
    }
    times.sort();
    if let Some(median) = times.get(times.len() / 2) {
        let per_phase = median.as_secs_f64() * 1e6 / f64::from(rounds.max(1));
        println!(
            "{} elements, {} rounds: median {:.3} ms ({:.2} µs per phase)",
            n,
            rounds,
            median.as_secs_f64() * 1e3,
            per_phase
        );
    }
    println!("verified: all {} elements match the CPU bit for bit", n);
    Ok(())
}
