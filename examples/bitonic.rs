//! Bitonic sort as one fused kernel, verified against the CPU's sort and timed
//! per barrier.
//!
//! ```text
//! cargo run --release --example bitonic -- --n 1048576 --barrier all
//! ```

mod common;

use clap::{Parser, ValueEnum};
use common::AnyError;
use gsync::kernels::bitonic::{self, SortKey};
use gsync::prelude::*;
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::process::ExitCode;
use std::time::Duration;

/// Sorts random keys on the GPU (or the CPU emulator) and checks the result.
#[derive(Parser)]
struct Args {
    /// Number of keys (any length; default 2^20 on a GPU, 2^16 on the emulator).
    #[arg(long)]
    n: Option<usize>,
    /// Key type.
    #[arg(long = "type", value_enum, default_value_t = KeyType::U32)]
    key_type: KeyType,
    /// Sort in descending order (NaNs stay last).
    #[arg(long)]
    descending: bool,
    /// Carry a u32 value with every key.
    #[arg(long)]
    values: bool,
    /// Barrier: auto, cooperative, lbs, lfs, ilbs, ilbs:G, ulfs, relay, multi-launch; several separated by commas, or `all`, to compare.
    #[arg(long, default_value = "auto")]
    barrier: String,
    /// Blocks in the grid (default: one per tile, at most the largest co-resident grid).
    #[arg(long)]
    blocks: Option<u32>,
    /// Threads per block (default: by size, see `bitonic::default_threads`, or `bitonic::default_shape` with values or a tile).
    #[arg(long)]
    threads: Option<u32>,
    /// Sort in shared-memory tiles of this many keys with `bitonic_sort`, a power of two up to 8192, 4096 with values (default: keys alone run `sort_keys`; with values, by size, see `bitonic::default_shape`).
    #[arg(long)]
    tile: Option<usize>,
    /// Seed of the random keys.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Timed repetitions after one warm-up; the median is reported.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// After the table, profile one sort (`Launch::profile`) and print each phase's span,
    /// its slowest block's work and the barrier that ends it.
    #[arg(long)]
    profile: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum KeyType {
    U32,
    F32,
}

fn main() -> ExitCode {
    common::exit_code(run(&Args::parse()))
}

fn run(args: &Args) -> Result<(), AnyError> {
    let gpu = Gpu::new(0)?; // falls back to the CPU emulator without a CUDA GPU
    let emulated = gpu.backend() == Backend::Emulator;
    let n = args.n.unwrap_or(if emulated { 1 << 16 } else { 1 << 20 });
    let phases = if args.values || args.tile.is_some() {
        bitonic::phases(n, args.values, args.tile.unwrap_or(bitonic::default_shape(n).0))
    } else {
        bitonic::key_phases(n, args.threads.unwrap_or(bitonic::default_threads(n)))
    };
    println!("{} — {n} keys, {phases} phases", gpu.info().name);
    let barriers = common::barriers(&args.barrier)?;
    let mut rng = StdRng::seed_from_u64(args.seed);
    println!("| barrier | median kernel time | Mkeys/s | verified |");
    println!("|---|---:|---:|---|");
    for barrier in barriers {
        let launch = common::launch(barrier, args.blocks, args.threads);
        let result = match args.key_type {
            KeyType::U32 => measure(&gpu, &launch, args, n, || rng.gen::<u32>()),
            KeyType::F32 => measure(&gpu, &launch, args, n, || f32::from_bits(rng.gen::<u32>())),
        };
        match result {
            Ok(median) => {
                let mkeys = n as f64 / median.as_secs_f64() / 1e6;
                println!("| {barrier} | {:.1} µs | {mkeys:.0} | yes |", median.as_secs_f64() * 1e6);
            }
            // LFS only reaches a grid as large as its block size, ILBS:G needs G blocks.
            Err(e) if common::barrier_refused(e.as_ref()) => {
                println!("| {barrier} | – | – | ({e}) |");
            }
            Err(e) => return Err(e),
        }
    }
    if args.profile {
        let launch = common::launch(Barrier::Auto, args.blocks, args.threads).profile(true).profile_phases(64);
        let keys: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
        let sorted = bitonic::sort(&gpu, &launch, &keys, None, false)?;
        verify(&keys, &sorted.keys, &sorted.values, args)?;
        print_profile(&sorted.report);
    }
    Ok(())
}

/// Each phase of a profiled sort: its span, the slowest block's work, and its barrier's latency.
fn print_profile(report: &LaunchReport) {
    let Some(profile) = &report.profile else {
        println!("(no profile)");
        return;
    };
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    println!("\nprofiled: {} ({}), {:.1} µs", report.config(), report.barrier, micros(profile.total()));
    println!("| phase | span | slowest block's work | barrier |");
    println!("|---:|---:|---:|---:|");
    for phase in profile.phases() {
        let barrier = phase.barrier.as_ref().map_or("–".to_owned(), |b| format!("{:.2} µs", micros(b.latency)));
        println!(
            "| {} | {:.2} µs | {:.2} µs | {barrier} |",
            phase.phase,
            micros(phase.span),
            micros(phase.slowest_work)
        );
    }
}

/// Sorts fresh keys `1 + reps` times back to back (an idle GPU lowers its clocks, so the
/// inputs are made before and the results checked after), verifying every run; the median
/// kernel time of all but the first.
fn measure<K: SortKey + PartialEq + std::fmt::Debug>(
    gpu: &Gpu,
    launch: &Launch,
    args: &Args,
    n: usize,
    mut key: impl FnMut() -> K,
) -> Result<Duration, AnyError> {
    let inputs: Vec<Vec<K>> = (0..=args.reps).map(|_| (0..n).map(|_| key()).collect()).collect();
    let values: Vec<u32> = (0..n as u32).collect();
    let values = args.values.then_some(&values[..]);
    let mut runs = Vec::with_capacity(inputs.len());
    for keys in &inputs {
        runs.push(match args.tile {
            Some(tile) => bitonic::sort_in_tiles(gpu, launch, keys, values, args.descending, tile)?,
            None => bitonic::sort(gpu, launch, keys, values, args.descending)?,
        });
    }
    for (keys, sorted) in inputs.iter().zip(&runs) {
        verify(keys, &sorted.keys, &sorted.values, args)?;
    }
    Ok(common::median(runs[1..].iter().map(|sorted| sorted.report.gpu_time).collect()).unwrap_or_default())
}

/// Compares with the standard library's sort of (key, original position)
/// pairs: the stable order, so values match too.
fn verify<K: SortKey + PartialEq + std::fmt::Debug>(
    keys: &[K],
    got: &[K],
    got_values: &[u32],
    args: &Args,
) -> Result<(), AnyError> {
    let mut want: Vec<(u32, u32)> =
        keys.iter().enumerate().map(|(i, k)| (k.to_ordered(args.descending), i as u32)).collect();
    want.sort_unstable();
    for (pos, &(key, i)) in want.iter().enumerate() {
        if got[pos].to_ordered(args.descending) != key {
            return Err(format!("mismatch at index {pos}: expected {:?}, got {:?}", keys[i as usize], got[pos]).into());
        }
        if args.values && got_values[pos] != i {
            return Err(format!("value mismatch at index {pos}: expected {i}, got {}", got_values[pos]).into());
        }
    }
    Ok(())
}
