//! Launches that return once queued, on a real GPU: many in flight at once, errors at
//! `wait()`, the split form and dropped handles. Run with `bash .gpu/run.sh tests` on a CUDA
//! machine (see README).

use common::cuda_gpu as gpu;

#[test]
#[ignore = "needs a CUDA GPU"]
fn many_launches_in_flight_each_compute_their_own_result() {
    common::pending::many_launches_in_flight_each_compute_their_own_result(&gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn back_to_back_launches_stay_correct_across_barriers_settings_and_faults() {
    common::pending::back_to_back_launches_stay_correct_across_barriers_settings_and_faults(&gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_launch_error_surfaces_at_wait() {
    common::pending::a_launch_error_surfaces_at_wait(&gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn split_and_dropped_launches_finish() {
    common::pending::split_and_dropped_launches_finish(&gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn launches_on_two_streams_use_each_other_s_buffers() {
    common::pending::launches_on_two_streams_use_each_other_s_buffers(&gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn captured_launches_replay_in_order() {
    common::pending::captured_launches_replay_in_order(&gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_refused_launch_is_refused_by_submit() {
    common::pending::a_refused_launch_is_refused_by_submit(&gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn full_grids_on_two_streams_take_turns() {
    common::pending::full_grids_on_two_streams_take_turns(&gpu());
}
