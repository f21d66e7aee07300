//! Stage 3: checks on the typed IR. Each reports spanned errors and changes
//! nothing; together they guarantee the emitters see a well-formed kernel.

mod locks;
mod operands;
pub mod shared_len;
pub mod sizes;
pub mod uniformity;
mod warp_index;

pub use sizes::{LOCAL_LIMIT, SHARED_LIMIT};

use crate::diagnostics::Diagnostics;
use crate::ir::{Block, Kernel, StmtKind};

/// Runs every check, collecting all errors.
pub fn kernel(k: &Kernel, diag: &mut Diagnostics) {
    operands::check(k, diag);
    sizes::check(k, diag);
    shared_len::check(k, diag);
    returns(k, &k.body, diag);
    locks::check(k, diag);
    uniformity::check(k, diag);
}

/// A `return` would leave the other blocks waiting at the next `grid_sync()`.
fn returns(k: &Kernel, block: &Block, diag: &mut Diagnostics) {
    if k.grid_syncs == 0 {
        return;
    }
    crate::ir_walk::each_stmt(block, &mut |s| {
        if matches!(s.kind, StmtKind::Return) {
            diag.error(
                s.span,
                "`return` in a kernel that calls `grid_sync()`: the blocks still running would wait forever at the next barrier; \
                 skip the rest of the work with `if` instead",
            );
        }
    });
}
