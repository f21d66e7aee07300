//! The random kernels' semantic oracle for device-function calls: a call's inlined body must
//! run wherever, and only where, Rust evaluates the call. A call that lowering placed ahead
//! of a condition that guards every use of its result (an `else if`, a `match` arm, the right
//! side of `&&`, an `if` value's branch, a spin condition) runs where Rust's would not: in
//! the IR, its result is read only under a condition that follows it. A call without a result
//! (a statement in a `match` arm) shows by its place instead: it sits before a conditional
//! statement that begins before it in the source, outside that statement's condition.

use crate::ir::{BinOp, Expr};
use crate::ir::{Block, ExprKind, Kernel, Stmt, StmtKind, VarId};

/// Each call whose result is read only under a later condition, described.
pub fn misplaced_calls(k: &Kernel) -> Vec<String> {
    let mut found = Vec::new();
    check_block(k, &k.body, &mut found);
    found
}

fn check_block(k: &Kernel, block: &Block, found: &mut Vec<String>) {
    for (i, s) in block.iter().enumerate() {
        if let StmtKind::Inline { call, .. } = &s.kind {
            let info = k.call(*call);
            if let Some(result) = info.result {
                let mut reads = Reads { var: result, unconditional: 0, conditional: 0 };
                for later in &block[i + 1..] {
                    reads.stmt(later, false);
                }
                if reads.unconditional == 0 && reads.conditional > 0 {
                    found.push(format!(
                        "the call of `{}` on line {} runs before a condition that guards every use of its result",
                        info.function,
                        crate::diagnostics::line_of(info.span)
                    ));
                }
            } else if let Some(next) = block[i + 1..].iter().find(|s| !matches!(s.kind, StmtKind::Inline { .. })) {
                if hoisted_out_of(info.span, next) {
                    found.push(format!(
                        "the call of `{}` on line {} runs before the conditional statement it is part of",
                        info.function,
                        crate::diagnostics::line_of(info.span)
                    ));
                }
            }
        }
        for child in crate::ir_walk::child_blocks(s) {
            check_block(k, child, found);
        }
    }
}

/// Whether a call at `call` was placed before `next` although it is part of `next`'s
/// branches: `next` is conditional, begins before the call in the source, and its condition
/// does not hold the call.
fn hoisted_out_of(call: proc_macro2::Span, next: &Stmt) -> bool {
    let position = |at: proc_macro2::LineColumn| (at.line, at.column);
    let within = |inner: proc_macro2::Span, outer: proc_macro2::Span| {
        position(outer.start()) <= position(inner.start()) && position(inner.end()) <= position(outer.end())
    };
    let cond = match &next.kind {
        StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => cond,
        _ => return false,
    };
    position(next.span.start()) <= position(call.start()) && !within(call, cond.span)
}

/// Counts the reads of `var`, by whether they run whenever the statement does.
struct Reads {
    var: VarId,
    unconditional: usize,
    conditional: usize,
}

impl Reads {
    fn stmt(&mut self, s: &Stmt, conditional: bool) {
        match &s.kind {
            StmtKind::If { cond, then, otherwise } => {
                self.expr(cond, conditional);
                self.block(then, true);
                otherwise.iter().for_each(|o| self.block(o, true));
            }
            StmtKind::While { cond, body, .. } => {
                self.expr(cond, conditional);
                self.block(body, true);
            }
            // A spin condition runs again at every poll: a call it needs belongs in `before`.
            StmtKind::WaitUntil { before, cond, .. } => {
                self.block(before, conditional);
                self.expr(cond, true);
            }
            StmtKind::Loop { body, .. } | StmtKind::For { body, .. } => {
                for e in crate::ir_walk::stmt_exprs(s) {
                    self.expr(e, conditional);
                }
                self.block(body, true);
            }
            _ => {
                for e in crate::ir_walk::stmt_exprs(s) {
                    self.expr(e, conditional);
                }
                for child in crate::ir_walk::child_blocks(s) {
                    self.block(child, conditional);
                }
            }
        }
    }

    fn block(&mut self, block: &Block, conditional: bool) {
        for s in block {
            self.stmt(s, conditional);
        }
    }

    fn expr(&mut self, e: &Expr, conditional: bool) {
        crate::stack::deep(|| match &e.kind {
            ExprKind::Var(v) if *v == self.var => {
                if conditional {
                    self.conditional += 1;
                } else {
                    self.unconditional += 1;
                }
            }
            ExprKind::Select { cond, then, otherwise } => {
                self.expr(cond, conditional);
                self.expr(then, true);
                self.expr(otherwise, true);
            }
            ExprKind::Binary(BinOp::And | BinOp::Or, a, b) => {
                self.expr(a, conditional);
                self.expr(b, true);
            }
            _ => {
                for child in direct_operands(e) {
                    self.expr(child, conditional);
                }
            }
        })
    }
}

/// An expression's operands, one level down.
fn direct_operands(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => vec![a],
        ExprKind::Binary(_, a, b) => vec![a, b],
        ExprKind::Load { index, .. } => vec![index],
        ExprKind::Call { args, .. } => args.iter().collect(),
        ExprKind::Atomic { index, args, .. } => std::iter::once(&**index).chain(args).collect(),
        ExprKind::Shuffle { value, lane, .. } => vec![value, lane],
        ExprKind::Select { cond, then, otherwise } => vec![cond, then, otherwise],
        ExprKind::Vote { value, .. } => vec![value],
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Bool(_)
        | ExprKind::Var(_)
        | ExprKind::Len(_)
        | ExprKind::Builtin(_) => Vec::new(),
    }
}
