//! Compile-time behaviour of `#[grid_phases]`: every static check is a
//! spanned error (`fail/`), and valid kernels expand and run their
//! host side (`pass/`).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("fail/*.rs");
    t.pass("pass/*.rs");
}
