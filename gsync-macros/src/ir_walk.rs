//! Generic traversals of the IR used by several checks.

use crate::ir::{Block, Collective, Expr, ExprKind, ForRange, Place, Stmt, StmtKind};
use proc_macro2::Span;

/// Calls `f` on every statement, outer before inner.
pub fn each_stmt<T>(block: &[Stmt<T>], f: &mut dyn FnMut(&Stmt<T>)) {
    crate::stack::deep(|| each_stmt_inner(block, f))
}

/// Whether a `grid_sync()` (of the grid or of every GPU) runs somewhere in `body`, device
/// functions' bodies included.
pub fn contains_grid_sync(body: &Block) -> bool {
    let mut found = false;
    each_stmt(body, &mut |s| found |= matches!(s.kind, StmtKind::GridSync { .. }));
    found
}

fn each_stmt_inner<T>(block: &[Stmt<T>], f: &mut dyn FnMut(&Stmt<T>)) {
    for s in block {
        f(s);
        for child in child_blocks(s) {
            each_stmt(child, f);
        }
    }
}

/// The blocks nested directly in a statement.
pub fn child_blocks<T>(s: &Stmt<T>) -> Vec<&Block<T>> {
    match &s.kind {
        StmtKind::If { then, otherwise, .. } => std::iter::once(then).chain(otherwise).collect(),
        StmtKind::While { body, .. }
        | StmtKind::Loop { body, .. }
        | StmtKind::For { body, .. }
        | StmtKind::Block(body)
        | StmtKind::Inline { body, .. }
        | StmtKind::Locked { body, .. }
        | StmtKind::WaitUntil { before: body, .. }
        | StmtKind::StoreChunk { stores: body, .. }
        | StmtKind::CopyChunkAsync { stores: body, .. } => vec![body],
        _ => Vec::new(),
    }
}

/// The expressions a statement evaluates directly (not those of nested blocks).
pub fn stmt_exprs<T>(s: &Stmt<T>) -> Vec<&Expr<T>> {
    match &s.kind {
        StmtKind::Let { init, .. } => init.iter().collect(),
        StmtKind::LetArray { init, .. } => match init {
            crate::ir::ArrayInit::Repeat(e) => vec![e],
            crate::ir::ArrayInit::List(es) | crate::ir::ArrayInit::Chunk { loads: es, .. } => es.iter().collect(),
        },
        StmtKind::Assign { place, value, .. } => {
            let mut v = vec![value];
            if let Place::Elem { index, .. } = place {
                v.push(index);
            }
            v
        }
        StmtKind::Expr(e) => vec![e],
        StmtKind::Assert { check, .. } => check.exprs(),
        StmtKind::If { cond, .. } | StmtKind::While { cond, .. } | StmtKind::WaitUntil { cond, .. } => vec![cond],
        StmtKind::Locked { index, .. } => vec![index],
        StmtKind::PutRange(put) => put.exprs(),
        StmtKind::For { range, .. } => match range {
            ForRange::Seq { start, end, step, .. } => {
                let mut v = vec![start, end];
                v.extend(step);
                v
            }
            ForRange::GridStride { start, end } | ForRange::BlockStride { start, end } => vec![start, end],
        },
        _ => Vec::new(),
    }
}

/// Calls `f` on an expression and every sub-expression, outer first.
pub fn each_expr<T>(e: &Expr<T>, f: &mut dyn FnMut(&Expr<T>)) {
    crate::stack::deep(|| each_expr_inner(e, f))
}

fn each_expr_inner<T>(e: &Expr<T>, f: &mut dyn FnMut(&Expr<T>)) {
    f(e);
    match &e.kind {
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => each_expr(a, f),
        ExprKind::Binary(_, a, b) => {
            each_expr(a, f);
            each_expr(b, f);
        }
        ExprKind::Load { index, .. } => each_expr(index, f),
        ExprKind::Call { args, .. } => args.iter().for_each(|a| each_expr(a, f)),
        ExprKind::Atomic { index, args, .. } => {
            each_expr(index, f);
            args.iter().for_each(|a| each_expr(a, f));
        }
        ExprKind::Shuffle { value, lane, .. } => {
            each_expr(value, f);
            each_expr(lane, f);
        }
        ExprKind::Select { cond, then, otherwise } => {
            each_expr(cond, f);
            each_expr(then, f);
            each_expr(otherwise, f);
        }
        ExprKind::Vote { value, .. } => each_expr(value, f),
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Bool(_)
        | ExprKind::Var(_)
        | ExprKind::Len(_)
        | ExprKind::Builtin(_) => {}
    }
}

/// The first collective in an expression or its operands.
pub fn collective_in<T>(e: &Expr<T>) -> Option<(Collective, Span)> {
    let mut found = None;
    each_expr(e, &mut |x| {
        if found.is_none() {
            found = Collective::of_expr(&x.kind).map(|c| (c, x.span));
        }
    });
    found
}
