//! CUDA for `a.put_range(pe, at, &source[lo..hi]);` and `put_range_signal`: the block's
//! threads share the copy (thread `t` takes elements `t`, `t + block size`, …), each element a
//! relaxed store at system scope through PE `pe`'s mapping, as `put` writes one; a block
//! barrier ends it. `put_range_signal`'s signal follows, by the block's first thread: its
//! release store is cumulative over what the barrier ordered before it, every element of the
//! copy.

use super::CudaEmitter;
use crate::emit::cuda_names;
use crate::ir::RangePut;
use crate::names;

impl CudaEmitter<'_> {
    /// `a.put_range(…);` or `a.put_range_signal(…);`, its operands already bound.
    pub(super) fn put_range(&mut self, put: &RangePut) {
        let (target, source) = (cuda_names::array(self.k, put.target), cuda_names::array(self.k, put.source));
        self.line(&format!(
            "// {}, line {}: the block's threads share the copy, then meet at a block barrier",
            put.rust(self.k),
            put.line
        ));
        let [pe, at, lo, hi] = [&put.pe, &put.at, &put.lo, &put.hi].map(|e| self.expr(e).text);
        let count = format!("(u64){hi} - (u64){lo}");
        let line = put.line;
        let mut guards = vec![format!("gsync::on_team({pe}, gsync_status, {}u, {line}u)", put.target.0)];
        if self.checked {
            let (source_len, target_len) = (self.len_of(put.source), self.len_of(put.target));
            guards.push(format!(
                "gsync::range_in_bounds((u64){lo}, (u64){hi}, {source_len}, gsync_status, {}u, {line}u)",
                put.source.0
            ));
            guards.push(format!(
                "gsync::span_in_bounds((u64){at}, {count}, {target_len}, gsync_status, {}u, {line}u)",
                put.target.0
            ));
        }
        self.open(&format!("if ({})", guards.join(" && ")));
        let i = names::generated(&target, "copy");
        self.open(&format!("for (u64 {i} = gsync_linear_thread(); {i} < {count}; {i} += gsync_block_threads())"));
        self.line(&format!(
            "gsync::store_relaxed_sys(gsync::on_pe(&{target}[{at} + {i}], {pe}), {source}[{lo} + {i}]);"
        ));
        self.close();
        self.close();
        self.around_barrier("gsync_sync_block();");
        if let Some(signal) = &put.signal {
            self.line("// the signal, by one thread, after every element of the block's copy");
            self.open("if (gsync_linear_thread() == 0u)");
            self.effect(signal);
            self.close();
        }
    }
}
