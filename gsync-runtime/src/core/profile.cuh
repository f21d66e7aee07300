// ---- per-phase profile (Launch::profile) --------------------------------------------
// Compiled in only for a profiled launch (GSYNC_PROFILE); otherwise no_profile.cuh defines
// the same hooks as nothing. The fused kernel takes two more parameters, the record buffer
// and its capacity, and thread 0 of each block writes the GPU's global timer (ns) into the
// block's records (layout in core/profile.rs):
//   word 0: grid_sync() calls passed, recorded or not (written at the end)
//   word 1: start, word 2: end
//   word 3 + 2k: arrival at grid_sync() number k, word 4 + 2k: its leave
// A block records at most `capacity` grid_sync() calls and only counts the rest, so that a
// long kernel never writes past its region and the host sees the profile is truncated.
//
// The arrival is taken after a block barrier, so it is the time the block's slowest thread
// finished the phase; the leave as thread 0 comes out of the grid barrier.

#define GSYNC_PROFILE_HEADER_WORDS 3ull
#define GSYNC_PROFILE_PASSED_WORD 0u
#define GSYNC_PROFILE_START_WORD 1u
#define GSYNC_PROFILE_END_WORD 2u

// One block's recording; thread 0 alone writes the records.
struct gsync_profile_t {
    u64* records;  // the block's region
    u32 capacity;  // grid_sync() calls the region has room for
    u64 passed;    // grid_sync() calls passed so far
};

// Nanoseconds of the GPU's global timer.
__device__ __forceinline__ u64 gsync_profile_clock() {
    u64 now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)::"memory");
    return now;
}

__device__ __forceinline__ gsync_profile_t gsync_profile_begin(u64* records, u32 capacity) {
    gsync_profile_t profile;
    profile.records = records + (u64)gsync_linear_block() * (GSYNC_PROFILE_HEADER_WORDS + 2ull * capacity);
    profile.capacity = capacity;
    profile.passed = 0ull;
    if (gsync_linear_thread() == 0u) profile.records[GSYNC_PROFILE_START_WORD] = gsync_profile_clock();
    return profile;
}

// Before a grid_sync(): every thread of the block has finished the phase.
__device__ __forceinline__ void gsync_profile_arrive(const gsync_profile_t& profile) {
    gsync_sync_block();
    if (gsync_linear_thread() == 0u && profile.passed < profile.capacity) {
        profile.records[GSYNC_PROFILE_HEADER_WORDS + 2ull * profile.passed] = gsync_profile_clock();
    }
}

// After a grid_sync(): the barrier let the block go.
__device__ __forceinline__ void gsync_profile_leave(gsync_profile_t& profile) {
    if (gsync_linear_thread() == 0u && profile.passed < profile.capacity) {
        profile.records[GSYNC_PROFILE_HEADER_WORDS + 2ull * profile.passed + 1ull] = gsync_profile_clock();
    }
    profile.passed += 1ull;
}

// The end of a kernel with grid_sync(), which every thread reaches (such a kernel has no
// `return`).
__device__ __forceinline__ void gsync_profile_finish(const gsync_profile_t& profile) {
    gsync_sync_block();
    if (gsync_linear_thread() == 0u) {
        profile.records[GSYNC_PROFILE_END_WORD] = gsync_profile_clock();
        profile.records[GSYNC_PROFILE_PASSED_WORD] = profile.passed;
    }
}

// The end of one thread of a kernel without grid_sync(), whose threads may `return` at
// different times: the block's end is its last thread's.
__device__ __forceinline__ void gsync_profile_exit(const gsync_profile_t& profile) {
    atomicMax(profile.records + GSYNC_PROFILE_END_WORD, gsync_profile_clock());
}

#define GSYNC_PROFILE_PARAMETERS , u64* __restrict__ gsync_profile_records, const u32 gsync_profile_capacity
#define GSYNC_PROFILE_BEGIN() gsync_profile_t gsync_profile = gsync_profile_begin(gsync_profile_records, gsync_profile_capacity)
#define GSYNC_PROFILE_ARRIVE() gsync_profile_arrive(gsync_profile)
#define GSYNC_PROFILE_LEAVE() gsync_profile_leave(gsync_profile)
#define GSYNC_PROFILE_END() gsync_profile_finish(gsync_profile)
#define GSYNC_PROFILE_EXIT() gsync_profile_exit(gsync_profile)
// ---- end of per-phase profile -------------------------------------------------------
