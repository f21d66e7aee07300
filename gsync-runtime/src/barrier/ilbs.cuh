// ---- grid barrier: ILBS, improved lock-based (the paper's Algorithm 3) -----------------
// The blocks are split into nearly equal groups of consecutive blocks (the header says how
// many), each with its own counter. Thread 0 of each block adds 1 to its group's counter;
// the last arriver of a group resets that counter and adds 1 to the grid counter; the last
// group to arrive resets the grid counter and releases everyone by incrementing the
// generation word that the other blocks poll. Contention on one word drops from N atomic
// additions to about N/g + g, least near g = sqrt(N), the default.
//
// Why this is a correct barrier (see the memory-order steps in the shared code above):
// - Within a group, the acq_rel additions chain as in LBS: the group's last arriver has
//   acquired the writes of its whole group. Its acq_rel addition to the grid counter
//   publishes them, and those additions chain too: the last group's last arriver has
//   acquired every block's writes before its red.release of the generation.
// - Waiters acquire the new generation, then gsync_sync_block_any() orders their block after.
// - Reuse: each reset is a store made before the releasing operation that follows it
//   (the grid addition, the generation increment), so no block can arrive again before the
//   counters it uses are back at 0; the next launch finds them at 0 as well, whatever its
//   group count. The generation is read before arriving, as in LBS.
// - Progress: thread 0 alone spins, and only while every block is resident; otherwise the
//   watchdog gives up and the launch ends at each block's next barrier.

// Words of the state after the header line; group counters follow, one line each.
#define GSYNC_ILBS_COUNTER (1u * GSYNC_LINE_WORDS)
#define GSYNC_ILBS_GENERATION (2u * GSYNC_LINE_WORDS)
#define GSYNC_ILBS_GROUP_COUNTERS (3u * GSYNC_LINE_WORDS)

struct gsync_barrier_t {
    unsigned int* state;
    unsigned int* group_counter;  // this block's group's counter
    unsigned int group_size;      // blocks in this block's group
    unsigned int groups;
    unsigned int phase;           // grid_sync() calls so far
};

__device__ __forceinline__ gsync_barrier_t gsync_barrier_begin(unsigned int* gsync_barrier_state) {
    const unsigned int blocks = gridDim.x;
    // The host checks 1 <= groups <= blocks; clamping only keeps a damaged header from
    // dividing by zero.
    unsigned int groups = gsync_barrier_state[GSYNC_HEADER_GROUPS];
    groups = groups < 1u ? 1u : (groups > blocks ? blocks : groups);
    // The first `larger` groups have q + 1 blocks, the others q.
    const unsigned int q = blocks / groups;
    const unsigned int larger = blocks % groups;
    const unsigned int in_larger = larger * (q + 1u);
    const unsigned int block = blockIdx.x;
    const unsigned int group = block < in_larger ? block / (q + 1u) : larger + (block - in_larger) / q;
    gsync_barrier_t barrier;
    barrier.state = gsync_barrier_state;
    barrier.group_counter = gsync_barrier_state + GSYNC_ILBS_GROUP_COUNTERS + group * GSYNC_LINE_WORDS;
    barrier.group_size = group < larger ? q + 1u : q;
    barrier.groups = groups;
    barrier.phase = 0u;
    return barrier;
}

__device__ __forceinline__ void gsync_grid_sync(gsync_barrier_t& barrier, gsync_status_t* gsync_status) {
    barrier.phase += 1u;
    gsync_sync_block();
    bool gave_up = false;
    if (threadIdx.x == 0) {
        unsigned int* counter = barrier.state + GSYNC_ILBS_COUNTER;
        unsigned int* generation = barrier.state + GSYNC_ILBS_GENERATION;
        const unsigned int seen = gsync_load_relaxed(generation);
        bool released = false;
        if (gsync_fetch_add_acq_rel(barrier.group_counter, 1u) == barrier.group_size - 1u) {
            gsync_store_relaxed(barrier.group_counter, 0u);
            if (gsync_fetch_add_acq_rel(counter, 1u) == barrier.groups - 1u) {
                gsync_store_relaxed(counter, 0u);
                gsync_add_release(generation, 1u);
                released = true;
            }
        }
        if (!released) {
            gsync_watch_t watch = gsync_watch(barrier.state, gsync_status, barrier.phase);
            gave_up = !gsync_wait_for_change(generation, seen, watch);
        }
    }
    if (gsync_sync_block_any(gave_up)) gsync_leave();
}
// ---- end of grid barrier --------------------------------------------------------------
