// ---- grid barrier: LFS, lock-free (Xiao & Feng; the paper's Algorithm 2) ---------------
// Two arrays of flag slots, one slot per block: Arrayin (arrivals) and Arrayout (releases).
// Thread 0 of each block writes the barrier's tag into its Arrayin slot and polls its
// Arrayout slot. Block 0 is the master: its thread t waits for block t's Arrayin slot, the
// master synchronizes its threads, and thread t writes block t's Arrayout slot. No atomic
// read-modify-write is needed, but the master has one thread per block, so the grid may have
// at most as many blocks as a block has threads (the launcher refuses more).
//
// Why this is a correct barrier (see the memory-order steps in the shared code above):
// - Arrival: after gsync_sync_block(), thread 0's st.release of its Arrayin slot publishes the
//   block's writes.
// - Gathering: master thread t's ld.acquire of block t's slot takes them;
//   gsync_sync_block_any() then orders every master thread after every gathering thread, so
//   each master thread has observed every block's writes.
// - Release: master thread t's st.release of block t's Arrayout slot passes all of them on
//   (release is cumulative); block t's thread 0 acquires it and gsync_sync_block_any() orders
//   the rest of the block after it.
// - Reuse: a slot's tag is (launch sequence << 32) | phase and waits compare for equality.
//   A block writes its next arrival only after being released from this barrier, and the
//   master writes the next release only after that arrival, so no waiter can miss the tag
//   it waits for; tags of earlier launches carry another sequence and never match, so the
//   state needs no cleaning between launches.
// - Spinning: one thread per block, except in the master, where each gathering thread polls
//   a different block's slot. No thread waits for another thread of its own warp, so the
//   divergent spins of a warp cannot hold each other up.

struct gsync_barrier_t {
    unsigned int* state;
    unsigned long long launch;  // (launch sequence << 32), or'ed with the phase to make tags
    unsigned int phase;         // grid_sync() calls so far
};

__device__ __forceinline__ gsync_barrier_t gsync_barrier_begin(unsigned int* gsync_barrier_state) {
    gsync_barrier_t barrier = {gsync_barrier_state, gsync_launch_tag(gsync_barrier_state), 0u};
    return barrier;
}

__device__ __forceinline__ void gsync_grid_sync(gsync_barrier_t& barrier, gsync_status_t* gsync_status) {
    barrier.phase += 1u;
    const unsigned long long tag = barrier.launch | barrier.phase;
    const unsigned int blocks = gsync_grid_blocks();
    // Arrayin is slots [0, blocks), Arrayout slots [blocks, 2 * blocks).
    unsigned long long* arrived = gsync_slot(barrier.state, 0u);
    unsigned long long* released = gsync_slot(barrier.state, blocks);
    gsync_sync_block();
    bool gave_up = false;
    if (gsync_linear_block() == 0) {
        const unsigned int t = gsync_linear_thread();
        const bool gathers = t != 0u && t < blocks;  // the master has no slot of its own
        if (gathers) {
            gsync_watch_t watch = gsync_watch(barrier.state, gsync_status, barrier.phase);
            gave_up = !gsync_wait_for_tag(arrived + GSYNC_LINE_SLOTS * t, tag, watch);
        }
        if (gsync_sync_block_any(gave_up)) gsync_leave();
        if (gathers) gsync_store_release(released + GSYNC_LINE_SLOTS * t, tag);
    } else {
        if (gsync_linear_thread() == 0) {
            gsync_store_release(arrived + GSYNC_LINE_SLOTS * gsync_linear_block(), tag);
            gsync_watch_t watch = gsync_watch(barrier.state, gsync_status, barrier.phase);
            gave_up = !gsync_wait_for_tag(released + GSYNC_LINE_SLOTS * gsync_linear_block(), tag, watch);
        }
        if (gsync_sync_block_any(gave_up)) gsync_leave();
    }
}
// ---- end of grid barrier --------------------------------------------------------------
