// ---- grid barrier: Relay, gsync's own ------------------------------------------------
// Built from measurements on Hopper: what a phase boundary costs there is the traffic on the
// few words every block touches. While the grid is small (up to 4 blocks per SM) the host
// runs LBS's kernel for a Relay launch: one counter is the shortest path. Larger grids run
// this fragment, which spreads the traffic.
//
// When many blocks add to and poll one word, its L2 slice serializes them, and the cost
// grows with the block count. Here each block adds to one of GSYNC_RELAY_LINES counters (by
// block index), and only one block per SM, its leader, polls them, one counter per lane of
// its first warp. Once all have reached their goals the leader writes its SM group's release
// flag, which the other blocks of that group poll: each flag has a handful of pollers, and
// no word sees more than N / 32 additions. The groups come from a census at the start of the
// launch: each block adds 1 to the slot of the SM it runs on (%smid), and the block that
// finds 0 there leads that group. The census only labels groups: a block that later runs
// elsewhere (after a preemption) keeps its group, which costs speed, not correctness.
//
// Why this is a correct barrier (see the memory-order steps in the shared code above):
// - Arrival: after gsync_sync_block(), thread 0's red.release publishes the block's writes.
// - Observation order in the PTX memory model runs through the atomic additions to each
//   counter, so the leader lane whose ld.acquire reads a counter's goal has acquired the
//   writes of every block that adds to it. __syncwarp() orders all those lanes before lane
//   0, whose st.release of the group's flag then covers every block's writes (release is
//   cumulative). A block of the group acquires the flag and gsync_sync_block_any() orders
//   the rest of it after that.
// - Reuse: counts only grow, and a block adds for the next barrier only after it was
//   released from this one, which required every block's arrival here, so no count reaches a
//   goal early. Flags hold (launch sequence << 32) | phase, compared for equality: a leader
//   writes the next phase only after every block, its group's included, arrived for it, so no
//   waiter misses its tag, and tags of earlier launches never match. The host zeroes the
//   counters and the census with the header before each launch.
// - Progress: one thread per block spins (a warp in a leader), and only while every block is
//   resident; otherwise the watchdog gives up and the launch ends at each block's next
//   barrier. Every group has exactly one leader, a resident block of that group.

// Arrival counters, one line each, one per lane of a leader's first warp.
#define GSYNC_RELAY_LINES 32u
// SM groups: census slots (packed words) and release flags (one line each).
#define GSYNC_RELAY_GROUPS 512u
// Words of the state after the header line: the counters, then the census; then the flags,
// as u64 slots (gsync_slot counts slots from the line after the header).
#define GSYNC_RELAY_ARRIVALS (1u * GSYNC_LINE_WORDS)
#define GSYNC_RELAY_CENSUS ((1u + GSYNC_RELAY_LINES) * GSYNC_LINE_WORDS)
#define GSYNC_RELAY_FLAG_SLOT (GSYNC_RELAY_LINES + GSYNC_RELAY_GROUPS / GSYNC_LINE_WORDS)

struct gsync_barrier_t {
    unsigned int* state;
    unsigned long long launch;  // (launch sequence << 32), or'ed with the phase to make tags
    unsigned int phase;         // grid_sync() calls so far
    unsigned int group;         // this block's group (first warp only)
    bool leads;                 // whether this block releases its group (first warp only)
};

// The lanes of the block's first warp, which may be partial.
__device__ __forceinline__ unsigned int gsync_first_warp_mask() {
    return gsync_block_threads() >= 32u ? 0xffffffffu : (1u << gsync_block_threads()) - 1u;
}

__device__ __forceinline__ gsync_barrier_t gsync_barrier_begin(unsigned int* gsync_barrier_state) {
    gsync_barrier_t barrier;
    barrier.state = gsync_barrier_state;
    barrier.launch = gsync_launch_tag(gsync_barrier_state);
    barrier.phase = 0u;
    barrier.group = 0u;
    barrier.leads = false;
    if (gsync_linear_thread() < 32u) {
        unsigned int group = 0u;
        unsigned int leads = 0u;
        if (gsync_linear_thread() == 0) {
            unsigned int sm;
            asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
            group = sm % GSYNC_RELAY_GROUPS;
            leads = atomicAdd(gsync_barrier_state + GSYNC_RELAY_CENSUS + group, 1u) == 0u;
        }
        const unsigned int mask = gsync_first_warp_mask();
        barrier.group = __shfl_sync(mask, group, 0);
        barrier.leads = __shfl_sync(mask, leads, 0) != 0u;
    }
    return barrier;
}

// A leader's first warp waits until every per-SM counter has reached its goal for `phase`:
// lane i watches counters i, i + lanes, ...; lane 0 keeps the watchdog for the warp.
__device__ __forceinline__ bool gsync_relay_wait_all(unsigned int* counters, unsigned int phase, gsync_watch_t& watch) {
    const unsigned int mask = gsync_first_warp_mask();
    const unsigned int lanes = gsync_block_threads() < 32u ? gsync_block_threads() : 32u;
    const unsigned int blocks = gsync_grid_blocks();
    while (true) {
        bool arrived = true;
        for (unsigned int line = gsync_linear_thread(); line < GSYNC_RELAY_LINES && arrived; line += lanes) {
            // The blocks that add to counter `line`: those whose index is `line` modulo the count.
            const unsigned int adders = blocks / GSYNC_RELAY_LINES + (line < blocks % GSYNC_RELAY_LINES ? 1u : 0u);
            arrived = gsync_reached(gsync_load_acquire(counters + line * GSYNC_LINE_WORDS), phase * adders);
        }
        if (__all_sync(mask, arrived)) return true;
        const unsigned int quit = gsync_linear_thread() == 0 && gsync_give_up(watch);
        if (__shfl_sync(mask, quit, 0) != 0u) return false;
    }
}

// The barrier, run by the first warp; false when the wait was abandoned.
__device__ __forceinline__ bool gsync_relay_first_warp(gsync_barrier_t& barrier, gsync_status_t* gsync_status) {
    unsigned int* counters = barrier.state + GSYNC_RELAY_ARRIVALS;
    unsigned long long* flag = gsync_slot(barrier.state, GSYNC_RELAY_FLAG_SLOT + barrier.group);
    const unsigned long long tag = barrier.launch | barrier.phase;
    if (gsync_linear_thread() == 0) gsync_add_release(counters + (gsync_linear_block() % GSYNC_RELAY_LINES) * GSYNC_LINE_WORDS, 1u);
    gsync_watch_t watch = gsync_watch(barrier.state, gsync_status, barrier.phase);
    if (!barrier.leads) return gsync_linear_thread() != 0 || gsync_wait_for_tag(flag, tag, watch);
    if (!gsync_relay_wait_all(counters, barrier.phase, watch)) return false;
    __syncwarp(gsync_first_warp_mask());
    if (gsync_linear_thread() == 0) gsync_store_release(flag, tag);
    return true;
}

__device__ __forceinline__ void gsync_grid_sync(gsync_barrier_t& barrier, gsync_status_t* gsync_status) {
    barrier.phase += 1u;
    gsync_sync_block();
    bool gave_up = false;
    if (gsync_linear_thread() < 32u) gave_up = !gsync_relay_first_warp(barrier, gsync_status);
    if (gsync_sync_block_any(gave_up)) gsync_leave();
}
// ---- end of grid barrier --------------------------------------------------------------
