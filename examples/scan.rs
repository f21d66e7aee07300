//! Inclusive prefix sums of random `u32` keys, three ways, each verified against the CPU's
//! scan and timed: a single pass with decoupled look-back (blocks publish their tiles'
//! sums and prefixes in self-describing state words, one to a cache line, and wait for
//! their predecessors' with relaxed loads, no grid barrier), three phases fused into one
//! kernel by `grid_sync()`, and the same three phases split into one launch per phase, on
//! the stream and replayed as a CUDA graph.
//!
//! ```text
//! cargo run --release --example scan                  # 2^24 keys on a GPU, 2^16 on the emulator
//! cargo run --release --example scan -- --n 1000000 --reps 20
//! ```
//!
//! Bandwidth counts the bytes a scan must move at least: every key read once and every sum
//! written once, 8 bytes per key.

mod common;

use clap::Parser;
use common::head_start::HeadStart;
use common::AnyError;
use gsync::kernels::scan::{self, scan_three_phase, ScanScratch};
use gsync::prelude::*;
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::process::ExitCode;

/// Scans random keys on the GPU (or the CPU emulator) and checks the result.
#[derive(Parser)]
struct Args {
    /// Number of keys (default 2^24 on a GPU, 2^16 on the emulator).
    #[arg(long)]
    n: Option<usize>,
    /// Blocks in the grid (default: the launch's own choice).
    #[arg(long)]
    blocks: Option<u32>,
    /// Threads per block, a multiple of 32 that divides the tile (default 256).
    #[arg(long)]
    threads: Option<u32>,
    /// Seed of the random keys.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Timed repetitions after one warm-up; the median is reported.
    #[arg(long, default_value_t = 10)]
    reps: usize,
}

fn main() -> ExitCode {
    common::exit_code(run(&Args::parse()))
}

/// The scans the example compares.
#[derive(Clone, Copy)]
enum Variant {
    SinglePass,
    ThreePhases,
    ThreePhasesSplit,
    ThreePhasesGraph,
}

impl Variant {
    fn label(self) -> &'static str {
        match self {
            Variant::SinglePass => "single pass, decoupled look-back",
            Variant::ThreePhases => "three phases, grid_sync() (fused)",
            Variant::ThreePhasesSplit => "three phases, one launch each",
            Variant::ThreePhasesGraph => "three phases, one launch each, CUDA graph",
        }
    }
}

fn run(args: &Args) -> Result<(), AnyError> {
    let gpu = Gpu::new(0)?; // falls back to the CPU emulator without a CUDA GPU
    let emulated = gpu.backend() == Backend::Emulator;
    let n = args.n.unwrap_or(if emulated { 1 << 16 } else { 1 << 24 });
    let mut rng = StdRng::seed_from_u64(args.seed);
    let keys: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
    let expected = scan::scan_reference(&keys);
    println!("{} — {n} u32 keys, tiles of {}", gpu.info().name, scan::TILE);
    println!("| scan | median kernel time | GB/s (8 B per key) | blocks × threads | verified |");
    println!("|---|---:|---:|---|---|");
    let dkeys = gpu.upload(&keys)?;
    let mut scratch = ScanScratch::new(&gpu, n)?;
    let mut tile_sums = gpu.zeros::<u32>(scan::tiles(n))?;
    let head = HeadStart::new(&gpu)?;
    let variants = [Variant::SinglePass, Variant::ThreePhases, Variant::ThreePhasesSplit, Variant::ThreePhasesGraph];
    for variant in variants {
        let barrier = match variant {
            Variant::ThreePhasesSplit | Variant::ThreePhasesGraph => Barrier::MultiLaunch,
            _ => Barrier::Auto,
        };
        let launch = common::launch(barrier, args.blocks, args.threads);
        let launch = if matches!(variant, Variant::ThreePhasesGraph) { launch.graph(true) } else { launch };
        // Back to back, each run into a buffer of its own, checked afterwards: a GPU left idle
        // while the host compares lowers its clocks, and the next launch would pay for it.
        // Each behind a head start, so that its time holds no submission.
        let mut outs = (0..=args.reps).map(|_| gpu.zeros::<u32>(n)).collect::<Result<Vec<_>, _>>()?;
        let mut reports = Vec::with_capacity(outs.len());
        for out in &mut outs {
            head.give()?;
            reports.push(match variant {
                Variant::SinglePass => scratch.launch(&gpu, &launch, &dkeys, out)?,
                _ => scan_three_phase::launch_with(&gpu, &launch, &dkeys, out, &mut tile_sums)?,
            });
        }
        for out in &outs {
            if gpu.download(out)? != expected {
                return Err(format!("{}: the sums differ from the CPU's", variant.label()).into());
            }
        }
        let shape = reports.last().map(|r| format!("{} × {}", r.blocks, r.threads)).unwrap_or_default();
        let median = common::median(reports[1..].iter().map(|r| r.gpu_time).collect()).unwrap_or_default();
        let gbs = 8.0 * n as f64 / median.as_secs_f64().max(1e-12) / 1e9;
        println!("| {} | {:.1} µs | {gbs:.0} | {shape} | yes |", variant.label(), median.as_secs_f64() * 1e6);
    }
    Ok(())
}
