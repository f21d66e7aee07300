//! CUDA for point-to-point communication: `wait_until(|| cond)`, `with_lock`, and the
//! compiler fence that makes acquire and release order the slices' plain accesses.

use super::CudaEmitter;
use crate::emit::cuda_names;
use crate::ir::*;
use crate::ir_walk::{each_expr, each_stmt, stmt_exprs};
use crate::names;

impl CudaEmitter<'_> {
    /// `wait_until(|| cond)`: polls `cond` until it holds, sleeping a little longer after
    /// each failed poll (32 ns doubling to 256 ns). The prelude's watchdog gives up
    /// after `Launch::watchdog`, records `Error::SpinTimeout` with the Rust line, and lets
    /// the thread run on, so that a wrong wait never hangs the GPU.
    /// A condition that calls device functions runs their bodies (`before`) before each test.
    pub(super) fn wait_until(&mut self, before: &Block, cond: &Expr, line: u32) {
        self.line(&format!("// wait_until, line {line}: spins until the condition holds"));
        self.open("");
        self.line("gsync_spin_t gsync_spin = gsync::spin_begin();");
        if before.is_empty() {
            let c = self.expr(cond).at(0);
            self.open(&format!("while (!({c}))"));
        } else {
            self.open("while (true)");
            self.block_body(before);
            let c = self.expr(cond).at(0);
            self.line(&format!("if ({c}) break;"));
        }
        let phase = self.phase_count();
        self.line(&format!(
            "if (gsync::spin_give_up(gsync_spin, gsync_barrier_state, gsync_status, {phase}, {line}u)) break;"
        ));
        self.line("gsync::spin_backoff(gsync_spin, 256u);");
        self.close();
        self.close();
    }

    /// `locks.with_lock(index, || { body })`: takes the lock word with an acquire
    /// compare-and-swap, runs the body and gives the word back with a release store, all in
    /// one iteration of the retry loop, so that lanes of one warp that contend for the same
    /// word never wait for each other inside it. A thread that gives up (the watchdog)
    /// skips the body.
    pub(super) fn locked(&mut self, array: ArrayId, index: &Expr, body: &Block, line: u32) {
        let name = cuda_names::array(self.k, array);
        let held = names::generated(&name, "lock");
        let idx = self.expr(index).text;
        let rust_name = &self.k.array(array).name;
        self.line(&format!("// {rust_name}.with_lock(…), line {line}: the body runs while this thread holds the lock"));
        self.open("");
        self.line(&format!("const usize {held} = {idx};"));
        let guarded = if self.checked {
            let guard = self.in_bounds(array, &held, line);
            self.open(&format!("if ({guard})"));
            true
        } else {
            false
        };
        let word = format!("&{name}[{held}]");
        self.line("gsync_spin_t gsync_spin = gsync::spin_begin();");
        self.open("while (true)");
        self.open(&format!("if (gsync::lock_acquire({word}))"));
        self.block_body(body);
        self.line(&format!("gsync::lock_release({word});"));
        self.line("break;");
        self.close();
        let phase = self.phase_count();
        self.line(&format!(
            "if (gsync::spin_give_up(gsync_spin, gsync_barrier_state, gsync_status, {phase}, {line}u)) break;"
        ));
        self.line("gsync::spin_backoff(gsync_spin, 1024u);");
        self.close();
        if guarded {
            self.close();
        }
        self.close();
    }

    /// At the top of a function that orders memory between threads (acquire loads, release
    /// stores, ordered atomics, `wait_until`, `with_lock`): hands the mutable slices to an
    /// empty `asm`. `__restrict__` lets the compiler assume that only this thread's own
    /// accesses through a slice touch its elements, so it could move a plain load of one
    /// above an acquire, or a plain store past a release. A pointer that escapes into an
    /// `asm` once is, for the whole function, memory that every `asm` with a `"memory"`
    /// clobber (each acquire and release is one) may read and write.
    pub(super) fn ordering_escape(&mut self, body: &Block) {
        if !orders_memory(body) {
            return;
        }
        let slices: Vec<String> = (0..self.k.arrays.len())
            .map(ArrayId)
            .filter(|a| self.k.array(*a).space == ArraySpace::Global && self.k.array(*a).mutable)
            .map(|a| format!("\"l\"({})", cuda_names::array(self.k, a)))
            .collect();
        if slices.is_empty() {
            return;
        }
        self.line("// acquire and release order the plain accesses to these slices too");
        self.line(&format!("asm volatile(\"\" : : {} : \"memory\");", slices.join(", ")));
    }
}

/// Whether a body orders memory between threads.
fn orders_memory(body: &Block) -> bool {
    let mut found = false;
    each_stmt(body, &mut |s| {
        found |= matches!(s.kind, StmtKind::WaitUntil { .. } | StmtKind::Locked { .. });
        for e in stmt_exprs(s) {
            each_expr(e, &mut |x| {
                found |= matches!(x.kind, ExprKind::Atomic { order, .. } if order != MemoryOrder::Relaxed);
            });
        }
    });
    found
}
