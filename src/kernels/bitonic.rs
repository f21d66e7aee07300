//! Bitonic sort as one fused kernel: the stages whose compare distance stays
//! within a block's tile run inside the block; only the distances that cross
//! tiles use `grid_sync()`. Keys alone run [`sort_keys`], which holds 16 keys
//! per thread in registers and compares within warps by shuffles; key–value
//! pairs run [`bitonic_sort`], whose tiles live in shared memory.
//!
//! The kernel sorts `u32` keys ascending. Other orders and key types are
//! mapped onto that on the host ([`SortKey`]): descending flips the bits,
//! `f32` uses IEEE total order with NaNs last. A length that is not a power
//! of two is padded with the largest key, which sorts to the end and is
//! dropped. With values, the kernel sorts (key, original position) pairs —
//! so equal keys keep their order and padding stays behind real keys — and
//! its last phase gathers each value from its original position.
//!
//! ```
//! use gsync::kernels::bitonic::sort;
//! use gsync::{Gpu, Launch};
//!
//! # fn main() -> gsync::Result<()> {
//! let gpu = Gpu::emulator(); // or Gpu::new(0)
//! let keys: Vec<f32> = (0..1000).map(|i| ((i * 7919) % 1000) as f32 - 500.0).collect();
//! let sorted = sort(&gpu, &Launch::new(), &keys, None, false)?;
//! assert!(sorted.keys.windows(2).all(|w| w[0] <= w[1]));
//! // With values: each value moves with its key.
//! let values: Vec<u32> = (0..1000).collect();
//! let sorted = sort(&gpu, &Launch::new(), &keys, Some(&values), true)?;
//! assert!(sorted.values.iter().zip(&sorted.keys).all(|(&v, &k)| keys[v as usize] == k));
//! # Ok(())
//! # }
//! ```

use crate::{DeviceBuffer, Gpu, Launch, LaunchReport, Result};

/// The sorting network's kernel and the compare-exchange steps its phases share.
#[gsync::kernels]
mod network {
    /// The most keys per block tile when sorting keys alone: 32 KiB of shared memory.
    pub const TILE: usize = 8192;

    /// The most keys per block tile when sorting key–value pairs: each key
    /// brings its original position into shared memory as well.
    pub const TILE_WITH_VALUES: usize = 4096;

    /// Sorts the four keys at `i`, `i + half`, `i + j` and `i + j + half` of `k`
    /// into the direction `ascending` says: two distances of the network at once.
    #[device]
    fn merge_four(k: &mut [u32], i: u32, half: u32, j: u32, ascending: bool) {
        let mut k0 = k[i];
        let mut k1 = k[i + half];
        let mut k2 = k[i + j];
        let mut k3 = k[i + j + half];
        if (k0 > k2) == ascending {
            let t = k0;
            k0 = k2;
            k2 = t;
        }
        if (k1 > k3) == ascending {
            let t = k1;
            k1 = k3;
            k3 = t;
        }
        if (k0 > k1) == ascending {
            let t = k0;
            k0 = k1;
            k1 = t;
        }
        if (k2 > k3) == ascending {
            let t = k2;
            k2 = k3;
            k3 = t;
        }
        k[i] = k0;
        k[i + half] = k1;
        k[i + j] = k2;
        k[i + j + half] = k3;
    }

    /// One compare-exchange of the keys at `i` and `l`; with values, equal keys
    /// are ordered by their original positions, which move along.
    #[device]
    fn exchange(keys: &mut [u32], positions: &mut [u32], i: u32, l: u32, ascending: bool, with_values: bool) {
        let a = keys[i];
        let b = keys[l];
        let later = if with_values { a > b || (a == b && positions[i] > positions[l]) } else { a > b };
        if later == ascending && (a != b || with_values) {
            keys[i] = b;
            keys[l] = a;
            if with_values {
                let moved = positions[i];
                positions[i] = positions[l];
                positions[l] = moved;
            }
        }
    }

    /// Index, in a block's tile, of this thread's register `m` in [`sort_keys`]: in the
    /// `low` layout the registers hold tile bits 5–8 and the warps the bits above; in the
    /// other the registers hold the top four bits and the warps bits 5 up. Lanes hold bits
    /// 0–4 in both, so every access of a warp touches 32 consecutive keys.
    #[device]
    fn slot(m: u32, low: bool, block_size: u32) -> u32 {
        if low {
            lane_id() + 32 * m + 512 * warp_id()
        } else {
            lane_id() + 32 * warp_id() + block_size * m
        }
    }

    /// Global index of the key at tile index `i` of chunk `c` in [`sort_keys`]: tile bits
    /// below `low` keep their position, the tile bits from `low` up go to the global bits
    /// from `lo` up, and the chunk number fills the global bits in between and above.
    #[device]
    fn spread(i: u32, c: u32, low: u32, lo: u32, tile_bits: u32) -> u32 {
        let gap = lo - low;
        let above = lo + tile_bits - low;
        let kept = (i & ((1u32 << low) - 1)) | ((i >> low) << lo);
        kept | ((c & ((1u32 << gap) - 1)) << low) | ((c >> gap) << above)
    }

    /// How far apart in `keys` [`spread`] puts two keys whose tile indices differ in the
    /// tile bit that register bit `j` stands for in layout `low_layout` (see [`slot`]).
    #[device]
    fn register_stride(j: u32, low_layout: bool, low: u32, lo: u32, tile_bits: u32) -> u32 {
        let bit = if low_layout { 5 + j } else { tile_bits - 4 + j };
        if bit < low {
            1u32 << bit
        } else {
            1u32 << (bit - low + lo)
        }
    }

    /// Global index of register `m`, from register 0's (`base`) and the register bits' strides.
    #[device]
    fn key_index(m: u32, base: u32, s0: u32, s1: u32, s2: u32, s3: u32) -> u32 {
        base + (m & 1) * s0 + ((m >> 1) & 1) * s1 + ((m >> 2) & 1) * s2 + ((m >> 3) & 1) * s3
    }

    /// Bit `m` set where register `m` holds a key with bit `s` of its global index set (see
    /// [`key_index`]): the strides are distinct powers of two that `base` has clear.
    #[device]
    fn runs_down(s: u32, base: u32, s0: u32, s1: u32, s2: u32, s3: u32) -> u32 {
        let bit = 1u32 << s;
        let mut mask = if base & bit != 0 { 0xffff } else { 0 };
        if s0 == bit {
            mask ^= 0xaaaa;
        }
        if s1 == bit {
            mask ^= 0xcccc;
        }
        if s2 == bit {
            mask ^= 0xf0f0;
        }
        if s3 == bit {
            mask ^= 0xff00;
        }
        mask
    }

    /// Sorts `keys` (length a power of two, at least `16 * BLOCK_SIZE`) ascending, each
    /// thread holding 16 keys in registers.
    ///
    /// A block works on chunks of `16 * BLOCK_SIZE` keys (a power of two from 32 to 512
    /// threads). The compare distances that lie within lanes run as shuffles, those within a
    /// thread's registers as plain compare-exchanges; a distance held by the warps is first
    /// moved into registers through shared memory. The first phase sorts each tile of
    /// consecutive keys; every later stage of the network takes its distances of a tile or
    /// more in chunks that gather keys `2^lo` apart (up to `tile_bits - 5` distances per
    /// phase, which leaves runs of 32 consecutive keys), then finishes inside the tiles.
    /// Keys of runs that a stage sorts downwards are held complemented, so that every
    /// compare-exchange puts the smaller held value at the lower index.
    #[grid_phases(threads = 256)]
    pub fn sort_keys(keys: &mut [u32]) {
        // A power of two from 32 to 512 threads; other block sizes divide by zero here and are refused.
        const TILE: usize = 16 * BLOCK_SIZE / ((BLOCK_SIZE & (BLOCK_SIZE - 1) == 0 && BLOCK_SIZE >= 32) as usize);
        let mut tile = shared_array::<u32, TILE>();
        let block_size = BLOCK_SIZE as u32;
        let tile_bits = (TILE as u32).trailing_zeros();
        let log_n = (keys.len() as u32).trailing_zeros();
        let chunks = (keys.len() / TILE) as u32;
        // Global bits a chunk phase may take while its warps still read 32 consecutive keys.
        let most = tile_bits - 5;
        let lane = lane_id();

        // A phase runs stages `first..=stage`, taking the global bits `lo..=hi` in registers;
        // `hi < tile_bits` means plain tiles of consecutive keys.
        let mut first = 1u32;
        let mut stage = tile_bits;
        let mut hi = tile_bits - 1;
        while stage <= log_n {
            let lo = if hi >= tile_bits { tile_bits.max(hi + 1 - most) } else { tile_bits };
            let wide = if hi >= tile_bits { hi + 1 - lo } else { 0 };
            let low = tile_bits - wide;
            let stop = if wide > 0 { low } else { 0 };
            let mut c = block_idx();
            while c < chunks {
                // The layout of the first distance: the top bits are registers of the high one.
                let mut in_low = first.min(tile_bits) - 1 < 9;
                let mut base = spread(slot(0, in_low, block_size), c, low, lo, tile_bits);
                let mut s0 = register_stride(0, in_low, low, lo, tile_bits);
                let mut s1 = register_stride(1, in_low, low, lo, tile_bits);
                let mut s2 = register_stride(2, in_low, low, lo, tile_bits);
                let mut s3 = register_stride(3, in_low, low, lo, tile_bits);
                let mut k = [0u32; 16];
                for m in 0..16u32 {
                    k[m] = keys[key_index(m, base, s0, s1, s2, s3)];
                }
                for s in first..stage + 1 {
                    // Complement the keys whose run stage s sorts downwards (bit s of the
                    // index), undoing stage s − 1's.
                    let mut flip = runs_down(s, base, s0, s1, s2, s3);
                    if s > first {
                        flip ^= runs_down(s - 1, base, s0, s1, s2, s3);
                    }
                    for m in 0..16u32 {
                        if (flip >> m) & 1 == 1 {
                            k[m] = !k[m];
                        }
                    }
                    let mut b = s.min(tile_bits);
                    while b > stop {
                        b -= 1;
                        let in_registers = if in_low { b >= 5 && b <= 8 } else { b + 4 >= tile_bits };
                        if b >= 5 && !in_registers {
                            for m in 0..16u32 {
                                tile[slot(m, in_low, block_size)] = k[m];
                            }
                            sync_block();
                            in_low = !in_low;
                            for m in 0..16u32 {
                                k[m] = tile[slot(m, in_low, block_size)];
                            }
                            base = spread(slot(0, in_low, block_size), c, low, lo, tile_bits);
                            s0 = register_stride(0, in_low, low, lo, tile_bits);
                            s1 = register_stride(1, in_low, low, lo, tile_bits);
                            s2 = register_stride(2, in_low, low, lo, tile_bits);
                            s3 = register_stride(3, in_low, low, lo, tile_bits);
                        }
                        if b < 5 {
                            // Lanes: the lower lane of each pair keeps the smaller key.
                            let lower = (lane >> b) & 1 == 0;
                            for m in 0..16u32 {
                                let other = shfl_xor(k[m], 1u32 << b);
                                k[m] = if lower { k[m].min(other) } else { k[m].max(other) };
                            }
                        } else {
                            let r = if in_low { b - 5 } else { b + 4 - tile_bits };
                            for q in 0..4u32 {
                                if q == r {
                                    for m in 0..16u32 {
                                        if (m >> q) & 1 == 0 {
                                            let x = k[m];
                                            let y = k[m + (1u32 << q)];
                                            k[m] = x.min(y);
                                            k[m + (1u32 << q)] = x.max(y);
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                let flip = runs_down(stage, base, s0, s1, s2, s3);
                for m in 0..16u32 {
                    let held = if (flip >> m) & 1 == 1 { !k[m] } else { k[m] };
                    keys[key_index(m, base, s0, s1, s2, s3)] = held;
                }
                // The next chunk's first stores must not overwrite keys still being read.
                sync_block();
                c += grid_dim();
            }
            // Every phase but the last (the tile pass of the last stage) ends at a barrier.
            if hi >= tile_bits || stage < log_n {
                grid_sync();
            }
            if hi >= tile_bits && lo > tile_bits {
                hi = lo - 1;
            } else if hi >= tile_bits {
                hi = tile_bits - 1;
            } else {
                stage += 1;
                first = stage;
                hi = stage - 1;
            }
        }
    }

    /// Sorts `keys` (length a power of two) ascending, in tiles of `tile` keys
    /// (a power of two, at most [`TILE`], or [`TILE_WITH_VALUES`] with values).
    /// Without values only the
    /// keys move; with `with_values`,
    /// `positions` ends up holding each sorted key's original position and
    /// `sorted_values[i] = values[positions[i]]` for the first `values.len()` keys.
    #[grid_phases(threads = 256)]
    pub fn bitonic_sort(
        keys: &mut [u32],
        positions: &mut [u32],
        values: &[u32],
        sorted_values: &mut [u32],
        with_values: bool,
        tile: u32,
    ) {
        let n = keys.len() as u32;
        let tile_len = n.min(tile).min(if with_values { TILE_WITH_VALUES as u32 } else { TILE as u32 });
        let tiles = n / tile_len;
        let mut tile_keys = shared_array::<u32, TILE>();
        let mut tile_positions = shared_array::<u32, TILE_WITH_VALUES>();

        // Stage `size` merges bitonic runs of `size` keys. The first stage sorts
        // each tile completely (sizes 2 … tile_len, all inside the tile); every
        // later stage first takes the distances of a tile or more in global
        // memory, one phase each, then the rest of the stage inside the tiles.
        let mut size = tile_len;
        while size <= n {
            let mut j = size / 2;
            // Keys only: three distances per phase, each thread holding eight keys
            // (at i + m·j/4, m = 0…7) in registers.
            while !with_values && j >= 4 * tile_len {
                let quarter = j / 4;
                for q in grid_stride(0..n / 8) {
                    let o = q & (quarter - 1);
                    let i = (q - o) * 8 + o;
                    let ascending = (i & size) == 0;
                    let mut k = [0u32; 8];
                    for m in 0..8u32 {
                        k[m] = keys[i + m * quarter];
                    }
                    for r in 0..3u32 {
                        let span = 4u32 >> r;
                        for m in 0..8u32 {
                            if m & span == 0 && (k[m] > k[m + span]) == ascending {
                                let t = k[m];
                                k[m] = k[m + span];
                                k[m + span] = t;
                            }
                        }
                    }
                    for m in 0..8u32 {
                        keys[i + m * quarter] = k[m];
                    }
                }
                grid_sync();
                j /= 8;
            }
            // Keys only: two distances per phase, each thread holding four keys
            // (at i, i + j/2, i + j, i + 3j/2) in registers.
            while !with_values && j >= 2 * tile_len {
                let half = j / 2;
                for q in grid_stride(0..n / 4) {
                    let o = q & (half - 1);
                    let i = (q - o) * 4 + o;
                    merge_four(keys, i, half, j, (i & size) == 0);
                }
                grid_sync();
                j /= 4;
            }
            while j >= tile_len {
                for p in grid_stride(0..n / 2) {
                    let i = 2 * p - (p & (j - 1));
                    exchange(keys, positions, i, i + j, (i & size) == 0, with_values);
                }
                grid_sync();
                j /= 2;
            }
            // Inside the tiles: the first stage runs every size up to the tile;
            // later stages finish their own size.
            let first = size == tile_len;
            let mut tile = block_idx();
            while tile < tiles {
                let base = tile * tile_len;
                for i in block_stride(0..tile_len) {
                    tile_keys[i] = keys[base + i];
                    if with_values {
                        tile_positions[i] = if first { base + i } else { positions[base + i] };
                    }
                }
                sync_block();
                let mut run = if first { 2 } else { size };
                while run <= size {
                    let mut d = run.min(tile_len) / 2;
                    // Keys only: two distances per `sync_block()`, four keys per thread.
                    while !with_values && d >= 2 {
                        let half = d / 2;
                        for q in block_stride(0..tile_len / 4) {
                            let o = q & (half - 1);
                            let i = (q - o) * 4 + o;
                            merge_four(&mut tile_keys, i, half, d, ((base + i) & run) == 0);
                        }
                        sync_block();
                        d /= 4;
                    }
                    while d > 0 {
                        for p in block_stride(0..tile_len / 2) {
                            let i = 2 * p - (p & (d - 1));
                            let ascending = ((base + i) & run) == 0;
                            exchange(&mut tile_keys, &mut tile_positions, i, i + d, ascending, with_values);
                        }
                        sync_block();
                        d /= 2;
                    }
                    run *= 2;
                }
                for i in block_stride(0..tile_len) {
                    keys[base + i] = tile_keys[i];
                    if with_values {
                        positions[base + i] = tile_positions[i];
                    }
                }
                sync_block();
                tile += grid_dim();
            }
            grid_sync();
            size *= 2;
        }

        // Carry the values along: each sorted key's value from its original position.
        if with_values {
            for i in grid_stride(0..values.len()) {
                sorted_values[i] = values[positions[i]];
            }
        }
    }
}

pub use network::{bitonic_sort, sort_keys, TILE, TILE_WITH_VALUES};

/// Key types the sort orders, mapped onto `u32` so that ascending `u32`
/// order is the requested order of the keys.
pub trait SortKey: Copy + crate::DeviceScalar {
    /// The `u32` whose ascending order is this key's order.
    fn to_ordered(self, descending: bool) -> u32;
    /// The key back from [`to_ordered`](Self::to_ordered).
    fn from_ordered(bits: u32, descending: bool) -> Self;
}

impl SortKey for u32 {
    fn to_ordered(self, descending: bool) -> u32 {
        if descending {
            !self
        } else {
            self
        }
    }
    fn from_ordered(bits: u32, descending: bool) -> Self {
        Self::to_ordered(bits, descending)
    }
}

impl SortKey for f32 {
    /// IEEE total order (`-0.0` before `+0.0`); every NaN sorts last, in both directions.
    fn to_ordered(self, descending: bool) -> u32 {
        if self.is_nan() {
            return u32::MAX;
        }
        let bits = self.to_bits();
        let ascending = if bits >> 31 == 1 { !bits } else { bits | 0x8000_0000 };
        // Finite and infinite keys stay below u32::MAX, which NaN owns.
        if descending {
            (!ascending).min(u32::MAX - 1)
        } else {
            ascending.min(u32::MAX - 1)
        }
    }
    fn from_ordered(bits: u32, descending: bool) -> Self {
        if bits == u32::MAX {
            return f32::NAN;
        }
        let ascending = if descending { !bits } else { bits };
        let raw = if ascending >> 31 == 1 { ascending & 0x7fff_ffff } else { !ascending };
        f32::from_bits(raw)
    }
}

/// A sorted result and how the kernel ran.
#[derive(Debug)]
pub struct Sorted<K> {
    /// The keys in order.
    pub keys: Vec<K>,
    /// The values, permuted with their keys (empty without values).
    pub values: Vec<u32>,
    /// How the kernel ran.
    pub report: LaunchReport,
}

/// Sorts `keys` (and `values`, if given, along with them) on `gpu`. Keys alone run
/// [`sort_keys`] (16 keys per thread in registers); key–value pairs run [`bitonic_sort`].
pub fn sort<K: SortKey>(
    gpu: &Gpu,
    launch: &Launch,
    keys: &[K],
    values: Option<&[u32]>,
    descending: bool,
) -> Result<Sorted<K>> {
    if values.is_none() {
        return sort_keys_alone(gpu, launch, keys, descending);
    }
    let (tile, threads) = default_shape(keys.len());
    let launch = match launch.requested_threads() {
        Some(_) => launch.clone(),
        None => launch.clone().threads(threads),
    };
    sort_in_tiles(gpu, &launch, keys, values, descending, tile)
}

/// Keys held per thread by [`sort_keys`]; a block sorts tiles of `KEYS_PER_THREAD` × its threads.
pub const KEYS_PER_THREAD: usize = 16;

/// The block size [`sort`] gives [`sort_keys`] when the launch names none: the fastest of a
/// sweep on an H200 (docs/journal.md), capped so that small inputs still fill a tile.
pub fn default_threads(n: usize) -> u32 {
    let wanted = match n.next_power_of_two() {
        0..=0x4_0000 => 128,
        0x4_0001..=0x40_0000 => 512,
        _ => 256,
    };
    let fits = (n.next_power_of_two() / KEYS_PER_THREAD).clamp(32, 512) as u32;
    wanted.min(fits)
}

/// [`sort`] of keys alone with [`sort_keys`].
fn sort_keys_alone<K: SortKey>(gpu: &Gpu, launch: &Launch, keys: &[K], descending: bool) -> Result<Sorted<K>> {
    let threads = launch.requested_threads().unwrap_or_else(|| default_threads(keys.len()));
    check_key_threads(threads)?;
    let n = keys.len();
    let tile = KEYS_PER_THREAD * threads as usize;
    let padded = n.next_power_of_two().max(tile);
    let mut ordered: Vec<u32> = keys.iter().map(|k| k.to_ordered(descending)).collect();
    ordered.resize(padded, u32::MAX);
    let mut device_keys = gpu.upload(&ordered)?;
    let launch = launch.clone().threads(threads);
    let launch = super::grid_for_work(gpu, &launch, &sort_keys::KERNEL, padded / tile)?;
    let report = sort_keys::launch_with(gpu, &launch, &mut device_keys)?;
    let sorted = gpu.download(&device_keys)?;
    let keys = sorted[..n].iter().map(|&b| K::from_ordered(b, descending)).collect();
    Ok(Sorted { keys, values: Vec::new(), report })
}

/// [`sort_keys`]'s layouts need a power of two from 32 to 512 threads per block.
fn check_key_threads(threads: u32) -> Result<()> {
    if threads.is_power_of_two() && (32..=512).contains(&threads) {
        return Ok(());
    }
    Err(crate::Error::RefusedBlockSize {
        kernel: "sort_keys".to_owned(),
        threads,
        reason: "its threads hold 16 keys each in a tile of a power of two keys, which takes 32, 64, 128, \
                 256 or 512 threads per block"
            .to_owned(),
    })
}

/// Phases [`sort_keys`] crosses for `n` keys on blocks of `threads`: one that sorts the
/// tiles, then per later stage its chunk phases (up to `tile_bits - 5` distances each) and
/// one inside the tiles.
pub fn key_phases(n: usize, threads: u32) -> u32 {
    let tile = KEYS_PER_THREAD * threads.clamp(32, 512).next_power_of_two() as usize;
    let (log_n, tile_bits) = (n.next_power_of_two().max(tile).ilog2(), tile.ilog2());
    let most = tile_bits - 5;
    1 + (tile_bits + 1..=log_n).map(|s| (s - tile_bits).div_ceil(most) + 1).sum::<u32>()
}

/// The tile size and block size [`sort`] gives [`bitonic_sort`] for key–value pairs when
/// the launch names none, chosen from sweeps on an H200 (docs/journal.md). Small inputs gain
/// from more, smaller tiles; large ones from fewer global phases.
pub fn default_shape(n: usize) -> (usize, u32) {
    match n.next_power_of_two() {
        0..=0x2_0000 => (1024, 512),
        0x2_0001..=0x8_0000 => (2048, 512),
        0x8_0001..=0x20_0000 => (TILE_WITH_VALUES, 512),
        _ => (TILE_WITH_VALUES, 256),
    }
}

/// [`sort`] with the shared-memory tile size chosen: a power of two from 2 to
/// [`TILE`] ([`TILE_WITH_VALUES`] with values; larger requests are clamped).
/// Smaller tiles give small inputs more blocks, larger tiles fewer global
/// phases.
pub fn sort_in_tiles<K: SortKey>(
    gpu: &Gpu,
    launch: &Launch,
    keys: &[K],
    values: Option<&[u32]>,
    descending: bool,
    tile: usize,
) -> Result<Sorted<K>> {
    let tile = tile_size(tile, values.is_some());
    let n = keys.len();
    let padded = n.next_power_of_two().max(2);
    let mut ordered: Vec<u32> = keys.iter().map(|k| k.to_ordered(descending)).collect();
    ordered.resize(padded, u32::MAX);
    let mut device_keys = gpu.upload(&ordered)?;
    let mut positions: DeviceBuffer<u32> = gpu.zeros(padded)?;
    let given = values.unwrap_or(&[]);
    let device_values = gpu.upload(given)?;
    let mut sorted_values: DeviceBuffer<u32> = gpu.zeros(given.len())?;
    let launch = super::grid_for_work(gpu, launch, &bitonic_sort::KERNEL, padded / tile)?;
    let report = bitonic_sort::launch_with(
        gpu,
        &launch,
        &mut device_keys,
        &mut positions,
        &device_values,
        &mut sorted_values,
        values.is_some(),
        tile as u32,
    )?;
    let sorted = gpu.download(&device_keys)?;
    let keys = sorted[..n].iter().map(|&b| K::from_ordered(b, descending)).collect();
    let values = if values.is_some() { gpu.download(&sorted_values)? } else { Vec::new() };
    Ok(Sorted { keys, values, report })
}

/// The tile the kernel uses when asked for `tile` keys: a power of two within its shared memory.
fn tile_size(tile: usize, with_values: bool) -> usize {
    let most = if with_values { TILE_WITH_VALUES } else { TILE };
    tile.clamp(2, most).next_power_of_two().min(most)
}

/// Phases the kernel crosses for `n` keys: one grid barrier per global
/// compare distance (two per phase when sorting keys only), plus one per
/// stage's shared-memory pass.
pub fn phases(n: usize, with_values: bool, tile: usize) -> u32 {
    let padded = n.next_power_of_two().max(2) as u64;
    let tile = padded.min(tile_size(tile, with_values) as u64);
    let (log_n, log_tile) = (padded.ilog2(), tile.ilog2());
    let merges = log_n - log_tile;
    // Stage s (tile·2^s) has s global distances and one tile pass; keys
    // alone take them three, then two, at a time.
    let global = |s: u32| if with_values { s } else { s / 3 + (s % 3).div_ceil(2) };
    1 + (1..=merges).map(|s| global(s) + 1).sum::<u32>()
}
