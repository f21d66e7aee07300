//! The facts that `#[grid_phases]` (the `gsync-macros` crate) and the gsync runtime must
//! agree on, defined once. The macro writes them into the kernels it generates, as Rust
//! values and as CUDA text; the runtime reads them back when it compiles and launches a
//! kernel. Both crates depend on this one, so a fact cannot drift between them.
//!
//! - [`Axes`]: which per-axis builtins a kernel reads, and so which shapes it may run in;
//! - [`RefusedBlockSizes`]: the block sizes a kernel's `BLOCK_SIZE` constants rule out, as
//!   ascending ranges of [`MAX_BLOCK_SIZE`] at most;
//! - [`HALF_MARKER`]: the first line of a kernel body that needs the half precision prelude;
//! - [`TRAILING_PARAMS`]: the C parameters the runtime appends to every generated kernel's,
//!   then [`PROFILE_PARAMETERS_MACRO`];
//! - [`BLOCK_SIZE_MACRO`]: the CUDA name of the block size, which the runtime defines;
//! - [`LAUNCH_BOUNDS_MACRO`]: the CUDA name of a kernel's launch bounds, which the runtime
//!   defines;
//! - [`MAX_STATIC_SHARED_BYTES`]: what a block's shared arrays may take in all.
//!
//! ```
//! use gsync_contract::{Axes, RefusedBlockSizes, HALF_MARKER};
//! assert_eq!(Axes::of_builtin("thread_idx_y"), Axes { block: true, grid: false });
//! let refused = [RefusedBlockSizes { first: 1, last: 31, reason: "too small" }];
//! assert_eq!(RefusedBlockSizes::refusing(&refused, 16).map(|r| r.reason), Some("too small"));
//! assert!(gsync_contract::uses_half(&format!("{HALF_MARKER}extern \"C\" __global__ void k() {{}}")));
//! ```
#![no_std]

#[cfg(test)]
extern crate std;

use core::fmt;

/// The most threads a block may have on every CUDA GPU: the block sizes the macro checks a
/// kernel's `BLOCK_SIZE` constants at, and the largest one the runtime launches.
pub const MAX_BLOCK_SIZE: u32 = 1024;

/// Threads per block when neither the launch nor the kernel says.
pub const DEFAULT_THREADS: u32 = 256;

/// The most threads an SM holds at once on any GPU gsync supports (2048 on compute
/// capability 8.0 and 9.0; 1024 or 1536 on others): the ceiling of
/// `#[grid_phases(blocks_per_sm = N)]`, whose blocks of the default size must fit it together.
pub const MAX_THREADS_PER_SM: u32 = 2048;

/// The most blocks an SM holds at once on any GPU gsync supports (32 on compute capability
/// 8.0 and 9.0; 16 to 24 on others): the largest `#[grid_phases(blocks_per_sm = N)]`, and the
/// most a launch of small blocks asks its launch bounds for.
pub const MAX_BLOCKS_PER_SM: u32 = 32;

/// The most bytes the shared arrays of a block may take together without the opt-in to
/// more: 48 KiB on every CUDA GPU. The macro refuses larger static shared arrays, and the
/// emulator allows a block no more.
pub const MAX_STATIC_SHARED_BYTES: u32 = 48 * 1024;

/// The CUDA macro that holds the block size of a translation unit: the runtime defines it
/// (`#define GSYNC_BLOCK_SIZE 256`) ahead of each kernel it compiles, and the generated CUDA
/// reads it (`BLOCK_SIZE`, `__launch_bounds__`).
pub const BLOCK_SIZE_MACRO: &str = "GSYNC_BLOCK_SIZE";

/// The CUDA macro that holds a kernel's launch bounds, the arguments of its
/// `__launch_bounds__`: the runtime defines it ahead of each kernel, as the block size alone
/// for a kernel on one GPU (`#define GSYNC_LAUNCH_BOUNDS GSYNC_BLOCK_SIZE`), and for a PE of a
/// team with the blocks per SM the same kernel keeps on one GPU as the minimum
/// (`GSYNC_BLOCK_SIZE, 8`), so that the spanning barrier's code costs it no occupancy. (An
/// explicit minimum of 1 is not the same as none: the compiler then takes more registers.)
pub const LAUNCH_BOUNDS_MACRO: &str = "GSYNC_LAUNCH_BOUNDS";

/// Which per-axis builtins a kernel reads. The macro computes it and writes it into the
/// kernel's description; the runtime then refuses 2-D and 3-D shapes to a kernel that reads
/// none, and requires a named shape of one that reads any.
///
/// ```
/// use gsync_contract::Axes;
/// let axes = ["thread_idx_x", "grid_dim_z"].into_iter().map(Axes::of_builtin).fold(Axes::NONE, Axes::union);
/// assert_eq!(axes, Axes { block: true, grid: true });
/// assert!(!Axes::of_builtin("thread_idx").any(), "linear builtins read no axis");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Axes {
    /// Whether it reads one of [`Axes::BLOCK_BUILTINS`] (`thread_idx_x()` …
    /// `block_dim_z()`): its launch must name the block's shape.
    pub block: bool,
    /// Whether it reads one of [`Axes::GRID_BUILTINS`] (`block_idx_x()` … `grid_dim_z()`):
    /// its launch must name the grid's shape.
    pub grid: bool,
}

impl Axes {
    /// A kernel that reads no per-axis builtin: it runs in one-dimensional shapes only.
    pub const NONE: Axes = Axes { block: false, grid: false };

    /// The per-axis builtins of the block: reading one sets [`Axes::block`].
    pub const BLOCK_BUILTINS: [&'static str; 6] =
        ["thread_idx_x", "thread_idx_y", "thread_idx_z", "block_dim_x", "block_dim_y", "block_dim_z"];

    /// The per-axis builtins of the grid: reading one sets [`Axes::grid`].
    pub const GRID_BUILTINS: [&'static str; 6] =
        ["block_idx_x", "block_idx_y", "block_idx_z", "grid_dim_x", "grid_dim_y", "grid_dim_z"];

    /// Whether the kernel reads any per-axis builtin, and so may run in 2-D and 3-D shapes.
    pub const fn any(self) -> bool {
        self.block || self.grid
    }

    /// The axes read by a kernel that reads those of `self` and those of `other`.
    pub const fn union(self, other: Axes) -> Axes {
        Axes { block: self.block || other.block, grid: self.grid || other.grid }
    }

    /// The axes that reading the builtin `name` (without parentheses) records: none for a
    /// linear builtin or any other name.
    pub fn of_builtin(name: &str) -> Axes {
        Axes { block: Axes::BLOCK_BUILTINS.contains(&name), grid: Axes::GRID_BUILTINS.contains(&name) }
    }

    /// The per-axis builtins whose reading records exactly `self`'s axes.
    pub fn builtins(self) -> impl Iterator<Item = &'static str> {
        let block: &[&str] = if self.block { &Axes::BLOCK_BUILTINS } else { &[] };
        let grid: &[&str] = if self.grid { &Axes::GRID_BUILTINS } else { &[] };
        block.iter().chain(grid).copied()
    }
}

/// Block sizes `first..=last` that a kernel cannot run with, and why: a constant it
/// computes from `BLOCK_SIZE` fails to evaluate there (as rustc's evaluation would), sizes an
/// array to 0 or less, or makes its arrays larger than CUDA allows.
///
/// The macro checks every block size from 1 to [`MAX_BLOCK_SIZE`] and records the sizes it
/// refuses as ranges ([`RefusedBlockSizes::record`]): ascending, disjoint, and never two
/// adjacent ones with the same reason ([`RefusedBlockSizes::well_formed`]). The runtime
/// refuses a launch whose block size one of them holds ([`RefusedBlockSizes::refusing`]).
/// The reason is a `&'static str` in the generated description, and whatever the macro
/// builds it as (a `String`) while it checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RefusedBlockSizes<Reason = &'static str> {
    /// The smallest block size of the range.
    pub first: u32,
    /// The largest block size of the range.
    pub last: u32,
    /// Why, e.g. "the length of `tile` is 0 with BLOCK_SIZE = 16; an array length must be
    /// positive".
    pub reason: Reason,
}

impl<Reason: PartialEq> RefusedBlockSizes<Reason> {
    /// Whether the range holds block size `threads`.
    pub fn contains(&self, threads: u32) -> bool {
        (self.first..=self.last).contains(&threads)
    }

    /// The range of `ranges` that refuses block size `threads`, if one does.
    pub fn refusing(ranges: &[Self], threads: u32) -> Option<&Self> {
        ranges.iter().find(|r| r.contains(threads))
    }

    /// Records that block size `threads` is refused for `reason`, after every smaller size was
    /// recorded: it extends `last` (the latest range) when it is the next size refused for the
    /// same reason, and otherwise returns the range to add after it.
    pub fn record(last: Option<&mut Self>, threads: u32, reason: Reason) -> Option<Self> {
        match last {
            Some(last) if last.last.checked_add(1) == Some(threads) && last.reason == reason => {
                last.last = threads;
                None
            }
            _ => Some(RefusedBlockSizes { first: threads, last: threads, reason }),
        }
    }

    /// Whether `ranges` is what the macro records: each range within `1..=MAX_BLOCK_SIZE`,
    /// in ascending order without overlap, and no two adjacent ones with the same reason.
    pub fn well_formed(ranges: &[Self]) -> bool {
        let each = ranges.iter().all(|r| 1 <= r.first && r.first <= r.last && r.last <= MAX_BLOCK_SIZE);
        let apart = ranges.windows(2).all(|w| {
            let adjacent = w[0].last + 1 == w[1].first;
            w[0].last < w[1].first && !(adjacent && w[0].reason == w[1].reason)
        });
        each && apart
    }
}

/// The first line of the body of a kernel that uses `f16` or `bf16`: the macro writes it, and
/// the runtime compiles only such a kernel with its half precision prelude (CUDA's
/// `cuda_fp16.h` and `cuda_bf16.h`, whose headers take NVRTC a while).
pub const HALF_MARKER: &str = "// gsync: uses f16/bf16 (core/half.cuh)\n";

/// Whether a kernel body the macro generated uses `f16` or `bf16` (begins with
/// [`HALF_MARKER`]).
pub fn uses_half(body: &str) -> bool {
    body.starts_with(HALF_MARKER)
}

/// One of the C parameters that end every generated kernel's parameter list, after the
/// user's: the runtime passes them, in the order of [`TRAILING_PARAMS`].
///
/// Its [`Display`](fmt::Display) is its declaration in the kernel's parameter list:
///
/// ```
/// use gsync_contract::TrailingParam;
/// assert_eq!(TrailingParam::Status.to_string(), "gsync_status_t* __restrict__ gsync_status");
/// assert_eq!(TrailingParam::NextLaunch.to_string(), "const gsync_next_launch_t gsync_next_launch");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TrailingParam {
    /// The launch's barrier state: the barrier's words, and the header with its sequence,
    /// abort flag and deadline.
    BarrierState,
    /// The launch's status word: the first fault of the launch, which the runtime reads back.
    Status,
    /// Passed by value: the header line, and the count of words to zero, of the barrier state
    /// that the next launch with the same words will use, which the kernel writes at its start
    /// so that the host need not (a null state: nothing to prepare).
    NextLaunch,
}

/// The trailing C parameters of every generated kernel (fused or a segment), in order. A
/// profiled kernel has [`PROFILE_PARAMETERS_MACRO`]'s after them.
pub const TRAILING_PARAMS: [TrailingParam; 3] =
    [TrailingParam::BarrierState, TrailingParam::Status, TrailingParam::NextLaunch];

impl TrailingParam {
    /// Its C type: a pointer to device memory the runtime allocates, or a structure passed by
    /// value.
    pub const fn c_type(self) -> &'static str {
        match self {
            TrailingParam::BarrierState => "u32*",
            TrailingParam::Status => "gsync_status_t*",
            TrailingParam::NextLaunch => "gsync_next_launch_t",
        }
    }

    /// Whether it is a pointer (declared `__restrict__`) rather than a value (declared `const`).
    pub const fn is_pointer(self) -> bool {
        !matches!(self, TrailingParam::NextLaunch)
    }

    /// Its C name, which the generated kernel body and the barrier fragments read.
    pub const fn name(self) -> &'static str {
        match self {
            TrailingParam::BarrierState => "gsync_barrier_state",
            TrailingParam::Status => "gsync_status",
            TrailingParam::NextLaunch => "gsync_next_launch",
        }
    }
}

impl fmt::Display for TrailingParam {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_pointer() {
            write!(f, "{} __restrict__ {}", self.c_type(), self.name())
        } else {
            write!(f, "const {} {}", self.c_type(), self.name())
        }
    }
}

/// The statement every generated kernel begins with (after its shared arrays): it writes the
/// barrier state of the launch that follows with the same scratch ([`TrailingParam::NextLaunch`]).
/// The runtime writes that state itself for a kernel without it (one written by hand).
pub const PREPARE_NEXT_LAUNCH: &str = "gsync::prepare_next_launch(gsync_next_launch);";

/// The CUDA macro that ends a profiled kernel's parameter list, after [`TRAILING_PARAMS`]:
/// the runtime's profile hooks define it as the profile's parameters (and as nothing for a
/// kernel that is not profiled), and pass them after the trailing ones.
pub const PROFILE_PARAMETERS_MACRO: &str = "GSYNC_PROFILE_PARAMETERS";

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;
    use std::string::{String, ToString};
    use std::vec::Vec;

    #[test]
    fn every_axes_value_round_trips_through_its_builtins() {
        for block in [false, true] {
            for grid in [false, true] {
                let axes = Axes { block, grid };
                let read = axes.builtins().map(Axes::of_builtin).fold(Axes::NONE, Axes::union);
                assert_eq!(read, axes);
                assert_eq!(axes.any(), axes.builtins().next().is_some());
            }
        }
    }

    #[test]
    fn a_builtin_reads_at_most_one_axis_group_and_linear_ones_none() {
        for name in Axes::BLOCK_BUILTINS.iter().chain(&Axes::GRID_BUILTINS) {
            let axes = Axes::of_builtin(name);
            assert!(axes.block != axes.grid, "{name}");
        }
        for linear in ["thread_idx", "block_idx", "block_dim", "grid_dim", "global_id", "lane_id"] {
            assert_eq!(Axes::of_builtin(linear), Axes::NONE, "{linear}");
        }
    }

    /// The ranges [`RefusedBlockSizes::record`] makes of a verdict for every block size.
    fn record_all(verdict: impl Fn(u32) -> Option<String>) -> Vec<RefusedBlockSizes<String>> {
        let mut ranges: Vec<RefusedBlockSizes<String>> = Vec::new();
        for threads in 1..=MAX_BLOCK_SIZE {
            let Some(reason) = verdict(threads) else { continue };
            if let Some(range) = RefusedBlockSizes::record(ranges.last_mut(), threads, reason) {
                ranges.push(range);
            }
        }
        ranges
    }

    #[test]
    fn refused_block_sizes_round_trip_through_their_ranges() {
        let verdicts: [fn(u32) -> Option<String>; 5] = [
            |_| None,
            |t| Some(format!("{}", t % 3)),
            |t| (t < 32).then(|| "too small".to_string()),
            |t| (t > 768).then(|| "too large".to_string()),
            |t| match t {
                1..=16 => Some("a".to_string()),
                17..=20 => Some("b".to_string()),
                100 | 102 => Some("b".to_string()),
                1024 => Some("c".to_string()),
                _ => None,
            },
        ];
        for verdict in verdicts {
            let ranges = record_all(verdict);
            assert!(RefusedBlockSizes::well_formed(&ranges), "{ranges:?}");
            for threads in 1..=MAX_BLOCK_SIZE {
                let decoded = RefusedBlockSizes::refusing(&ranges, threads).map(|r| r.reason.clone());
                assert_eq!(decoded, verdict(threads), "block size {threads}");
            }
        }
        assert_eq!(record_all(|t| (t > 768).then(|| "x".to_string())).len(), 1, "one reason, one range");
    }

    #[test]
    fn malformed_ranges_are_told_apart() {
        let r = |first, last, reason| RefusedBlockSizes { first, last, reason };
        assert!(RefusedBlockSizes::well_formed(&[r(1, 2, "a"), r(3, 3, "b"), r(5, 1024, "b")]));
        assert!(!RefusedBlockSizes::well_formed(&[r(0, 2, "a")]), "block size 0");
        assert!(!RefusedBlockSizes::well_formed(&[r(1, 1025, "a")]), "beyond the bound");
        assert!(!RefusedBlockSizes::well_formed(&[r(5, 6, "a"), r(1, 2, "b")]), "descending");
        assert!(!RefusedBlockSizes::well_formed(&[r(1, 6, "a"), r(6, 7, "b")]), "overlapping");
        assert!(!RefusedBlockSizes::well_formed(&[r(1, 2, "a"), r(3, 4, "a")]), "one range split in two");
        assert!(!RefusedBlockSizes::well_formed(&[r(4, 3, "a")]), "empty");
    }

    #[test]
    fn the_half_marker_is_one_comment_line_that_round_trips() {
        assert!(HALF_MARKER.starts_with("//") && HALF_MARKER.ends_with('\n'));
        assert_eq!(HALF_MARKER.matches('\n').count(), 1, "the marker must not swallow the body");
        let body = "extern \"C\" __global__ void k(f16* a) {}\n";
        assert!(uses_half(&format!("{HALF_MARKER}{body}")));
        assert!(!uses_half(body));
        assert!(!uses_half(&format!("{body}{HALF_MARKER}")), "only the first line marks");
    }

    #[test]
    fn trailing_params_declare_distinct_restricted_pointers_then_the_next_launch() {
        let declarations: Vec<String> = TRAILING_PARAMS.iter().map(ToString::to_string).collect();
        assert_eq!(
            declarations,
            [
                "u32* __restrict__ gsync_barrier_state",
                "gsync_status_t* __restrict__ gsync_status",
                "const gsync_next_launch_t gsync_next_launch"
            ]
        );
        for p in TRAILING_PARAMS.iter().filter(|p| p.is_pointer()) {
            let declaration = p.to_string();
            let (ty, name) = declaration.split_once(" __restrict__ ").expect("a restricted pointer");
            assert_eq!((ty, name), (p.c_type(), p.name()), "the declaration reads back");
            assert!(ty.ends_with('*'));
        }
        let mut names: Vec<&str> = TRAILING_PARAMS.iter().map(|p| p.name()).collect();
        names.dedup();
        assert_eq!(names.len(), TRAILING_PARAMS.len());
    }
}
