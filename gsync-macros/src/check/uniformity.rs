//! Uniformity: which values and which control flow can differ between
//! threads, so that a barrier some threads could skip is a compile error
//! instead of a GPU deadlock.
//!
//! A value is *varying* if it derives from thread identity (`thread_idx()`,
//! `global_id()`, `lane_id()`, a `grid_stride`/`block_stride` variable, an
//! atomic's, `match_any`'s or most shuffles' result), from a load at a varying
//! index, or from another varying value, also through control flow (a variable
//! assigned under a varying condition). It is *warp-uniform* if it can differ
//! only between warps: `warp_id()`, `thread_idx()` divided by a multiple of 32
//! (or shifted right by 5 or more, or masked with the low five bits clear), the
//! result of `ballot`, `any` and `all`, and a `shfl` from a warp-uniform lane.
//! It is *block-uniform* if it can differ only between blocks (`block_idx()`,
//! anything read from shared memory), and *PE-uniform* if it can differ only
//! between the PEs of a team (`pe()`). `grid_sync()` needs uniform control
//! flow, `gpu_sync()` at least PE-uniform, `sync_block()` at least
//! block-uniform, and the warp shuffles and votes at least warp-uniform
//! control flow.
//!
//! Control flow includes the parts of an expression that run only under a
//! condition: the right operand of `&&`/`||`, the branches of an `if`
//! expression, and a `while` condition after the first iteration. Each
//! expression is analysed under the level of the control that reaches it, so
//! `thread_idx() < 5 && shfl_xor(v, 1) > 0` is rejected like the `if` form.
//!
//! Variables are re-analysed until nothing changes, so a value that becomes
//! varying late in a loop body taints uses earlier in the body too.

use crate::diagnostics::Diagnostics;
use crate::ir::*;
use proc_macro2::Span;

/// How far a value or a branch can differ between threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Uniform,
    /// The same in every block of a PE of a team: a function of `pe()`.
    Pe,
    Block,
    /// The same in every lane of a warp: a function of `thread_idx() / 32`.
    Warp,
    Varying,
}

impl Level {
    /// What a value or control flow at this level depends on, for messages.
    fn scope(self) -> &'static str {
        match self {
            Level::Uniform => "no",
            Level::Pe => "PE",
            Level::Block => "block",
            Level::Warp => "warp",
            Level::Varying => "thread",
        }
    }
}

/// A level with the span that caused it, for the error's note.
#[derive(Clone, Copy, Debug)]
struct Taint {
    level: Level,
    cause: Option<Span>,
    /// Where a variable took this level from the control flow around its assignment,
    /// not from the value assigned: that assignment, and the variable.
    via: Option<(Span, VarId)>,
}

impl Taint {
    const UNIFORM: Taint = Taint { level: Level::Uniform, cause: None, via: None };

    fn at(level: Level, span: Span) -> Taint {
        Taint { level, cause: Some(span), via: None }
    }

    /// What `var` holds after an assignment at `span` of a value at level `self` under
    /// control at level `ctx`.
    fn assigned(self, ctx: Taint, var: VarId, span: Span) -> Taint {
        if ctx.level > self.level {
            Taint { via: Some((span, var)), ..ctx }
        } else {
            self
        }
    }

    fn join(self, other: Taint) -> Taint {
        if other.level > self.level {
            other
        } else {
            self
        }
    }
}

/// The most divergent control flow a collective ([`Collective`] lists
/// them) may run under.
fn tolerates(c: Collective) -> Level {
    match c {
        Collective::GridSync | Collective::Swap => Level::Uniform,
        Collective::GpuSync => Level::Pe,
        Collective::SyncBlock | Collective::RangePut { .. } => Level::Block,
        Collective::Shuffle | Collective::Vote => Level::Warp,
    }
}

/// What goes wrong when some threads skip a collective.
fn consequence(c: Collective) -> &'static str {
    match c {
        Collective::GridSync | Collective::GpuSync => "the threads that skip it leave all others waiting forever",
        Collective::SyncBlock => "threads that skip it leave the others waiting forever",
        Collective::Shuffle | Collective::Vote => {
            "it combines values of every lane of the warp, so every lane of the warp must take part"
        }
        Collective::Swap => "threads that skip it would see the other buffer behind each name",
        Collective::RangePut { .. } => {
            "the block's threads share its copy and meet at a block barrier at its end, so threads that skip it leave the others waiting forever"
        }
    }
}

/// The error for a collective under control at `level`.
fn message(c: Collective, level: Level) -> String {
    let scope = level.scope();
    match c {
        Collective::GridSync if level == Level::Pe => format!(
            "`grid_sync()` in control flow that depends on {scope} identity: the threads that skip it leave all others waiting \
             forever; `gpu_sync()` waits for this PE's blocks only, and may depend on `pe()`"
        ),
        Collective::GridSync => format!(
            "`grid_sync()` in control flow that depends on {scope} identity: the threads that skip it leave all others waiting forever"
        ),
        Collective::GpuSync => format!(
            "`gpu_sync()` in control flow that depends on {scope} identity: the threads that skip it leave the others \
             waiting forever (conditions on uniform values or `pe()` are fine)"
        ),
        Collective::SyncBlock => format!(
            "`sync_block()` in control flow that depends on {scope} identity: threads that skip it leave the others waiting forever"
        ),
        Collective::Shuffle => format!(
            "a warp shuffle in control flow that depends on {scope} identity: shuffles exchange values among the lanes of a warp, \
             so call them where every lane of the warp takes part (conditions on uniform values, `block_idx()` or `warp_id()` are fine)"
        ),
        Collective::Vote => format!(
            "a warp vote in control flow that depends on {scope} identity: `ballot`, `any`, `all` and `match_any` combine a value of \
             every lane of the warp, so call them where every lane of the warp takes part (conditions on uniform values, \
             `block_idx()` or `warp_id()` are fine)"
        ),
        Collective::Swap => format!(
            "a swap of slices in control flow that depends on {scope} identity: every thread must see the same buffer behind \
             each name, so swap under control flow that is the same for the whole grid (uniform values only)"
        ),
        Collective::RangePut { .. } => format!(
            "{} in control flow that depends on {scope} identity: {}; call it where the whole block does \
             (conditions on uniform values, `block_idx()` or `pe()` are fine)",
            c.name(),
            consequence(c)
        ),
    }
}

/// An inlined device-function call being analysed.
struct CallFrame {
    call: CallId,
    /// The control level at the call.
    entry: Taint,
    /// Loops open outside the call (its `return` leaves only those inside).
    outer_loops: usize,
    /// After a `return` under varying control, the rest of the body runs divergent.
    left: Taint,
}

struct Analysis<'k> {
    kernel: &'k Kernel,
    /// Per variable: whether it holds `thread_idx()` itself (an immutable copy of it).
    thread_index_vars: Vec<bool>,
    vars: Vec<Taint>,
    local_arrays: Vec<Taint>,
    /// Per loop: the control level of its `break`/`continue`/`return`s.
    loop_exits: Vec<Taint>,
    open_loops: Vec<LoopId>,
    /// After a `return` under varying control, the rest runs divergent.
    returned: Taint,
    /// The device-function calls being analysed, innermost last.
    calls: Vec<CallFrame>,
    changed: bool,
    report: bool,
    errors: Vec<Report>,
}

/// An error with its notes, each on its own span.
struct Report {
    span: Span,
    message: String,
    notes: Vec<(Span, String)>,
}

/// Reports every collective that threads reach divergently; returns the uniformity level of
/// every variable, indexed by [`VarId`].
pub fn check(k: &Kernel, diag: &mut Diagnostics) -> Vec<Level> {
    let mut a = analyse(k);
    let levels = a.vars.iter().map(|t| t.level).collect();
    a.report = true;
    a.returned = Taint::UNIFORM;
    a.block(&k.body, Taint::UNIFORM);
    for r in a.errors {
        diag.error_with_notes(r.span, r.message, r.notes);
    }
    levels
}

/// Runs the analysis to its fixed point.
fn analyse(k: &Kernel) -> Analysis<'_> {
    let mut a = Analysis {
        kernel: k,
        thread_index_vars: super::warp_index::thread_index_vars(k),
        vars: vec![Taint::UNIFORM; k.vars.len()],
        local_arrays: vec![Taint::UNIFORM; k.arrays.len()],
        loop_exits: vec![Taint::UNIFORM; k.loops],
        open_loops: Vec::new(),
        returned: Taint::UNIFORM,
        calls: Vec::new(),
        changed: true,
        report: false,
        errors: Vec::new(),
    };
    while a.changed {
        a.changed = false;
        a.returned = Taint::UNIFORM;
        a.block(&k.body, Taint::UNIFORM);
    }
    a
}

impl Analysis<'_> {
    fn raise_var(&mut self, v: VarId, t: Taint) {
        if t.level > self.vars[v.0].level {
            self.vars[v.0] = t;
            self.changed = true;
        }
    }

    fn raise_array(&mut self, a: ArrayId, t: Taint) {
        if t.level > self.local_arrays[a.0].level {
            self.local_arrays[a.0] = t;
            self.changed = true;
        }
    }

    fn raise_exit(&mut self, l: LoopId, t: Taint) {
        if t.level > self.loop_exits[l.0].level {
            self.loop_exits[l.0] = t;
            self.changed = true;
        }
    }

    fn block(&mut self, block: &Block, ctx: Taint) {
        crate::stack::deep(|| self.block_inner(block, ctx))
    }

    fn block_inner(&mut self, block: &Block, ctx: Taint) {
        for s in block {
            let mut ctx = ctx.join(self.returned);
            if let Some(frame) = self.calls.last() {
                ctx = ctx.join(frame.left);
            }
            self.stmt(s, ctx);
        }
    }

    fn stmt(&mut self, s: &Stmt, ctx: Taint) {
        crate::stack::deep(|| self.stmt_inner(s, ctx))
    }

    fn stmt_inner(&mut self, s: &Stmt, ctx: Taint) {
        match &s.kind {
            StmtKind::Let { var, init } => {
                let t = init.as_ref().map_or(Taint::UNIFORM, |e| self.expr(e, ctx));
                self.raise_var(*var, t.assigned(ctx, *var, s.span));
            }
            StmtKind::LetArray { array, init } => {
                let t = match init {
                    ArrayInit::Repeat(e) => self.expr(e, ctx),
                    ArrayInit::List(es) | ArrayInit::Chunk { loads: es, .. } => {
                        es.iter().fold(Taint::UNIFORM, |t, e| t.join(self.expr(e, ctx)))
                    }
                };
                self.raise_array(*array, t.join(ctx));
            }
            StmtKind::Assign { place, value, .. } => {
                let value_taint = self.expr(value, ctx);
                let t = value_taint.join(ctx);
                match place {
                    Place::Var(v) => self.raise_var(*v, value_taint.assigned(ctx, *v, s.span)),
                    Place::Elem { array, index, .. } => {
                        let it = self.expr(index, ctx);
                        if self.kernel.array(*array).space == ArraySpace::Local {
                            self.raise_array(*array, t.join(it));
                        }
                    }
                }
            }
            StmtKind::Expr(e) => {
                self.expr(e, ctx);
            }
            StmtKind::If { cond, then, otherwise } => {
                let inner = ctx.join(self.expr(cond, ctx));
                self.block(then, inner);
                if let Some(o) = otherwise {
                    self.block(o, inner);
                }
            }
            StmtKind::While { id, cond, body } => {
                // After the first test, only the threads still in the loop
                // evaluate the condition: a varying condition is a varying exit.
                let cond = self.expr(cond, ctx.join(self.loop_exits[id.0]));
                self.raise_exit(*id, cond);
                let inner = ctx.join(cond).join(self.loop_exits[id.0]);
                self.loop_body(*id, body, inner);
            }
            StmtKind::Loop { id, body } => {
                let inner = ctx.join(self.loop_exits[id.0]);
                self.loop_body(*id, body, inner);
            }
            StmtKind::For { id, var, range, body } => {
                let inner = match range {
                    ForRange::Seq { start, end, step, .. } => {
                        let mut t = self.expr(start, ctx).join(self.expr(end, ctx));
                        if let Some(st) = step {
                            t = t.join(self.expr(st, ctx));
                        }
                        ctx.join(t).join(self.loop_exits[id.0])
                    }
                    ForRange::GridStride { start, end } | ForRange::BlockStride { start, end } => {
                        self.expr(start, ctx);
                        self.expr(end, ctx);
                        ctx.join(Taint::at(Level::Varying, s.span))
                    }
                };
                self.raise_var(*var, inner);
                self.loop_body(*id, body, inner);
            }
            StmtKind::Break(l) | StmtKind::Continue(l) => self.raise_exit(*l, ctx),
            StmtKind::Return => {
                for l in self.open_loops.clone() {
                    self.raise_exit(l, ctx);
                }
                if ctx.level > self.returned.level {
                    self.returned = ctx;
                }
            }
            StmtKind::GridSync { .. } | StmtKind::SyncBlock | StmtKind::WaitAsyncCopies => {}
            // A failed assertion ends the launch: the threads after it need not agree with it.
            StmtKind::Assert { check, .. } => {
                for e in check.exprs() {
                    self.expr(e, ctx);
                }
            }
            StmtKind::Block(b) => self.block(b, ctx),
            StmtKind::Inline { call, body } => {
                let outer_loops = self.open_loops.len();
                self.calls.push(CallFrame { call: *call, entry: ctx, outer_loops, left: Taint::UNIFORM });
                self.block(body, ctx);
                self.calls.pop();
            }
            StmtKind::Leave(_) => {
                let frame = self.calls.last_mut().expect("a `return` leaves the call it is in");
                if ctx.level > frame.left.level {
                    frame.left = ctx;
                }
                let inner_loops = self.open_loops[frame.outer_loops..].to_vec();
                for l in inner_loops {
                    self.raise_exit(l, ctx);
                }
            }
            StmtKind::WaitUntil { before, cond, .. } => {
                self.block(before, ctx);
                self.expr(cond, ctx);
            }
            // Its rule is a collective's (below).
            StmtKind::Swap(..) => {}
            StmtKind::StoreChunk { stores, .. } | StmtKind::CopyChunkAsync { stores, .. } => {
                for s in stores {
                    self.stmt(s, ctx);
                }
            }
            StmtKind::PutRange(put) => {
                let c = Collective::of_stmt(&s.kind).expect("a range put is a collective");
                for operand in put.operands() {
                    let t = self.expr(operand, ctx);
                    // Under divergent control the collective itself is the error.
                    if ctx.level <= tolerates(c) {
                        self.collective_operand(c, operand.span, t);
                    }
                }
                self.expr(&put.element, ctx);
                if let Some(signal) = &put.signal {
                    self.expr(signal, ctx);
                }
            }
            StmtKind::Locked { index, body, .. } => {
                self.expr(index, ctx);
                // One thread at a time runs the critical section.
                self.block(body, ctx.join(Taint::at(Level::Varying, s.span)));
            }
        }
        if let Some(c) = Collective::of_stmt(&s.kind) {
            self.collective(c, s.span, ctx);
        }
    }

    fn loop_body(&mut self, id: LoopId, body: &Block, ctx: Taint) {
        self.open_loops.push(id);
        self.block(body, ctx);
        self.open_loops.pop();
    }

    /// Reports a collective reached under control more divergent than it
    /// tolerates. Inside a device function, the call that brought the
    /// divergence in (the outermost whose own control is too divergent) is
    /// where the error is, with a note at the collective in the function.
    fn collective(&mut self, c: Collective, span: Span, ctx: Taint) {
        if ctx.level <= tolerates(c) || !self.report {
            return;
        }
        let scope = ctx.level.scope();
        let blamed = self.calls.iter().find(|f| f.entry.level > tolerates(c));
        let mut notes = Vec::new();
        let at = match blamed {
            Some(frame) => {
                let call = self.kernel.call(frame.call);
                let what = c.name();
                notes.push((span, format!("`{}` runs {what} here", call.function)));
                let message = format!(
                    "this call runs {what} (inside `{}`) in control flow that depends on {scope} identity: {}",
                    call.function,
                    consequence(c)
                );
                self.errors.push(Report { span: call.span, message, notes: Vec::new() });
                frame.entry
            }
            None => {
                self.errors.push(Report { span, message: message(c, ctx.level), notes: Vec::new() });
                ctx
            }
        };
        if let Some((assignment, var)) = at.via {
            let name = &self.kernel.var(var).name;
            notes.push((
                assignment,
                format!("`{name}` is assigned here under control flow that depends on {scope} identity, so its value does too"),
            ));
        }
        notes.push((at.cause.unwrap_or(span), format!("this depends on {scope} identity")));
        self.errors.last_mut().expect("just pushed").notes = notes;
    }

    /// Reports an operand of collective `c` (at `span`, at level `t`) that can differ between
    /// threads more than `c` tolerates: every thread that takes part must pass the same.
    fn collective_operand(&mut self, c: Collective, span: Span, t: Taint) {
        if t.level <= tolerates(c) || !self.report {
            return;
        }
        let scope = t.level.scope();
        let message = format!(
            "this operand of {} depends on {scope} identity, but the block's threads share one copy: every thread must pass \
             the same value; compute it from values that are the same across the block (parameters, `block_idx()`, `pe()`, \
             shared memory)",
            c.name()
        );
        let mut notes = Vec::new();
        if let Some((assignment, var)) = t.via {
            let name = &self.kernel.var(var).name;
            notes.push((
                assignment,
                format!("`{name}` is assigned here under control flow that depends on {scope} identity, so its value does too"),
            ));
        }
        self.errors.push(Report { span, message, notes });
    }

    /// The level of an expression's value; `ctx` is the control under which
    /// it is evaluated, which its conditionally evaluated parts extend.
    fn expr(&mut self, e: &Expr, ctx: Taint) -> Taint {
        crate::stack::deep(|| self.expr_inner(e, ctx))
    }

    fn expr_inner(&mut self, e: &Expr, ctx: Taint) -> Taint {
        if let Some(c) = Collective::of_expr(&e.kind) {
            self.collective(c, e.span, ctx);
        }
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Len(_) => Taint::UNIFORM,
            ExprKind::Var(v) => {
                let t = self.vars[v.0];
                if t.level > Level::Uniform {
                    Taint { via: t.via, ..Taint::at(t.level, e.span) }
                } else {
                    t
                }
            }
            ExprKind::Builtin(b) => match b {
                Builtin::ThreadIdx | Builtin::GlobalId | Builtin::LaneId | Builtin::ThreadIdxAxis(_) => {
                    Taint::at(Level::Varying, e.span)
                }
                Builtin::BlockIdx | Builtin::BlockIdxAxis(_) => Taint::at(Level::Block, e.span),
                Builtin::WarpId => Taint::at(Level::Warp, e.span),
                // The same in every block of a PE, different between PEs: enough for
                // gpu_sync(), which waits for one PE's blocks, not for grid_sync().
                Builtin::Pe => Taint::at(Level::Pe, e.span),
                Builtin::BlockDim
                | Builtin::GridDim
                | Builtin::GridSize
                | Builtin::WarpSize
                | Builtin::BlockDimAxis(_)
                | Builtin::GridDimAxis(_)
                | Builtin::BlockSize
                | Builtin::NPes => Taint::UNIFORM,
            },
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => self.expr(a, ctx),
            ExprKind::Binary(op, a, b) => {
                let ta = self.expr(a, ctx);
                // `a && b`, `a || b`: `b` runs only where `a` allows it.
                let b_ctx = if op.is_logical() { ctx.join(ta) } else { ctx };
                let t = ta.join(self.expr(b, b_ctx));
                // `thread_idx() / 32` and its kin: the thread index is their only varying input.
                if t.level == Level::Varying && super::warp_index::is_warp_index(e, &self.thread_index_vars) {
                    Taint::at(Level::Warp, e.span)
                } else {
                    t
                }
            }
            ExprKind::Load { array, index, .. } => {
                let t = self.expr(index, ctx);
                let info = self.kernel.array(*array);
                match info.space {
                    // A symmetric slice is each PE's own part: the same index reads different
                    // elements on different PEs.
                    ArraySpace::Global if info.symmetric => t.join(Taint::at(Level::Pe, e.span)),
                    ArraySpace::Global => t,
                    ArraySpace::Shared | ArraySpace::DynamicShared => t.join(Taint::at(Level::Block, e.span)),
                    ArraySpace::Local => t.join(self.local_arrays[array.0]),
                }
            }
            ExprKind::Call { args, .. } => args.iter().fold(Taint::UNIFORM, |t, a| t.join(self.expr(a, ctx))),
            ExprKind::Atomic { index, args, .. } => {
                self.expr(index, ctx);
                for a in args {
                    self.expr(a, ctx);
                }
                Taint::at(Level::Varying, e.span)
            }
            ExprKind::Shuffle { op, value, lane } => {
                self.expr(value, ctx);
                let lane = self.expr(lane, ctx);
                // Every lane of a warp reads the same lane's value when they all name it.
                let level =
                    if *op == ShuffleOp::Idx && lane.level <= Level::Warp { Level::Warp } else { Level::Varying };
                Taint::at(level, e.span)
            }
            ExprKind::Vote { op, value } => {
                self.expr(value, ctx);
                let level = if op.same_in_every_lane() { Level::Warp } else { Level::Varying };
                Taint::at(level, e.span)
            }
            ExprKind::Select { cond, then, otherwise } => {
                let t = self.expr(cond, ctx);
                let branch = ctx.join(t);
                t.join(self.expr(then, branch)).join(self.expr(otherwise, branch))
            }
        }
    }
}
