// ---- spanning barrier: grid_sync() across the PEs (GPUs) of a team ------------------------
// Compiled into a kernel that a PE of a team launches, after the barrier fragment: every
// grid_sync() of the kernel body becomes one hierarchical barrier over every block of every
// PE, in place of the fragment's (whose gsync_barrier_begin and launch mode stay):
//   1. arrival on this GPU: thread 0 of each block adds 1 to this PE's arrival counter;
//   2. the block whose addition completes the count crosses: it tells every other PE that
//      this one arrived, then waits until every other PE has told it the same;
//   3. it resets the counter and releases this PE's blocks by advancing the generation, which
//      the other blocks' thread 0 polls.
// The crossing stores this PE's crossing count into its slot of every other PE's `arrivals`
// (through the peer's mapping of the symmetric heap) and polls the others' slots of its own.
// Every PE makes the same crossings in the same order (every block of every PE reaches the
// same grid_sync() calls, which the kernel's uniformity rules ensure), so the counts agree and
// only grow: a slot at or past this crossing's count means that PE has arrived.
//
// Why every write made before grid_sync() by any thread of any PE is visible after it to every
// thread of every PE (causality order in the PTX memory model is transitive through CTA
// barriers and morally strong release/acquire pairs):
//   - Arrival, as in LBS: gsync_sync_block() orders the block's writes before its thread 0,
//     whose atom.acq_rel.gpu addition releases them; the crossing block's addition, which
//     completes the count, acquires every block's release (observation runs through the
//     read-modify-writes of one word).
//   - Crossing: fence.acq_rel.sys followed by st.relaxed.sys is a release at system scope,
//     cumulative over everything the crossing thread has observed: the whole PE's writes,
//     those to peers' memory (put) included. Each peer's crossing thread reads the count with
//     ld.relaxed.sys and then fence.acq_rel.sys, an acquire at system scope.
//   - Release: st.release.gpu of the generation, read by ld.acquire.gpu in every other
//     block's thread 0, and gsync_sync_block() hands it to the rest of its block.
// Progress: each PE's grid is co-resident (refused otherwise, on every PE, before any
// launches), so every PE reaches every crossing unless one failed or never launched. A wait
// gives up after the launch's watchdog (the header's barrier limit, written on a team whatever
// the barrier; 0 = never) or once the launch's deadline has passed: the crossing records
// GSYNC_PE_TIMEOUT naming the PE it waited for, a block waiting on its GPU records
// GSYNC_BARRIER_TIMEOUT naming itself, the deadline GSYNC_DEADLINE_EXCEEDED; a wait ended by
// another's abort records nothing of its own. Every give-up raises the abort flag, and every
// block of the PE leaves at its next check or barrier. Afterwards the PEs' crossing counts no
// longer agree: the runtime refuses every later launch of the team (Error::TeamBroken).
#define GSYNC_TEAM_CROSSINGS GSYNC_MAX_PES          // arrivals[]: this PE's crossing count
#define GSYNC_TEAM_COUNTER (GSYNC_MAX_PES + 16u)     // arrivals[]: this PE's arrival counter (u32), a line of its own
#define GSYNC_TEAM_GENERATION (GSYNC_MAX_PES + 32u)  // arrivals[]: this PE's generation (u32), a line of its own
#define GSYNC_TEAM_CROSSING (GSYNC_MAX_PES + 40u)    // arrivals[]: the generation being crossed to (u32), same line
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

// Step 2: false when it gave up.
__device__ __noinline__ bool gsync_team_cross(unsigned int* state, gsync_status_t* status, unsigned int phase) {
    unsigned long long* arrivals = gsync_team.arrivals;
    const unsigned long long count = arrivals[GSYNC_TEAM_CROSSINGS] + 1ull;
    arrivals[GSYNC_TEAM_CROSSINGS] = count;
    asm volatile("fence.acq_rel.sys;" ::: "memory");
    for (unsigned int pe = 0u; pe < gsync_team.n_pes; ++pe) {
        if (pe == gsync_team.pe) continue;
        unsigned long long* slot = gsync::on_pe(&arrivals[gsync_team.pe], pe);
        asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(slot), "l"(count) : "memory");
    }
    gsync_team_wait_t wait = {0u, 0ull};
    for (unsigned int pe = 0u; pe < gsync_team.n_pes; ++pe) {
        if (pe == gsync_team.pe) continue;
        for (;;) {
            unsigned long long seen;
            asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(seen) : "l"(&arrivals[pe]) : "memory");
            if (seen >= count) break;
            const gsync_team_verdict verdict = gsync_team_check(wait, state);
            if (verdict != GSYNC_TEAM_WAIT) {
                gsync_team_give_up(verdict, state, status, phase, pe);
                return false;
            }
        }
    }
    asm volatile("fence.acq_rel.sys;" ::: "memory");
    return true;
}

__device__ __forceinline__ void gsync_spanning_grid_sync(gsync_status_t* status, unsigned int* state, unsigned int phase) {
    unsigned int* counter = (unsigned int*)(gsync_team.arrivals + GSYNC_TEAM_COUNTER);
    unsigned int* generation = (unsigned int*)(gsync_team.arrivals + GSYNC_TEAM_GENERATION);
    unsigned int* crossing = (unsigned int*)(gsync_team.arrivals + GSYNC_TEAM_CROSSING);
    gsync_sync_block();
    bool gave_up = false;
    if (gsync_linear_thread() == 0u) {
        unsigned int seen;
        asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(seen) : "l"(generation) : "memory");
        unsigned int before;
        asm volatile("atom.acq_rel.gpu.add.u32 %0, [%1], 1;" : "=r"(before) : "l"(counter) : "memory");
        if (before + 1u == gsync_grid_blocks()) {
            *(volatile unsigned int*)counter = 0u;
            // The waiting blocks leave the blame for a late PE to the crossing, whose wait is
            // bounded by the same watchdog.
            asm volatile("st.relaxed.gpu.u32 [%0], %1;" ::"l"(crossing), "r"(seen + 1u) : "memory");
            gave_up = !gsync_team_cross(state, status, phase);
            asm volatile("st.release.gpu.u32 [%0], %1;" ::"l"(generation), "r"(seen + 1u) : "memory");
        } else {
            gsync_team_wait_t wait = {0u, 0ull};
            for (;;) {
                unsigned int now;
                asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(generation) : "memory");
                if (now != seen) break;
                gsync_team_verdict verdict = gsync_team_check(wait, state);
                if (verdict == GSYNC_TEAM_TIMED_OUT) {
                    unsigned int crossed_to;
                    asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(crossed_to) : "l"(crossing) : "memory");
                    if (crossed_to == seen + 1u) verdict = GSYNC_TEAM_WAIT;  // every block is here
                }
                if (verdict != GSYNC_TEAM_WAIT) {
                    gsync_team_give_up(verdict, state, status, phase, GSYNC_MAX_PES);
                    gave_up = true;
                    break;
                }
            }
        }
        if (!gave_up) {
            unsigned int aborted;
            asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(aborted) : "l"(state + GSYNC_TEAM_ABORT_WORD) : "memory");
            gave_up = aborted != 0u;
        }
    }
    // The block leaves together when its thread 0 gave up or saw that the PE did.
    if (gsync_sync_block_any(gave_up)) asm volatile("exit;" ::: "memory");
}
// In the kernel body, which names its state `gsync_barrier_state` and counts its phases in
// `gsync_phase`, every grid_sync() is the spanning one.
#define gsync_grid_sync(barrier, status) gsync_spanning_grid_sync(status, gsync_barrier_state, gsync_phase + 1u)
// ---- end of spanning barrier ---------------------------------------------------------------
