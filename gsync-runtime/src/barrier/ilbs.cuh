// ---- grid barrier: ILBS, improved lock-based (the paper's Algorithm 3) -----------------
// The blocks are split into nearly equal groups of consecutive blocks (the header says how
// many), each with its own counter, and the grid has one more. At each barrier thread 0 of
// each block adds 1 to its group's counter and spins until the group has arrived; the first
// block of each group then adds 1 to the grid counter, and every block spins until all
// groups have arrived. Each counter is hit by about N/g + g additions instead of N, least
// near g = sqrt(N), the default. Counters only grow during a launch, their goals growing by
// the group size (or the group count) at every barrier; the host zeroes them with the
// header before each launch.
//
// Why this is a correct barrier (see the memory-order steps in the shared code above):
// - Arrival: after gsync_sync_block(), thread 0's atom.acq_rel on its group counter
//   publishes the block's writes.
// - Observation order runs through the atomic additions to a counter, so a group's first
//   block, once its ld.acquire reads the group's goal (or its own addition completed the
//   group), has acquired the writes of its whole group; its atom.acq_rel on the grid counter
//   publishes all of them (release is cumulative). A block that reads the grid goal, or
//   whose addition reached it, has therefore acquired every block's writes, and
//   gsync_sync_block_any() hands them to the rest of its block. A block whose addition
//   completes a count does not spin on it (gsync_arrive_and_wait).
// - Reuse: a block adds for the next barrier only after it saw this one's grid goal, and a
//   group adds to the grid counter only once all of its blocks arrived, so no count reaches a
//   goal early.
// - Progress: thread 0 alone spins, and only while every block is resident; otherwise the
//   watchdog gives up and the launch ends at each block's next barrier.

// Words of the state after the header line; group counters follow, one line each.
#define GSYNC_ILBS_COUNTER (1u * GSYNC_LINE_WORDS)
#define GSYNC_ILBS_GROUP_COUNTERS (2u * GSYNC_LINE_WORDS)

struct gsync_barrier_t {
    unsigned int* state;
    unsigned int* group_counter;  // this block's group's counter
    unsigned int group_size;      // blocks in this block's group
    unsigned int groups;
    unsigned int phase;           // grid_sync() calls so far
    bool first;                   // whether this block adds its group to the grid counter
};

__device__ __forceinline__ gsync_barrier_t gsync_barrier_begin(unsigned int* gsync_barrier_state) {
    const unsigned int blocks = gsync_grid_blocks();
    // The host checks 1 <= groups <= blocks; clamping only keeps a damaged header from
    // dividing by zero.
    unsigned int groups = gsync_barrier_state[GSYNC_HEADER_GROUPS];
    groups = groups < 1u ? 1u : (groups > blocks ? blocks : groups);
    // The first `larger` groups have q + 1 blocks, the others q.
    const unsigned int q = blocks / groups;
    const unsigned int larger = blocks % groups;
    const unsigned int in_larger = larger * (q + 1u);
    const unsigned int block = gsync_linear_block();
    const unsigned int group = block < in_larger ? block / (q + 1u) : larger + (block - in_larger) / q;
    const unsigned int first = group < larger ? group * (q + 1u) : in_larger + (group - larger) * q;
    gsync_barrier_t barrier;
    barrier.state = gsync_barrier_state;
    barrier.group_counter = gsync_barrier_state + GSYNC_ILBS_GROUP_COUNTERS + group * GSYNC_LINE_WORDS;
    barrier.group_size = group < larger ? q + 1u : q;
    barrier.groups = groups;
    barrier.phase = 0u;
    barrier.first = block == first;
    return barrier;
}

__device__ __forceinline__ void gsync_grid_sync(gsync_barrier_t& barrier, gsync_status_t* gsync_status) {
    barrier.phase += 1u;
    gsync_sync_block();
    bool gave_up = false;
    if (gsync_linear_thread() == 0) {
        unsigned int* counter = barrier.state + GSYNC_ILBS_COUNTER;
        gsync_watch_t watch = gsync_watch(barrier.state, gsync_status, barrier.phase);
        gave_up = !gsync_arrive_and_wait(barrier.group_counter, barrier.phase * barrier.group_size, watch);
        if (!gave_up) {
            const unsigned int goal = barrier.phase * barrier.groups;
            gave_up = barrier.first ? !gsync_arrive_and_wait(counter, goal, watch) : !gsync_wait_for_count(counter, goal, watch);
        }
    }
    if (gsync_sync_block_any(gave_up)) gsync_leave();
}
// ---- end of grid barrier --------------------------------------------------------------
