//! Kernels with shared slices (`shared_slice::<T>(len)`): dynamic shared memory whose length
//! a parameter and the block size decide.

use gsync::prelude::*;

/// Per tile of `tile` elements: the sum of the tile plus its odd elements' count times 2^40,
/// through three shared slices of different element types (one sized by the block); then
/// thread 0 of the grid adds the tiles' results into `total[0]`.
#[grid_phases]
pub fn tile_sums(input: &[u32], sums: &mut [u64], total: &mut [u64], tile: u32) {
    let len = tile as usize;
    let mut values = shared_slice::<u32>(len);
    // `+ 7` overflows for `tile` near `u32::MAX`: a typed error at launch, not a wrap.
    let mut parity = shared_slice::<u8>((tile + 7) as usize);
    let mut partial = shared_slice::<u64>(block_dim() as usize);
    let tiles = input.len().div_ceil(len);
    for k in (block_idx() as usize..tiles).step_by(grid_dim() as usize) {
        for i in block_stride(0..len) {
            let g = k * len + i;
            if g < input.len() {
                values[i] = input[g];
            } else {
                values[i] = 0;
            }
            parity[i] = (values[i] & 1) as u8;
        }
        sync_block();
        let mut acc = 0u64;
        for i in block_stride(0..values.len()) {
            acc += values[i] as u64 + ((parity[i] as u64) << 40);
        }
        partial[thread_idx() as usize] = acc;
        sync_block();
        if thread_idx() == 0 {
            let mut s = 0u64;
            for j in 0..partial.len() {
                s += partial[j];
            }
            sums[k] = s;
        }
        sync_block();
    }
    grid_sync();
    if global_id() == 0 {
        let mut s = 0u64;
        for k in 0..tiles {
            s += sums[k];
        }
        total[0] = s;
    }
}

/// Each thread writes `s[thread_idx()]` of a shared slice of `n` elements: past its end
/// where the block has more threads than `n`.
#[grid_phases]
pub fn writes_past_a_shared_slice(out: &mut [u32], n: u32) {
    let mut s = shared_slice::<u32>(n as usize);
    s[thread_idx() as usize] = thread_idx();
    sync_block();
    if global_id() == 0 {
        out[0] = s[0];
    }
}

/// The CPU's `tile_sums`: each tile's result, and their total.
pub fn tile_sums_reference(input: &[u32], tile: usize) -> (Vec<u64>, u64) {
    let sums: Vec<u64> =
        input.chunks(tile).map(|chunk| chunk.iter().map(|&v| u64::from(v) + (u64::from(v & 1) << 40)).sum()).collect();
    let total = sums.iter().sum();
    (sums, total)
}
