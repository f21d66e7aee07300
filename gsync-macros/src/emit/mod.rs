//! Stage 5: emitters walking the typed IR.

pub mod assertions;
pub mod block_size;
pub mod cuda;
pub mod cuda_names;
pub mod cuda_ops;
pub mod emu;
pub mod module;
pub mod rust_expr;
pub mod rust_names;
pub mod rust_stmt;
pub mod shared_len;
pub mod split_host;
