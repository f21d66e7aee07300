//! Repeated 3-point smoothing as one fused kernel: `--rounds` phases
//! separated by `grid_sync()`, verified against the CPU bit for bit.
//!
//! ```text
//! cargo run --release --example smooth -- --n 1000000 --rounds 1000
//! ```

use clap::Parser;
use gsync::kernels::{smooth, smooth_reference};
use gsync::prelude::*;
use std::process::ExitCode;

/// Smooths random data on the GPU and checks the result on the CPU.
#[derive(Parser)]
struct Args {
    /// Number of elements.
    #[arg(long, default_value_t = 1 << 20)]
    n: usize,
    /// Number of smoothing rounds, one phase each.
    #[arg(long, default_value_t = 1000)]
    rounds: u32,
    /// Blocks in the grid (default: the largest co-resident grid).
    #[arg(long)]
    blocks: Option<u32>,
    /// Threads per block (default: 256).
    #[arg(long)]
    threads: Option<u32>,
    /// How phases are separated: cooperative, lbs, lfs, ilbs, ilbs:G, ulfs or multi-launch.
    #[arg(long, default_value = "cooperative")]
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
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let gpu = Gpu::new(0)?;
    let info = gpu.info();
    println!("{} ({} SMs, sm_{}{})", info.name, info.sm_count, info.compute_capability.0, info.compute_capability.1);

    let mut state = 0x2545_f491_4f6c_dd1du64;
    let input: Vec<f32> = (0..args.n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect();

    let mut launch = Launch::new().barrier(args.barrier);
    if let Some(b) = args.blocks {
        launch = launch.blocks(b);
    }
    if let Some(t) = args.threads {
        launch = launch.threads(t);
    }
    let mut times = Vec::new();
    let mut result = Vec::new();
    for rep in 0..=args.reps {
        let mut a = gpu.upload(&input)?;
        let mut b = gpu.upload(&vec![0.0f32; args.n])?;
        let report = smooth::launch_with(&gpu, &launch, &mut a, &mut b, args.rounds)?;
        if rep == 0 {
            println!("grid: {} blocks × {} threads, barrier: {}", report.blocks, report.threads, report.barrier);
            result = gpu.download(if args.rounds.is_multiple_of(2) { &a } else { &b })?;
        } else {
            times.push(report.gpu_time);
        }
    }
    let expected = smooth_reference(&input, args.rounds);
    if let Some(i) = (0..args.n).find(|&i| result[i].to_bits() != expected[i].to_bits()) {
        return Err(format!("mismatch at index {i}: GPU {} vs CPU {}", result[i], expected[i]).into());
    }
    times.sort();
    if let Some(median) = times.get(times.len() / 2) {
        let per_phase = median.as_secs_f64() * 1e6 / f64::from(args.rounds.max(1));
        println!(
            "{} elements, {} rounds: median {:.3} ms ({:.2} µs per phase)",
            args.n,
            args.rounds,
            median.as_secs_f64() * 1e3,
            per_phase
        );
    }
    println!("verified: all {} elements match the CPU bit for bit", args.n);
    Ok(())
}
