//! The `#[grid_phases]` attribute: a Rust function whose phases are
//! separated by `grid_sync()` becomes one fused CUDA kernel.
//!
//! This file is the entry: it parses the attribute's input and hands it to `expand` (one
//! kernel) or `kernels_module` (a module of kernels). The stages, in the order a kernel
//! passes through them, all over the typed `ir` at the bottom:
//! `parse` (options and signature) → `lower` (body to typed IR, with
//! type inference) → `check` (operand rules, uniformity, `return`, block sizes; it returns
//! the kernel's facts) → `split` (segments and host code, where the kernel can be split) →
//! `emit` (CUDA C for the device; Rust for the emulator, the split form's
//! host code and the module that replaces the function).
//! All errors are collected and reported together, each on its span.

mod check;
mod diagnostics;
mod emit;
mod expand;
mod generic;
mod ir;
mod ir_math;
mod ir_walk;
mod kernels_module;
mod lower;
mod names;
mod parse;
mod paths;
mod split;
mod stack;

use proc_macro::TokenStream;
use quote::quote;

/// Turns a Rust function into a fused multi-phase CUDA kernel. The generated code names the
/// `gsync` crate: use the attribute as `gsync::grid_phases`, whose documentation has an example.
#[proc_macro_attribute]
pub fn grid_phases(args: TokenStream, item: TokenStream) -> TokenStream {
    stack::expansion(|| {
        let func = match syn::parse::<syn::ItemFn>(item) {
            Ok(f) => f,
            Err(e) => {
                let e = syn::Error::new(e.span(), "#[grid_phases] applies to a function");
                return e.to_compile_error().into();
            }
        };
        expand::kernel(args.into(), &func, &lower::ModuleItems::default()).into()
    })
}

/// A module of kernels and the `#[device]` functions and `const`s they share. The generated
/// code names the `gsync` crate: use the attribute as `gsync::kernels`, whose documentation has
/// an example.
#[proc_macro_attribute]
pub fn kernels(args: TokenStream, item: TokenStream) -> TokenStream {
    stack::expansion(|| kernels_module::expand(args.into(), item.into()).into())
}

/// Marks a device function inside a `#[gsync::kernels]` module; anywhere else, an error.
#[proc_macro_attribute]
pub fn device(_args: TokenStream, item: TokenStream) -> TokenStream {
    let item = proc_macro2::TokenStream::from(item);
    let error = syn::Error::new(
        proc_macro2::Span::call_site(),
        "a `#[device]` function lives in a `#[gsync::kernels]` module, beside the kernels that call it",
    )
    .to_compile_error();
    quote!(#error #item).into()
}

#[cfg(test)]
mod contract_tests;
#[cfg(test)]
mod fused_int_tests;
#[cfg(test)]
mod module_tests;
#[cfg(test)]
mod random_kernels;
#[cfg(test)]
mod range_put_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod warp_tests;
