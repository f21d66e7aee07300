//! One `#[grid_phases]` kernel through the stages: parse, lower, check, split and emit,
//! once per element type of a generic kernel. The stages hand their results on: lowering's
//! kernel and the check's facts are all that splitting and emission read.

use crate::diagnostics::Diagnostics;
use crate::{check, emit, generic, lower, parse, split};
use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;

/// Expands one `#[grid_phases]` kernel that sees `items` (its module's
/// device functions and constants): one module, or one per element type of
/// a generic kernel with a module that dispatches on the type.
pub fn kernel(args: TokenStream, func: &syn::ItemFn, items: &lower::ModuleItems) -> TokenStream {
    let mut diag = Diagnostics::default();
    let options = parse::options(args, &mut diag);
    let generics = parse::generics(&func.sig.generics, "a `#[grid_phases]` kernel", &mut diag);
    if generics.len() > 1 {
        diag.error(
            func.sig.generics.span(),
            "a `#[grid_phases]` kernel takes at most one type parameter, its element type",
        );
    }
    let Some(param) = generics.first().filter(|_| !diag.has_errors()) else {
        if let Some(e) = diag.into_error() {
            let sig = parse::signature(func, &parse::Substitution::default(), &mut Diagnostics::default());
            let errors = e.to_compile_error();
            let module = emit::module::wrapper(&sig, quote!());
            return quote!(#errors #module);
        }
        return instance(&options, func, items, &parse::Substitution::default()).unwrap_or_else(|e| {
            let sig = parse::signature(func, &parse::Substitution::default(), &mut Diagnostics::default());
            let errors = e.to_compile_error();
            let module = emit::module::wrapper(&sig, quote!());
            quote!(#errors #module)
        });
    };
    let mut modules = Vec::new();
    let mut errors = generic::Errors::default();
    for ty in param.bound.slice_types() {
        let subst = parse::Substitution { types: vec![(param.ident.to_string(), ty)] };
        match instance(&options, func, items, &subst) {
            Ok(items) => modules.push((ty, items)),
            Err(e) => errors.add(&param.ident, ty, e),
        }
    }
    let sig = parse::signature(func, &parse::Substitution::default(), &mut Diagnostics::default());
    match errors.into_error(&param.ident, param.bound.slice_types().len()) {
        Some(e) => {
            let errors = e.to_compile_error();
            let module = emit::module::wrapper(&sig, quote!());
            quote!(#errors #module)
        }
        None => generic::module(func, &sig, param, &modules),
    }
}

/// One kernel for one element type (the only one, if it is not generic):
/// the items of its module, or its errors.
fn instance(
    options: &parse::Options,
    func: &syn::ItemFn,
    items: &lower::ModuleItems,
    subst: &parse::Substitution,
) -> Result<TokenStream, syn::Error> {
    let mut diag = Diagnostics::default();
    let sig = parse::signature(func, subst, &mut diag);
    let kernel = lower::kernel(&sig, &func.block, options.threads, items, subst, &mut diag)
        .map(|k| crate::ir::Kernel { blocks_per_sm: options.blocks_per_sm, ..k });
    let checked = kernel.and_then(|k| check::kernel(&k, &mut diag).map(|facts| (k, facts)));
    match (checked, diag.into_error()) {
        (Some((k, facts)), None) => {
            let plan = split::plan(&k, &facts.levels);
            let split_source =
                |checks| plan.as_ref().map(|p| emit::cuda::split_source(&k, &facts, p, checks)).unwrap_or_default();
            let sources = emit::module::Sources {
                checked: emit::cuda::kernel_source(&k, &facts, true),
                unchecked: emit::cuda::kernel_source(&k, &facts, false),
                split_checked: split_source(true),
                split_unchecked: split_source(false),
                segments: plan
                    .as_ref()
                    .map(|p| (0..p.segments.len()).map(|i| emit::cuda_names::segment_symbol(&k, i)).collect())
                    .unwrap_or_default(),
                split_error: plan.as_ref().err().cloned(),
                split_reads_device: plan.as_ref().is_ok_and(|p| p.reads_device),
                rust_signature: rust_signature(func, subst),
            };
            let split_host = emit::split_host::body(&k, &facts, plan.as_ref().ok());
            let emulator = emit::emu::body(&k, &facts);
            let emulated_segments: Vec<_> = plan
                .as_ref()
                .map(|p| p.segments.iter().enumerate().map(|(i, s)| emit::emu::segment(&k, &facts, i, s)).collect())
                .unwrap_or_default();
            let module_items =
                emit::module::items(&sig, &k, &facts, &sources, split_host, emulator, &emulated_segments);
            if subst.types.is_empty() {
                Ok(emit::module::wrapper(&sig, module_items))
            } else {
                Ok(module_items)
            }
        }
        (_, error) => Err(error.unwrap_or_else(|| syn::Error::new(func.sig.ident.span(), "the kernel did not lower"))),
    }
}

/// `fn name(a: &mut [f32], n: u32)`, for the header of the generated CUDA
/// (`fn name::<f32>(a: &mut [T], …)` for an instance of a generic kernel).
fn rust_signature(func: &syn::ItemFn, subst: &parse::Substitution) -> String {
    let sig = &func.sig;
    let name = &sig.ident;
    let inputs = &sig.inputs;
    let instance = subst.types.iter().map(|(_, s)| quote::format_ident!("{}", s.name()));
    let turbofish = if subst.types.is_empty() { quote!() } else { quote!(::<#(#instance),*>) };
    let text = quote!(fn #name #turbofish(#inputs)).to_string();
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace(" ,", ",")
        .replace("& ", "&")
        .replace(" (", "(")
        .replace("( ", "(")
        .replace(" )", ")")
        .replace(" :", ":")
        .replace("[ ", "[")
        .replace(" ]", "]")
}
