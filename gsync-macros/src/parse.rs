//! Stage 1: the attribute's options and the function's signature.

use crate::diagnostics::Diagnostics;
use crate::ir::Scalar;
use proc_macro2::Span;
use syn::spanned::Spanned;

/// Options written in `#[grid_phases(...)]`.
#[derive(Default)]
pub struct Options {
    /// `threads = N`: the default block size.
    pub threads: u32,
}

/// Parses `threads = N`; anything else is an error on its span.
pub fn options(args: proc_macro2::TokenStream, diag: &mut Diagnostics) -> Options {
    let mut options = Options::default();
    if args.is_empty() {
        return options;
    }
    let parser = syn::punctuated::Punctuated::<syn::MetaNameValue, syn::Token![,]>::parse_terminated;
    let list = match syn::parse::Parser::parse2(parser, args) {
        Ok(list) => list,
        Err(e) => {
            diag.push(syn::Error::new(e.span(), "expected `#[grid_phases]` or `#[grid_phases(threads = 256)]`"));
            return options;
        }
    };
    for nv in list {
        let threads = nv.path.is_ident("threads");
        match (&nv.value, threads) {
            (syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(n), .. }), true) => match n.base10_parse::<u32>() {
                Ok(t) if (1..=1024).contains(&t) => options.threads = t,
                _ => diag.error(n.span(), "`threads` must be a block size from 1 to 1024"),
            },
            (_, true) => diag.error(nv.value.span(), "`threads` takes an integer literal, e.g. `threads = 256`"),
            _ => diag.error(nv.path.span(), "unknown option: `#[grid_phases]` accepts only `threads = N`"),
        }
    }
    options
}

/// A parameter as the user declared it.
pub struct ParamDecl {
    pub name: syn::Ident,
    pub kind: ParamKind,
    pub mutable_binding: bool,
    pub span: Span,
}

pub enum ParamKind {
    Slice { elem: Scalar, mutable: bool },
    Scalar(Scalar),
}

/// The function's name, docs, visibility and parameters.
pub struct Signature {
    pub name: syn::Ident,
    pub vis: syn::Visibility,
    pub attrs: Vec<syn::Attribute>,
    pub params: Vec<ParamDecl>,
}

const SLICE_ELEMS: &str = "u8, i8, u16, i16, u32, i32, u64, i64, f32 or f64";

/// Reads the signature, reporting everything a kernel cannot have.
pub fn signature(func: &syn::ItemFn, diag: &mut Diagnostics) -> Signature {
    let sig = &func.sig;
    if let Some(t) = &sig.asyncness {
        diag.error(t.span(), "a `#[grid_phases]` kernel cannot be `async`");
    }
    if let Some(t) = &sig.constness {
        diag.error(t.span(), "a `#[grid_phases]` kernel cannot be `const`");
    }
    if let Some(t) = &sig.unsafety {
        diag.error(t.span(), "a `#[grid_phases]` kernel cannot be `unsafe`: the DSL has no unsafe operations");
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        diag.error(
            sig.generics.span(),
            "a `#[grid_phases]` kernel cannot be generic: write one kernel per element type",
        );
    }
    if let syn::ReturnType::Type(_, ty) = &sig.output {
        diag.error(ty.span(), "a `#[grid_phases]` kernel returns nothing: write results into a `&mut [T]` parameter");
    }
    if let Some(v) = &sig.variadic {
        diag.error(v.span(), "a `#[grid_phases]` kernel cannot be variadic");
    }
    let params = sig.inputs.iter().filter_map(|arg| param(arg, diag)).collect();
    Signature { name: sig.ident.clone(), vis: func.vis.clone(), attrs: func.attrs.clone(), params }
}

fn param(arg: &syn::FnArg, diag: &mut Diagnostics) -> Option<ParamDecl> {
    let syn::FnArg::Typed(pat_ty) = arg else {
        diag.error(arg.span(), "a `#[grid_phases]` kernel is a free function: `self` is not allowed");
        return None;
    };
    let syn::Pat::Ident(pat) = &*pat_ty.pat else {
        diag.error(pat_ty.pat.span(), "kernel parameters must be plain names, e.g. `data: &mut [f32]`");
        return None;
    };
    if pat.by_ref.is_some() || pat.subpat.is_some() {
        diag.error(pat.span(), "kernel parameters must be plain names, e.g. `data: &mut [f32]`");
        return None;
    }
    let kind = param_kind(&pat_ty.ty, diag)?;
    if pat.mutability.is_some() && matches!(kind, ParamKind::Slice { .. }) {
        diag.error(
            pat.mutability.span(),
            "a slice parameter cannot be a `mut` binding; write `name: &mut [T]` to write into it",
        );
        return None;
    }
    Some(ParamDecl { name: pat.ident.clone(), kind, mutable_binding: pat.mutability.is_some(), span: pat_ty.span() })
}

fn param_kind(ty: &syn::Type, diag: &mut Diagnostics) -> Option<ParamKind> {
    match ty {
        syn::Type::Group(g) => param_kind(&g.elem, diag),
        syn::Type::Reference(r) => {
            let syn::Type::Slice(slice) = &*r.elem else {
                diag.error(ty.span(), "a reference parameter must be a slice, `&[T]` or `&mut [T]`");
                return None;
            };
            if r.lifetime.is_some() {
                diag.error(r.lifetime.span(), "kernel slices take no lifetime");
                return None;
            }
            match scalar_type(&slice.elem) {
                Some(elem) if elem != Scalar::Bool && elem != Scalar::Usize => {
                    Some(ParamKind::Slice { elem, mutable: r.mutability.is_some() })
                }
                _ => {
                    diag.error(
                        slice.elem.span(),
                        format!("unsupported slice element type: kernels take slices of {SLICE_ELEMS}"),
                    );
                    None
                }
            }
        }
        _ => match scalar_type(ty) {
            Some(s) => Some(ParamKind::Scalar(s)),
            None => {
                diag.error(
                    ty.span(),
                    format!("unsupported parameter type: kernels take `&[T]`, `&mut [T]` (T one of {SLICE_ELEMS}) and scalars of those types, `bool` or `usize`"),
                );
                None
            }
        },
    }
}

/// A scalar type written as a bare path (`u32`, `f64`, …).
pub fn scalar_type(ty: &syn::Type) -> Option<Scalar> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => p.path.get_ident().and_then(|i| Scalar::from_name(&i.to_string())),
        syn::Type::Paren(p) => scalar_type(&p.elem),
        syn::Type::Group(g) => scalar_type(&g.elem),
        _ => None,
    }
}
