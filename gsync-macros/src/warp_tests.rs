//! Unit tests of warp-uniform control, warp votes, `match`, float atomics and `assert!`.

use crate::tests::compile;
use quote::quote;

fn cuda(func: proc_macro2::TokenStream) -> String {
    compile(func).unwrap_or_else(|e| panic!("unexpected errors: {e:#?}"))
}

fn errors(func: proc_macro2::TokenStream) -> String {
    match compile(func) {
        Ok(s) => panic!("expected errors, got CUDA:\n{s}"),
        Err(e) => e.join("\n"),
    }
}

#[test]
fn shuffles_under_conditions_on_the_warp_index_compile() {
    let src = cuda(quote! {
        fn k(a: &mut [u32]) {
            let t = thread_idx();
            let warp = t / 32;
            let mut v = a[t as usize];
            if warp == 0 {
                v += shfl_xor(v, 1);
            }
            if thread_idx() >> 5 == 1 && (t as usize & !31usize) < 64 {
                v += shfl_down(v, 2);
            }
            if warp_id() % 2 == 0 {
                v += shfl(v, 0);
            }
            for _ in 0..warp_id() {
                v += shfl_up(v, 1);
            }
            a[t as usize] = v;
        }
    });
    assert!(src.contains("const u32 warp_ = t_ / 32u;"), "{src}");
    assert!(src.contains("if ((threadIdx.x >> 5) % 2u == 0u)"), "{src}");
}

#[test]
fn a_shuffle_under_a_lane_dependent_condition_names_the_thread() {
    let e = errors(quote! {
        fn k(a: &mut [u32]) {
            let t = thread_idx();
            if t / 16 == 0 { a[0] = shfl_xor(a[1], 1); }
        }
    });
    assert!(e.contains("a warp shuffle in control flow that depends on thread identity"), "{e}");
}

#[test]
fn only_divisions_by_multiples_of_32_give_the_warp_index() {
    for bad in [quote!(t / 48), quote!((t + 1) / 32), quote!(t >> 4), quote!(t & 0xffff_fff0), quote!(global_id() / 32)]
    {
        let e = errors(quote! {
            fn k(a: &mut [u32]) {
                let t = thread_idx();
                if #bad == 0 { a[0] = ballot(a[1] > 0); }
            }
        });
        assert!(e.contains("a warp vote in control flow that depends on thread identity"), "{bad}: {e}");
    }
}

#[test]
fn a_mutable_copy_of_the_thread_index_is_not_the_thread_index() {
    let e = errors(quote! {
        fn k(a: &mut [u32]) {
            let mut t = thread_idx();
            t += a[0];
            if t / 32 == 0 { a[0] = shfl(a[1], 0); }
        }
    });
    assert!(e.contains("depends on thread identity"), "{e}");
}

#[test]
fn votes_are_warp_uniform_and_sync_block_under_warp_control_is_refused() {
    let src = cuda(quote! {
        fn k(a: &mut [u32]) {
            let t = thread_idx() as usize;
            let hit = a[t] > 3;
            let lanes = ballot(hit);
            if any(hit) && all(a[t] < 100) {
                a[t] = lanes.count_ones() + shfl(a[t], lanes.trailing_zeros());
            }
            let peers = match_any(a[t]);
            a[t] = peers;
        }
    });
    assert!(src.contains("const u32 lanes_ = gsync::ballot(hit_);"), "{src}");
    assert!(src.contains("gsync::any(hit_) && gsync::all("), "{src}");
    assert!(src.contains("gsync::match_any("), "{src}");
    let e = errors(quote! {
        fn k(a: &mut [u32]) {
            if warp_id() == 0 { sync_block(); }
            if ballot(a[0] > 0) != 0 { a[1] = 1; sync_block(); }
        }
    });
    assert!(e.contains("`sync_block()` in control flow that depends on warp identity"), "{e}");
    assert_eq!(e.matches("`sync_block()` in control flow that depends on warp identity").count(), 2, "{e}");
    let e = errors(quote! {
        fn k(a: &mut [u32]) {
            if match_any(a[0]) == 1 { a[1] = ballot(true); }
        }
    });
    assert!(e.contains("a warp vote in control flow that depends on thread identity"), "{e}");
}

#[test]
fn a_vote_checks_its_argument() {
    let e = errors(quote! {
        fn k(a: &mut [u32]) { a[0] = ballot(a[1]); }
    });
    assert!(e.contains("the predicate of `ballot` must be `bool`, found `u32`"), "{e}");
    let e = errors(quote! {
        fn k(a: &mut [u32]) { a[0] = match_any(a[1], 2); }
    });
    assert!(e.contains("`match_any(value)` takes 1 argument"), "{e}");
}

#[test]
fn match_becomes_an_if_chain_or_a_select() {
    let src = cuda(quote! {
        fn k(a: &mut [u32], flag: bool) {
            let i = thread_idx() as usize;
            let x = a[i];
            let y = match x { 0 => 10, 1 | 2 => 20, 3..=5 => 30, _ => 40 };
            match a[i + 1] {
                0 => a[i] = y,
                7.. => { a[i] = 1; a[i + 1] = 2; }
                _ => {}
            }
            let z = match flag { true => 1u32, false => 2 };
            a[i] = z;
        }
    });
    assert!(
        src.contains(
            "const u32 y_ = (x_ == 0u) ? 10u : (x_ == 1u || x_ == 2u) ? 20u : (x_ >= 3u && x_ <= 5u) ? 30u : 40u;"
        ),
        "{src}"
    );
    assert!(src.contains("const u32 scrutinee_ = gsync::load(a_"), "{src}");
    assert!(src.contains("if (scrutinee_ == 0u) {"), "{src}");
    assert!(src.contains("} else if (scrutinee_ >= 7u) {"), "{src}");
    assert!(src.contains("const u32 z_ = flag_ ? 1u : 2u;"), "{src}");
}

#[test]
fn a_match_without_every_value_is_refused_like_rustc() {
    let e = errors(quote! {
        fn k(a: &mut [u32]) { a[0] = match a[1] { 0 => 1, 1..=9 => 2 }; }
    });
    assert!(e.contains("non-exhaustive patterns: the arms must cover every `u32`; add a `_ => …` arm"), "{e}");
    let e = errors(quote! {
        fn k(a: &mut [u32], f: bool) { a[0] = match f { true => 1 }; }
    });
    assert!(e.contains("must cover `true` and `false`"), "{e}");
    // Ranges that cover the type are exhaustive.
    cuda(quote! {
        fn k(a: &mut [u8]) { a[0] = match a[1] { 0..=127 => 1, 128..=255 => 2 }; }
    });
    let e = errors(quote! {
        fn k(a: &mut [u32]) { a[0] = match a[1] { x if x > 2 => 1, _ => 2 }; }
    });
    assert!(e.contains("match guards (`if …`) are not supported in kernels"), "{e}");
    let e = errors(quote! {
        fn k(a: &mut [u32]) { a[0] = match a[1] { x => x }; }
    });
    assert!(e.contains("binding patterns are not supported in kernel `match`"), "{e}");
}

#[test]
fn a_match_on_a_thread_value_guards_a_shuffle_like_an_if() {
    let e = errors(quote! {
        fn k(a: &mut [u32]) {
            match thread_idx() { 0 => a[0] = shfl(a[1], 0), _ => {} }
        }
    });
    assert!(e.contains("a warp shuffle in control flow that depends on thread identity"), "{e}");
    cuda(quote! {
        fn k(a: &mut [u32]) {
            match warp_id() { 0 => a[0] = shfl(a[1], 0), _ => {} }
        }
    });
}

#[test]
fn float_atomic_min_and_max_go_through_the_prelude() {
    let src = cuda(quote! {
        fn k(a: &mut [f32], b: &mut [f64]) {
            let _ = a.atomic_max(0, 1.5);
            b.atomic_min(1, -2.0);
        }
    });
    assert!(src.contains("gsync::atomic_max(&a_[0ull], 1.5f)"), "{src}");
    assert!(src.contains("gsync::atomic_min(&b_[1ull], -2.0)"), "{src}");
}

#[test]
fn an_assert_ends_its_thread_where_no_grid_sync_follows() {
    let src = cuda(quote! {
        fn k(a: &mut [u32]) {
            let i = thread_idx() as usize;
            assert!(a[i] > 0, "no zeros");
            assert_eq!(a[i] % 2, 1);
            a[i] = 0;
        }
    });
    assert!(src.contains("// assert! #0, line"), "{src}");
    assert!(src.contains("gsync::fail_assert(gsync_status, 0u,"), "{src}");
    assert!(
        src.contains("const u32 gsync_assert1_left = gsync::load(a_, gsync_a_len, i_, gsync_status, 0u, 1u) % 2u;"),
        "{src}"
    );
    assert!(src.contains("if (!(gsync_assert1_left == gsync_assert1_right)) {"), "{src}");
    assert!(src.contains("GSYNC_PROFILE_EXIT();\n            return;"), "{src}");
    assert!(!src.contains("gsync::assert_failed"), "no grid_sync(), no check after one: {src}");
}

#[test]
fn an_assert_before_a_grid_sync_stops_the_grid_there() {
    let src = cuda(quote! {
        fn k(a: &mut [u32], rounds: u32) {
            for r in 0..rounds {
                assert!(a[0] != r);
                grid_sync();
            }
            debug_assert_ne!(a[1], 7, "seven");
        }
    });
    assert!(src.contains("a failure stops the grid at the next grid_sync()"), "{src}");
    assert!(src.contains("gsync_phase += 1u;"), "{src}");
    assert!(src.contains("if (gsync::stopped_before(gsync_status, gsync_phase) || gsync::stop_at_barrier("), "{src}");
    assert!(src.contains("gsync::fail_assert(gsync_status, gsync_phase, 0u,"), "{src}");
    assert!(src.contains("// debug_assert_ne! #1"), "{src}");
    let ends = src.split("// debug_assert_ne! #1").nth(1).unwrap_or_default();
    assert!(ends.contains("return;"), "no grid_sync() after the last assertion: {src}");
}

#[test]
fn assertion_messages_are_plain_strings() {
    let e = errors(quote! {
        fn k(a: &mut [u32]) { assert!(a[0] > 0, "value {}", a[0]); }
    });
    assert!(e.contains("formatting arguments are not supported on the GPU"), "{e}");
    let e = errors(quote! {
        fn k(a: &mut [u32]) { assert!(a[0] > 0, "value {x}"); }
    });
    assert!(e.contains("write it without `{}`"), "{e}");
    let e = errors(quote! {
        fn k(a: &mut [u32]) { assert!(a.atomic_add(0, 1) > 0); }
    });
    assert!(e.contains("`assert!` may not run an atomic"), "{e}");
    let e = errors(quote! {
        fn k(a: &mut [u32]) { assert!(a[0]); }
    });
    assert!(e.contains("the condition of `assert!` must be `bool`"), "{e}");
}
