//! [`sort`] and [`sort_pairs`]: keys of six types, ascending or descending, stable, by
//! whichever kernel is faster for the type and size. Every key maps onto an unsigned word
//! whose ascending order is the key's ([`OrderedKey`]), complemented for a descending sort,
//! which keeps equal keys in their input order. Fewer than [`RADIX_KEYS_FROM`] 32-bit keys
//! alone, or [`RADIX_PAIRS_FROM`] with values, run the [bitonic](super::bitonic) sort of those
//! words; more (and every 64-bit key) the [look-back](super::onesweep) radix sort, which an
//! H200 ran faster at every size from 2^16 to 2^26 than the [radix](super::radix) sort that
//! counts each pass's digits in a phase of its own (`docs/results.md`, 2026-11-29, with the
//! look-back sort's tiles of 4,096 keys, which its tiles of 5,120 beat from 2^22 keys up).
//! [`sort_with`] names the kernel.
//!
//! ```
//! use gsync::kernels::{sort, sort_pairs};
//! use gsync::{Gpu, Launch};
//!
//! # fn main() -> gsync::Result<()> {
//! let gpu = Gpu::emulator(); // or Gpu::new(0)
//! let keys = [3.5f64, -0.0, f64::NAN, 0.0, -7.25, f64::NEG_INFINITY];
//! let sorted = sort(&gpu, &Launch::new(), &keys, false)?;
//! let mut expected = keys.to_vec();
//! expected.sort_by(f64::total_cmp);
//! assert!(sorted.keys.iter().zip(&expected).all(|(a, b)| a.to_bits() == b.to_bits()));
//! // Pairs, descending: equal keys keep their order.
//! let sorted = sort_pairs(&gpu, &Launch::new(), &[2i32, -1, 2, 5], &[0, 1, 2, 3], true)?;
//! assert_eq!((sorted.keys, sorted.values), (vec![5, 2, 2, -1], vec![3, 0, 2, 1]));
//! # Ok(())
//! # }
//! ```

use super::bitonic::{self, Sorted};
use super::onesweep::{self, OnesweepWord};
use super::radix;
use crate::{Error, Gpu, Launch, Result};

/// 32-bit keys alone from this many on run a radix sort, fewer the bitonic sort (64-bit keys
/// always run a radix sort, which alone sorts them). Measured on an H200 on 2026-11-29 (kernel
/// time, median of 9, three rounds in one call) with tiles of 6,144 keys (22 blocks at 2^17):
/// at 2^17 keys the look-back radix sort took 50.6–51.1 µs against the bitonic sort's
/// 49.7–50.5, at 2^18 53.0–55.5 against 54.9–62.5. The bitonic sort pads to a power of two,
/// so from 2^17 + 1 keys on it takes its time at 2^18, and the radix sort takes over there.
/// (With tiles of 5,120 keys the radix sort had won at 2^17, 49.3 against 50.0; with tiles
/// of 4,096 at 2^16, 42.8 against 45.2.)
pub const RADIX_KEYS_FROM: usize = (1 << 17) + 1;

/// 32-bit keys with values from this many on run the radix sort, fewer the bitonic sort.
/// Measured on an H200 on 2026-11-29 (kernel time, median of 9, one run): at 2^16 pairs, the
/// smallest size measured, the radix sort took 54.9 µs against the bitonic sort's 83.8, at
/// 2^17 54.8 against 99.9 (with tiles of 6,144 keys, three rounds: 2^16 57.5–59.4 against
/// 82.2–84.3); below 2^16 the bitonic sort stays, unmeasured.
pub const RADIX_PAIRS_FROM: usize = 1 << 16;

/// The fewest 32-bit keys that [`sort_with`]'s [`SortKernel::Fastest`] gives the radix sort:
/// [`RADIX_PAIRS_FROM`] `with_values`, else [`RADIX_KEYS_FROM`].
pub fn radix_from(with_values: bool) -> usize {
    if with_values {
        RADIX_PAIRS_FROM
    } else {
        RADIX_KEYS_FROM
    }
}

/// The words keys map onto, `u32` and `u64`, and the bitonic sort where it takes them.
pub trait SortWord: OnesweepWord {
    /// Sorts `words` (and `values` with them, stably) ascending with the bitonic sort, where
    /// it sorts words of this width (`u32`); `None` otherwise.
    fn bitonic(gpu: &Gpu, launch: &Launch, words: &[Self], values: Option<&[u32]>) -> Option<Result<Sorted<Self>>>;
}

impl SortWord for u32 {
    fn bitonic(gpu: &Gpu, launch: &Launch, words: &[u32], values: Option<&[u32]>) -> Option<Result<Sorted<u32>>> {
        // `u32`'s bitonic order is the word's own.
        Some(bitonic::sort(gpu, launch, words, values, false))
    }
}

impl SortWord for u64 {
    fn bitonic(_: &Gpu, _: &Launch, _: &[u64], _: Option<&[u32]>) -> Option<Result<Sorted<u64>>> {
        None
    }
}

/// A key type [`sort`] orders: mapped onto an unsigned word whose ascending order is the
/// key's ascending order. Integers in their numeric order; floats in IEEE total order, as
/// [`f32::total_cmp`] orders them: −NaN, −∞, …, −0.0, +0.0, …, +∞, +NaN.
pub trait OrderedKey: Copy {
    /// The word the key maps onto.
    type Word: SortWord;
    /// The word whose ascending order is this key's.
    fn to_word(self) -> Self::Word;
    /// The key back from [`to_word`](Self::to_word).
    fn from_word(word: Self::Word) -> Self;
}

impl OrderedKey for u32 {
    type Word = u32;
    fn to_word(self) -> u32 {
        self
    }
    fn from_word(word: u32) -> Self {
        word
    }
}

impl OrderedKey for u64 {
    type Word = u64;
    fn to_word(self) -> u64 {
        self
    }
    fn from_word(word: u64) -> Self {
        word
    }
}

impl OrderedKey for i32 {
    type Word = u32;
    /// The sign bit flipped: negative numbers below positive ones.
    fn to_word(self) -> u32 {
        (self as u32) ^ (1 << 31)
    }
    fn from_word(word: u32) -> Self {
        (word ^ (1 << 31)) as i32
    }
}

impl OrderedKey for i64 {
    type Word = u64;
    /// The sign bit flipped: negative numbers below positive ones.
    fn to_word(self) -> u64 {
        (self as u64) ^ (1 << 63)
    }
    fn from_word(word: u64) -> Self {
        (word ^ (1 << 63)) as i64
    }
}

impl OrderedKey for f32 {
    type Word = u32;
    /// Negative floats (sign set) with every bit flipped, the others with the sign flipped.
    fn to_word(self) -> u32 {
        let bits = self.to_bits();
        if bits >> 31 == 1 {
            !bits
        } else {
            bits | (1 << 31)
        }
    }
    fn from_word(word: u32) -> Self {
        f32::from_bits(if word >> 31 == 1 { word & !(1 << 31) } else { !word })
    }
}

impl OrderedKey for f64 {
    type Word = u64;
    /// Negative floats (sign set) with every bit flipped, the others with the sign flipped.
    fn to_word(self) -> u64 {
        let bits = self.to_bits();
        if bits >> 63 == 1 {
            !bits
        } else {
            bits | (1 << 63)
        }
    }
    fn from_word(word: u64) -> Self {
        f64::from_bits(if word >> 63 == 1 { word & !(1 << 63) } else { !word })
    }
}

/// Which kernel sorts: [`sort_with`]'s choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKernel {
    /// The faster for the key type and size: the bitonic sort for fewer than
    /// [`radix_from`] 32-bit keys, the look-back radix sort otherwise.
    Fastest,
    /// The bitonic sort ([`bitonic::sort`]); 32-bit keys only.
    Bitonic,
    /// The radix sort that counts each pass's digits in a phase of its own
    /// ([`radix::sort_words`]).
    Radix,
    /// The radix sort that finds each tile's place by look-back ([`onesweep::sort_words`]).
    Onesweep,
}

/// Sorts `keys` on `gpu`, ascending or `descending`, stably (equal keys keep their input
/// order; for floats, "equal" is equal bits). Fewer than [`RADIX_KEYS_FROM`] 32-bit keys run
/// the bitonic sort, under `launch`; the others the look-back radix sort
/// ([`onesweep::sort_words`]), which takes blocks of 256 threads.
///
/// Fails with [`Error::InvalidInput`] for more than [`onesweep::MAX_KEYS`] keys.
pub fn sort<K: OrderedKey>(gpu: &Gpu, launch: &Launch, keys: &[K], descending: bool) -> Result<Sorted<K>> {
    sort_with(gpu, launch, keys, None, descending, SortKernel::Fastest)
}

/// [`sort`] with a value per key, which moves with its key: `values[i]` ends beside
/// `keys[i]`, and equal keys keep their values in input order. The look-back radix sort
/// ([`onesweep::sort_words`]) takes over from [`RADIX_PAIRS_FROM`] 32-bit keys.
///
/// Fails with [`Error::InvalidInput`] where `values` is not as long as `keys`, or for more
/// than [`onesweep::MAX_KEYS`] keys.
pub fn sort_pairs<K: OrderedKey>(
    gpu: &Gpu,
    launch: &Launch,
    keys: &[K],
    values: &[u32],
    descending: bool,
) -> Result<Sorted<K>> {
    sort_with(gpu, launch, keys, Some(values), descending, SortKernel::Fastest)
}

/// [`sort`] (or, with `values`, [`sort_pairs`]) by the kernel `kernel` names.
///
/// Fails with [`Error::InvalidInput`] where `values` is not as long as `keys`, for more keys
/// than the radix sort takes ([`radix::MAX_KEYS`], [`onesweep::MAX_KEYS`]), and for 64-bit
/// keys with [`SortKernel::Bitonic`].
pub fn sort_with<K: OrderedKey>(
    gpu: &Gpu,
    launch: &Launch,
    keys: &[K],
    values: Option<&[u32]>,
    descending: bool,
    kernel: SortKernel,
) -> Result<Sorted<K>> {
    if let Some(values) = values.filter(|values| values.len() != keys.len()) {
        let reason = format!("{} keys but {} values; give one value per key", keys.len(), values.len());
        return Err(Error::InvalidInput { kernel: "sort_pairs".to_owned(), reason });
    }
    let flip = |word: K::Word| if descending { !word } else { word };
    let words: Vec<K::Word> = keys.iter().map(|&key| flip(key.to_word())).collect();
    let back = |words: Vec<K::Word>| words.into_iter().map(|word| K::from_word(flip(word))).collect();
    let bitonic = match kernel {
        SortKernel::Fastest if keys.len() < radix_from(values.is_some()) => {
            K::Word::bitonic(gpu, launch, &words, values)
        }
        SortKernel::Fastest | SortKernel::Radix | SortKernel::Onesweep => None,
        SortKernel::Bitonic => {
            let refused = || {
                let reason = "the bitonic sort takes 32-bit keys; sort 64-bit keys with the radix sort".to_owned();
                Error::InvalidInput { kernel: "bitonic_sort".to_owned(), reason }
            };
            Some(K::Word::bitonic(gpu, launch, &words, values).ok_or_else(refused)?)
        }
    };
    if let Some(sorted) = bitonic {
        let sorted = sorted?;
        return Ok(Sorted { keys: back(sorted.keys), values: sorted.values, report: sorted.report });
    }
    let mut device_keys = gpu.upload(&words)?;
    let mut device_values = values.map(|values| gpu.upload(values)).transpose()?;
    let report = match kernel {
        SortKernel::Radix => radix::sort_words(gpu, launch, &mut device_keys, device_values.as_mut())?,
        // (`Bitonic` has returned above, or refused 64-bit keys.)
        SortKernel::Fastest | SortKernel::Onesweep | SortKernel::Bitonic => {
            onesweep::sort_words(gpu, launch, &mut device_keys, device_values.as_mut())?
        }
    };
    let values = match &device_values {
        Some(device_values) => gpu.download(device_values)?,
        None => Vec::new(),
    };
    Ok(Sorted { keys: back(gpu.download(&device_keys)?), values, report })
}
