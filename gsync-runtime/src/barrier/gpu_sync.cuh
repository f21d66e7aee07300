// ---- gpu_sync(): a grid barrier over the blocks of this GPU ---------------------------------
// The barrier fragment's own grid barrier under a name of its own. On a PE of a team,
// span.cuh (which follows) makes every gsync_grid_sync() of the kernel body wait for every
// PE; gsync_gpu_sync() keeps waiting for this GPU's blocks only, with the fragment's ordering
// at GPU scope: every write a block of this GPU made before it is visible after it to every
// block of this GPU. Writes that other PEs make into this GPU's memory are not ordered by it
// (a signal or a grid_sync() orders them). Outside a team both are the same barrier.
__device__ __forceinline__ void gsync_gpu_sync(gsync_barrier_t& barrier, gsync_status_t* gsync_status) {
    gsync_grid_sync(barrier, gsync_status);
}
// ---- end of gpu_sync() ----------------------------------------------------------------------
