//! Point-to-point communication between threads: acquire loads, release stores, the
//! memory ordering of atomics (`Ordering::AcqRel`), `wait_until(|| cond)` and
//! `locks.with_lock(i, || { … })`.

use super::expr::expr_has_effects;
use super::methods;
use super::{Block, Expr, ExprKind, Lowerer, Stmt, StmtKind};
use crate::ir::{Array, ArrayId, ArraySpace, AtomicOp, LoopId, MemoryOrder, Scalar};
use crate::ir_walk::{collective_in, each_expr, each_stmt, stmt_exprs};
use proc_macro2::Span;
use syn::spanned::Spanned;

/// The orderings, as a message lists them.
const ORDERINGS: &str = "`Ordering::Relaxed`, `Acquire`, `Release`, `AcqRel` or `SeqCst`";

impl Lowerer<'_> {
    /// `a.load_acquire(i)` or `a.load_relaxed(i)` (a value), `a.store_release(i, v)` or
    /// `a.store_relaxed(i, v)` (`statement`: only as a statement).
    pub(super) fn ordered_access(
        &mut self,
        array: ArrayId,
        name: &str,
        m: &syn::ExprMethodCall,
        statement: bool,
    ) -> Option<Expr> {
        let span = m.span();
        let info = self.arrays[array.0].clone();
        let store = name.starts_with("store_");
        let relaxed = name.ends_with("_relaxed");
        if store && !statement {
            self.diag.error(
                span,
                format!("`{name}` is a statement: it returns nothing; write `a.{name}(i, v);` on its own line"),
            );
            return None;
        }
        if info.space == ArraySpace::Local {
            self.diag.error(
                span,
                format!("`{name}` orders memory between threads: it works on slices and shared arrays, not on a thread's own array"),
            );
            return None;
        }
        if store && self.refuse_store(array, name, m.receiver.span()) {
            return None;
        }
        let want = if store { 2 } else { 1 };
        if m.args.len() != want {
            let usage = if store {
                format!("`{name}(index, value)` takes 2 arguments")
            } else {
                format!("`{name}(index)` takes 1 argument")
            };
            self.diag.error(span, usage);
            return None;
        }
        let mut args: Vec<Expr> = m.args.iter().map(|a| self.expr(a)).collect::<Option<_>>()?;
        let index = args.remove(0);
        self.index_type(&index);
        if expr_has_effects(&index) {
            self.diag.error(index.span, "bind this index with `let` first: it has an atomic in it");
            return None;
        }
        for a in &args {
            self.require(a.ty, info.elem, a.span, &format!("the value of `{name}`"));
        }
        if self.refuse_collective_operands(
            std::iter::once(&index).chain(&args),
            "an atomic's operands are evaluated only where its index is in bounds",
        ) {
            return None;
        }
        let op = if store { AtomicOp::Store } else { AtomicOp::Load };
        let order = match (relaxed, store) {
            (true, _) => MemoryOrder::Relaxed,
            (false, true) => MemoryOrder::Release,
            (false, false) => MemoryOrder::Acquire,
        };
        let ty = self.types.known(info.elem);
        Some(self.expr_of(
            ExprKind::Atomic { op, array, index: Box::new(index), args, line: Self::line(span), order },
            ty,
            span,
        ))
    }

    /// The methods of a `#[symmetric]` slice: `a.get(pe, i)` and `a.put(pe, i, v)`, element `i`
    /// of PE `pe`'s part read or written with a relaxed atomic access that the next
    /// `grid_sync()` orders; `a.signal(pe, i, v)`, a release store at system scope to it; and
    /// `a.load_signal(i)`, an acquire load at system scope of this PE's element. `put` and
    /// `signal` are statements (`statement`: the call is one).
    pub(super) fn remote_access(
        &mut self,
        array: ArrayId,
        name: &str,
        m: &syn::ExprMethodCall,
        statement: bool,
    ) -> Option<Expr> {
        let span = m.span();
        let info = self.arrays[array.0].clone();
        let (op, usage, order) = match name {
            "put" => (AtomicOp::Put, "put(pe, index, value)", MemoryOrder::Relaxed),
            "get" => (AtomicOp::Get, "get(pe, index)", MemoryOrder::Relaxed),
            "signal" => (AtomicOp::Signal, "signal(pe, index, value)", MemoryOrder::Release),
            _ => (AtomicOp::LoadSignal, "load_signal(index)", MemoryOrder::Acquire),
        };
        let writes = matches!(op, AtomicOp::Put | AtomicOp::Signal);
        if !info.symmetric {
            self.diag.error(
                m.method.span(),
                format!(
                    "`{name}` reaches the parts of a symmetric slice that every PE holds: {}",
                    make_symmetric(&info, writes)
                ),
            );
            return None;
        }
        if writes && !statement {
            self.diag.error(
                span,
                format!("`{name}` is a statement: it returns nothing; write `a.{usage};` on its own line"),
            );
            return None;
        }
        if writes && self.refuse_store(array, name, m.receiver.span()) {
            return None;
        }
        if !methods::atomic_supported(op, info.elem) {
            self.diag.error(
                span,
                format!("`{name}` works on `u32`, `i32`, `u64` and `i64` slices, not on `{}`", info.elem.name()),
            );
            return None;
        }
        let want = usage.matches(',').count() + 1;
        if m.args.len() != want {
            self.diag.error(span, format!("`{usage}` takes {want} argument(s)"));
            return None;
        }
        let mut args: Vec<Expr> = m.args.iter().map(|a| self.expr(a)).collect::<Option<_>>()?;
        let on_a_pe = op != AtomicOp::LoadSignal;
        let index = args.remove(usize::from(on_a_pe));
        if on_a_pe {
            self.require(args[0].ty, Scalar::U32, args[0].span, &format!("the PE of `{name}`"));
        }
        self.index_type(&index);
        if let (true, Some(value)) = (writes, args.last()) {
            self.require(value.ty, info.elem, value.span, &format!("the value of `{name}`"));
        }
        if let Some(at) = std::iter::once(&index).chain(&args).find(|e| expr_has_effects(e)).map(|e| e.span) {
            self.diag.error(at, "bind this value with `let` first: it has an atomic in it");
            return None;
        }
        if self.refuse_collective_operands(
            std::iter::once(&index).chain(&args),
            &format!("`{name}`'s operands are evaluated only where its PE and index are valid"),
        ) {
            return None;
        }
        let ty = self.types.known(info.elem);
        Some(self.expr_of(
            ExprKind::Atomic { op, array, index: Box::new(index), args, line: Self::line(span), order },
            ty,
            span,
        ))
    }

    /// Refuses a collective (a shuffle, a vote) among an atomic's `operands`, which are
    /// evaluated only where the access is valid (`evaluated` says where); true if it did.
    pub(super) fn refuse_collective_operands<'e>(
        &mut self,
        operands: impl IntoIterator<Item = &'e Expr>,
        evaluated: &str,
    ) -> bool {
        let Some((c, at)) = operands.into_iter().find_map(collective_in) else { return false };
        self.diag.error(
            at,
            format!(
                "bind this value with `let` first: {evaluated}, and every thread of the warp must take part in {}",
                c.name()
            ),
        );
        true
    }

    /// Refuses the store method `name` (`store_release`, `store_relaxed`, `store_chunk`) on
    /// `array` at `span` where it is not writable there; true if it did.
    pub(super) fn refuse_store(&mut self, array: ArrayId, name: &str, span: Span) -> bool {
        self.refuse_unwritable(array, name, span, |info| {
            format!(
                "cannot store to `{}`, which is not mutable: `{name}` needs `&mut [T]` or a `let mut` shared array",
                info.name
            )
        })
    }

    /// Refuses `name`'s write to `array` at `span` where it is not writable there: a device
    /// function's read-only parameter, or an immutable array, which `immutable` says what to do
    /// about; true if it did.
    pub(super) fn refuse_unwritable(
        &mut self,
        array: ArrayId,
        name: &str,
        span: Span,
        immutable: impl FnOnce(&Array) -> String,
    ) -> bool {
        if self.refuse_write_to_read_only(array, &format!("`{name}`"), span) {
            return true;
        }
        let info = &self.arrays[array.0];
        if info.mutable {
            return false;
        }
        let message = immutable(info);
        self.diag.error(span, message);
        true
    }

    /// The trailing ordering argument of an atomic: `Some(order)` if `e` is an
    /// `Ordering::X` path (an error if `X` is no ordering), `None` if it is anything else.
    pub(super) fn ordering_arg(&mut self, e: &syn::Expr) -> Option<Option<MemoryOrder>> {
        let syn::Expr::Path(p) = e else { return None };
        let segments: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        let [.., ty, variant] = segments.as_slice() else { return None };
        if ty != "Ordering" {
            return None;
        }
        let order = MemoryOrder::from_name(variant);
        if order.is_none() {
            self.diag.error(e.span(), format!("unknown memory ordering `{variant}`: an atomic takes {ORDERINGS}"));
        }
        Some(order)
    }

    /// `wait_until(|| cond);`: spins until `cond` holds.
    pub(super) fn wait_until(&mut self, c: &syn::ExprCall, out: &mut Block) {
        let span = c.span();
        let closure = match c.args.iter().collect::<Vec<_>>().as_slice() {
            [syn::Expr::Closure(closure)] if closure.inputs.is_empty() => closure,
            _ => {
                self.diag.error(
                    span,
                    "`wait_until` takes a condition as a closure without parameters: `wait_until(|| flags.load_acquire(i) != 0);`",
                );
                return;
            }
        };
        // The device functions the condition calls run before each test, inside the loop.
        let (cond, before) = self.collect_calls(|l| l.expr(&closure.body));
        let Some(cond) = cond else { return };
        self.require(cond.ty, Scalar::Bool, cond.span, "the condition of `wait_until`");
        let mut reads_ordered = false;
        let mut note = |x: &Expr| reads_ordered |= matches!(x.kind, ExprKind::Atomic { .. });
        each_expr(&cond, &mut note);
        each_stmt(&before, &mut |s| stmt_exprs(s).into_iter().for_each(|e| each_expr(e, &mut note)));
        if !reads_ordered {
            self.diag.error(
                cond.span,
                "this condition reads no memory that another thread can change: wait on a `load_acquire`, a `load_relaxed` or an atomic, here or in a device function it calls, e.g. `wait_until(|| flags.load_acquire(i) != 0)` (a plain load may be read once and never again)",
            );
            return;
        }
        if let Some((c, at)) = collective_in(&cond) {
            self.diag.error(
                at,
                format!("{} cannot be part of a spin condition: the lanes leave the wait at different times", c.name()),
            );
            return;
        }
        if self.spin_condition_calls_ok(&before) {
            out.push(Self::stmt_of(StmtKind::WaitUntil { before, cond, line: Self::line(span) }, span));
        }
    }

    /// Refuses, in the device functions a spin condition calls, what cannot run once per
    /// poll: barriers, collectives (the lanes poll different numbers of times), locks and
    /// nested waits. True if there is none.
    fn spin_condition_calls_ok(&mut self, before: &Block) -> bool {
        let mut errors: Vec<(Span, String)> = Vec::new();
        each_stmt(before, &mut |s: &Stmt| {
            let what = match &s.kind {
                StmtKind::GridSync { .. } | StmtKind::SyncBlock | StmtKind::PutRange(_) => Some("a barrier"),
                StmtKind::Locked { .. } => Some("`with_lock`"),
                StmtKind::WaitUntil { .. } => Some("`wait_until`"),
                _ => None,
            };
            if let Some(what) = what {
                errors.push((s.span, format!("{what} in a function that a `wait_until` condition calls: the condition runs once per poll, a different number of times in each thread")));
            }
            for e in stmt_exprs(s) {
                if let Some((c, at)) = collective_in(e) {
                    errors.push((at, format!("{} cannot be part of a spin condition, even through a device function: the lanes leave the wait at different times", c.name())));
                }
            }
        });
        self.report_all(errors)
    }

    /// `locks.with_lock(index, || { body });`: `body` under the lock word `locks[index]`.
    pub(super) fn with_lock(&mut self, array: ArrayId, m: &syn::ExprMethodCall, out: &mut Block) {
        let span = m.span();
        let info = self.arrays[array.0].clone();
        if info.space == ArraySpace::Local {
            self.diag.error(span, "a lock is shared between threads: `with_lock` works on slices and shared arrays, not on a thread's own array");
            return;
        }
        if info.elem != Scalar::U32 {
            self.diag.error(
                m.receiver.span(),
                format!("lock words are `u32` (0: free, 1: held), but `{}` holds `{}`", info.name, info.elem.name()),
            );
            return;
        }
        if self.refuse_write_to_read_only(array, "`with_lock`", m.receiver.span()) {
            return;
        }
        if !info.mutable {
            self.diag.error(
                m.receiver.span(),
                format!("`{}` is not mutable: taking a lock writes its word; take it as `&mut [u32]` or a `let mut` shared array", info.name),
            );
            return;
        }
        let args: Vec<&syn::Expr> = m.args.iter().collect();
        let closure = match args.as_slice() {
            [_, syn::Expr::Closure(closure)] if closure.inputs.is_empty() => closure,
            _ => {
                self.diag.error(
                    span,
                    "`with_lock` takes the lock's index and the critical section as a closure without parameters: `locks.with_lock(i, || { … });`",
                );
                return;
            }
        };
        let Some(index) = self.expr(args[0]) else { return };
        self.index_type(&index);
        if expr_has_effects(&index) || collective_in(&index).is_some() {
            self.diag
                .error(index.span, "bind this index with `let` first: it has an atomic, a shuffle or a vote in it");
            return;
        }
        let body = match &*closure.body {
            syn::Expr::Block(b) if b.label.is_none() => self.block_in_scope(&b.block.stmts),
            other => self.block_in_scope(&[syn::Stmt::Expr(other.clone(), Some(Default::default()))]),
        };
        // The body is the closure's: a `break` or `continue` inside cannot leave a loop around it.
        let outer: Vec<LoopId> = self.loops.iter().map(|frame| frame.id).collect();
        let mut escapes = Vec::new();
        each_stmt(&body, &mut |s: &Stmt| {
            if let StmtKind::Break(id) | StmtKind::Continue(id) = s.kind {
                if outer.contains(&id) {
                    escapes.push(s.span);
                }
            }
        });
        for at in &escapes {
            self.diag.error(
                *at,
                "`break` or `continue` inside `with_lock` cannot leave the loop around it: the critical section is a closure; skip the rest with `if`, then break after it",
            );
        }
        if escapes.is_empty() && self.critical_section_ok(&body) {
            out.push(Self::stmt_of(StmtKind::Locked { array, index, body, line: Self::line(span) }, span));
        }
    }

    /// Rejects what cannot run while one thread holds a lock: barriers, shuffles and votes (the
    /// other threads are not there), `return` (the lock would stay held), spin-waits and
    /// nested locks (a thread that waits while holding a lock can wait forever).
    fn critical_section_ok(&mut self, body: &Block) -> bool {
        let mut inlined = Vec::new();
        each_stmt(body, &mut |s: &Stmt| {
            if let StmtKind::Inline { call, .. } = s.kind {
                inlined.push(call);
            }
        });
        let mut errors: Vec<(Span, String)> = Vec::new();
        each_stmt(body, &mut |s: &Stmt| {
            let what = match &s.kind {
                StmtKind::Leave(call) if !inlined.contains(call) => Some(
                    "`return` inside `with_lock` would leave the lock held: skip the rest with `if` instead",
                ),
                StmtKind::GridSync { .. } | StmtKind::SyncBlock => Some(
                    "a barrier inside `with_lock`: only the thread holding the lock reaches it, so the others never arrive",
                ),
                StmtKind::PutRange(_) => Some(
                    "a range put inside `with_lock`: the whole block shares its copy and meets at a block barrier, but only the thread holding the lock reaches it",
                ),
                StmtKind::Return => Some("`return` inside `with_lock` would leave the lock held: skip the rest with `if` instead"),
                StmtKind::Locked { .. } => Some(
                    "`with_lock` inside `with_lock`: a thread holding one lock while waiting for another can deadlock; take one lock at a time",
                ),
                StmtKind::WaitUntil { .. } => Some(
                    "`wait_until` inside `with_lock`: a thread that spins while holding a lock can keep the thread it waits for out forever",
                ),
                _ => None,
            };
            if let Some(what) = what {
                errors.push((s.span, what.to_owned()));
            }
            for e in stmt_exprs(s) {
                if let Some((c, at)) = collective_in(e) {
                    let what = format!(
                        "{} inside `with_lock`: only the thread holding the lock runs it, not the whole warp",
                        c.name()
                    );
                    errors.push((at, what));
                }
            }
        });
        self.report_all(errors)
    }

    /// Reports every error found; true if there was none.
    fn report_all(&mut self, errors: Vec<(Span, String)>) -> bool {
        let ok = errors.is_empty();
        for (span, message) in errors {
            self.diag.error(span, message);
        }
        ok
    }
}

/// What makes `array` a symmetric slice parameter (`&mut` where it is written).
pub(super) fn make_symmetric(array: &Array, written: bool) -> String {
    let (name, elem) = (&array.name, array.elem.name());
    let mutable = if written { "mut " } else { "" };
    format!("mark the parameter `#[symmetric] {name}: &{mutable}[{elem}]` and allocate its buffer with `Gpu::symmetric_zeros`")
}
