//! What can be wrong with the sequences and scoring handed to the aligner.

use std::fmt;

/// The most letters an alphabet may have: the tile kernel keeps the substitution
/// matrix (at most 32 × 32 scores) in shared memory. The stripe kernel's score profile grows
/// with the alphabet too (see [`stripes_fit_block`](super::stripes_fit_block)).
pub const MAX_ALPHABET: usize = 32;

/// The largest substitution score magnitude and gap penalty [`Scoring`](super::Scoring) accepts.
pub const MAX_SCORE: i32 = 1 << 16;

/// A sequence, FASTA file or scoring scheme the aligner cannot use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputError {
    /// FASTA sequence data before the first `>` header line.
    FastaMissingHeader {
        /// The 1-based line number.
        line: usize,
    },
    /// A FASTA sequence line holds a character that is neither a letter nor `*`.
    FastaCharacter {
        /// The 1-based line number.
        line: usize,
        /// The offending character.
        character: char,
    },
    /// A sequence holds a character the scoring's alphabet cannot encode.
    UnknownLetter {
        /// The 0-based position in the sequence.
        position: usize,
        /// The offending character.
        letter: char,
    },
    /// An alphabet that is empty, too large, repeats a letter or holds a
    /// character other than an upper-case letter or `*`.
    Alphabet {
        /// What is wrong with it.
        reason: String,
    },
    /// A substitution matrix whose size is not the alphabet's size squared.
    MatrixShape {
        /// Letters in the alphabet.
        alphabet: usize,
        /// Entries in the matrix.
        entries: usize,
    },
    /// A substitution score or gap penalty outside the supported range.
    ScoreRange {
        /// Which value ("substitution score", "gap open penalty", …).
        what: &'static str,
        /// The value given.
        value: i32,
    },
    /// A sequence pair whose scores could overflow `i32`, or too long to index in `u32`.
    TooLong {
        /// Length of the first sequence.
        len_a: usize,
        /// Length of the second sequence.
        len_b: usize,
    },
    /// A sequence pair whose best score could exceed what the stripe kernel hands down
    /// ([`MAX_STRIPE_SCORE`](super::MAX_STRIPE_SCORE)); the tile kernel takes it.
    TooLongForStripes {
        /// Length of the first sequence.
        len_a: usize,
        /// Length of the second sequence.
        len_b: usize,
    },
    /// A block size whose stripe-kernel score profile (`alphabet · 32` bytes per thread) does
    /// not fit in a block's shared memory on the GPU; fewer threads, or the tile kernel, take it.
    TooManyThreadsForStripes {
        /// Threads per block.
        threads: u32,
        /// Letters in the scoring's alphabet.
        alphabet: usize,
    },
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::FastaMissingHeader { line } => {
                write!(f, "FASTA line {line}: sequence data before the first `>` header line")
            }
            InputError::FastaCharacter { line, character } => {
                write!(f, "FASTA line {line}: {character:?} is not a residue letter (letters and `*` only)")
            }
            InputError::UnknownLetter { position, letter } => {
                write!(f, "sequence position {position}: {letter:?} is not in the scoring's alphabet")
            }
            InputError::Alphabet { reason } => write!(f, "unusable alphabet: {reason}"),
            InputError::MatrixShape { alphabet, entries } => write!(
                f,
                "a substitution matrix for {alphabet} letters needs {} entries, found {entries}",
                alphabet * alphabet
            ),
            InputError::ScoreRange { what, value } => write!(
                f,
                "{what} {value} is out of range (substitution scores within ±{limit}, penalties 0..={limit})",
                limit = MAX_SCORE
            ),
            InputError::TooLong { len_a, len_b } => write!(
                f,
                "sequences of {len_a} and {len_b} residues are too long for this scoring: \
                 the best score could overflow i32"
            ),
            InputError::TooLongForStripes { len_a, len_b } => write!(
                f,
                "sequences of {len_a} and {len_b} residues could score above {limit}, more than the stripe \
                 kernel hands down: align them with `align` or `align_tiled`",
                limit = super::MAX_STRIPE_SCORE
            ),
            InputError::TooManyThreadsForStripes { threads, alphabet } => write!(
                f,
                "blocks of {threads} threads cannot hold the stripe kernel's scores for a {alphabet}-letter \
                 alphabet ({bytes} bytes) and its staged columns in this GPU's shared memory: use fewer \
                 threads, or align with `align` or `align_tiled`",
                bytes = alphabet * 32 * *threads as usize
            ),
        }
    }
}

impl std::error::Error for InputError {}

/// Why an alignment failed: its input, or the GPU it ran on.
#[derive(Debug)]
pub enum AlignError {
    /// The sequences or scoring that [`check_input`](super::check_input) refuses.
    Input(InputError),
    /// The GPU, or the runtime, failed.
    Gpu(crate::Error),
}

impl fmt::Display for AlignError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AlignError::Input(error) => write!(f, "Smith-Waterman cannot take this input: {error}"),
            AlignError::Gpu(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for AlignError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AlignError::Input(error) => Some(error),
            AlignError::Gpu(error) => error.source(),
        }
    }
}

impl From<InputError> for AlignError {
    fn from(error: InputError) -> Self {
        AlignError::Input(error)
    }
}

impl From<crate::Error> for AlignError {
    fn from(error: crate::Error) -> Self {
        AlignError::Gpu(error)
    }
}
