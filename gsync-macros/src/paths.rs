//! The one place generated code's path to the runtime is spelled.
//!
//! Everything the expansion of `#[grid_phases]` and `#[gsync::kernels]` names of gsync, it
//! names through the hidden module `::gsync::__private`, which the runtime fills with
//! re-exports: the user-facing types (`Gpu`, `Launch`, `DeviceBuffer`, …) and the plumbing the
//! public root leaves out (`KernelArgs`, `EmuSlice`, `ThreadCtx`, the kernel description's
//! parts). An expansion that names nothing else keeps working whatever the user's crate
//! imports or shadows, and the runtime can move its items without breaking generated code.
//!
//! The path is absolute (`::gsync`), so a user's module named `gsync` cannot capture it; the
//! crate itself reaches it through `extern crate self as gsync`.

use proc_macro2::TokenStream;
use quote::quote;

/// The path of the runtime's hidden module for generated code, `::gsync::__private`; an
/// item of it is `#private::Gpu`.
pub fn private() -> TokenStream {
    quote!(::gsync::__private)
}
