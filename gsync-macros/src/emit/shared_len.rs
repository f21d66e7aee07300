//! The host side of shared slices: `fn dynamic_shared(params…) -> DynamicShared`, which the
//! generated module calls with a call's arguments. Its closure computes each slice's length
//! for a block size from the expression the kernel declares (as the check hands it on in the
//! kernel's facts), with Rust's checked arithmetic: what overflows or divides by zero is the
//! launch's `Error::SharedSliceLength`, never a wrapped length.

use crate::check::Facts;
use crate::emit::rust_expr::scalar_type;
use crate::emit::rust_names::{array_ident, var_ident};
use crate::ir::*;
use crate::ir_walk::each_expr;
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};

/// The arguments of `dynamic_shared` in an emitted form's body: its parameters, by name.
pub fn form_args(k: &Kernel) -> Vec<Ident> {
    k.params
        .iter()
        .map(|p| match p {
            Param::Slice(a) => array_ident(k, *a),
            Param::Scalar(v) => var_ident(k, *v),
        })
        .collect()
}

/// `fn dynamic_shared(…)`, for a kernel with shared slices.
pub fn function(k: &Kernel, facts: &Facts) -> TokenStream {
    let private = crate::paths::private();
    let params = k.params.iter().map(|p| match p {
        Param::Slice(a) => {
            let (id, t) = (array_ident(k, *a), scalar_type(k.array(*a).elem));
            quote!(#id: &#private::DeviceBuffer<#t>)
        }
        Param::Scalar(v) => {
            let (id, t) = (var_ident(k, *v), scalar_type(k.var(*v).ty));
            quote!(#id: #t)
        }
    });
    let slices = k.shared_slices.iter().map(|decl| {
        let a = k.array(decl.array);
        let (name, line, bytes) = (&a.name, decl.line, a.elem.bits() / 8);
        quote!(#private::SharedSlice { name: #name, line: #line, elem_bytes: #bytes })
    });
    let static_bytes = u32::try_from(facts.static_shared_bytes).unwrap_or(u32::MAX);
    let lens: Vec<TokenStream> = facts
        .shared_slice_lens
        .iter()
        .enumerate()
        .map(|(index, len)| {
            let value = HostLen { k }.expr(len);
            quote! {
                (|| -> ::core::result::Result<u64, &'static str> { ::core::result::Result::Ok((#value) as u64) })()
                    .map_err(|why| (#index, why))?
            }
        })
        .collect();
    let captures = global_lens(facts).into_iter().map(|a| {
        let (id, len) = (array_ident(k, a), len_ident(k, a));
        quote!(let #len: usize = #id.len();)
    });
    let block_dim = block_dim_ident();
    quote! {
        /// The call's shared slices: their lengths for a block size, computed as Rust computes
        /// the kernel's length expressions.
        #[allow(unused_variables, unused_parens, clippy::all)]
        fn dynamic_shared(#(#params),*) -> #private::DynamicShared {
            const SLICES: &[#private::SharedSlice] = &[#(#slices),*];
            #(#captures)*
            #private::DynamicShared::new(SLICES, #static_bytes, move |#block_dim: u32| {
                ::core::result::Result::Ok(::std::vec![#(#lens),*])
            })
        }
    }
}

/// The slice parameters whose lengths the slices' lengths use.
fn global_lens(facts: &Facts) -> Vec<ArrayId> {
    let mut found = Vec::new();
    for len in &facts.shared_slice_lens {
        each_expr(len, &mut |e| {
            if let ExprKind::Len(a) = e.kind {
                if !found.contains(&a) {
                    found.push(a);
                }
            }
        });
    }
    found
}

fn len_ident(k: &Kernel, a: ArrayId) -> Ident {
    Ident::new(&format!("{}_len", array_ident(k, a)), Span::mixed_site())
}

fn block_dim_ident() -> Ident {
    Ident::new("block_dim", Span::mixed_site())
}

/// A length expression as checked Rust, in a closure returning `Result<_, &'static str>`.
struct HostLen<'k> {
    k: &'k Kernel,
}

impl HostLen<'_> {
    fn expr(&self, e: &Expr) -> TokenStream {
        crate::stack::deep(|| self.expr_inner(e))
    }

    fn expr_inner(&self, e: &Expr) -> TokenStream {
        let t = scalar_type(e.ty);
        match &e.kind {
            ExprKind::Int(v) => int_literal(*v, e.ty),
            ExprKind::Bool(b) => quote!(#b),
            ExprKind::Var(v) => {
                let id = var_ident(self.k, *v);
                quote!(#id)
            }
            ExprKind::Len(a) => {
                let id = len_ident(self.k, *a);
                quote!(#id)
            }
            ExprKind::Builtin(_) => {
                let id = block_dim_ident();
                quote!(#id)
            }
            ExprKind::Unary(UnOp::Neg, a) => {
                let (a, why) = (self.expr(a), format!("`-` overflows `{}`", e.ty.name()));
                quote!(#a.checked_neg().ok_or(#why)?)
            }
            ExprKind::Unary(UnOp::Not, a) => {
                let a = self.expr(a);
                quote!((!#a))
            }
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b),
            ExprKind::Cast(a) => {
                let a = self.expr(a);
                quote!((#a as #t))
            }
            ExprKind::Select { cond, then, otherwise } => {
                let (c, a, b) = (self.expr(cond), self.expr(then), self.expr(otherwise));
                quote!((if #c { #a } else { #b }))
            }
            ExprKind::Call { func, args } => {
                let args: Vec<TokenStream> = args.iter().map(|a| self.expr(a)).collect();
                match (func, args.as_slice()) {
                    (MathFn::Min, [a, b]) => quote!(::core::cmp::min(#a, #b)),
                    (MathFn::Max, [a, b]) => quote!(::core::cmp::max(#a, #b)),
                    (MathFn::NextPowerOfTwo, [a]) => {
                        let why = format!("`next_power_of_two` overflows `{}`", e.ty.name());
                        quote!(#a.checked_next_power_of_two().ok_or(#why)?)
                    }
                    (MathFn::DivCeil, [a, b]) => {
                        let why = "`div_ceil` divides by zero";
                        quote! {{
                            let (n, d): (#t, #t) = (#a, #b);
                            n.checked_div(d).ok_or(#why)? + ((n % d != 0) as #t)
                        }}
                    }
                    _ => quote!(0),
                }
            }
            // `check::shared_len` lets nothing else through.
            _ => quote!(0),
        }
    }

    fn binary(&self, op: BinOp, a: &Expr, b: &Expr) -> TokenStream {
        let (x, y) = (self.expr(a), self.expr(b));
        let ty = a.ty.name();
        let checked = |method: &str, why: String| {
            let method = format_ident!("{method}");
            quote!(#x.#method(#y).ok_or(#why)?)
        };
        match op {
            BinOp::Add => checked("checked_add", format!("`+` overflows `{ty}`")),
            BinOp::Sub => checked("checked_sub", format!("`-` overflows `{ty}`")),
            BinOp::Mul => checked("checked_mul", format!("`*` overflows `{ty}`")),
            BinOp::Div => checked("checked_div", format!("`/` divides by zero or overflows `{ty}`")),
            BinOp::Rem => checked("checked_rem", format!("`%` divides by zero or overflows `{ty}`")),
            BinOp::Shl | BinOp::Shr => {
                let method = format_ident!("{}", if op == BinOp::Shl { "checked_shl" } else { "checked_shr" });
                let why = format!("`{}` shifts `{ty}` by its width or more", op.symbol());
                quote! {
                    <u32 as ::core::convert::TryFrom<_>>::try_from(#y).ok().and_then(|s| #x.#method(s)).ok_or(#why)?
                }
            }
            _ => {
                let op: TokenStream = op.symbol().parse().unwrap_or_default();
                quote!((#x #op #y))
            }
        }
    }
}

/// An integer literal of type `ty`: a `u128` or negated `i128` literal cast to it (every
/// value of a kernel's types is one of these).
fn int_literal(v: i128, ty: Scalar) -> TokenStream {
    let t = scalar_type(ty);
    if v < 0 {
        let magnitude = Literal::i128_suffixed(v.unsigned_abs() as i128);
        quote!(((-#magnitude) as #t))
    } else {
        let value = Literal::u128_suffixed(v.unsigned_abs());
        quote!((#value as #t))
    }
}
