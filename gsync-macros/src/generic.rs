//! Generic kernels, `#[grid_phases] fn k<T: Num>(…)`: the kernel is expanded
//! once per element type its bound admits, each in a hidden module of its own
//! (compiled by NVRTC only when first launched), and the kernel's module
//! dispatches on the element type through a trait that those types implement.

use crate::ir::Scalar;
use crate::parse::{GenericParam, Signature};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use std::collections::BTreeMap;

/// An error's line, column, place among its notes, and message.
type ErrorKey = (usize, usize, usize, String);

/// The errors of every instance, each reported once: an error that only
/// some element types have names them.
#[derive(Default)]
pub struct Errors {
    /// By position and message: the span and the types that have it.
    found: BTreeMap<ErrorKey, (Span, Vec<Scalar>)>,
}

impl Errors {
    /// Records the errors of the instance for `ty` (`param` being the
    /// type parameter, which the messages name instead of `ty`).
    pub fn add(&mut self, param: &syn::Ident, ty: Scalar, e: syn::Error) {
        for (i, part) in e.into_iter().enumerate() {
            let span = part.span();
            let start = span.start();
            let message = part.to_string().replace(&format!("`{}`", ty.name()), &format!("`{param}`"));
            let key = (start.line, start.column, i, message);
            self.found.entry(key).or_insert((span, Vec::new())).1.push(ty);
        }
    }

    /// All errors, combined; `instances` is how many element types were expanded.
    pub fn into_error(self, param: &syn::Ident, instances: usize) -> Option<syn::Error> {
        let mut seen = std::collections::HashSet::new();
        let mut out: Option<syn::Error> = None;
        for ((line, column, _, message), (span, types)) in self.found {
            if !seen.insert((line, column, message.clone())) {
                continue;
            }
            let message = if types.len() == instances {
                message
            } else {
                let names: Vec<String> = types.iter().map(|t| format!("`{}`", t.name())).collect();
                format!("{message} (when `{param}` is {})", names.join(", "))
            };
            let e = syn::Error::new(span, message);
            match &mut out {
                Some(all) => all.combine(e),
                None => out = Some(e),
            }
        }
        out
    }
}

/// The module of a generic kernel: one hidden module per element type, and
/// launch functions generic over `T: Element`.
pub fn module(
    func: &syn::ItemFn,
    sig: &Signature,
    param: &GenericParam,
    instances: &[(Scalar, TokenStream)],
) -> TokenStream {
    let private = crate::paths::private();
    let t = &param.ident;
    let name = &sig.name;
    let gpu = crate::emit::rust_names::gpu_ident();
    let launch = proc_macro2::Ident::new("launch", Span::mixed_site());
    let mut params = Vec::new();
    let mut args = Vec::new();
    for input in &func.sig.inputs {
        let syn::FnArg::Typed(pat_ty) = input else { continue };
        let syn::Pat::Ident(pat) = &*pat_ty.pat else { continue };
        let ident = &pat.ident;
        let ty = match &*pat_ty.ty {
            syn::Type::Reference(r) => match &*r.elem {
                syn::Type::Slice(s) => {
                    let elem = &s.elem;
                    match r.mutability {
                        Some(_) => quote!(&mut #private::DeviceBuffer<#elem>),
                        None => quote!(&#private::DeviceBuffer<#elem>),
                    }
                }
                other => quote!(#other),
            },
            other => quote!(#other),
        };
        params.push(quote!(#ident: #ty));
        args.push(quote!(#ident));
    }
    let bound = format!("`{t}: {}`", param.bound.name());
    let impls = instances.iter().map(|(ty, _)| {
        let ty_ident = format_ident!("{}", ty.name());
        let module = instance_module(*ty);
        // The instance's functions take the concrete type where the kernel says `T`.
        let concrete: Vec<TokenStream> = params.iter().map(|p| substitute(p.clone(), t, &ty_ident)).collect();
        quote! {
            impl self::Element for #ty_ident {
                fn kernel() -> &'static #private::KernelSpec {
                    &self::#module::KERNEL
                }
                fn launch_with(
                    #gpu: &#private::Gpu,
                    #launch: &#private::Launch,
                    #(#concrete),*
                ) -> #private::Result<#private::LaunchReport> {
                    self::#module::launch_with(#gpu, #launch, #(#args),*)
                }
                unsafe fn launch_oversubscribed(
                    #gpu: &#private::Gpu,
                    #launch: &#private::Launch,
                    #(#concrete),*
                ) -> #private::Result<#private::LaunchReport> {
                    // SAFETY: the caller's, passed on.
                    unsafe { self::#module::launch_oversubscribed(#gpu, #launch, #(#args),*) }
                }
            }
        }
    });
    let modules = instances.iter().map(|(ty, items)| {
        let module = instance_module(*ty);
        let doc = format!("`{name}` for `{t} = {}`.", ty.name());
        quote! {
            #[doc = #doc]
            #[doc(hidden)]
            pub mod #module { #items }
        }
    });
    let generic_params: Vec<TokenStream> =
        params.iter().map(|p| substitute(p.clone(), t, &format_ident!("Self"))).collect();
    let types: Vec<proc_macro2::Ident> = instances.iter().map(|(ty, _)| format_ident!("{}", ty.name())).collect();
    let element_doc = format!("The element types of `{name}`: those of {bound}.");
    crate::emit::module::wrapper(
        sig,
        quote! {
            #(#modules)*

            #[doc = #element_doc]
            pub trait Element: #private::DeviceScalar + self::sealed::Sealed {
                /// The kernel for this element type.
                fn kernel() -> &'static #private::KernelSpec;
                #[doc(hidden)]
                fn launch_with(
                    #gpu: &#private::Gpu,
                    #launch: &#private::Launch,
                    #(#generic_params),*
                ) -> #private::Result<#private::LaunchReport>;
                #[doc(hidden)]
                unsafe fn launch_oversubscribed(
                    #gpu: &#private::Gpu,
                    #launch: &#private::Launch,
                    #(#generic_params),*
                ) -> #private::Result<#private::LaunchReport>;
            }

            mod sealed {
                pub trait Sealed {}
                #(impl Sealed for #types {})*
            }

            #(#impls)*

            /// Runs the kernel for element type `T` with the default launch.
            pub fn launch<#t: self::Element>(#gpu: &#private::Gpu, #(#params),*) -> #private::Result<#private::LaunchReport> {
                #t::launch_with(#gpu, &#private::Launch::new(), #(#args),*)
            }

            /// Runs the kernel for element type `T` with an explicit grid, block size and barrier.
            pub fn launch_with<#t: self::Element>(
                #gpu: &#private::Gpu,
                #launch: &#private::Launch,
                #(#params),*
            ) -> #private::Result<#private::LaunchReport> {
                #t::launch_with(#gpu, #launch, #(#args),*)
            }

            /// Like [`launch_with`], without refusing grids that cannot be co-resident.
            ///
            /// # Safety
            /// As for a kernel that is not generic: such a launch ends only through the
            /// barrier watchdog.
            pub unsafe fn launch_oversubscribed<#t: self::Element>(
                #gpu: &#private::Gpu,
                #launch: &#private::Launch,
                #(#params),*
            ) -> #private::Result<#private::LaunchReport> {
                // SAFETY: the caller's, passed on.
                unsafe { #t::launch_oversubscribed(#gpu, #launch, #(#args),*) }
            }

            /// The largest co-resident grid of the kernel for `T` with `launch`'s block size.
            pub fn max_coresident_blocks<#t: self::Element>(#gpu: &#private::Gpu, #launch: &#private::Launch) -> #private::Result<u32> {
                #gpu.max_coresident_blocks(#t::kernel(), #launch)
            }

            /// The shape a launch of the kernel for `T` runs when the longest buffer has `len` elements.
            pub fn launch_config<#t: self::Element>(
                #gpu: &#private::Gpu,
                #launch: &#private::Launch,
                len: usize,
            ) -> #private::Result<#private::LaunchConfig> {
                #gpu.launch_config(#t::kernel(), #launch, len)
            }

            /// The CUDA translation unit of the kernel for `T` under the default barrier.
            pub fn cuda_source<#t: self::Element>() -> ::std::string::String {
                let kernel = #t::kernel();
                kernel.source(#private::Barrier::default(), kernel.default_block_size())
            }
        },
    )
}

/// The hidden module of one instance: `__f32`.
fn instance_module(ty: Scalar) -> proc_macro2::Ident {
    format_ident!("__{}", ty.name())
}

/// `tokens` with every `from` identifier replaced by `to`.
fn substitute(tokens: TokenStream, from: &syn::Ident, to: &proc_macro2::Ident) -> TokenStream {
    tokens
        .into_iter()
        .map(|tt| match tt {
            proc_macro2::TokenTree::Ident(i) if i == *from => {
                proc_macro2::TokenTree::Ident(proc_macro2::Ident::new(&to.to_string(), i.span()))
            }
            proc_macro2::TokenTree::Group(g) => {
                let mut group = proc_macro2::Group::new(g.delimiter(), substitute(g.stream(), from, to));
                group.set_span(g.span());
                proc_macro2::TokenTree::Group(group)
            }
            other => other,
        })
        .collect()
}
