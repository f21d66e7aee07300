//! The fused 32-bit integer builtins: `max3(a, b, c)`, `min3`, `add_max(a, b, c)` (`max(a + b,
//! c)`), `add_min` and their `_relu` forms (clamped at 0), Hopper's DPX instructions. They are
//! free functions of `i32` or `u32` values; the `_relu` forms take `i32` only, since a `u32` is
//! never below 0. An `add_` form wraps its sum, as `+` does in kernels and as the hardware's
//! 32-bit add does.

use super::types::Inferred;
use super::{Expr, ExprKind, Lowerer};
use crate::ir::{MathFn, Scalar};
use proc_macro2::Span;

/// The fused integer builtin that a kernel calls by `name`, if it is one.
pub fn builtin(name: &str) -> Option<MathFn> {
    MathFn::from_name(name).filter(|f| f.is_fused_int())
}

/// The call as docs/dsl.md writes it, for messages: `max3(a, b, c)`.
fn shape(func: MathFn) -> String {
    let args = if arity(func) == 2 { "a, b" } else { "a, b, c" };
    format!("{}({args})", func.name())
}

fn arity(func: MathFn) -> usize {
    match func {
        MathFn::MaxRelu | MathFn::MinRelu => 2,
        _ => 3,
    }
}

/// The builtin without its clamp at 0, which is what a `_relu` form means on `u32`.
fn without_relu(func: MathFn) -> &'static str {
    match func {
        MathFn::MaxRelu => "max",
        MathFn::MinRelu => "min",
        MathFn::Max3Relu => "max3",
        MathFn::Min3Relu => "min3",
        MathFn::AddMaxRelu => "add_max",
        _ => "add_min",
    }
}

impl Lowerer<'_> {
    /// `func(args)`, a fused integer builtin: every argument of one type, `i32` or `u32` (`i32`
    /// for a `_relu` form), the first of a wrong type refused on its span.
    pub(super) fn fused_int_call(&mut self, func: MathFn, args: &[&syn::Expr], span: Span) -> Option<Expr> {
        let name = func.name();
        if args.len() != arity(func) {
            self.diag.error(span, format!("`{}` takes {} arguments, found {}", shape(func), arity(func), args.len()));
            return None;
        }
        let lowered: Vec<Option<Expr>> = args.iter().map(|a| self.expr(a)).collect();
        let lowered: Vec<Expr> = lowered.into_iter().collect::<Option<_>>()?;
        // The first argument of a wrong type is refused; the others would repeat its error.
        if !lowered.iter().all(|arg| self.fused_int_operand(func, arg)) {
            return None;
        }
        for arg in &lowered[1..] {
            self.unify(lowered[0].ty, arg.ty, arg.span);
        }
        let Some(scalar) = self.types.scalar(lowered[0].ty) else {
            self.diag.error(
                span,
                format!("can't infer the type of `{name}`'s arguments: give one a type, e.g. `2i32` or `2u32`"),
            );
            return None;
        };
        let ty = self.types.known(scalar);
        Some(self.expr_of(ExprKind::Call { func, args: lowered }, ty, span))
    }

    /// Whether `arg` may be an operand of `func`, with an error on its span where not; pins an
    /// untyped integer to `i32` for a `_relu` form, which takes nothing else.
    fn fused_int_operand(&mut self, func: MathFn, arg: &Expr) -> bool {
        let name = func.name();
        let found = self.inferred(arg.ty);
        let message = match found {
            Inferred::Known(Scalar::I32) => return true,
            Inferred::Known(Scalar::U32) if !func.is_relu() => return true,
            Inferred::AnyInt if func.is_relu() => {
                self.require(arg.ty, Scalar::I32, arg.span, &format!("an argument of `{name}`"));
                return true;
            }
            Inferred::AnyInt => return true,
            Inferred::Known(Scalar::U32) => format!(
                "`{name}` takes `i32` values, found `u32`: a `u32` is never below 0, so `{}` gives the same",
                without_relu(func)
            ),
            other if func.is_relu() => format!(
                "`{name}` takes `i32` values, found {}: the fused max and min builtins (Hopper's DPX instructions) have 32-bit integer forms only",
                other.describe()
            ),
            other => format!(
                "`{name}` takes `i32` or `u32` values, found {}: the fused max and min builtins (Hopper's DPX instructions) have 32-bit integer forms only",
                other.describe()
            ),
        };
        self.diag.error(arg.span, message);
        false
    }
}
