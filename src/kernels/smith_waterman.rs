//! Smith-Waterman local alignment with affine gaps (Gotoh), in two fused
//! kernels. [`smith_waterman_stripes`] (what [`align`] runs) gives each block a
//! stripe of rows that it sweeps as one wavefront, handing its last row to the
//! stripe below through global memory, with no barrier between stripes.
//! [`smith_waterman`] cuts the DP matrix into tiles, runs the tiles of one
//! anti-diagonal of tiles in parallel on different blocks, and separates one
//! tile diagonal from the next with a `grid_sync()`. In both, a block runs its
//! own wavefront: eight matrix rows per thread in registers, one `sync_block()`
//! per step.
//!
//! Conventions (shared with the CPU reference [`align_reference`]): `H[i][j]`
//! is the best local alignment score ending at residue `i` of the first
//! sequence `a` (rows) and residue `j` of the second sequence `b` (columns),
//! both 1-based; a gap of length `L` costs `open + (L − 1) · extend`; the
//! reported end is the first cell holding the maximum in row-major order, and
//! (0, 0) when no alignment scores above 0. Sequences are codes of a
//! [`Scoring`]'s alphabet ([`Scoring::encode`]); [`parse_fasta`] reads them
//! from FASTA text.
//!
//! ```no_run
//! use gsync::kernels::smith_waterman::{align, align_reference, Scoring};
//! use gsync::prelude::*;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let scoring = Scoring::blosum62(11, 1)?;
//! let a = scoring.encode(b"HEAGAWGHEE")?;
//! let b = scoring.encode(b"PAWHEAE")?;
//! let gpu = Gpu::new(0)?;
//! let alignment = align(&gpu, &Launch::new(), &a, &b, &scoring)?;
//! assert_eq!(alignment.hit(), align_reference(&a, &b, &scoring));
//! # Ok(())
//! # }
//! ```
//!
//! Memory is O(m + n): the kernel keeps only the borders between tiles in
//! global memory (see [`smith_waterman`]), never the matrix.

mod fasta;
mod input;
mod reference;
mod scoring;

pub use fasta::{parse_fasta, FastaRecord};
pub use input::{AlignError, InputError, MAX_ALPHABET, MAX_SCORE};
pub use reference::{align_reference, align_reference_parallel, LocalHit};
pub use scoring::{
    Scoring, BLOSUM62, BLOSUM62_EXTEND, BLOSUM62_OPEN, DNA_ALPHABET, DNA_EXTEND, DNA_MATCH, DNA_MISMATCH, DNA_OPEN,
    PROTEIN_ALPHABET,
};

use crate::{DeviceBuffer, Gpu, Launch, LaunchConfig, LaunchReport, Result};

/// The largest best score the kernel allows (see [`check_input`]): well
/// below `i32::MAX`, so that no sum in the recurrence overflows.
const MAX_BEST: u64 = 1 << 30;

/// The largest best score [`align_stripes`] takes: its kernel hands `H` and `F` down
/// between stripes in 26 bits each.
pub const MAX_STRIPE_SCORE: u64 = 1 << 25;

/// Tile columns by default. Wider tiles waste fewer steps on the tile's
/// wavefront filling and draining (a tile of T threads and C columns takes
/// T + C − 1 steps); narrower ones give more tiles per diagonal and a
/// shorter critical path.
pub const DEFAULT_TILE_COLS: u32 = 512;

/// The kernel, and the steps of the recurrence and of the search for the
/// best cell that it spells out once.
#[gsync::kernels]
mod alignment {
    /// The widest tile the kernel's shared memory holds, in columns.
    pub const MAX_TILE_COLS: u32 = 1024;
    /// The most blocks [`smith_waterman_stripes`] runs on: its hand-down words name their
    /// stripe modulo 2^11.
    pub const MAX_STRIPE_BLOCKS: u32 = 2048;
    /// Columns the stripe kernel stages at a time (fewer in blocks of fewer threads): one per
    /// lane of warp 0.
    pub const CHUNK: u32 = 32;
    /// Substitution rows are 32 scores apart in shared memory; row 32 scores
    /// the padding rows.
    const STRIDE: u32 = 32;
    /// The staged substitution scores: `STRIDE + 1` rows of `STRIDE`.
    const SCORE_CELLS: usize = ((STRIDE + 1) * STRIDE) as usize;
    /// What a padding row scores against any residue.
    const PADDING_SCORE: i32 = -1048576;
    /// "Minus infinity" for `E` and `F` (`i32::MIN / 2`): it survives a subtraction.
    const NEG: i32 = -1073741824;
    /// The largest block: the tile kernel's `pass_h` and `pass_f` hold one half of this per
    /// step parity.
    const MAX_THREADS: u32 = 1024;
    /// The tile kernel's `pass_h` and `pass_f`: [`MAX_THREADS`] values per step parity.
    const PASS_SLOTS: usize = (2 * MAX_THREADS) as usize;
    /// A tile's columns in shared memory.
    const TILE_SLOTS: usize = MAX_TILE_COLS as usize;

    /// Stages the substitution matrix in the block's `scores`: 33 rows of 32,
    /// padding wherever the alphabet ends.
    #[device]
    fn stage_scores(scores: &mut [i32], matrix: &[i32], alphabet: u32) {
        for k in block_stride(0..SCORE_CELLS as u32) {
            let row = k / STRIDE;
            let col = k % STRIDE;
            scores[k] = if row < alphabet && col < alphabet { matrix[row * alphabet + col] } else { PADDING_SCORE };
        }
    }

    /// A gap's score (`E` along a row, `F` down a column) one cell on: the
    /// gap before extended, or a new gap opened after the cell before. Written as a plain
    /// add and max: ptxas fuses it into one add-and-max (`VIADDMNMX`) on sm_90 all the same,
    /// and spelled with `add_max` it made the tile kernel's fused form 38% slower on an H200
    /// (67.2 against 48.5 ms at 2^17 × 2^17) while the stripes ran the same.
    #[device]
    fn gap(gap_before: i32, h_before: i32, open: i32, extend: i32) -> i32 {
        (gap_before - extend).max(h_before - open)
    }

    /// Matrix rows each thread owns, in a tile or a stripe: a tile or stripe is
    /// `ROWS_PER_THREAD · block_dim()` rows tall.
    pub const ROWS_PER_THREAD: u32 = 8;

    /// One column of a thread's [`ROWS_PER_THREAD`] rows, top to bottom, at column `c`: row
    /// `r` scores `scores[profile[r] + code]` against it. Each row's left neighbour is its own
    /// previous column (`h`, `e`); the first row's upper neighbour is `up` (`[H, F]`, replaced
    /// by the last row's) and its diagonal neighbour `diag`. Keeps each row's first maximum in
    /// `best`, `best_c`.
    #[device]
    fn column(
        h: &mut [i32],
        e: &mut [i32],
        best: &mut [i32],
        best_c: &mut [u32],
        up: &mut [i32],
        profile: &[u32],
        scores: &[i32],
        code: u32,
        c: u32,
        mut diag: i32,
        open: i32,
        extend: i32,
    ) {
        let mut up_h = up[0];
        let mut up_f = up[1];
        for r in 0..ROWS_PER_THREAD {
            let e_here = gap(e[r], h[r], open, extend);
            let f_here = gap(up_f, up_h, open, extend);
            // F last: it alone waits on the row above.
            let h_here = add_max_relu(diag, scores[profile[r] + code], e_here).max(f_here);
            diag = h[r];
            h[r] = h_here;
            e[r] = e_here;
            up_h = h_here;
            up_f = f_here;
            if h_here > best[r] {
                best[r] = h_here;
                best_c[r] = c;
            }
        }
        up[0] = up_h;
        up[1] = up_f;
    }

    /// Keeps in slot `g` the better of what it holds and the cell `(score,
    /// pos)`: the larger score, or the same score at a smaller row-major position.
    #[device]
    fn keep_best(best_score: &mut [i32], best_pos: &mut [u64], g: u32, score: i32, pos: u64) {
        let held = best_score[g];
        if score > held || (score == held && pos < best_pos[g]) {
            best_score[g] = score;
            best_pos[g] = pos;
        }
    }

    /// The best of every thread's slot into `result_score[0]` and
    /// `result_pos[0]`: the largest score, then the first position holding it.
    #[device]
    fn grid_best(best_score: &[i32], best_pos: &[u64], result_score: &mut [i32], result_pos: &mut [u64]) {
        let mine = best_score[global_id()];
        if mine > 0 {
            result_score.atomic_max(0, mine);
        }
        grid_sync();
        // Read again: a split run keeps no per-thread value across a grid_sync().
        let held = best_score[global_id()];
        if held > 0 && held == result_score[0] {
            result_pos.atomic_min(0, best_pos[global_id()]);
        }
    }

    /// Smith-Waterman-Gotoh scores of `a` (rows) against `b` (columns): writes
    /// the best score to `result_score[0]` and the row-major position
    /// `(i − 1) · n + (j − 1)` of the first cell holding it to `result_pos[0]`
    /// (`u64::MAX` when the best score is 0).
    ///
    /// **Tiles.** A tile is `8 · block_dim()` rows (thread `t` owns the eight
    /// rows from `8t`, [`ROWS_PER_THREAD`]) by `tile_cols` columns; tile
    /// `(r, c)` lies on tile diagonal `r + c`. Phase `d` computes every tile of
    /// diagonal `d`, each on one block (a block takes tile rows
    /// `first + block_idx()`, `+ grid_dim()`, …); `grid_sync()` then makes its
    /// borders visible to diagonal `d + 1`.
    ///
    /// **Inside a tile** thread `t` computes column `s − t` of its eight rows at
    /// step `s`, top to bottom, in registers: each row's left neighbour
    /// `H[i][j−1]`, `E[i][j−1]` is its own previous column; the upper neighbour
    /// of its first row, `H[i−1][j]`, `F[i−1][j]`, is what thread `t − 1`
    /// computed for its last row one step earlier, passed through shared memory
    /// double-buffered by step parity (thread `t − 1` writes half `s % 2` while
    /// thread `t` reads half `(s − 1) % 2`), so one `sync_block()` per step
    /// suffices; the diagonal neighbour of the first row is the upper neighbour
    /// of the step before. The tile's `b` residues and the borders from above
    /// are staged in shared memory when the tile starts.
    ///
    /// **Borders in global memory** (O(m + n) in all):
    /// - `row_h`, `row_f` (one per column): `H`, `F` of the last row of the tile
    ///   above, staged in shared memory before the tile's first `sync_block()`;
    ///   the tile's last thread then overwrites them with its own last row.
    /// - `col_h`, `col_e` (one per row): `H`, `E` of the last column of the tile
    ///   to the left. Each thread reads its rows' (and thread `t > 0` the row
    ///   above's, its diagonal for the first column) before the tile's first
    ///   `sync_block()`, and writes its last column after its last step.
    /// - `corner` (one per tile row): the diagonal neighbour of the tile's
    ///   top-left cell, `H[i0−1][j0−1]`, belongs to tile `(r−1, c−1)`, two
    ///   diagonals back. By diagonal `d` both border arrays have lost it:
    ///   tile `(r−1, c)` overwrote `col_h[i0−1]` and tile `(r, c−1)` overwrote
    ///   `row_h[j0−1]` on diagonal `d − 1`, and reading `col_h[i0−1]` now would
    ///   race with tile `(r−1, c+1)`, which rewrites it on diagonal `d`. So
    ///   tile `(r, c−1)`'s thread 0 saves `H[i0−1][j0−1]`, the last column of
    ///   its border from above, in `corner[r]` for the next tile of the same
    ///   tile row. Only tiles of tile row `r` touch `corner[r]`, one per
    ///   diagonal, and each reads it before writing it in the same thread.
    ///
    /// Tile row 0 takes `H` = 0 and `F` = −∞ from above and tile column 0 takes
    /// `H` = 0 and `E` = −∞ from the left without reading the arrays, so they
    /// need no initialisation. Rows past the end of `a` (the last tile row's
    /// padding) score every residue far below any real cell, so they never
    /// hold a maximum; their borders are never read.
    ///
    /// **Best cell.** Each thread keeps, per row, its tile's first maximum
    /// (columns increase within a row) and merges them, rows in order, into its
    /// own slot of `best_score`/`best_pos` (one per thread of the grid): larger
    /// score, or equal score at a smaller row-major position. At the end,
    /// `atomic_max(score)`, `grid_sync()`, then `atomic_min(position)` among the
    /// slots holding that score: the first maximum in row-major order.
    ///
    /// Per-thread state lives in global memory across every `grid_sync()`, and
    /// each phase fills its shared arrays before reading them, so the kernel
    /// also runs split into launches (`Barrier::MultiLaunch`).
    #[grid_phases(threads = 128)]
    pub fn smith_waterman(
        a: &[u8],
        b: &[u8],
        matrix: &[i32],
        alphabet: u32,
        open: i32,
        extend: i32,
        tile_cols: u32,
        row_h: &mut [i32],
        row_f: &mut [i32],
        col_h: &mut [i32],
        col_e: &mut [i32],
        corner: &mut [i32],
        best_score: &mut [i32],
        best_pos: &mut [u64],
        result_score: &mut [i32],
        result_pos: &mut [u64],
    ) {
        let m = a.len() as u32;
        let n = b.len() as u32;
        let tile_cols = tile_cols.clamp(1, MAX_TILE_COLS);
        let tile_height = block_dim() * ROWS_PER_THREAD;
        let tile_rows = m.div_ceil(tile_height);
        let tiles_across = n.div_ceil(tile_cols);
        let mut scores = shared_array::<i32, SCORE_CELLS>();
        let mut tile_b = shared_array::<u32, TILE_SLOTS>();
        let mut top_h = shared_array::<i32, TILE_SLOTS>();
        let mut top_f = shared_array::<i32, TILE_SLOTS>();
        let mut pass_h = shared_array::<i32, PASS_SLOTS>();
        let mut pass_f = shared_array::<i32, PASS_SLOTS>();

        best_score[global_id()] = 0;
        best_pos[global_id()] = u64::MAX;
        if global_id() == 0 {
            result_score[0] = 0;
            result_pos[0] = u64::MAX;
        }

        for d in 0..tile_rows + tiles_across - 1 {
            // Every phase fills its shared memory before reading it.
            stage_scores(&mut scores, matrix, alphabet);
            let first = if d >= tiles_across { d + 1 - tiles_across } else { 0 };
            let last = d.min(tile_rows - 1);
            let t = thread_idx();
            let mut tr = first + block_idx();
            while tr <= last {
                let tc = d - tr;
                let j0 = tc * tile_cols;
                let width = tile_cols.min(n - j0);
                let i0 = tr * tile_height + t * ROWS_PER_THREAD; // 0-based: matrix rows i0 + 1 …
                for c in block_stride(0..width) {
                    tile_b[c] = b[j0 + c] as u32;
                    top_h[c] = if tr > 0 { row_h[j0 + c] } else { 0 };
                    top_f[c] = if tr > 0 { row_f[j0 + c] } else { NEG };
                }
                let mut h = [0i32; ROWS_PER_THREAD];
                let mut e = [NEG; ROWS_PER_THREAD];
                let mut profile = [0u32; ROWS_PER_THREAD];
                let mut best = [0i32; ROWS_PER_THREAD];
                let mut best_c = [0u32; ROWS_PER_THREAD];
                let mut up = [0i32; 2]; // H and F above a thread's first row, then below its last
                for r in 0..ROWS_PER_THREAD {
                    let i = i0 + r;
                    profile[r] = if i < m { a[i] as u32 * STRIDE } else { STRIDE * STRIDE };
                    if i < m && tc > 0 {
                        h[r] = col_h[i];
                        e[r] = col_e[i];
                    }
                }
                let mut diag = 0i32; // H[i0 − 1][j − 1] for the first row
                if i0 < m && tc > 0 {
                    diag = if t > 0 {
                        col_h[i0 - 1]
                    } else if tr > 0 {
                        corner[tr]
                    } else {
                        0
                    };
                }
                if t == 0 && tr > 0 {
                    corner[tr] = row_h[j0 + width - 1]; // H[i0−1][j0+width−1]: the next tile's corner
                }
                sync_block(); // every border read above precedes every border write below
                for s in 0..width + block_dim() - 1 {
                    let c = s.wrapping_sub(t);
                    if c < width {
                        let from = (s + 1) % 2 * MAX_THREADS;
                        up[0] = if t > 0 { pass_h[from + t - 1] } else { top_h[c] };
                        up[1] = if t > 0 { pass_f[from + t - 1] } else { top_f[c] };
                        let next_diag = up[0];
                        let code = tile_b[c];
                        column(
                            &mut h,
                            &mut e,
                            &mut best,
                            &mut best_c,
                            &mut up,
                            &profile,
                            &scores,
                            code,
                            c,
                            diag,
                            open,
                            extend,
                        );
                        diag = next_diag;
                        let to = s % 2 * MAX_THREADS + t;
                        pass_h[to] = up[0];
                        pass_f[to] = up[1];
                        if t == block_dim() - 1 {
                            row_h[j0 + c] = up[0];
                            row_f[j0 + c] = up[1];
                        }
                    }
                    sync_block();
                }
                let g = global_id();
                for r in 0..ROWS_PER_THREAD {
                    let i = i0 + r;
                    if i < m {
                        col_h[i] = h[r];
                        col_e[i] = e[r];
                        if best[r] > 0 {
                            let pos = i as u64 * n as u64 + (j0 + best_c[r]) as u64;
                            keep_best(best_score, best_pos, g, best[r], pos);
                        }
                    }
                }
                tr += grid_dim();
            }
            grid_sync();
        }

        grid_best(best_score, best_pos, result_score, result_pos);
    }

    /// The low 12 bits of a hand-down word: the writing stripe's index modulo 2^11, and a
    /// set bit.
    const TAG_MASK: u64 = 4095;
    /// Handed-down `F` values are clamped to at least this: below `extend − open` every
    /// value gives the same `F` in the row below, since `H ≥ 0` there.
    const F_FLOOR: i32 = -131072;

    /// The hand-down word of a stripe's last row at one column: `H` (26 bits), `F` −
    /// [`F_FLOOR`] (26 bits), the stripe's tag and a set low bit, so that a zeroed word
    /// holds nothing.
    #[device]
    fn hand_word(h: i32, f: i32, stripe: u32) -> u64 {
        let f_code = (f.max(F_FLOOR) - F_FLOOR) as u64;
        ((h as u64) << 38) | (f_code << 12) | hand_tag(stripe)
    }

    /// The low 12 bits of the words that stripe `stripe` writes.
    #[device]
    fn hand_tag(stripe: u32) -> u64 {
        (((stripe & (MAX_STRIPE_BLOCKS - 1)) as u64) << 1) | 1
    }

    /// `H` of a hand-down word.
    #[device]
    fn hand_h(word: u64) -> i32 {
        (word >> 38) as i32
    }

    /// `F` of a hand-down word.
    #[device]
    fn hand_f(word: u64) -> i32 {
        ((word >> 12) & 67108863) as i32 + F_FLOOR
    }

    /// Rows of a thread's profile in one 16-byte chunk of `profile`.
    const PROFILE_CHUNK: u32 = 4;
    /// Chunks of a thread's profile for one residue code: the two loads of [`stripe_step`].
    const PROFILE_GROUPS: u32 = ROWS_PER_THREAD / PROFILE_CHUNK;

    /// Fills the thread's part of the stripe's `profile`: the substitution score of each of its
    /// rows `i0 …` (residues of `a`) against every residue code, laid out so that the scores of
    /// its rows against one code lie in [`ROWS_PER_THREAD`] / 4 chunks of 16 bytes: chunk
    /// `(code · 2 + g) · block_dim() + t` holds rows `4g … 4g + 3`. Whatever their codes, the
    /// lanes of a warp then read chunks in distinct bank groups (when `block_dim()` is a
    /// multiple of 4). Rows past the end of `a` score [`PADDING_SCORE`]. Only thread `t` reads
    /// what it writes.
    #[device]
    fn stage_profile(profile: &mut [i32], a: &[u8], matrix: &[i32], alphabet: u32, i0: u32, t: u32) {
        let m = a.len() as u32;
        for r in 0..ROWS_PER_THREAD {
            let i = i0 + r;
            let g = r / PROFILE_CHUNK;
            for code in 0..alphabet {
                let chunk = (code * PROFILE_GROUPS + g) * block_dim() + t;
                let slot = chunk * PROFILE_CHUNK + r % PROFILE_CHUNK;
                profile[slot] = if i < m { matrix[a[i] as u32 * alphabet + code] } else { PADDING_SCORE };
            }
        }
    }

    /// One step of a stripe's wavefront: thread `t` computes column `s − t` of its rows (when
    /// that is a column of `b`), passes its last row to thread `t + 1` through `pass_h`,
    /// `pass_f` (half `s % 2`), the stripe's last thread hands it down to the stripe below
    /// (`hand`), and the block meets at a `sync_block()`. `up` and `diag` carry the row above
    /// from one step to the next (see [`column`]); `ring_b`, `ring_h`, `ring_f` hold the staged
    /// columns.
    #[device]
    fn stripe_step(
        s: u32,
        k: u32,
        stripes: u32,
        n: u32,
        h: &mut [i32],
        e: &mut [i32],
        best: &mut [i32],
        best_c: &mut [u32],
        up: &mut [i32],
        diag: &mut [i32],
        profile: &[i32],
        ring_b: &[u32],
        ring_h: &[i32],
        ring_f: &[i32],
        pass_h: &mut [i32],
        pass_f: &mut [i32],
        hand: &mut [u64],
        open: i32,
        extend: i32,
    ) {
        let t = thread_idx();
        let threads = block_dim();
        let c = s.wrapping_sub(t);
        if c < n {
            let slot = c & (ring_b.len() as u32 - 1);
            let from = (s + 1) % 2 * threads;
            up[0] = if t > 0 { pass_h[from + t - 1] } else { ring_h[slot] };
            up[1] = if t > 0 { pass_f[from + t - 1] } else { ring_f[slot] };
            let next_diag = up[0];
            let code = ring_b[slot];
            let low = profile.load_chunk::<4>((code * PROFILE_GROUPS * threads + t) as usize);
            let high = profile.load_chunk::<4>(((code * PROFILE_GROUPS + 1) * threads + t) as usize);
            let scores = [low[0], low[1], low[2], low[3], high[0], high[1], high[2], high[3]];
            // The scores are already the rows' own: row r reads `scores[r]`.
            let rows = [0u32, 1, 2, 3, 4, 5, 6, 7];
            column(h, e, best, best_c, up, &rows, &scores, 0, c, diag[0], open, extend);
            diag[0] = next_diag;
            let to = s % 2 * threads + t;
            pass_h[to] = up[0];
            pass_f[to] = up[1];
            if t == threads - 1 && k + 1 < stripes {
                let word = hand_word(up[0], up[1], k);
                hand.store_relaxed(c, word);
            }
        }
        sync_block();
    }

    /// Steps `from .. to` of a stripe ([`stripe_step`]), two per loop iteration: a loop's
    /// branch and counter then come once per two steps. With the staging done once per
    /// chunk of steps (instead of checked at every step), this took the 2^17 × 2^17 alignment
    /// from 38.5 to 31.5 ms on an H200. A loop of one step per iteration in its place failed on
    /// the GPU with an illegal instruction at the kernel's last `grid_sync()` on grids of two
    /// blocks or more, unexplained (docs/journal.md, 2026-11-29 (night)).
    #[device]
    fn stripe_steps(
        from: u32,
        to: u32,
        k: u32,
        stripes: u32,
        n: u32,
        h: &mut [i32],
        e: &mut [i32],
        best: &mut [i32],
        best_c: &mut [u32],
        up: &mut [i32],
        diag: &mut [i32],
        profile: &[i32],
        ring_b: &[u32],
        ring_h: &[i32],
        ring_f: &[i32],
        pass_h: &mut [i32],
        pass_f: &mut [i32],
        hand: &mut [u64],
        open: i32,
        extend: i32,
    ) {
        for pair in 0..(to - from) / 2 {
            let s = from + 2 * pair;
            stripe_step(
                s, k, stripes, n, h, e, best, best_c, up, diag, profile, ring_b, ring_h, ring_f, pass_h, pass_f, hand,
                open, extend,
            );
            let next = s + 1;
            stripe_step(
                next, k, stripes, n, h, e, best, best_c, up, diag, profile, ring_b, ring_h, ring_f, pass_h, pass_f,
                hand, open, extend,
            );
        }
        if (to - from) % 2 == 1 {
            let last = to - 1;
            stripe_step(
                last, k, stripes, n, h, e, best, best_c, up, diag, profile, ring_b, ring_h, ring_f, pass_h, pass_f,
                hand, open, extend,
            );
        }
    }

    /// The same scores as [`smith_waterman`], computed in stripes: a block takes stripe `k`
    /// (`8 · block_dim()` rows, in the order blocks ask for them: `tickets[0]`) and sweeps
    /// every column as one wavefront, thread `t` computing column `s − t` of its eight rows
    /// at step `s`, as inside a tile. There are no tiles, so the wavefront fills and drains
    /// once per stripe instead of once per tile, and no `grid_sync()` between stripes.
    ///
    /// **Scores.** Each thread reads its rows' eight scores for a column in two 16-byte loads
    /// from its own part of `profile` ([`stage_profile`]), filled when the stripe starts:
    /// a warp's loads then meet no bank twice, where lookups in one shared matrix met about
    /// three lanes to a bank. The profile takes `alphabet · 32 · block_dim()`
    /// bytes of shared memory, which must fit a block ([`stripes_fit_block`](super::stripes_fit_block)).
    ///
    /// **Hand-down.** The stripe's last thread writes its last row, column by column, into
    /// `hand` (one `u64` per column of `b`, zero at launch): `H`, `F` and the stripe's tag in
    /// one word (`hand_word`), written with `store_relaxed`, so that the word is its own
    /// flag and needs no fence (a release store's fence, or an atomic exchange, would make
    /// every step's block barrier wait for the store's round trip: 60 ms instead of 41 at
    /// 2^17 × 2^17 on an H200). The stripe below stages it in shared memory, with the
    /// residues of `b`, [`CHUNK`] columns at a time, one chunk ahead: lanes of warp 0 read
    /// the words of the next chunk (`load_relaxed`) as a chunk of steps starts and store
    /// them half a chunk of steps later, waiting (`wait_until`) only for a word that
    /// still holds another stripe's tag. Stripes finish in order, so while stripe `k`
    /// reads a column, it holds what one of stripes `k − grid_dim() … k − 1` wrote there:
    /// tags modulo 2^11 tell them apart for grids up to [`MAX_STRIPE_BLOCKS`] blocks. Each
    /// stripe starts about `block_dim() + 1.5 · CHUNK` steps after the one above (two chunks
    /// ahead cost 2.7% more at 2^17 × 2^17).
    ///
    /// **Limits.** `H` and `F` take 26 bits in a word: scores up to [`MAX_STRIPE_SCORE`](super::MAX_STRIPE_SCORE).
    /// At most [`MAX_STRIPE_BLOCKS`] blocks (an assertion). `tickets` (one) and `hand`
    /// must be zero at launch, so a launch names its grid (no tuning runs).
    #[grid_phases(threads = 128)]
    pub fn smith_waterman_stripes(
        a: &[u8],
        b: &[u8],
        matrix: &[i32],
        alphabet: u32,
        open: i32,
        extend: i32,
        hand: &mut [u64],
        tickets: &mut [u32],
        best_score: &mut [i32],
        best_pos: &mut [u64],
        result_score: &mut [i32],
        result_pos: &mut [u64],
    ) {
        assert!(grid_dim() <= MAX_STRIPE_BLOCKS, "smith_waterman_stripes runs on at most 2048 blocks");
        let m = a.len() as u32;
        let n = b.len() as u32;
        let chunk = block_dim().min(CHUNK);
        let half = chunk / 2;
        let stripe_height = block_dim() * ROWS_PER_THREAD;
        let stripes = m.div_ceil(stripe_height);
        // The staged columns: a power of two above the `block_dim() + 1.5 · CHUNK` columns from
        // the oldest one a thread still reads to the newest one staged, with a margin.
        let ring = (block_dim() + 3 * CHUNK).next_power_of_two() as usize;
        let mut profile = shared_slice::<i32>((alphabet * ROWS_PER_THREAD * block_dim()) as usize);
        let mut ring_b = shared_slice::<u32>(ring);
        let mut ring_h = shared_slice::<i32>(ring);
        let mut ring_f = shared_slice::<i32>(ring);
        let mut pass_h = shared_slice::<i32>(2 * block_dim() as usize);
        let mut pass_f = shared_slice::<i32>(2 * block_dim() as usize);
        let mut share = shared_array::<u32, 1>();

        best_score[global_id()] = 0;
        best_pos[global_id()] = u64::MAX;
        if global_id() == 0 {
            result_score[0] = 0;
            result_pos[0] = u64::MAX;
        }
        let t = thread_idx();
        let ring_mask = ring as u32 - 1;
        loop {
            if t == 0 {
                share[0] = tickets.atomic_add(0, 1);
            }
            // Also orders the last stripe's reads of the rings before this one's writes.
            sync_block();
            let k = share[0];
            if k >= stripes {
                break;
            }
            let above = hand_tag(k.wrapping_sub(1));
            let i0 = k * stripe_height + t * ROWS_PER_THREAD; // 0-based: matrix rows i0 + 1 …
            let mut h = [0i32; ROWS_PER_THREAD];
            let mut e = [NEG; ROWS_PER_THREAD];
            let mut best = [0i32; ROWS_PER_THREAD];
            let mut best_c = [0u32; ROWS_PER_THREAD];
            let mut up = [0i32; 2]; // H and F above the thread's first row, then below its last
            let mut diag = [0i32; 1]; // H[i0 − 1][j − 1] for the first row
            stage_profile(&mut profile, a, matrix, alphabet, i0, t);
            // The first chunk, before the first step.
            for q in block_stride(0..n.min(chunk)) {
                ring_b[q] = b[q] as u32;
                if k > 0 {
                    wait_until(|| hand.load_acquire(q) & TAG_MASK == above);
                    let word = hand.load_acquire(q);
                    ring_h[q] = hand_h(word);
                    ring_f[q] = hand_f(word);
                } else {
                    ring_h[q] = 0;
                    ring_f[q] = NEG;
                }
            }
            let mut pending = 0u64;
            let mut pending_b = 0u32;
            sync_block();
            let steps = n + block_dim() - 1;
            for round in 0..steps.div_ceil(chunk) {
                let first = round * chunk;
                // Warp 0 stages column q, of the next chunk: reads it now…
                let q = first + chunk + t;
                if t < chunk && q < n {
                    pending_b = b[q] as u32;
                    if k > 0 {
                        pending = hand.load_relaxed(q);
                    }
                }
                let middle = (first + half).min(steps);
                stripe_steps(
                    first,
                    middle,
                    k,
                    stripes,
                    n,
                    &mut h,
                    &mut e,
                    &mut best,
                    &mut best_c,
                    &mut up,
                    &mut diag,
                    &profile,
                    &ring_b,
                    &ring_h,
                    &ring_f,
                    &mut pass_h,
                    &mut pass_f,
                    hand,
                    open,
                    extend,
                );
                // …and stores it half a chunk of steps later.
                if t < chunk && q < n {
                    if k > 0 && pending & TAG_MASK != above {
                        wait_until(|| hand.load_acquire(q) & TAG_MASK == above);
                        pending = hand.load_acquire(q);
                    }
                    let slot = q & ring_mask;
                    ring_b[slot] = pending_b;
                    ring_h[slot] = if k > 0 { hand_h(pending) } else { 0 };
                    ring_f[slot] = if k > 0 { hand_f(pending) } else { NEG };
                }
                let last = (first + chunk).min(steps);
                stripe_steps(
                    middle,
                    last,
                    k,
                    stripes,
                    n,
                    &mut h,
                    &mut e,
                    &mut best,
                    &mut best_c,
                    &mut up,
                    &mut diag,
                    &profile,
                    &ring_b,
                    &ring_h,
                    &ring_f,
                    &mut pass_h,
                    &mut pass_f,
                    hand,
                    open,
                    extend,
                );
            }
            let g = global_id();
            for r in 0..ROWS_PER_THREAD {
                let i = i0 + r;
                if i < m && best[r] > 0 {
                    let pos = i as u64 * n as u64 + best_c[r] as u64;
                    keep_best(best_score, best_pos, g, best[r], pos);
                }
            }
        }

        grid_best(best_score, best_pos, result_score, result_pos);
    }
}

pub use alignment::{smith_waterman, smith_waterman_stripes, CHUNK, MAX_STRIPE_BLOCKS, MAX_TILE_COLS, ROWS_PER_THREAD};

// `stripe_step` reads a thread's scores for a column as two 16-byte chunks of four rows.
const _: () = assert!(ROWS_PER_THREAD == 8, "a thread's scores are two chunks of four rows");

/// A local alignment's score and end, and how the kernel ran.
#[derive(Clone, Debug)]
pub struct Alignment {
    /// The best local alignment score (never negative).
    pub score: i32,
    /// 1-based end position in the first sequence (0 when `score` is 0).
    pub end_a: usize,
    /// 1-based end position in the second sequence (0 when `score` is 0).
    pub end_b: usize,
    /// The launch (blocks 0 and no time when a sequence was empty).
    pub report: LaunchReport,
}

impl Alignment {
    /// Score and end, comparable with [`align_reference`].
    pub fn hit(&self) -> LocalHit {
        LocalHit { score: self.score, end_a: self.end_a, end_b: self.end_b }
    }
}

/// Whether the kernel can align `a` against `b` with `scoring`: every code
/// below the alphabet's size, both lengths below 2^31, and
/// `max_score · min(m, n) ≤ 2^30` so that no score overflows `i32`.
pub fn check_input(a: &[u8], b: &[u8], scoring: &Scoring) -> std::result::Result<(), InputError> {
    let k = scoring.alphabet().len();
    for sequence in [a, b] {
        if let Some(position) = sequence.iter().position(|&c| usize::from(c) >= k) {
            return Err(InputError::UnknownLetter { position, letter: char::from(sequence[position]) });
        }
    }
    let too_long = InputError::TooLong { len_a: a.len(), len_b: b.len() };
    let longest = a.len().max(b.len()) as u64;
    if longest >= 1 << 31 || best_bound(a, b, scoring) > MAX_BEST {
        return Err(too_long);
    }
    Ok(())
}

/// Aligns `a` against `b` on `gpu`: in stripes ([`align_stripes`]) when the best score
/// cannot exceed [`MAX_STRIPE_SCORE`] and the stripes' score profile fits in a block's
/// shared memory ([`stripes_fit_block`]), else in tiles [`DEFAULT_TILE_COLS`] wide
/// ([`align_tiled`]).
pub fn align(
    gpu: &Gpu,
    launch: &Launch,
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
) -> std::result::Result<Alignment, AlignError> {
    check_input(a, b, scoring)?;
    if align_stripes_fits(a, b, scoring) {
        if let Some(alignment) = align_stripes_checked(gpu, launch, a, b, scoring)? {
            return Ok(alignment);
        }
    }
    Ok(align_checked(gpu, launch, a, b, scoring, DEFAULT_TILE_COLS)?)
}

/// Aligns `a` against `b` on `gpu` with [`smith_waterman_stripes`]: stripes of
/// [`ROWS_PER_THREAD`] times `launch`'s block size in rows. Without a grid in `launch`, one
/// block per stripe, capped at the co-resident grid and at [`MAX_STRIPE_BLOCKS`]. An empty
/// sequence scores 0 without a launch.
///
/// Input that [`check_input`] refuses, whose best score could exceed
/// [`MAX_STRIPE_SCORE`] ([`InputError::TooLongForStripes`]), or whose alphabet at this block
/// size does not fit in shared memory ([`InputError::TooManyThreadsForStripes`], see
/// [`stripes_fit_block`]), is [`AlignError::Input`].
pub fn align_stripes(
    gpu: &Gpu,
    launch: &Launch,
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
) -> std::result::Result<Alignment, AlignError> {
    check_input(a, b, scoring)?;
    if !align_stripes_fits(a, b, scoring) {
        return Err(InputError::TooLongForStripes { len_a: a.len(), len_b: b.len() }.into());
    }
    match align_stripes_checked(gpu, launch, a, b, scoring)? {
        Some(alignment) => Ok(alignment),
        None => {
            let threads = launch.threads_for(&smith_waterman_stripes::KERNEL);
            Err(InputError::TooManyThreadsForStripes { threads, alphabet: scoring.alphabet().len() }.into())
        }
    }
}

/// Whether [`align_stripes`] takes these sequences and scoring (as [`align`] then does):
/// their best score cannot exceed [`MAX_STRIPE_SCORE`].
pub fn align_stripes_fits(a: &[u8], b: &[u8], scoring: &Scoring) -> bool {
    best_bound(a, b, scoring) <= MAX_STRIPE_SCORE
}

/// Whether [`smith_waterman_stripes`] runs with `launch`'s block size for `scoring`: its score
/// profile, `alphabet · 32 · block_dim()` bytes, and its staged columns fit in a block's shared
/// memory on `gpu` (on an H200, protein up to 256 threads and DNA up to 1024). Answers with
/// a configuration query, without a launch.
pub fn stripes_fit_block(gpu: &Gpu, launch: &Launch, scoring: &Scoring) -> Result<bool> {
    let inputs = StripeInputs {
        a: gpu.zeros(0)?,
        b: gpu.zeros(0)?,
        matrix: gpu.zeros(0)?,
        hand: gpu.zeros(0)?,
        tickets: gpu.zeros(0)?,
    };
    fits_block(inputs.launch_config(gpu, launch, scoring))
}

/// Whether a configuration query found the kernel's shared memory within a block: `false`
/// for [`Error::DynamicSharedMemoryLimit`](crate::Error::DynamicSharedMemoryLimit), the
/// query's other errors passed on.
fn fits_block(config: Result<LaunchConfig>) -> Result<bool> {
    match config {
        Ok(_) => Ok(true),
        Err(crate::Error::DynamicSharedMemoryLimit { .. }) => Ok(false),
        Err(error) => Err(error),
    }
}

/// The buffers [`smith_waterman_stripes`] reads, and its hand-down row and ticket.
struct StripeInputs {
    a: DeviceBuffer<u8>,
    b: DeviceBuffer<u8>,
    matrix: DeviceBuffer<i32>,
    hand: DeviceBuffer<u64>,
    tickets: DeviceBuffer<u32>,
}

impl StripeInputs {
    /// `smith_waterman_stripes::launch_config` at `launch`'s block size: the shared slices
    /// depend on the alphabet and the block size alone, so these buffers also stand in for the
    /// outputs (whose lengths the block size given keeps out of the query).
    fn launch_config(&self, gpu: &Gpu, launch: &Launch, scoring: &Scoring) -> Result<LaunchConfig> {
        let threads = launch.threads_for(&smith_waterman_stripes::KERNEL);
        smith_waterman_stripes::launch_config(
            gpu,
            &launch.clone().threads(threads),
            &self.a,
            &self.b,
            &self.matrix,
            scoring.alphabet().len() as u32,
            scoring.open(),
            scoring.extend(),
            &self.hand,
            &self.tickets,
            &self.matrix,
            &self.hand,
            &self.matrix,
            &self.hand,
        )
    }
}

/// An upper bound of the best score: the largest substitution score times the shorter length.
fn best_bound(a: &[u8], b: &[u8], scoring: &Scoring) -> u64 {
    scoring.max_score().max(1) as u64 * a.len().min(b.len()) as u64
}

/// [`align_stripes`] for input that it accepts; `None`, without a launch, when the stripes'
/// score profile does not fit `launch`'s block ([`stripes_fit_block`]).
fn align_stripes_checked(
    gpu: &Gpu,
    launch: &Launch,
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
) -> Result<Option<Alignment>> {
    let threads = launch.threads_for(&smith_waterman_stripes::KERNEL);
    if a.is_empty() || b.is_empty() {
        let report = LaunchReport::no_launch(launch.selected_barrier());
        return Ok(Some(Alignment { score: 0, end_a: 0, end_b: 0, report }));
    }
    let stripes = a.len().div_ceil((threads * ROWS_PER_THREAD) as usize);
    let work = stripes.min(MAX_STRIPE_BLOCKS as usize);
    let inputs = StripeInputs {
        a: gpu.upload(a)?,
        b: gpu.upload(b)?,
        matrix: gpu.upload(scoring.matrix())?,
        hand: gpu.zeros(b.len())?,
        tickets: gpu.zeros(1)?,
    };
    if !fits_block(inputs.launch_config(gpu, launch, scoring))? {
        return Ok(None);
    }
    let launch = super::grid_for_work_with(launch, &smith_waterman_stripes::KERNEL, work, |shape| {
        inputs.launch_config(gpu, shape, scoring)
    })?;
    let slots = launch.requested_blocks().unwrap_or(1) as usize * threads as usize;
    let StripeInputs { a: da, b: db, matrix: dm, mut hand, mut tickets } = inputs;
    let mut best_score: DeviceBuffer<i32> = gpu.zeros(slots)?;
    let mut best_pos: DeviceBuffer<u64> = gpu.zeros(slots)?;
    let mut result_score: DeviceBuffer<i32> = gpu.zeros(1)?;
    let mut result_pos: DeviceBuffer<u64> = gpu.zeros(1)?;
    let report = smith_waterman_stripes::launch_with(
        gpu,
        &launch,
        &da,
        &db,
        &dm,
        scoring.alphabet().len() as u32,
        scoring.open(),
        scoring.extend(),
        &mut hand,
        &mut tickets,
        &mut best_score,
        &mut best_pos,
        &mut result_score,
        &mut result_pos,
    )?;
    alignment(gpu, report, &result_score, &result_pos, b.len()).map(Some)
}

/// Aligns `a` against `b` on `gpu` with tiles of [`ROWS_PER_THREAD`] times
/// `launch`'s block size in rows by `tile_cols` columns
/// (1 to [`MAX_TILE_COLS`]; other values are clamped). Without a grid in `launch`, one
/// block per tile of the longest tile diagonal, capped at the co-resident
/// grid (and, for LFS, at the block size). An empty sequence scores 0
/// without a launch.
///
/// Input that [`check_input`] refuses is [`AlignError::Input`].
pub fn align_tiled(
    gpu: &Gpu,
    launch: &Launch,
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    tile_cols: u32,
) -> std::result::Result<Alignment, AlignError> {
    check_input(a, b, scoring)?;
    Ok(align_checked(gpu, launch, a, b, scoring, tile_cols)?)
}

/// [`align_tiled`] for input that [`check_input`] accepts.
fn align_checked(
    gpu: &Gpu,
    launch: &Launch,
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    tile_cols: u32,
) -> Result<Alignment> {
    let threads = launch.threads_for(&smith_waterman::KERNEL);
    if a.is_empty() || b.is_empty() {
        let report = LaunchReport::no_launch(launch.selected_barrier());
        return Ok(Alignment { score: 0, end_a: 0, end_b: 0, report });
    }
    let tile_cols = tile_cols.clamp(1, MAX_TILE_COLS);
    let tile_rows = a.len().div_ceil((threads * ROWS_PER_THREAD) as usize);
    // The longest tile diagonal bounds the tiles that can run at once.
    let widest = tile_rows.min(b.len().div_ceil(tile_cols as usize));
    let launch = super::grid_for_work(gpu, launch, &smith_waterman::KERNEL, widest)?;
    let slots = launch.requested_blocks().unwrap_or(1) as usize * threads as usize;
    let (da, db, dm) = (gpu.upload(a)?, gpu.upload(b)?, gpu.upload(scoring.matrix())?);
    let (mut row_h, mut row_f): (DeviceBuffer<i32>, DeviceBuffer<i32>) = (gpu.zeros(b.len())?, gpu.zeros(b.len())?);
    let (mut col_h, mut col_e): (DeviceBuffer<i32>, DeviceBuffer<i32>) = (gpu.zeros(a.len())?, gpu.zeros(a.len())?);
    let mut corner: DeviceBuffer<i32> = gpu.zeros(tile_rows)?;
    let mut best_score: DeviceBuffer<i32> = gpu.zeros(slots)?;
    let mut best_pos: DeviceBuffer<u64> = gpu.zeros(slots)?;
    let mut result_score: DeviceBuffer<i32> = gpu.zeros(1)?;
    let mut result_pos: DeviceBuffer<u64> = gpu.zeros(1)?;
    let report = smith_waterman::launch_with(
        gpu,
        &launch,
        &da,
        &db,
        &dm,
        scoring.alphabet().len() as u32,
        scoring.open(),
        scoring.extend(),
        tile_cols,
        &mut row_h,
        &mut row_f,
        &mut col_h,
        &mut col_e,
        &mut corner,
        &mut best_score,
        &mut best_pos,
        &mut result_score,
        &mut result_pos,
    )?;
    alignment(gpu, report, &result_score, &result_pos, b.len())
}

/// The alignment a kernel left in `result_score[0]` and `result_pos[0]` (a row-major
/// position in a matrix `n` columns wide).
fn alignment(
    gpu: &Gpu,
    report: LaunchReport,
    result_score: &DeviceBuffer<i32>,
    result_pos: &DeviceBuffer<u64>,
    n: usize,
) -> Result<Alignment> {
    let score = gpu.download(result_score)?[0];
    let pos = gpu.download(result_pos)?[0];
    let (end_a, end_b) = if score > 0 {
        let n = n as u64;
        ((pos / n) as usize + 1, (pos % n) as usize + 1)
    } else {
        (0, 0)
    };
    Ok(Alignment { score, end_a, end_b, report })
}

/// `grid_sync()`s the kernel crosses for sequences of `m` and `n` residues:
/// one after each tile diagonal and one before the final position search.
pub fn grid_syncs(m: usize, n: usize, threads: u32, tile_cols: u32) -> u32 {
    if m == 0 || n == 0 {
        return 0;
    }
    let tile_rows = m.div_ceil((threads.max(1) * ROWS_PER_THREAD) as usize);
    let tiles_across = n.div_ceil(tile_cols.clamp(1, MAX_TILE_COLS) as usize);
    (tile_rows + tiles_across) as u32
}
