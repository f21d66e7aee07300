//! Compile-time behaviour of `#[grid_phases]`: every static check is a
//! spanned error (tests/ui/fail), and valid kernels expand and run their
//! host side (tests/ui/pass).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
