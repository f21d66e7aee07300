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
    /// Barrier: auto, cooperative, lbs, lfs, ilbs, ilbs:G, ulfs, relay, multi-launch, or `all` to compare.
    #[arg(long, default_value = "auto")]
    barrier: String,
    /// Blocks in the grid (default: one per tile, at most the largest co-resident grid).
    #[arg(long)]
    blocks: Option<u32>,
    /// Threads per block (default: by size, see `bitonic::default_shape`).
    #[arg(long)]
    threads: Option<u32>,
    /// Keys per shared-memory tile, a power of two up to 8192, 4096 with values (default: by size, see `bitonic::default_shape`).
    #[arg(long)]
    tile: Option<usize>,
    /// Seed of the random keys.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Timed repetitions after one warm-up; the median is reported.
    #[arg(long, default_value_t = 5)]
    reps: usize,
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
    println!(
        "{} — {n} keys, {} phases",
        gpu.info().name,
        bitonic::phases(n, args.values, args.tile.unwrap_or(bitonic::default_shape(n).0))
    );
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
    Ok(())
}

/// Sorts fresh keys `1 + reps` times, verifying every run; the median kernel time of all but the first.
fn measure<K: SortKey + PartialEq + std::fmt::Debug>(
    gpu: &Gpu,
    launch: &Launch,
    args: &Args,
    n: usize,
    mut key: impl FnMut() -> K,
) -> Result<Duration, AnyError> {
    let mut times = Vec::new();
    for rep in 0..=args.reps {
        let keys: Vec<K> = (0..n).map(|_| key()).collect();
        let values: Vec<u32> = (0..n as u32).collect();
        let values = args.values.then_some(&values[..]);
        let sorted = match args.tile {
            Some(tile) => bitonic::sort_in_tiles(gpu, launch, &keys, values, args.descending, tile)?,
            None => bitonic::sort(gpu, launch, &keys, values, args.descending)?,
        };
        verify(&keys, &sorted.keys, &sorted.values, args)?;
        if rep > 0 {
            times.push(sorted.report.gpu_time);
        }
    }
    times.sort();
    Ok(times.get(times.len() / 2).copied().unwrap_or_default())
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
