//! The lengths of shared slices (`shared_slice::<T>(len)`): the host computes each one at
//! launch, before the kernel runs, so its expression may use only what the host knows then —
//! scalar parameters, constants, `block_dim()`, the lengths of slice parameters, and immutable
//! top-level locals computed from them. [`host_len`] gives the expression the host evaluates
//! (with those locals replaced by their values), or says, on its span, what the host cannot
//! know.

use crate::diagnostics::Diagnostics;
use crate::ir::*;
use proc_macro2::Span;

/// Reports every shared slice whose length the host cannot compute; returns the lengths the
/// host computes, in declaration order.
pub fn check(k: &Kernel, diag: &mut Diagnostics) -> Vec<Expr> {
    let mut lens = Vec::new();
    for decl in &k.shared_slices {
        match host_len(k, &decl.len) {
            Ok(len) => lens.push(len),
            Err((span, message)) => diag.error(span, message),
        }
    }
    lens
}

/// The length expression `len` as the host evaluates it, or the span and message of what the
/// host cannot evaluate.
fn host_len(k: &Kernel, len: &Expr) -> Result<Expr, (Span, String)> {
    crate::stack::deep(|| host_expr(k, len))
}

fn host_expr(k: &Kernel, e: &Expr) -> Result<Expr, (Span, String)> {
    let fail =
        |why: String| Err((e.span, format!("a shared slice's length is computed at launch, on the host: {why}")));
    if e.ty.is_float() {
        return fail("it takes integer arithmetic, not floats".into());
    }
    let kind = match &e.kind {
        ExprKind::Int(_) | ExprKind::Bool(_) => e.kind.clone(),
        ExprKind::Float(_) => return fail("it takes integer arithmetic, not floats".into()),
        ExprKind::Var(v) => {
            let var = k.var(*v);
            if var.is_param && var.mutable {
                return fail(format!(
                    "`{}` is a `mut` parameter, which the kernel may change before this line; take it without `mut`",
                    var.name
                ));
            }
            if var.is_param {
                e.kind.clone()
            } else {
                match local_value(k, *v) {
                    Some(value) => return host_expr(k, value).map(|x| Expr { span: e.span, ..x }),
                    None => {
                        return fail(format!(
                            "`{}` is not known then; use scalar parameters, constants, `block_dim()`, the `.len()` of \
                             slice parameters, and `let`s at the top of the kernel computed from them",
                            var.name
                        ))
                    }
                }
            }
        }
        ExprKind::Unary(op, a) => ExprKind::Unary(*op, Box::new(host_expr(k, a)?)),
        ExprKind::Binary(op, a, b) => ExprKind::Binary(*op, Box::new(host_expr(k, a)?), Box::new(host_expr(k, b)?)),
        ExprKind::Cast(a) => ExprKind::Cast(Box::new(host_expr(k, a)?)),
        ExprKind::Select { cond, then, otherwise } => ExprKind::Select {
            cond: Box::new(host_expr(k, cond)?),
            then: Box::new(host_expr(k, then)?),
            otherwise: Box::new(host_expr(k, otherwise)?),
        },
        ExprKind::Len(a) => match k.array(*a).space {
            ArraySpace::Global => e.kind.clone(),
            ArraySpace::Shared | ArraySpace::Local if k.array(*a).block_len.is_some() => {
                return fail(format!("write the length of `{}` again instead of its `.len()`", k.array(*a).name))
            }
            ArraySpace::Shared | ArraySpace::Local => ExprKind::Int(i128::from(k.array(*a).len.unwrap_or(0))),
            ArraySpace::DynamicShared => {
                return fail(format!("write the length of `{}` again instead of its `.len()`", k.array(*a).name))
            }
        },
        ExprKind::Builtin(Builtin::BlockDim) => e.kind.clone(),
        ExprKind::Builtin(Builtin::WarpSize) => ExprKind::Int(32),
        // `BLOCK_SIZE` is `block_dim() as usize`.
        ExprKind::Builtin(Builtin::BlockSize) => {
            ExprKind::Cast(Box::new(Expr { kind: ExprKind::Builtin(Builtin::BlockDim), ty: Scalar::U32, span: e.span }))
        }
        ExprKind::Builtin(b @ (Builtin::BlockDimAxis(_) | Builtin::GridDimAxis(_))) => {
            return fail(format!(
                "`{}()` is not known where the lengths are computed; use `block_dim()`, the threads of a block",
                builtin_name(*b)
            ))
        }
        ExprKind::Builtin(b @ (Builtin::GridDim | Builtin::GridSize)) => {
            return fail(format!(
                "`{}()` is decided by how many blocks fit, which depends on this length",
                builtin_name(*b)
            ))
        }
        ExprKind::Builtin(b @ (Builtin::Pe | Builtin::NPes)) => {
            return fail(format!("`{}()` is not known where the lengths are computed", builtin_name(*b)))
        }
        ExprKind::Builtin(b @ Builtin::BlockIdx) => {
            return fail(format!(
                "`{}()` differs between blocks; every block's slice has the same length",
                builtin_name(*b)
            ))
        }
        ExprKind::Builtin(b) => {
            return fail(format!(
                "`{}()` differs between threads; every thread of every block sees the same slice",
                builtin_name(*b)
            ))
        }
        ExprKind::Call {
            func: func @ (MathFn::Min | MathFn::Max | MathFn::DivCeil | MathFn::NextPowerOfTwo),
            args,
        } => ExprKind::Call { func: *func, args: args.iter().map(|a| host_expr(k, a)).collect::<Result<_, _>>()? },
        ExprKind::Call { func, .. } => {
            return fail(format!(
                "`{}` is not available there; use arithmetic, `min`, `max`, `div_ceil` and `next_power_of_two`",
                func.name()
            ))
        }
        ExprKind::Load { array, .. } => {
            return fail(format!(
                "reading `{}` reads device memory; pass the length as a scalar parameter",
                k.array(*array).name
            ))
        }
        ExprKind::Atomic { .. } | ExprKind::Shuffle { .. } | ExprKind::Vote { .. } => {
            return fail("an atomic, shuffle or vote runs on the device, per thread".into())
        }
    };
    Ok(Expr { kind, ty: e.ty, span: e.span })
}

/// The value of an immutable local declared with one at the top level of the kernel.
fn local_value(k: &Kernel, v: VarId) -> Option<&Expr> {
    if k.var(v).mutable {
        return None;
    }
    k.body.iter().find_map(|s| match &s.kind {
        StmtKind::Let { var, init: Some(init) } if *var == v => Some(init),
        _ => None,
    })
}

fn builtin_name(b: Builtin) -> &'static str {
    match b {
        Builtin::ThreadIdx => "thread_idx",
        Builtin::BlockIdx => "block_idx",
        Builtin::BlockDim => "block_dim",
        Builtin::GridDim => "grid_dim",
        Builtin::GlobalId => "global_id",
        Builtin::GridSize => "grid_size",
        Builtin::LaneId => "lane_id",
        Builtin::WarpSize => "warp_size",
        Builtin::WarpId => "warp_id",
        Builtin::BlockSize => "BLOCK_SIZE",
        Builtin::Pe => "pe",
        Builtin::NPes => "n_pes",
        Builtin::ThreadIdxAxis(a) => ["thread_idx_x", "thread_idx_y", "thread_idx_z"][a as usize],
        Builtin::BlockIdxAxis(a) => ["block_idx_x", "block_idx_y", "block_idx_z"][a as usize],
        Builtin::BlockDimAxis(a) => ["block_dim_x", "block_dim_y", "block_dim_z"][a as usize],
        Builtin::GridDimAxis(a) => ["grid_dim_x", "grid_dim_y", "grid_dim_z"][a as usize],
    }
}
