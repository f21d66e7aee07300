//! Stage 4: emitters walking the typed IR.

pub mod cuda;
pub mod cuda_names;
pub mod cuda_ops;
pub mod driver;
pub mod emu;
pub mod host;
pub mod rust_expr;
pub mod rust_names;
pub mod rust_stmt;
