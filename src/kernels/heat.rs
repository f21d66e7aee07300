//! The 2-D heat equation, explicit 5-point scheme, on an `n × n` field of
//! `f32` (row-major): the model problem of a grid barrier with neighbours in
//! two dimensions. The boundary cells (first and last row and column) hold
//! fixed (Dirichlet) values and are never written; every interior cell takes
//!
//! ```text
//! u' = u + r * ((((up + down) + left) + right) - 4 * u)
//! ```
//!
//! in exactly this order of `f32` operations, without fused multiply-adds,
//! where `up` is the cell one row above (index `i − n`), `down` one row below,
//! `left` and `right` the cells beside it. The scheme is stable for
//! `r ≤ 0.25`. Both kernels and the CPU reference [`heat_reference`]
//! evaluate it identically, so their results agree bit for bit.
//!
//! Three kernels compute it:
//!
//! - [`heat_global`] ping-pongs the whole field between two arrays in
//!   global memory, one `grid_stride` sweep and one `grid_sync()` per step.
//!   It also runs split into one launch per step (`Barrier::MultiLaunch`).
//! - [`heat_columns`] keeps the field in registers, a thread per column and a
//!   register per row, and exchanges the strips' edge rows through global
//!   memory every few steps, computing copies of its neighbours' edge rows in
//!   between.
//! - [`heat_resident`] keeps each block's strip of rows in shared memory for
//!   all the steps and exchanges only the strip's edge rows through global
//!   memory, every step: the form for fields too wide or too tall for
//!   [`heat_columns`].
//!
//! The resident kernels need the whole field on chip at once, so their grid
//! depends on the field ([`resident_grid`] picks the kernel and the grid),
//! and they cannot be split into launches.
//!
//! ```
//! use gsync::kernels::heat::{heat_reference, run_global, run_resident};
//! use gsync::{Barrier, Gpu, Launch};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let gpu = Gpu::emulator(); // or Gpu::new(0)
//! let n = 32;
//! let field: Vec<f32> = (0..n * n).map(|i| if i < n { 100.0 } else { 0.0 }).collect();
//! let expected = heat_reference(&field, n, 20, 0.25)?;
//! assert_eq!(run_global(&gpu, &Launch::new(), &field, n, 20, 0.25)?.field, expected);
//! let split = Launch::new().barrier(Barrier::MultiLaunch);
//! assert_eq!(run_global(&gpu, &split, &field, n, 20, 0.25)?.field, expected);
//! assert_eq!(run_resident(&gpu, &Launch::new(), &field, n, 20, 0.25)?.field, expected);
//! # Ok(())
//! # }
//! ```

use crate::grid_phases;
use crate::{Backend, DeviceBuffer, Gpu, Launch, LaunchReport};
use std::fmt;
use std::sync::{Barrier, Mutex, PoisonError};

/// Cells of one block's tile in [`heat_resident`]: 10,240 `f32`, 40 KiB of
/// shared memory, holding a strip of rows plus one spare row.
pub const TILE_CELLS: usize = 10_240;

/// The widest field the kernels take: cell indices are `u32`, so `n² < 2^32`.
pub const MAX_N: usize = 65_535;

/// `steps` steps of the heat equation on the `n × n` field in `a`,
/// ping-ponging between `a` and `b`: each step reads `a` and writes `b`,
/// then the two trade places. After an even number of steps the result is
/// in the buffer passed as `a`, after an odd number in the one passed as `b`. Neither array's
/// boundary cells are written, so both must hold the boundary values.
///
/// Each step sweeps the interior rows as one range of cells, `n` to
/// `n · (n − 1)`, skipping the first and last column; `grid_sync()` then
/// makes the step visible to every block.
#[grid_phases]
pub fn heat_global(mut a: &mut [f32], mut b: &mut [f32], n: u32, steps: u32, r: f32) {
    let last = n.saturating_sub(1);
    for _ in 0..steps {
        for c in grid_stride(n..n * last) {
            let col = c % n;
            if col != 0 && col != last {
                let u = a[c];
                b[c] = u + r * (a[c - n] + a[c + n] + a[c - 1] + a[c + 1] - 4.0 * u);
            }
        }
        grid_sync(); // every block sees the whole step before the next one starts
        std::mem::swap(&mut a, &mut b);
    }
}

/// `steps` steps of the heat equation on the `n × n` field `input`, with the
/// field resident in shared memory: the result goes to `output`. Each block
/// holds `rows` rows, `(rows + 1) · n` cells at most [`TILE_CELLS`]; `halo`
/// has `4 · grid_dim() · n` cells. [`resident_grid`] chooses the grid.
///
/// **Tiles.** Block `b` owns the strip of rows `b · rows …` (fewer in the
/// last block, none in blocks past the field): whole rows, so that the
/// strip is one contiguous range of the field and its halo is two rows,
/// read and written with coalesced accesses (a 2-D tile would add left and
/// right halo columns, one cell per row, strided in memory). It loads the
/// strip into the shared array `tile` once and writes it to `output` once
/// at the end.
///
/// **A step, in place.** `tile` has one spare row, and the strip moves by
/// one tile row per step: before an even step, strip row `i` is in tile row
/// `i + 1`; the step sweeps down, `i = 0, 1, …`, reading row `i` from tile
/// row `f = i + 1` and writing its new values into tile row `t = i`, where
/// the old row `i − 1` was. The odd step sweeps up, `f = i`, `t = i + 1`,
/// and moves the strip back. A thread computes the cells of its columns
/// (`block_stride`) of one row and stores each new value at once; one
/// `sync_block()` after each row makes the sweep race-free:
/// - Within row `i`, tile row `f` is read across columns (`left`, `right`)
///   and written by no one; tile row `t` holds the old neighbour row (`up`
///   going down, `down` going up), which each thread reads and then
///   overwrites in its own columns only; the other neighbour row, `f ± 1`,
///   is read in the thread's own columns and not written.
/// - Across rows, row `i` writes tile row `t`, which the row before read
///   across columns (it was that row's `f`), and its own `f` is written by
///   the row after: the `sync_block()` between two rows orders each such
///   read before the write.
///
/// Holding a whole step's new values in registers instead would need one
/// `sync_block()` per step, not per row, but 32 registers per thread for
/// them alone; the compiler then schedules up to 167 registers per thread
/// (NVRTC, 256 threads), one block per SM, too few blocks for a 2048 × 2048
/// field. This kernel takes 39 to 48, five blocks per SM.
///
/// **Halo.** `halo` holds, per parity `p`, per block `b`, the strip's first
/// row (cells `(p · grid_dim() + b) · 2n …`) and its last row (the next `n`
/// cells). Step `s` reads the neighbours' rows of the field after `s` steps
/// from parity `s % 2` (at `s = 0`, from `input`) and writes its own new
/// edge rows to parity `(s + 1) % 2`.
///
/// **Why one `grid_sync()` per step is race-free.** In step `s` the blocks
/// read parity `s % 2` and write parity `(s + 1) % 2`, never the same cell.
/// Parity `(s + 1) % 2` was last read in step `s − 1`, before the
/// `grid_sync()` that ended it, and is read next in step `s + 1`, after the
/// `grid_sync()` that ends step `s`; the rows read in step `s` were written
/// in step `s − 1`, before that earlier `grid_sync()`. So a `grid_sync()`
/// separates every halo write from every read of the same cell. The
/// `grid_sync()` also holds the whole block, which orders the last row of a
/// step before the first of the next. `input` is only read, and each cell
/// of `output` is written once, by its owner, and never read.
///
/// Shared memory does not survive a kernel boundary, so this kernel cannot
/// run as one launch per step (`Barrier::MultiLaunch` fails with
/// `Error::CannotSplit`).
#[grid_phases(threads = 256)]
pub fn heat_resident(input: &[f32], output: &mut [f32], halo: &mut [f32], n: u32, rows: u32, steps: u32, r: f32) {
    const CELLS: usize = 10240; // TILE_CELLS
    let mut tile = shared_array::<f32, CELLS>();
    let b = block_idx();
    let first = b * rows; // the strip's first row in the field
    let mine = if first < n { rows.min(n - first) } else { 0 };
    let base = first * n;
    let last = n - 1;
    for c in block_stride(0..mine * n) {
        tile[n + c] = input[base + c];
    }
    sync_block();
    for s in 0..steps {
        let read = (s % 2) * grid_dim();
        let write = ((s + 1) % 2) * grid_dim();
        let down_sweep = s % 2 == 0;
        for k in 0..mine {
            let i = if down_sweep { k } else { mine - 1 - k };
            let from = if down_sweep { (i + 1) * n } else { i * n }; // the old row i in the tile
            let to = if down_sweep { i * n } else { (i + 1) * n };
            let g = first + i;
            for col in block_stride(0..n) {
                let u = tile[from + col];
                let mut v = u;
                if g != 0 && g != last && col != 0 && col != last {
                    let up = if i != 0 {
                        tile[from - n + col]
                    } else if s == 0 {
                        input[base - n + col]
                    } else {
                        halo[((read + b - 1) * 2 + 1) * n + col]
                    };
                    let down = if i + 1 != mine {
                        tile[from + n + col]
                    } else if s == 0 {
                        input[base + mine * n + col]
                    } else {
                        halo[(read + b + 1) * 2 * n + col]
                    };
                    v = u + r * (up + down + tile[from + col - 1] + tile[from + col + 1] - 4.0 * u);
                }
                tile[to + col] = v;
                if i == 0 {
                    halo[(write + b) * 2 * n + col] = v;
                }
                if i + 1 == mine {
                    halo[((write + b) * 2 + 1) * n + col] = v;
                }
            }
            sync_block(); // every thread has read the row before the next one overwrites it
        }
        grid_sync(); // the new edge rows are visible to the neighbours
    }
    let offset = if steps % 2 == 0 { n } else { 0 };
    for c in block_stride(0..mine * n) {
        output[base + c] = tile[offset + c];
    }
}

/// Rows of the field a block of [`heat_columns`] holds at most: each thread
/// keeps one cell of every row in a register.
pub const COLUMN_ROWS: usize = 8;

/// The most steps [`heat_columns`] takes between two halo exchanges (and
/// `grid_sync()`s): it holds that many of each neighbour's rows beside its own.
pub const COLUMN_DEPTH: usize = 4;

/// `steps` steps of the heat equation on the `n × n` field `input`, with the
/// field resident in registers, exchanging halos every `depth` steps: the
/// result goes to `output`. Thread `t` of block `b` owns column `t` of the
/// strip of rows `b · rows …` (`rows` at most [`COLUMN_ROWS`]; fewer in the
/// last block, none in blocks past the field). The block size must be a
/// multiple of 32 and at least `n`; `depth` is 1 to [`COLUMN_DEPTH`] and at
/// most `rows`; `halo` has `4 · COLUMN_DEPTH · grid_dim() · n` cells.
/// [`resident_grid`] chooses the grid and the depth.
///
/// **Registers.** The thread's cells are the local array `u`, which the
/// compiler keeps in registers since every index is a constant of an
/// unrolled loop: `depth` ghost rows (copies of the strip above's last
/// rows), then the strip's own rows, then `depth` ghost rows of the strip
/// below (where the field has them).
///
/// **A period of `depth` steps** starts by writing the strip's first and
/// last `depth` rows to `halo`, by period parity, then a `grid_sync()` (one
/// barrier per `depth` steps), then loading the ghost rows from the
/// neighbours' rows there. Each step then updates, in place from the top
/// down (`above` keeps the old value of the row just replaced), the rows whose
/// new value is still exact: step `j` of the period loses one row at either
/// end, so after `depth` steps exactly the own rows are, and they are the same
/// bits the neighbours compute for their copies. The cells above and below are
/// the thread's own registers; the cells beside it are its neighbours' in
/// the block, which every step first writes to the dynamic shared slice
/// `cells`, by step parity, one `sync_block()` before it reads them: one
/// store and two loads of shared memory per cell and step.
///
/// **The common shape** ([`COLUMN_ROWS`] rows per block, [`COLUMN_DEPTH`] steps
/// per exchange, whatever `n`) runs every loop with constant bounds, so no row
/// carries a runtime test: the rows of `u` beyond the field's first or last
/// row are computed too, from values no one uses, and those two fixed rows get
/// their values back after each step. Other shapes test each row (on an H200
/// the common shape runs 1.7 times as fast; docs/results.md has the figures).
///
/// **Race freedom.** Period `q` writes parity `q % 2` of `halo` before its
/// `grid_sync()` and reads it after; that parity was last read in period
/// `q − 2`, before the `grid_sync()` of period `q − 1`. Step `j` of a period
/// writes parity `j % 2` of `cells`, which was last read in step `j − 2`,
/// before the `sync_block()` of step `j − 1` (or, across periods, before the
/// `grid_sync()`).
/// Like [`heat_resident`], it cannot be split into launches.
#[grid_phases]
pub fn heat_columns(
    input: &[f32],
    output: &mut [f32],
    halo: &mut [f32],
    n: u32,
    rows: u32,
    depth: u32,
    steps: u32,
    r: f32,
) {
    // COLUMN_DEPTH, and the rows of `u` in use at most: COLUMN_ROWS + 2 · COLUMN_DEPTH
    // (ghost, own, ghost).
    const DEPTH: u32 = 4;
    const EXT: u32 = 16;
    // COLUMN_ROWS
    const ROWS: u32 = 8;
    // The block's rows of `u`, by step parity: cell `(parity, row, column)` at
    // `(parity · EXT + row) · BLOCK_SIZE + column`. Only columns that change read beside
    // themselves, and those have a column on either side in the block.
    let mut cells = shared_slice::<f32>(2 * 16 * BLOCK_SIZE);
    let b = block_idx();
    let col = thread_idx();
    let first = b * rows; // the strip's first row in the field
    let mine = if first < n { rows.min(n - first) } else { 0 };
    let last = n - 1;
    let inside = col < n && mine != 0;
    // The first and last column stay fixed.
    let changes = inside && col != 0 && col < last;
    // Rows of `u` in use; row `e` is field row `first + e − depth`.
    let span = mine + 2 * depth;
    // Rows of `u` that hold field rows 1 … n − 2 (the first and last rows stay fixed):
    // `lowest` to `beyond`, exclusive. So `u[beyond]` holds field row n − 1, where
    // `beyond < EXT`.
    let lowest = if first > depth { 1 } else { depth + 1 - first };
    let beyond = if mine == 0 { 0 } else { depth + last - first };
    // The common shape, `COLUMN_ROWS` rows per block and `COLUMN_DEPTH` steps per exchange:
    // every block then updates the same rows of `u` each step, whatever the field's edges.
    // Rows of `u` past the field's first or last row hold values no one uses (they reach only
    // those fixed rows), and the fixed rows get their values back after every step.
    let full = rows == ROWS && depth == DEPTH && mine != 0;
    let above_exists = first != 0;
    let below_exists = first + mine < n;
    // One register per row; the 17th only lets `u[e + 1]` stay in bounds at the last row.
    let mut u = [0.0f32; 17];
    for e in 0..EXT {
        if inside && e >= depth && e < depth + mine {
            u[e] = input[(first + e - depth) * n + col];
        }
    }
    // Field row 0 is `u[DEPTH]` of block 0.
    let top_value = u[DEPTH];
    let bottom_value = if inside && beyond < EXT { input[last * n + col] } else { 0.0 };
    let mut s = 0u32;
    let mut parity = 0u32;
    while s < steps {
        let burst = (steps - s).min(depth);
        // The strip's first and last `depth` rows, for the neighbours.
        let mine_at = (parity * grid_dim() + b) * 2 * DEPTH * n + col;
        if full {
            if inside {
                for k in 0..2 * DEPTH {
                    halo[mine_at + k * n] = u[DEPTH + k];
                }
            }
        } else {
            for e in 0..EXT {
                if inside && e >= depth && e < 2 * depth {
                    halo[mine_at + (e - depth) * n] = u[e];
                }
                if inside && e >= mine && e < depth + mine {
                    halo[mine_at + (DEPTH + e - mine) * n] = u[e];
                }
            }
        }
        // The edge rows are visible to the neighbours after the barrier. Then the ghost rows:
        // the strip above's last `depth` rows and the strip below's first.
        grid_sync();
        let above_at = (parity * grid_dim() + b - 1) * 2 * DEPTH * n + col;
        let below_at = (parity * grid_dim() + b + 1) * 2 * DEPTH * n + col;
        if full {
            if inside && above_exists {
                for k in 0..DEPTH {
                    u[k] = halo[above_at + (DEPTH + k) * n];
                }
            }
            if inside && below_exists {
                for k in 0..DEPTH {
                    u[DEPTH + ROWS + k] = halo[below_at + k * n];
                }
            }
        } else {
            for e in 0..EXT {
                if inside && e < depth && above_exists {
                    u[e] = halo[above_at + (DEPTH + e) * n];
                }
                if inside && e >= depth + mine && e < span && first + e - depth < n {
                    u[e] = halo[below_at + (e - depth - mine) * n];
                }
            }
        }
        for j in 0..DEPTH {
            if j < burst {
                // Rows still exact after this step (one fewer at either end per step) that change:
                // the only rows whose cells anyone reads. In the common shape, rows `j + 1` to
                // `EXT - 1 - j`, constants once the loop over `j` is unrolled.
                let from = max(j + 1, lowest);
                let to = min(span - j - 1, beyond);
                let at = (j % 2 * EXT) as usize * BLOCK_SIZE + col as usize;
                if full {
                    for e in (j + 1)..(EXT - 1 - j) {
                        cells[at + e as usize * BLOCK_SIZE] = u[e];
                    }
                } else {
                    for e in 0..EXT {
                        if e >= from && e < to {
                            cells[at + e as usize * BLOCK_SIZE] = u[e];
                        }
                    }
                }
                sync_block(); // the block's cells are in `cells`
                if full {
                    if changes {
                        let mut above = u[j];
                        for e in (j + 1)..(EXT - 1 - j) {
                            let old = u[e];
                            let here = at + e as usize * BLOCK_SIZE;
                            u[e] = old + r * (above + u[e + 1] + cells[here - 1] + cells[here + 1] - 4.0 * old);
                            above = old;
                        }
                        if first == 0 {
                            u[DEPTH] = top_value;
                        }
                        // Where `n` is a multiple of `ROWS`, the last block's last row; else a
                        // row of one of the last two blocks.
                        if beyond == DEPTH + ROWS - 1 {
                            u[DEPTH + ROWS - 1] = bottom_value;
                        } else if beyond < EXT {
                            for e in 0..EXT {
                                if e == beyond {
                                    u[e] = bottom_value;
                                }
                            }
                        }
                    }
                } else {
                    let mut above = u[0];
                    for e in 1..EXT {
                        let old = u[e];
                        if e >= from && e < to && changes {
                            let here = at + e as usize * BLOCK_SIZE;
                            u[e] = old + r * (above + u[e + 1] + cells[here - 1] + cells[here + 1] - 4.0 * old);
                        }
                        above = old;
                    }
                }
            }
        }
        parity = 1 - parity;
        s += burst;
    }
    for e in 0..EXT {
        if inside && e >= depth && e < depth + mine {
            output[(first + e - depth) * n + col] = u[e];
        }
    }
}

/// Why a heat-equation run could not be done.
#[derive(Debug)]
pub enum HeatError {
    /// The field does not have `n × n` cells, or `n` is above [`MAX_N`].
    Shape {
        /// The side length given.
        n: usize,
        /// The number of cells given.
        len: usize,
    },
    /// Two rows of the field (one and the spare) are wider than a tile of [`TILE_CELLS`] cells.
    RowTooWide {
        /// The side length.
        n: usize,
    },
    /// The grid asked for gives a block more rows than its tile holds.
    TooFewBlocks {
        /// The side length.
        n: usize,
        /// The blocks asked for.
        blocks: u32,
        /// Rows each block would own.
        rows: usize,
    },
    /// The grid that holds the field cannot be resident on this GPU at once.
    NotCoresident {
        /// The side length.
        n: usize,
        /// Blocks the field needs.
        blocks: u32,
        /// Threads per block.
        threads: u32,
        /// The most blocks of that size that can be resident at once.
        max: u32,
    },
    /// [`heat_columns`] cannot hold the field with the launch asked for.
    NoColumns {
        /// The side length.
        n: usize,
    },
    /// A halo exchange period [`heat_columns`] cannot take.
    Depth {
        /// The steps per exchange asked for.
        depth: u32,
        /// The most the grid allows.
        most: u32,
    },
    /// The GPU, or the runtime, failed.
    Gpu(crate::Error),
}

impl fmt::Display for HeatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeatError::Shape { n, .. } if *n > MAX_N => {
                write!(f, "a {n} × {n} field is too large: the kernels index at most {MAX_N} × {MAX_N} cells")
            }
            HeatError::Shape { n: 0, .. } => write!(f, "a 0 × 0 field has no cells to keep resident"),
            HeatError::Shape { n, len } => write!(f, "a {n} × {n} field has {} cells, but {len} were given", n * n),
            HeatError::RowTooWide { n } => write!(
                f,
                "a {n} × {n} field cannot be resident: a tile of {TILE_CELLS} cells holds fewer than two \
                 rows of {n} cells (one row and the spare)"
            ),
            HeatError::TooFewBlocks { n, blocks, rows } => write!(
                f,
                "a {n} × {n} field cannot be resident on {blocks} blocks: each would hold {rows} rows, \
                 {} cells with the spare row, more than a tile of {TILE_CELLS}; use more blocks, or leave \
                 Launch::blocks unset",
                (rows + 1) * n
            ),
            HeatError::NotCoresident { n, blocks, threads, max } => write!(
                f,
                "a {n} × {n} field cannot be resident: it needs {blocks} blocks of {threads} threads, but only \
                 {max} can be resident at once on this GPU"
            ),
            HeatError::NoColumns { n } => write!(
                f,
                "heat_columns cannot hold a {n} × {n} field with this launch: it needs a thread per column \
                 (a block of at least {n} threads, a multiple of 32, at most the GPU's largest block), at \
                 most {COLUMN_ROWS} rows per block, and a co-resident grid; use heat_resident (strips) instead"
            ),
            HeatError::Depth { depth, most } => write!(
                f,
                "heat_columns cannot exchange halos every {depth} steps on this grid: pass 1 to {most} \
                 (at most {COLUMN_DEPTH}, and at most the rows each block holds)"
            ),
            HeatError::Gpu(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for HeatError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HeatError::Gpu(error) => error.source(),
            _ => None,
        }
    }
}

impl From<crate::Error> for HeatError {
    fn from(error: crate::Error) -> Self {
        HeatError::Gpu(error)
    }
}

/// A field after the steps, and how the kernel ran.
#[derive(Debug)]
pub struct Heated {
    /// The `n × n` field, row-major.
    pub field: Vec<f32>,
    /// How the kernel ran (no blocks and no time for an empty field).
    pub report: LaunchReport,
}

/// Which kernel keeps the field resident.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResidentForm {
    /// [`heat_columns`]: a thread per column, a register per row.
    Columns,
    /// [`heat_resident`]: strips of rows in shared memory, swept row by row.
    Strips,
}

/// The kernel and grid [`run_resident`] runs for an `n × n` field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResidentGrid {
    /// The kernel.
    pub form: ResidentForm,
    /// Blocks in the grid.
    pub blocks: u32,
    /// Threads per block.
    pub threads: u32,
    /// Rows of the field each block holds (the last block holds the rest).
    pub rows: u32,
    /// Steps between two halo exchanges: 1 for [`heat_resident`], up to
    /// [`COLUMN_DEPTH`] for [`heat_columns`].
    pub depth: u32,
}

impl ResidentGrid {
    /// `launch` with this grid pinned.
    pub fn pin(&self, launch: &Launch) -> Launch {
        launch.clone().blocks(self.blocks).threads(self.threads)
    }
}

/// The kernel and grid that keep an `n × n` field resident (`n ≥ 1`).
///
/// [`heat_columns`] (registers) runs where it can: a field of at most 1024
/// columns, one thread per column (a block of `n` threads rounded up to a
/// warp, or the launch's block size where it is a multiple of 32 and at
/// least `n`), at most [`COLUMN_ROWS`] rows per block, and a co-resident
/// grid. Otherwise [`heat_resident`] (shared-memory strips) runs, with
/// `launch`'s block size (by default, on a GPU, the first of 1024, 512, 256
/// and 128 threads, no more than a row's cells rounded up to a warp, whose
/// grid is co-resident; on the emulator the kernel's 256). With
/// `Launch::blocks` the field is spread over that many blocks; otherwise over
/// one block per SM, or more where a block cannot hold that many rows. Fails
/// with a [`HeatError`] naming the limit when neither kernel can hold the
/// field (with `Barrier::MultiLaunch`, with `Error::CannotSplit`).
pub fn resident_grid(gpu: &Gpu, launch: &Launch, n: usize) -> Result<ResidentGrid, HeatError> {
    if n == 0 || n > MAX_N {
        return Err(HeatError::Shape { n, len: n.saturating_mul(n) });
    }
    if let Some(grid) = columns_grid(gpu, launch, n)? {
        return Ok(grid);
    }
    strips_grid(gpu, launch, n)
}

/// [`resident_grid`] for the kernel of `form` only; [`HeatError::NoColumns`]
/// where [`heat_columns`] cannot hold the field.
pub fn resident_grid_as(gpu: &Gpu, launch: &Launch, n: usize, form: ResidentForm) -> Result<ResidentGrid, HeatError> {
    if n == 0 || n > MAX_N {
        return Err(HeatError::Shape { n, len: n.saturating_mul(n) });
    }
    match form {
        ResidentForm::Columns => columns_grid(gpu, launch, n)?.ok_or(HeatError::NoColumns { n }),
        ResidentForm::Strips => strips_grid(gpu, launch, n),
    }
}

/// Rows per block for `n` rows: over the launch's blocks, or one block per SM.
fn rows_per_block(gpu: &Gpu, launch: &Launch, n: usize) -> usize {
    match launch.requested_blocks() {
        Some(0) => 1, // the runtime refuses the empty grid
        Some(blocks) => n.div_ceil(blocks as usize),
        None => n.div_ceil((gpu.info().sm_count as usize).clamp(1, n)),
    }
}

/// The grid of [`heat_columns`], if it can hold the field.
fn columns_grid(gpu: &Gpu, launch: &Launch, n: usize) -> Result<Option<ResidentGrid>, HeatError> {
    let threads = match launch.requested_threads() {
        Some(threads) if threads as usize >= n && threads % 32 == 0 => threads,
        Some(_) => return Ok(None),
        None => n.next_multiple_of(32) as u32,
    };
    let rows = match launch.requested_blocks() {
        Some(_) => rows_per_block(gpu, launch, n),
        None => rows_per_block(gpu, launch, n).min(COLUMN_ROWS),
    };
    if threads > gpu.info().max_threads_per_block || rows > COLUMN_ROWS {
        return Ok(None);
    }
    let blocks = launch.requested_blocks().unwrap_or(n.div_ceil(rows) as u32);
    let depth = rows.min(COLUMN_DEPTH) as u32;
    let grid = ResidentGrid { form: ResidentForm::Columns, blocks, threads, rows: rows as u32, depth };
    // The shared slice's length depends on the block size alone: a one-cell buffer stands
    // for every slice argument.
    let probe: DeviceBuffer<f32> = gpu.zeros(1)?;
    let (n32, rows32) = (n as u32, rows as u32);
    let pinned = grid.pin(launch);
    match heat_columns::max_coresident_blocks(gpu, &pinned, &probe, &probe, &probe, n32, rows32, depth, 0, 0.0) {
        Ok(max) => Ok((blocks <= max).then_some(grid)),
        // A GPU whose blocks cannot keep that many cells in shared memory.
        Err(crate::Error::DynamicSharedMemoryLimit { .. }) => Ok(None),
        Err(error) => Err(error.into()),
    }
}

/// The grid of [`heat_resident`], or why it cannot hold the field.
fn strips_grid(gpu: &Gpu, launch: &Launch, n: usize) -> Result<ResidentGrid, HeatError> {
    // A strip of `rows` rows takes `rows + 1` rows of the tile.
    let most_rows = (TILE_CELLS / n).saturating_sub(1);
    if most_rows == 0 {
        return Err(HeatError::RowTooWide { n });
    }
    let rows = rows_per_block(gpu, launch, n);
    let rows = match launch.requested_blocks() {
        Some(blocks) if blocks > 0 && rows > most_rows => {
            return Err(HeatError::TooFewBlocks { n, blocks, rows });
        }
        Some(_) => rows,
        None => rows.min(most_rows),
    };
    let blocks = launch.requested_blocks().unwrap_or(n.div_ceil(rows) as u32);
    // The sweep gives each thread one cell of a row, so up to a row's width more threads per
    // block take it in fewer rounds (on an H200, 1024² × 10,000 steps: 48.3 ms with 1024
    // threads, 66.9 ms with 256; 256² × 1000 steps: 1.68 ms with 256, 1.84 ms with 1024), as
    // long as the grid stays co-resident. The emulator keeps the kernel's block size: its
    // threads are futures.
    let row_width = u32::try_from(n.next_multiple_of(32)).unwrap_or(u32::MAX);
    let candidates = match launch.requested_threads() {
        Some(threads) => vec![threads],
        None if gpu.backend() == Backend::Cuda => RESIDENT_THREADS
            .iter()
            .copied()
            .filter(|&threads| threads <= gpu.info().max_threads_per_block)
            .filter(|&threads| threads <= row_width.max(RESIDENT_THREADS[RESIDENT_THREADS.len() - 1]))
            .collect(),
        None => vec![launch.threads_for(&heat_resident::KERNEL)],
    };
    let mut refusal = None;
    for threads in candidates {
        let grid = ResidentGrid { form: ResidentForm::Strips, blocks, threads, rows: rows as u32, depth: 1 };
        let max = gpu.max_coresident_blocks(&heat_resident::KERNEL, &grid.pin(launch))?;
        if blocks <= max {
            return Ok(grid);
        }
        refusal = Some(HeatError::NotCoresident { n, blocks, threads, max });
    }
    Err(refusal.unwrap_or(HeatError::Shape { n, len: n.saturating_mul(n) }))
}

/// Block sizes [`resident_grid`] tries on a GPU when the launch names none, fastest first.
const RESIDENT_THREADS: [u32; 4] = [1024, 512, 256, 128];

/// Runs `steps` steps of [`heat_global`] on the `n × n` field `input` on
/// `gpu` with `launch` (by default the shape tuned on the first launch; any
/// barrier, `Barrier::MultiLaunch` included) and returns the field.
pub fn run_global(
    gpu: &Gpu,
    launch: &Launch,
    input: &[f32],
    n: usize,
    steps: u32,
    r: f32,
) -> Result<Heated, HeatError> {
    check_shape(input, n)?;
    if n == 0 {
        return Ok(empty(launch));
    }
    let mut a = gpu.upload(input)?;
    let mut b = gpu.upload(input)?;
    let report = heat_global::launch_with(gpu, launch, &mut a, &mut b, n as u32, steps, r)?;
    let field = gpu.download(if steps.is_multiple_of(2) { &a } else { &b })?;
    Ok(Heated { field, report })
}

/// Runs `steps` steps of the heat equation on the `n × n` field `input` on
/// `gpu` with the field resident, with the kernel and grid [`resident_grid`]
/// chooses for `launch`, and returns the field.
pub fn run_resident(
    gpu: &Gpu,
    launch: &Launch,
    input: &[f32],
    n: usize,
    steps: u32,
    r: f32,
) -> Result<Heated, HeatError> {
    run_chosen(gpu, launch, input, n, steps, r, || resident_grid(gpu, launch, n))
}

/// [`run_resident`] with the kernel chosen: `form`'s, on the grid
/// [`resident_grid_as`] chooses.
pub fn run_resident_as(
    gpu: &Gpu,
    launch: &Launch,
    form: ResidentForm,
    input: &[f32],
    n: usize,
    steps: u32,
    r: f32,
) -> Result<Heated, HeatError> {
    run_chosen(gpu, launch, input, n, steps, r, || resident_grid_as(gpu, launch, n, form))
}

/// [`run_resident_as`] with [`heat_columns`], exchanging halos every `depth`
/// steps instead of the default (as many as the rows per block allow, at
/// most [`COLUMN_DEPTH`]); [`HeatError::Depth`] where `depth` is 0 or more
/// than that.
pub fn run_columns_at_depth(
    gpu: &Gpu,
    launch: &Launch,
    depth: u32,
    input: &[f32],
    n: usize,
    steps: u32,
    r: f32,
) -> Result<Heated, HeatError> {
    run_chosen(gpu, launch, input, n, steps, r, || {
        let grid = resident_grid_as(gpu, launch, n, ResidentForm::Columns)?;
        if depth == 0 || depth > grid.depth {
            return Err(HeatError::Depth { depth, most: grid.depth });
        }
        Ok(ResidentGrid { depth, ..grid })
    })
}

/// Checks the field, then runs the resident kernel and grid `choose` gives (no launch for
/// an empty field).
fn run_chosen(
    gpu: &Gpu,
    launch: &Launch,
    input: &[f32],
    n: usize,
    steps: u32,
    r: f32,
    choose: impl FnOnce() -> Result<ResidentGrid, HeatError>,
) -> Result<Heated, HeatError> {
    check_shape(input, n)?;
    if n == 0 {
        return Ok(empty(launch));
    }
    run_on_grid(gpu, launch, &choose()?, input, n, steps, r)
}

/// Runs the resident kernel of `grid` (chosen for this `n`) on `input`.
fn run_on_grid(
    gpu: &Gpu,
    launch: &Launch,
    grid: &ResidentGrid,
    input: &[f32],
    n: usize,
    steps: u32,
    r: f32,
) -> Result<Heated, HeatError> {
    let device_input = gpu.upload(input)?;
    let mut output: DeviceBuffer<f32> = gpu.zeros(input.len())?;
    let (n32, pinned) = (n as u32, grid.pin(launch));
    let report = match grid.form {
        ResidentForm::Columns => {
            let mut halo: DeviceBuffer<f32> = gpu.zeros(4 * COLUMN_DEPTH * grid.blocks as usize * n)?;
            let (input, output, halo) = (&device_input, &mut output, &mut halo);
            heat_columns::launch_with(gpu, &pinned, input, output, halo, n32, grid.rows, grid.depth, steps, r)?
        }
        ResidentForm::Strips => {
            let mut halo: DeviceBuffer<f32> = gpu.zeros(4 * grid.blocks as usize * n)?;
            heat_resident::launch_with(gpu, &pinned, &device_input, &mut output, &mut halo, n32, grid.rows, steps, r)?
        }
    };
    Ok(Heated { field: gpu.download(&output)?, report })
}

/// The same computation on the CPU, for verification: the field after
/// `steps` steps, bit for bit what both kernels compute.
pub fn heat_reference(input: &[f32], n: usize, steps: u32, r: f32) -> Result<Vec<f32>, HeatError> {
    heat_reference_parallel(input, n, steps, r, 1)
}

/// [`heat_reference`] with the interior rows shared among `workers` threads:
/// the same result, sooner on large fields.
///
/// Each thread steps its own band of rows, with a copy of the row on either
/// side, and after each step hands its new first and last rows to its
/// neighbours: the resident kernel's exchange, double-buffered by step
/// parity, with a [`Barrier`] between the steps.
pub fn heat_reference_parallel(
    input: &[f32],
    n: usize,
    steps: u32,
    r: f32,
    workers: usize,
) -> Result<Vec<f32>, HeatError> {
    check_shape(input, n)?;
    let interior = n.saturating_sub(2);
    if interior == 0 || steps == 0 {
        return Ok(input.to_vec());
    }
    let height = interior.div_ceil(workers.clamp(1, interior));
    let bands: Vec<(usize, usize)> =
        (1..n - 1).step_by(height).map(|first| (first, (first + height).min(n - 1))).collect();
    if bands.len() == 1 {
        return Ok(step_band(input, n, 1, n - 1, steps, r, None));
    }
    let exchange = Exchange {
        edges: [(); 2].map(|_| bands.iter().map(|_| Mutex::new((Vec::new(), Vec::new()))).collect()),
        barrier: Barrier::new(bands.len()),
    };
    let mut field = input.to_vec();
    std::thread::scope(|scope| {
        let workers: Vec<_> = bands
            .iter()
            .enumerate()
            .map(|(w, &(first, end))| {
                let exchange = &exchange;
                scope.spawn(move || step_band(input, n, first, end, steps, r, Some((exchange, w))))
            })
            .collect();
        for (worker, &(first, end)) in workers.into_iter().zip(&bands) {
            let band = worker.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            field[first * n..end * n].copy_from_slice(&band[n..(end - first + 1) * n]);
        }
    });
    Ok(field)
}

/// A band's first and last row after a step.
type Edges = Mutex<(Vec<f32>, Vec<f32>)>;

/// How the bands of [`heat_reference_parallel`] meet: per step parity, per
/// band, its [`Edges`] after that step.
struct Exchange {
    edges: [Vec<Edges>; 2],
    barrier: Barrier,
}

/// `steps` steps of rows `first..end` of the field `input`; returns them
/// with the row on either side. Alone, the rows beside the band are the
/// boundary's; with `exchange`, band `w`'s neighbours' after each step.
fn step_band(
    input: &[f32],
    n: usize,
    first: usize,
    end: usize,
    steps: u32,
    r: f32,
    exchange: Option<(&Exchange, usize)>,
) -> Vec<f32> {
    let rows = end - first;
    let mut cur = input[(first - 1) * n..(end + 1) * n].to_vec();
    let mut next = cur.clone();
    for s in 0..steps {
        step_rows(&cur, &mut next[n..(rows + 1) * n], n, 1, r);
        if let Some((exchange, w)) = exchange {
            let edges = &exchange.edges[(s as usize + 1) % 2];
            let lock = |w: usize| edges[w].lock().unwrap_or_else(PoisonError::into_inner);
            *lock(w) = (next[n..2 * n].to_vec(), next[rows * n..(rows + 1) * n].to_vec());
            exchange.barrier.wait();
            if w > 0 {
                next[..n].copy_from_slice(&lock(w - 1).1);
            }
            if w + 1 < edges.len() {
                next[(rows + 1) * n..].copy_from_slice(&lock(w + 1).0);
            }
        }
        std::mem::swap(&mut cur, &mut next);
    }
    cur
}

/// One step for the interior rows from `first` on that `out` holds.
fn step_rows(src: &[f32], out: &mut [f32], n: usize, first: usize, r: f32) {
    for (k, row) in out.chunks_mut(n).enumerate() {
        let i = first + k;
        let (up, mid, down) = (&src[(i - 1) * n..i * n], &src[i * n..(i + 1) * n], &src[(i + 1) * n..(i + 2) * n]);
        for j in 1..n - 1 {
            let u = mid[j];
            row[j] = u + r * (up[j] + down[j] + mid[j - 1] + mid[j + 1] - 4.0 * u);
        }
    }
}

/// Whether `input` is an `n × n` field the kernels can index.
fn check_shape(input: &[f32], n: usize) -> Result<(), HeatError> {
    if n > MAX_N || input.len() != n * n {
        return Err(HeatError::Shape { n, len: input.len() });
    }
    Ok(())
}

/// The result of stepping an empty field: nothing, without a launch.
fn empty(launch: &Launch) -> Heated {
    Heated { field: Vec::new(), report: LaunchReport::no_launch(launch.selected_barrier()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_step_updates_the_interior_in_the_documented_order() {
        // Up 2, down 3, left 4, right 5 around a centre of 1: ((2 + 3) + 4) + 5 − 4 = 10.
        let input = [0.0, 2.0, 0.0, 4.0, 1.0, 5.0, 0.0, 3.0, 0.0];
        let out = heat_reference(&input, 3, 1, 0.25).unwrap();
        assert_eq!(out, [0.0, 2.0, 0.0, 4.0, 3.5, 5.0, 0.0, 3.0, 0.0]);
        // An order that rounds differently from another: the sum's order is part of the scheme.
        let (up, down, left, right, u) = (1.0e8f32, -1.0e8, 3.0, 0.5, 0.25);
        let input = [0.0, up, 0.0, left, u, right, 0.0, down, 0.0];
        let out = heat_reference(&input, 3, 1, 0.2).unwrap();
        assert_eq!(out[4].to_bits(), (u + 0.2 * (((up + down) + left) + right - 4.0 * u)).to_bits());
        assert_ne!(out[4].to_bits(), (u + 0.2 * (((left + right) + up) + down - 4.0 * u)).to_bits());
    }

    #[test]
    fn the_parallel_reference_matches_the_serial_one() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for n in [0, 1, 2, 3, 4, 17, 40] {
            let input: Vec<f32> = (0..n * n)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state >> 40) as f32 / (1u64 << 24) as f32
                })
                .collect();
            let serial = heat_reference(&input, n, 9, 0.2).unwrap();
            if n >= 3 {
                assert_ne!(serial, input, "{n}: the interior changes");
            }
            for workers in [2, 3, 7, 64] {
                let parallel = heat_reference_parallel(&input, n, 9, 0.2, workers).unwrap();
                assert_eq!(parallel, serial, "{n}, {workers} workers");
            }
        }
    }

    #[test]
    fn a_field_of_the_wrong_size_is_an_error() {
        assert!(matches!(heat_reference(&[1.0; 5], 2, 1, 0.2), Err(HeatError::Shape { n: 2, len: 5 })));
        let too_wide = HeatError::Shape { n: MAX_N + 1, len: 0 };
        assert!(too_wide.to_string().contains("too large"), "{too_wide}");
    }
}
