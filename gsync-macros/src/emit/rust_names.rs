//! The Rust identifiers that the emulator body, the split form's host code and the
//! generated module share for the kernel's variables and arrays and for the GPU handle.

use crate::ir::{ArrayId, CallId, Kernel, UniqueName, VarId};
use crate::names;
use proc_macro2::{Ident, Span};
use quote::format_ident;

/// The Rust name of a kernel variable in the split form's host code and the emulator.
pub fn var_ident(k: &Kernel, v: VarId) -> Ident {
    local(&k.var(v).unique)
}

/// The Rust name of a slice or array in the split form's host code and the emulator.
pub fn array_ident(k: &Kernel, a: ArrayId) -> Ident {
    local(&k.array(a).unique)
}

/// The label of an inlined call's block, which its `return`s break out of.
pub fn leave_label(k: &Kernel, call: CallId) -> syn::Lifetime {
    syn::Lifetime::new(&format!("'gsync_return_{}_{}", names::stem(&k.call(call).function), call.0), Span::call_site())
}

/// The `&Gpu` parameter of the generated functions (hygienic: a kernel
/// parameter may be named `gpu`).
pub fn gpu_ident() -> Ident {
    Ident::new("gpu", Span::mixed_site())
}

/// The split run (`&mut SplitRun`) that the split form's host code launches through.
pub fn run_ident() -> Ident {
    Ident::new("run", Span::mixed_site())
}

/// `v_` and the name's spelling with [`names::stem`]'s escapes: ASCII, so
/// that it draws no lint on unusual characters, and meeting no Rust keyword
/// and no name the generated code declares.
fn local(name: &UniqueName) -> Ident {
    format_ident!("v_{}", names::stem(&name.spelling()))
}
