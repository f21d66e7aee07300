//! Lock words belong to `with_lock`: a slice or shared array that some `with_lock` takes
//! its lock from is read and written nowhere else, so that no thread can release a lock
//! it does not hold, or change a word while another thread holds it.

use crate::diagnostics::Diagnostics;
use crate::ir::{ArrayId, ExprKind, Kernel, Place, StmtKind};
use crate::ir_walk::{each_expr, each_stmt, stmt_exprs};
use proc_macro2::Span;

/// Refuses every access to a lock array other than its `with_lock`s.
pub fn check(k: &Kernel, diag: &mut Diagnostics) {
    let mut locks: Vec<(ArrayId, u32)> = Vec::new();
    each_stmt(&k.body, &mut |s| {
        if let StmtKind::Locked { array, line, .. } = s.kind {
            if !locks.iter().any(|(a, _)| *a == array) {
                locks.push((array, line));
            }
        }
    });
    if locks.is_empty() {
        return;
    }
    let lock_of = |array: ArrayId| locks.iter().find(|(a, _)| *a == array).map(|(_, line)| *line);
    let mut refused: Vec<(Span, ArrayId, u32)> = Vec::new();
    each_stmt(&k.body, &mut |s| {
        match &s.kind {
            StmtKind::Assign { place: Place::Elem { array, .. }, .. } => {
                refused.extend(lock_of(*array).map(|line| (s.span, *array, line)));
            }
            StmtKind::Swap(a, b) => {
                for array in [a, b] {
                    refused.extend(lock_of(*array).map(|line| (s.span, *array, line)));
                }
            }
            _ => {}
        }
        for e in stmt_exprs(s) {
            each_expr(e, &mut |x| {
                if let ExprKind::Load { array, .. } | ExprKind::Atomic { array, .. } = &x.kind {
                    refused.extend(lock_of(*array).map(|line| (x.span, *array, line)));
                }
            });
        }
    });
    for (span, array, line) in refused {
        let name = &k.array(array).name;
        diag.error(
            span,
            format!(
                "`{name}` holds lock words (`with_lock` on line {line}): they are reachable only through `with_lock`, so that no thread releases a lock it does not hold; keep other data in another slice"
            ),
        );
    }
}
