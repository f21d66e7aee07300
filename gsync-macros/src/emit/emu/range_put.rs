//! The emulator's `a.put_range(pe, at, &source[lo..hi]);` and `put_range_signal`: each thread
//! copies its share of the range (`EmuSymmetric::put_range`, which checks the PE and both
//! ranges), the block meets at its barrier, and `put_range_signal`'s signal follows, by the
//! block's first thread.

use super::{ctx_ident, Emu};
use crate::ir::RangePut;
use proc_macro2::TokenStream;
use quote::quote;

impl Emu<'_> {
    /// `a.put_range(…);` or `a.put_range_signal(…);`, its operands already bound.
    pub(super) fn put_range(&self, put: &RangePut) -> TokenStream {
        let private = crate::paths::private();
        let ctx = ctx_ident();
        let (target, source) = (self.slice(put.target), self.slice(put.source));
        let [pe, at, lo, hi] = [&put.pe, &put.at, &put.lo, &put.hi].map(|e| self.expr(e));
        let (target_num, source_num, line) = (put.target.0 as u32, put.source.0 as u32, put.line);
        let signal = put.signal.as_ref().map(|signal| {
            let signal = self.expr(signal);
            quote!(if #ctx.thread_idx() == 0 { let _ = #signal; })
        });
        quote! {{
            let put = #private::EmuRangePut {
                pe: (#pe) as u64,
                at: (#at) as u64,
                lo: (#lo) as u64,
                hi: (#hi) as u64,
                target: #target_num,
                source: #source_num,
                line: #line,
            };
            #target.put_range(put, &#source, #ctx);
            #ctx.sync_block().await;
            #signal
        }}
    }
}
