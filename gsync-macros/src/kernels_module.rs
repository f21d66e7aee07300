//! `#[gsync::kernels] mod m { … }`: a module whose `#[grid_phases]` kernels
//! share its `#[device]` functions and its `const`s. The attribute sorts the
//! items, evaluates the constants, expands each kernel with them in sight,
//! drops the device functions (they exist only inlined in kernels) and keeps
//! every other item as written.

use crate::diagnostics::Diagnostics;
use crate::lower::{self, ModuleItems};
use crate::parse;
use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;

/// Expands the module.
pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut diag = Diagnostics::default();
    if !args.is_empty() {
        diag.error(args.span(), "`#[gsync::kernels]` takes no options");
    }
    let module: syn::ItemMod = match syn::parse2(item) {
        Ok(m) => m,
        Err(e) => {
            return syn::Error::new(e.span(), "`#[gsync::kernels]` applies to a module: `mod name { … }`")
                .to_compile_error();
        }
    };
    let Some((_, content)) = &module.content else {
        return syn::Error::new(module.span(), "a `#[gsync::kernels]` module has its items inline: `mod name { … }`")
            .to_compile_error();
    };
    let mut kept = Vec::new();
    let mut kernels = Vec::new();
    let mut items = ModuleItems::default();
    let mut consts = Vec::new();
    let mut tables = Vec::new();
    // Each `const` item's name and its place in `kept`.
    let mut kept_consts = Vec::new();
    for item in content {
        match item {
            syn::Item::Fn(f) => match marker(&f.attrs) {
                Some((Marker::Device, _)) => {
                    let func = parse::device_fn(f, &mut diag);
                    check_name(&func, &items, &mut diag);
                    items.functions.push(func);
                }
                Some((Marker::Kernel, attr)) => {
                    let args = match &f.attrs[attr].meta {
                        syn::Meta::List(list) => list.tokens.clone(),
                        _ => TokenStream::new(),
                    };
                    let mut func = f.clone();
                    func.attrs.remove(attr);
                    kernels.push((args, func));
                }
                None => kept.push(quote!(#item)),
            },
            syn::Item::Const(c) => {
                kept_consts.push((crate::names::rust_name(&c.ident), kept.len()));
                if lower::consts::is_table(c) {
                    tables.push(c);
                    kept.push(quote!(#[allow(dead_code)] #item));
                } else if parse::scalar_type(&c.ty).is_some() {
                    consts.push(c);
                    // The kernels read it folded into their code, which rustc does not see.
                    kept.push(quote!(#[allow(dead_code)] #item));
                } else {
                    kept.push(quote!(#item));
                }
            }
            other => kept.push(quote!(#other)),
        }
    }
    items.consts = lower::consts::module_consts(&consts, &mut diag);
    items.tables = lower::consts::module_tables(&tables, &items, &mut diag);
    // A constant computed from `BLOCK_SIZE` has no value on the host: kernels only.
    let per_block: Vec<usize> = kept_consts
        .iter()
        .filter(|(name, _)| {
            items.consts.iter().any(|(n, value, _)| n == name && matches!(value, crate::ir::ConstValue::Block(_)))
        })
        .map(|(_, at)| *at)
        .collect();
    let kept: Vec<TokenStream> =
        kept.into_iter().enumerate().filter(|(at, _)| !per_block.contains(at)).map(|(_, item)| item).collect();
    let expanded = kernels.iter().map(|(args, func)| crate::expand::kernel(args.clone(), func, &items));
    let errors = diag.into_error().map(|e| e.to_compile_error());
    let attrs = &module.attrs;
    let vis = &module.vis;
    let name = &module.ident;
    quote! {
        #errors
        #(#attrs)*
        #vis mod #name {
            #(#kept)*
            #(#expanded)*
        }
    }
}

enum Marker {
    Device,
    Kernel,
}

/// Whether a function is marked `#[device]` or `#[grid_phases]` (with or
/// without a path), and which attribute marks it.
fn marker(attrs: &[syn::Attribute]) -> Option<(Marker, usize)> {
    attrs.iter().enumerate().find_map(|(i, a)| {
        let last = a.path().segments.last()?.ident.to_string();
        match last.as_str() {
            "device" => Some((Marker::Device, i)),
            "grid_phases" => Some((Marker::Kernel, i)),
            _ => None,
        }
    })
}

/// A device function's name may be neither a builtin's nor another's.
fn check_name(func: &parse::DeviceFn, items: &ModuleItems, diag: &mut Diagnostics) {
    let name = func.ident.to_string();
    if lower::is_reserved_name(&name) || gsync_contract::Axes::of_builtin(&name).any() {
        diag.error(func.span, format!("`{name}` is a gsync builtin: give the device function another name"));
    } else if items.functions.iter().any(|f| f.ident == func.ident) {
        diag.error(func.span, format!("the device function `{name}` is defined twice in this module"));
    }
}
