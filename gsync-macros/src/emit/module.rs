//! The module emitter: the Rust module that replaces the user's function.
//!
//! For `fn smooth(a: &mut [f32], n: u32)` it emits
//! ```text
//! pub mod smooth {
//!     pub static KERNEL: KernelSpec = …;                     // both CUDA bodies
//!     pub use self::functions::*;
//!     mod functions {
//!         pub fn launch(gpu, a: &mut DeviceBuffer<f32>, n: u32) -> Result<LaunchReport>;
//!         pub fn launch_with(gpu, launch: &Launch, a, n) -> Result<LaunchReport>;
//!         pub unsafe fn launch_oversubscribed(gpu, launch, a, n) -> Result<LaunchReport>;
//!         pub fn submit<'p>(gpu: &'p Gpu, a: &'p mut DeviceBuffer<f32>, n: u32) -> Result<Pending<'p>>;
//!         pub fn submit_with<'p>(gpu: &'p Gpu, launch: &Launch, a, n) -> Result<Pending<'p>>;
//!         struct Call<'p> { a: &'p mut DeviceBuffer<f32>, n: u32 }
//!         unsafe impl KernelForms for Call<'_> { … }         // the three forms, for Gpu::run
//!         fn split(run: &mut SplitRun, a, n) -> …;           // the split form's host code
//!         fn emulate(launch: EmuLaunch, a, n) -> …;         // the CPU emulator's body
//!         fn emulate_segment_0(segment) -> …;                // … and each segment's
//!         pub fn max_coresident_blocks(gpu, launch) -> Result<u32>;
//!         pub fn launch_config(gpu, launch, len) -> Result<LaunchConfig>; // before allocating
//!         pub fn cuda_source() -> String;                    // the default barrier's CUDA
//!     }
//! }
//! ```
//!
//! The launch functions hand `Gpu::run` a `Call`; the runtime picks the form from the
//! backend and the barrier, so nothing here branches on either.
//!
//! The user's parameter names appear as written, so that the functions read
//! like the kernel. Nothing can shadow what the functions use: the module
//! imports nothing (the runtime through the one path `paths.rs` spells, the
//! kernel's own items through
//! `self::` and `super::`), the functions sit in a module of their own,
//! where no static can capture a parameter named `KERNEL`, and the
//! generated locals are mixed-site hygienic.

use crate::check::{Axes, Facts};
use crate::emit::block_size::refused_tokens;
use crate::emit::rust_expr::scalar_type;
use crate::emit::{cuda_names, emu, rust_names, shared_len};
use crate::ir::{ArraySpace, AssertCheck, Builtin, ExprKind, Kernel, Param, StmtKind};
use crate::ir_walk::{each_expr, each_stmt, stmt_exprs};
use crate::parse::Signature;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned};

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

/// The items of the module for a kernel whose CUDA has been generated
/// (which [`wrapper`] puts in the module).
pub fn items(
    sig: &Signature,
    k: &Kernel,
    facts: &Facts,
    src: &Sources,
    split_body: TokenStream,
    emulator_body: TokenStream,
    emulated_segments: &[TokenStream],
) -> TokenStream {
    let private = crate::paths::private();
    let (name, symbol) = (&k.name, cuda_names::kernel_symbol(k));
    let arrays: Vec<&str> = k.arrays.iter().map(|a| a.name.as_str()).collect();
    let assertions = assertions(k);
    let axes = axes_tokens(facts.axes);
    let refused = refused_tokens(&facts.refused_block_sizes);
    let grid_syncs = k.grid_syncs;
    let blocks_per_sm = k.blocks_per_sm;
    let threads = match declared_threads(k) {
        DeclaredThreads::Attribute(threads) => quote!(#threads),
        DeclaredThreads::RuntimeDefault => quote!(#private::DEFAULT_THREADS),
        DeclaredThreads::Free => quote!(0u32),
    };
    let (params, held_params, fields) = call_params(sig, k);
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
    let gpu = rust_names::gpu_ident();
    let launch = Ident::new("launch", Span::mixed_site());
    let kernel_args = Ident::new("args", Span::mixed_site());
    let run = rust_names::run_ident();
    let pushes = fields.iter().map(|field| field.push(&kernel_args));
    let field_decls = fields.iter().map(|field| &field.decl);
    let passed: Vec<TokenStream> = fields.iter().map(CallField::pass).collect();
    let form_params = form_params(k);
    let call = quote!(self::Call { #(#args),* });
    // `Call` borrows the buffers for `'p`; a kernel without slices has no lifetime to name.
    let has_slices = fields.iter().any(|field| !matches!(field.kind, FieldKind::Scalar));
    let (call_generics, call_ty) = if has_slices { (quote!(<'p>), quote!(Call<'_>)) } else { (quote!(), quote!(Call)) };
    let shape_functions = shape_functions(sig, k);
    let (dynamic_shared_fn, dynamic_shared_form) = if k.shared_slices.is_empty() {
        (quote!(), quote!())
    } else {
        let form = quote! {
            fn dynamic_shared(&mut self) -> #private::DynamicShared {
                self::dynamic_shared(#(#passed),*)
            }
        };
        (shared_len::function(k, facts), form)
    };
    quote! {
            /// The kernel as the runtime sees it: its CUDA, fused and split, and its shape.
            pub static KERNEL: #private::KernelSpec = #private::KernelSpec {
                name: #name,
                symbol: #symbol,
                rust_signature: #rust_signature,
                checked_body: #checked,
                unchecked_body: #unchecked,
                bounds_checks: ::core::cfg!(debug_assertions),
                profile: false,
                arrays: &[#(#arrays),*],
                grid_syncs: #grid_syncs,
                default_threads: #threads,
                blocks_per_sm: #blocks_per_sm,
                split: #private::SplitSpec {
                    checked_body: #split_checked,
                    unchecked_body: #split_unchecked,
                    segments: &[#(#segments),*],
                    error: #split_error,
                    reads_device: #reads_device,
                },
                assertions: &[#(#assertions),*],
                axes: #axes,
                refused_block_sizes: #refused,
            };

            pub use self::functions::{
                cuda_source, launch, launch_oversubscribed, launch_config, launch_with, max_coresident_blocks, submit,
                submit_with,
            };

            /// The kernel's functions, apart from `KERNEL` so that a parameter may take its name.
            mod functions {

            /// Runs the kernel with the default launch: the shape tuned for this kernel, GPU
            /// and size class, under the barrier Auto picks for its grid.
            pub fn launch(#gpu: &#private::Gpu, #(#params),*) -> #private::Result<#private::LaunchReport> {
                self::launch_with(#gpu, &#private::Launch::new(), #(#args),*)
            }

            /// Runs the kernel with an explicit grid, block size and barrier.
            pub fn launch_with(
                #gpu: &#private::Gpu,
                #launch: &#private::Launch,
                #(#params),*
            ) -> #private::Result<#private::LaunchReport> {
                // SAFETY: `Call`'s forms were generated for this kernel, from the same signature.
                unsafe { #gpu.run(&#spec, #launch, #private::CoResidency::Required, &mut #call) }
            }

            /// Queues the kernel with the default launch and returns without waiting: the
            /// pending launch borrows the buffers until `wait()` (see `Pending`).
            pub fn submit<'p>(#gpu: &'p #private::Gpu, #(#held_params),*) -> #private::Result<#private::Pending<'p>> {
                self::submit_with(#gpu, &#private::Launch::new(), #(#args),*)
            }

            /// Queues the kernel with an explicit grid, block size and barrier, and returns
            /// without waiting: the pending launch borrows the buffers until `wait()`.
            pub fn submit_with<'p>(
                #gpu: &'p #private::Gpu,
                #launch: &#private::Launch,
                #(#held_params),*
            ) -> #private::Result<#private::Pending<'p>> {
                // SAFETY: `Call`'s forms were generated for this kernel, from the same
                // signature; the buffers are borrowed for `'p`, as long as the pending launch.
                unsafe { #gpu.submit(&#spec, #launch, #private::CoResidency::Required, &mut #call) }
            }

            /// Like [`launch_with`], without refusing grids that cannot be co-resident.
            ///
            /// # Safety
            /// A software barrier waits for blocks that may never be scheduled: such a
            /// launch ends only through the barrier watchdog (`Launch::watchdog`), with
            /// `Error::BarrierTimeout`. Meant for testing that path.
            pub unsafe fn launch_oversubscribed(
                #gpu: &#private::Gpu,
                #launch: &#private::Launch,
                #(#params),*
            ) -> #private::Result<#private::LaunchReport> {
                // SAFETY: as in `launch_with`; the caller accepts the risk above.
                unsafe { #gpu.run(&#spec, #launch, #private::CoResidency::Waived, &mut #call) }
            }

            /// One call's arguments, which the runtime runs in the form it picks.
            struct Call #call_generics {
                #(#field_decls),*
            }

            // SAFETY: the arguments follow the C parameter list that #[grid_phases]
            // generated for the fused kernel from the same signature, and `split` launches
            // each segment with the parameters it generated for that segment; the buffers
            // stay borrowed by `Call` until `Gpu::run`, which finishes the split run, returns.
            unsafe impl #private::KernelForms for #call_ty {
                fn push_args<'a>(&'a mut self, #kernel_args: &mut #private::KernelArgs<'a>) {
                    #(#pushes)*
                }

                fn run_split(&mut self, #run: &mut #private::SplitRun<'_>) -> #private::Result<()> {
                    self::split(#run, #(#passed),*)
                }

                fn emulated_segments(&self) -> &'static [#private::EmuSegmentFn] {
                    const SEGMENTS: &[#private::EmuSegmentFn] = &[#(self::#emulated),*];
                    SEGMENTS
                }

                fn emulate(&mut self, #launch: #private::EmuLaunch<'_>) -> #private::Result<#private::LaunchReport> {
                    self::emulate(#launch, #(#passed),*)
                }

                #dynamic_shared_form
            }

            #dynamic_shared_fn

            /// The split form's host code: the kernel's control flow between its
            /// `grid_sync()` calls, with one launch per segment through `run`.
            #[allow(unused_mut, unused_variables, unused_assignments, unreachable_code, unused_parens, clippy::all)]
            fn split(
                #run: &mut #private::SplitRun<'_>,
                #(#form_params),*
            ) -> #private::Result<()> {
                #split_body
            }

            /// The kernel on the CPU emulator: one async task per thread, barriers as await points.
            #[allow(unused_mut, unused_variables, unused_assignments, unreachable_code, unused_parens, clippy::all)]
            fn emulate(
                #launch: #private::EmuLaunch<'_>,
                #(#form_params),*
            ) -> #private::Result<#private::LaunchReport> {
                #emulator_body
            }

            #(#emulated_segments)*

            #shape_functions

            /// The complete CUDA translation unit of the default barrier, Auto, which
            /// compiles as Relay (each launch then resolves it for its grid).
            pub fn cuda_source() -> ::std::string::String {
                #spec.source(#private::Barrier::default(), #spec.default_block_size())
            }
            }
    }
}

/// The runtime's `Axes` value.
fn axes_tokens(axes: Axes) -> TokenStream {
    let private = crate::paths::private();
    let (block, grid) = (axes.block, axes.grid);
    quote!(#private::Axes { block: #block, grid: #grid })
}

/// `max_coresident_blocks` and `launch_config`. A kernel with shared slices takes the call's
/// arguments too, whose values decide the slices' bytes, and its size class is that of their
/// longest buffer.
fn shape_functions(sig: &Signature, k: &Kernel) -> TokenStream {
    let private = crate::paths::private();
    let (gpu, launch, spec) = (rust_names::gpu_ident(), Ident::new("launch", Span::mixed_site()), kernel_spec());
    if k.shared_slices.is_empty() {
        return quote! {
            /// The largest grid of this kernel that can be co-resident for `launch`'s
            /// block size: the most blocks a grid-wide barrier can wait for.
            pub fn max_coresident_blocks(#gpu: &#private::Gpu, #launch: &#private::Launch) -> #private::Result<u32> {
                #gpu.max_coresident_blocks(&#spec, #launch)
            }

            /// The shape (blocks × threads × barrier) a launch with `launch` runs when the
            /// longest buffer has `len` elements; see `Gpu::launch_config`.
            pub fn launch_config(
                #gpu: &#private::Gpu,
                #launch: &#private::Launch,
                len: usize,
            ) -> #private::Result<#private::LaunchConfig> {
                #gpu.launch_config(&#spec, #launch, len)
            }
        };
    }
    // Every slice read-only: only the lengths and values are read.
    let params: Vec<TokenStream> = k
        .params
        .iter()
        .zip(&sig.params)
        .map(|(p, decl)| {
            let ident = &decl.name;
            match p {
                Param::Slice(a) => {
                    let elem = scalar_type(k.array(*a).elem);
                    quote!(#ident: &#private::DeviceBuffer<#elem>)
                }
                Param::Scalar(v) => {
                    let ty = scalar_type(k.var(*v).ty);
                    quote!(#ident: #ty)
                }
            }
        })
        .collect();
    let args: Vec<&Ident> = sig.params.iter().map(|p| &p.name).collect();
    let longest = Ident::new("longest", Span::mixed_site());
    let lens = k.params.iter().zip(&sig.params).filter_map(|(p, decl)| {
        let ident = &decl.name;
        matches!(p, Param::Slice(_)).then(|| quote!(#ident.len()))
    });
    quote! {
        /// The largest grid of this kernel that can be co-resident for `launch`'s block size,
        /// with the shared slices these arguments ask for: the most blocks a grid-wide
        /// barrier can wait for.
        pub fn max_coresident_blocks(
            #gpu: &#private::Gpu,
            #launch: &#private::Launch,
            #(#params),*
        ) -> #private::Result<u32> {
            #gpu.max_coresident_blocks_with(&#spec, #launch, &self::dynamic_shared(#(#args),*))
        }

        /// The shape (blocks × threads × barrier) a launch with `launch` runs with these
        /// arguments, before it runs; see `Gpu::launch_config`.
        pub fn launch_config(
            #gpu: &#private::Gpu,
            #launch: &#private::Launch,
            #(#params),*
        ) -> #private::Result<#private::LaunchConfig> {
            let #longest = [0usize #(, #lens)*].into_iter().max().unwrap_or(0);
            #gpu.launch_config_with(&#spec, #launch, #longest, &self::dynamic_shared(#(#args),*))
        }
    }
}

/// The parameters of the split form and the emulator body: the kernel's, named as their
/// bodies name them.
fn form_params(k: &Kernel) -> Vec<TokenStream> {
    let private = crate::paths::private();
    k.params
        .iter()
        .map(|p| match p {
            Param::Slice(a) => {
                let info = k.array(*a);
                let id = rust_names::array_ident(k, *a);
                let elem = scalar_type(info.elem);
                if info.mutable {
                    quote!(#id: &mut #private::DeviceBuffer<#elem>)
                } else {
                    quote!(#id: &#private::DeviceBuffer<#elem>)
                }
            }
            Param::Scalar(v) => {
                let id = rust_names::var_ident(k, *v);
                let ty = scalar_type(k.var(*v).ty);
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

/// One parameter of the kernel as a field of the generated `Call`.
struct CallField {
    /// The field's declaration.
    decl: TokenStream,
    /// The field as a place, `self.name`.
    place: TokenStream,
    kind: FieldKind,
    /// A `#[symmetric]` slice's name.
    symmetric: Option<String>,
}

enum FieldKind {
    Slice,
    SliceMut,
    Scalar,
}

impl CallField {
    /// The statement that pushes the field onto the argument list `args`.
    fn push(&self, args: &Ident) -> TokenStream {
        let place = &self.place;
        let push = match self.kind {
            FieldKind::Slice => quote!(#args.slice(#place);),
            FieldKind::SliceMut => quote!(#args.slice_mut(&mut *#place);),
            FieldKind::Scalar => quote!(#args.scalar(#place);),
        };
        match &self.symmetric {
            Some(name) => quote!(#push #args.symmetric(#name);),
            None => push,
        }
    }

    /// The field passed on to a form's function: reborrowed, or copied.
    fn pass(&self) -> TokenStream {
        let place = &self.place;
        match self.kind {
            FieldKind::SliceMut => quote!(&mut *#place),
            FieldKind::Slice | FieldKind::Scalar => quote!(#place),
        }
    }
}

/// The typed parameters of the launch functions, the same with the buffers borrowed for `'p`
/// (for the `submit` functions, whose pending launch holds the borrows), and the fields of
/// `Call` that hold them.
fn call_params(sig: &Signature, k: &Kernel) -> (Vec<TokenStream>, Vec<TokenStream>, Vec<CallField>) {
    let private = crate::paths::private();
    let mut params = Vec::new();
    let mut held = Vec::new();
    let mut fields = Vec::new();
    for (p, decl) in k.params.iter().zip(&sig.params) {
        let ident = decl.name.clone();
        let place = quote!(self.#ident);
        match p {
            Param::Slice(a) => {
                let a = k.array(*a);
                let elem = scalar_type(a.elem);
                let symmetric = a.symmetric.then(|| a.name.clone());
                if a.mutable {
                    params.push(quote_spanned!(a.span=> #ident: &mut #private::DeviceBuffer<#elem>));
                    held.push(quote_spanned!(a.span=> #ident: &'p mut #private::DeviceBuffer<#elem>));
                    let decl = quote!(#ident: &'p mut #private::DeviceBuffer<#elem>);
                    fields.push(CallField { decl, place, kind: FieldKind::SliceMut, symmetric });
                } else {
                    params.push(quote_spanned!(a.span=> #ident: &#private::DeviceBuffer<#elem>));
                    held.push(quote_spanned!(a.span=> #ident: &'p #private::DeviceBuffer<#elem>));
                    let decl = quote!(#ident: &'p #private::DeviceBuffer<#elem>);
                    fields.push(CallField { decl, place, kind: FieldKind::Slice, symmetric });
                }
            }
            Param::Scalar(v) => {
                let v = k.var(*v);
                let ty = scalar_type(v.ty);
                params.push(quote_spanned!(v.span=> #ident: #ty));
                held.push(quote_spanned!(v.span=> #ident: #ty));
                fields.push(CallField { decl: quote!(#ident: #ty), place, kind: FieldKind::Scalar, symmetric: None });
            }
        }
    }
    (params, held, fields)
}

/// What a kernel says about its block size.
#[derive(Debug, PartialEq, Eq)]
enum DeclaredThreads {
    /// `#[grid_phases(threads = N)]`.
    Attribute(u32),
    /// No attribute, but the code may assume a block size (shared arrays, `thread_idx()`,
    /// `warp_id()`, `block_dim()`): the runtime's default, which it always ran with, so that the
    /// launch-shape tuner varies the block size only of kernels that cannot tell sizes apart.
    RuntimeDefault,
    /// No attribute, and nothing that depends on the block size.
    Free,
}

fn declared_threads(k: &Kernel) -> DeclaredThreads {
    if k.default_threads != 0 {
        return DeclaredThreads::Attribute(k.default_threads);
    }
    let shared = k.arrays.iter().any(|array| array.space == ArraySpace::Shared);
    let mut block_sized = false;
    each_stmt(&k.body, &mut |stmt| {
        for expr in stmt_exprs(stmt) {
            each_expr(expr, &mut |e| {
                block_sized |= matches!(
                    e.kind,
                    ExprKind::Builtin(
                        Builtin::ThreadIdx
                            | Builtin::BlockDim
                            | Builtin::WarpId
                            | Builtin::ThreadIdxAxis(_)
                            | Builtin::BlockDimAxis(_)
                    )
                );
            });
        }
    });
    if shared || block_sized {
        DeclaredThreads::RuntimeDefault
    } else {
        DeclaredThreads::Free
    }
}

/// `KernelAssertion`s of the kernel's `assert!`s, in the order of their numbers.
fn assertions(k: &Kernel) -> Vec<TokenStream> {
    let private = crate::paths::private();
    let mut found = Vec::new();
    each_stmt(&k.body, &mut |s| {
        if let StmtKind::Assert { check, assertion } = &s.kind {
            let operands = match check {
                AssertCheck::Compare { left, .. } => {
                    let ty = left.ty.name();
                    quote!(::core::option::Option::Some(#ty))
                }
                AssertCheck::Holds(_) => quote!(::core::option::Option::None),
            };
            let message = &assertion.message;
            found
                .push((assertion.number, quote!(#private::KernelAssertion { message: #message, operands: #operands })));
        }
    });
    found.sort_by_key(|(number, _)| *number);
    found.into_iter().map(|(_, spec)| spec).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::Diagnostics;
    use crate::{lower, parse};
    use quote::quote;

    fn declared(func: TokenStream, attribute: u32) -> DeclaredThreads {
        let func: syn::ItemFn = syn::parse2(func).expect("a function");
        let mut diag = Diagnostics::default();
        let none = parse::Substitution::default();
        let sig = parse::signature(&func, &none, &mut diag);
        let kernel =
            lower::kernel(&sig, &func.block, attribute, &Default::default(), &none, &mut diag).expect("lowers");
        declared_threads(&kernel)
    }

    #[test]
    fn only_kernels_that_cannot_tell_block_sizes_apart_leave_theirs_to_the_tuner() {
        let strided = quote! { fn k(a: &mut [f32]) { for i in grid_stride(0..a.len()) { a[i] = 1.0; } grid_sync(); } };
        assert_eq!(declared(strided.clone(), 0), DeclaredThreads::Free);
        assert_eq!(declared(strided, 128), DeclaredThreads::Attribute(128));
        let shared = quote! { fn k(a: &mut [f32]) { let mut t = shared_array::<f32, 256>(); t[0] = a[0]; sync_block(); a[0] = t[0]; } };
        assert_eq!(declared(shared, 0), DeclaredThreads::RuntimeDefault);
        let indexed =
            quote! { fn k(a: &mut [u32]) { if global_id() < 4 { a[block_idx() * 256 + thread_idx()] = 1; } } };
        assert_eq!(declared(indexed, 0), DeclaredThreads::RuntimeDefault);
        let sized = quote! { fn k(a: &mut [u32]) { if global_id() == 0 { a[0] = block_dim(); } } };
        assert_eq!(declared(sized, 0), DeclaredThreads::RuntimeDefault);
    }
}
