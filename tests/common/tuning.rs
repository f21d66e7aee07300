//! Kernels for the launch-shape tests: one whose buffers depend on the grid, and one that
//! shows how often a launch wrote the caller's data.

use gsync::prelude::*;

/// Sums `input` into one partial per block (`partials` must have a slot per block), then
/// block 0 adds the partials into `total[0]`.
#[grid_phases]
pub fn block_sums(input: &[u32], partials: &mut [u32], total: &mut [u32]) {
    for i in grid_stride(0..input.len()) {
        let _ = partials.atomic_add(block_idx() as usize, input[i]);
    }
    grid_sync();
    if global_id() == 0 {
        let mut sum = 0u32;
        for b in 0..grid_dim() {
            sum = sum.wrapping_add(partials[b as usize]);
        }
        total[0] = sum;
    }
}

/// Adds one to every element of `data`, through `staging`, in two phases: after any number of
/// launches, `data` says how many wrote it.
#[grid_phases]
pub fn add_one(data: &mut [u32], staging: &mut [u32]) {
    for i in grid_stride(0..data.len()) {
        staging[i] = data[i] + 1;
    }
    grid_sync();
    for i in grid_stride(0..data.len()) {
        data[i] = staging[i];
    }
}

/// What `block_sums` leaves in `total[0]`.
pub fn sum(input: &[u32]) -> u32 {
    input.iter().fold(0u32, |sum, &x| sum.wrapping_add(x))
}

/// Reverses each run of 256 elements of `data` through a shared array indexed by
/// `thread_idx()`: correct only with blocks of 256 threads, the default it declares by
/// using them.
#[grid_phases]
pub fn block_reverse(data: &mut [u32]) {
    let mut tile = shared_array::<u32, 256>();
    let mut base = block_idx() as usize * 256;
    while base < data.len() {
        tile[thread_idx() as usize] = data[base + thread_idx() as usize];
        sync_block();
        data[base + thread_idx() as usize] = tile[255 - thread_idx() as usize];
        sync_block();
        base += grid_dim() as usize * 256;
    }
    grid_sync();
}
