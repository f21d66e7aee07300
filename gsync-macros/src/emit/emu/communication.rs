//! The emulator's point-to-point communication: `wait_until(|| cond)` and `with_lock`. A
//! thread whose wait is not over yields (`ThreadCtx::spin`), so that the other threads of
//! its block and the other blocks of the grid run: a wait that a running thread satisfies
//! ends, one that none does ends the launch at the watchdog with `Error::SpinTimeout`.

use super::{ctx_ident, Emu};
use crate::emit::rust_stmt;
use crate::ir::{ArrayId, Block, Expr};
use proc_macro2::TokenStream;
use quote::quote;

impl Emu<'_> {
    /// `wait_until(|| cond)`.
    pub(super) fn wait_until(&self, before: &Block, cond: &Expr, line: u32) -> TokenStream {
        let (ctx, cond) = (ctx_ident(), self.expr(cond));
        let before = rust_stmt::block(self, before);
        quote! {
            loop {
                #before
                if #cond { break; }
                if #ctx.stopped_spinning(#line) { return; }
                #ctx.spin(#line).await;
            }
        }
    }

    /// `locks.with_lock(index, || { body })`: an acquire compare-and-swap of the lock word
    /// from 0 to 1, the body, a release store of 0; the thread yields after taking the lock
    /// and after giving it back, and spins while another thread holds it.
    pub(super) fn locked(&self, array: ArrayId, index: &Expr, body: &Block, line: u32) -> TokenStream {
        let (slice, ctx, id) = (self.slice(array), ctx_ident(), array.0 as u32);
        let index = self.expr(index);
        let body = rust_stmt::block(self, body);
        quote! {{
            let index = (#index) as u64;
            if #slice.in_bounds(index, #ctx, #id, #line) {
                loop {
                    if #ctx.stopped_spinning(#line) { return; }
                    if #slice.try_lock(index) {
                        #ctx.yield_now().await;
                        { #body }
                        #slice.unlock(index);
                        #ctx.yield_now().await;
                        break;
                    }
                    #ctx.spin(#line).await;
                }
            }
        }}
    }
}
