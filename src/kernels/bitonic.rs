//! Bitonic sort as one fused kernel: the stages whose compare distance stays
//! within a block's tile run in shared memory between `sync_block()`s; only
//! the distances that cross tiles use `grid_sync()`.
//!
//! The kernel sorts `u32` keys ascending. Other orders and key types are
//! mapped onto that on the host ([`SortKey`]): descending flips the bits,
//! `f32` uses IEEE total order with NaNs last. A length that is not a power
//! of two is padded with the largest key, which sorts to the end and is
//! dropped. With values, the kernel sorts (key, original position) pairs —
//! so equal keys keep their order and padding stays behind real keys — and
//! its last phase gathers each value from its original position.

use crate::{DeviceBuffer, Gpu, Launch, LaunchReport, Result};

/// The most keys per block tile when sorting keys alone: 32 KiB of shared memory.
pub const TILE: usize = 8192;

/// The most keys per block tile when sorting key–value pairs: each key
/// brings its original position into shared memory as well.
pub const TILE_WITH_VALUES: usize = 4096;

/// The sorting network's kernel and the compare-exchange steps its phases share.
#[gsync::kernels]
mod network {
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
        const TILE_KEYS: usize = 8192; // TILE
        const TILE_PAIRS: usize = 4096; // TILE_WITH_VALUES
        let n = keys.len() as u32;
        let tile_len = n.min(tile).min(if with_values { 4096 } else { 8192 });
        let tiles = n / tile_len;
        let mut tile_keys = shared_array::<u32, TILE_KEYS>();
        let mut tile_positions = shared_array::<u32, TILE_PAIRS>();

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

pub use network::bitonic_sort;

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

/// Sorts `keys` (and `values`, if given, along with them) on `gpu`.
pub fn sort<K: SortKey>(
    gpu: &Gpu,
    launch: &Launch,
    keys: &[K],
    values: Option<&[u32]>,
    descending: bool,
) -> Result<Sorted<K>> {
    let (tile, threads) = default_shape(keys.len());
    let launch = match launch.requested_threads() {
        Some(_) => launch.clone(),
        None => launch.clone().threads(threads),
    };
    sort_in_tiles(gpu, &launch, keys, values, descending, tile)
}

/// The tile size and block size [`sort`] uses when the launch names none:
/// the fastest of a sweep on an H200 (docs/results.md). Small inputs gain
/// from more, smaller tiles; large ones from fewer global phases.
pub fn default_shape(n: usize) -> (usize, u32) {
    match n.next_power_of_two() {
        0..=0x2_0000 => (1024, 512),
        0x2_0001..=0x8_0000 => (2048, 512),
        0x8_0001..=0x20_0000 => (TILE, 1024),
        _ => (TILE, 256),
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
