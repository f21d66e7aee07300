// ---- grid barrier: ULFS, unlimited lock-free (the paper's Algorithm 4) ------------------
// LFS on a tree, so that any number of blocks can synchronize. Level 0 has one node per
// block. Consecutive nodes of a level form groups of GSYNC_ULFS_FANOUT (the block size);
// each group is one node of the level above, played by the group's first node, until a
// level has a single node, the root (block 0). Each level with more than one node has an
// Arrayin and an Arrayout array, one flag slot per node. With N blocks of B threads the tree
// has ceil(log_B N) + 1 levels; for N <= B it is exactly LFS.
//
// Arrivals flow up: a block that leads its group at a level waits, one thread per member,
// for the members' Arrayin slots, then stands for the group one level up. At the first level
// where it does not lead, thread 0 writes its Arrayin slot and waits for its Arrayout slot.
// Releases flow down: once released (or, for the root, once everything has arrived), the
// block writes the Arrayout slots of the groups it led, the highest level first.
//
// Why this is a correct barrier (see the memory-order steps in the shared code above):
// - Up: a node's Arrayin slot is written with release after gsync_sync_block_any() has ordered
//   its block after all the gathering it did, so the release covers the writes of its whole
//   subtree; gathering threads acquire the members' slots. By induction the root has
//   acquired every block's writes once it passes its last gathering gsync_sync_block_any().
// - Down: a released block has acquired everything the root had (thread 0's ld.acquire,
//   then gsync_sync_block_any()); its threads then write the Arrayout slots of its members after
//   a fence.acq_rel, which makes each of those strong stores a release covering all of it.
// - Reuse: slot tags are (launch sequence << 32) | phase, compared for equality, as in LFS:
//   each slot has one writer and one reader, and a new tag is written only after the reader
//   consumed the previous one, so no tag is missed and stale launches never match.
// - Spinning: one thread per block, except while gathering, where each gathering thread
//   polls a different member's slot and the lanes of a warp poll in step
//   (gsync_warp_wait_for_tags), leaving together once every one has seen its member.

// One gathering thread per member; at least 2 so that the tree shrinks even with one
// thread per block (that thread then gathers its member itself).
#define GSYNC_ULFS_FANOUT (GSYNC_BLOCK_SIZE < 2 ? 2u : (unsigned int)GSYNC_BLOCK_SIZE)

struct gsync_barrier_t {
    unsigned int* state;
    unsigned long long launch;  // (launch sequence << 32), or'ed with the phase to make tags
    unsigned int phase;         // grid_sync() calls so far
};

// One level of the tree, seen from the calling block.
struct gsync_ulfs_level_t {
    unsigned long long* arrived;   // Arrayin: a slot per node
    unsigned long long* released;  // Arrayout: a slot per node
    unsigned int nodes;            // nodes at this level
    unsigned int node;             // this block's node, while it is one of this level's nodes
};

// Level 0: the slots start right after the header, Arrayin then Arrayout.
__device__ __forceinline__ gsync_ulfs_level_t gsync_ulfs_leaves(unsigned int* state) {
    gsync_ulfs_level_t level;
    level.nodes = gsync_grid_blocks();
    level.node = gsync_linear_block();
    level.arrived = gsync_slot(state, 0u);
    level.released = level.arrived + (unsigned long long)GSYNC_LINE_SLOTS * level.nodes;
    return level;
}

// The level above `level`, whose arrays follow `level`'s.
__device__ __forceinline__ gsync_ulfs_level_t gsync_ulfs_parent(gsync_ulfs_level_t level) {
    gsync_ulfs_level_t parent;
    parent.nodes = (level.nodes + GSYNC_ULFS_FANOUT - 1u) / GSYNC_ULFS_FANOUT;
    parent.node = level.node / GSYNC_ULFS_FANOUT;
    parent.arrived = level.released + (unsigned long long)GSYNC_LINE_SLOTS * level.nodes;
    parent.released = parent.arrived + (unsigned long long)GSYNC_LINE_SLOTS * parent.nodes;
    return parent;
}

__device__ __forceinline__ gsync_ulfs_level_t gsync_ulfs_level(unsigned int* state, unsigned int depth) {
    gsync_ulfs_level_t level = gsync_ulfs_leaves(state);
    for (unsigned int d = 0u; d < depth; ++d) level = gsync_ulfs_parent(level);
    return level;
}

// Nodes in the group `level.node` leads, itself included.
__device__ __forceinline__ unsigned int gsync_ulfs_members(gsync_ulfs_level_t level) {
    const unsigned int rest = level.nodes - level.node;
    return rest < GSYNC_ULFS_FANOUT ? rest : GSYNC_ULFS_FANOUT;
}

__device__ __forceinline__ gsync_barrier_t gsync_barrier_begin(unsigned int* gsync_barrier_state) {
    gsync_barrier_t barrier = {gsync_barrier_state, gsync_launch_tag(gsync_barrier_state), 0u};
    return barrier;
}

__device__ __forceinline__ void gsync_grid_sync(gsync_barrier_t& barrier, gsync_status_t* gsync_status) {
    barrier.phase += 1u;
    const unsigned long long tag = barrier.launch | barrier.phase;
    gsync_sync_block();
    bool gave_up = false;
    // Up: gather the group this block leads, level after level.
    gsync_ulfs_level_t level = gsync_ulfs_leaves(barrier.state);
    unsigned int led = 0u;  // levels at which this block led a group
    while (level.nodes > 1u && level.node % GSYNC_ULFS_FANOUT == 0u) {
        const unsigned int members = gsync_ulfs_members(level);
        gsync_watch_t watch = gsync_watch(barrier.state, gsync_status, barrier.phase);
        // Member 0 is this block. With fan-out = block size each thread has one member and
        // the warps that hold members gather together; the stride only serves one-thread
        // blocks.
        if (gsync_block_threads() == 1u) {
            if (members > 1u) gave_up = !gsync_wait_for_tag(level.arrived + GSYNC_LINE_SLOTS * (level.node + 1u), tag, watch);
        } else if (gsync_linear_thread() < ((members + 31u) & ~31u)) {
            const unsigned int m = gsync_linear_thread();
            const bool mine = m != 0u && m < members;
            gave_up = !gsync_warp_wait_for_tags(level.arrived + GSYNC_LINE_SLOTS * (level.node + (mine ? m : 0u)), mine, tag, watch);
        }
        if (gsync_sync_block_any(gave_up)) gsync_leave();
        level = gsync_ulfs_parent(level);
        led += 1u;
    }
    // A member at this level: announce the subtree and wait for its release.
    if (level.nodes > 1u) {
        if (gsync_linear_thread() == 0) {
            gsync_store_release(level.arrived + GSYNC_LINE_SLOTS * level.node, tag);
            gsync_watch_t watch = gsync_watch(barrier.state, gsync_status, barrier.phase);
            gave_up = !gsync_wait_for_tag(level.released + GSYNC_LINE_SLOTS * level.node, tag, watch);
        }
        if (gsync_sync_block_any(gave_up)) gsync_leave();
    }
    // Down: release the groups this block led, highest first so that the widest subtrees
    // start releasing earliest.
    bool fenced = false;
    for (unsigned int depth = led; depth-- > 0u;) {
        const gsync_ulfs_level_t group = gsync_ulfs_level(barrier.state, depth);
        const unsigned int members = gsync_ulfs_members(group);
        for (unsigned int m = gsync_linear_thread(); m < members; m += gsync_block_threads()) {
            if (m == 0u) continue;
            if (!fenced) {
                gsync_fence_acq_rel();
                fenced = true;
            }
            gsync_store_relaxed(group.released + GSYNC_LINE_SLOTS * (group.node + m), tag);
        }
    }
}
// ---- end of grid barrier --------------------------------------------------------------
