//! The macro's side of the contract with the runtime: what it writes into a kernel is what
//! `gsync-contract` defines, which the runtime reads back (its own tests check that side).

use crate::check::Facts;
use crate::emit;
use crate::ir::Kernel;
use gsync_contract::{
    Axes, RefusedBlockSizes, BLOCK_SIZE_MACRO, LAUNCH_BOUNDS_MACRO, PROFILE_PARAMETERS_MACRO, TRAILING_PARAMS,
};
use proc_macro2::{TokenStream, TokenTree};
use quote::{format_ident, quote};

/// The kernel `func` lowers to, and the facts its checks find.
fn lowered(func: TokenStream) -> (Kernel, Facts) {
    crate::tests::lowered(func).unwrap_or_else(|e| panic!("unexpected errors: {e:?}"))
}

#[test]
fn the_axes_a_kernel_records_are_those_the_contract_gives_its_builtins() {
    let linear = ["thread_idx", "block_idx", "block_dim", "grid_dim", "global_id", "grid_size", "lane_id"];
    for name in Axes::BLOCK_BUILTINS.iter().chain(&Axes::GRID_BUILTINS).chain(&linear) {
        let builtin = format_ident!("{name}");
        let (_, facts) = lowered(quote! { fn k(a: &mut [u32]) { a[0] = #builtin(); } });
        assert_eq!(facts.axes, Axes::of_builtin(name), "{name}");
    }
}

#[test]
fn refused_block_sizes_are_recorded_as_the_contract_orders_them() {
    let (_, facts) = lowered(quote! {
        fn k(a: &mut [u32]) {
            const HALF: usize = BLOCK_SIZE / 2 - 16;
            let mut tile = shared_array::<u32, HALF>();
            let mut wide = shared_array::<f64, { 8 * BLOCK_SIZE }>();
            tile[0] = 1;
            wide[0] = 2.0;
            sync_block();
            a[0] = tile[0] + wide[0] as u32;
        }
    });
    let refused = &facts.refused_block_sizes;
    assert!(refused.len() >= 2, "small and large sizes, for different reasons: {refused:?}");
    assert!(RefusedBlockSizes::well_formed(refused), "{refused:?}");
    assert_eq!(refused.last().map(|r| r.last), Some(gsync_contract::MAX_BLOCK_SIZE));
    assert!(RefusedBlockSizes::refusing(refused, 64).is_none());
}

#[test]
fn a_kernel_ends_with_the_trailing_params_then_the_profile_parameters() {
    let (k, facts) = lowered(
        quote! { fn k(a: &mut [f32], n: u32) { for i in grid_stride(0..n) { a[i as usize] = 1.0; } grid_sync(); } },
    );
    let cuda = emit::cuda::kernel_source(&k, &facts, true);
    let [state, status, next] = TRAILING_PARAMS.map(|p| p.to_string());
    let end = format!("    {state},\n    {status},\n    {next}\n    {PROFILE_PARAMETERS_MACRO})\n{{");
    assert!(cuda.contains(&end), "{cuda}");
    assert!(cuda.contains(&format!("__launch_bounds__({LAUNCH_BOUNDS_MACRO})")), "{cuda}");
    assert!(emit::block_size::CUDA.contains(BLOCK_SIZE_MACRO));
}

#[test]
fn only_a_kernel_that_uses_half_precision_is_marked() {
    let source = |func| {
        let (k, facts) = lowered(func);
        emit::cuda::kernel_source(&k, &facts, true)
    };
    let plain = source(quote! { fn p(a: &mut [f32]) { a[0] = a[1]; } });
    let half = source(quote! { fn h(a: &mut [f16]) { a[0] = a[1]; } });
    assert!(!gsync_contract::uses_half(&plain), "{plain}");
    assert!(gsync_contract::uses_half(&half), "{half}");
}

/// Every `gsync` identifier in `tokens`, with the two path segments after it.
fn gsync_paths(tokens: TokenStream, found: &mut Vec<String>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, tree) in trees.iter().enumerate() {
        match tree {
            TokenTree::Group(g) => gsync_paths(g.stream(), found),
            TokenTree::Ident(id) if id == "gsync" => {
                let after: String = trees[i + 1..].iter().take(3).map(ToString::to_string).collect();
                found.push(format!("gsync{after}"));
            }
            _ => {}
        }
    }
}

#[test]
fn generated_code_reaches_the_runtime_only_through_the_private_module() {
    let kernels = [
        quote! { fn plain(a: &mut [f32], b: &[f32], n: u32) { for i in grid_stride(0..n) { a[i as usize] = b[i as usize] * 2.0; } grid_sync(); } },
        quote! { fn half(a: &mut [f16], x: f32) { a[0] = a[1] + f16::from_f32(x); grid_sync(); a[2] = a[0]; } },
        quote! { fn warp(a: &mut [u32]) { let v = shfl_down(a[0], 1); a[1] = v + ballot(v > 2); grid_sync(); } },
        quote! { fn slices(a: &mut [u32], n: u32) { let mut s = shared_slice::<u32>(n as usize); s[0] = 1; sync_block(); a[0] = s[0]; grid_sync(); } },
        quote! { fn generic<T: Num>(a: &mut [T]) { a[0] = a[1]; grid_sync(); } },
    ];
    for kernel in kernels {
        let func: syn::ItemFn = syn::parse2(kernel).expect("a function");
        let expansion = crate::expand::kernel(quote!(), &func, &Default::default());
        let mut found = Vec::new();
        gsync_paths(expansion.clone(), &mut found);
        assert!(!found.is_empty(), "{expansion}");
        for path in found {
            assert_eq!(path, "gsync::__private", "{}: {expansion}", func.sig.ident);
        }
    }
}
