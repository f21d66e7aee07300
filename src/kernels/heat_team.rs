//! The 2-D heat equation across the PEs of a [`Team`](crate::Team): the field's interior rows
//! cut into one strip per PE, each PE stepping its strip and handing its edge rows to its
//! neighbours by put-with-signal (`put_range_signal`), with a `gpu_sync()` per step: no grid
//! barrier spans the GPUs.
//!
//! **Layout.** Interior rows `1 … n − 2` are cut into strips of `rows = ⌈(n − 2) / n_pes⌉`
//! rows (the last PE's may be shorter). A PE's symmetric buffer holds two planes (the step's
//! parity) of `rows + 2` rows each: its strip in rows `1 …`, the row above it in row 0 and the
//! row below it after the strip. Both planes start as the strip's rows of the field, with those
//! two rows: boundary rows and columns are never written, so they stay.
//!
//! **A step.** Each PE computes its strip's new cells from one plane into the other, exactly as
//! [`heat_global`](super::heat::heat_global) does on one GPU (the same operations in the same
//! order, so the result is bit for bit the same). The rows between the strip's edges are shared
//! by every block, a cell per thread in grid-stride order. Before them, the first block steps
//! the strip's first row and the last block its last row: each first waits until the
//! neighbour's row it reads has arrived, then copies the row it computed into that neighbour's
//! halo row of the next plane, raising the neighbour's flag to the step's number. Sent first,
//! an edge row travels while the rows between are stepped. `gpu_sync()` then hands the step
//! to this GPU's blocks; the neighbours wait only for the rows they read.
//!
//! **Rounds.** `arrived[0]` counts the steps whose row above this strip has arrived,
//! `arrived[1]` those of the row below it (both start at 0: the planes hold step 0's rows). A PE
//! writes a neighbour's halo of plane `(s + 1) % 2` at step `s`; it writes that plane's halo
//! again at step `s + 2`, after it waited for the neighbour's row of step `s + 1`, which the
//! neighbour sends only once it has read the halo. The last step sends nothing: no step reads it.
//!
//! ```
//! use gsync::kernels::heat::heat_reference;
//! use gsync::kernels::heat_team::run_strips;
//! use gsync::{Launch, Team};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let n = 16;
//! let field: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32).collect();
//! // Team::cuda(2) on a machine with two GPUs.
//! let strips = Team::emulated(2)?.run(|gpu| run_strips(gpu, &Launch::new(), &field, n, 8, 0.2))?;
//! let interior: Vec<f32> = strips.into_iter().flat_map(|(rows, _report)| rows).collect();
//! assert_eq!(interior, heat_reference(&field, n, 8, 0.2)?[n..(n - 1) * n]);
//! # Ok(())
//! # }
//! ```

use crate::grid_phases;
use crate::kernels::heat::MAX_N;
use crate::{DeviceBuffer, Error, Gpu, Launch, LaunchReport, Result};

/// `steps` steps of the heat equation on this PE's strip of the `n × n` field, in the
/// symmetric `planes` laid out as the module describes, with the symmetric flags `arrived`
/// (two, zeroed); the result is in plane `steps % 2`.
#[grid_phases]
pub fn heat_strips(#[symmetric] planes: &mut [f32], #[symmetric] arrived: &mut [u64], n: u32, steps: u32, r: f32) {
    let rows = (n - 2).div_ceil(n_pes()); // a strip's rows, the last PE's at most
    let first = 1 + pe() * rows; // the field row of this PE's local row 1
    let mine = if first < n - 1 { rows.min(n - 1 - first) } else { 0 };
    let plane = (rows + 2) * n;
    let last = n - 1;
    let above = pe() > 0; // the previous PE holds the row above the strip
    let below = first + rows < n - 1; // a next PE holds rows below it
                                      // The edge rows' blocks: the first block steps row 1, the last block row `mine` (the
                                      // same block in a grid of one).
    let top = block_idx() == 0 && mine > 0;
    let bottom = block_idx() + 1 == grid_dim() && mine > 1;
    for s in 0..steps {
        let from = (s % 2) * plane;
        let to = ((s + 1) % 2) * plane;
        // First each edge row by its block, once the neighbour's row it reads has come; then
        // into the neighbour's halo row, with its flag. Sent before the rows between, it has
        // arrived by the time the neighbour's next step looks for it.
        for edge in 0..2u32 {
            let row = if edge == 0 { 1 } else { mine };
            if (edge == 0 && top) || (edge == 1 && bottom) {
                if thread_idx() == 0 {
                    if row == 1 && above {
                        wait_until(|| arrived.load_signal(0) >= s as u64);
                    }
                    if row == mine && below {
                        wait_until(|| arrived.load_signal(1) >= s as u64);
                    }
                }
                sync_block(); // what thread 0 acquired, for the whole block
                for col in block_stride(1..last) {
                    let c = row * n + col;
                    let u = planes[from + c];
                    planes[to + c] = u + r
                        * (planes[from + c - n] + planes[from + c + n] + planes[from + c - 1] + planes[from + c + 1]
                            - 4.0 * u);
                }
                sync_block();
                let round = s as u64 + 1;
                if row == 1 && above && s + 1 < steps {
                    // The previous PE's strip is a full one: its bottom row is rows + 1.
                    planes.put_range_signal(
                        pe() - 1,
                        to + (rows + 1) * n,
                        &planes[to + n..to + 2 * n],
                        arrived,
                        1,
                        round,
                    );
                }
                if row == mine && below && s + 1 < steps {
                    planes.put_range_signal(
                        pe() + 1,
                        to,
                        &planes[to + mine * n..to + (mine + 1) * n],
                        arrived,
                        0,
                        round,
                    );
                }
            }
        }
        // The rows between the edges, by every block.
        for c in grid_stride(2 * n..mine.max(2) * n) {
            let col = c % n;
            if col != 0 && col != last {
                let u = planes[from + c];
                planes[to + c] = u + r
                    * (planes[from + c - n] + planes[from + c + n] + planes[from + c - 1] + planes[from + c + 1]
                        - 4.0 * u);
            }
        }
        gpu_sync(); // this GPU's step, before its next one reads it
    }
}

/// The rows of the field a PE of `n_pes` holds in its planes, with the row above and below:
/// `first − 1 ..= first + mine`, and the strip's height `rows` (the planes' `rows + 2`).
pub fn strip(n: usize, pe: u32, n_pes: u32) -> Result<Strip> {
    let interior = n.saturating_sub(2);
    let rows = interior.div_ceil(n_pes.max(1) as usize);
    let first = 1 + pe as usize * rows;
    if interior == 0 || first >= n - 1 {
        let reason = format!("a field of side {n} has no interior rows for PE {pe} of {n_pes}; take a larger field");
        return Err(Error::InvalidShape { kernel: "heat_strips".into(), reason });
    }
    Ok(Strip { first, mine: rows.min(n - 1 - first), rows })
}

/// One PE's strip of the field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strip {
    /// The field row of the strip's first row.
    pub first: usize,
    /// Its rows.
    pub mine: usize,
    /// Every full strip's rows: the planes hold `rows + 2`.
    pub rows: usize,
}

/// Steps this PE's strip of `field` (`n × n`, the same on every PE) `steps` times on `gpu`,
/// a PE of a team (or a GPU alone, which holds the whole field), and returns its strip's rows
/// of the result, with the launch's report.
pub fn run_strips(
    gpu: &Gpu,
    launch: &Launch,
    field: &[f32],
    n: usize,
    steps: u32,
    r: f32,
) -> Result<(Vec<f32>, LaunchReport)> {
    check_field(field.len(), n, "heat_strips")?;
    // Every PE refuses a field that leaves any PE without rows, before the collective
    // allocation that the others would otherwise wait at.
    for pe in 0..gpu.n_pes() {
        strip(n, pe, gpu.n_pes())?;
    }
    let strip = strip(n, gpu.pe(), gpu.n_pes())?;
    let plane_len = (strip.rows + 2) * n;
    // Both planes start as the strip with its rows above and below (boundary or neighbours').
    let mut host = vec![0.0f32; 2 * plane_len];
    let held = &field[(strip.first - 1) * n..(strip.first + strip.mine + 1) * n];
    host[..held.len()].copy_from_slice(held);
    host[plane_len..plane_len + held.len()].copy_from_slice(held);
    let mut planes: DeviceBuffer<f32> = gpu.symmetric_upload(&host)?;
    let mut arrived: DeviceBuffer<u64> = gpu.symmetric_zeros(2)?;
    let report = heat_strips::launch_with(gpu, launch, &mut planes, &mut arrived, n as u32, steps, r)?;
    let result = gpu.download(&planes)?;
    let at = (steps as usize % 2) * plane_len + n;
    Ok((result[at..at + strip.mine * n].to_vec(), report))
}

/// Refuses a field of `len` cells that is not `n × n`, or whose side is above [`MAX_N`], for
/// `kernel`.
pub(crate) fn check_field(len: usize, n: usize, kernel: &str) -> Result<()> {
    if len != n * n {
        return Err(Error::LengthMismatch { device: n * n, host: len });
    }
    if n > MAX_N {
        let reason = format!("a side of {n} is above {MAX_N}: cell indices are `u32`");
        return Err(Error::InvalidShape { kernel: kernel.to_owned(), reason });
    }
    Ok(())
}
