//! LSD radix sorts in one kernel: many grid phases with block-level traffic between them
//! (shared-memory histograms, `sync_block()` between sub-steps, warp shuffles right after
//! `grid_sync()`). The 8-bit sort is the kernel that first showed a barrier handing back a
//! diverged warp: its `sync_block()` right after `grid_sync()` then faulted with an illegal
//! instruction (ULFS, 2112 × 128 on an H100) or let a warp through half-arrived (ULFS,
//! 2640 × 32: a wrong sort). Both sorts are written alike, token for token, so that the
//! generated CUDA keeps that shape.

use gsync::prelude::*;

/// Defines a stable LSD radix sort by `$bits`-bit digits for blocks of up to
/// `$warp_hist / $digits` warps.
///
/// Block `b` owns keys `[b * chunk, (b + 1) * chunk)`. Per pass: (A) block histograms into
/// `hist[digit * grid_dim() + block]`; (B) one thread per digit turns its row into exclusive
/// offsets over blocks and stores the digit total; (C) each block scatters its chunk,
/// sub-tile by sub-tile, with a stable rank (lane rank by shuffles, warp offsets from a
/// per-warp histogram in shared memory). Passes ping-pong `keys` and `alt`; the pass count
/// is even, so the sorted keys end in `keys`. `hist` needs `digits * grid_dim()` elements,
/// `totals` `digits`.
macro_rules! radix_sort_kernel {
    ($name:ident, bits: $bits:literal, passes: $passes:literal, digits: $digits:literal, mask: $mask:literal,
     radix: $radix:literal, warp_hist: $warp_hist:literal) => {
        #[grid_phases(threads = 128)]
        pub fn $name(keys: &mut [u32], alt: &mut [u32], hist: &mut [u32], totals: &mut [u32]) {
            const RADIX: usize = $radix;
            const WARP_HIST: usize = $warp_hist;
            let n = keys.len() as u32;
            let nb = grid_dim();
            let bd = block_dim();
            let nwarps = bd / 32;
            let chunk = n.div_ceil(nb);
            let mut counts = shared_array::<u32, RADIX>();
            let mut base = shared_array::<u32, RADIX>();
            let mut whist = shared_array::<u32, WARP_HIST>();

            for pass in 0..$passes {
                let shift = pass * $bits;
                // (A) histogram of this block's chunk. Per-block values are computed in
                // every phase that uses them (MultiLaunch cannot carry them across).
                let b = block_idx();
                let lo = (b * chunk).min(n);
                let hi = (lo + chunk).min(n);
                for d in block_stride(0..$digits) {
                    counts[d] = 0;
                }
                sync_block();
                for i in block_stride(lo..hi) {
                    let k = if pass % 2 == 0 { keys[i] } else { alt[i] };
                    counts.atomic_add((k >> shift) & $mask, 1);
                }
                sync_block();
                for d in block_stride(0..$digits) {
                    hist[d * nb + b] = counts[d];
                }
                grid_sync();

                // (B) per digit: exclusive offsets over blocks, and the digit total.
                for d in grid_stride(0..$digits) {
                    let mut run = 0u32;
                    for j in 0..nb {
                        let c = hist[d * nb + j];
                        hist[d * nb + j] = run;
                        run += c;
                    }
                    totals[d] = run;
                }
                grid_sync();

                // (C) stable scatter.
                let b = block_idx();
                let tid = thread_idx();
                let lane = lane_id();
                let warp = tid / 32;
                let lo = (b * chunk).min(n);
                let hi = (lo + chunk).min(n);
                for d in block_stride(0..$digits) {
                    let mut s = 0u32;
                    for e in 0..d {
                        s += totals[e];
                    }
                    base[d] = s + hist[d * nb + b];
                }
                sync_block();
                let mut t0 = lo;
                while t0 < hi {
                    let i = t0 + tid;
                    let valid = i < hi;
                    let k = if valid {
                        if pass % 2 == 0 {
                            keys[i]
                        } else {
                            alt[i]
                        }
                    } else {
                        0
                    };
                    let d = if valid { (k >> shift) & $mask } else { $digits };
                    let mut rank = 0u32;
                    for j in 0..32u32 {
                        let dj = shfl(d, j);
                        if dj == d && j < lane {
                            rank += 1;
                        }
                    }
                    for x in block_stride(0..nwarps * $digits) {
                        whist[x] = 0;
                    }
                    sync_block();
                    if valid {
                        whist.atomic_add(warp * $digits + d, 1);
                    }
                    sync_block();
                    for dd in block_stride(0..$digits) {
                        let mut run = 0u32;
                        for w in 0..nwarps {
                            let c = whist[w * $digits + dd];
                            whist[w * $digits + dd] = run;
                            run += c;
                        }
                        counts[dd] = run;
                    }
                    sync_block();
                    if valid {
                        let dst = base[d] + whist[warp * $digits + d] + rank;
                        if pass % 2 == 0 {
                            alt[dst] = k;
                        } else {
                            keys[dst] = k;
                        }
                    }
                    sync_block();
                    for dd in block_stride(0..$digits) {
                        base[dd] += counts[dd];
                    }
                    sync_block();
                    t0 += bd;
                }
                grid_sync();
            }
        }
    };
}

radix_sort_kernel!(radix_sort_8bit, bits: 8, passes: 4u32, digits: 256u32, mask: 255, radix: 256, warp_hist: 2048);
radix_sort_kernel!(radix_sort_4bit, bits: 4, passes: 8u32, digits: 16u32, mask: 15, radix: 16, warp_hist: 512);

/// Which radix sort, and the largest block size it supports.
#[derive(Clone, Copy, Debug)]
pub enum RadixSort {
    /// 8-bit digits, 4 passes (12 grid phases), blocks of up to 256 threads.
    EightBit,
    /// 4-bit digits, 8 passes (24 grid phases), blocks of up to 1024 threads.
    FourBit,
}

impl RadixSort {
    /// Digits per pass.
    pub fn radix(self) -> usize {
        match self {
            RadixSort::EightBit => 256,
            RadixSort::FourBit => 16,
        }
    }

    /// The largest block size the per-warp histogram has room for.
    pub fn max_threads(self) -> u32 {
        match self {
            RadixSort::EightBit => 256,
            RadixSort::FourBit => 1024,
        }
    }

    /// The kernel's largest co-resident grid for `launch`.
    pub fn max_coresident_blocks(self, gpu: &Gpu, launch: &Launch) -> gsync::Result<u32> {
        match self {
            RadixSort::EightBit => radix_sort_8bit::max_coresident_blocks(gpu, launch),
            RadixSort::FourBit => radix_sort_4bit::max_coresident_blocks(gpu, launch),
        }
    }

    /// Sorts `input` with `launch` (which must name the grid) and returns the keys.
    pub fn sort(self, gpu: &Gpu, launch: &Launch, input: &[u32]) -> gsync::Result<Vec<u32>> {
        let blocks = launch.requested_blocks().expect("the radix sorts size `hist` by the grid") as usize;
        let mut keys = gpu.upload(input)?;
        let mut alt = gpu.zeros::<u32>(input.len())?;
        let mut hist = gpu.zeros::<u32>(self.radix() * blocks)?;
        let mut totals = gpu.zeros::<u32>(self.radix())?;
        match self {
            RadixSort::EightBit => {
                radix_sort_8bit::launch_with(gpu, launch, &mut keys, &mut alt, &mut hist, &mut totals)?
            }
            RadixSort::FourBit => {
                radix_sort_4bit::launch_with(gpu, launch, &mut keys, &mut alt, &mut hist, &mut totals)?
            }
        };
        gpu.download(&keys)
    }
}
