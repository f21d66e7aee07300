//! Team kernels on a real GPU in no team: a team of one, whose `put` and `get` reach the
//! GPU's own memory through the team record's zero offset.
//! Run with `bash .gpu/run.sh tests` on a CUDA machine (see README).

use common::cuda_gpu as gpu;
use common::team;

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_gpu_alone_is_a_team_of_one() {
    team::a_gpu_alone_is_a_team_of_one(&gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_pe_out_of_the_team_is_refused_in_the_kernel() {
    team::a_pe_out_of_the_team_is_refused_in_the_kernel(&gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn ranges_reach_a_gpu_alone_and_fault_as_on_the_emulator() {
    use common::team_ranges;
    use gsync::Barrier;
    let gpu = gpu();
    let thirds = |_| (0..150).map(|i| i as f32 / 3.0).collect::<Vec<f32>>();
    team_ranges::ring_ranges_match_the_cpu(&gpu, Barrier::Auto, thirds).unwrap();
    team_ranges::the_block_sees_its_copy_after_put_range(&gpu).unwrap();
    team_ranges::shared_tiles_reach_the_next_pe(&gpu, Barrier::MultiLaunch).unwrap();
    team_ranges::range_faults_are_out_of_bounds_and_copy_nothing(&gpu).unwrap();
}
