//! `gsync::kernels::sort` of random `u32` keys (`--key u64`: `u64` keys), alone and with a `u32` value each, from 2^16
//! to 2^26 keys: each size sorted once to warm up, then timed (the kernel's time between
//! CUDA events) `--reps` times, every result verified against the CPU's sort, and the medians
//! printed as a table. Below `kernels::radix_from(with_values)` keys (2^17 + 1 keys alone, 2^16
//! pairs) the sort is the bitonic sort; from there the radix sort `onesweep` (a histogram
//! phase, then one phase per 8-bit digit with decoupled look-back between tiles), one fused
//! kernel. `--kernel` names it or another: `radix` (per digit, a phase that counts it in each
//! block's run of keys, then one that moves the keys) or `bitonic`.
//!
//! ```text
//! cargo run --release --example radix_sort                     # 2^16 … 2^26 on a GPU, 2^13 on the emulator
//! cargo run --release --example radix_sort -- --n 1000000 --reps 20
//! cargo run --release --example radix_sort -- --kernel bitonic --max-log 22
//! cargo run --release --example radix_sort -- --key u64 --min-log 20 --max-log 24
//! cargo run --release --example radix_sort -- --barrier multi-launch   # one launch per phase
//! cargo run --release --example radix_sort -- --kernel radix --n 65536 --profile   # where the time goes
//! ```
//!
//! The time is the kernel's alone: the keys are uploaded and downloaded outside it, and so is
//! the scratch (allocated zeroed).

mod common;

use clap::{Parser, ValueEnum};
use common::AnyError;
use gsync::kernels::{self, SortKernel};
use gsync::prelude::*;
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::process::ExitCode;

/// Sorts random keys on the GPU (or the CPU emulator), verifies them and prints the times.
#[derive(Parser)]
struct Args {
    /// Sort this many keys only (default: 2^min-log … 2^max-log on a GPU, 2^13 on the emulator).
    #[arg(long)]
    n: Option<usize>,
    /// The smallest size, as a power of two.
    #[arg(long, default_value_t = 16)]
    min_log: u32,
    /// The largest size, as a power of two.
    #[arg(long, default_value_t = 26)]
    max_log: u32,
    /// Which sort: the fastest for the size (`kernels::sort`), or one of the three.
    #[arg(long, value_enum, default_value_t = Kernel::Fastest)]
    kernel: Kernel,
    /// Barrier: auto, cooperative, lbs, lfs, ilbs, ilbs:G, ulfs, relay, or multi-launch (the
    /// split form: one launch per phase); several separated by commas, or `all`, to compare.
    #[arg(long, default_value = "auto")]
    barrier: String,
    /// The keys' type.
    #[arg(long, value_enum, default_value_t = Key::U32)]
    key: Key,
    /// Seed of the random keys.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Timed repetitions after one warm-up; the median is reported.
    #[arg(long, default_value_t = 10)]
    reps: usize,
    /// After each fused row, one more run with a per-phase profile (`Launch::profile`),
    /// printed: each phase's span, its slowest block's work and the barrier after it.
    #[arg(long)]
    profile: bool,
}

/// `--key`'s choices.
#[derive(Clone, Copy, ValueEnum)]
enum Key {
    U32,
    U64,
}

/// `--kernel`'s choices.
#[derive(Clone, Copy, ValueEnum)]
enum Kernel {
    Fastest,
    Bitonic,
    Radix,
    Onesweep,
}

impl Kernel {
    fn choice(self) -> SortKernel {
        match self {
            Kernel::Fastest => SortKernel::Fastest,
            Kernel::Bitonic => SortKernel::Bitonic,
            Kernel::Radix => SortKernel::Radix,
            Kernel::Onesweep => SortKernel::Onesweep,
        }
    }

    /// The kernel that sorts `n` keys, `with_values` or alone, `wide` (64-bit) or 32-bit ones
    /// (64-bit keys always run a radix sort).
    fn name(self, n: usize, with_values: bool, wide: bool) -> &'static str {
        match self {
            Kernel::Fastest if !wide && n < kernels::radix_from(with_values) => "bitonic",
            Kernel::Fastest | Kernel::Onesweep => "onesweep",
            Kernel::Radix => "radix",
            Kernel::Bitonic => "bitonic",
        }
    }
}

fn main() -> ExitCode {
    common::exit_code(run(&Args::parse()))
}

fn run(args: &Args) -> Result<(), AnyError> {
    let gpu = Gpu::new(0)?; // falls back to the CPU emulator without a CUDA GPU
    let sizes: Vec<usize> = match (args.n, gpu.backend()) {
        (Some(n), _) => vec![n],
        (None, Backend::Emulator) => vec![1 << 13],
        (None, Backend::Cuda) => (args.min_log..=args.max_log).map(|log| 1usize << log).collect(),
    };
    // The split form runs on the stream and replayed as a CUDA graph.
    let forms: Vec<(Barrier, bool)> = common::barriers(&args.barrier)?
        .into_iter()
        .flat_map(|barrier| {
            let split = barrier == Barrier::MultiLaunch;
            [(barrier, false)].into_iter().chain(split.then_some((barrier, true)))
        })
        .collect();
    match args.key {
        Key::U32 => table::<u32>(args, &gpu, &sizes, &forms),
        Key::U64 => table::<u64>(args, &gpu, &sizes, &forms),
    }
}

/// Times, verifies and prints the sorts of random `K` keys of each size in
/// `sizes`, alone and with values, in each of `forms` (a barrier, and whether replayed as a graph).
fn table<K>(args: &Args, gpu: &Gpu, sizes: &[usize], forms: &[(Barrier, bool)]) -> Result<(), AnyError>
where
    K: kernels::OrderedKey + Ord + Send + Sync,
    rand::distributions::Standard: rand::distributions::Distribution<K>,
{
    let wide = std::mem::size_of::<K>() == 8;
    let mut rng = StdRng::seed_from_u64(args.seed);
    let key_name = std::any::type_name::<K>();
    println!("{} — {key_name} keys, median of {} sorts after one warm-up", gpu.info().name, args.reps);
    println!("| keys | values | sort | barrier | median kernel time | Gkeys/s | blocks × threads | verified |");
    println!("|---:|---|---|---|---:|---:|---|---|");
    for &n in sizes {
        let keys: Vec<K> = (0..n).map(|_| rng.gen()).collect();
        let values: Vec<u32> = (0..n as u32).collect();
        let mut pairs: Vec<(K, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
        pairs.sort_by_key(|pair| pair.0);
        let expected_keys: Vec<K> = pairs.iter().map(|pair| pair.0).collect();
        let expected_values: Vec<u32> = pairs.iter().map(|pair| pair.1).collect();
        for with_values in [false, true] {
            for &(barrier, graph) in forms {
                let given = with_values.then_some(&values[..]);
                let expected = if with_values { &expected_values[..] } else { &[][..] };
                let launch = Launch::new().barrier(barrier).graph(graph);
                let form = if graph { format!("{barrier}, graph") } else { barrier.to_string() };
                let mut verified = 0;
                let timed = common::timed(args.reps, || {
                    let sorted = kernels::sort_with(gpu, &launch, &keys, given, false, args.kernel.choice())?;
                    if sorted.keys == expected_keys && sorted.values == expected {
                        verified += 1;
                    }
                    Ok(((), sorted.report))
                });
                let label = if with_values { "u32" } else { "–" };
                let (median, report, _) = match timed {
                    Ok(timed) => timed,
                    Err(e) if common::barrier_refused(&e) => {
                        println!(
                            "| {n} | {label} | {} | {form} | – | – | – | ({e}) |",
                            args.kernel.name(n, with_values, wide)
                        );
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                };
                if verified != args.reps + 1 {
                    let wrong = args.reps + 1 - verified;
                    return Err(format!("{n} keys, values {label}, {form}: {wrong} sorts differ from the CPU's").into());
                }
                let rate = n as f64 / median.as_secs_f64().max(1e-12) / 1e9;
                println!(
                    "| {n} | {label} | {} | {}{} | {:.1} µs | {rate:.2} | {} × {} | yes |",
                    args.kernel.name(n, with_values, wide),
                    report.barrier,
                    if graph { ", graph" } else { "" },
                    median.as_secs_f64() * 1e6,
                    report.blocks,
                    report.threads
                );
                if args.profile && barrier != Barrier::MultiLaunch {
                    let profiled = launch.clone().profile(true);
                    let sorted = kernels::sort_with(gpu, &profiled, &keys, given, false, args.kernel.choice())?;
                    if sorted.keys != expected_keys || sorted.values != expected {
                        return Err(
                            format!("{n} keys, values {label}: the profiled sort differs from the CPU's").into()
                        );
                    }
                    if let Some(profile) = &sorted.report.profile {
                        println!("\n{profile}\n");
                    }
                }
            }
        }
    }
    Ok(())
}
