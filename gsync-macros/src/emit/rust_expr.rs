//! Kernel expressions as Rust with the DSL's meaning: wrapping integer
//! arithmetic, division by zero giving 0, masked shifts, saturating casts.
//! Shared by the split form's host code and the CPU emulator, which
//! differ only in how they read memory and where thread identity comes from.

use crate::diagnostics::line_of;
use crate::emit::rust_names::var_ident;
use crate::ir::*;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

/// What differs between the places Rust expressions are emitted for.
pub trait RustContext {
    /// `array[index]` (`index` already Rust, of type `u32` or `usize`).
    fn load(&self, array: ArrayId, index: TokenStream, line: u32) -> TokenStream;
    /// `array.len()` as `usize`.
    fn len(&self, array: ArrayId) -> TokenStream;
    /// A launch-shape or thread-identity builtin, as `u32`.
    fn builtin(&self, b: Builtin) -> TokenStream;
    /// An atomic on `array[index]` with memory ordering `order`, returning the old value
    /// (a load its value, a store nothing).
    fn atomic(
        &self,
        op: AtomicOp,
        order: MemoryOrder,
        array: ArrayId,
        index: TokenStream,
        args: Vec<TokenStream>,
        line: u32,
    ) -> TokenStream;
    /// A warp shuffle.
    fn shuffle(&self, op: ShuffleOp, value: TokenStream, lane: TokenStream) -> TokenStream;
    /// A warp vote.
    fn vote(&self, op: VoteOp, value: TokenStream) -> TokenStream;
    /// Records that a `step_by` on Rust line `line` got a zero step (a statement).
    fn zero_step(&self, line: u32) -> TokenStream;
}

/// Emits Rust for kernel expressions in a context.
pub struct RustExpr<'a, C: RustContext + ?Sized> {
    pub k: &'a Kernel,
    pub ctx: &'a C,
}

impl<C: RustContext + ?Sized> RustExpr<'_, C> {
    pub fn expr(&self, e: &Expr) -> TokenStream {
        crate::stack::deep(|| self.expr_inner(e))
    }

    fn expr_inner(&self, e: &Expr) -> TokenStream {
        let k = self.k;
        let ty = e.ty;
        match &e.kind {
            ExprKind::Int(v) => int_literal(*v, ty),
            ExprKind::Float(v) => float_literal(*v, ty),
            ExprKind::Bool(b) => quote!(#b),
            ExprKind::Var(v) => {
                let id = var_ident(k, *v);
                quote!(#id)
            }
            ExprKind::Unary(op, a) => {
                let a = self.expr(a);
                match op {
                    UnOp::Neg if ty.is_float() || ty.is_half() => quote!((-#a)),
                    UnOp::Neg => quote!(#a.wrapping_neg()),
                    UnOp::Not => quote!((!#a)),
                }
            }
            ExprKind::Binary(op, a, b) => {
                let operand = a.ty;
                let (l, r) = (self.left_operand(*op, a), self.expr(b));
                self.binary(*op, operand, l, r)
            }
            ExprKind::Cast(inner) => {
                let inner = self.expr(inner);
                let t = scalar_type(ty);
                quote!((#inner as #t))
            }
            ExprKind::Load { array, index, line } => {
                let index = self.expr(index);
                self.ctx.load(*array, index, *line)
            }
            ExprKind::Len(a) => self.ctx.len(*a),
            ExprKind::Builtin(b) => self.ctx.builtin(*b),
            ExprKind::Call { func, args } => self.call(*func, ty, args),
            ExprKind::Select { cond, then, otherwise } => {
                let (c, t, o) = (self.expr(cond), self.expr(then), self.expr(otherwise));
                quote!((if #c { #t } else { #o }))
            }
            ExprKind::Atomic { op, array, index, args, line, order } => {
                let index = self.expr(index);
                let args = args.iter().map(|a| self.expr(a)).collect();
                self.ctx.atomic(*op, *order, *array, index, args, *line)
            }
            ExprKind::Shuffle { op, value, lane } => {
                let (value, lane) = (self.expr(value), self.expr(lane));
                self.ctx.shuffle(*op, value, lane)
            }
            ExprKind::Vote { op, value } => {
                let value = self.expr(value);
                self.ctx.vote(*op, value)
            }
        }
    }

    /// The Rust iterator of a sequential `for` range: `a..b`, `a..=b`,
    /// `(a..b).step_by(s)` or `(a..b).rev()`, bounds evaluated once as in Rust.
    /// A zero step is recorded as a fault and iterates nothing, as on the device.
    pub fn seq_iter(
        &self,
        start: &Expr,
        end: &Expr,
        inclusive: bool,
        step: Option<&Expr>,
        reverse: bool,
    ) -> TokenStream {
        let private = crate::paths::private();
        let (s, e) = (self.expr(start), self.expr(end));
        let range = if inclusive { quote!((#s..=#e)) } else { quote!((#s..#e)) };
        match (step, reverse) {
            (Some(st), _) => {
                let fault = self.ctx.zero_step(line_of(st.span));
                let st = self.expr(st);
                let (range_id, step_id) =
                    (Ident::new("range", Span::mixed_site()), Ident::new("step", Span::mixed_site()));
                quote!({
                    let #range_id = #range;
                    let #step_id: usize = #st;
                    if #step_id == 0 {
                        #fault;
                    }
                    #private::arith::step_by(#range_id, #step_id)
                })
            }
            (None, true) => quote!(#range.rev()),
            (None, false) => range,
        }
    }

    /// The left operand of `op`. Rust's binary operators associate to the
    /// left, so an infix operation of the same precedence needs no
    /// parentheses there: a chain like `x + x + … + x` stays flat instead of
    /// nesting a group per term, which rustc's parser would recurse into.
    fn left_operand(&self, op: BinOp, a: &Expr) -> TokenStream {
        crate::stack::deep(|| {
            let operand_ty = a.ty;
            if let ExprKind::Binary(inner, x, y) = &a.kind {
                let same_level = infix_level(op).is_some() && infix_level(op) == infix_level(*inner);
                if same_level && is_infix(op, operand_ty) && is_infix(*inner, x.ty) {
                    let (l, r) = (self.left_operand(*inner, x), self.expr(y));
                    let sym: TokenStream = inner.symbol().parse().unwrap_or_default();
                    return quote!(#l #sym #r);
                }
            }
            self.expr(a)
        })
    }

    /// `l op r` with the DSL's meaning, operands of type `ty`.
    pub fn binary(&self, op: BinOp, ty: Scalar, l: TokenStream, r: TokenStream) -> TokenStream {
        let private = crate::paths::private();
        let ops = quote!(#private::arith);
        if !is_infix(op, ty) {
            match op {
                BinOp::Add => return quote!(#l.wrapping_add(#r)),
                BinOp::Sub => return quote!(#l.wrapping_sub(#r)),
                BinOp::Mul => return quote!(#l.wrapping_mul(#r)),
                BinOp::Div => return quote!(#ops::div(#l, #r)),
                BinOp::Rem => return quote!(#ops::rem(#l, #r)),
                BinOp::Shl => return quote!(#l.wrapping_shl(#r as u32)),
                BinOp::Shr => return quote!(#l.wrapping_shr(#r as u32)),
                _ => {}
            }
        }
        let sym: TokenStream = op.symbol().parse().unwrap_or_default();
        quote!((#l #sym #r))
    }

    /// A math-table call giving a `ty`.
    fn call(&self, func: MathFn, ty: Scalar, args: &[Expr]) -> TokenStream {
        let private = crate::paths::private();
        let ops = quote!(#private::arith);
        let receiver_int = args.first().is_some_and(|a| a.ty.is_int());
        let lowered: Vec<TokenStream> = args.iter().map(|a| self.expr(a)).collect();
        if matches!(func, MathFn::FromBits | MathFn::FromF32) {
            let (t, f) = (scalar_type(ty), format_ident!("{}", func.name()));
            return quote!(#t::#f(#(#lowered),*));
        }
        // What the `half` crate has no inherent method for: through `f32`, as it rounds.
        if args.first().is_some_and(|a| a.ty.is_half())
            && matches!(
                func,
                MathFn::Sqrt
                    | MathFn::Abs
                    | MathFn::Floor
                    | MathFn::Ceil
                    | MathFn::Round
                    | MathFn::Trunc
                    | MathFn::Clamp
            )
        {
            let f = format_ident!("{}", func.name());
            return quote!(#private::half_arith::#f(#(#lowered),*));
        }
        // Methods whose Rust version panics where the DSL defines a value.
        if matches!(
            func,
            MathFn::Clamp
                | MathFn::DivCeil
                | MathFn::NextPowerOfTwo
                | MathFn::Ilog2
                | MathFn::WrappingDiv
                | MathFn::WrappingRem
        ) {
            let f = format_ident!("{}", func.name());
            return quote!(#ops::#f(#(#lowered),*));
        }
        // The fused integer functions, which Rust lacks: the runtime's, which wrap a sum as the GPU does.
        if func.is_fused_int() {
            let f = format_ident!("{}", func.name());
            return quote!(#ops::#f(#(#lowered),*));
        }
        let name = match func {
            MathFn::Abs if receiver_int => "wrapping_abs",
            MathFn::Pow => "wrapping_pow",
            other => other.name(),
        };
        let method = format_ident!("{name}");
        let (receiver, rest) = lowered.split_first().map(|(r, rest)| (r.clone(), rest.to_vec())).unwrap_or_default();
        quote!(#receiver.#method(#(#rest),*))
    }
}

/// Whether `op` on operands of type `ty` is emitted as Rust's own infix
/// operator (integer arithmetic and shifts become wrapping methods).
fn is_infix(op: BinOp, ty: Scalar) -> bool {
    !(ty.is_int()
        && matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem | BinOp::Shl | BinOp::Shr))
}

/// Rust's precedence level of an associative infix operator; comparisons,
/// which do not chain, have none.
fn infix_level(op: BinOp) -> Option<u8> {
    match op {
        BinOp::Mul | BinOp::Div | BinOp::Rem => Some(1),
        BinOp::Add | BinOp::Sub => Some(2),
        BinOp::Shl | BinOp::Shr => Some(3),
        BinOp::BitAnd => Some(4),
        BinOp::BitXor => Some(5),
        BinOp::BitOr => Some(6),
        BinOp::And => Some(7),
        BinOp::Or => Some(8),
        _ => None,
    }
}

/// The Rust type of a scalar: its name, or for the half precision types gsync's re-export of
/// the `half` crate's, so that the user's crate needs no dependency of its own.
pub fn scalar_type(s: Scalar) -> TokenStream {
    let private = crate::paths::private();
    let name = format_ident!("{}", s.name());
    if s.is_half() {
        quote!(#private::#name)
    } else {
        quote!(#name)
    }
}

fn int_literal(v: i128, ty: Scalar) -> TokenStream {
    let text = format!("{v}{}", ty.name());
    let lit: TokenStream = text.parse().unwrap_or_default();
    if v < 0 {
        quote!((#lit))
    } else {
        lit
    }
}

fn float_literal(v: f64, ty: Scalar) -> TokenStream {
    let t = scalar_type(ty);
    if ty.is_half() {
        let bits: TokenStream = format!("{:#06x}u16", crate::ir::half_bits(v, ty)).parse().unwrap_or_default();
        return quote!(#t::from_bits(#bits));
    }
    if v.is_nan() {
        return quote!(#t::NAN);
    }
    if v.is_infinite() {
        return if v > 0.0 { quote!(#t::INFINITY) } else { quote!(#t::NEG_INFINITY) };
    }
    let text = if ty == Scalar::F32 { format!("{:?}f32", v as f32) } else { format!("{v:?}f64") };
    let lit: TokenStream = text.parse().unwrap_or_default();
    // `-0.0` too: unparenthesized, `-0.0f64.exp()` would parse as `-(0.0f64.exp())`.
    if v.is_sign_negative() {
        quote!((#lit))
    } else {
        lit
    }
}
