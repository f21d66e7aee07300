//! The library's sorts (`gsync::kernels::sort`, `sort_pairs`, `sort_with`) against the
//! standard library's stable sorts: every key type, both orders, with and without values,
//! lengths around the radix sort's tile, duplicate-heavy keys (stability) and the floats'
//! edge cases (NaNs of both signs, ±0.0, infinities, subnormals).

use super::checks::{rng, Scale};
use gsync::kernels::{onesweep, radix, sort_with, OrderedKey, SortKernel};
use gsync::prelude::*;
use rand::{rngs::StdRng, Rng};
use std::cmp::Ordering;
use std::fmt::Debug;

/// A key type of the check: its reference order and its bits, for comparing floats exactly.
pub trait CheckedKey: OrderedKey + Debug {
    /// The type's name, for messages.
    const NAME: &'static str;
    /// `Ord::cmp` for integers, `total_cmp` for floats.
    fn reference_cmp(&self, other: &Self) -> Ordering;
    /// The key's bits.
    fn bits(self) -> u64;
    /// A random key: from a few values (`narrow`, many duplicates) or from the whole type,
    /// with the edge cases of floats among them.
    fn draw(rng: &mut StdRng, narrow: bool) -> Self;
}

impl CheckedKey for u32 {
    const NAME: &'static str = "u32";
    fn reference_cmp(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    fn bits(self) -> u64 {
        u64::from(self)
    }
    fn draw(rng: &mut StdRng, narrow: bool) -> Self {
        if narrow {
            [0, 1, 255, 256, 0x0100_0000, u32::MAX][rng.gen_range(0..6)]
        } else {
            rng.gen()
        }
    }
}

impl CheckedKey for i32 {
    const NAME: &'static str = "i32";
    fn reference_cmp(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    fn bits(self) -> u64 {
        u64::from(self as u32)
    }
    fn draw(rng: &mut StdRng, narrow: bool) -> Self {
        if narrow {
            [i32::MIN, -256, -1, 0, 1, i32::MAX][rng.gen_range(0..6)]
        } else {
            rng.gen()
        }
    }
}

impl CheckedKey for u64 {
    const NAME: &'static str = "u64";
    fn reference_cmp(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    fn bits(self) -> u64 {
        self
    }
    fn draw(rng: &mut StdRng, narrow: bool) -> Self {
        if narrow {
            [0, 1, 1 << 32, (1 << 32) + 1, 1 << 56, u64::MAX][rng.gen_range(0..6)]
        } else {
            rng.gen()
        }
    }
}

impl CheckedKey for i64 {
    const NAME: &'static str = "i64";
    fn reference_cmp(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    fn bits(self) -> u64 {
        self as u64
    }
    fn draw(rng: &mut StdRng, narrow: bool) -> Self {
        if narrow {
            [i64::MIN, -(1 << 40), -1, 0, 1 << 33, i64::MAX][rng.gen_range(0..6)]
        } else {
            rng.gen()
        }
    }
}

/// Floats' edge cases: NaNs of both signs and two payloads, ±0.0, ±∞, the smallest
/// subnormal, ±1.
const F32_EDGES: [u32; 11] = [
    0x7fc0_0000,
    0xffc0_0000,
    0x7f80_0001,
    0xff80_0001,
    0x0000_0000,
    0x8000_0000,
    0x7f80_0000,
    0xff80_0000,
    0x0000_0001,
    0x3f80_0000,
    0xbf80_0000,
];

impl CheckedKey for f32 {
    const NAME: &'static str = "f32";
    fn reference_cmp(&self, other: &Self) -> Ordering {
        self.total_cmp(other)
    }
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn draw(rng: &mut StdRng, narrow: bool) -> Self {
        if narrow || rng.gen_ratio(1, 4) {
            f32::from_bits(F32_EDGES[rng.gen_range(0..F32_EDGES.len())])
        } else {
            rng.gen_range(-1e30f32..1e30)
        }
    }
}

impl CheckedKey for f64 {
    const NAME: &'static str = "f64";
    fn reference_cmp(&self, other: &Self) -> Ordering {
        self.total_cmp(other)
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
    fn draw(rng: &mut StdRng, narrow: bool) -> Self {
        if narrow || rng.gen_ratio(1, 4) {
            let edge = f32::from_bits(F32_EDGES[rng.gen_range(0..F32_EDGES.len())]);
            // The f32 edges widened keep their class; one NaN payload only f64 has.
            if rng.gen_ratio(1, 8) {
                f64::from_bits(0xfff0_0000_0000_0123)
            } else {
                f64::from(edge)
            }
        } else {
            rng.gen_range(-1e300f64..1e300)
        }
    }
}

/// Whether two key lists hold the same bits in the same order.
fn same_keys<K: CheckedKey>(a: &[K], b: &[K]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.bits() == y.bits())
}

/// Sorts random keys of type `K` of each length in `lengths`, both orders, alone and with
/// values (the values are the input positions, so a stable sort's values are determined), with
/// `kernel`, against the standard library's stable sort by `K`'s reference order.
pub fn check_key_type<K: CheckedKey>(gpu: &Gpu, lengths: &[usize], kernel: SortKernel, launch: &Launch) {
    let mut rng = rng();
    for &n in lengths {
        for narrow in [false, true] {
            let keys: Vec<K> = (0..n).map(|_| K::draw(&mut rng, narrow)).collect();
            let values: Vec<u32> = (0..n as u32).collect();
            for descending in [false, true] {
                let what = format!("{} {kernel:?}, n {n}, narrow {narrow}, descending {descending}", K::NAME);
                let mut pairs: Vec<(K, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
                pairs.sort_by(|a, b| if descending { b.0.reference_cmp(&a.0) } else { a.0.reference_cmp(&b.0) });
                let expected_keys: Vec<K> = pairs.iter().map(|p| p.0).collect();
                let expected_values: Vec<u32> = pairs.iter().map(|p| p.1).collect();
                let alone = sort_with(gpu, launch, &keys, None, descending, kernel).unwrap();
                assert!(
                    same_keys(&alone.keys, &expected_keys),
                    "{what}: {:?}",
                    first_difference(&alone.keys, &expected_keys)
                );
                assert!(alone.values.is_empty(), "{what}");
                let paired = sort_with(gpu, launch, &keys, Some(&values), descending, kernel).unwrap();
                assert!(same_keys(&paired.keys, &expected_keys), "{what}, with values");
                assert_eq!(paired.values, expected_values, "{what}, with values: equal keys keep their order");
            }
        }
    }
}

/// Where two key lists first differ, for a failure's message.
fn first_difference<K: CheckedKey>(got: &[K], expected: &[K]) -> Option<(usize, K, K)> {
    got.iter().zip(expected).position(|(a, b)| a.bits() != b.bits()).map(|i| (i, got[i], expected[i]))
}

/// The two radix sorts: the one that counts each pass's digits in a phase of its own, and the
/// look-back one, each with its tile.
const RADIX_SORTS: [(SortKernel, usize); 2] =
    [(SortKernel::Radix, radix::TILE), (SortKernel::Onesweep, onesweep::TILE)];

/// The lengths a radix sort of `tile` keys per tile is checked at: none, one, around a tile
/// and several tiles.
fn radix_lengths(scale: Scale, tile: usize) -> Vec<usize> {
    match scale {
        Scale::Full => vec![0, 1, tile - 1, tile + 1, 3 * tile + 5, (1 << 16) + 3, (1 << 20) + 7],
        Scale::Small => vec![0, 1, tile - 1, tile + 1, 2 * tile + 5],
    }
}

/// Both radix sorts of every key type, both orders, with and without values, against the
/// standard library's stable sort.
pub fn the_radix_sort_sorts_every_key_type_stably(gpu: &Gpu, scale: Scale) {
    let launch = Launch::new();
    for (kernel, tile) in RADIX_SORTS {
        let lengths = radix_lengths(scale, tile);
        check_key_type::<u32>(gpu, &lengths, kernel, &launch);
        check_key_type::<i32>(gpu, &lengths, kernel, &launch);
        check_key_type::<f32>(gpu, &lengths, kernel, &launch);
        check_key_type::<u64>(gpu, &lengths, kernel, &launch);
        check_key_type::<i64>(gpu, &lengths, kernel, &launch);
        check_key_type::<f64>(gpu, &lengths, kernel, &launch);
    }
}

/// Blocks that each take several tiles (in turn with the other blocks', for the look-back; a
/// run of consecutive tiles, for the counting sort), and a grid of one block.
pub fn the_radix_sort_runs_any_grid_over_many_tiles(gpu: &Gpu, scale: Scale) {
    for (kernel, tile) in RADIX_SORTS {
        let n = scale.pick(40 * tile + 11, 5 * tile + 11);
        for blocks in [1, 2, 3] {
            let launch = Launch::new().blocks(blocks);
            check_key_type::<u32>(gpu, &[n], kernel, &launch);
        }
    }
    // The counting sort over more than one group of blocks (the earlier groups' sums), and a
    // grid with more blocks than runs of 32 keys (blocks with no key).
    let n = scale.pick(9 * radix::TILE + 11, 2 * radix::TILE + 11);
    check_key_type::<u32>(gpu, &[n, 1000], SortKernel::Radix, &Launch::new().blocks(70));
}

/// Keys whose bytes are the same in every key at some positions: those passes copy the keys
/// instead of ranking them, an odd number of copies among an even number of passes as well as
/// every pass, and the result (with each value beside its key) is still the stable sort.
pub fn the_radix_sort_copies_the_digits_every_key_shares(gpu: &Gpu, scale: Scale) {
    let n = scale.pick(3 * radix::TILE + 7, 2 * radix::TILE + 7);
    let mut rng = rng();
    let launch = Launch::new().blocks(2);
    let low_byte: Vec<u32> = (0..n).map(|_| rng.gen_range(0..256)).collect();
    let middle_bytes: Vec<u32> = (0..n).map(|_| rng.gen_range(0..1 << 16) << 8 | 0x5a00_0017).collect();
    let one_key = vec![0x1234_5678u32; n];
    for (what, keys) in [("low byte", low_byte), ("middle bytes", middle_bytes), ("one key", one_key)] {
        check_radix_pairs(gpu, &launch, &keys, what);
    }
    let wide: Vec<u64> = (0..n).map(|_| rng.gen_range(0..1u64 << 24) << 16).collect();
    check_radix_pairs(gpu, &launch, &wide, "u64, bytes 2 to 4");
}

/// Keys equal to the largest key in a tile the keys do not fill: the look-back sort pads such
/// a tile with the largest key, and its padding must rank after every key of the tile and
/// never reach the output.
pub fn the_radix_sort_keeps_the_largest_keys_of_a_partial_tile(gpu: &Gpu, scale: Scale) {
    let mut rng = rng();
    let launch = Launch::new().blocks(2);
    for n in [onesweep::TILE - 1, scale.pick(2 * onesweep::TILE + 100, onesweep::TILE + 100)] {
        let keys: Vec<u32> = (0..n).map(|_| [0, u32::MAX - 1, u32::MAX][rng.gen_range(0..3)]).collect();
        check_radix_pairs(gpu, &launch, &keys, "u32, largest keys");
        let wide: Vec<u64> = keys.iter().map(|&k| if k == u32::MAX { u64::MAX } else { k as u64 }).collect();
        check_radix_pairs(gpu, &launch, &wide, "u64, largest keys");
    }
}

/// Both radix sorts of `keys`, with their positions as values, against the standard library's
/// stable sort.
fn check_radix_pairs<K: CheckedKey>(gpu: &Gpu, launch: &Launch, keys: &[K], what: &str) {
    let values: Vec<u32> = (0..keys.len() as u32).collect();
    let mut expected: Vec<(K, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    expected.sort_by(|a, b| a.0.reference_cmp(&b.0));
    let expected_keys: Vec<K> = expected.iter().map(|pair| pair.0).collect();
    for (kernel, _) in RADIX_SORTS {
        let what = format!("{what}, {kernel:?}");
        let sorted = sort_with(gpu, launch, keys, Some(&values), false, kernel).unwrap();
        assert!(
            same_keys(&sorted.keys, &expected_keys),
            "{what}: {:?}",
            first_difference(&sorted.keys, &expected_keys)
        );
        assert!(sorted.values.iter().eq(expected.iter().map(|pair| &pair.1)), "{what}: the values follow their keys");
        let alone = sort_with(gpu, launch, keys, None, false, kernel).unwrap();
        assert!(same_keys(&alone.keys, &expected_keys), "{what}, keys alone");
    }
}

/// `sort` and `sort_pairs` pick the bitonic sort below their crossovers (one for keys alone,
/// one for pairs) and the radix sort from them, with one meaning: the same stable total order.
pub fn the_library_sort_keeps_one_order_across_its_kernels(gpu: &Gpu, scale: Scale) {
    let launch = Launch::new();
    let small = [0usize, 1, 1000, 3001];
    check_key_type::<f32>(gpu, &small, SortKernel::Fastest, &launch);
    check_key_type::<i32>(gpu, &small, SortKernel::Bitonic, &launch);
    if matches!(scale, Scale::Full) {
        // Pairs on the radix sort with keys alone on the bitonic sort, then both on the radix sort.
        let large = [gsync::kernels::RADIX_PAIRS_FROM, gsync::kernels::RADIX_KEYS_FROM - 1, (1 << 20) + 1];
        check_key_type::<f32>(gpu, &large, SortKernel::Fastest, &launch);
        check_key_type::<u32>(gpu, &large, SortKernel::Fastest, &launch);
    }
    // 64-bit keys run the radix sort at any size.
    check_key_type::<i64>(gpu, &[5, 300], SortKernel::Fastest, &launch);
    let mut rng = rng();
    let keys: Vec<f64> = (0..700).map(|_| f64::draw(&mut rng, false)).collect();
    let sorted = gsync::kernels::sort(gpu, &launch, &keys, false).unwrap();
    assert_eq!(sorted.report.threads as usize, radix::THREADS, "f64 keys run the radix sort");
}

/// Inputs the sorts cannot take are typed errors, before anything runs.
pub fn the_sorts_refuse_inputs_they_cannot_take(gpu: &Gpu, _scale: Scale) {
    use gsync::kernels::{sort, sort_pairs};
    let launch = Launch::new();
    let error = sort_pairs(gpu, &launch, &[1u32, 2, 3], &[1, 2], false).unwrap_err();
    assert!(matches!(error, Error::InvalidInput { .. }), "{error}");
    assert!(error.to_string().contains("3 keys but 2 values"), "{error}");
    let error = sort_with(gpu, &launch, &[1u64, 2], None, false, SortKernel::Bitonic).unwrap_err();
    assert!(matches!(error, Error::InvalidInput { .. }), "{error}");
    let mut keys = gpu.upload(&[3u32, 1, 2]).unwrap();
    let mut values = gpu.upload(&[0u32; 4]).unwrap();
    let error = radix::sort_words(gpu, &launch, &mut keys, Some(&mut values)).unwrap_err();
    assert!(matches!(error, Error::InvalidInput { .. }), "{error}");
    let error = sort(gpu, &Launch::new().threads(128), &[7u64, 1], false).unwrap_err();
    assert!(matches!(error, Error::RefusedBlockSize { threads: 128, .. }), "{error}");
    // A grid whose digit counts the counting sort could not index is refused before anything
    // is allocated.
    let launch = Launch::new().blocks(1 << 22);
    let error = sort_with(gpu, &launch, &[3u32, 1, 2], None, false, SortKernel::Radix).unwrap_err();
    assert!(matches!(error, Error::InvalidInput { .. }), "{error}");
    assert!(error.to_string().contains("name at most"), "{error}");
}

/// The radix sort under every barrier, the split form (one launch per phase) among them, with
/// more tiles than blocks.
pub fn the_radix_sort_runs_under_every_barrier(gpu: &Gpu, scale: Scale) {
    let mut barriers = Barrier::ALL.to_vec();
    barriers.push(Barrier::Ilbs { groups: Some(2) });
    for (kernel, tile) in RADIX_SORTS {
        let (n, blocks) = match scale {
            Scale::Full => ((1 << 22) + 3, None),
            Scale::Small => (2 * tile + 5, Some(2)),
        };
        for &barrier in &barriers {
            let mut launch = Launch::new().barrier(barrier);
            if let Some(blocks) = blocks {
                launch = launch.blocks(blocks);
            }
            check_key_type::<u32>(gpu, &[n], kernel, &launch);
        }
    }
}
