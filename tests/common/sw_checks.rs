//! The Smith-Waterman kernel against its CPU reference (score and end
//! position), shared by the GPU tests and the emulator tests.

use super::checks::{rng, Scale};
use gsync::kernels::smith_waterman::{
    align, align_reference, align_stripes, align_tiled, parse_fasta, stripes_fit_block, AlignError, InputError,
    Scoring, DNA_ALPHABET,
};
use gsync::prelude::*;
use rand::{rngs::StdRng, Rng};

/// `len` random residues among the first `letters` codes.
fn random_codes(rng: &mut StdRng, len: usize, letters: u8) -> Vec<u8> {
    (0..len).map(|_| rng.gen_range(0..letters)).collect()
}

/// A copy of a stretch of `a` with substitutions, insertions and deletions,
/// embedded in random residues: a pair whose best alignment is long and gapped.
fn related(rng: &mut StdRng, a: &[u8], len: usize, letters: u8) -> Vec<u8> {
    let start = rng.gen_range(0..a.len());
    let lead = rng.gen_range(0..=len / 4);
    let mut b = random_codes(rng, lead, letters);
    for &x in &a[start..] {
        if b.len() >= len {
            break;
        }
        match rng.gen_range(0..20) {
            0 => {} // deletion
            1 => {
                let inserted = rng.gen_range(1..6);
                b.extend(random_codes(rng, inserted, letters));
            }
            2 | 3 => b.push(rng.gen_range(0..letters)), // substitution
            _ => b.push(x),
        }
    }
    let rest = len.saturating_sub(b.len());
    b.extend(random_codes(rng, rest, letters));
    b.truncate(len);
    b
}

/// Protein and DNA schemes with several gap settings, and the residues to draw from.
fn schemes() -> Vec<(Scoring, u8)> {
    vec![
        (Scoring::blosum62(11, 1).unwrap(), 20),
        (Scoring::blosum62(5, 2).unwrap(), 20),
        (Scoring::dna(2, -3, 5, 2).unwrap(), 4),
        (Scoring::dna(1, -1, 1, 1).unwrap(), 4),
        (Scoring::dna(2, -2, 3, 0).unwrap(), 4),
        // Extending a gap costs more than opening one: F down a column then
        // extends by `open`, not `extend`.
        (Scoring::dna(3, -1, 1, 4).unwrap(), 4),
    ]
}

/// Aligns on `gpu` and compares with the CPU reference.
fn check(gpu: &Gpu, launch: &Launch, a: &[u8], b: &[u8], scoring: &Scoring, what: &str) {
    let got = align(gpu, launch, a, b, scoring).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(got.hit(), align_reference(a, b, scoring), "{what}: m {}, n {}", a.len(), b.len());
}

pub fn smith_waterman_matches_the_cpu_reference(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let lengths = match scale {
        Scale::Full => vec![1usize, 2, 31, 33, 127, 129, 200, 500, 1000, 1999, 2000],
        Scale::Small => vec![1usize, 2, 31, 33, 200, 500],
    };
    let pairs = match scale {
        Scale::Full => 60,
        Scale::Small => 20,
    };
    for (k, (scoring, letters)) in schemes().iter().enumerate() {
        for p in 0..pairs {
            let m = lengths[rng.gen_range(0..lengths.len())];
            let n = lengths[rng.gen_range(0..lengths.len())];
            let a = random_codes(&mut rng, m, *letters);
            let b = if p % 2 == 0 { related(&mut rng, &a, n, *letters) } else { random_codes(&mut rng, n, *letters) };
            check(gpu, &Launch::new(), &a, &b, scoring, &format!("scheme {k}, pair {p}"));
        }
    }
}

pub fn smith_waterman_tiles_of_any_shape_give_the_same_alignment(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let (m, n) = match scale {
        Scale::Full => (1500, 1700),
        Scale::Small => (150, 170),
    };
    let (scoring, letters) = (Scoring::blosum62(11, 1).unwrap(), 20);
    let a = random_codes(&mut rng, m, letters);
    let b = related(&mut rng, &a, n, letters);
    let expected = align_reference(&a, &b, &scoring);
    let block_sizes = match scale {
        Scale::Full => vec![1u32, 7, 32, 96, 128, 256, 1024],
        Scale::Small => vec![1u32, 7, 32, 96],
    };
    for threads in block_sizes {
        for tile_cols in [1u32, 5, 64, 300, 1024, 5000] {
            if tile_cols == 1 && threads > 32 && matches!(scale, Scale::Small) {
                continue; // a thousand near-empty steps per tile: slow on the emulator, nothing new
            }
            for blocks in [None, Some(1u32), Some(3)] {
                let mut launch = Launch::new().threads(threads);
                if let Some(blocks) = blocks {
                    launch = launch.blocks(blocks);
                }
                let got = align_tiled(gpu, &launch, &a, &b, &scoring, tile_cols).unwrap();
                assert_eq!(got.hit(), expected, "{threads} threads, {tile_cols} tile columns, {blocks:?} blocks");
            }
        }
    }
}

/// The stripe kernel on every block size (small blocks stage fewer columns at a time) and on
/// grids smaller than the stripe count, where blocks take several stripes and stripes reuse
/// the hand-down row that the stripe above is still writing.
pub fn smith_waterman_stripes_of_any_shape_give_the_same_alignment(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let (m, n) = match scale {
        Scale::Full => (3000, 1700),
        Scale::Small => (300, 170),
    };
    let (scoring, letters) = (Scoring::blosum62(11, 1).unwrap(), 20);
    let a = random_codes(&mut rng, m, letters);
    let b = related(&mut rng, &a, n, letters);
    let expected = align_reference(&a, &b, &scoring);
    let block_sizes = match scale {
        Scale::Full => vec![1u32, 7, 32, 33, 96, 128, 256, 1024],
        Scale::Small => vec![1u32, 7, 32, 33],
    };
    for threads in block_sizes {
        let fits = stripes_fit_block(gpu, &Launch::new().threads(threads), &scoring).unwrap();
        if let Some(expected) = stripes_clearly_fit(gpu, threads, 24) {
            assert_eq!(fits, expected, "{threads} threads");
        }
        for blocks in [None, Some(1u32), Some(2), Some(3)] {
            let mut launch = Launch::new().threads(threads);
            if let Some(blocks) = blocks {
                launch = launch.blocks(blocks);
            }
            if fits {
                let got = align_stripes(gpu, &launch, &a, &b, &scoring).unwrap();
                assert_eq!(got.hit(), expected, "{threads} threads, {blocks:?} blocks");
            } else {
                match align_stripes(gpu, &launch, &a, &b, &scoring) {
                    Err(AlignError::Input(InputError::TooManyThreadsForStripes { threads: t, alphabet: 24 })) => {
                        assert_eq!(t, threads)
                    }
                    other => panic!("expected TooManyThreadsForStripes, got {:?}", other.map(|a| a.hit())),
                }
                // `align` takes the tiles instead.
                let got = align(gpu, &launch, &a, &b, &scoring).unwrap();
                assert_eq!(got.hit(), expected, "align, {threads} threads, {blocks:?} blocks");
            }
        }
    }
    // Past the scores a hand-down word carries, the stripes refuse and `align` takes tiles.
    let long = vec![0u8; (1 << 25) / 4 + 1];
    match align_stripes(gpu, &Launch::new(), &long, &long, &scoring) {
        Err(AlignError::Input(InputError::TooLongForStripes { .. })) => {}
        other => panic!("expected TooLongForStripes, got {:?}", other.map(|a| a.hit())),
    }
}

/// Whether the stripe kernel's shared memory for blocks of `threads` and an alphabet of
/// `letters` clearly fits this GPU's block (`Some(true)`), clearly does not (`Some(false)`: the
/// score profile alone is too large), or is too close to call from outside the runtime's
/// layout (`None`).
fn stripes_clearly_fit(gpu: &Gpu, threads: u32, letters: usize) -> Option<bool> {
    let limit = gpu.info().max_shared_memory_per_block_optin as usize;
    let threads = threads as usize;
    let profile = letters * 32 * threads;
    // Three rings of staged columns, two halves of pass slots, and room for alignment.
    let staged = 3 * 4 * (threads + 96).next_power_of_two() + 2 * 2 * 4 * threads + 1024;
    if profile + staged <= limit {
        Some(true)
    } else if profile > limit {
        Some(false)
    } else {
        None
    }
}

/// The stripe kernel keeps each thread's scores against every residue in shared memory
/// (`alphabet · 32` bytes per thread): a block of 384 threads holds them for DNA's 5 letters
/// (on a GPU with about 75 KB of shared memory per block) but not for protein's 24 (288 KB),
/// where `align_stripes` refuses with a typed error and `align` takes the tiles.
pub fn smith_waterman_stripes_refuse_blocks_their_scores_overflow(gpu: &Gpu, _scale: Scale) {
    let mut rng = rng();
    let launch = Launch::new().threads(384);
    let protein = Scoring::blosum62(11, 1).unwrap();
    let a = random_codes(&mut rng, 90, 20);
    let b = related(&mut rng, &a, 70, 20);
    assert_eq!(stripes_clearly_fit(gpu, 384, 24), Some(false));
    assert!(!stripes_fit_block(gpu, &launch, &protein).unwrap());
    match align_stripes(gpu, &launch, &a, &b, &protein) {
        Err(AlignError::Input(error @ InputError::TooManyThreadsForStripes { threads: 384, alphabet: 24 })) => {
            assert!(error.to_string().contains("use fewer threads"), "{error}")
        }
        other => panic!("expected TooManyThreadsForStripes, got {:?}", other.map(|a| a.hit())),
    }
    let got = align(gpu, &launch, &a, &b, &protein).unwrap();
    assert_eq!(got.hit(), align_reference(&a, &b, &protein));
    // An empty sequence scores 0 without a launch, whatever the block size.
    assert_eq!(align_stripes(gpu, &launch, &a, &[], &protein).unwrap().score, 0);

    let dna = Scoring::dna(2, -3, 5, 2).unwrap();
    if stripes_clearly_fit(gpu, 384, 5) == Some(true) {
        let a = random_codes(&mut rng, 90, 4);
        let b = related(&mut rng, &a, 70, 4);
        assert!(stripes_fit_block(gpu, &launch, &dna).unwrap());
        let got = align_stripes(gpu, &launch, &a, &b, &dna).unwrap();
        assert_eq!(got.hit(), align_reference(&a, &b, &dna));
    }
}

pub fn smith_waterman_scores_the_ssw_example_21(gpu: &Gpu, _scale: Scale) {
    let scoring = Scoring::dna(2, -2, 3, 1).unwrap();
    let reference = scoring.encode(b"CAGCCTTTCTGACCCGGAAATCAAAATAGGCACAACAAA").unwrap();
    let read = scoring.encode(b"CTGAGCCGGTAAATC").unwrap();
    assert_eq!(align_reference(&reference, &read, &scoring).score, 21);
    for threads in [1u32, 4, 32, 128] {
        let launch = Launch::new().threads(threads);
        let got = align(gpu, &launch, &reference, &read, &scoring).unwrap();
        assert_eq!(got.score, 21, "{threads} threads");
        assert_eq!(got.hit(), align_reference(&reference, &read, &scoring));
        let swapped = align(gpu, &launch, &read, &reference, &scoring).unwrap();
        assert_eq!(swapped.score, 21, "read against reference, {threads} threads");
    }
}

pub fn smith_waterman_handles_empty_and_single_residue_sequences(gpu: &Gpu, _scale: Scale) {
    let scoring = Scoring::dna(2, -3, 5, 2).unwrap();
    let launch = Launch::new();
    let empty = align(gpu, &launch, &[], &[0, 1, 2], &scoring).unwrap();
    assert_eq!((empty.score, empty.end_a, empty.end_b, empty.report.blocks), (0, 0, 0, 0));
    assert_eq!(align(gpu, &launch, &[1], &[], &scoring).unwrap().score, 0);
    for (a, b) in [(vec![0u8], vec![0u8]), (vec![0], vec![1]), (vec![2], vec![3, 2, 2]), (vec![3, 1, 3], vec![3])] {
        check(gpu, &launch, &a, &b, &scoring, "tiny");
    }
}

pub fn smith_waterman_runs_under_every_barrier(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let (m, n) = match scale {
        Scale::Full => (2000, 1900),
        Scale::Small => (90, 80),
    };
    let scoring = Scoring::dna(2, -3, 5, 2).unwrap();
    let a = random_codes(&mut rng, m, 4);
    let b = related(&mut rng, &a, n, 4);
    for &barrier in Barrier::ALL {
        let launch = Launch::new().barrier(barrier).threads(32);
        check(gpu, &launch, &a, &b, &scoring, &format!("{barrier}"));
    }
}

pub fn smith_waterman_aligns_sequences_read_from_fasta(gpu: &Gpu, _scale: Scale) {
    let text = ">query  example\nhea\nGAWGhee\n\n>subject\r\nPAWH\r\neae\r\n";
    let records = parse_fasta(text).unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!((records[0].name.as_str(), &records[0].sequence[..]), ("query  example", &b"HEAGAWGHEE"[..]));
    assert_eq!(records[1].sequence, b"PAWHEAE");
    let scoring = Scoring::blosum62(11, 1).unwrap();
    let a = scoring.encode(&records[0].sequence).unwrap();
    let b = scoring.encode(&records[1].sequence).unwrap();
    check(gpu, &Launch::new(), &a, &b, &scoring, "fasta");
    let dna = Scoring::dna(2, -3, 5, 2).unwrap();
    let genes = parse_fasta(">g1\nACGTNacgtn\n>g2\nTTACGTAC\n").unwrap();
    assert_eq!(dna.encode(&genes[0].sequence).unwrap(), [0, 1, 2, 3, 4, 0, 1, 2, 3, 4]);
    assert_eq!(DNA_ALPHABET, b"ACGTN");
    let (x, y) = (dna.encode(&genes[0].sequence).unwrap(), dna.encode(&genes[1].sequence).unwrap());
    check(gpu, &Launch::new(), &x, &y, &dna, "fasta dna");
    assert!(parse_fasta(">x\nAC-GT\n").is_err());
}

pub fn smith_waterman_breaks_ties_by_row_major_order(gpu: &Gpu, _scale: Scale) {
    let dna = Scoring::dna(2, -3, 5, 2).unwrap();
    // Two motifs score alike. In `a`, P ends at row 8 and Q at row 16; in
    // `b`, Q ends at column 6 and P at column 40. With 4-column tiles, Q's
    // cell (tile column 1) is reached long before P's (tile column 9),
    // though P's comes first in row-major order.
    let a = dna.encode(b"NNACGTACNNTTGCAGNNNN").unwrap();
    let b = dna.encode(&[&b"TTGCAG"[..], &[b'N'; 28], b"ACGTAC"].concat()).unwrap();
    // The same within one thread's rows: P = AC ends at row 2, Q = GT at
    // row 4; Q's cell (column 2) comes first in time, P's (column 32) first
    // in row-major order.
    let c = dna.encode(b"ACGT").unwrap();
    let d = dna.encode(&[&b"GT"[..], &[b'N'; 28], b"AC"].concat()).unwrap();
    for (a, b, end) in [(&a, &b, (12, 8, 40)), (&c, &d, (4, 2, 32))] {
        let expected = align_reference(a, b, &dna);
        assert_eq!((expected.score, expected.end_a, expected.end_b), end);
        for blocks in [1u32, 2, 5] {
            for threads in [1u32, 4, 32] {
                let launch = Launch::new().threads(threads).blocks(blocks);
                let got = align_tiled(gpu, &launch, a, b, &dna, 4).unwrap();
                assert_eq!(got.hit(), expected, "{blocks} blocks × {threads} threads");
            }
        }
    }
}

pub fn smith_waterman_refuses_letters_outside_the_alphabet(gpu: &Gpu, _scale: Scale) {
    let dna = Scoring::dna(2, -3, 5, 2).unwrap();
    let a = dna.encode(b"ACGTACGT").unwrap();
    let unknown = [0u8, 1, 9];
    match align(gpu, &Launch::new(), &a, &unknown, &dna) {
        Err(e @ AlignError::Input(InputError::UnknownLetter { .. })) => {
            assert!(e.to_string().contains("position 2"), "{e}")
        }
        other => panic!("expected AlignError::Input, got {other:?}"),
    }
}
