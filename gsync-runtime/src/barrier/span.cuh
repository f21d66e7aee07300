// ---- spanning barrier: grid_sync() across the PEs (GPUs) of a team ------------------------
// Compiled into a kernel that a PE of a team launches, after the barrier fragment: every
// grid_sync() of the kernel body becomes one hierarchical barrier over every block of every
// PE, in place of the fragment's (whose gsync_barrier_begin and launch mode stay):
//   1. arrival on this GPU: thread 0 of each block adds 1 to this PE's arrival counter;
//   2. the block whose addition completes the count announces it: it tells every other PE
//      that this one arrived, resets the counter and releases this PE's blocks by setting the
//      generation to the crossing's count, which the other blocks' thread 0 polls; it does
//      not wait for the other PEs before it releases them;
//   3. every block's thread 0, once released, waits until every other PE has announced the
//      same crossing, polling the slots in its own GPU's memory that the other PEs write.
// Waiting in every block (step 3) rather than in the announcing block, which would then
// release the others, takes one hop off the critical path: on 2 H200s a boundary of 132
// blocks costs about 1 µs less (docs/barriers.md).
// The announcement stores this PE's crossing count into its slot of every other PE's
// `arrivals` (through the peer's mapping of the symmetric heap). Every PE makes the same
// crossings in the same order (every block of every PE reaches the same grid_sync() calls,
// which the kernel's uniformity rules ensure; a split kernel's segments cross the same way,
// span_segments.cuh), so the counts agree and only grow: a slot at or past this crossing's
// count means that PE has arrived.
//
// Why every write made before grid_sync() by any thread of any PE is visible after it to every
// thread of every PE (causality order in the PTX memory model is transitive through CTA
// barriers and morally strong release/acquire pairs):
//   - Arrival, as in LBS: gsync_sync_block() orders the block's writes before its thread 0,
//     whose atom.acq_rel.gpu addition releases them; the announcing block's addition, which
//     completes the count, acquires every block's release (observation runs through the
//     read-modify-writes of one word).
//   - Announcement: fence.acq_rel.sys followed by st.relaxed.sys is a release at system
//     scope, cumulative over everything the announcing thread has observed: the whole PE's
//     writes, those to peers' memory (put) included.
//   - This PE's writes: st.release.gpu of the generation, read by ld.acquire.gpu in every
//     other block's thread 0.
//   - Every other PE's writes: each block's thread 0 reads each peer's slot with
//     ld.acquire.sys, an acquire at system scope that synchronizes with that peer's
//     announcement. gsync_sync_block() then hands both to the rest of its block.
// Progress: each PE's grid is co-resident (refused otherwise, on every PE, before any
// launches), so every PE reaches every crossing unless one failed or never launched. A wait
// gives up after the launch's watchdog (the header's barrier limit, written on a team whatever
// the barrier; 0 = never) or once the launch's deadline has passed: a wait for a PE records
// GSYNC_PE_TIMEOUT naming the PE it waited for, a block waiting for this GPU's blocks records
// GSYNC_BARRIER_TIMEOUT naming itself, the deadline GSYNC_DEADLINE_EXCEEDED; a wait ended by
// another's abort records nothing of its own. Every give-up raises the abort flag, and every
// block of the PE leaves at its next check or barrier. Afterwards the PEs' crossing counts no
// longer agree: the runtime refuses every later launch of the team (Error::TeamBroken).
#define GSYNC_TEAM_CROSSINGS GSYNC_MAX_PES          // arrivals[]: this PE's crossing count
#define GSYNC_TEAM_COUNTER (GSYNC_MAX_PES + 16u)     // arrivals[]: this PE's arrival counter (u32), a line of its own
#define GSYNC_TEAM_GENERATION (GSYNC_MAX_PES + 32u)  // arrivals[]: this PE's generation, a line of its own
#define GSYNC_TEAM_POLLS_PER_CHECK 64u
#define GSYNC_TEAM_ABORT_WORD 1u    // the header's abort flag
#define GSYNC_TEAM_TIMEOUT_WORD 2u  // the header's barrier watchdog, ns (u64)

// The watchdog of one wait. Checked every GSYNC_TEAM_POLLS_PER_CHECK polls: another wait of
// the PE gave up (the abort flag), the launch's deadline passed, or this wait has run longer
// than the launch's watchdog limit.
enum gsync_team_verdict { GSYNC_TEAM_WAIT, GSYNC_TEAM_ABORTED, GSYNC_TEAM_DEADLINE, GSYNC_TEAM_TIMED_OUT };
struct gsync_team_wait_t {
    unsigned int polls;
    unsigned long long since;
};
__device__ __forceinline__ gsync_team_verdict gsync_team_check(gsync_team_wait_t& wait, unsigned int* state) {
    if (++wait.polls % GSYNC_TEAM_POLLS_PER_CHECK != 0u) return GSYNC_TEAM_WAIT;
    unsigned int aborted;
    asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(aborted) : "l"(state + GSYNC_TEAM_ABORT_WORD) : "memory");
    if (aborted != 0u) return GSYNC_TEAM_ABORTED;
    if (gsync::deadline_passed(state)) return GSYNC_TEAM_DEADLINE;
    const unsigned long long limit = *(const volatile unsigned long long*)(state + GSYNC_TEAM_TIMEOUT_WORD);
    if (limit == 0ull) return GSYNC_TEAM_WAIT;
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)::"memory");
    if (wait.since == 0ull) wait.since = now;
    return now - wait.since >= limit ? GSYNC_TEAM_TIMED_OUT : GSYNC_TEAM_WAIT;
}
// Gives a wait up: records why, unless another wait's abort ended it (that one recorded its
// own reason), and raises the abort flag. `pe` is the PE the crossing waited for, or
// GSYNC_MAX_PES for the wait on this GPU's blocks.
__device__ __noinline__ void gsync_team_give_up(
    gsync_team_verdict verdict, unsigned int* state, gsync_status_t* status, unsigned int phase, unsigned int pe) {
    if (verdict == GSYNC_TEAM_DEADLINE) {
        gsync::record_deadline(status, state, phase - 1u, 0u);
    } else if (verdict == GSYNC_TEAM_TIMED_OUT) {
        const unsigned int code = pe < GSYNC_MAX_PES ? GSYNC_PE_TIMEOUT : GSYNC_BARRIER_TIMEOUT;
        if (atomicCAS(&status->code, GSYNC_OK, code) == GSYNC_OK) {
            status->array = pe < GSYNC_MAX_PES ? pe : gsync_linear_block();
            status->phase = phase;
        }
    }
    asm volatile("st.release.gpu.u32 [%0], %1;" ::"l"(state + GSYNC_TEAM_ABORT_WORD), "r"(1u) : "memory");
}

// Step 2: this PE's next crossing, announced to every other PE; returns its count. One thread
// per PE and crossing.
__device__ __forceinline__ unsigned long long gsync_team_announce() {
    unsigned long long* arrivals = gsync_team.arrivals;
    const unsigned long long count = arrivals[GSYNC_TEAM_CROSSINGS] + 1ull;
    arrivals[GSYNC_TEAM_CROSSINGS] = count;
    // A team of one has no peer to release to, and a fence at system scope costs microseconds
    // after a phase that wrote much.
    if (gsync_team.n_pes == 1u) return count;
    asm volatile("fence.acq_rel.sys;" ::: "memory");
    for (unsigned int pe = 0u; pe < gsync_team.n_pes; ++pe) {
        if (pe == gsync_team.pe) continue;
        unsigned long long* slot = gsync::on_pe(&arrivals[gsync_team.pe], pe);
        asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(slot), "l"(count) : "memory");
    }
    return count;
}

// Step 3: waits until every other PE has announced crossing `count`, acquiring what each
// released; false when it gave up.
__device__ __noinline__ bool gsync_team_await(
    unsigned long long count, unsigned int* state, gsync_status_t* status, unsigned int phase) {
    const unsigned long long* arrivals = gsync_team.arrivals;
    gsync_team_wait_t wait = {0u, 0ull};
    for (unsigned int pe = 0u; pe < gsync_team.n_pes; ++pe) {
        if (pe == gsync_team.pe) continue;
        for (;;) {
            unsigned long long seen;
            asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(seen) : "l"(&arrivals[pe]) : "memory");
            if (seen >= count) break;
            const gsync_team_verdict verdict = gsync_team_check(wait, state);
            if (verdict != GSYNC_TEAM_WAIT) {
                gsync_team_give_up(verdict, state, status, phase, pe);
                return false;
            }
        }
    }
    return true;
}

// Step 2, in every block but the announcing one: waits until the generation, `seen` before
// the block arrived, moves on, acquiring what the announcing thread released; returns the
// new generation (the crossing's count), or 0 when it gave up.
__device__ __noinline__ unsigned long long gsync_team_released(
    const unsigned long long* generation, unsigned long long seen, unsigned int* state, gsync_status_t* status,
    unsigned int phase) {
    gsync_team_wait_t wait = {0u, 0ull};
    for (;;) {
        unsigned long long now;
        asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(now) : "l"(generation) : "memory");
        if (now != seen) return now;
        const gsync_team_verdict verdict = gsync_team_check(wait, state);
        if (verdict != GSYNC_TEAM_WAIT) {
            gsync_team_give_up(verdict, state, status, phase, GSYNC_MAX_PES);
            return 0ull;
        }
    }
}

// Steps 2 and 3 by one thread, for a crossing no other thread of the PE waits on (between
// the segments of a split kernel); false when it gave up.
__device__ __noinline__ bool gsync_team_cross(unsigned int* state, gsync_status_t* status, unsigned int phase) {
    return gsync_team_await(gsync_team_announce(), state, status, phase);
}

__device__ __forceinline__ void gsync_spanning_grid_sync(gsync_status_t* status, unsigned int* state, unsigned int phase) {
    unsigned int* counter = (unsigned int*)(gsync_team.arrivals + GSYNC_TEAM_COUNTER);
    unsigned long long* generation = gsync_team.arrivals + GSYNC_TEAM_GENERATION;
    gsync_sync_block();
    bool gave_up = false;
    if (gsync_linear_thread() == 0u) {
        unsigned long long seen;
        asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(seen) : "l"(generation) : "memory");
        unsigned int before;
        asm volatile("atom.acq_rel.gpu.add.u32 %0, [%1], 1;" : "=r"(before) : "l"(counter) : "memory");
        unsigned long long count;
        if (before + 1u == gsync_grid_blocks()) {
            *(volatile unsigned int*)counter = 0u;
            count = gsync_team_announce();
            asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(generation), "l"(count) : "memory");
        } else {
            // The generation is the crossing's count: it differs from every earlier one.
            count = gsync_team_released(generation, seen, state, status, phase);
            gave_up = count == 0ull;
        }
        // A block of this PE that gives up raises the abort flag, which the next wait sees.
        if (!gave_up) gave_up = !gsync_team_await(count, state, status, phase);
    }
    // The block leaves together when its thread 0 gave up.
    if (gsync_sync_block_any(gave_up)) asm volatile("exit;" ::: "memory");
}
// In the kernel body, which names its state `gsync_barrier_state` and counts its phases in
// `gsync_phase`, every grid_sync() is the spanning one.
#define gsync_grid_sync(barrier, status) gsync_spanning_grid_sync(status, gsync_barrier_state, gsync_phase + 1u)
// ---- end of spanning barrier ---------------------------------------------------------------
