//! The builtins of a kernel that may run in 2-D and 3-D shapes. One that reads no per-axis
//! builtin runs in 1-D shapes only (the runtime refuses others), so its CUDA keeps the `.x`
//! components; one that reads any is compiled with `GSYNC_MULTI_DIM`, and its linear builtins
//! become the prelude's linear indices.

use crate::ir::Builtin;

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
        Builtin::BlockSize => crate::emit::block_size::CUDA.to_owned(),
        Builtin::Pe | Builtin::NPes => team_builtin(b).to_owned(),
    }
}

/// `global_id()` in a kernel compiled with `GSYNC_MULTI_DIM`.
pub const LINEAR_GLOBAL_ID: &str = "gsync_linear_block() * gsync_block_threads() + gsync_linear_thread()";

/// `grid_size()` in a kernel compiled with `GSYNC_MULTI_DIM`.
pub const LINEAR_GRID_SIZE: &str = "gsync_block_threads() * gsync_grid_blocks()";

/// `pe()` and `n_pes()`, in kernels of any shape: the prelude's team record, which the
/// runtime writes for a team.
pub fn team_builtin(b: Builtin) -> &'static str {
    match b {
        Builtin::Pe => "gsync_team.pe",
        _ => "gsync_team.n_pes",
    }
}
