//! Unit tests of the fused 32-bit integer builtins (`max3`, `add_max`, the `_relu` forms):
//! their CUDA spellings and the misuses the lowering refuses.

use crate::tests::{cuda, errors};
use quote::quote;

#[test]
fn each_fused_builtin_becomes_its_dpx_intrinsic_for_i32() {
    let src = cuda(quote! {
        fn k(a: &[i32], out: &mut [i32]) {
            let x = a[0];
            let y = a[1];
            let z = a[2];
            out[0] = max3(x, y, z);
            out[1] = min3(x, y, z);
            out[2] = max_relu(x, y);
            out[3] = min_relu(x, y);
            out[4] = max3_relu(x, y, z);
            out[5] = min3_relu(x, y, z);
            out[6] = add_max(x, y, z);
            out[7] = add_min(x, y, z);
            out[8] = add_max_relu(x, y, z);
            out[9] = add_min_relu(x, y, z);
        }
    });
    for call in [
        "__vimax3_s32(x_, y_, z_)",
        "__vimin3_s32(x_, y_, z_)",
        "__vimax_s32_relu(x_, y_)",
        "__vimin_s32_relu(x_, y_)",
        "__vimax3_s32_relu(x_, y_, z_)",
        "__vimin3_s32_relu(x_, y_, z_)",
        "gsync::add_max(x_, y_, z_)",
        "gsync::add_min(x_, y_, z_)",
        "gsync::add_max_relu(x_, y_, z_)",
        "gsync::add_min_relu(x_, y_, z_)",
    ] {
        assert!(src.contains(call), "{call} missing: {src}");
    }
}

#[test]
fn u32_arguments_take_the_unsigned_intrinsics() {
    let src = cuda(quote! {
        fn k(a: &[u32], out: &mut [u32]) {
            out[0] = max3(a[0], a[1], 7);
            out[1] = min3(a[0], 0, a[2]);
            out[2] = add_max(a[0], a[1], a[2]);
            out[3] = add_min(a[0], a[1], a[2]);
        }
    });
    for name in ["__vimax3_u32(", "__vimin3_u32(", "__viaddmax_u32(", "__viaddmin_u32("] {
        assert!(src.contains(name), "{name} missing: {src}");
    }
    assert!(src.contains(", 7u)"), "the literal takes the other arguments' type: {src}");
}

#[test]
fn a_literal_argument_of_a_relu_form_is_an_i32() {
    let src = cuda(quote! {
        fn k(out: &mut [i32], b: i32) {
            let x = 5;
            out[0] = max_relu(x, -3);
            out[1] = add_max_relu(b, -1, x);
        }
    });
    assert!(src.contains("__vimax_s32_relu(x_, -3)"), "{src}");
}

#[test]
fn a_fused_builtin_with_a_wrong_argument_count_is_refused() {
    let e = errors(quote! { fn k(out: &mut [i32]) { out[0] = max3(out[1], out[2]); } });
    assert!(e.contains("`max3(a, b, c)` takes 3 arguments, found 2"), "{e}");
    let e = errors(quote! { fn k(out: &mut [i32]) { out[0] = max_relu(out[1], out[2], out[3]); } });
    assert!(e.contains("`max_relu(a, b)` takes 2 arguments, found 3"), "{e}");
}

#[test]
fn a_fused_builtin_refuses_floats_and_64_bit_integers() {
    let e = errors(quote! { fn k(a: &[f32], out: &mut [f32]) { out[0] = max3(a[0], a[1], a[2]); } });
    assert!(e.contains("`max3` takes `i32` or `u32` values, found `f32`"), "{e}");
    let e = errors(quote! { fn k(a: &[i64], out: &mut [i64]) { out[0] = add_max(a[0], a[1], a[2]); } });
    assert!(e.contains("`add_max` takes `i32` or `u32` values, found `i64`"), "{e}");
    let e = errors(quote! { fn k(out: &mut [i32], x: i32) { out[0] = add_min(x, 1.5, x); } });
    assert!(e.contains("`add_min` takes `i32` or `u32` values, found a float"), "{e}");
}

#[test]
fn a_relu_form_refuses_u32_and_names_the_builtin_that_means_the_same() {
    let e = errors(quote! { fn k(a: &[u32], out: &mut [u32]) { out[0] = max3_relu(a[0], a[1], a[2]); } });
    assert!(e.contains("`max3_relu` takes `i32` values, found `u32`"), "{e}");
    assert!(e.contains("so `max3` gives the same"), "{e}");
}

#[test]
fn mixed_argument_types_and_untyped_literals_are_refused() {
    let e = errors(quote! { fn k(a: &[i32], b: &[u32], out: &mut [i32]) { out[0] = min3(a[0], a[1], b[0]); } });
    assert!(e.contains("mismatched types"), "{e}");
    let e = errors(quote! { fn k(out: &mut [i32]) { let m = max3(1, 2, 3); } });
    assert!(e.contains("can't infer the type of `max3`'s arguments"), "{e}");
}

#[test]
fn a_fused_builtin_is_no_method() {
    let e = errors(quote! { fn k(out: &mut [i32]) { out[0] = out[1].max3(out[2], out[3]); } });
    assert!(e.contains("unknown method `max3`"), "{e}");
}
