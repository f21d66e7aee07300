use gsync::prelude::*;

/// A kernel that asks for three blocks of 128 threads per SM.
#[grid_phases(threads = 128, blocks_per_sm = 3)]
pub fn resident(a: &mut [u32]) {
    for i in grid_stride(0..a.len()) {
        a[i] += 1;
    }
}

fn main() {
    assert_eq!(resident::KERNEL.blocks_per_sm, 3);
    assert!(resident::cuda_source().contains("#define GSYNC_LAUNCH_BOUNDS GSYNC_BLOCK_SIZE, 3"));
    // Blocks of 384 threads keep as many threads per SM: one block.
    assert_eq!(resident::KERNEL.blocks_per_sm_for(384), Some(1));
    assert_eq!(resident::KERNEL.blocks_per_sm_for(64), Some(6));
}
