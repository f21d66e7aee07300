//! Unit tests of kernels in a `#[gsync::kernels]` module: device functions and `const`s
//! through lowering, the checks and the CUDA emitter.

use crate::diagnostics::Diagnostics;
use crate::{check, emit, lower, parse};
use quote::quote;

/// Lowers and checks the module's last `#[grid_phases]` function with its `#[device]`
/// functions and `const`s in sight; the fused CUDA (and the split CUDA, where the kernel
/// splits), or the error messages.
fn compile(module: proc_macro2::TokenStream) -> Result<(String, Option<String>), Vec<String>> {
    let file: syn::File = syn::parse2(module).expect("test input is a list of items");
    let mut diag = Diagnostics::default();
    let mut items = lower::ModuleItems::default();
    let mut consts = Vec::new();
    let mut tables = Vec::new();
    let mut kernel = None;
    for item in &file.items {
        match item {
            syn::Item::Fn(f) if f.attrs.iter().any(|a| a.path().is_ident("device")) => {
                items.functions.push(parse::device_fn(f, &mut diag));
            }
            syn::Item::Fn(f) => kernel = Some(f),
            syn::Item::Const(c) if lower::consts::is_table(c) => tables.push(c),
            syn::Item::Const(c) => consts.push(c),
            _ => panic!("unexpected item"),
        }
    }
    items.consts = lower::consts::module_consts(&consts, &mut diag);
    items.tables = lower::consts::module_tables(&tables, &items, &mut diag);
    let func = kernel.expect("the module has a kernel");
    let none = parse::Substitution::default();
    let sig = parse::signature(func, &none, &mut diag);
    let k = lower::kernel(&sig, &func.block, 0, &items, &none, &mut diag);
    let checked = k.and_then(|k| check::kernel(&k, &mut diag).map(|facts| (k, facts)));
    match (checked, diag.into_error()) {
        (Some((k, facts)), None) => {
            let split = crate::split::plan(&k, &facts.levels)
                .ok()
                .map(|plan| emit::cuda::split_source(&k, &facts, &plan, true));
            Ok((emit::cuda::kernel_source(&k, &facts, true), split))
        }
        (_, Some(e)) => Err(e.into_iter().map(|e| e.to_string()).collect()),
        (None, None) => unreachable!("lowering fails only with errors"),
    }
}

fn cuda(module: proc_macro2::TokenStream) -> String {
    match compile(module) {
        Ok((fused, _)) => fused,
        Err(e) => panic!("unexpected errors: {e:#?}"),
    }
}

fn errors(module: proc_macro2::TokenStream) -> String {
    match compile(module) {
        Ok((s, _)) => panic!("expected errors, got CUDA:\n{s}"),
        Err(e) => e.join("\n"),
    }
}

/// The text of `src` from the first line containing `from`.
fn from<'s>(src: &'s str, marker: &str) -> &'s str {
    &src[src.find(marker).unwrap_or_else(|| panic!("`{marker}` in:\n{src}"))..]
}

#[test]
fn a_call_in_a_match_arm_runs_only_in_that_arm() {
    let src = cuda(quote! {
        #[device] fn bump(c: &mut [u32]) { c.atomic_add(0, 1); }
        fn k(c: &mut [u32]) { match thread_idx() { 0 => bump(c), _ => {} } }
    });
    // The inlined body sits inside the arm's `if`, not before the `match`.
    let arm = from(&src, "if (");
    assert!(arm.contains("bump(…), line"), "{src}");
    assert!(!src[..src.find("if (").unwrap()].contains("atomic_add"), "{src}");
}

#[test]
fn a_call_in_a_value_match_runs_only_in_its_arm() {
    let src = cuda(quote! {
        #[device] fn inv(x: u32) -> u32 { 100 / x }
        fn k(a: &mut [u32]) { let x = a[0]; let y = match x { 0 => 0, _ => inv(x) }; a[1] = y; }
    });
    let before_test = &src[..src.find("if (").expect("the match is an if")];
    assert!(!before_test.contains("inv(…)"), "inv runs before the scrutinee is tested:\n{src}");
}

#[test]
fn a_call_in_an_else_if_condition_runs_after_the_first_condition_failed() {
    let src = cuda(quote! {
        #[device] fn get(a: &[u32], i: usize) -> u32 { a[i] }
        fn k(a: &mut [u32], i: usize) { if i >= a.len() { a[0] = 1; } else if get(a, i) > 5 { a[0] = 2; } }
    });
    let before_else = &src[..src.find("} else").expect("an else")];
    assert!(!before_else.contains("get(…)"), "get runs before the guard:\n{src}");
}

#[test]
fn a_barrier_in_a_thread_dependent_arm_is_refused_through_a_call() {
    let e = errors(quote! {
        #[device] fn step() { grid_sync(); }
        fn k(a: &mut [u32]) { match thread_idx() { 0 => step(), _ => {} } }
    });
    assert!(e.contains("grid_sync"), "{e}");
}

#[test]
fn a_call_in_an_else_if_of_a_value_if_runs_in_its_branch() {
    let src = cuda(quote! {
        #[device] fn get(a: &[u32], i: usize) -> u32 { a[i] }
        fn k(a: &mut [u32], i: usize) {
            let y = if i >= a.len() { let t = 1u32; t } else if get(a, i) > 5 { 2 } else { 3 };
            a[0] = y;
        }
    });
    let before_else = &src[..src.find("} else").expect("an else")];
    assert!(!before_else.contains("get(…)"), "get runs before the guard:\n{src}");
    // ... and before the test of its result, not inside the branch that test guards.
    let otherwise = from(&src, "} else");
    let (call, test) = (otherwise.find("get(…)").expect("the call"), otherwise.find("> 5u").expect("the test"));
    assert!(call < test, "{src}");
}

#[test]
fn a_call_in_a_spin_condition_runs_at_every_poll() {
    let src = cuda(quote! {
        #[device] fn ready(f: &[u32]) -> bool { f.load_acquire(0) != 0 }
        fn k(f: &mut [u32], out: &mut [u32]) { wait_until(|| ready(f)); out[0] = 1; }
    });
    let wait = from(&src, "while (true)");
    assert!(wait.contains("ready(…)") && wait.contains("break;"), "{src}");
}

#[test]
fn a_spin_condition_may_not_reach_a_barrier_through_a_call() {
    let e = errors(quote! {
        #[device] fn ready(f: &[u32]) -> bool { sync_block(); f.load_acquire(0) != 0 }
        fn k(f: &mut [u32]) { wait_until(|| ready(f)); }
    });
    assert!(e.contains("a barrier in a function that a `wait_until` condition calls"), "{e}");
}

#[test]
fn an_assert_before_a_barrier_inside_a_call_runs_on_to_the_barrier() {
    let src = cuda(quote! {
        #[device] fn step_barrier() { grid_sync(); }
        fn k(a: &mut [u32]) { assert!(thread_idx() != 0); step_barrier(); a[0] = 1; }
    });
    assert!(src.contains("a failure stops the grid at the next grid_sync()"), "{src}");
    assert!(!from(&src, "assert!").split("grid_sync() #1").next().unwrap().contains("return;"), "{src}");
}

#[test]
fn an_assert_in_a_device_function_or_a_lock_compiles_without_a_phase_counter() {
    for module in [
        quote! {
            #[device] fn check(x: u32) { assert!(x < 10); }
            fn k(a: &mut [u32]) { check(a[0]); }
        },
        quote! {
            fn k(a: &mut [u32], locks: &mut [u32]) { locks.with_lock(0, || { assert!(a[0] < 10); a[0] += 1; }); }
        },
        quote! {
            #[device] fn check(x: u32) { assert!(x < 10); }
            fn k(a: &mut [u32]) { check(a[0]); grid_sync(); check(a[1]); }
        },
    ] {
        let (fused, split) = compile(module).unwrap_or_else(|e| panic!("{e:#?}"));
        for src in std::iter::once(&fused).chain(&split) {
            if !src.contains("u32 gsync_phase = 0u;") {
                assert!(!src.contains("gsync_phase"), "the phase counter is used but not declared:\n{src}");
            }
        }
    }
}

#[test]
fn lock_words_are_reachable_only_through_with_lock() {
    for access in [
        quote!(locks.store_release(0, 0);),
        quote!(locks[0] = 0;),
        quote!(let _ = locks.atomic_exch(0, 0);),
        quote!(out[0] = locks[0];),
    ] {
        let e = errors(quote! {
            fn k(locks: &mut [u32], out: &mut [u32]) {
                locks.with_lock(0, || { out[1] += 1; });
                #access
            }
        });
        assert!(e.contains("holds lock words"), "{access}: {e}");
    }
    let e = errors(quote! {
        #[device] fn release(l: &mut [u32]) { l.store_release(0, 0); }
        fn k(locks: &mut [u32], out: &mut [u32]) { locks.with_lock(0, || { out[1] += 1; }); release(locks); }
    });
    assert!(e.contains("holds lock words"), "through a device function: {e}");
}

#[test]
fn inlining_that_multiplies_is_refused_at_the_limit() {
    let mut module = quote! { #[device] fn f0(a: &mut [u32]) { a[0] += 1; } };
    for d in 1u32..=16 {
        let (me, prev) = (quote::format_ident!("f{d}"), quote::format_ident!("f{}", d - 1));
        module.extend(quote! { #[device] fn #me(a: &mut [u32]) { #prev(a); #prev(a); } });
    }
    module.extend(quote! { fn k(a: &mut [u32]) { f16(a); } });
    let started = std::time::Instant::now();
    let e = errors(module);
    assert!(e.contains("a kernel inlines at most 1024"), "{e}");
    assert_eq!(e.matches("inlines at most").count(), 1, "{e}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "took {:?}", started.elapsed());
}

#[test]
fn patterns_rustc_refuses_are_refused() {
    let e = errors(quote! { fn k(a: &mut [u8]) { let x = a[0]; match x { 0..=300 => a[1] = 1, _ => {} } } });
    assert!(e.contains("out of range"), "{e}");
    let e = errors(quote! { fn k(a: &mut [u8]) { let x = a[0]; let y = match x { 0..=300 => 1 }; a[1] = y; } });
    assert!(e.contains("out of range"), "a value match's last arm: {e}");
    let e = errors(quote! { fn k(a: &mut [u32]) { let x = a[0]; match x { 10..=1 => a[1] = 1, _ => {} } } });
    assert!(e.contains("lower range bound must be less than or equal to upper"), "{e}");
    let e = errors(quote! { fn k(a: &mut [u32]) { let x = a[0]; match x { 5..5 => a[1] = 1, _ => {} } } });
    assert!(e.contains("lower range bound must be less than upper"), "{e}");
}

#[test]
fn constant_overflow_in_remainder_is_refused() {
    let e = errors(quote! {
        const Q: i32 = i32::MIN % -1;
        fn k(a: &mut [i32]) { a[0] = Q; }
    });
    assert!(e.contains("overflow"), "{e}");
}

#[test]
fn a_local_that_shadows_a_device_function_is_not_callable() {
    let e = errors(quote! {
        #[device] fn step(x: u32) -> u32 { x + 1 }
        fn k(a: &mut [u32]) { let step = 3u32; a[0] = step(step); }
    });
    assert!(e.contains("expected function, found `step`"), "{e}");
}

#[test]
fn bindings_that_shadow_a_module_const_are_refused() {
    for module in [
        quote! { const N: u32 = 4; fn k(a: &mut [u32], N: u32) { a[0] = N; } },
        quote! { const N: u32 = 4; #[device] fn f(N: u32) -> u32 { N } fn k(a: &mut [u32]) { a[0] = f(1); } },
        quote! { const N: u32 = 4; fn k(a: &mut [u32]) { let N = 5u32; a[0] = N; } },
        quote! { const N: [u32; 2] = [1, 2]; fn k(a: &mut [u32]) { let N = 5u32; a[0] = N; } },
    ] {
        let e = errors(module);
        assert!(e.contains("cannot shadow the constant `N`"), "{e}");
    }
}

#[test]
fn a_parameter_named_twice_is_one_error() {
    let e = errors(quote! { fn k(a: &mut [u32], a: u32) { } });
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("identifier `a` is bound more than once in this parameter list"), "{e}");
    let e = errors(quote! {
        #[device] fn f(x: u32, x: u32) -> u32 { x }
        fn k(a: &mut [u32]) { a[0] = f(1, 2); }
    });
    assert!(e.contains("identifier `x` is bound more than once in this parameter list"), "{e}");
}

#[test]
fn a_module_const_array_is_a_lookup_table() {
    let src = cuda(quote! {
        const TABLE: [u32; 4] = [1, 2, 4, 8];
        fn k(a: &mut [u32]) { for i in grid_stride(0..a.len()) { a[i] = TABLE[i % 4] + TABLE.len() as u32; } }
    });
    assert!(src.contains("TABLE"), "{src}");
}

#[test]
fn a_uniformity_error_points_at_the_assignment_that_made_a_value_vary() {
    let e = errors(quote! {
        fn k(a: &mut [u32]) {
            let mut x = 0u32;
            if lane_id() == 0 { x = a[0]; }
            if x > 0 { sync_block(); }
        }
    });
    assert!(e.contains("`x` is assigned here under control flow that depends on thread identity"), "{e}");
    // Broadcast from one lane, the value is the warp's: a barrier of the block still needs more.
    let e = errors(quote! {
        fn k(a: &mut [u32]) {
            let mut x = 0u32;
            if lane_id() == 0 { x = a[0]; }
            let y = shfl(x, 0);
            if y > 0 { sync_block(); }
        }
    });
    assert!(e.contains("depends on warp identity"), "{e}");
}

#[test]
fn an_option_given_twice_is_refused() {
    let mut diag = Diagnostics::default();
    let options = parse::options(quote!(threads = 64, threads = 128), &mut diag);
    let e: Vec<String> = diag.into_error().map(|e| e.into_iter().map(|e| e.to_string()).collect()).unwrap_or_default();
    assert_eq!(e, ["`threads` is given twice: name the block size once"]);
    assert_eq!(options.threads, 64);
}

#[test]
fn a_loop_whose_device_function_crosses_a_barrier_stays_a_loop() {
    let c = cuda(quote! {
        #[device] fn phase(out: &mut [u32], p: u32) { out[0] += p; grid_sync(); }
        fn k(out: &mut [u32]) {
            for p in 0..3u32 { phase(out, p); }
        }
    });
    assert!(c.contains("#pragma unroll 1\n    for (u32 p_ = 0u; p_ < 3u; ++p_)"), "{c}");
}

/// The options' errors, and the options parsed.
fn option_errors(args: proc_macro2::TokenStream) -> (Vec<String>, parse::Options) {
    let mut diag = Diagnostics::default();
    let options = parse::options(args, &mut diag);
    let e = diag.into_error().map(|e| e.into_iter().map(|e| e.to_string()).collect()).unwrap_or_default();
    (e, options)
}

#[test]
fn blocks_per_sm_is_parsed_beside_threads() {
    let (e, options) = option_errors(quote!(blocks_per_sm = 3, threads = 256));
    assert!(e.is_empty(), "{e:?}");
    assert_eq!((options.threads, options.blocks_per_sm), (256, 3));
    let (e, options) = option_errors(quote!(blocks_per_sm = 8));
    assert!(e.is_empty(), "blocks of the default 256 threads: {e:?}");
    assert_eq!((options.threads, options.blocks_per_sm), (0, 8));
}

#[test]
fn blocks_per_sm_past_what_an_sm_holds_is_refused() {
    let (e, options) = option_errors(quote!(threads = 1024, blocks_per_sm = 3));
    assert_eq!(
        e,
        ["3 blocks of 1024 threads are 3072 threads, more than the 2048 an SM holds: ask for at most 2 blocks per SM"]
    );
    assert_eq!(options.blocks_per_sm, 0);
    let (e, _) = option_errors(quote!(blocks_per_sm = 9));
    assert!(e[0].contains("9 blocks of 256 threads are 2304 threads"), "{e:?}");
    let (e, _) = option_errors(quote!(blocks_per_sm = 0));
    assert_eq!(e, ["`blocks_per_sm` must be a number of blocks from 1 to 32"]);
    let (e, _) = option_errors(quote!(blocks_per_sm = 2, blocks_per_sm = 3));
    assert_eq!(e, ["`blocks_per_sm` is given twice: name the blocks per SM once"]);
    let (e, _) = option_errors(quote!(blocks_per_sm = "3"));
    assert!(e[0].starts_with("`blocks_per_sm` takes an integer literal"), "{e:?}");
    // A second one after a refused value is still given twice; a refused block size is not
    // checked against.
    let (e, _) = option_errors(quote!(threads = 0, threads = 64));
    assert_eq!(
        e,
        ["`threads` must be a block size from 1 to 1024", "`threads` is given twice: name the block size once"]
    );
    let (e, _) = option_errors(quote!(threads = 4096, blocks_per_sm = 16));
    assert_eq!(e, ["`threads` must be a block size from 1 to 1024"]);
}

#[test]
fn a_debug_assert_that_calls_a_device_function_is_refused() {
    let e = errors(quote! {
        #[device] fn check(x: u32) -> bool { x < 10 }
        fn k(a: &mut [u32]) { debug_assert!(check(a[0])); a[1] = 1; }
    });
    assert!(e.contains("`debug_assert!` calls a device function here"), "{e}");
}

#[test]
fn an_unsettled_scrutinee_takes_the_range_of_its_final_type() {
    let src = cuda(quote! {
        fn k(a: &mut [u64]) { let x = 0; match x { 3_000_000_000 => a[0] = 1, _ => {} } let y: u64 = x; a[1] = y; }
    });
    assert!(src.contains("3000000000"), "{src}");
}

#[test]
fn a_range_put_s_operands_call_device_functions_in_order_and_a_call_under_thread_control_is_refused() {
    let src = cuda(quote! {
        #[device] fn neighbour(p: u32) -> u32 { (p + 1) % n_pes() }
        #[device] fn start(b: usize) -> usize { b * 4 }
        fn k(#[symmetric] a: &mut [u32], src: &[u32]) {
            a.put_range(neighbour(pe()), start(block_idx() as usize), &src[..4]);
        }
    });
    let neighbour = src.find("neighbour(…)").expect("the PE's call");
    let pe = src.find("range_pe_ =").expect("the PE");
    let start = src.find("start(…)").expect("the start's call");
    assert!(neighbour < pe && pe < start && start < src.find("range_at_ =").expect("at"), "{src}");
    let e = errors(quote! {
        #[device] fn send(a: &mut [u32], src: &[u32]) { a.put_range(0, 0, &src[..]); }
        fn k(#[symmetric] a: &mut [u32], src: &[u32]) {
            if thread_idx() == 0 { send(a, src); }
        }
    });
    assert!(
        e.contains("this call runs `put_range` (inside `send`) in control flow that depends on thread identity"),
        "{e}"
    );
}
