//! Which values are provably the same in every lane of a warp although they
//! derive from `thread_idx()`: the warp's index, `thread_idx() / 32`, and its
//! equivalent spellings. Lanes `32w … 32w + 31` of a block form warp `w`, so
//! any function of `thread_idx()` that is constant on each such run is
//! warp-uniform; these are the ones the analysis recognises.

use crate::ir::{BinOp, Builtin, ExprKind, Kernel, Scalar, StmtKind, UnOp};
use crate::ir_walk::each_stmt;

type Expr = crate::ir::Expr;

/// Per variable: whether it is an immutable copy of `thread_idx()` (`let t = thread_idx();`).
pub fn thread_index_vars(k: &Kernel) -> Vec<bool> {
    let mut vars = vec![false; k.vars.len()];
    each_stmt(&k.body, &mut |s| {
        if let StmtKind::Let { var, init: Some(e) } = &s.kind {
            if !k.var(*var).mutable {
                vars[var.0] = is_thread_index(e, &vars);
            }
        }
    });
    vars
}

/// `thread_idx()`, a variable holding it, or either cast to an integer type that holds
/// every thread index (16 bits or more; a block has at most 1024 threads).
fn is_thread_index(e: &Expr, vars: &[bool]) -> bool {
    crate::stack::deep(|| match &e.kind {
        ExprKind::Builtin(Builtin::ThreadIdx) => true,
        ExprKind::Var(v) => vars[v.0],
        ExprKind::Cast(inner) => e.ty.is_int() && e.ty.bits() >= 16 && is_thread_index(inner, vars),
        _ => false,
    })
}

/// Whether `e` is the thread index divided by a positive multiple of 32, shifted right by
/// 5 bits or more, or masked with its low 5 bits clear: the same for the 32 lanes of a warp.
pub fn is_warp_index(e: &Expr, vars: &[bool]) -> bool {
    let ExprKind::Binary(op, a, b) = &e.kind else { return false };
    let index_and_constant = |x: &Expr, c: &Expr| if is_thread_index(x, vars) { constant(c) } else { None };
    match op {
        BinOp::Div => index_and_constant(a, b).is_some_and(|c| c > 0 && c % 32 == 0),
        BinOp::Shr => index_and_constant(a, b).is_some_and(|s| (s & (i128::from(a.ty.bits()) - 1)) >= 5),
        BinOp::BitAnd => index_and_constant(a, b).or_else(|| index_and_constant(b, a)).is_some_and(|m| m & 31 == 0),
        _ => false,
    }
}

/// The value of an integer constant expression: literals (and folded `const`s),
/// `warp_size()`, and `!`, unary `-` and casts of them.
fn constant(e: &Expr) -> Option<i128> {
    crate::stack::deep(|| match &e.kind {
        ExprKind::Int(v) => Some(*v),
        ExprKind::Builtin(Builtin::WarpSize) => Some(32),
        ExprKind::Unary(UnOp::Not, a) if e.ty != Scalar::Bool => constant(a).map(|v| !v),
        ExprKind::Unary(UnOp::Neg, a) => constant(a).map(|v| -v),
        ExprKind::Cast(a) if e.ty.is_int() && a.ty.is_int() => constant(a),
        _ => None,
    })
}
