//! Stage 3: checks on the typed IR. Each reports spanned errors and changes
//! nothing; together they guarantee the emitters see a well-formed kernel,
//! and what they learn on the way is handed on as the kernel's [`Facts`].

mod block_sizes;
mod facts;
mod locks;
mod operands;
mod shared_len;
mod sizes;
mod uniformity;
mod warp_index;

pub use block_sizes::RefusedBlockSizes;
pub use facts::{Axes, Facts};
pub use uniformity::Level;

use crate::diagnostics::Diagnostics;
use crate::ir::{Block, Kernel, StmtKind, SyncScope};

/// Runs every check, collecting all errors; the kernel's facts if it passed them all.
pub fn kernel(k: &Kernel, diag: &mut Diagnostics) -> Option<Facts> {
    // A kernel that no block size can run is reported alone.
    let refused_block_sizes = block_sizes::check(k, diag)?;
    operands::check(k, diag);
    sizes::check(k, diag);
    let shared_slice_lens = shared_len::check(k, diag);
    returns(k, &k.body, diag);
    locks::check(k, diag);
    let levels = uniformity::check(k, diag);
    if diag.has_errors() {
        return None;
    }
    Some(Facts {
        levels,
        axes: facts::axes(k),
        refused_block_sizes,
        half: facts::uses_half(k),
        swapped: facts::swapped_slices(k),
        shared_slice_lens,
        static_shared_bytes: sizes::static_shared_bytes(k),
    })
}

/// A `return` would leave the other blocks waiting at the next `grid_sync()`.
fn returns(k: &Kernel, block: &Block, diag: &mut Diagnostics) {
    if k.grid_syncs == 0 {
        return;
    }
    // One walk: the `return`s, and the barrier to name (`grid_sync()` where the kernel has one).
    let (mut returns, mut scope) = (Vec::new(), SyncScope::Gpu);
    crate::ir_walk::each_stmt(block, &mut |s| match s.kind {
        StmtKind::Return => returns.push(s.span),
        StmtKind::GridSync { scope: SyncScope::Team, .. } => scope = SyncScope::Team,
        _ => {}
    });
    let call = scope.call();
    for span in returns {
        diag.error(
            span,
            format!(
                "`return` in a kernel that calls `{call}`: the blocks still running would wait forever at the next barrier; \
                 skip the rest of the work with `if` instead"
            ),
        );
    }
}
