// ---- grid barrier: LBS, lock-based (Xiao & Feng; the paper's Algorithm 1) ------------
// One counter for the grid. Thread 0 of each block adds 1 to it; the block whose addition
// brings it to gridDim.x arrived last: it resets the counter and releases the grid by
// incrementing the generation word, which every other block's thread 0 polls.
//
// Why this is a correct barrier (see the memory-order steps in the shared code above):
// - Arrival: after gsync_sync_block(), thread 0's atom.add.acq_rel publishes the block's writes
//   (its release half is cumulative).
// - Each addition reads the value the one before it wrote, so the acq_rel additions form a
//   chain of release/acquire pairs: the last arriver has acquired every block's writes.
// - Release: its red.release on the generation passes all of them on; a waiter's
//   ld.acquire of the new generation takes them, and gsync_sync_block_any() hands them to the
//   rest of its block.
// - Reuse: the reset store comes before the release, and a block arrives again only after
//   acquiring the new generation, so every later addition finds the counter at 0, in this
//   launch and the next. The generation is read before arriving: it cannot move until this
//   block has arrived, so waiting for any change of it is waiting for this very barrier.
// - Progress: thread 0 alone spins, and only while every block is resident; otherwise the
//   watchdog gives up and the launch ends at each block's next barrier.

// Words of the state after the header line.
#define GSYNC_LBS_COUNTER (1u * GSYNC_LINE_WORDS)
#define GSYNC_LBS_GENERATION (2u * GSYNC_LINE_WORDS)

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
    if (threadIdx.x == 0) {
        unsigned int* counter = barrier.state + GSYNC_LBS_COUNTER;
        unsigned int* generation = barrier.state + GSYNC_LBS_GENERATION;
        const unsigned int seen = gsync_load_relaxed(generation);
        // The acq_rel addition also keeps the load above before the arrival.
        if (gsync_fetch_add_acq_rel(counter, 1u) == gridDim.x - 1u) {
            gsync_store_relaxed(counter, 0u);
            gsync_add_release(generation, 1u);
        } else {
            gsync_watch_t watch = gsync_watch(barrier.state, gsync_status, barrier.phase);
            gave_up = !gsync_wait_for_change(generation, seen, watch);
        }
    }
    if (gsync_sync_block_any(gave_up)) gsync_leave();
}
// ---- end of grid barrier --------------------------------------------------------------
