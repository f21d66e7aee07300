//! Substitution matrices, gap penalties and the encoding of letters as codes.

use super::input::{InputError, MAX_ALPHABET, MAX_SCORE};

/// The protein alphabet of [`BLOSUM62`], in NCBI's order: the 20 standard
/// amino acids, then `B` (D or N), `Z` (E or Q), `X` (any) and `*` (stop).
pub const PROTEIN_ALPHABET: &[u8; 24] = b"ARNDCQEGHILKMFPSTWYVBZX*";

/// The DNA alphabet of [`Scoring::dna`]: the four bases, then `N` (any).
pub const DNA_ALPHABET: &[u8; 5] = b"ACGTN";

/// NCBI's BLOSUM62 (half-bit units), row-major over [`PROTEIN_ALPHABET`]:
/// the score of `PROTEIN_ALPHABET[x]` against `PROTEIN_ALPHABET[y]` is
/// `BLOSUM62[x * 24 + y]`.
#[rustfmt::skip]
pub const BLOSUM62: [i32; 24 * 24] = [
//   A   R   N   D   C   Q   E   G   H   I   L   K   M   F   P   S   T   W   Y   V   B   Z   X   *
     4, -1, -2, -2,  0, -1, -1,  0, -2, -1, -1, -1, -1, -2, -1,  1,  0, -3, -2,  0, -2, -1,  0, -4, // A
    -1,  5,  0, -2, -3,  1,  0, -2,  0, -3, -2,  2, -1, -3, -2, -1, -1, -3, -2, -3, -1,  0, -1, -4, // R
    -2,  0,  6,  1, -3,  0,  0,  0,  1, -3, -3,  0, -2, -3, -2,  1,  0, -4, -2, -3,  3,  0, -1, -4, // N
    -2, -2,  1,  6, -3,  0,  2, -1, -1, -3, -4, -1, -3, -3, -1,  0, -1, -4, -3, -3,  4,  1, -1, -4, // D
     0, -3, -3, -3,  9, -3, -4, -3, -3, -1, -1, -3, -1, -2, -3, -1, -1, -2, -2, -1, -3, -3, -2, -4, // C
    -1,  1,  0,  0, -3,  5,  2, -2,  0, -3, -2,  1,  0, -3, -1,  0, -1, -2, -1, -2,  0,  3, -1, -4, // Q
    -1,  0,  0,  2, -4,  2,  5, -2,  0, -3, -3,  1, -2, -3, -1,  0, -1, -3, -2, -2,  1,  4, -1, -4, // E
     0, -2,  0, -1, -3, -2, -2,  6, -2, -4, -4, -2, -3, -3, -2,  0, -2, -2, -3, -3, -1, -2, -1, -4, // G
    -2,  0,  1, -1, -3,  0,  0, -2,  8, -3, -3, -1, -2, -1, -2, -1, -2, -2,  2, -3,  0,  0, -1, -4, // H
    -1, -3, -3, -3, -1, -3, -3, -4, -3,  4,  2, -3,  1,  0, -3, -2, -1, -3, -1,  3, -3, -3, -1, -4, // I
    -1, -2, -3, -4, -1, -2, -3, -4, -3,  2,  4, -2,  2,  0, -3, -2, -1, -2, -1,  1, -4, -3, -1, -4, // L
    -1,  2,  0, -1, -3,  1,  1, -2, -1, -3, -2,  5, -1, -3, -1,  0, -1, -3, -2, -2,  0,  1, -1, -4, // K
    -1, -1, -2, -3, -1,  0, -2, -3, -2,  1,  2, -1,  5,  0, -2, -1, -1, -1, -1,  1, -3, -1, -1, -4, // M
    -2, -3, -3, -3, -2, -3, -3, -3, -1,  0,  0, -3,  0,  6, -4, -2, -2,  1,  3, -1, -3, -3, -1, -4, // F
    -1, -2, -2, -1, -3, -1, -1, -2, -2, -3, -3, -1, -2, -4,  7, -1, -1, -4, -3, -2, -2, -1, -2, -4, // P
     1, -1,  1,  0, -1,  0,  0,  0, -1, -2, -2,  0, -1, -2, -1,  4,  1, -3, -2, -2,  0,  0,  0, -4, // S
     0, -1,  0, -1, -1, -1, -1, -2, -2, -1, -1, -1, -1, -2, -1,  1,  5, -2, -2,  0, -1, -1,  0, -4, // T
    -3, -3, -4, -4, -2, -2, -3, -2, -2, -3, -2, -3, -1,  1, -4, -3, -2, 11,  2, -3, -4, -3, -2, -4, // W
    -2, -2, -2, -3, -2, -1, -2, -3,  2, -1, -1, -2, -1,  3, -3, -2, -2,  2,  7, -1, -3, -2, -1, -4, // Y
     0, -3, -3, -3, -1, -2, -2, -3, -3,  3,  1, -2,  1, -1, -2, -2,  0, -3, -1,  4, -3, -2, -1, -4, // V
    -2, -1,  3,  4, -3,  0,  1, -1,  0, -3, -4,  0, -3, -3, -2,  0, -1, -4, -3, -3,  4,  1, -1, -4, // B
    -1,  0,  0,  1, -3,  3,  4, -2,  0, -3, -3,  1, -1, -3, -1,  0, -1, -3, -2, -2,  1,  4, -1, -4, // Z
     0, -1, -1, -1, -2, -1, -1, -1, -1, -1, -1, -1, -1, -1, -2,  0,  0, -2, -1, -1, -1, -1, -1, -4, // X
    -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4,  1, // *
];

/// Default gap open penalty with [`BLOSUM62`] (BLAST's and parasail's 11).
pub const BLOSUM62_OPEN: i32 = 11;
/// Default gap extension penalty with [`BLOSUM62`].
pub const BLOSUM62_EXTEND: i32 = 1;
/// Default DNA match score.
pub const DNA_MATCH: i32 = 2;
/// Default DNA mismatch score (a score, so negative).
pub const DNA_MISMATCH: i32 = -3;
/// Default DNA gap open penalty.
pub const DNA_OPEN: i32 = 5;
/// Default DNA gap extension penalty.
pub const DNA_EXTEND: i32 = 2;

/// A substitution matrix over an alphabet, and affine gap penalties.
///
/// A gap of length `L` costs `open + (L − 1) · extend` (parasail's and SSW's
/// convention: `open` is the whole cost of a gap's first position). Letters
/// are encoded as their index in the alphabet ([`encode`](Self::encode)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scoring {
    alphabet: Vec<u8>,
    matrix: Vec<i32>,
    wildcard: Option<u8>,
    open: i32,
    extend: i32,
}

impl Scoring {
    /// A scoring scheme from an alphabet (upper-case letters or `*`, at most
    /// [`MAX_ALPHABET`]), its row-major substitution matrix, the letter that
    /// stands for letters outside the alphabet (if any), and gap penalties.
    /// Scores lie within ±[`MAX_SCORE`], penalties in `0..=MAX_SCORE`.
    pub fn new(
        alphabet: &[u8],
        matrix: &[i32],
        wildcard: Option<u8>,
        open: i32,
        extend: i32,
    ) -> Result<Scoring, InputError> {
        check_alphabet(alphabet, wildcard)?;
        if matrix.len() != alphabet.len() * alphabet.len() {
            return Err(InputError::MatrixShape { alphabet: alphabet.len(), entries: matrix.len() });
        }
        if let Some(&value) = matrix.iter().find(|s| s.abs() > MAX_SCORE) {
            return Err(InputError::ScoreRange { what: "substitution score", value });
        }
        for (what, value) in [("gap open penalty", open), ("gap extension penalty", extend)] {
            if !(0..=MAX_SCORE).contains(&value) {
                return Err(InputError::ScoreRange { what, value });
            }
        }
        let wildcard = wildcard.map(|w| alphabet.iter().position(|&l| l == w).unwrap_or_default() as u8);
        Ok(Scoring { alphabet: alphabet.to_vec(), matrix: matrix.to_vec(), wildcard, open, extend })
    }

    /// [`BLOSUM62`] over [`PROTEIN_ALPHABET`]; letters outside it (`U`, `O`, `J`) encode as `X`.
    pub fn blosum62(open: i32, extend: i32) -> Result<Scoring, InputError> {
        Scoring::new(PROTEIN_ALPHABET, &BLOSUM62, Some(b'X'), open, extend)
    }

    /// `match_score` for equal bases and `mismatch` (a score, usually
    /// negative) for different ones over [`DNA_ALPHABET`]; `N` scores 0
    /// against everything, as in SSW, and any other letter (IUPAC codes,
    /// `U`) encodes as `N`.
    pub fn dna(match_score: i32, mismatch: i32, open: i32, extend: i32) -> Result<Scoring, InputError> {
        let k = DNA_ALPHABET.len();
        let matrix: Vec<i32> = (0..k * k)
            .map(|c| {
                let (x, y) = (c / k, c % k);
                if x == k - 1 || y == k - 1 {
                    0
                } else if x == y {
                    match_score
                } else {
                    mismatch
                }
            })
            .collect();
        Scoring::new(DNA_ALPHABET, &matrix, Some(b'N'), open, extend)
    }

    /// The letters, in code order.
    pub fn alphabet(&self) -> &[u8] {
        &self.alphabet
    }

    /// The substitution matrix, row-major: `matrix()[x * k + y]` for codes `x`, `y`.
    pub fn matrix(&self) -> &[i32] {
        &self.matrix
    }

    /// The gap open penalty: the cost of a gap of length 1.
    pub fn open(&self) -> i32 {
        self.open
    }

    /// The gap extension penalty: the cost of each further gap position.
    pub fn extend(&self) -> i32 {
        self.extend
    }

    /// The substitution score of codes `x` and `y`.
    pub fn score(&self, x: u8, y: u8) -> i32 {
        self.matrix[usize::from(x) * self.alphabet.len() + usize::from(y)]
    }

    /// The largest substitution score (at least 0).
    pub fn max_score(&self) -> i32 {
        self.matrix.iter().copied().max().unwrap_or(0).max(0)
    }

    /// Letters (either case) as codes; a letter outside the alphabet becomes
    /// the wildcard's code, or is an [`InputError::UnknownLetter`] without one,
    /// as is any character that is not a letter or the alphabet's own `*`.
    pub fn encode(&self, letters: &[u8]) -> Result<Vec<u8>, InputError> {
        letters
            .iter()
            .enumerate()
            .map(|(position, &l)| {
                let upper = l.to_ascii_uppercase();
                match self.alphabet.iter().position(|&a| a == upper) {
                    Some(code) => Ok(code as u8),
                    None if upper.is_ascii_uppercase() && self.wildcard.is_some() => {
                        Ok(self.wildcard.unwrap_or_default())
                    }
                    None => Err(InputError::UnknownLetter { position, letter: char::from(l) }),
                }
            })
            .collect()
    }
}

/// Upper-case letters or `*`, each once, at most [`MAX_ALPHABET`]; the wildcard among them.
fn check_alphabet(alphabet: &[u8], wildcard: Option<u8>) -> Result<(), InputError> {
    let reason = if alphabet.is_empty() {
        "it is empty".to_owned()
    } else if alphabet.len() > MAX_ALPHABET {
        format!("it has {} letters, more than the kernel's {MAX_ALPHABET}", alphabet.len())
    } else if let Some(&c) = alphabet.iter().find(|&&c| !(c.is_ascii_uppercase() || c == b'*')) {
        format!("{:?} is not an upper-case letter or `*`", char::from(c))
    } else if let Some(i) = (1..alphabet.len()).find(|&i| alphabet[..i].contains(&alphabet[i])) {
        format!("{:?} appears twice", char::from(alphabet[i]))
    } else if let Some(w) = wildcard.filter(|w| !alphabet.contains(w)) {
        format!("the wildcard {:?} is not one of its letters", char::from(w))
    } else {
        return Ok(());
    };
    Err(InputError::Alphabet { reason })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blosum62_is_symmetric_with_the_published_diagonal() {
        for x in 0..24 {
            for y in 0..24 {
                assert_eq!(BLOSUM62[x * 24 + y], BLOSUM62[y * 24 + x], "{x} {y}");
            }
        }
        let diagonal: Vec<i32> = (0..24).map(|x| BLOSUM62[x * 25]).collect();
        assert_eq!(diagonal, [4, 5, 6, 6, 9, 5, 5, 6, 8, 4, 4, 5, 5, 6, 7, 4, 5, 11, 7, 4, 4, 4, -1, 1]);
        let sum: i32 = BLOSUM62.iter().sum();
        assert_eq!(sum, -726, "checksum of NCBI's table");
    }

    #[test]
    fn encoding_ignores_case_and_maps_unknown_letters_to_the_wildcard() {
        let protein = Scoring::blosum62(11, 1).unwrap();
        assert_eq!(protein.encode(b"ArN*u").unwrap(), [0, 1, 2, 23, 22]);
        assert_eq!(protein.encode(b"A-C"), Err(InputError::UnknownLetter { position: 1, letter: '-' }));
        let dna = Scoring::dna(2, -3, 5, 2).unwrap();
        assert_eq!(dna.encode(b"acgtRn").unwrap(), [0, 1, 2, 3, 4, 4]);
        assert!(dna.encode(b"AC*").is_err());
        assert_eq!((dna.score(0, 0), dna.score(0, 1), dna.score(4, 4), dna.score(2, 4)), (2, -3, 0, 0));
    }

    #[test]
    fn bad_alphabets_matrices_and_penalties_are_refused() {
        assert!(matches!(Scoring::new(b"", &[], None, 1, 1), Err(InputError::Alphabet { .. })));
        assert!(matches!(Scoring::new(b"AA", &[0; 4], None, 1, 1), Err(InputError::Alphabet { .. })));
        assert!(matches!(Scoring::new(b"Ab", &[0; 4], None, 1, 1), Err(InputError::Alphabet { .. })));
        assert!(matches!(Scoring::new(b"AB", &[0; 4], Some(b'N'), 1, 1), Err(InputError::Alphabet { .. })));
        assert!(matches!(Scoring::new(b"AB", &[0; 3], None, 1, 1), Err(InputError::MatrixShape { .. })));
        assert!(matches!(Scoring::blosum62(-1, 1), Err(InputError::ScoreRange { .. })));
        let letters: Vec<u8> = (b'A'..=b'Z').chain([b'*']).collect();
        assert!(Scoring::new(&letters, &vec![1; 27 * 27], None, 0, 0).is_ok());
    }
}
