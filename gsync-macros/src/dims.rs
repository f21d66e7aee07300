//! 2-D and 3-D launches: the per-axis builtins, which of them a kernel reads, and the CUDA of
//! the linear builtins in a kernel that may run in more than one dimension.
//!
//! The builtins without an axis (`thread_idx()`, `block_idx()`, …) are linear in every
//! kernel. A kernel that reads no per-axis builtin runs in 1-D shapes only (the runtime
//! refuses others), so its CUDA keeps the `.x` components; one that reads any is compiled
//! with `GSYNC_MULTI_DIM` and its linear builtins become the prelude's linear indices.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ir::{Axis, Builtin, ExprKind, Kernel};
use crate::ir_walk::{each_expr, each_stmt, stmt_exprs};

/// The per-axis builtin named `name` (`thread_idx_y`, `grid_dim_z`, …), if it is one.
pub fn axis_builtin(name: &str) -> Option<Builtin> {
    let (base, axis) = name.rsplit_once('_')?;
    let axis = Axis::ALL.into_iter().find(|a| a.name() == axis)?;
    Some(match base {
        "thread_idx" => Builtin::ThreadIdxAxis(axis),
        "block_idx" => Builtin::BlockIdxAxis(axis),
        "block_dim" => Builtin::BlockDimAxis(axis),
        "grid_dim" => Builtin::GridDimAxis(axis),
        _ => return None,
    })
}

/// The names of the per-axis builtins, which device functions cannot take.
pub const AXIS_BUILTINS: [&str; 12] = [
    "thread_idx_x",
    "thread_idx_y",
    "thread_idx_z",
    "block_idx_x",
    "block_idx_y",
    "block_idx_z",
    "block_dim_x",
    "block_dim_y",
    "block_dim_z",
    "grid_dim_x",
    "grid_dim_y",
    "grid_dim_z",
];

/// Which per-axis builtins a kernel reads (its device functions included, as inlined).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Axes {
    /// `thread_idx_*()` or `block_dim_*()`: the launch must name the block's shape.
    pub block: bool,
    /// `block_idx_*()` or `grid_dim_*()`: the launch must name the grid's shape.
    pub grid: bool,
}

impl Axes {
    /// Whether the kernel may run in 2-D and 3-D shapes.
    pub fn any(self) -> bool {
        self.block || self.grid
    }

    /// The runtime's `Axes` value.
    pub fn tokens(self) -> TokenStream {
        let (block, grid) = (self.block, self.grid);
        quote!(::gsync::Axes { block: #block, grid: #grid })
    }
}

/// The per-axis builtins `k` reads.
pub fn axes(k: &Kernel) -> Axes {
    let mut axes = Axes::default();
    each_stmt(&k.body, &mut |stmt| {
        for expr in stmt_exprs(stmt) {
            each_expr(expr, &mut |e| match e.kind {
                ExprKind::Builtin(Builtin::ThreadIdxAxis(_) | Builtin::BlockDimAxis(_)) => axes.block = true,
                ExprKind::Builtin(Builtin::BlockIdxAxis(_) | Builtin::GridDimAxis(_)) => axes.grid = true,
                _ => {}
            });
        }
    });
    axes
}

/// The CUDA of builtin `b` in a kernel compiled with `GSYNC_MULTI_DIM`: the per-axis ones are
/// CUDA's components, the linear ones the prelude's linear indices.
pub fn multi_dim_cuda(b: Builtin) -> String {
    match b {
        Builtin::ThreadIdx => "gsync_linear_thread()".to_owned(),
        Builtin::BlockIdx => "gsync_linear_block()".to_owned(),
        Builtin::BlockDim => "gsync_block_threads()".to_owned(),
        Builtin::GridDim => "gsync_grid_blocks()".to_owned(),
        Builtin::GlobalId => format!("({})", LINEAR_GLOBAL_ID),
        Builtin::GridSize => format!("({})", LINEAR_GRID_SIZE),
        Builtin::LaneId => "(gsync_linear_thread() & 31u)".to_owned(),
        Builtin::WarpSize => "32u".to_owned(),
        Builtin::WarpId => "(gsync_linear_thread() >> 5)".to_owned(),
        Builtin::ThreadIdxAxis(a) => format!("threadIdx.{}", a.name()),
        Builtin::BlockIdxAxis(a) => format!("blockIdx.{}", a.name()),
        Builtin::BlockDimAxis(a) => format!("blockDim.{}", a.name()),
        Builtin::GridDimAxis(a) => format!("gridDim.{}", a.name()),
        Builtin::BlockSize => crate::block_size::CUDA.to_owned(),
    }
}

/// `global_id()` in a kernel compiled with `GSYNC_MULTI_DIM`.
pub const LINEAR_GLOBAL_ID: &str = "gsync_linear_block() * gsync_block_threads() + gsync_linear_thread()";

/// `grid_size()` in a kernel compiled with `GSYNC_MULTI_DIM`.
pub const LINEAR_GRID_SIZE: &str = "gsync_block_threads() * gsync_grid_blocks()";
