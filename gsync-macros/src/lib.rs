//! The `#[grid_phases]` attribute: a Rust function whose phases are
//! separated by `grid_sync()` becomes one fused CUDA kernel.
//!
//! The stages, in the order a kernel passes through them:
//! [`parse`] (options and signature) → [`lower`] (body to typed IR, with
//! type inference) → [`check`] (operand rules, uniformity, `return`) →
//! [`split`] (segments and host code, where the kernel can be split) →
//! [`emit`] (CUDA C for the device; Rust for the emulator, the split form's
//! host code and the module that replaces the function).
//! All errors are collected and reported together, each on its span.

mod check;
mod diagnostics;
mod emit;
mod ir;
mod ir_math;
mod ir_walk;
mod lower;
mod names;
mod parse;
mod split;
mod stack;

use diagnostics::Diagnostics;
use proc_macro::TokenStream;
use quote::quote;

/// Turns a Rust function into a fused multi-phase CUDA kernel.
///
/// See the `gsync` crate for the language and the generated module.
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
        expand(args.into(), &func).into()
    })
}

fn expand(args: proc_macro2::TokenStream, func: &syn::ItemFn) -> proc_macro2::TokenStream {
    let mut diag = Diagnostics::default();
    let options = parse::options(args, &mut diag);
    let sig = parse::signature(func, &mut diag);
    let kernel = lower::kernel(&sig, &func.block, options.threads, &mut diag);
    if let Some(k) = &kernel {
        check::kernel(k, &mut diag);
    }
    match (kernel, diag.into_error()) {
        (Some(k), None) => {
            let plan = split::plan(&k);
            let split_source =
                |checks| plan.as_ref().map(|p| emit::cuda::split_source(&k, p, checks)).unwrap_or_default();
            let sources = emit::module::Sources {
                checked: emit::cuda::kernel_source(&k, true),
                unchecked: emit::cuda::kernel_source(&k, false),
                split_checked: split_source(true),
                split_unchecked: split_source(false),
                segments: plan
                    .as_ref()
                    .map(|p| (0..p.segments.len()).map(|i| emit::cuda_names::segment_symbol(&k, i)).collect())
                    .unwrap_or_default(),
                split_error: plan.as_ref().err().cloned(),
                split_reads_device: plan.as_ref().is_ok_and(|p| p.reads_device),
                rust_signature: rust_signature(func),
            };
            let split_host = emit::split_host::body(&k, plan.as_ref().ok());
            let emulator = emit::emu::body(&k);
            let emulated_segments: Vec<_> = plan
                .as_ref()
                .map(|p| p.segments.iter().enumerate().map(|(i, s)| emit::emu::segment(&k, i, s)).collect())
                .unwrap_or_default();
            emit::module::module(&sig, &k, &sources, split_host, emulator, &emulated_segments)
        }
        (_, error) => {
            // An empty module with the kernel's name keeps follow-on errors
            // ("cannot find `smooth`") out of the user's way.
            let errors = error.map(|e| e.to_compile_error());
            let module = emit::module::wrapper(&sig, quote!());
            quote!(#errors #module)
        }
    }
}

/// `fn name(a: &mut [f32], n: u32)`, for the header of the generated CUDA.
fn rust_signature(func: &syn::ItemFn) -> String {
    let sig = &func.sig;
    let name = &sig.ident;
    let inputs = &sig.inputs;
    let text = quote!(fn #name(#inputs)).to_string();
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

#[cfg(test)]
mod random_kernels;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod warp_tests;
