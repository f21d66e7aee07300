//! Unit tests of the pipeline below the proc-macro boundary: lowering,
//! checks and the CUDA emitter, on kernels given as token streams.

use crate::check::Facts;
use crate::diagnostics::Diagnostics;
use crate::ir::Kernel;
use crate::{check, emit, lower, parse};
use quote::quote;

/// Lowers and checks `func`; returns the kernel and its facts, or the error messages.
pub(crate) fn lowered(func: proc_macro2::TokenStream) -> Result<(Kernel, Facts), Vec<String>> {
    let func: syn::ItemFn = syn::parse2(func).expect("test input is a function");
    let mut diag = Diagnostics::default();
    let none = parse::Substitution::default();
    let sig = parse::signature(&func, &none, &mut diag);
    let kernel = lower::kernel(&sig, &func.block, 0, &Default::default(), &none, &mut diag);
    let checked = kernel.and_then(|k| check::kernel(&k, &mut diag).map(|facts| (k, facts)));
    match (checked, diag.into_error()) {
        (Some(checked), None) => Ok(checked),
        (_, Some(e)) => Err(e.into_iter().map(|e| e.to_string()).collect()),
        (None, None) => unreachable!("lowering fails only with errors"),
    }
}

/// Runs the pipeline; returns the checked CUDA or the error messages.
pub(crate) fn compile(func: proc_macro2::TokenStream) -> Result<String, Vec<String>> {
    lowered(func).map(|(k, facts)| emit::cuda::kernel_source(&k, &facts, true))
}

pub(crate) fn cuda(func: proc_macro2::TokenStream) -> String {
    match compile(func) {
        Ok(s) => s,
        Err(e) => panic!("unexpected errors: {e:#?}"),
    }
}

pub(crate) fn errors(func: proc_macro2::TokenStream) -> String {
    match compile(func) {
        Ok(s) => panic!("expected errors, got CUDA:\n{s}"),
        Err(e) => e.join("\n"),
    }
}

#[test]
fn smoothing_kernel_keeps_rust_names_and_marks_the_barrier() {
    let src = cuda(quote! {
        fn smooth(a: &mut [f32], b: &mut [f32], rounds: u32) {
            let n = a.len() as u32;
            for r in 0..rounds {
                for i in grid_stride(1..n - 1) {
                    if r % 2 == 0 { b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0; }
                    else { a[i] = (b[i - 1] + b[i] + b[i + 1]) / 3.0; }
                }
                grid_sync();
            }
        }
    });
    assert!(src.contains("smooth_("), "{src}");
    assert!(src.contains("f32* __restrict__ a_, const usize gsync_a_len"), "{src}");
    assert!(src.contains("const u32 n_ = (u32)gsync_a_len;"), "{src}");
    assert!(src.contains("for (u32 r_ = 0u; r_ < rounds_; ++r_)"), "{src}");
    assert!(src.contains("gsync_grid_sync(gsync_barrier, gsync_status);"), "{src}");
    assert!(src.contains("/ 3.0f"), "float literal typed f32 from context: {src}");
    assert!(src.contains("gsync::load(a_, gsync_a_len, "), "checked loads: {src}");
}

#[test]
fn narrow_and_signed_arithmetic_wraps_through_helpers() {
    let src = cuda(quote! {
        fn k(x: &mut [u8], y: &mut [i32], z: &mut [u32]) {
            let i = global_id();
            x[i] = x[i] * 3 + 1;
            y[i] = -y[i] + y[i] / y[0] + y[i] / 2;
            z[i] = z[i] + 1 << 3;
        }
    });
    assert!(src.contains("gsync::add(gsync::mul("), "{src}");
    assert!(src.contains("gsync::neg("), "{src}");
    assert!(src.contains("gsync::div("), "a variable divisor may be zero: {src}");
    assert!(src.contains("/ 2"), "a literal divisor cannot trap: {src}");
    assert!(src.contains("<< 3"), "u32 shift by an in-range literal stays an operator: {src}");
}

#[test]
fn float_to_int_casts_saturate() {
    let src = cuda(quote! {
        fn k(x: &[f32], y: &mut [i16]) {
            let i = global_id();
            y[i] = x[i] as i16;
        }
    });
    assert!(src.contains("gsync::float_to_int<i16>("), "{src}");
}

#[test]
fn literals_are_typed_by_their_uses() {
    let src = cuda(quote! {
        fn k(out: &mut [u64]) {
            let mut acc = 0;
            let mut i = 0;
            while i < 10 { acc += out[i]; i += 1; }
            out[0] = acc;
        }
    });
    assert!(src.contains("u64 acc_ = 0ull;"), "{src}");
    assert!(src.contains("usize i_ = 0ull;"), "index literal is usize: {src}");
}

#[test]
fn shadowing_gets_unique_c_names() {
    let src = cuda(quote! {
        fn k(out: &mut [u32]) {
            let x = 1u32;
            let x = x + 1;
            out[0] = x;
        }
    });
    assert!(src.contains("const u32 x_ = 1u;") && src.contains("const u32 x_2_ = x_ + 1u;"), "{src}");
}

#[test]
fn a_shadowed_name_never_takes_the_name_of_another_variable() {
    let src = cuda(quote! {
        fn k(out: &mut [u32], x_2: u32) {
            let x = 1u32;
            let x = x + x_2;
            out[0] = x;
        }
    });
    assert!(src.contains("const u32 x_2_,"), "{src}");
    assert!(src.contains("const u32 x_ = 1u;") && src.contains("const u32 x_3_ = x_ + x_2_;"), "{src}");
}

#[test]
fn every_user_name_takes_a_final_underscore() {
    let src = cuda(quote! {
        fn k(float: &mut [f32], int: u32, r#for: u32, größe: u32) { float[int] = (r#for + größe) as f32; }
    });
    assert!(src.contains("f32* __restrict__ float_") && src.contains("const u32 int_"), "{src}");
    assert!(src.contains("(for_ + grXu00f6Xu00dfe_)"), "{src}");
}

#[test]
fn a_raw_identifier_names_the_same_variable_as_its_plain_spelling() {
    let src = cuda(quote! {
        fn k(out: &mut [u32]) {
            let r#x = 1u32;
            out[0] = x;
        }
    });
    assert!(src.contains("const u32 x_ = 1u;") && src.contains("out_[0ull] = x_;"), "{src}");
}

#[test]
fn if_expression_with_statements_becomes_assignments() {
    let src = cuda(quote! {
        fn k(out: &mut [f32], flag: bool) {
            let v = if flag { let t = 2.0f32; t * t } else { 1.0 };
            out[0] = v;
        }
    });
    assert!(src.contains("f32 v_;") && src.contains("v_ = t_ * t_;") && src.contains("v_ = 1.0f;"), "{src}");
}

#[test]
fn mismatched_types_are_reported() {
    let e = errors(quote! { fn k(a: &mut [u32], b: i32) { a[0] = a[0] + b; } });
    assert!(e.contains("mismatched types"), "{e}");
}

#[test]
fn grid_sync_under_thread_dependent_branch_is_rejected() {
    let e = errors(quote! {
        fn k(a: &mut [u32]) { if thread_idx() == 0 { grid_sync(); } }
    });
    assert!(e.contains("depends on thread identity"), "{e}");
}

#[test]
fn varying_taint_flows_through_assignments_in_loops() {
    let e = errors(quote! {
        fn k(a: &mut [u32]) {
            let mut k = 0u32;
            let mut steps = 0u32;
            while steps < 4 {
                grid_sync();
                steps = k;
                k = thread_idx();
            }
        }
    });
    assert!(e.contains("`grid_sync()` in control flow"), "{e}");
}

#[test]
fn block_dependent_sync_block_is_fine_but_grid_sync_is_not() {
    cuda(quote! {
        fn k(a: &mut [u32]) { if block_idx() == 0 { sync_block(); } }
    });
    let e = errors(quote! { fn k(a: &mut [u32]) { if block_idx() == 0 { grid_sync(); } } });
    assert!(e.contains("block identity"), "{e}");
}

#[test]
fn varying_break_makes_the_loop_varying() {
    let e = errors(quote! {
        fn k(a: &mut [u32]) {
            loop {
                if a[global_id()] == 0 { break; }
                grid_sync();
            }
        }
    });
    assert!(e.contains("grid_sync"), "{e}");
}

#[test]
fn uniform_load_condition_is_allowed() {
    cuda(quote! {
        fn k(flag: &mut [u32]) {
            // The flag is read in one phase and written in another, so all threads agree.
            while flag[0] != 0 {
                grid_sync();
                if global_id() == 0 { flag[0] = 0; }
                grid_sync();
            }
        }
    });
}

#[test]
fn return_with_grid_sync_is_rejected() {
    let e = errors(quote! { fn k(a: &mut [u32]) { if a.len() == 0 { return; } grid_sync(); } });
    assert!(e.contains("`return` in a kernel that calls `grid_sync()`"), "{e}");
}

#[test]
fn literal_out_of_range_is_reported() {
    let e = errors(quote! { fn k(a: &mut [u8]) { a[0] = 300; } });
    assert!(e.contains("literal out of range for `u8`"), "{e}");
}

#[test]
fn ambiguous_literal_method_asks_for_annotation() {
    let e = errors(quote! { fn k(a: &mut [u32]) { let x = 5; a[0] = x.min(3); } });
    assert!(e.contains("ambiguous"), "{e}");
}

#[test]
fn all_errors_are_reported_together() {
    let e = errors(quote! {
        fn k(a: &mut [u32]) {
            let s = "text";
            let c = |x: u32| x;
            println!("hi");
        }
    });
    assert!(e.contains("strings") && e.contains("closures") && e.contains("macro"), "{e}");
}

#[test]
fn shared_memory_and_loops_emit() {
    let src = cuda(quote! {
        fn k(a: &mut [f32]) {
            let mut tile = shared_array::<f32, 256>();
            let t = thread_idx();
            tile[t] = a[global_id()];
            sync_block();
            let mut s = 128u32;
            while s > 0 {
                if t < s { tile[t] += tile[t + s]; }
                sync_block();
                s >>= 1;
            }
            for k in (0..10u32).step_by(3) { a[k] = 0.0; }
            for k in (0..10u32).rev() { a[k] = 1.0; }
            for k in 0..=9u32 { a[k] = 2.0; }
        }
    });
    assert!(src.contains("__shared__ __align__(16) f32 tile_[256];"), "{src}");
    assert!(src.contains("gsync::step_toward(k_, gsync_k_end, 3ull)"), "{src}");
    assert!(src.contains("const u32 k_2_ = --gsync_k_2_next;"), "{src}");
}

#[test]
fn float_literal_beyond_f32_is_out_of_range() {
    let e = errors(quote! { fn k(a: &mut [f32]) { a[0] = 1e40f32; } });
    assert!(e.contains("literal out of range for `f32`"), "{e}");
}

#[test]
fn shuffles_evaluated_under_a_thread_dependent_condition_are_rejected() {
    let rejected = [
        quote! { fn k(a: &mut [u32]) { let v = a[0]; if thread_idx() < 5 && shfl_xor(v, 1) > 0 { a[0] = 1; } } },
        quote! { fn k(a: &mut [u32]) { let v = a[0]; let b = thread_idx() < 5 || shfl_xor(v, 1) > 0; a[0] = b as u32; } },
        quote! { fn k(a: &mut [u32]) { let v = a[0]; let y = if thread_idx() < 5 { shfl(v, 31) } else { 0 }; a[0] = y; } },
        quote! { fn k(a: &mut [u32]) { let v = a[0]; let y = if lane_id() < 5 { 0 } else { shfl(v, 31) }; a[0] = y; } },
        quote! { fn k(a: &mut [u32]) { let v = a[global_id()]; a[0] = if v > 1 { 0 } else if v > 0 { shfl(v, 1) } else { 2 }; } },
        quote! { fn k(a: &mut [u32]) { let v = a[global_id()]; a[0] = (v > 0 && shfl_up(v, 1) > 0) as u32; } },
        quote! { fn k(a: &mut [u32]) { let mut v = a[global_id()]; while v > 3 && shfl_down(v, 1) > 0 { v /= 2; } a[0] = v; } },
        quote! { fn k(a: &mut [u32]) { let mut v = a[global_id()]; while shfl_down(v, 1) > 3 { v /= 2; } a[0] = v; } },
        quote! { fn k(a: &mut [u32]) { let v = a[0]; a[0] = (thread_idx() < 5 && shfl_xor(v, 1) > 0) as u32 * v.min(3); } },
        quote! { fn k(a: &mut [u32]) { let v = a[0]; a[0] = (if thread_idx() < 5 { shfl_xor(v, 1) } else { v }).max(3); } },
        quote! { fn k(a: &mut [u32]) { let v = a[0]; a[(thread_idx() == 0 || shfl(v, 0) == 0) as usize] = 1; } },
    ];
    for (i, kernel) in rejected.into_iter().enumerate() {
        let e = errors(kernel);
        assert!(e.contains("a warp shuffle in control flow that depends on thread identity"), "case {i}: {e}");
    }
}

#[test]
fn shuffles_under_uniform_conditions_stay_accepted() {
    cuda(quote! {
        fn k(a: &mut [u32], n: u32) {
            let v = a[global_id()];
            let y = if n > 5 && shfl_xor(v, 1) > 0 { 1 } else { 2 };
            let y = if n > 5 || block_idx() > 2 { shfl(v, y) } else { shfl_down(v, 2) };
            let z = if block_idx() == 0 { shfl(y, 3) } else { 0 };
            a[global_id()] = y + z;
        }
    });
}

#[test]
fn a_shuffle_in_an_atomic_operand_must_be_bound_first() {
    let e = errors(quote! { fn k(a: &mut [u32]) { a.atomic_add(0, shfl_down(a[0], 1)); } });
    assert!(e.contains("bind this value with `let` first"), "{e}");
    let e =
        errors(quote! { fn k(a: &mut [u32]) { let o = a.atomic_max(shfl(thread_idx(), 0) as usize, 1); a[1] = o; } });
    assert!(e.contains("bind this value with `let` first"), "{e}");
}

#[test]
fn a_stored_shuffle_runs_in_every_thread_before_the_bounds_check() {
    let src = cuda(quote! {
        fn k(a: &mut [u32], c: &mut [u32]) {
            let i = global_id();
            a[i] = shfl_down(a[i], 1);
            a[c.atomic_add(0, 1) as usize] += 2;
        }
    });
    assert!(src.contains("const u32 gsync_a_value = gsync::shfl_down("), "{src}");
    assert!(src.contains("if (gsync::in_bounds(i_, gsync_a_len, gsync_status, 0u, "), "{src}");
    assert!(src.contains("const usize gsync_a_index = (usize)(gsync::in_bounds(0ull, gsync_c_len,"), "{src}");
    assert!(src.contains("a_[gsync_a_index] += 2u;"), "{src}");
    assert_eq!(src.matches("gsync::atomic_add(").count(), 1, "the index runs once: {src}");
}

#[test]
fn an_array_repeat_value_with_an_atomic_runs_once() {
    let src = cuda(quote! { fn k(a: &mut [u32]) { let r = [a.atomic_add(0, 1); 4]; a[1] = r[3]; } });
    assert_eq!(src.matches("gsync::atomic_add(").count(), 1, "{src}");
    assert!(src.contains("r_[gsync_r_fill] = gsync_r_value;"), "{src}");
}

#[test]
fn a_float_negated_twice_is_not_a_decrement() {
    let src = cuda(quote! { fn k(a: &mut [f32], x: f32) { a[0] = -(-x); a[1] = -(-0.5f32 as f32); } });
    assert!(src.contains("= -(-x_);"), "{src}");
    assert!(src.contains("= -(-0.5f);"), "{src}");
}

#[test]
fn a_literal_zero_step_is_rejected_and_a_run_time_one_is_checked() {
    let e = errors(quote! { fn k(a: &mut [u32]) { for i in (0..10usize).step_by(0) { a[i] = 1; } } });
    assert!(e.contains("`step_by(0)` never advances"), "{e}");
    let e =
        errors(quote! { fn k(a: &mut [u32]) { const S: usize = 0; for i in (0..10usize).step_by(S) { a[i] = 1; } } });
    assert!(e.contains("`step_by(0)` never advances"), "{e}");
    let src = cuda(quote! {
        fn k(a: &mut [u32], s: usize) {
            for i in (0..a.len()).step_by(s) { a[i] = 1; }
            for j in (0..10u32).step_by(a[0] as usize) { a[j] = 2; }
        }
    });
    assert!(src.contains("gsync::step_continues(i_, gsync_i_end, s_, gsync_status, "), "{src}");
    // A step read from memory is bound once, as a `usize` (a `u32` would truncate it).
    assert!(src.contains("const usize gsync_j_step = (usize)gsync::load(a_, gsync_a_len, 0ull"), "{src}");
    assert!(src.contains("gsync::step_continues(j_, gsync_j_end, gsync_j_step, gsync_status, "), "{src}");
}

#[test]
fn shared_arrays_beyond_48_kib_are_rejected_on_the_array_that_crosses() {
    let e = errors(quote! {
        fn k(a: &mut [f32]) {
            let small = shared_array::<f32, 1024>();
            let big = shared_array::<f64, 102400>();
            a[0] = small[0] + big[0] as f32;
        }
    });
    assert!(e.contains("need 823296 bytes (819200 bytes for `big` on top of 4096 before it)"), "{e}");
    assert!(e.contains("49152 bytes (48 KiB) of static shared memory"), "{e}");
    cuda(quote! {
        fn k(a: &mut [f32]) {
            let x = shared_array::<f32, 8192>();
            let y = shared_array::<u64, 2048>();
            a[0] = x[0] + y[0] as f32;
        }
    });
}

/// Lowers and checks a kernel, then splits it for MultiLaunch.
fn split_of(
    func: proc_macro2::TokenStream,
) -> (crate::ir::Kernel, check::Facts, Result<crate::split::SplitPlan, String>) {
    let func: syn::ItemFn = syn::parse2(func).expect("test input is a function");
    let mut diag = Diagnostics::default();
    let none = parse::Substitution::default();
    let sig = parse::signature(&func, &none, &mut diag);
    let k = lower::kernel(&sig, &func.block, 0, &Default::default(), &none, &mut diag).expect("the kernel lowers");
    let facts = check::kernel(&k, &mut diag).expect("the kernel checks");
    let plan = crate::split::plan(&k, &facts.levels);
    (k, facts, plan)
}

fn launches(host: &[crate::split::HostStmt]) -> usize {
    use crate::split::HostStmt as H;
    host.iter()
        .map(|s| match s {
            H::Launch(_) => 1,
            H::If { then, otherwise, .. } => launches(then) + otherwise.as_deref().map_or(0, launches),
            H::While { body, .. } | H::Loop { body } | H::For { body, .. } | H::Block(body) => launches(body),
            _ => 0,
        })
        .sum()
}

#[test]
fn split_smoothing_runs_the_round_loop_on_the_host() {
    let (k, facts, plan) = split_of(quote! {
        fn smooth(a: &mut [f32], b: &mut [f32], rounds: u32) {
            let n = a.len() as u32;
            for r in 0..rounds {
                for i in grid_stride(1..n - 1) {
                    if r % 2 == 0 { b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0; }
                    else { a[i] = (b[i - 1] + b[i] + b[i + 1]) / 3.0; }
                }
                grid_sync();
            }
        }
    });
    let plan = plan.expect("splittable");
    assert_eq!(plan.segments.len(), 1);
    assert!(matches!(plan.host.as_slice(), [crate::split::HostStmt::Let { .. }, crate::split::HostStmt::For { .. }]));
    let values: Vec<&str> = plan.segments[0].host_values.iter().map(|v| k.var(*v).name.as_str()).collect();
    assert_eq!(values, ["n", "r"]);
    assert!(!plan.reads_device);
    let src = crate::emit::cuda::split_source(&k, &facts, &plan, false);
    assert!(
        src.contains("smooth_segment_0_(") && src.contains("const u32 n_,") && src.contains("const u32 r_,"),
        "{src}"
    );
    assert!(!src.contains("gsync_grid_sync"), "{src}");
}

#[test]
fn the_fused_kernel_has_profile_hooks_around_every_barrier_and_at_its_end() {
    let src = cuda(quote! {
        fn two(a: &mut [u32]) {
            let i = global_id();
            let n = a.len() as u32;
            if i < n { a[i] = 1; }
            grid_sync();
            if i < n { a[i] = a[i] + 1; }
            grid_sync();
        }
    });
    assert!(src.contains("const gsync_next_launch_t gsync_next_launch\n    GSYNC_PROFILE_PARAMETERS)\n{"), "{src}");
    let hooks: Vec<&str> =
        src.lines().map(str::trim).filter(|line| line.ends_with("();") && line.starts_with("GSYNC_PROFILE_")).collect();
    // After each barrier, where the grid may stop (the deadline), and at the end.
    let expected = [
        "GSYNC_PROFILE_BEGIN();",
        "GSYNC_PROFILE_ARRIVE();",
        "GSYNC_PROFILE_LEAVE();",
        "GSYNC_PROFILE_END();",
        "GSYNC_PROFILE_ARRIVE();",
    ];
    assert_eq!(hooks[..5], expected, "{src}");
    assert_eq!(hooks[5..], ["GSYNC_PROFILE_LEAVE();", "GSYNC_PROFILE_END();", "GSYNC_PROFILE_END();"], "{src}");
    let arrive = src.find("GSYNC_PROFILE_ARRIVE();").expect("an arrival");
    let sync = src.find("gsync_grid_sync(gsync_barrier, gsync_status);").expect("a barrier");
    let leave = src.find("GSYNC_PROFILE_LEAVE();").expect("a leave");
    assert!(arrive < sync && sync < leave, "{src}");
    assert!(src.trim_end().ends_with("GSYNC_PROFILE_END();\n}"), "{src}");
    // Only the hooks: what they do is the runtime's, and only when it profiles.
    assert!(!src.contains("globaltimer") && !src.contains("gsync_profile"), "{src}");
}

#[test]
fn a_kernel_without_grid_sync_records_each_thread_s_end_at_every_return() {
    let src = cuda(quote! {
        fn k(a: &mut [u32]) {
            let i = global_id();
            if i >= a.len() as u32 { return; }
            a[i] = 1;
        }
    });
    let exits = src.matches("GSYNC_PROFILE_EXIT();").count();
    assert_eq!(exits, 2, "one before the return, one at the end: {src}");
    assert!(src.contains("GSYNC_PROFILE_EXIT();\n        return;"), "{src}");
    assert!(!src.contains("GSYNC_PROFILE_END()"), "{src}");
}

#[test]
fn segments_have_no_profile_hooks() {
    let (k, facts, plan) = split_of(quote! {
        fn two(a: &mut [u32]) {
            let i = global_id();
            let n = a.len() as u32;
            if i < n { a[i] = 1; }
            grid_sync();
            if i < n { a[i] = a[i] + 1; }
        }
    });
    let src = crate::emit::cuda::split_source(&k, &facts, &plan.expect("splittable"), false);
    assert!(!src.contains("GSYNC_PROFILE"), "{src}");
}

#[test]
fn split_fixed_phases_become_one_launch_each() {
    let (_, _, plan) = split_of(quote! {
        fn k(a: &mut [u32], b: &mut [u32]) {
            for i in grid_stride(0..a.len()) { a[i] = 1; }
            grid_sync();
            for i in grid_stride(0..a.len()) { b[i] = a[a.len() - 1 - i]; }
            grid_sync();
            for i in grid_stride(0..a.len()) { a[i] = b[i] + 1; }
        }
    });
    let plan = plan.expect("splittable");
    assert_eq!(plan.segments.len(), 3);
    assert_eq!(launches(&plan.host), 3);
}

#[test]
fn split_host_reads_a_uniform_flag_from_the_device() {
    let (_, _, plan) = split_of(quote! {
        fn k(flag: &mut [u32], data: &mut [u32]) {
            while flag[0] != 0 {
                for i in grid_stride(0..data.len()) { data[i] += 1; }
                grid_sync();
                if global_id() == 0 { flag[0] -= 1; }
                grid_sync();
            }
        }
    });
    let plan = plan.expect("splittable");
    assert!(plan.reads_device);
    assert_eq!(plan.segments.len(), 2);
}

#[test]
fn split_refuses_a_varying_local_assigned_after_its_definition() {
    let (_, _, plan) = split_of(quote! {
        fn k(a: &mut [u32]) {
            let mut i = global_id();
            i += 1;
            a[i] = 1;
            grid_sync();
            a[i] += 1;
        }
    });
    let e = plan.expect_err("`i` is state: it is assigned");
    assert!(e.contains("`i`") && e.contains("lives across the grid_sync() at line"), "{e}");
    assert!(e.contains("cannot recompute it: it is assigned after its definition"), "{e}");
}

/// The segment's statements: the names of the variables it binds, in order.
fn bound_names(k: &crate::ir::Kernel, segment: &crate::split::Segment) -> Vec<String> {
    use crate::ir::StmtKind;
    segment
        .body
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Let { var, .. } => Some(k.var(*var).name.clone()),
            StmtKind::LetArray { array, .. } => Some(k.array(*array).name.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn split_recomputes_hoisted_thread_indices_in_each_segment() {
    let (k, facts, plan) = split_of(quote! {
        fn k(input: &[u32], per_warp: &mut [u32], out: &mut [u32]) {
            let lane = lane_id();
            let warp = thread_idx() / 32;
            let b = block_idx();
            let warps = (block_dim() + 31) / 32;
            let slot = b * warps + warp;
            for i in grid_stride(0..input.len()) { per_warp.atomic_add(slot, input[i]); }
            grid_sync();
            if lane == 0 { out[slot] = per_warp[slot] + warp; }
        }
    });
    let plan = plan.expect("lane, warp, b and slot are recomputed");
    assert_eq!(plan.segments.len(), 2);
    assert_eq!(bound_names(&k, &plan.segments[1]), ["lane", "warp", "b", "slot"]);
    let values: Vec<&str> = plan.segments[1].host_values.iter().map(|v| k.var(*v).name.as_str()).collect();
    assert_eq!(values, ["warps"], "a uniform value still comes from the host");
    let src = crate::emit::cuda::split_source(&k, &facts, &plan, false);
    let second = &src[src.find("k_segment_1_(").expect("segment 1")..];
    assert!(second.contains("const u32 lane_ = (threadIdx.x & 31u);"), "{second}");
    assert!(second.contains("const u32 slot_ = b_ * warps_ + warp_;"), "{second}");
}

#[test]
fn split_recomputes_a_value_of_a_host_loop_iteration_with_its_loop_variable() {
    let (k, _, plan) = split_of(quote! {
        fn k(a: &mut [u32], b: &mut [u32], rounds: u32) {
            for r in 0..rounds {
                let j = global_id() + r;
                if j < a.len() as u32 { a[j] = r; }
                grid_sync();
                if j < b.len() as u32 { b[j] += a[j]; }
                grid_sync();
            }
        }
    });
    let plan = plan.expect("`j` depends on the loop variable of the same iteration");
    assert_eq!(plan.segments.len(), 2);
    assert_eq!(bound_names(&k, &plan.segments[1]), ["j"]);
    let values: Vec<&str> = plan.segments[1].host_values.iter().map(|v| k.var(*v).name.as_str()).collect();
    assert_eq!(values, ["r"]);
}

#[test]
fn split_refuses_a_value_whose_host_input_changes_between_launches() {
    let (_, _, plan) = split_of(quote! {
        fn k(a: &mut [u32], n: u32) {
            let mut s = 0u32;
            while s < n {
                let j = global_id() + s;
                a[j] = 1;
                grid_sync();
                a[j] += 1;
                s += 1;
                grid_sync();
            }
        }
    });
    let e = plan.expect_err("recomputing `j` would see a later `s`");
    assert!(e.contains("`j`") && e.contains("depends on `s`") && e.contains("which is assigned"), "{e}");
}

#[test]
fn split_refuses_values_read_from_memory_or_exchanged_between_threads() {
    for (name, body) in [
        ("x", quote! { let x = a[global_id()]; }),
        ("x", quote! { let x = a.atomic_add(0, 1); }),
        ("x", quote! { let x = shfl_xor(global_id(), 1); }),
        ("y", quote! { let x = a[global_id()]; let y = x + lane_id(); }),
    ] {
        let var = quote::format_ident!("{name}");
        let (_, _, plan) = split_of(quote! {
            fn k(a: &mut [u32], out: &mut [u32]) {
                #body
                grid_sync();
                out[global_id()] = #var;
            }
        });
        let e = plan.expect_err("state");
        assert!(e.contains(&format!("`{name}`")) && e.contains("cannot recompute it"), "{e}");
    }
}

#[test]
fn split_declares_a_constant_table_again_and_refuses_an_assigned_one() {
    let (k, facts, plan) = split_of(quote! {
        fn k(a: &mut [u32]) {
            let table = [3u32, 1, 2, 0];
            a[global_id()] = table[lane_id() % 4];
            grid_sync();
            a[global_id()] += table[(lane_id() + 1) % 4];
        }
    });
    let plan = plan.expect("the table is a value");
    assert_eq!(bound_names(&k, &plan.segments[1]), ["table"]);
    crate::emit::cuda::split_source(&k, &facts, &plan, true);
    let (_, _, plan) = split_of(quote! {
        fn k(a: &mut [u32]) {
            let mut v = [0u32; 4];
            v[0] = a[global_id()];
            a[global_id()] = v[0];
            grid_sync();
            v[1] = 2;
            a[global_id()] = v[1];
        }
    });
    let e = plan.expect_err("an assigned thread-local array is state");
    assert!(e.contains("array `v`") && e.contains("cannot declare it again"), "{e}");
}

#[test]
fn split_launches_nothing_for_values_it_recomputes() {
    let (_, _, plan) = split_of(quote! {
        fn k(a: &mut [u32], rounds: u32) {
            let lane = lane_id();
            let i = global_id();
            for r in 0..rounds {
                if i < a.len() as u32 { a[i] += lane + r; }
                grid_sync();
            }
        }
    });
    let plan = plan.expect("splittable");
    assert_eq!(plan.segments.len(), 1, "the lets before the loop need no launch of their own");
    assert_eq!(launches(&plan.host), 1);
    // A read of a table could be out of bounds, which a launch must report.
    let (_, _, plan) = split_of(quote! {
        fn k(a: &mut [u32], rounds: u32) {
            let table = [1u32, 2];
            let t = table[lane_id()];
            for r in 0..rounds {
                a[global_id()] += r;
                grid_sync();
            }
        }
    });
    assert_eq!(plan.expect("splittable").segments.len(), 2);
}

#[test]
fn split_of_a_kernel_without_per_thread_work_launches_one_empty_segment() {
    for body in [quote! {}, quote! { grid_sync(); }, quote! { let x = n + 1; grid_sync(); }] {
        let (k, facts, plan) = split_of(quote! { fn k(a: &mut [u32], n: u32) { #body } });
        let plan = plan.expect("splittable");
        assert_eq!(plan.segments.len(), 1);
        assert!(plan.segments[0].body.is_empty());
        assert_eq!(launches(&plan.host), 1);
        let src = crate::emit::cuda::split_source(&k, &facts, &plan, false);
        assert!(src.contains("Segment 0 of Rust `fn k` (no statements)"), "{src}");
    }
}

#[test]
fn split_refuses_shared_memory_across_a_barrier() {
    let (_, _, plan) = split_of(quote! {
        fn k(a: &mut [u32]) {
            let mut tile = shared_array::<u32, 32>();
            tile[lane_id()] = 1;
            grid_sync();
            a[global_id()] = tile[lane_id()];
        }
    });
    let e = plan.expect_err("shared memory does not survive a launch");
    assert!(e.contains("shared array `tile`"), "{e}");
}

#[test]
fn split_refuses_host_values_assigned_by_threads() {
    let (_, _, plan) = split_of(quote! {
        fn k(a: &mut [u32]) {
            let mut x = 1u32;
            if a.len() > 5 { x = 2; a[0] = 1; }
            grid_sync();
            a[1] = x;
        }
    });
    let e = plan.expect_err("x is host state assigned on the device");
    assert!(e.contains("`x`"), "{e}");
}

#[test]
fn split_keeps_a_host_value_assigned_before_use_in_order() {
    let (_, _, plan) = split_of(quote! {
        fn k(a: &mut [u32], b: &mut [u32]) {
            let mut x = 1u32;
            for i in grid_stride(0..a.len()) { a[i] = x; }
            x = 2;
            for i in grid_stride(0..b.len()) { b[i] = x; }
            grid_sync();
        }
    });
    let plan = plan.expect("splittable");
    assert_eq!(plan.segments.len(), 2, "the assignment must fall between two launches");
}

#[test]
fn split_keeps_a_uniform_local_of_per_thread_loops_on_the_device() {
    let (_, _, plan) = split_of(quote! {
        fn k(a: &mut [u32], total: &mut [u32]) {
            let mut tile = shared_array::<u32, 256>();
            let t = thread_idx();
            tile[t] = a[global_id()];
            sync_block();
            let mut width = block_dim() / 2;
            while width > 0 {
                if t < width { tile[t] += tile[t + width]; }
                sync_block();
                width /= 2;
            }
            if t == 0 { total.atomic_add(0, tile[0]); }
            grid_sync();
            a[global_id()] = total[0];
        }
    });
    let plan = plan.expect("`width` stays in the first segment");
    assert_eq!(plan.segments.len(), 2);
}

#[test]
fn split_accepts_shared_memory_each_segment_fills_before_reading() {
    let (_, _, plan) = split_of(quote! {
        fn k(a: &mut [u32]) {
            let mut tile = shared_array::<u32, 32>();
            tile[lane_id()] = a[global_id()];
            sync_block();
            a[global_id()] = tile[31 - lane_id()];
            grid_sync();
            tile[lane_id()] = a[global_id()] + 1;
            sync_block();
            a[global_id()] = tile[lane_id()];
        }
    });
    assert_eq!(plan.expect("each segment writes the tile first").segments.len(), 2);
}

#[test]
fn split_refuses_a_thread_local_array_used_after_the_barrier_it_was_declared_before() {
    let (_, _, plan) = split_of(quote! {
        fn k(out: &mut [u32]) {
            let mut a = [0u32; 3];
            grid_sync();
            a[0] = 1;
            out[0] = a[0];
        }
    });
    let reason = plan.expect_err("the array is declared in the first segment only");
    assert!(reason.contains("array `a`") && reason.contains("both sides of the grid_sync()"), "{reason}");
}

#[test]
fn a_loop_over_phases_stays_a_loop() {
    let c = cuda(quote! {
        fn k(out: &mut [u32]) {
            for pass in 0..4u32 {
                for m in 0..4u32 { out[m] += pass; }
                grid_sync();
            }
        }
    });
    assert!(c.contains("#pragma unroll 1\n    for (u32 pass_ = 0u; pass_ < 4u; ++pass_)"), "{c}");
    assert!(c.contains("#pragma unroll\n        for (u32 m_ = 0u; m_ < 4u; ++m_)"), "the inner loop is unrolled: {c}");
}

#[test]
fn loops_of_every_form_over_phases_stay_loops() {
    let c = cuda(quote! {
        fn k(out: &mut [u32], n: u32) {
            for a in 0..=3u32 { out[a] += 1; grid_sync(); }
            for b in (0..4u32).rev() { out[b] += 1; grid_sync(); }
            for c in (0..8u32).step_by(2) { out[c] += 1; grid_sync(); }
            let mut d = 0u32;
            while d < n { out[d] += 1; d += 1; grid_sync(); }
            loop { out[0] += 1; grid_sync(); if out[0] > n { break; } }
            for e in (0..4u32).rev() { out[e] += 1; }
        }
    });
    for header in [
        "for (i64 gsync_a_wide",
        "for (u32 gsync_b_next",
        "for (u32 c_ = 0u, gsync_c_end",
        "while (d_ < n_)",
        "while (true)",
    ] {
        let at = c.find(header).unwrap_or_else(|| panic!("`{header}` in {c}"));
        assert!(c[..at].trim_end().ends_with("#pragma unroll 1"), "`{header}` stays a loop: {c}");
    }
    assert_eq!(c.matches("#pragma unroll 1").count(), 5, "a loop within a phase is left to the compiler: {c}");
}

#[test]
fn short_constant_ranges_are_unrolled_so_local_arrays_stay_in_registers() {
    let c = cuda(quote! {
        fn k(out: &mut [u32], n: u32) {
            const LANES: u32 = 8;
            let mut v = [0u32; 8];
            for m in 0..LANES { v[m] = m; }
            for m in 0..n { out[m] = v[m % 8]; }
            for m in 0..1000u32 { out[m] = 1; }
        }
    });
    assert!(c.contains("#pragma unroll\n    for (u32 m_ = 0u; m_ < 8u; ++m_)"), "{c}");
    assert_eq!(c.matches("#pragma unroll").count(), 1, "only the constant range of 8: {c}");
}

#[test]
fn every_unbounded_loop_iteration_is_marked_as_progress() {
    // C++ may delete a loop without side effects; Rust's `loop {}` runs forever.
    let src = cuda(quote! {
        fn k(out: &mut [u32], n: u32) {
            let mut x = n;
            while x < 100 {
                x = x * 2;
            }
            loop {}
        }
    });
    // No grid_sync() follows these loops: the deadline's check, which marks progress, ends them.
    let check = "_polls, gsync_status, gsync_barrier_state, 0u,";
    assert!(
        src.contains(&format!("while (x_ < 100u) {{\n        if (gsync::deadline_poll(++gsync_loop0{check}")),
        "{src}"
    );
    assert!(src.contains(&format!("while (true) {{\n        if (gsync::deadline_poll(++gsync_loop1{check}")), "{src}");
    let src = cuda(quote! {
        fn k(out: &mut [u32], n: u32) {
            let mut x = n;
            while x < 100 {
                x = x * 2;
            }
            grid_sync();
            out[0] = x;
        }
    });
    assert!(src.contains("while (x_ < 100u) {\n        gsync_loop_progress();"), "{src}");
}

#[test]
fn half_precision_becomes_the_half_prelude_s_operators_and_helpers() {
    let src = cuda(quote! {
        fn k(a: &mut [f16], b: &[bf16], x: f32) {
            let h = a[0] + f16::from_f32(x) * f16::ONE;
            a[1] = -h.max(f16::NAN).sqrt();
            let w = b[0].to_f32() + b[1].to_f64() as f32;
            a[2] = f16::from_f32(w);
        }
    });
    assert!(src.starts_with("// gsync: uses f16/bf16 (core/half.cuh)\n"), "{src}");
    assert!(src.contains("const f16 h_ = gsync::load(a_, gsync_a_len, 0ull, gsync_status, 0u, 1u) + gsync::f16_from_f32(x_) * gsync::f16_from_bits(0x3c00);"), "{src}");
    assert!(src.contains("= -gsync::half_sqrt(gsync::max(h_, gsync::f16_from_bits(0x7e00)));"), "{src}");
    assert!(src.contains("gsync::half_to_f32(gsync::load(b_"), "{src}");
    assert!(src.contains("(f32)gsync::half_to_f64(gsync::load(b_"), "{src}");
    assert!(!cuda(quote! { fn k(a: &mut [f32]) { a[0] = 1.0; } }).contains("f16"));
}

#[test]
fn half_precision_has_no_literals_and_no_as_casts() {
    let errs = errors(quote! {
        fn k(a: &mut [f16], n: u32) {
            a[0] = 1.0;
            a[1] = n as f16;
            let _ = a[2] as f32;
            a[3] = f16::from_f64(0.5);
        }
    });
    assert!(errs.contains("a float literal cannot be `f16`"), "{errs}");
    assert!(errs.contains("`as` does not convert to `f16`"), "{errs}");
    assert!(errs.contains("`as` does not convert from `f16`"), "{errs}");
    assert!(errs.contains("`f16::from_f64` is not available in kernels"), "{errs}");
}
