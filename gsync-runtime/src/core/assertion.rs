//! A kernel's `assert!`s, as `#[grid_phases]` describes them; `assertion_error` makes the
//! error of a failed one.

/// One `assert!` of a kernel (or `assert_eq!`, `assert_ne!`, or a `debug_` form of these):
/// what the error of a failed one says. `KernelSpec::assertions` lists them in source order,
/// and the status word names a failed one by its place there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelAssertion {
    /// What Rust's panic would say: the user's message, or `assertion failed: <condition>`,
    /// or ``assertion `left == right` failed``.
    pub message: &'static str,
    /// For `assert_eq!` and `assert_ne!`: the operands' type (`"u32"`, `"f64"`, …), whose
    /// values the status word carries as bits.
    pub operands: Option<&'static str>,
}
