//! The plain CPU Gotoh recurrence, row by row in O(n) memory: what the kernel is checked against.

use super::Scoring;
use std::sync::mpsc::{Receiver, SyncSender};

/// The best local alignment's score and where it ends.
///
/// `end_a` and `end_b` are 1-based positions in the first and second
/// sequence (row `i` and column `j` of the DP matrix `H`); when several
/// cells hold the best score, the first in row-major order (smallest `i`,
/// then smallest `j`). A best score of 0 (no positive alignment) ends at (0, 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LocalHit {
    /// The best local alignment score (never negative).
    pub score: i32,
    /// 1-based end position in the first sequence, 0 when `score` is 0.
    pub end_a: usize,
    /// 1-based end position in the second sequence, 0 when `score` is 0.
    pub end_b: usize,
}

/// "Minus infinity" for the gap matrices: low enough never to win, high
/// enough that subtracting a penalty does not overflow.
pub(super) const NEG: i32 = i32::MIN / 2;

/// Smith-Waterman with affine gaps (Gotoh) on the CPU, over codes of `scoring`'s alphabet:
///
/// ```text
/// E[i][j] = max(E[i][j−1] − extend, H[i][j−1] − open)      gap in a (move along b)
/// F[i][j] = max(F[i−1][j] − extend, H[i−1][j] − open)      gap in b (move along a)
/// H[i][j] = max(0, H[i−1][j−1] + s(a_i, b_j), E[i][j], F[i][j])
/// ```
///
/// with `H` = 0 and `E`, `F` = −∞ on row 0 and column 0.
pub fn align_reference(a: &[u8], b: &[u8], scoring: &Scoring) -> LocalHit {
    let (open, extend) = (scoring.open(), scoring.extend());
    // H and F of the row above, for columns 0..=n.
    let mut h_up = vec![0i32; b.len() + 1];
    let mut f_up = vec![NEG; b.len() + 1];
    let mut best = LocalHit::default();
    for (i, &x) in a.iter().enumerate() {
        let (mut diag, mut h_left, mut e_left) = (0, 0, NEG);
        for (j, &y) in b.iter().enumerate() {
            let e = (e_left - extend).max(h_left - open);
            let f = (f_up[j + 1] - extend).max(h_up[j + 1] - open);
            let h = (diag + scoring.score(x, y)).max(e).max(f).max(0);
            diag = h_up[j + 1];
            (h_up[j + 1], f_up[j + 1], h_left, e_left) = (h, f, h, e);
            if h > best.score {
                best = LocalHit { score: h, end_a: i + 1, end_b: j + 1 };
            }
        }
    }
    best
}

/// [`align_reference`] on `workers` CPU threads, for matrices too large to
/// check on one core: each thread owns a stripe of rows and sweeps it in
/// chunks of columns, receiving the H and F of the row above each chunk from
/// the stripe above (a pipeline along the stripes). Same result, same
/// tie-breaking.
pub fn align_reference_parallel(a: &[u8], b: &[u8], scoring: &Scoring, workers: usize) -> LocalHit {
    const CHUNK: usize = 2048;
    let stripe = a.len().div_ceil(workers.max(1)).max(1);
    if a.len() <= stripe || b.is_empty() {
        return align_reference(a, b, scoring);
    }
    let stripes: Vec<(usize, &[u8])> = a.chunks(stripe).enumerate().map(|(k, rows)| (k * stripe, rows)).collect();
    std::thread::scope(|scope| {
        let mut above: Option<Receiver<Vec<(i32, i32)>>> = None;
        let mut running = Vec::new();
        for (k, &(first_row, rows)) in stripes.iter().enumerate() {
            let (to_below, from_above) = if k + 1 < stripes.len() {
                let (send, receive) = std::sync::mpsc::sync_channel(4);
                (Some(send), Some(receive))
            } else {
                (None, None)
            };
            let input = std::mem::replace(&mut above, from_above);
            running.push(scope.spawn(move || sweep_stripe(first_row, rows, b, scoring, CHUNK, input, to_below)));
        }
        running.into_iter().map(|worker| worker.join().expect("a reference worker panicked")).fold(
            LocalHit::default(),
            |best, hit| if hit.score > best.score { hit } else { best }, // stripes come in row order
        )
    })
}

/// One stripe of [`align_reference_parallel`]: rows `first_row + 1 …` of
/// `rows`, chunk by chunk; sends its last row's H and F of each chunk below.
fn sweep_stripe(
    first_row: usize,
    rows: &[u8],
    b: &[u8],
    scoring: &Scoring,
    chunk: usize,
    above: Option<Receiver<Vec<(i32, i32)>>>,
    below: Option<SyncSender<Vec<(i32, i32)>>>,
) -> LocalHit {
    let (open, extend) = (scoring.open(), scoring.extend());
    let mut left = vec![(0i32, NEG); rows.len()]; // H, E of each row's last column so far
    let mut corner = 0i32; // H of the row above at the column before the chunk
    let mut best = LocalHit::default();
    for (c, columns) in b.chunks(chunk).enumerate() {
        let j0 = c * chunk;
        // H, F of the row above, then of each row in turn.
        let mut up = match &above {
            Some(receiver) => receiver.recv().expect("the stripe above stopped early"),
            None => vec![(0, NEG); columns.len()],
        };
        let next_corner = up[columns.len() - 1].0;
        let mut diag_below = corner; // H[i − 1][j0] for the next row
        for (r, &x) in rows.iter().enumerate() {
            let (mut h_left, mut e_left) = left[r];
            let mut diag = diag_below;
            diag_below = h_left;
            for (k, &y) in columns.iter().enumerate() {
                let (h_up, f_up) = up[k];
                let e = (e_left - extend).max(h_left - open);
                let f = (f_up - extend).max(h_up - open);
                let h = (diag + scoring.score(x, y)).max(e).max(f).max(0);
                diag = h_up;
                up[k] = (h, f);
                (h_left, e_left) = (h, e);
                let (i, j) = (first_row + r + 1, j0 + k + 1);
                if h > best.score || (h == best.score && h > 0 && (i, j) < (best.end_a, best.end_b)) {
                    best = LocalHit { score: h, end_a: i, end_b: j };
                }
            }
            left[r] = (h_left, e_left);
        }
        corner = next_corner;
        if let Some(sender) = &below {
            sender.send(up).expect("the stripe below stopped early");
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::smith_waterman::{Scoring, BLOSUM62_EXTEND, BLOSUM62_OPEN};

    /// The SSW library's example: reference, read, match 2, mismatch −2, open 3, extend 1 → 21.
    #[test]
    fn the_published_ssw_example_scores_21() {
        let scoring = Scoring::dna(2, -2, 3, 1).unwrap();
        let reference = scoring.encode(b"CAGCCTTTCTGACCCGGAAATCAAAATAGGCACAACAAA").unwrap();
        let read = scoring.encode(b"CTGAGCCGGTAAATC").unwrap();
        assert_eq!(align_reference(&reference, &read, &scoring).score, 21);
        assert_eq!(align_reference(&read, &reference, &scoring).score, 21);
    }

    /// Every cell by its definition: the best of a diagonal step and every
    /// gap length explicitly (Waterman–Smith–Beyer), in O(m·n·(m+n)).
    fn by_definition(a: &[u8], b: &[u8], scoring: &Scoring) -> LocalHit {
        let (m, n) = (a.len(), b.len());
        let gap = |len: usize| scoring.open() + (len as i32 - 1) * scoring.extend();
        let mut h = vec![vec![0i32; n + 1]; m + 1];
        let mut best = LocalHit::default();
        for i in 1..=m {
            for j in 1..=n {
                let mut v = (h[i - 1][j - 1] + scoring.score(a[i - 1], b[j - 1])).max(0);
                for k in 1..=i {
                    v = v.max(h[i - k][j] - gap(k));
                }
                for k in 1..=j {
                    v = v.max(h[i][j - k] - gap(k));
                }
                h[i][j] = v;
                if v > best.score {
                    best = LocalHit { score: v, end_a: i, end_b: j };
                }
            }
        }
        best
    }

    /// A xorshift generator of small codes below a bound, from `seed`.
    fn codes(seed: u64) -> impl FnMut(u64) -> u8 {
        let mut state = seed;
        move |bound| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % bound) as u8
        }
    }

    #[test]
    fn gotoh_matches_the_definition_on_small_random_pairs() {
        let mut next = codes(0x9e37_79b9_7f4a_7c15);
        let schemes = [
            Scoring::blosum62(BLOSUM62_OPEN, BLOSUM62_EXTEND).unwrap(),
            Scoring::blosum62(3, 3).unwrap(),
            Scoring::dna(2, -3, 5, 2).unwrap(),
            Scoring::dna(1, -1, 0, 0).unwrap(),
            Scoring::dna(3, -1, 2, 1).unwrap(),
        ];
        for scoring in &schemes {
            let k = if scoring.alphabet().len() > 5 { 20 } else { 4 };
            for _ in 0..40 {
                let (m, n) = (1 + next(25) as usize, 1 + next(25) as usize);
                let a: Vec<u8> = (0..m).map(|_| next(k)).collect();
                let b: Vec<u8> = (0..n).map(|_| next(k)).collect();
                assert_eq!(align_reference(&a, &b, scoring), by_definition(&a, &b, scoring), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn the_parallel_reference_matches_the_serial_one() {
        let mut next = codes(0x2545_f491_4f6c_dd1d);
        let protein = Scoring::blosum62(BLOSUM62_OPEN, BLOSUM62_EXTEND).unwrap();
        let dna = Scoring::dna(1, -1, 0, 0).unwrap(); // many ties
        for (scoring, k) in [(&protein, 20), (&dna, 4)] {
            for (m, n) in [(1, 1), (7, 3000), (3000, 7), (1500, 2500), (2049, 2100)] {
                let a: Vec<u8> = (0..m).map(|_| next(k)).collect();
                let b: Vec<u8> = (0..n).map(|_| next(k)).collect();
                let serial = align_reference(&a, &b, scoring);
                for workers in [1, 3, 8] {
                    assert_eq!(align_reference_parallel(&a, &b, scoring, workers), serial, "{m}×{n}, {workers}");
                }
            }
        }
        // A tie: AC ends at (2, 2052), in the second chunk of the first stripe; GT at
        // (12, 5), found first, in the first chunk of the last stripe.
        let dna = Scoring::dna(2, -3, 5, 2).unwrap();
        let code = |s: &[u8]| dna.encode(s).unwrap();
        let a = code(b"ACCCCCCCCCGT");
        let b = code(&[&b"TTTGT"[..], &[b'T'; 2045], b"ACTTT"].concat());
        let serial = align_reference(&a, &b, &dna);
        assert_eq!((serial.score, serial.end_a, serial.end_b), (4, 2, 2052));
        assert_eq!(align_reference_parallel(&a, &b, &dna, 6), serial);
    }

    #[test]
    fn ties_end_at_the_first_cell_in_row_major_order_and_zero_scores_at_the_origin() {
        let scoring = Scoring::dna(2, -3, 5, 2).unwrap();
        let code = |s: &[u8]| scoring.encode(s).unwrap();
        // "A" matches at (1, 2) and (1, 4): row-major first is column 2.
        assert_eq!(align_reference(&code(b"A"), &code(b"CACA"), &scoring), LocalHit { score: 2, end_a: 1, end_b: 2 });
        // Column 1 matches at rows 2 and 3: row 2 comes first.
        assert_eq!(align_reference(&code(b"CAA"), &code(b"A"), &scoring), LocalHit { score: 2, end_a: 2, end_b: 1 });
        assert_eq!(align_reference(&code(b"AAA"), &code(b"CCC"), &scoring), LocalHit::default());
    }
}
