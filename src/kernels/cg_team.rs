//! Conjugate gradients for the 2-D Poisson equation across the PEs of a
//! [`Team`](crate::Team): every iteration in one kernel, the dot products reduced across
//! GPUs.
//!
//! The system is the 5-point Laplacian on an `m × m` grid with zero values outside it
//! (`4·u[i] − u[up] − u[down] − u[left] − u[right] = b[i]`), `iterations` iterations from
//! `x = 0`. Rows are cut into one strip per PE, as in [`heat_team`](super::heat_team); `p`
//! holds the row above and below its strip, which the neighbours `put` after each update.
//!
//! **Dot products, the same on any team.** Each row's part of a dot product is summed by one
//! warp (lanes over columns 32 apart, then a fixed shuffle tree), and put into that row's slot
//! of every PE's `rows`; after the spanning `grid_sync()`, each block sums the `m` rows' parts
//! in groups of 128 (a warp per group, a fixed tree each), then its first warp adds the groups
//! in a fixed order. So every block of every PE gets the same value whatever the grid, and a
//! team of any size computes bit for bit what one GPU does.
//!
//! ```
//! use gsync::kernels::cg_team::solve_strips;
//! use gsync::{Gpu, Launch, Team};
//!
//! # fn main() -> gsync::Result<()> {
//! let m = 16;
//! let b = vec![1.0f32; m * m];
//! let (alone, _report) = solve_strips(&Gpu::emulator(), &Launch::new(), &b, m, 10)?;
//! // Team::cuda(2) on a machine with two GPUs.
//! let strips = Team::emulated(2)?.run(|gpu| solve_strips(gpu, &Launch::new(), &b, m, 10))?;
//! let team: Vec<f32> = strips.into_iter().flat_map(|(x, _report)| x).collect();
//! assert_eq!(team, alone);
//! # Ok(())
//! # }
//! ```

/// The solver's kernel and the warp sums its dot products share.
#[gsync::kernels]
pub mod solver {
    /// The sum of `v` over the warp's lanes, by a fixed tree: the same in every lane.
    #[device]
    fn warp_sum(v: f32) -> f32 {
        let mut sum = v;
        let mut k = 16u32;
        while k > 0 {
            sum += shfl_xor(sum, k);
            k /= 2;
        }
        sum
    }

    /// Rows' parts summed as one group: 128 rows, `GROUP` below.
    pub const GROUP: u32 = 128;

    /// The sum of group `g` of `rows[from .. from + m]` (rows `g · GROUP …`) by one warp, in a
    /// fixed order: lane `l` adds rows `l, l + 32, l + 64, l + 96` of the group, then the
    /// lanes' sums meet in [`warp_sum`]'s tree.
    #[device]
    fn group_sum(rows: &[f32], from: u32, m: u32, g: u32) -> f32 {
        let mut sum = 0.0f32;
        for j in 0..4u32 {
            let i = g * 128 + j * 32 + lane_id();
            if i < m {
                sum += rows[(from + i) as usize];
            }
        }
        warp_sum(sum)
    }

    /// The sum of `groups[0 .. n]` by one warp, in a fixed order: lane `l` adds groups
    /// `l, l + 32, …`, then the tree.
    #[device]
    fn groups_sum(groups: &[f32], n: u32) -> f32 {
        let mut sum = 0.0f32;
        for k in (lane_id()..n).step_by(32) {
            sum += groups[k as usize];
        }
        warp_sum(sum)
    }

    /// The sum of `rows[from .. from + m]`, the same in every thread of every block: the block's
    /// warps sum groups of GROUP rows into `groups` ([`group_sum`]), then its first warp adds
    /// the groups ([`groups_sum`]) and hands the sum on through `total`. Every thread of the
    /// block calls it.
    #[device]
    fn block_total(rows: &[f32], from: u32, m: u32, groups: &mut [f32], total: &mut [f32]) -> f32 {
        let n_groups = m.div_ceil(GROUP);
        let mut g = warp_id();
        while g < n_groups {
            let sum = group_sum(rows, from, m, g);
            if lane_id() == 0 {
                groups[g as usize] = sum;
            }
            g += block_dim() / 32;
        }
        sync_block();
        if warp_id() == 0 {
            let sum = groups_sum(groups, n_groups);
            if lane_id() == 0 {
                total[0] = sum;
            }
        }
        sync_block();
        let sum = total[0];
        sync_block();
        sum
    }

    /// `iterations` iterations of conjugate gradients on this PE's strip: `b` (the strip's right
    /// side, `mine · m`), `x` (its solution, from zeros), `r` and `q` (work, `mine · m`), `p`
    /// (symmetric: `rows + 2` rows of `m`), `rows` (symmetric, `2 · m`: the rows' parts of the
    /// two dot products), `rr` (2: r·r of the last two iterations, by parity, which the first
    /// block of each PE writes; read back after a `grid_sync()` instead of kept in a register,
    /// so that the kernel also runs split, one launch per phase).
    #[grid_phases(threads = 256)]
    pub fn cg_strips(
        b: &[f32],
        x: &mut [f32],
        r: &mut [f32],
        q: &mut [f32],
        #[symmetric] p: &mut [f32],
        #[symmetric] rows: &mut [f32],
        rr: &mut [f32],
        m: u32,
        iterations: u32,
    ) {
        let mut total = shared_array::<f32, 1>();
        // Each block's sums of the rows' parts, a group of GROUP rows each (m ≤ 65535).
        let mut groups = shared_array::<f32, 512>();
        let height = m.div_ceil(n_pes()); // a full strip's rows
        let first = pe() * height; // the grid row of this PE's first row
        let mine = if first < m { height.min(m - first) } else { 0 };
        let warps = grid_dim() * (block_dim() / 32);
        let warp = block_idx() * (block_dim() / 32) + warp_id();
        // r = b, p = b (x = 0), and rr = b·b.
        for c in grid_stride(0..mine * m) {
            r[c] = b[c];
            p[m + c] = b[c];
            x[c] = 0.0;
        }
        // Every PE's halo rows of p, from the neighbours' first and last rows of b.
        for c in grid_stride(0..m) {
            if pe() > 0 {
                p.put(pe() - 1, (height + 1) * m + c, b[c]);
            }
            if pe() + 1 < n_pes() && mine > 0 {
                p.put(pe() + 1, c, b[(mine - 1) * m + c]);
            }
        }
        // The rows' parts of r·r go to slots m … 2m.
        let mut row = warp;
        while row < mine {
            let mut part = 0.0f32;
            for c in (lane_id()..m).step_by(32) {
                // b, not r: r is written in this same phase, by other threads.
                part += b[(row * m + c) as usize] * b[(row * m + c) as usize];
            }
            part = warp_sum(part);
            if lane_id() == 0 {
                for to in 0..n_pes() {
                    rows.put(to, (m + first + row) as usize, part);
                }
            }
            row += warps;
        }
        grid_sync();
        let rr_0 = block_total(rows, m, m, &mut groups, &mut total);
        if global_id() == 0 {
            rr[0] = rr_0;
        }
        for k in 0..iterations {
            let now = (k % 2) as usize; // rr[now] is r·r entering this iteration
            let next = ((k + 1) % 2) as usize;
            // q = A p on this strip; the rows' parts of p·q to slots 0 … m.
            let mut row = warp;
            while row < mine {
                let mut part = 0.0f32;
                for c in (lane_id()..m).step_by(32) {
                    let i = (row + 1) * m + c; // p's index: its row 0 is the halo above
                    let left = if c > 0 { p[i - 1] } else { 0.0 };
                    let right = if c + 1 < m { p[i + 1] } else { 0.0 };
                    let v = 4.0 * p[i] - p[i - m] - p[i + m] - left - right;
                    q[row * m + c] = v;
                    part += p[i] * v;
                }
                part = warp_sum(part);
                if lane_id() == 0 {
                    for to in 0..n_pes() {
                        rows.put(to, (first + row) as usize, part);
                    }
                }
                row += warps;
            }
            grid_sync(); // every PE's parts of p·q
            let pq = block_total(rows, 0, m, &mut groups, &mut total);
            let alpha = rr[now] / pq;
            // x += alpha p, r -= alpha q; the rows' parts of the new r·r to slots m … 2m.
            let mut row = warp;
            while row < mine {
                let mut part = 0.0f32;
                for c in (lane_id()..m).step_by(32) {
                    let i = row * m + c;
                    x[i] += alpha * p[m + i];
                    r[i] -= alpha * q[i];
                    part += r[i] * r[i];
                }
                part = warp_sum(part);
                if lane_id() == 0 {
                    for to in 0..n_pes() {
                        rows.put(to, (m + first + row) as usize, part);
                    }
                }
                row += warps;
            }
            grid_sync(); // every PE's parts of r·r
            let rr_new = block_total(rows, m, m, &mut groups, &mut total);
            let beta = rr_new / rr[now];
            if global_id() == 0 {
                rr[next] = rr_new;
            }
            // p = r + beta p, and its first and last rows into the neighbours' halos.
            for c in grid_stride(0..mine * m) {
                let v = r[c] + beta * p[m + c];
                p[m + c] = v;
                let row = c / m;
                let col = c % m;
                if row == 0 && pe() > 0 {
                    p.put(pe() - 1, (height + 1) * m + col, v);
                }
                if row + 1 == mine && pe() + 1 < n_pes() {
                    p.put(pe() + 1, col, v);
                }
            }
            grid_sync(); // every PE's p, halos included
        }
    }
}

use crate::kernels::heat_team::check_field;
use crate::{DeviceBuffer, Gpu, Launch, LaunchReport, Result};

/// This PE's rows of an `m × m` grid cut into one strip per PE of `n_pes`: the first grid row,
/// the strip's rows, and a full strip's (`p` holds `rows + 2`).
pub fn cg_strip(m: usize, pe: u32, n_pes: u32) -> (usize, usize, usize) {
    let rows = m.div_ceil(n_pes.max(1) as usize);
    let first = (pe as usize * rows).min(m);
    (first, rows.min(m - first), rows)
}

/// `iterations` iterations of conjugate gradients for `A x = b` (the 5-point Laplacian on an
/// `m × m` grid, `b` the same on every PE) on `gpu`, a PE of a team or a GPU alone; returns
/// this PE's rows of `x` and the launch's report.
pub fn solve_strips(
    gpu: &Gpu,
    launch: &Launch,
    b: &[f32],
    m: usize,
    iterations: u32,
) -> Result<(Vec<f32>, LaunchReport)> {
    check_field(b.len(), m, "cg_strips")?;
    let (first, mine, rows) = cg_strip(m, gpu.pe(), gpu.n_pes());
    let strip = |len: usize| -> Result<DeviceBuffer<f32>> { gpu.zeros(len.max(1)) };
    let mine_b = gpu.upload(&b[first * m..(first + mine) * m])?;
    let (mut x, mut r, mut q) = (strip(mine * m)?, strip(mine * m)?, strip(mine * m)?);
    let mut p: DeviceBuffer<f32> = gpu.symmetric_zeros((rows + 2) * m)?;
    let mut parts: DeviceBuffer<f32> = gpu.symmetric_zeros(2 * m)?;
    let mut rr = gpu.zeros(2)?;
    let report = solver::cg_strips::launch_with(
        gpu, launch, &mine_b, &mut x, &mut r, &mut q, &mut p, &mut parts, &mut rr, m as u32, iterations,
    )?;
    let mut x = gpu.download(&x)?;
    x.truncate(mine * m);
    Ok((x, report))
}
