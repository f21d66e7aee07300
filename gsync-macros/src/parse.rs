//! Stage 1: the attribute's options and the function's signature.

use crate::diagnostics::Diagnostics;
use crate::ir::Scalar;
use gsync_contract::{DEFAULT_THREADS, MAX_BLOCKS_PER_SM, MAX_BLOCK_SIZE, MAX_THREADS_PER_SM};
use proc_macro2::Span;
use syn::spanned::Spanned;

/// Options written in `#[grid_phases(...)]`.
#[derive(Default)]
pub struct Options {
    /// `threads = N`: the default block size; 0 if not given.
    pub threads: u32,
    /// `blocks_per_sm = N`: blocks of the default size the kernel is compiled to keep resident
    /// on each SM (`__launch_bounds__`'s minimum); 0 if not given.
    pub blocks_per_sm: u32,
}

/// The form the options take, for messages.
const FORM: &str = "`#[grid_phases(threads = 256, blocks_per_sm = 3)]`";

/// Parses `threads = N` and `blocks_per_sm = N`; anything else is an error on its span.
pub fn options(args: proc_macro2::TokenStream, diag: &mut Diagnostics) -> Options {
    let mut options = Options::default();
    if args.is_empty() {
        return options;
    }
    let parser = syn::punctuated::Punctuated::<syn::MetaNameValue, syn::Token![,]>::parse_terminated;
    let list = match syn::parse::Parser::parse2(parser, args) {
        Ok(list) => list,
        Err(e) => {
            diag.push(syn::Error::new(e.span(), format!("expected `#[grid_phases]` or {FORM}")));
            return options;
        }
    };
    // Options seen (valid or not, for "given twice"), and where `blocks_per_sm`'s value is.
    let (mut seen_threads, mut seen_blocks, mut blocks_span) = (false, false, None);
    let mut threads_refused = false;
    for nv in list {
        // Each option's slot, whether it was seen, what it names (for "name … once"), what a
        // value must be, and the values.
        let is_threads = nv.path.is_ident("threads");
        let (slot, seen, what, must_be, range) = if is_threads {
            (&mut options.threads, &mut seen_threads, "the block size", "a block size", 1..=MAX_BLOCK_SIZE)
        } else if nv.path.is_ident("blocks_per_sm") {
            let blocks = 1..=MAX_BLOCKS_PER_SM;
            (&mut options.blocks_per_sm, &mut seen_blocks, "the blocks per SM", "a number of blocks", blocks)
        } else {
            diag.error(
                nv.path.span(),
                "unknown option: `#[grid_phases]` accepts `threads = N` (the default block size) and \
                 `blocks_per_sm = N` (blocks kept resident per SM)",
            );
            continue;
        };
        let name = nv.path.get_ident().map(ToString::to_string).unwrap_or_default();
        if std::mem::replace(seen, true) {
            diag.error(nv.path.span(), format!("`{name}` is given twice: name {what} once"));
            continue;
        }
        let value = match &nv.value {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(n), .. }) => match n.base10_parse::<u32>() {
                Ok(v) if range.contains(&v) => Some(v),
                _ => {
                    let message = format!("`{name}` must be {must_be} from {} to {}", range.start(), range.end());
                    diag.error(n.span(), message);
                    None
                }
            },
            _ => {
                diag.error(nv.value.span(), format!("`{name}` takes an integer literal, e.g. {FORM}"));
                None
            }
        };
        match value {
            Some(v) => *slot = v,
            None => threads_refused |= is_threads,
        }
        if !is_threads {
            blocks_span = Some(nv.value.span());
        }
    }
    // Checked against the block size only where that is known: given and valid, or the default.
    let threads = if options.threads == 0 { DEFAULT_THREADS } else { options.threads };
    if let Some(span) = blocks_span.filter(|_| options.blocks_per_sm != 0 && !threads_refused) {
        let resident = u64::from(options.blocks_per_sm) * u64::from(threads);
        if resident > u64::from(MAX_THREADS_PER_SM) {
            diag.error(
                span,
                format!(
                    "{} blocks of {threads} threads are {resident} threads, more than the {MAX_THREADS_PER_SM} \
                     an SM holds: ask for at most {} blocks per SM",
                    options.blocks_per_sm,
                    MAX_THREADS_PER_SM / threads
                ),
            );
            options.blocks_per_sm = 0;
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
    /// A slice; `symmetric` when marked `#[symmetric]`.
    Slice {
        elem: Scalar,
        mutable: bool,
        symmetric: bool,
    },
    Scalar(Scalar),
}

/// The function's name, docs, visibility and parameters.
pub struct Signature {
    pub name: syn::Ident,
    pub vis: syn::Visibility,
    pub attrs: Vec<syn::Attribute>,
    pub params: Vec<ParamDecl>,
}

const SLICE_ELEMS: &str = "u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, f16 or bf16";

/// Reads the signature, reporting everything a kernel cannot have. `generics`
/// gives each type parameter of a generic kernel the type of the instance
/// being expanded (its bounds were read by [`generics`]).
pub fn signature(func: &syn::ItemFn, generics: &Substitution, diag: &mut Diagnostics) -> Signature {
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
    if let syn::ReturnType::Type(_, ty) = &sig.output {
        diag.error(ty.span(), "a `#[grid_phases]` kernel returns nothing: write results into a `&mut [T]` parameter");
    }
    if let Some(v) = &sig.variadic {
        diag.error(v.span(), "a `#[grid_phases]` kernel cannot be variadic");
    }
    let mut params = Vec::new();
    for arg in &sig.inputs {
        if !bound_before(sig, arg, diag) {
            params.extend(param(arg, generics, diag));
        }
    }
    Signature { name: sig.ident.clone(), vis: func.vis.clone(), attrs: func.attrs.clone(), params }
}

/// Whether `arg` names a parameter that an earlier one of `sig` named already (an error,
/// as rustc gives it, on the later name).
fn bound_before(sig: &syn::Signature, arg: &syn::FnArg, diag: &mut Diagnostics) -> bool {
    let name = |a: &syn::FnArg| match a {
        syn::FnArg::Typed(t) => match &*t.pat {
            syn::Pat::Ident(p) => Some(p.ident.clone()),
            _ => None,
        },
        syn::FnArg::Receiver(_) => None,
    };
    let Some(ident) = name(arg) else { return false };
    let earlier = sig.inputs.iter().take_while(|a| !std::ptr::eq(*a, arg)).any(|a| name(a).as_ref() == Some(&ident));
    if earlier {
        diag.error(ident.span(), format!("identifier `{ident}` is bound more than once in this parameter list"));
    }
    earlier
}

fn param(arg: &syn::FnArg, generics: &Substitution, diag: &mut Diagnostics) -> Option<ParamDecl> {
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
    let mut kind = param_kind(&pat_ty.ty, generics, diag)?;
    // A refused attribute leaves the parameter as written, so that the body's uses of it
    // raise no second error.
    for attr in &pat_ty.attrs {
        let at = attr.meta.span();
        match (&mut kind, attr.path().is_ident("symmetric")) {
            (ParamKind::Slice { symmetric, .. }, true) if matches!(attr.meta, syn::Meta::Path(_)) => *symmetric = true,
            (ParamKind::Slice { .. }, true) => diag.error(at, "`#[symmetric]` takes no arguments"),
            (ParamKind::Scalar(_), true) => diag.error(
                at,
                "`#[symmetric]` marks a slice that every PE of a team holds; a scalar is passed to each PE as it is",
            ),
            (_, false) => diag.error(at, "a kernel parameter takes no attribute but `#[symmetric]`"),
        }
    }
    Some(ParamDecl { name: pat.ident.clone(), kind, mutable_binding: pat.mutability.is_some(), span: pat_ty.span() })
}

fn param_kind(ty: &syn::Type, generics: &Substitution, diag: &mut Diagnostics) -> Option<ParamKind> {
    match ty {
        syn::Type::Group(g) => param_kind(&g.elem, generics, diag),
        syn::Type::Reference(r) => {
            let syn::Type::Slice(slice) = &*r.elem else {
                diag.error(ty.span(), "a reference parameter must be a slice, `&[T]` or `&mut [T]`");
                return None;
            };
            if r.lifetime.is_some() {
                diag.error(r.lifetime.span(), "kernel slices take no lifetime");
                return None;
            }
            match generics.scalar_type(&slice.elem) {
                Some(elem) if elem != Scalar::Bool && elem != Scalar::Usize => {
                    Some(ParamKind::Slice { elem, mutable: r.mutability.is_some(), symmetric: false })
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
        _ => match generics.scalar_type(ty) {
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

/// A bound on a type parameter: the element types it admits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// `T: Int`: the integer types.
    Int,
    /// `T: Float`: `f32` and `f64`.
    Float,
    /// `T: Num`: the integer and float types.
    Num,
}

impl Bound {
    /// The bound's name, as written.
    pub fn name(self) -> &'static str {
        match self {
            Bound::Int => "Int",
            Bound::Float => "Float",
            Bound::Num => "Num",
        }
    }

    /// Whether `s` satisfies the bound.
    pub fn admits(self, s: Scalar) -> bool {
        match self {
            Bound::Int => s.is_int(),
            Bound::Float => s.is_float(),
            // Half precision has no literals or `as` casts, which generic code may use.
            Bound::Num => s != Scalar::Bool && !s.is_half(),
        }
    }

    /// The element types a generic kernel is instantiated for: every type the
    /// bound admits that a slice can hold.
    pub fn slice_types(self) -> Vec<Scalar> {
        Scalar::ALL.into_iter().filter(|s| self.admits(*s) && *s != Scalar::Usize).collect()
    }
}

/// A type parameter `T: Bound`.
#[derive(Clone, Debug)]
pub struct GenericParam {
    pub ident: syn::Ident,
    pub bound: Bound,
}

/// Reads `<T: Int, U: Float>`: type parameters with one gsync bound each.
pub fn generics(g: &syn::Generics, what: &str, diag: &mut Diagnostics) -> Vec<GenericParam> {
    if let Some(w) = &g.where_clause {
        diag.error(w.span(), format!("{what} takes its bounds inline, e.g. `<T: Float>`, not in a `where` clause"));
    }
    let mut out = Vec::new();
    for p in &g.params {
        let syn::GenericParam::Type(t) = p else {
            diag.error(p.span(), format!("{what} is generic only over element types, e.g. `<T: Num>`"));
            continue;
        };
        if let Some(d) = &t.default {
            diag.error(d.span(), "a type parameter of a kernel or device function takes no default");
        }
        let bounds: Vec<_> = t.bounds.iter().collect();
        let bound = match bounds.as_slice() {
            [syn::TypeParamBound::Trait(tr)] if tr.lifetimes.is_none() => {
                match tr.path.segments.last().map(|s| s.ident.to_string()).as_deref() {
                    Some("Int") => Some(Bound::Int),
                    Some("Float") => Some(Bound::Float),
                    Some("Num") => Some(Bound::Num),
                    _ => None,
                }
            }
            _ => None,
        };
        match bound {
            Some(bound) => out.push(GenericParam { ident: t.ident.clone(), bound }),
            None => diag.error(
                t.span(),
                format!("bound `{}` by one of `Int`, `Float` or `Num`, e.g. `{}: Float`: the bound says which element types and operations the body may use", t.ident, t.ident),
            ),
        }
    }
    out
}

/// The element type each type parameter stands for, in one instance.
#[derive(Clone, Debug, Default)]
pub struct Substitution {
    pub types: Vec<(String, Scalar)>,
}

impl Substitution {
    /// The type a parameter name stands for.
    pub fn get(&self, name: &str) -> Option<Scalar> {
        self.types.iter().find(|(n, _)| n == name).map(|(_, s)| *s)
    }

    /// A scalar type written as a bare path, a type parameter included.
    pub fn scalar_type(&self, ty: &syn::Type) -> Option<Scalar> {
        match ty {
            syn::Type::Path(p) if p.qself.is_none() => {
                let name = p.path.get_ident()?.to_string();
                self.get(&name).or_else(|| Scalar::from_name(&name))
            }
            syn::Type::Paren(p) => self.scalar_type(&p.elem),
            syn::Type::Group(g) => self.scalar_type(&g.elem),
            _ => None,
        }
    }
}

/// A `#[device]` function: inlined into the kernels that call it.
pub struct DeviceFn {
    pub ident: syn::Ident,
    pub generics: Vec<GenericParam>,
    pub inputs: Vec<DeviceParam>,
    /// The return type, `None` for `()`.
    pub output: Option<syn::Type>,
    pub body: syn::Block,
    pub span: Span,
}

/// A device function's parameter: its pattern and type, read when a call is
/// lowered (its types may name the function's type parameters).
pub struct DeviceParam {
    pub ident: syn::Ident,
    pub mutable_binding: bool,
    pub ty: syn::Type,
    pub span: Span,
}

impl DeviceParam {
    /// Whether the parameter is a slice (`Some(true)`) or a scalar under
    /// `subst`; `None` if its type is not one a device function takes.
    fn is_slice(&self, subst: &Substitution) -> Option<bool> {
        match slice_elem(&self.ty) {
            Some(elem) => subst.scalar_type(elem).filter(|s| *s != Scalar::Bool).map(|_| true),
            None => subst.scalar_type(&self.ty).map(|_| false),
        }
    }
}

/// The element type of `&[T]` or `&mut [T]`.
fn slice_elem(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Reference(r) = strip_group(ty) else { return None };
    let syn::Type::Slice(slice) = strip_group(&r.elem) else { return None };
    Some(&slice.elem)
}

fn strip_group(ty: &syn::Type) -> &syn::Type {
    match ty {
        syn::Type::Group(g) => strip_group(&g.elem),
        syn::Type::Paren(p) => strip_group(&p.elem),
        other => other,
    }
}

/// Reads a `#[device]` function, reporting what a device function cannot have.
pub fn device_fn(func: &syn::ItemFn, diag: &mut Diagnostics) -> DeviceFn {
    let sig = &func.sig;
    let what = "a `#[device]` function";
    if let Some(t) = &sig.asyncness {
        diag.error(t.span(), format!("{what} cannot be `async`"));
    }
    if let Some(t) = &sig.unsafety {
        diag.error(t.span(), format!("{what} cannot be `unsafe`: the DSL has no unsafe operations"));
    }
    if let Some(t) = &sig.constness {
        diag.error(t.span(), format!("{what} cannot be `const`"));
    }
    if let Some(v) = &sig.variadic {
        diag.error(v.span(), format!("{what} cannot be variadic"));
    }
    let generics = generics(&sig.generics, what, diag);
    let mut subst = Substitution::default();
    for g in &generics {
        // Any admitted type checks the parameter's shape.
        let example = if g.bound == Bound::Float { Scalar::F32 } else { Scalar::U32 };
        subst.types.push((g.ident.to_string(), example));
    }
    let mut inputs = Vec::new();
    for arg in &sig.inputs {
        if bound_before(sig, arg, diag) {
            continue;
        }
        let syn::FnArg::Typed(pat_ty) = arg else {
            diag.error(arg.span(), format!("{what} is a free function: `self` is not allowed"));
            continue;
        };
        let syn::Pat::Ident(pat) = &*pat_ty.pat else {
            diag.error(pat_ty.pat.span(), "parameters must be plain names, e.g. `data: &mut [f32]`");
            continue;
        };
        if pat.by_ref.is_some() || pat.subpat.is_some() {
            diag.error(pat.span(), "parameters must be plain names, e.g. `data: &mut [f32]`");
            continue;
        }
        let param = DeviceParam {
            ident: pat.ident.clone(),
            mutable_binding: pat.mutability.is_some(),
            ty: (*pat_ty.ty).clone(),
            span: pat_ty.span(),
        };
        match param.is_slice(&subst) {
            None => match slice_elem(&param.ty) {
                Some(elem) => diag.error(
                    elem.span(),
                    format!("unsupported slice element type: device functions take slices of {SLICE_ELEMS}, or of a type parameter"),
                ),
                None => diag.error(
                    pat_ty.ty.span(),
                    "unsupported parameter type: device functions take `&[T]`, `&mut [T]` and scalars (`u32`, `f32`, `bool`, …, or a type parameter)",
                ),
            },
            Some(true) if param.mutable_binding => diag.error(
                pat.mutability.span(),
                "a slice parameter cannot be a `mut` binding; write `name: &mut [T]` to write into it",
            ),
            Some(_) => inputs.push(param),
        }
    }
    let output = match &sig.output {
        syn::ReturnType::Default => None,
        syn::ReturnType::Type(_, ty) => {
            if subst.scalar_type(ty).is_none() {
                diag.error(
                    ty.span(),
                    "a device function returns a scalar (`u32`, `f32`, `bool`, …, or a type parameter) or nothing",
                );
            }
            Some((**ty).clone())
        }
    };
    DeviceFn { ident: sig.ident.clone(), generics, inputs, output, body: (*func.block).clone(), span: sig.ident.span() }
}
