//! Every barrier on a real GPU, the full tier (bundled on request, see README): cross-block
//! visibility for 10,000 phases on every grid of three block sizes, and warps handed back
//! converged on the largest grid of every block size.

use common::barrier_checks;
use common::cuda_gpu as gpu;
use common::radix::RadixSort;

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_barrier_makes_every_blocks_writes_visible_for_10000_phases() {
    let grids = barrier_checks::stress_grids;
    barrier_checks::every_barrier_makes_every_blocks_writes_visible(&gpu(), 10_000, &[32, 256, 1024], grids);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_barrier_hands_back_converged_warps_on_the_largest_grid_of_every_block_size() {
    barrier_checks::every_barrier_hands_back_converged_warps_on_the_largest_grid(
        &gpu(),
        &[RadixSort::EightBit, RadixSort::FourBit],
        &[32, 64, 128, 256, 512, 1024],
    );
}
