//! The CUDA spelling of the kernel's names, by the scheme of [`crate::names`]:
//! the kernel's symbol, its segments' symbols, its variables and arrays.

use crate::ir::{ArrayId, CallId, Kernel, UniqueName, VarId};
use crate::names;

/// The C symbol of the fused kernel (`smooth` → `smooth_`).
pub fn kernel_symbol(k: &Kernel) -> String {
    names::user(&k.name)
}

/// The C symbol of segment `index` of the split kernel (`smooth_segment_0_`).
pub fn segment_symbol(k: &Kernel, index: usize) -> String {
    names::segment(&kernel_symbol(k), index)
}

/// The C name of a variable.
pub fn var(k: &Kernel, v: VarId) -> String {
    unique(&k.var(v).unique)
}

/// The C name of a slice or array.
pub fn array(k: &Kernel, a: ArrayId) -> String {
    unique(&k.array(a).unique)
}

/// The label after an inlined call that its `return`s jump to
/// (`gsync_return_block_scan_3`: the function and the call's number).
pub fn leave_label(k: &Kernel, call: CallId) -> String {
    format!("gsync_return_{}_{}", names::stem(&k.call(call).function), call.0)
}

/// A unique name's C spelling: `x_`, `x_2_`, ….
fn unique(name: &UniqueName) -> String {
    names::numbered(&name.base, name.ordinal)
}
