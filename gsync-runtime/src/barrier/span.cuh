// ---- spanning barrier: grid_sync() across the PEs (GPUs) of a team ------------------------
// Compiled into a kernel that a PE of a team launches, after the barrier fragment, whose
// gsync_grid_sync() it wraps: each grid_sync() of the kernel body becomes
//   1. the fragment's barrier on this GPU: every block of this PE has arrived;
//   2. the crossing, by thread 0 of block 0 alone: it tells every PE that this one arrived,
//      then waits until every PE has told it the same;
//   3. the fragment's barrier again, which releases this PE's blocks.
// The crossing is a store of this PE's crossing count into its slot of every PE's `arrivals`
// (through the peer's mapping of the symmetric heap), and a poll of every slot of its own.
// Every PE makes the same crossings in the same order (every block of every PE reaches the same
// grid_sync() calls, which the kernel's uniformity rules ensure), so the counts agree and only
// grow: a slot at or past this crossing's count means that PE has arrived.
//
// Why every write made before grid_sync() by any thread of any PE is visible after it to every
// thread of every PE (causality order in the PTX memory model is transitive across scopes
// through morally strong release/acquire pairs and CTA barriers):
//   - Step 1 orders every write of this PE's blocks before the crossing thread's next
//     operation (the fragment's own argument, at gpu scope).
//   - The crossing thread's fence.acq_rel.sys then makes its st.relaxed.sys of the count a
//     release at system scope, cumulative over everything it has observed: the whole PE's
//     writes, those to peers' memory (put) included.
//   - The peer's crossing thread reads the count with ld.acquire.sys, then passes step 3 on
//     its GPU, whose release/acquire hands what it acquired to every block of that PE.
// Progress: each PE's grid is co-resident (refused otherwise, on every PE, before any
// launches), so every PE reaches every crossing unless one failed or never launched. The poll
// then gives up after the launch's watchdog (the header's barrier limit, 0 = never), records
// GSYNC_PE_TIMEOUT naming the first PE that did not arrive, and raises the abort flag, after
// which the PE's blocks leave together at step 3 and later crossings give up at once.
#define GSYNC_TEAM_CROSSING_SLOT GSYNC_MAX_PES  // arrivals[]: this PE's crossing count
#define GSYNC_TEAM_POLLS_PER_CHECK 64u

__device__ __forceinline__ void gsync_store_sys(unsigned long long* slot, unsigned long long value) {
    asm volatile("fence.acq_rel.sys;\n\tst.relaxed.sys.u64 [%0], %1;" ::"l"(slot), "l"(value) : "memory");
}
__device__ __forceinline__ unsigned long long gsync_load_acquire_sys(const unsigned long long* slot) {
    unsigned long long value;
    asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(value) : "l"(slot) : "memory");
    return value;
}

// Records that PE `pe` did not arrive at grid_sync() number `phase`, and raises the abort flag.
__device__ __noinline__ void gsync_team_time_out(unsigned int* state, gsync_status_t* status, unsigned int pe, unsigned int phase) {
    if (atomicCAS(&status->code, GSYNC_OK, GSYNC_PE_TIMEOUT) == GSYNC_OK) {
        status->array = pe;
        status->phase = phase;
    }
    asm volatile("st.release.gpu.u32 [%0], %1;" ::"l"(state + 1u), "r"(1u) : "memory");
}

// Step 2: false when the crossing gave up (this one, or an earlier one of the launch).
__device__ __forceinline__ bool gsync_team_cross(unsigned int* state, gsync_status_t* status, unsigned int phase) {
    unsigned long long* arrivals = gsync_team.arrivals;
    unsigned int aborted;
    asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(aborted) : "l"(state + 1u) : "memory");
    if (aborted != 0u) return false;
    const unsigned long long count = arrivals[GSYNC_TEAM_CROSSING_SLOT] + 1ull;
    arrivals[GSYNC_TEAM_CROSSING_SLOT] = count;
    for (unsigned int pe = 0u; pe < gsync_team.n_pes; ++pe) {
        gsync_store_sys(gsync::on_pe(&arrivals[gsync_team.pe], pe), count);
    }
    const unsigned long long limit = *(const volatile unsigned long long*)(state + 2u);
    unsigned long long since = 0ull;
    unsigned int polls = 0u;
    for (unsigned int pe = 0u; pe < gsync_team.n_pes; ++pe) {
        while (gsync_load_acquire_sys(&arrivals[pe]) < count) {
            if (++polls % GSYNC_TEAM_POLLS_PER_CHECK != 0u || limit == 0ull) continue;
            unsigned long long now;
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)::"memory");
            if (since == 0ull) {
                since = now;
            } else if (now - since >= limit) {
                gsync_team_time_out(state, status, pe, phase);
                return false;
            }
        }
    }
    return true;
}

__device__ __forceinline__ void gsync_spanning_grid_sync(
    gsync_barrier_t& barrier, gsync_status_t* gsync_status, unsigned int* state, unsigned int phase) {
    gsync_grid_sync(barrier, gsync_status);
    if (gsync_linear_block() == 0u && gsync_linear_thread() == 0u) {
        gsync_team_cross(state, gsync_status, phase);
    }
    gsync_grid_sync(barrier, gsync_status);
    // A crossing that gave up raised the abort flag before step 3; every block reads it after,
    // alike, and its threads end together.
    unsigned int aborted = 0u;
    if (gsync_linear_thread() == 0u) {
        asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(aborted) : "l"(state + 1u) : "memory");
    }
    if (gsync_sync_block_any(aborted != 0u)) asm volatile("exit;" ::: "memory");
}
// In the kernel body, which names its state `gsync_barrier_state` and counts its phases in
// `gsync_phase`, every grid_sync() is the spanning one.
#define gsync_grid_sync(barrier, status) \
    gsync_spanning_grid_sync(barrier, status, gsync_barrier_state, gsync_phase + 1u)
// ---- end of spanning barrier ---------------------------------------------------------------
