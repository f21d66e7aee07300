//! What the checks learn about a kernel and hand on: the split and the emitters read
//! [`Facts`] instead of analysing the kernel again. The few facts that no check needs are
//! gathered here, in one walk each.

use std::collections::HashSet;

use super::block_sizes::RefusedBlockSizes;
use super::uniformity::Level;
use crate::ir::{ArrayId, Builtin, Expr, ExprKind, Kernel, StmtKind};
use crate::ir_walk::{each_expr, each_stmt, stmt_exprs};

/// What a kernel that passed every check is known to be.
#[derive(Clone, Debug)]
pub struct Facts {
    /// The uniformity level of every variable, by [`VarId`](crate::ir::VarId): which values
    /// the split may compute on the host.
    pub levels: Vec<Level>,
    /// Which per-axis builtins it reads.
    pub axes: Axes,
    /// The block sizes it cannot run with.
    pub refused_block_sizes: Vec<RefusedBlockSizes>,
    /// Whether it uses `f16` or `bf16`, so that its CUDA needs the half precision prelude.
    pub half: bool,
    /// The slice parameters that a `swap` exchanges, which are variables in the generated
    /// code rather than fixed names.
    pub swapped: HashSet<ArrayId>,
    /// The length of each shared slice, in declaration order, as the host evaluates it.
    pub shared_slice_lens: Vec<Expr>,
    /// The bytes of a block's static shared arrays.
    pub static_shared_bytes: u64,
}

/// Which per-axis builtins a kernel reads (its device functions included, as inlined): the
/// contract's `Axes`, which the runtime reads back from the kernel's description.
pub use gsync_contract::Axes;

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

/// Whether `k` has a variable, an array or a value of a half precision type.
pub fn uses_half(k: &Kernel) -> bool {
    let mut half = k.vars.iter().any(|v| v.ty.is_half()) || k.arrays.iter().any(|a| a.elem.is_half());
    each_stmt(&k.body, &mut |s| {
        for e in stmt_exprs(s) {
            each_expr(e, &mut |e| half |= e.ty.is_half());
        }
    });
    half
}

/// The slice parameters that a `swap` of `k` exchanges.
pub fn swapped_slices(k: &Kernel) -> HashSet<ArrayId> {
    let mut swapped = HashSet::new();
    each_stmt(&k.body, &mut |s| {
        if let StmtKind::Swap(a, b) = s.kind {
            swapped.extend([a, b]);
        }
    });
    swapped
}
