// ---- grid barrier: LBS, lock-based (Xiao & Feng; the paper's Algorithm 1) ------------
// One counter for the grid. At each barrier thread 0 of each block adds 1 to it and spins
// until it reaches the barrier's goal, phase x blocks (the paper's goalVal, which grows by
// the block count at every barrier); the block whose addition reaches the goal sees so in
// the addition's result and does not spin. The counter only grows during a launch; the host
// zeroes it with the header before each launch.
//
// Why this is a correct barrier (see the memory-order steps in the shared code above):
// - Arrival: after gsync_sync_block(), thread 0's atom.acq_rel publishes the block's writes
//   (release is cumulative).
// - The additions are atomic read-modify-writes of one word, and observation order in the
//   PTX memory model runs through them: a waiter whose ld.acquire reads a count at or past
//   the goal, or the last block, whose addition acquires the count that all the others
//   produced, has observed every block's release of this barrier, so it has acquired every
//   block's writes; gsync_sync_block_any() hands them to the rest of its block.
// - Reuse: a block adds for the next barrier only after it saw this one's goal, so the
//   count cannot reach a goal before every block arrived for that barrier.
// - Progress: thread 0 alone spins, and only while every block is resident; otherwise the
//   watchdog gives up and the launch ends at each block's next barrier.

// Words of the state after the header line.
#define GSYNC_LBS_COUNTER (1u * GSYNC_LINE_WORDS)

struct gsync_barrier_t {
    unsigned int* state;
    unsigned int phase;  // grid_sync() calls so far
};

__device__ __forceinline__ gsync_barrier_t gsync_barrier_begin(unsigned int* gsync_barrier_state) {
    gsync_barrier_t barrier = {gsync_barrier_state, 0u};
    return barrier;
}

__device__ __forceinline__ void gsync_grid_sync(gsync_barrier_t& barrier, gsync_status_t* gsync_status) {
    barrier.phase += 1u;
    gsync_sync_block();
    bool gave_up = false;
    if (gsync_linear_thread() == 0) {
        gsync_watch_t watch = gsync_watch(barrier.state, gsync_status, barrier.phase);
        gave_up = !gsync_arrive_and_wait(barrier.state + GSYNC_LBS_COUNTER, barrier.phase * gsync_grid_blocks(), watch);
    }
    if (gsync_sync_block_any(gave_up)) gsync_leave();
}
// ---- end of grid barrier --------------------------------------------------------------
