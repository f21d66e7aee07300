//! Type-class rules that need final types: which operators apply to which
//! types, literal ranges, casts, loop-variable and shuffle types.

use crate::diagnostics::Diagnostics;
use crate::ir::*;
use crate::ir_walk::{each_expr, each_stmt, stmt_exprs};

pub fn check(k: &Kernel, diag: &mut Diagnostics) {
    each_stmt(&k.body, &mut |s| {
        for e in stmt_exprs(s) {
            each_expr(e, &mut |e| expr(e, diag));
        }
        stmt(k, s, diag);
    });
}

fn stmt(k: &Kernel, s: &Stmt, diag: &mut Diagnostics) {
    match &s.kind {
        StmtKind::Assign { place, op: Some(op), value } => {
            let ty = match place {
                Place::Var(v) => k.var(*v).ty,
                Place::Elem { array, .. } => k.array(*array).elem,
            };
            binary_operands(*op, ty, value.ty, s.span, diag);
        }
        StmtKind::For { var, range, .. } => {
            let ty = k.var(*var).ty;
            let strided = !matches!(range, ForRange::Seq { .. });
            if !ty.is_int() {
                diag.error(s.span, format!("a `for` loop counts over integers, not `{}`", ty.name()));
            } else if strided && !matches!(ty, Scalar::U32 | Scalar::I32 | Scalar::U64 | Scalar::I64 | Scalar::Usize) {
                diag.error(
                    s.span,
                    format!(
                        "`grid_stride`/`block_stride` count in `u32`, `i32`, `u64`, `i64` or `usize`, not `{}`",
                        ty.name()
                    ),
                );
            } else if matches!(range, ForRange::Seq { inclusive: true, .. }) && ty.bits() == 64 {
                diag.error(
                    s.span,
                    "an inclusive range `a..=b` of 64-bit integers is not supported in kernels: write `a..b + 1`",
                );
            }
        }
        _ => {}
    }
}

fn expr(e: &Expr, diag: &mut Diagnostics) {
    let ty = e.ty;
    match &e.kind {
        ExprKind::Int(v) => {
            if !ty.is_int() {
                diag.error(e.span, format!("an integer literal cannot be `{}`", ty.name()));
                return;
            }
            let (lo, hi) = ty.int_range();
            if *v < lo || *v > hi {
                diag.error(e.span, format!("literal out of range for `{}`: the range is {lo}..={hi}", ty.name()));
            }
        }
        ExprKind::Float(v) if ty == Scalar::F32 && v.is_finite() && (*v as f32).is_infinite() => {
            diag.error(e.span, "literal out of range for `f32`: it would be infinite");
        }
        ExprKind::Unary(op, a) => {
            let at = a.ty;
            match op {
                UnOp::Neg if !(at.is_signed_int() || at.is_float() || at.is_half()) => {
                    diag.error(e.span, format!("cannot apply unary `-` to `{}`", at.name()));
                }
                UnOp::Not if at.is_float() || at.is_half() => {
                    diag.error(e.span, format!("cannot apply `!` to `{}`", at.name()))
                }
                _ => {}
            }
        }
        ExprKind::Binary(op, a, b) => binary_operands(*op, a.ty, b.ty, e.span, diag),
        ExprKind::Cast(inner) => {
            let from = inner.ty;
            let bad = (ty == Scalar::Bool && from != Scalar::Bool) || (from == Scalar::Bool && ty.is_float());
            if from != ty && (from.is_half() || ty.is_half()) {
                diag.error(e.span, crate::lower::half_cast_error(from, ty));
            } else if bad {
                diag.error(e.span, format!("cannot cast `{}` as `{}`", from.name(), ty.name()));
            }
        }
        _ => {}
    }
}

fn binary_operands(op: BinOp, lhs: Scalar, rhs: Scalar, span: proc_macro2::Span, diag: &mut Diagnostics) {
    let sym = op.symbol();
    let ok = match op {
        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => lhs != Scalar::Bool,
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => !lhs.is_float() && !lhs.is_half(),
        BinOp::Shl | BinOp::Shr => lhs.is_int() && rhs.is_int(),
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne | BinOp::And | BinOp::Or => true,
    };
    if !ok {
        diag.error(span, format!("cannot apply `{sym}` to `{}` and `{}`", lhs.name(), rhs.name()));
    }
}
