//! The checks that keep a launch's block and grid shapes within CUDA's limits and the
//! kernel's meaning, and its block size out of the sizes the kernel's constants rule out.

use crate::core::dims::{Dim3, RefusedBlockSizes, MAX_BLOCK_DIM, MAX_GRID_DIM};
use crate::core::error::{Error, Result};
use crate::core::kernel::KernelSpec;
use crate::core::launch::Launch;

/// Refuses a block size of `threads` that `kernel`'s constants rule out.
pub(crate) fn check_block_size(kernel: &KernelSpec, threads: u32) -> Result<()> {
    match RefusedBlockSizes::refusing(kernel.refused_block_sizes, threads) {
        Some(refused) => {
            Err(Error::RefusedBlockSize { kernel: kernel.name.to_owned(), threads, reason: refused.reason.to_owned() })
        }
        None => Ok(()),
    }
}

/// Checks the block and grid shapes `launch` names for `kernel`: every axis at least 1 and
/// within CUDA's limits, a block of at most `max_threads` threads, a shape of more than one
/// dimension only for a kernel that reads per-axis builtins, and a named shape for every
/// kernel that reads the per-axis builtins of it (the tuner never picks one: it could not know
/// what the kernel's axes mean).
pub(crate) fn check_shape(kernel: &KernelSpec, launch: &Launch, max_threads: u32) -> Result<()> {
    let refuse = |reason: String| Err(Error::InvalidShape { kernel: kernel.name.to_owned(), reason });
    let axes = kernel.axes;
    if axes.block && launch.requested_threads().is_none() {
        return refuse(
            "it reads per-axis thread indices (thread_idx_x() … block_dim_z()), so the runtime cannot pick its \
             block shape; name it with Launch::threads_xyz(x, y, z) (or Launch::threads(n) for n × 1 × 1)"
                .to_owned(),
        );
    }
    if axes.grid && launch.requested_blocks().is_none() {
        return refuse(
            "it reads per-axis block indices (block_idx_x() … grid_dim_z()), so the runtime cannot pick its grid \
             shape; name it with Launch::blocks_xyz(x, y, z) (or Launch::blocks(n) for n × 1 × 1)"
                .to_owned(),
        );
    }
    if let Some(block) = launch.requested_block_shape() {
        if let Some(reason) = extent_error("block", "threads", block, MAX_BLOCK_DIM, "Launch::threads_xyz") {
            return refuse(reason);
        }
        if block.count() > u64::from(max_threads) {
            return refuse(format!(
                "a block of {block} threads has {} threads, more than the {max_threads} this GPU allows; make \
                 x · y · z at most {max_threads}",
                block.count()
            ));
        }
        if !block.is_linear() && !axes.any() {
            return refuse(one_dimensional("block", block, "threads"));
        }
    }
    if let Some(grid) = launch.requested_grid_shape() {
        if let Some(reason) = extent_error("grid", "blocks", grid, MAX_GRID_DIM, "Launch::blocks_xyz") {
            return refuse(reason);
        }
        if grid.count() > u64::from(u32::MAX) {
            return refuse(format!(
                "a grid of {grid} blocks has {} blocks, more than the 2^32 - 1 a launch can count; give fewer",
                grid.count()
            ));
        }
        if !grid.is_linear() && !axes.any() {
            return refuse(one_dimensional("grid", grid, "blocks"));
        }
    }
    Ok(())
}

/// Why an extent with an axis of 0 or past `max` cannot run, if it cannot.
fn extent_error(what: &str, unit: &str, extent: Dim3, max: Dim3, setter: &str) -> Option<String> {
    let axes = [("x", extent.x, max.x), ("y", extent.y, max.y), ("z", extent.z, max.z)];
    let (axis, n, limit) = axes.into_iter().find(|&(_, n, limit)| n == 0 || n > limit)?;
    Some(format!(
        "a {what} of {extent} {unit} has {n} along {axis}, where CUDA allows 1 to {limit} (at most {}, {}, {} \
         along x, y, z); pass extents in those ranges to {setter}",
        max.x, max.y, max.z
    ))
}

/// Why a kernel that reads no per-axis builtin cannot run in `extent`.
fn one_dimensional(what: &str, extent: Dim3, unit: &str) -> String {
    format!(
        "it reads no per-axis index (thread_idx_x(), block_idx_y(), …), so it runs in one-dimensional shapes \
         only, and this {what} is {extent} {unit}; launch it with {} {} {unit} in a line, or read a per-axis \
         index in the kernel",
        if what == "block" { "Launch::threads" } else { "Launch::blocks" },
        extent.count()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::dims::{Axes, RefusedBlockSizes};
    use crate::core::kernel::tests::SMOOTH;

    /// A kernel that reads the per-axis indices of its block and grid.
    static PLANAR: KernelSpec = KernelSpec { axes: Axes { block: true, grid: true }, ..SMOOTH };

    fn reason(kernel: &KernelSpec, launch: Launch) -> String {
        match check_shape(kernel, &launch, 1024) {
            Err(Error::InvalidShape { reason, .. }) => reason,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_shape_names_its_threads_and_blocks_as_counts() {
        let launch = Launch::new().threads_xyz(32, 8, 2).blocks_xyz(4, 3, 2);
        assert_eq!((launch.requested_threads(), launch.requested_blocks()), (Some(512), Some(24)));
        assert_eq!(launch.block_shape_for(512), Dim3::new(32, 8, 2));
        assert_eq!(launch.grid_shape_for(24), Dim3::new(4, 3, 2));
        // A 1-D setter replaces the shape.
        let line = launch.threads(64).blocks(7);
        assert_eq!((line.requested_block_shape(), line.requested_grid_shape()), (None, None));
        assert_eq!((line.block_shape_for(64), line.grid_shape_for(7)), (Dim3::linear(64), Dim3::linear(7)));
        assert!(check_shape(&PLANAR, &Launch::new().threads_xyz(32, 8, 2).blocks_xyz(4, 3, 2), 1024).is_ok());
    }

    #[test]
    fn every_axis_is_checked_against_cuda_limits() {
        let planar = || Launch::new().blocks(1);
        assert!(reason(&PLANAR, planar().threads_xyz(1025, 1, 1)).contains("1025 along x"));
        assert!(reason(&PLANAR, planar().threads_xyz(1, 1025, 1)).contains("along y"));
        assert!(reason(&PLANAR, planar().threads_xyz(1, 1, 65)).contains("1 to 64"));
        assert!(reason(&PLANAR, planar().threads_xyz(4, 0, 1)).contains("0 along y"));
        assert!(reason(&PLANAR, planar().threads_xyz(64, 32, 1)).contains("2048 threads"));
        // An overflowing product is refused by the axes, never wrapped.
        assert!(reason(&PLANAR, planar().threads_xyz(u32::MAX, u32::MAX, 1)).contains("along x"));
        let grid = || Launch::new().threads(32);
        assert!(reason(&PLANAR, grid().blocks_xyz(1 << 31, 1, 1)).contains("along x"));
        assert!(reason(&PLANAR, grid().blocks_xyz(1, 65_536, 1)).contains("65535"));
        assert!(reason(&PLANAR, grid().blocks_xyz(1, 1, 0)).contains("0 along z"));
        assert!(reason(&PLANAR, grid().blocks_xyz(65_535, 65_535, 2)).contains("2^32 - 1"));
        assert!(check_shape(&PLANAR, &grid().blocks_xyz(i32::MAX as u32, 1, 1), 1024).is_ok());
    }

    #[test]
    fn a_kernel_without_per_axis_indices_runs_in_a_line_only() {
        assert!(reason(&SMOOTH, Launch::new().threads_xyz(16, 16, 1)).contains("one-dimensional"));
        assert!(reason(&SMOOTH, Launch::new().blocks_xyz(2, 2, 1)).contains("Launch::blocks 4 blocks"));
        assert!(check_shape(&SMOOTH, &Launch::new().threads_xyz(256, 1, 1).blocks_xyz(9, 1, 1), 1024).is_ok());
        assert!(check_shape(&SMOOTH, &Launch::new(), 1024).is_ok());
    }

    #[test]
    fn a_kernel_with_per_axis_indices_needs_a_named_shape() {
        assert!(reason(&PLANAR, Launch::new()).contains("Launch::threads_xyz"));
        assert!(reason(&PLANAR, Launch::new().threads(64)).contains("Launch::blocks_xyz"));
        let block_only = KernelSpec { axes: Axes { block: true, grid: false }, ..SMOOTH };
        assert!(check_shape(&block_only, &Launch::new().threads_xyz(8, 8, 1), 1024).is_ok());
    }

    #[test]
    fn refused_block_sizes_are_typed_errors() {
        static REFUSED: [RefusedBlockSizes; 1] =
            [RefusedBlockSizes { first: 769, last: 1024, reason: "the shared arrays need more" }];
        let sized = KernelSpec { refused_block_sizes: &REFUSED, ..SMOOTH };
        assert!(check_block_size(&sized, 768).is_ok());
        let error = check_block_size(&sized, 769).unwrap_err();
        assert!(matches!(error, Error::RefusedBlockSize { threads: 769, .. }), "{error:?}");
        assert!(error.to_string().contains("the shared arrays need more"), "{error}");
    }
}
