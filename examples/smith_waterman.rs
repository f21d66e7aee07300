//! Smith-Waterman local alignment (affine gaps) as one fused kernel, verified
//! against the CPU reference and timed per barrier.
//!
//! ```text
//! cargo run --release --example smith_waterman -- --lengths 2000 2000
//! cargo run --release --example smith_waterman -- query.fasta subject.fasta --barrier all
//! cargo run --release --example smith_waterman -- --lengths 5000 4000 --alphabet dna --open 3 --extend 1
//! ```

mod common;

use clap::{Parser, ValueEnum};
use common::AnyError;
use gsync::kernels::smith_waterman::{self as sw, Scoring};
use gsync::prelude::*;
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Matrices up to this many cells (2^17 × 2^17) are checked against the CPU reference.
const VERIFY_LIMIT: u64 = 1 << 34;

/// Aligns two sequences on the GPU (or the CPU emulator) and checks the result.
#[derive(Parser)]
struct Args {
    /// Two FASTA files; the first record of each is aligned (the first is `a`, the rows).
    #[arg(num_args = 0..=2, value_name = "FASTA")]
    sequences: Vec<PathBuf>,
    /// Random sequences of these lengths instead of files (default 10000 10000 on a GPU, 1000 1000 on the emulator).
    #[arg(long, num_args = 2, value_names = ["M", "N"], conflicts_with = "sequences")]
    lengths: Option<Vec<usize>>,
    /// Alphabet of the random sequences, and the default matrix.
    #[arg(long, value_enum, default_value_t = Alphabet::Protein)]
    alphabet: Alphabet,
    /// Seed of the random sequences.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Substitution scores (default: blosum62 for protein, dna for DNA).
    #[arg(long, value_enum)]
    matrix: Option<Matrix>,
    /// DNA match score.
    #[arg(long = "match", default_value_t = sw::DNA_MATCH, allow_negative_numbers = true)]
    match_score: i32,
    /// DNA mismatch score (negative: a penalty).
    #[arg(long, default_value_t = sw::DNA_MISMATCH, allow_negative_numbers = true)]
    mismatch: i32,
    /// Gap open penalty: the cost of a gap of length 1 (default 11 with blosum62, 5 with dna).
    #[arg(long)]
    open: Option<i32>,
    /// Gap extension penalty: the cost of each further gap position (default 1 with blosum62, 2 with dna).
    #[arg(long)]
    extend: Option<i32>,
    /// Barrier: auto, cooperative, lbs, lfs, ilbs, ilbs:G, ulfs, relay, multi-launch; several separated by commas, or `all`, to compare.
    #[arg(long, default_value = "auto")]
    barrier: String,
    /// Blocks in the grid (default: one per tile of the longest tile diagonal, at most the co-resident grid).
    #[arg(long)]
    blocks: Option<u32>,
    /// Threads per block; a tile is eight rows per thread tall (default: 128).
    #[arg(long)]
    threads: Option<u32>,
    /// Tile width in columns, 1 to 1024 (default: 512).
    #[arg(long)]
    tile_cols: Option<u32>,
    /// Timed repetitions after one warm-up; the median is reported.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Kernel: auto (stripes where the scores and the block size fit them, as `align` does), stripes or tiles.
    #[arg(long, value_enum, default_value_t = Kernel::Auto)]
    kernel: Kernel,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Kernel {
    Auto,
    Stripes,
    Tiles,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Alphabet {
    Protein,
    Dna,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Matrix {
    Blosum62,
    Dna,
}

fn main() -> ExitCode {
    common::exit_code(run(&Args::parse()))
}

/// A sequence to align: its name and codes.
struct Sequence {
    name: String,
    codes: Vec<u8>,
}

fn run(args: &Args) -> Result<(), AnyError> {
    let gpu = Gpu::new(0)?; // falls back to the CPU emulator without a CUDA GPU
    let emulated = gpu.backend() == Backend::Emulator;
    let scoring = scoring(args)?;
    let (a, b) = sequences(args, &scoring, emulated)?;
    sw::check_input(&a.codes, &b.codes, &scoring)?;
    let (m, n) = (a.codes.len(), b.codes.len());
    let threads = args.threads.unwrap_or_else(|| Launch::new().threads_for(&sw::smith_waterman::KERNEL));
    let tile_cols = args.tile_cols.unwrap_or(sw::DEFAULT_TILE_COLS).clamp(1, sw::MAX_TILE_COLS);
    println!(
        "{} — a: {} ({m} residues), b: {} ({n} residues), open {}, extend {}",
        gpu.info().name,
        a.name,
        b.name,
        scoring.open(),
        scoring.extend()
    );
    let stripes = match args.kernel {
        Kernel::Auto => {
            sw::align_stripes_fits(&a.codes, &b.codes, &scoring)
                && sw::stripes_fit_block(&gpu, &Launch::new().threads(threads), &scoring)?
        }
        Kernel::Stripes => true,
        Kernel::Tiles => false,
    };
    if stripes {
        println!("stripes of {} rows, 1 grid barrier", threads * sw::ROWS_PER_THREAD);
    } else {
        println!(
            "tiles of {} rows × {tile_cols} columns, {} grid barriers",
            threads * sw::ROWS_PER_THREAD,
            sw::grid_syncs(m, n, threads, tile_cols)
        );
    }
    let expected = reference(&a.codes, &b.codes, &scoring);
    let barriers = common::barriers(&args.barrier)?;
    println!("| barrier | blocks | score | end (a, b) | median kernel time | GCUPS | verified |");
    println!("|---|---:|---:|---|---:|---:|---|");
    let align = |launch: &Launch| {
        if stripes {
            sw::align_stripes(&gpu, launch, &a.codes, &b.codes, &scoring)
        } else {
            sw::align_tiled(&gpu, launch, &a.codes, &b.codes, &scoring, tile_cols)
        }
    };
    for barrier in barriers {
        let launch = common::launch(barrier, args.blocks, Some(threads));
        match measure(&launch, align, args.reps) {
            Ok((alignment, median)) => {
                let verified = match expected {
                    Some(hit) if hit != alignment.hit() => {
                        return Err(format!(
                            "{barrier}: the kernel found score {} ending at ({}, {}), the CPU reference {} at ({}, {})",
                            alignment.score, alignment.end_a, alignment.end_b, hit.score, hit.end_a, hit.end_b
                        )
                        .into());
                    }
                    Some(_) => "yes",
                    None => "not checked",
                };
                // An empty sequence aligns without a launch: no time, no rate.
                let (time, gcups) = if alignment.report.blocks == 0 {
                    ("no launch".to_owned(), "–".to_owned())
                } else {
                    (show(median), format!("{:.2}", (m as f64 * n as f64) / median.as_secs_f64() / 1e9))
                };
                println!(
                    "| {barrier} | {} | {} | ({}, {}) | {time} | {gcups} | {verified} |",
                    alignment.report.blocks, alignment.score, alignment.end_a, alignment.end_b
                );
            }
            // LFS only reaches a grid as large as its block size, ILBS:G needs G blocks.
            Err(e) if common::barrier_refused(e.as_ref()) => {
                println!("| {barrier} | – | – | – | – | – | ({e}) |");
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The scoring scheme the options ask for.
fn scoring(args: &Args) -> Result<Scoring, AnyError> {
    let matrix = args.matrix.unwrap_or(match args.alphabet {
        Alphabet::Protein => Matrix::Blosum62,
        Alphabet::Dna => Matrix::Dna,
    });
    let random = args.sequences.is_empty();
    if random && (matrix == Matrix::Dna) != (args.alphabet == Alphabet::Dna) {
        return Err("--matrix and --alphabet disagree: random protein needs blosum62, random DNA needs dna".into());
    }
    Ok(match matrix {
        Matrix::Blosum62 => {
            Scoring::blosum62(args.open.unwrap_or(sw::BLOSUM62_OPEN), args.extend.unwrap_or(sw::BLOSUM62_EXTEND))?
        }
        Matrix::Dna => Scoring::dna(
            args.match_score,
            args.mismatch,
            args.open.unwrap_or(sw::DNA_OPEN),
            args.extend.unwrap_or(sw::DNA_EXTEND),
        )?,
    })
}

/// The two sequences: the first record of each FASTA file, or random ones.
fn sequences(args: &Args, scoring: &Scoring, emulated: bool) -> Result<(Sequence, Sequence), AnyError> {
    match &args.sequences[..] {
        [] => {
            let lengths =
                args.lengths.clone().unwrap_or(if emulated { vec![1000, 1000] } else { vec![10_000, 10_000] });
            let letters: &[u8] = match args.alphabet {
                Alphabet::Protein => &sw::PROTEIN_ALPHABET[..20],
                Alphabet::Dna => &sw::DNA_ALPHABET[..4],
            };
            let mut rng = StdRng::seed_from_u64(args.seed);
            let mut random = |len: usize| -> Result<Sequence, AnyError> {
                let residues: Vec<u8> = (0..len).map(|_| letters[rng.gen_range(0..letters.len())]).collect();
                Ok(Sequence { name: "random".to_owned(), codes: scoring.encode(&residues)? })
            };
            Ok((random(lengths[0])?, random(lengths[1])?))
        }
        [path_a, path_b] => Ok((read_fasta(path_a, scoring)?, read_fasta(path_b, scoring)?)),
        _ => Err("give two FASTA files, or --lengths M N".into()),
    }
}

/// The first record of a FASTA file, encoded.
fn read_fasta(path: &PathBuf, scoring: &Scoring) -> Result<Sequence, AnyError> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let records = sw::parse_fasta(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let record = records.into_iter().next().ok_or_else(|| format!("{}: no FASTA record", path.display()))?;
    let codes = scoring.encode(&record.sequence).map_err(|e| format!("{}: {e}", path.display()))?;
    let name = if record.name.is_empty() { path.display().to_string() } else { record.name };
    Ok(Sequence { name, codes })
}

/// The CPU reference's answer, when the matrix is small enough to wait for.
fn reference(a: &[u8], b: &[u8], scoring: &Scoring) -> Option<sw::LocalHit> {
    let cells = a.len() as u64 * b.len() as u64;
    if cells > VERIFY_LIMIT {
        println!("CPU reference: skipped ({cells} cells, more than {VERIFY_LIMIT}); results not verified");
        return None;
    }
    let started = Instant::now();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let hit = sw::align_reference_parallel(a, b, scoring, cores);
    println!(
        "CPU reference ({cores} threads): score {} ending at ({}, {}) in {:.1} ms",
        hit.score,
        hit.end_a,
        hit.end_b,
        started.elapsed().as_secs_f64() * 1e3
    );
    Some(hit)
}

/// Aligns `1 + reps` times, requiring every run to agree; the alignment and
/// the median kernel time of all runs but the first.
fn measure(
    launch: &Launch,
    align: impl Fn(&Launch) -> Result<sw::Alignment, sw::AlignError>,
    reps: usize,
) -> Result<(sw::Alignment, Duration), AnyError> {
    let first = align(launch)?;
    let mut times = vec![first.report.gpu_time];
    for rep in 0..reps {
        let again = align(launch)?;
        if again.hit() != first.hit() {
            return Err(format!("run {} found {:?}, the first run {:?}", rep + 2, again.hit(), first.hit()).into());
        }
        times.push(again.report.gpu_time);
    }
    let timed = if reps > 0 { times.split_off(1) } else { times };
    Ok((first, common::median(timed).expect("at least one run")))
}

/// A duration in µs below 10 ms, else in ms.
fn show(t: Duration) -> String {
    if t < Duration::from_millis(10) {
        format!("{:.1} µs", t.as_secs_f64() * 1e6)
    } else {
        format!("{:.2} ms", t.as_secs_f64() * 1e3)
    }
}
