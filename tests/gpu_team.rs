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
