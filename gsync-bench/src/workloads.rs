//! The three workloads, through the library's public functions only: their
//! inputs (made once, from a seed, and shared by every barrier), their CPU
//! references, one verified run, and how many blocks can be co-resident.

use std::time::Duration;

use gsync::kernels::smith_waterman::{self as sw, LocalHit, Scoring};
use gsync::kernels::{bitonic, empty_phases};
use gsync::{Gpu, Launch};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::error::{BenchError, Result};
use crate::model::Workload;

/// A problem, described by its sizes alone: cheap to copy, compare and plan with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProblemSpec {
    /// Sort `n` random `u32` keys in shared-memory tiles of `tile` keys.
    Bitonic {
        /// Keys.
        n: usize,
        /// Keys per tile (the library clamps it to a power of two it supports).
        tile: usize,
    },
    /// Align two random proteins of `m` and `n` residues in tiles `tile_cols` wide.
    SmithWaterman {
        /// Residues of the first sequence (rows).
        m: usize,
        /// Residues of the second sequence (columns).
        n: usize,
        /// Columns per tile.
        tile_cols: u32,
    },
    /// `phases` nearly empty phases, measured with P and 2P phases.
    Empty {
        /// P.
        phases: u32,
    },
}

impl ProblemSpec {
    /// The workload this problem belongs to.
    pub fn workload(&self) -> Workload {
        match self {
            ProblemSpec::Bitonic { .. } => Workload::Bitonic,
            ProblemSpec::SmithWaterman { .. } => Workload::SmithWaterman,
            ProblemSpec::Empty { .. } => Workload::EmptyPhases,
        }
    }

    /// The problem in words, as written to the CSV.
    pub fn describe(&self) -> String {
        match *self {
            ProblemSpec::Bitonic { n, tile } => format!("n={n} tile={tile}"),
            ProblemSpec::SmithWaterman { m, n, tile_cols } => format!("m={m} n={n} tile_cols={tile_cols}"),
            ProblemSpec::Empty { phases } => format!("P={phases} and 2P"),
        }
    }

    /// The `grid_sync()`s one launch crosses with `threads` threads per block
    /// (for empty phases: P, the shorter of the two launches).
    pub fn phases(&self, threads: u32) -> u32 {
        match *self {
            ProblemSpec::Bitonic { n, tile } => bitonic::phases(n, false, tile),
            ProblemSpec::SmithWaterman { m, n, tile_cols } => sw::grid_syncs(m, n, threads, tile_cols),
            ProblemSpec::Empty { phases } => phases,
        }
    }

    /// The most blocks that can be resident at once for this problem's kernel, block size and barrier.
    pub fn max_coresident(&self, gpu: &Gpu, launch: &Launch) -> gsync::Result<u32> {
        match self {
            ProblemSpec::Bitonic { .. } => bitonic::bitonic_sort::max_coresident_blocks(gpu, launch),
            ProblemSpec::SmithWaterman { .. } => sw::smith_waterman::max_coresident_blocks(gpu, launch),
            ProblemSpec::Empty { .. } => empty_phases::max_coresident_blocks(gpu, launch),
        }
    }
}

/// The rows of one Smith-Waterman tile with `threads` threads and tiles
/// `tile_cols` wide, found from the public `grid_syncs` alone: the longest
/// first sequence that still fits in one tile row.
pub fn sw_tile_height(threads: u32, tile_cols: u32) -> usize {
    let one_row = sw::grid_syncs(1, 1, threads, tile_cols);
    let (mut fits, mut too_long) = (1usize, 2usize);
    while sw::grid_syncs(too_long, 1, threads, tile_cols) == one_row {
        fits = too_long;
        too_long *= 2;
        if too_long > 1 << 30 {
            return fits;
        }
    }
    while too_long - fits > 1 {
        let middle = fits + (too_long - fits) / 2;
        if sw::grid_syncs(middle, 1, threads, tile_cols) == one_row {
            fits = middle;
        } else {
            too_long = middle;
        }
    }
    fits
}

/// Tiles on the longest tile diagonal of a Smith-Waterman problem: the most
/// blocks that can have work in one phase.
pub fn sw_widest_diagonal(m: usize, n: usize, threads: u32, tile_cols: u32) -> usize {
    let height = sw_tile_height(threads, tile_cols);
    m.div_ceil(height).min(n.div_ceil(tile_cols.max(1) as usize))
}

/// A problem with its inputs and its CPU reference answer.
#[derive(Debug)]
pub enum Problem {
    /// Keys to sort and the CPU's sort of them.
    Bitonic {
        /// The input keys.
        keys: Vec<u32>,
        /// The keys sorted on the CPU.
        sorted: Vec<u32>,
        /// Keys per tile.
        tile: usize,
    },
    /// Two encoded sequences and the CPU Gotoh reference's hit.
    SmithWaterman {
        /// First sequence (rows), encoded.
        a: Vec<u8>,
        /// Second sequence (columns), encoded.
        b: Vec<u8>,
        /// BLOSUM62, open 11, extend 1.
        scoring: Scoring,
        /// Columns per tile.
        tile_cols: u32,
        /// The CPU reference's answer.
        expected: LocalHit,
    },
    /// P empty phases.
    Empty {
        /// P.
        phases: u32,
    },
}

/// What one verified kernel launch gave.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The output matched the CPU reference; the kernel's CUDA-event time.
    Correct(Duration),
    /// The output differed from the reference, and how.
    Wrong(String),
}

/// One launch of a run: the phases it crossed and its outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// `grid_sync()`s of this launch.
    pub phases: u32,
    /// Verified time, or what was wrong.
    pub outcome: Outcome,
}

impl Problem {
    /// Makes the inputs of `spec` from `seed` and computes the CPU reference.
    pub fn new(spec: ProblemSpec, seed: u64) -> Result<Problem> {
        let mut rng = StdRng::seed_from_u64(seed);
        Ok(match spec {
            ProblemSpec::Bitonic { n, tile } => {
                let keys: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
                let mut sorted = keys.clone();
                sorted.sort_unstable();
                Problem::Bitonic { keys, sorted, tile }
            }
            ProblemSpec::SmithWaterman { m, n, tile_cols } => {
                let scoring = Scoring::blosum62(sw::BLOSUM62_OPEN, sw::BLOSUM62_EXTEND).map_err(input_error)?;
                let a = random_protein(&mut rng, m, &scoring)?;
                let b = random_protein(&mut rng, n, &scoring)?;
                sw::check_input(&a, &b, &scoring).map_err(input_error)?;
                let expected = sw::align_reference(&a, &b, &scoring);
                Problem::SmithWaterman { a, b, scoring, tile_cols, expected }
            }
            ProblemSpec::Empty { phases } => {
                if phases == 0 {
                    return Err(BenchError::Usage("--phases must be at least 1".into()));
                }
                Problem::Empty { phases }
            }
        })
    }

    /// Runs the kernel once with `launch` (empty phases: twice, with P and 2P
    /// phases) and checks every output against the CPU reference.
    pub fn run(&self, gpu: &Gpu, launch: &Launch) -> gsync::Result<Vec<Measurement>> {
        match self {
            Problem::Bitonic { keys, sorted, tile } => {
                let result = bitonic::sort_in_tiles(gpu, launch, keys, None, false, *tile)?;
                let phases = bitonic::phases(keys.len(), false, *tile);
                let outcome = match first_difference(&result.keys, sorted) {
                    None => Outcome::Correct(result.report.gpu_time),
                    Some(wrong) => Outcome::Wrong(wrong),
                };
                Ok(vec![Measurement { phases, outcome }])
            }
            Problem::SmithWaterman { a, b, scoring, tile_cols, expected } => {
                let alignment = match sw::align_tiled(gpu, launch, a, b, scoring, *tile_cols) {
                    Ok(alignment) => alignment,
                    Err(sw::AlignError::Gpu(error)) => return Err(error),
                    Err(refused @ sw::AlignError::Input(_)) => {
                        return Ok(vec![Measurement { phases: 0, outcome: Outcome::Wrong(refused.to_string()) }]);
                    }
                };
                let threads = alignment.report.threads;
                let phases = sw::grid_syncs(a.len(), b.len(), threads, *tile_cols);
                let got = alignment.hit();
                let outcome = if got == *expected {
                    Outcome::Correct(alignment.report.gpu_time)
                } else {
                    Outcome::Wrong(format!(
                        "score {} ending at ({}, {}), the CPU reference {} at ({}, {})",
                        got.score, got.end_a, got.end_b, expected.score, expected.end_a, expected.end_b
                    ))
                };
                Ok(vec![Measurement { phases, outcome }])
            }
            Problem::Empty { phases } => {
                let short = run_empty(gpu, launch, *phases)?;
                let long = run_empty(gpu, launch, 2 * phases)?;
                Ok(vec![short, long])
            }
        }
    }
}

/// One launch of `empty_phases` with `phases` phases, checked by the last phase's marker.
fn run_empty(gpu: &Gpu, launch: &Launch, phases: u32) -> gsync::Result<Measurement> {
    let mut marker = gpu.zeros::<u32>(1)?;
    let report = empty_phases::launch_with(gpu, launch, &mut marker, phases)?;
    let last = gpu.download(&marker)?[0];
    let outcome = if last == phases - 1 {
        Outcome::Correct(report.gpu_time)
    } else {
        Outcome::Wrong(format!("the last phase wrote {last}, not {}", phases - 1))
    };
    Ok(Measurement { phases, outcome })
}

/// Where two key sequences first differ, in words; `None` when equal.
fn first_difference(got: &[u32], expected: &[u32]) -> Option<String> {
    if got.len() != expected.len() {
        return Some(format!("{} keys came back, expected {}", got.len(), expected.len()));
    }
    let position = got.iter().zip(expected).position(|(g, e)| g != e)?;
    let wrong = got.iter().zip(expected).filter(|(g, e)| g != e).count();
    Some(format!(
        "{wrong} of {} keys out of place, the first at {position}: {} instead of {}",
        got.len(),
        got[position],
        expected[position]
    ))
}

/// `len` residues drawn uniformly from the 20 amino acids, encoded for `scoring`.
fn random_protein(rng: &mut StdRng, len: usize, scoring: &Scoring) -> Result<Vec<u8>> {
    let letters = &sw::PROTEIN_ALPHABET[..20];
    let residues: Vec<u8> = (0..len).map(|_| letters[rng.gen_range(0..letters.len())]).collect();
    scoring.encode(&residues).map_err(input_error)
}

fn input_error(e: sw::InputError) -> BenchError {
    BenchError::Usage(format!("Smith-Waterman input: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tile_height_is_found_from_the_public_phase_count() {
        for (threads, tile_cols) in [(32, 32), (32, 64), (256, 512), (1024, 64)] {
            let height = sw_tile_height(threads, tile_cols);
            assert!(height >= threads as usize, "at least one row per thread: {height}");
            let one = sw::grid_syncs(height, 1, threads, tile_cols);
            assert_eq!(sw::grid_syncs(1, 1, threads, tile_cols), one);
            assert_eq!(sw::grid_syncs(height + 1, 1, threads, tile_cols), one + 1, "{threads} threads");
            assert_eq!(sw_widest_diagonal(60 * height, 60 * tile_cols as usize, threads, tile_cols), 60);
        }
    }

    #[test]
    fn differences_are_described_and_equal_keys_are_not() {
        assert_eq!(first_difference(&[1, 2, 3], &[1, 2, 3]), None);
        let message = first_difference(&[1, 3, 2], &[1, 2, 3]).expect("differs");
        assert!(message.contains("2 of 3 keys") && message.contains("first at 1: 3 instead of 2"), "{message}");
        assert!(first_difference(&[1], &[1, 2]).expect("shorter").contains("1 keys came back, expected 2"));
    }

    #[test]
    fn inputs_come_from_the_seed() {
        let spec = ProblemSpec::Bitonic { n: 64, tile: 8 };
        let keys = |seed| match Problem::new(spec, seed).expect("problem") {
            Problem::Bitonic { keys, sorted, .. } => {
                assert!(sorted.windows(2).all(|w| w[0] <= w[1]));
                keys
            }
            _ => unreachable!("a bitonic spec makes a bitonic problem"),
        };
        assert_eq!(keys(1), keys(1));
        assert_ne!(keys(1), keys(2));
        assert_eq!(spec.describe(), "n=64 tile=8");
    }

    #[test]
    fn a_tiny_run_of_each_workload_is_verified_on_the_emulator() {
        let gpu = Gpu::emulator();
        let launch = Launch::new().blocks(3).threads(32).barrier(gsync::Barrier::Lbs);
        let specs = [
            ProblemSpec::Bitonic { n: 256, tile: 64 },
            ProblemSpec::SmithWaterman { m: 40, n: 50, tile_cols: 16 },
            ProblemSpec::Empty { phases: 3 },
        ];
        for spec in specs {
            let problem = Problem::new(spec, 7).expect("problem");
            let measurements = problem.run(&gpu, &launch).expect("runs");
            assert!(!measurements.is_empty());
            for m in &measurements {
                assert!(matches!(m.outcome, Outcome::Correct(_)), "{spec:?}: {:?}", m.outcome);
            }
            assert_eq!(measurements[0].phases, spec.phases(32), "{spec:?}");
        }
    }
}
