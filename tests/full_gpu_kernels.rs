//! Kernels on a real GPU, the full tier (bundled on request, see README): the shared checks
//! that sweep block sizes, barriers and tile shapes (`common::with_full_tier_checks`), the
//! checks that `gpu_kernels.rs` runs under Auto under every barrier, and library grids under
//! every block size, profiled and not.

use common::checks::{self, random_vec, rng};
use common::{cuda_gpu as gpu, on_the_gpu};
use gsync::prelude::*;

common::with_full_tier_checks!(on_the_gpu);

#[test]
#[ignore = "needs a CUDA GPU"]
fn unary_receivers_match_rust_under_every_barrier() {
    let gpu = gpu();
    for &barrier in Barrier::ALL {
        checks::unary_receivers_match_rust(&gpu, barrier);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_zero_step_returns_a_typed_error_under_every_barrier() {
    let gpu = gpu();
    for &barrier in Barrier::ALL {
        checks::a_zero_step_returns_a_typed_error(&gpu, barrier);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_2d_transpose_through_a_shared_tile_matches_the_cpu_under_every_barrier() {
    let gpu = gpu();
    for &barrier in Barrier::ALL {
        common::dims::a_2d_transpose_through_a_shared_tile_matches_the_cpu(&gpu, barrier);
    }
}

/// A library sort with more tiles than co-resident blocks, under `Barrier::Auto`, profiled
/// and not: Auto picks its barrier by the grid's size, and the profiled kernel fits fewer
/// blocks per SM, so the grid the library chooses must be the one the barrier Auto picks can
/// hold (a profiled 2^24-key sort on 128 threads once asked for 924 blocks where 792 fit).
#[test]
#[ignore = "needs a CUDA GPU"]
fn library_grids_fit_the_barrier_auto_picks() {
    use gsync::kernels::bitonic::sort;
    let gpu = gpu();
    let mut rng = rng();
    let keys: Vec<u32> = random_vec(&mut rng, 1 << 21);
    let mut expected = keys.clone();
    expected.sort_unstable();
    for threads in [64u32, 128, 256, 512] {
        for profile in [false, true] {
            let launch = Launch::new().threads(threads).profile(profile).profile_phases(64);
            let sorted =
                sort(&gpu, &launch, &keys, None, false).unwrap_or_else(|e| panic!("{threads}, {profile}: {e}"));
            assert!(sorted.keys == expected, "{threads} threads, profile {profile}");
        }
    }
}
