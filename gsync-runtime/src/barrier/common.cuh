// ---- grid barriers: state layout, memory-order helpers, watchdog ----------------
// Shared by the software barriers (LBS, ILBS, LFS, ULFS); prepended to each one's fragment.
//
// Layout. The barrier state is an array of 128-byte lines. Line 0 is the per-launch header,
// which the host writes with one copy before every launch; the barrier's own words follow.
// Every hot word (a counter, a generation, a flag slot) has a line of its own, so that a
// block polling one word never shares a cache line with blocks writing another.
//
// Memory order. Every barrier here makes each write made before grid_sync() by any thread
// visible to every thread after it, with the same four steps:
//   1. gsync_sync_block(): CTA barrier operations synchronize with each other, so the block's
//      writes are ordered before the next operation of the thread that arrives for it.
//   2. That thread arrives with release semantics at gpu scope (st.release, red.release, or
//      fence.acq_rel before strong stores). Release is cumulative: it covers
//      the writes the thread has observed, which step 1 made include the whole block's.
//   3. A waiting thread spins with ld.acquire at gpu scope on the word the release wrote, or
//      on a counter that atomic additions carried it to (observation order runs through
//      atomic read-modify-writes).
//   4. gsync_sync_block_any(): the rest of the waiting block is ordered after the acquiring
//      thread.
// Causality order in the PTX memory model is transitive through CTA barriers and
// release/acquire pairs, so every write before step 1 in any block happens before every
// access after step 4 in every block. The paper's listings use volatile flags instead, which
// give no ordering for the data around them on today's GPUs.
//
// The acquire and release qualifiers need sm_70 or newer; CUDA 13 starts at sm_75.

// u32 words, and u64 flag slots, in one 128-byte line.
#define GSYNC_LINE_WORDS 32u
#define GSYNC_LINE_SLOTS 16u
// Header words (the host's LaunchHeader in barrier/layout.rs writes the same layout).
#define GSYNC_HEADER_SEQUENCE 0u  // u32: the launch's number, never 0
#define GSYNC_HEADER_ABORT 1u     // u32: 0, until a block gives up waiting
#define GSYNC_HEADER_TIMEOUT 2u   // u64 in words 2 and 3: watchdog limit in ns, 0 = off
#define GSYNC_HEADER_GROUPS 4u    // u32: ILBS group count
// A spinning thread checks the abort flag and the clock once every this many polls, so that
// the checks cost nothing next to the polls themselves.
#define GSYNC_POLLS_PER_CHECK 256u

__device__ __forceinline__ unsigned int gsync_load_relaxed(const unsigned int* word) {
    unsigned int value;
    asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(value) : "l"(word) : "memory");
    return value;
}
__device__ __forceinline__ unsigned int gsync_load_acquire(const unsigned int* word) {
    unsigned int value;
    asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(value) : "l"(word) : "memory");
    return value;
}
__device__ __forceinline__ unsigned long long gsync_load_acquire(const unsigned long long* slot) {
    unsigned long long value;
    asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(value) : "l"(slot) : "memory");
    return value;
}
__device__ __forceinline__ void gsync_store_relaxed(unsigned int* word, unsigned int value) {
    asm volatile("st.relaxed.gpu.u32 [%0], %1;" ::"l"(word), "r"(value) : "memory");
}
__device__ __forceinline__ void gsync_store_relaxed(unsigned long long* slot, unsigned long long value) {
    asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(slot), "l"(value) : "memory");
}
__device__ __forceinline__ void gsync_store_release(unsigned int* word, unsigned int value) {
    asm volatile("st.release.gpu.u32 [%0], %1;" ::"l"(word), "r"(value) : "memory");
}
__device__ __forceinline__ void gsync_store_release(unsigned long long* slot, unsigned long long value) {
    asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(slot), "l"(value) : "memory");
}
__device__ __forceinline__ void gsync_add_release(unsigned int* word, unsigned int value) {
    asm volatile("red.release.gpu.add.u32 [%0], %1;" ::"l"(word), "r"(value) : "memory");
}
// Adds `value` and returns the count before the addition. The acquire half lets the block
// that completes a count leave at once: it has read every earlier release addition.
__device__ __forceinline__ unsigned int gsync_fetch_add_acq_rel(unsigned int* word, unsigned int value) {
    unsigned int before;
    asm volatile("atom.acq_rel.gpu.add.u32 %0, [%1], %2;" : "=r"(before) : "l"(word), "r"(value) : "memory");
    return before;
}
// A fence.acq_rel followed by strong stores makes each of them a release.
__device__ __forceinline__ void gsync_fence_acq_rel() {
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
}
// Nanoseconds of the GPU's global timer.
__device__ __forceinline__ unsigned long long gsync_clock_ns() {
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)::"memory");
    return now;
}

// Ends the calling thread. Every thread of the block calls it together (the decision comes
// from gsync_sync_block_any), so no thread is left waiting at a CTA barrier for one that left.
__device__ __forceinline__ void gsync_leave() {
    asm volatile("exit;" ::: "memory");
}

// Flag slot `index` of the state: u64 slots, one per line, after the header line.
__device__ __forceinline__ unsigned long long* gsync_slot(unsigned int* state, unsigned int index) {
    return (unsigned long long*)(state + GSYNC_LINE_WORDS) + (unsigned long long)GSYNC_LINE_SLOTS * index;
}

// The launch's tag: flag values of this launch are (sequence << 32) | phase, so that values
// left by earlier launches, whose sequence differs, never match.
__device__ __forceinline__ unsigned long long gsync_launch_tag(const unsigned int* state) {
    return (unsigned long long)state[GSYNC_HEADER_SEQUENCE] << 32;
}

// What a spinning thread needs for the watchdog.
struct gsync_watch_t {
    unsigned int* state;
    gsync_status_t* status;
    unsigned int phase;         // 1-based count of the grid_sync() being waited in
    unsigned int polls;
    unsigned long long since;   // %globaltimer at the first check; 0 before it
};

__device__ __forceinline__ gsync_watch_t gsync_watch(unsigned int* state, gsync_status_t* status, unsigned int phase) {
    gsync_watch_t watch = {state, status, phase, 0u, 0ull};
    return watch;
}

// Records the timeout (the first fault of the launch wins) and raises the abort flag, so that
// every other waiting block gives up at its next check.
__device__ __noinline__ void gsync_time_out(unsigned int* state, gsync_status_t* status, unsigned int phase) {
    if (atomicCAS(&status->code, GSYNC_OK, GSYNC_BARRIER_TIMEOUT) == GSYNC_OK) {
        status->phase = phase;
        status->array = gsync_linear_block();  // the block that gave up
    }
    gsync_store_release(state + GSYNC_HEADER_ABORT, 1u);
}

// Called on every poll: true when the thread must stop waiting, because a block raised the
// abort flag, the launch's deadline has passed (recorded, and the abort flag raised: a grid
// waiting for blocks that wait for another PE's signal must stop too) or this thread has
// waited longer than the launch's limit.
__device__ __forceinline__ bool gsync_give_up(gsync_watch_t& watch) {
    if (++watch.polls % GSYNC_POLLS_PER_CHECK != 0u) return false;
    if (gsync_load_relaxed(watch.state + GSYNC_HEADER_ABORT) != 0u) return true;
    if (gsync::deadline_passed(watch.state)) {
        gsync::record_deadline(watch.status, watch.state, watch.phase - 1u, 0u);
        gsync_store_release(watch.state + GSYNC_HEADER_ABORT, 1u);
        return true;
    }
    const unsigned long long limit = *(const unsigned long long*)(watch.state + GSYNC_HEADER_TIMEOUT);
    if (limit == 0ull) return false;
    const unsigned long long now = gsync_clock_ns();
    if (watch.since == 0ull) {
        watch.since = now;
        return false;
    }
    if (now - watch.since < limit) return false;
    gsync_time_out(watch.state, watch.status, watch.phase);
    return true;
}

// Whether a count that only grows, modulo 2^32, has reached `goal`: counts of the same
// launch never run more than 2^31 ahead of a goal a waiter still waits for.
__device__ __forceinline__ bool gsync_reached(unsigned int count, unsigned int goal) {
    return count - goal < 0x80000000u;
}

// Spins until the growing count `*word` reaches `goal`; false when the wait was abandoned.
__device__ __forceinline__ bool gsync_wait_for_count(const unsigned int* word, unsigned int goal, gsync_watch_t& watch) {
    while (!gsync_reached(gsync_load_acquire(word), goal)) {
        if (gsync_give_up(watch)) return false;
    }
    return true;
}

// Arrives at a growing count with 1 and waits until it reaches `goal`; false when the wait
// was abandoned. The block whose addition completes the count does not poll: with a
// fire-and-forget addition it would have to read the count back, and that read queues at the
// counter's L2 slice behind the polls of every waiting block, on the barrier's critical path.
__device__ __forceinline__ bool gsync_arrive_and_wait(unsigned int* word, unsigned int goal, gsync_watch_t& watch) {
    if (gsync_fetch_add_acq_rel(word, 1u) + 1u == goal) return true;
    return gsync_wait_for_count(word, goal, watch);
}

// Spins until `*slot` holds `tag`; false when the wait was abandoned.
__device__ __forceinline__ bool gsync_wait_for_tag(const unsigned long long* slot, unsigned long long tag, gsync_watch_t& watch) {
    while (gsync_load_acquire(slot) != tag) {
        if (gsync_give_up(watch)) return false;
    }
    return true;
}
// The lanes of the calling warp that hold `mine` wait, together, until their own slot holds
// `tag`: the lanes stay converged, and a lane stops loading once it has seen its tag. The
// lowest lane keeps the watchdog for all of them, so that they give up together. False in
// every calling lane when the wait was abandoned.
__device__ __forceinline__ bool gsync_warp_wait_for_tags(const unsigned long long* slot, bool mine, unsigned long long tag, gsync_watch_t& watch) {
    const unsigned int lanes = __activemask();
    const bool keeps_watch = (lanes & ((1u << (gsync_linear_thread() % 32u)) - 1u)) == 0u;
    bool seen = !mine;
    while (true) {
        if (!seen) seen = gsync_load_acquire(slot) == tag;
        if (__all_sync(lanes, seen)) return true;
        if (__any_sync(lanes, keeps_watch && gsync_give_up(watch))) return false;
    }
}
// ---- end of shared barrier code --------------------------------------------------
