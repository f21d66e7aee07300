//! 2-D and 3-D launches and `BLOCK_SIZE`: kernels, CPU references and the checks the
//! emulator and GPU tests share.

use super::checks::{random_vec, rng};
use gsync::prelude::*;
use rand::Rng;

/// Transposes the `rows × cols` matrix `a` into `t` through a shared tile of one element per
/// thread, then back into `back` after a `grid_sync()`: blocks are square 2-D tiles, and
/// the grid covers `a` with them.
#[grid_phases]
pub fn transpose_twice(a: &[f32], t: &mut [f32], back: &mut [f32], rows: u32, cols: u32) {
    let mut tile = shared_array::<f32, BLOCK_SIZE>();
    let tx = thread_idx_x();
    let ty = thread_idx_y();
    let side = block_dim_x();
    // Phase 1: a (rows × cols) into t (cols × rows).
    let x = block_idx_x() * side + tx;
    let y = block_idx_y() * side + ty;
    if x < cols && y < rows {
        tile[ty * side + tx] = a[(y * cols + x) as usize];
    }
    sync_block();
    let ox = block_idx_y() * side + tx;
    let oy = block_idx_x() * side + ty;
    if ox < rows && oy < cols {
        t[(oy * rows + ox) as usize] = tile[tx * side + ty];
    }
    grid_sync();
    // Phase 2: t (cols × rows) back into `back` (rows × cols); block (bx, by) reads the tile
    // another block wrote.
    let x = block_idx_y() * side + tx;
    let y = block_idx_x() * side + ty;
    if x < rows && y < cols {
        tile[ty * side + tx] = t[(y * rows + x) as usize];
    }
    sync_block();
    let ox = block_idx_x() * side + tx;
    let oy = block_idx_y() * side + ty;
    if ox < cols && oy < rows {
        back[(oy * cols + ox) as usize] = tile[tx * side + ty];
    }
}

/// What every thread of a 3-D launch sees: 12 values per thread at its linear global index.
#[grid_phases]
pub fn grid_ids(ids: &mut [u32]) {
    let g = global_id() as usize * 12;
    ids[g] = thread_idx_x();
    ids[g + 1] = thread_idx_y();
    ids[g + 2] = thread_idx_z();
    ids[g + 3] = block_idx_x();
    ids[g + 4] = block_idx_y();
    ids[g + 5] = block_idx_z();
    ids[g + 6] = thread_idx();
    ids[g + 7] = block_idx();
    ids[g + 8] = block_dim_x() * 100 + block_dim_y() * 10 + block_dim_z();
    ids[g + 9] = grid_dim_x() * 100 + grid_dim_y() * 10 + grid_dim_z();
    ids[g + 10] = block_dim() * 1000 + grid_dim();
    ids[g + 11] = warp_id() * 100 + lane_id();
}

/// What [`grid_ids`] writes for a grid of `grid` blocks of `block` threads.
pub fn grid_ids_reference(grid: (u32, u32, u32), block: (u32, u32, u32)) -> Vec<u32> {
    let threads = block.0 * block.1 * block.2;
    let blocks = grid.0 * grid.1 * grid.2;
    let mut ids = vec![0; (threads * blocks * 12) as usize];
    for (bz, by, bx) in itertools(grid) {
        for (tz, ty, tx) in itertools(block) {
            let t = tx + block.0 * (ty + block.1 * tz);
            let b = bx + grid.0 * (by + grid.1 * bz);
            let g = ((b * threads + t) * 12) as usize;
            ids[g..g + 12].copy_from_slice(&[
                tx,
                ty,
                tz,
                bx,
                by,
                bz,
                t,
                b,
                block.0 * 100 + block.1 * 10 + block.2,
                grid.0 * 100 + grid.1 * 10 + grid.2,
                threads * 1000 + blocks,
                (t / 32) * 100 + t % 32,
            ]);
        }
    }
    ids
}

/// Every `(z, y, x)` of an extent.
fn itertools((x, y, z): (u32, u32, u32)) -> impl Iterator<Item = (u32, u32, u32)> {
    (0..z).flat_map(move |k| (0..y).flat_map(move |j| (0..x).map(move |i| (k, j, i))))
}

/// `rounds` rounds in which every thread adds its far neighbour's value of the last round to
/// its own, plus 1, ping-ponging between `a` and `b`, with a `grid_sync()` between rounds: the
/// values stay equal only if every round saw every block's writes of the round before.
#[grid_phases]
pub fn neighbour_rounds(a: &mut [u32], b: &mut [u32], rounds: u32) {
    let n = grid_size() as usize;
    let g = global_id() as usize;
    let far = (g + n / 2 + block_dim_y() as usize) % n;
    for r in 0..rounds {
        if r % 2 == 0 {
            b[g] = a[g].wrapping_add(a[far]).wrapping_add(1);
        } else {
            a[g] = b[g].wrapping_add(b[far]).wrapping_add(1);
        }
        grid_sync();
    }
}

/// Block sums through a shared tile of one slot per thread, sized by `BLOCK_SIZE`, for any
/// block size (a tree that halves rounding up), then a grid total after `grid_sync()`.
#[grid_phases]
pub fn sized_block_sums(input: &[u32], partial: &mut [u32], total: &mut [u64]) {
    let mut tile = shared_array::<u32, BLOCK_SIZE>();
    let t = thread_idx() as usize;
    let mut acc = 0u32;
    for i in grid_stride(0..input.len()) {
        acc = acc.wrapping_add(input[i]);
    }
    tile[t] = acc;
    sync_block();
    let mut active = BLOCK_SIZE;
    while active > 1 {
        let half = (active + 1) / 2;
        if t + half < active {
            tile[t] = tile[t].wrapping_add(tile[t + half]);
        }
        sync_block();
        active = half;
    }
    if t == 0 {
        partial[block_idx()] = tile[0];
    }
    grid_sync();
    if global_id() == 0 {
        let mut sum = 0u64;
        for b in 0..grid_dim() {
            sum += partial[b] as u64;
        }
        total[0] = sum;
    }
}

/// A shared array of 8 `f64` per thread: 64 KiB at 1024 threads, more than a block may have.
#[grid_phases]
pub fn wide_tile(out: &mut [f64]) {
    let mut tile = shared_array::<f64, { 8 * BLOCK_SIZE }>();
    let t = thread_idx() as usize;
    for k in 0..8 {
        tile[t * 8 + k] = k as f64;
    }
    sync_block();
    if t == 0 {
        out[block_idx()] = tile[tile.len() - 1] + tile.len() as f64;
    }
}

#[gsync::kernels]
pub mod per_warp {
    /// Warps per block, rounded up: a constant of each compiled block size.
    pub const WARPS: usize = (BLOCK_SIZE + 31) / 32;
    /// Not computed from the block size: stays a host constant.
    pub const SCALE: u32 = 1000;

    /// Counts each warp's threads in a shared array of one slot per warp; writes
    /// `threads * SCALE + warps` per block.
    #[grid_phases]
    pub fn warp_counts(out: &mut [u32]) {
        let mut counts = shared_array::<u32, WARPS>();
        let mut local = [0u32; WARPS];
        if lane_id() == 0 {
            counts[warp_id()] = 0;
        }
        sync_block();
        counts.atomic_add(warp_id(), 1);
        sync_block();
        if thread_idx() == 0 {
            let mut sum = 0u32;
            for w in 0..WARPS {
                local[w] = counts[w];
            }
            for w in 0..local.len() {
                sum += local[w];
            }
            out[block_idx()] = sum * SCALE + WARPS as u32;
        }
    }
}

/// The 2-D transpose at two tile sides, on a matrix no tile divides.
pub fn a_2d_transpose_through_a_shared_tile_matches_the_cpu(gpu: &Gpu, barrier: Barrier) {
    let rows = 45u32;
    let cols = 70u32;
    let a: Vec<f32> = random_vec(&mut rng(), (rows * cols) as usize);
    let mut expected = vec![0f32; a.len()];
    for y in 0..rows as usize {
        for x in 0..cols as usize {
            expected[x * rows as usize + y] = a[y * cols as usize + x];
        }
    }
    let da = gpu.upload(&a).unwrap();
    for side in [8u32, 16] {
        let launch = Launch::new()
            .threads_xyz(side, side, 1)
            .blocks_xyz(cols.div_ceil(side), rows.div_ceil(side), 1)
            .barrier(barrier);
        let mut t = gpu.zeros::<f32>(a.len()).unwrap();
        let mut back = gpu.zeros::<f32>(a.len()).unwrap();
        let report = transpose_twice::launch_with(gpu, &launch, &da, &mut t, &mut back, rows, cols).unwrap();
        assert_eq!(report.threads, side * side);
        assert_eq!(gpu.download(&t).unwrap(), expected, "side {side}");
        assert_eq!(gpu.download(&back).unwrap(), a, "side {side}");
    }
}

/// A 3-D grid of 3-D blocks: every thread's per-axis and linear indices.
pub fn a_3d_grid_maps_its_indices_like_cuda(gpu: &Gpu) {
    for (grid, block) in [((3, 2, 2), (4, 2, 3)), ((2, 1, 3), (8, 8, 2)), ((5, 1, 1), (48, 1, 1))] {
        let count = (grid.0 * grid.1 * grid.2 * block.0 * block.1 * block.2 * 12) as usize;
        let mut ids = gpu.zeros::<u32>(count).unwrap();
        let launch = Launch::new().blocks_xyz(grid.0, grid.1, grid.2).threads_xyz(block.0, block.1, block.2);
        grid_ids::launch_with(gpu, &launch, &mut ids).unwrap();
        assert_eq!(gpu.download(&ids).unwrap(), grid_ids_reference(grid, block), "{grid:?} × {block:?}");
    }
}

/// `grid_sync()` in a 3-D grid waits for every block, not only those along x.
pub fn grid_sync_in_a_3d_grid_waits_for_every_block(gpu: &Gpu, barrier: Barrier, grid: (u32, u32, u32), rounds: u32) {
    let block = (16, 2, 2);
    let n = (grid.0 * grid.1 * grid.2 * block.0 * block.1 * block.2) as usize;
    let mut a = gpu.upload(&vec![1u32; n]).unwrap();
    let mut b = gpu.upload(&vec![1u32; n]).unwrap();
    let launch =
        Launch::new().blocks_xyz(grid.0, grid.1, grid.2).threads_xyz(block.0, block.1, block.2).barrier(barrier);
    neighbour_rounds::launch_with(gpu, &launch, &mut a, &mut b, rounds).unwrap();
    let result = if rounds.is_multiple_of(2) { gpu.download(&a) } else { gpu.download(&b) }.unwrap();
    let expected = (0..rounds).fold(1u32, |v, _| v.wrapping_mul(2).wrapping_add(1));
    let wrong = result.iter().filter(|&&v| v != expected).count();
    assert_eq!(wrong, 0, "{barrier}, grid {grid:?}: {wrong} of {n} values wrong");
}

/// One kernel whose shared tile follows `BLOCK_SIZE`, at block sizes from 1 to 1024 and
/// one that is no multiple of 32.
pub fn a_block_size_constant_sizes_shared_memory_at_every_block_size(gpu: &Gpu) {
    let mut rng = rng();
    let input: Vec<u32> = (0..20_011).map(|_| rng.gen_range(0..1000)).collect();
    let expected: u64 = input.iter().map(|&x| u64::from(x)).sum();
    let di = gpu.upload(&input).unwrap();
    for threads in [1, 64, 96, 100, 256, 1024] {
        let blocks = 5;
        let mut partial = gpu.zeros::<u32>(blocks as usize).unwrap();
        let mut total = gpu.zeros::<u64>(1).unwrap();
        let launch = Launch::new().blocks(blocks).threads(threads);
        sized_block_sums::launch_with(gpu, &launch, &di, &mut partial, &mut total).unwrap();
        assert_eq!(gpu.download(&total).unwrap()[0], expected, "{threads} threads");
    }
    for threads in [1, 31, 32, 96, 100, 1024] {
        let mut out = gpu.zeros::<u32>(3).unwrap();
        per_warp::warp_counts::launch_with(gpu, &Launch::new().blocks(3).threads(threads), &mut out).unwrap();
        let expected = threads * per_warp::SCALE + threads.div_ceil(32);
        assert_eq!(gpu.download(&out).unwrap(), vec![expected; 3], "{threads} threads");
    }
}

/// Block sizes that make a kernel's `BLOCK_SIZE` arrays too large are refused before
/// anything runs; the others run.
pub fn a_block_size_that_overflows_shared_memory_is_refused(gpu: &Gpu) {
    let mut out = gpu.zeros::<f64>(2).unwrap();
    wide_tile::launch_with(gpu, &Launch::new().blocks(2).threads(64), &mut out).unwrap();
    assert_eq!(gpu.download(&out).unwrap(), vec![7.0 + 512.0; 2]);
    let error = wide_tile::launch_with(gpu, &Launch::new().blocks(2).threads(1024), &mut out).unwrap_err();
    assert!(matches!(error, Error::RefusedBlockSize { threads: 1024, .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("49152 bytes") && message.contains("Launch::threads"), "{message}");
}

/// Shapes that CUDA or the kernel cannot take are typed errors.
pub fn shapes_beyond_the_limits_are_typed_errors(gpu: &Gpu) {
    let mut ids = gpu.zeros::<u32>(12 * 4096).unwrap();
    let mut shape = |launch: &Launch| match grid_ids::launch_with(gpu, launch, &mut ids) {
        Err(Error::InvalidShape { reason, .. }) => reason,
        other => panic!("{other:?}"),
    };
    let blocks = Launch::new().blocks(2);
    assert!(shape(&blocks.clone().threads_xyz(32, 32, 2)).contains("2048 threads"));
    assert!(shape(&blocks.clone().threads_xyz(1, 1, 65)).contains("along z"));
    assert!(shape(&blocks.clone().threads_xyz(0, 4, 1)).contains("along x"));
    assert!(shape(&Launch::new().threads(32).blocks_xyz(1, 65_536, 1)).contains("along y"));
    // The kernel reads per-axis indices: the runtime does not pick its shape.
    assert!(shape(&Launch::new().blocks(2)).contains("Launch::threads_xyz"));
    assert!(shape(&Launch::new().threads(64)).contains("Launch::blocks_xyz"));
    // A kernel that reads no per-axis index runs in a line only.
    let mut partial = gpu.zeros::<u32>(4).unwrap();
    let mut total = gpu.zeros::<u64>(1).unwrap();
    let input = gpu.upload(&[1u32; 64]).unwrap();
    let launch = Launch::new().blocks_xyz(2, 2, 1).threads(64);
    let error = sized_block_sums::launch_with(gpu, &launch, &input, &mut partial, &mut total).unwrap_err();
    assert!(matches!(&error, Error::InvalidShape { reason, .. } if reason.contains("one-dimensional")), "{error}");
}
