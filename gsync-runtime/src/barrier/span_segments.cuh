// ---- spanning barrier between segments: a split kernel on a team --------------------------
// A split kernel's segments are launches of their own, and on one GPU the end of a launch is
// the barrier. On a PE of a team, the runtime launches this one-thread kernel on the same
// stream at every grid_sync() the host code passes (not at a gpu_sync(): stream order is that
// one) and at the end of the run, so that every PE crosses as often whatever segments its own
// control flow launched: it takes the spanning barrier's cross-GPU step
// (gsync_team_cross, with its watchdog), so that the next segment starts on no PE before
// every PE's previous segment has finished.
// Why every write of a segment on any PE is visible to the next segment on every PE: stream
// order puts every write of the previous segment (puts to other PEs included) before this
// thread's fence.acq_rel.sys, so its crossing store releases them at system scope; each
// peer's crossing thread acquires them (ld.acquire.sys), and stream
// order again puts the acquire before that peer's next segment. The crossings are counted
// with the fused kernels' (the same slots and count), so fused and split launches of one
// team interleave freely.
// `gsync_crossing`: this crossing's number in the run (every PE's the same), which a timed-out
// crossing records as its phase.
extern "C" __global__ void gsync_team_segment_crossing(u32 gsync_crossing, u32* __restrict__ gsync_barrier_state, gsync_status_t* __restrict__ gsync_status, const gsync_next_launch_t gsync_next_launch) {
    (void)gsync_team_cross(gsync_barrier_state, gsync_status, gsync_crossing);
}
// ---- end of spanning barrier between segments ---------------------------------------------
