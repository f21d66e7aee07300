//! The host emitter: the Rust module that replaces the user's function.
//!
//! For `fn smooth(a: &mut [f32], n: u32)` it emits
//! ```ignore
//! pub mod smooth {
//!     pub static KERNEL: ::gsync::KernelSpec = …;            // both CUDA bodies
//!     pub use self::functions::*;
//!     mod functions {
//!         pub fn launch(gpu, a: &mut DeviceBuffer<f32>, n: u32) -> Result<LaunchReport>;
//!         pub fn launch_with(gpu, launch: &Launch, a, n) -> Result<LaunchReport>;
//!         pub unsafe fn launch_unchecked(gpu, launch, a, n) -> Result<LaunchReport>;
//!         fn multi_launch(gpu, launch, a, n) -> …;            // MultiLaunch: host driver
//!         fn emulate(gpu, launch, a, n) -> …;                 // the CPU emulator's body
//!         fn emulate_segment_0(segment) -> …;                 // … and each segment's
//!         pub fn max_coresident_blocks(gpu, launch) -> Result<u32>;
//!         pub fn cuda_source() -> String;                    // the default barrier's CUDA
//!     }
//! }
//! ```
//!
//! The user's parameter names appear as written, so that the functions read
//! like the kernel. Nothing can shadow what the functions use: the module
//! imports nothing (`::gsync::…` paths, the kernel's own items through
//! `self::` and `super::`), the functions sit in a module of their own,
//! where no static can capture a parameter named `KERNEL`, and the
//! generated locals are mixed-site hygienic.

use crate::emit::{cuda_names, emu, rust_names as driver};
use crate::ir::{Kernel, Param};
use crate::parse::Signature;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

/// The generated CUDA of one kernel: fused, and split for `MultiLaunch`.
pub struct Sources {
    pub checked: String,
    pub unchecked: String,
    pub split_checked: String,
    pub split_unchecked: String,
    pub segments: Vec<String>,
    /// Why the kernel cannot be split, if it cannot.
    pub split_error: Option<String>,
    pub split_reads_device: bool,
    pub rust_signature: String,
}

/// The module for a kernel whose CUDA has been generated.
pub fn module(
    sig: &Signature,
    k: &Kernel,
    src: &Sources,
    driver_body: TokenStream,
    emulator_body: TokenStream,
    emulated_segments: &[TokenStream],
) -> TokenStream {
    let (name, symbol) = (&k.name, cuda_names::kernel_symbol(k));
    let arrays: Vec<&str> = k.arrays.iter().map(|a| a.name.as_str()).collect();
    let grid_syncs = k.grid_syncs;
    let threads = k.default_threads;
    let (params, pushes) = launch_params(sig, k);
    let args: Vec<_> = sig.params.iter().map(|p| &p.name).collect();
    let spec = kernel_spec();
    let (checked, unchecked, rust_signature) = (&src.checked, &src.unchecked, &src.rust_signature);
    let (split_checked, split_unchecked, segments) = (&src.split_checked, &src.split_unchecked, &src.segments);
    let split_error = match &src.split_error {
        Some(reason) => quote!(::core::option::Option::Some(#reason)),
        None => quote!(::core::option::Option::None),
    };
    let reads_device = src.split_reads_device;
    let emulated = (0..emulated_segments.len()).map(emu::segment_fn);
    // Mixed-site hygiene keeps these apart from user parameters of the same name.
    let gpu = driver::gpu_ident();
    let launch = Ident::new("launch", Span::mixed_site());
    let kernel_args = Ident::new("args", Span::mixed_site());
    let pushes: Vec<_> = pushes.iter().map(|(method, ident)| quote!(#kernel_args.#method(#ident);)).collect();
    let driver_params = driver_params(k);
    wrapper(
        sig,
        quote! {
            /// The kernel as the runtime sees it: its CUDA, fused and split, and its shape.
            pub static KERNEL: ::gsync::KernelSpec = ::gsync::KernelSpec {
                name: #name,
                symbol: #symbol,
                rust_signature: #rust_signature,
                checked_body: #checked,
                unchecked_body: #unchecked,
                bounds_checks: ::core::cfg!(debug_assertions),
                arrays: &[#(#arrays),*],
                grid_syncs: #grid_syncs,
                default_threads: #threads,
                split: ::gsync::SplitSpec {
                    checked_body: #split_checked,
                    unchecked_body: #split_unchecked,
                    segments: &[#(#segments),*],
                    error: #split_error,
                    reads_device: #reads_device,
                    emulated: &[#(self::functions::#emulated),*],
                },
            };

            pub use self::functions::{cuda_source, launch, launch_unchecked, launch_with, max_coresident_blocks};

            /// The kernel's functions, apart from `KERNEL` so that a parameter may take its name.
            mod functions {

            /// Runs the kernel with the default launch: the largest co-resident
            /// grid and the default block size, under the barrier Auto picks for it.
            pub fn launch(#gpu: &::gsync::Gpu, #(#params),*) -> ::gsync::Result<::gsync::LaunchReport> {
                self::launch_with(#gpu, &::gsync::Launch::new(), #(#args),*)
            }

            /// Runs the kernel with an explicit grid, block size and barrier.
            pub fn launch_with(
                #gpu: &::gsync::Gpu,
                #launch: &::gsync::Launch,
                #(#params),*
            ) -> ::gsync::Result<::gsync::LaunchReport> {
                if #launch.selected_barrier() == ::gsync::Barrier::MultiLaunch {
                    return self::multi_launch(#gpu, #launch, #(#args),*);
                }
                if #gpu.backend() == ::gsync::Backend::Emulator {
                    return self::emulate(#gpu, #launch, #(#args),*);
                }
                let mut #kernel_args = ::gsync::KernelArgs::new();
                #(#pushes)*
                // SAFETY: the arguments follow the C parameter list that
                // #[grid_phases] generated for this kernel from the same signature.
                unsafe { #gpu.launch_kernel(&#spec, #launch, #kernel_args) }
            }

            /// Like [`launch_with`], without refusing grids that cannot be co-resident.
            ///
            /// # Safety
            /// A software barrier waits for blocks that may never be scheduled: such a
            /// launch ends only through the barrier watchdog (`Launch::watchdog`), with
            /// `Error::BarrierTimeout`. Meant for testing that path.
            pub unsafe fn launch_unchecked(
                #gpu: &::gsync::Gpu,
                #launch: &::gsync::Launch,
                #(#params),*
            ) -> ::gsync::Result<::gsync::LaunchReport> {
                // A split kernel waits for no block: nothing to leave unchecked.
                if #launch.selected_barrier() == ::gsync::Barrier::MultiLaunch {
                    return self::multi_launch(#gpu, #launch, #(#args),*);
                }
                if #gpu.backend() == ::gsync::Backend::Emulator {
                    return self::emulate(#gpu, #launch, #(#args),*);
                }
                let mut #kernel_args = ::gsync::KernelArgs::new();
                #(#pushes)*
                // SAFETY: as in `launch_with`; the caller accepts the risk above.
                unsafe { #gpu.launch_kernel_unchecked(&#spec, #launch, #kernel_args) }
            }

            /// The kernel split at every `grid_sync()`: host control flow and one launch per segment.
            #[allow(unused_mut, unused_variables, unused_assignments, unreachable_code, unused_parens, clippy::all)]
            fn multi_launch(
                #gpu: &::gsync::Gpu,
                #launch: &::gsync::Launch,
                #(#driver_params),*
            ) -> ::gsync::Result<::gsync::LaunchReport> {
                #driver_body
            }

            /// The kernel on the CPU emulator: one async task per thread, barriers as await points.
            #[allow(unused_mut, unused_variables, unused_assignments, unreachable_code, unused_parens, clippy::all)]
            fn emulate(
                #gpu: &::gsync::Gpu,
                #launch: &::gsync::Launch,
                #(#driver_params),*
            ) -> ::gsync::Result<::gsync::LaunchReport> {
                #emulator_body
            }

            #(#emulated_segments)*

            /// The largest grid of this kernel that can be co-resident for `launch`'s
            /// block size: the most blocks a grid-wide barrier can wait for.
            pub fn max_coresident_blocks(#gpu: &::gsync::Gpu, #launch: &::gsync::Launch) -> ::gsync::Result<u32> {
                #gpu.max_coresident_blocks(&#spec, #launch)
            }

            /// The complete CUDA translation unit of the default barrier, Auto, which
            /// compiles as Relay (each launch then resolves it for its grid).
            pub fn cuda_source() -> ::std::string::String {
                #spec.source(::gsync::Barrier::default(), #spec.default_block_size())
            }
            }
        },
    )
}

/// The driver's parameters: the kernel's, named as the driver names them.
fn driver_params(k: &Kernel) -> Vec<TokenStream> {
    k.params
        .iter()
        .map(|p| match p {
            Param::Slice(a) => {
                let info = k.array(*a);
                let id = driver::array_ident(k, *a);
                let elem = format_ident!("{}", info.elem.name());
                if info.mutable {
                    quote!(#id: &mut ::gsync::DeviceBuffer<#elem>)
                } else {
                    quote!(#id: &::gsync::DeviceBuffer<#elem>)
                }
            }
            Param::Scalar(v) => {
                let id = driver::var_ident(k, *v);
                let ty = format_ident!("{}", k.ty(k.var(*v).ty).name());
                quote!(#id: #ty)
            }
        })
        .collect()
}

/// The module item with the user's docs and visibility.
pub fn wrapper(sig: &Signature, items: TokenStream) -> TokenStream {
    let name = &sig.name;
    let vis = &sig.vis;
    let docs = sig.attrs.iter().filter(|a| a.path().is_ident("doc"));
    quote! {
        #(#docs)*
        #[allow(non_snake_case, clippy::too_many_arguments)]
        #vis mod #name {
            #items
        }
    }
}

/// The kernel's `KernelSpec`, as the generated functions reach it.
pub fn kernel_spec() -> TokenStream {
    quote!(super::KERNEL)
}

/// The typed parameters of `launch` and the statements pushing each argument.
fn launch_params(sig: &Signature, k: &Kernel) -> (Vec<TokenStream>, Vec<(Ident, Ident)>) {
    let mut params = Vec::new();
    let mut pushes = Vec::new();
    for (p, decl) in k.params.iter().zip(&sig.params) {
        let ident = decl.name.clone();
        match p {
            Param::Slice(a) => {
                let a = k.array(*a);
                let elem = format_ident!("{}", a.elem.name());
                if a.mutable {
                    params.push(quote_spanned!(a.span=> #ident: &mut ::gsync::DeviceBuffer<#elem>));
                    pushes.push((format_ident!("slice_mut"), ident));
                } else {
                    params.push(quote_spanned!(a.span=> #ident: &::gsync::DeviceBuffer<#elem>));
                    pushes.push((format_ident!("slice"), ident));
                }
            }
            Param::Scalar(v) => {
                let v = k.var(*v);
                let ty = format_ident!("{}", k.ty(v.ty).name());
                params.push(quote_spanned!(v.span=> #ident: #ty));
                pushes.push((format_ident!("scalar"), ident));
            }
        }
    }
    (params, pushes)
}
